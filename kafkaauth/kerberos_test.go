package kafkaauth

import (
	"encoding/binary"
	"io"
	"net"
	"os"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/jcmturner/gokrb5/v8/iana/etypeID"
	"github.com/jcmturner/gokrb5/v8/keytab"
	"github.com/jcmturner/gokrb5/v8/messages"
	"github.com/kafkas3/kafkas3/internal/saslfake"
	"github.com/twmb/franz-go/pkg/sasl"
)

// writeKeytab writes a keytab with a key of principal@realm.
func writeKeytab(t *testing.T, principal, realm string) string {
	t.Helper()
	kt := keytab.New()
	if err := kt.AddEntry(principal, realm, "pw", time.Now(), 1, etypeID.AES256_CTS_HMAC_SHA1_96); err != nil {
		t.Fatal(err)
	}
	b, err := kt.Marshal()
	if err != nil {
		t.Fatal(err)
	}
	path := tempPath(t, "client.keytab")
	if err := os.WriteFile(path, b, 0o600); err != nil {
		t.Fatal(err)
	}
	return path
}

// fakeKDC answers every AS-REQ over TCP with KDC_ERR_C_PRINCIPAL_UNKNOWN
// and records the client and server names it was asked for.
type fakeKDC struct {
	ln   net.Listener
	mu   sync.Mutex
	seen []string
}

func startFakeKDC(t *testing.T) *fakeKDC {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	k := &fakeKDC{ln: ln}
	t.Cleanup(func() { _ = ln.Close() })
	go func() {
		for {
			conn, err := ln.Accept()
			if err != nil {
				return
			}
			go k.serve(conn)
		}
	}()
	return k
}

func (k *fakeKDC) serve(conn net.Conn) {
	defer func() { _ = conn.Close() }()
	var n uint32
	if binary.Read(conn, binary.BigEndian, &n) != nil || n > 1<<20 {
		return
	}
	b := make([]byte, n)
	if _, err := io.ReadFull(conn, b); err != nil {
		return
	}
	var req messages.ASReq
	if err := req.Unmarshal(b); err != nil {
		return
	}
	k.mu.Lock()
	k.seen = append(k.seen, req.ReqBody.CName.PrincipalNameString()+"@"+req.ReqBody.Realm+" for "+req.ReqBody.SName.PrincipalNameString())
	k.mu.Unlock()
	e := messages.NewKRBError(req.ReqBody.SName, req.ReqBody.Realm, 6, "saslfake: client not found")
	out, err := e.Marshal()
	if err != nil {
		return
	}
	_ = binary.Write(conn, binary.BigEndian, uint32(len(out)))
	_, _ = conn.Write(out)
}

// TestKerberosKeytabLogin: a client with a keytab logs in to the KDC of
// krb5.conf as the principal (an AS-REQ for krbtgt/REALM), and the KDC's
// refusal is the client's error; nothing reaches the broker without a
// ticket. A principal the keytab has no key of is refused before that.
func TestKerberosKeytabLogin(t *testing.T) {
	kdc := startFakeKDC(t)
	conf := "[libdefaults]\n default_realm = TEST.REALM\n udp_preference_limit = 1\n dns_lookup_kdc = false\n" +
		"[realms]\n TEST.REALM = {\n  kdc = " + kdc.ln.Addr().String() + "\n }\n"
	confPath := tempPath(t, "krb5.conf")
	if err := os.WriteFile(confPath, []byte(conf), 0o600); err != nil {
		t.Fatal(err)
	}
	krb5, err := LoadKrb5Conf(confPath)
	if err != nil {
		t.Fatal(err)
	}
	kt, err := LoadKeytab(writeKeytab(t, "kafkas3", "TEST.REALM"))
	if err != nil {
		t.Fatal(err)
	}
	m, err := Kerberos{Keytab: kt, Krb5: krb5, Principal: "kafkas3", Service: "kafka"}.Mechanism()
	if err != nil {
		t.Fatal(err)
	}
	if _, closing := m.(sasl.ClosingMechanism); closing {
		t.Error("the mechanism closes its Kerberos client when a Kafka client closes; the command's other clients share it")
	}
	b := &saslfake.Broker{Mechanism: "GSSAPI"}
	err = produce(t, fakeBroker(t, b), m)
	if err == nil || !strings.Contains(err.Error(), "KDC_ERR_C_PRINCIPAL_UNKNOWN") {
		t.Errorf("produce: %v, want the KDC's refusal", err)
	}
	kdc.mu.Lock()
	seen := append([]string(nil), kdc.seen...)
	kdc.mu.Unlock()
	if len(seen) == 0 || seen[0] != "kafkas3@TEST.REALM for krbtgt/TEST.REALM" {
		t.Errorf("the KDC saw %q, want an AS-REQ of kafkas3@TEST.REALM for krbtgt/TEST.REALM", seen)
	}
	if len(b.Auths()) != 0 {
		t.Errorf("the broker got %d authentications without a ticket", len(b.Auths()))
	}

	if _, err := (Kerberos{Keytab: kt, Krb5: krb5, Principal: "other@TEST.REALM", Service: "kafka"}).Mechanism(); err == nil ||
		err.Error() != "has no key in the keytab (looked for other@TEST.REALM)" {
		t.Errorf("principal without a key: %v", err)
	}
	if _, _, err := SplitPrincipal("@TEST.REALM", ""); err == nil {
		t.Error("a principal without a name was accepted")
	}
	if _, err := LoadKeytab(confPath); err == nil || !strings.Contains(err.Error(), "is not a readable keytab") {
		t.Errorf("a krb5.conf as keytab: %v", err)
	}
}
