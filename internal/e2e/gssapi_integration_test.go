//go:build integration

package e2e

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/jcmturner/gokrb5/v8/iana/etypeID"
	"github.com/jcmturner/gokrb5/v8/keytab"
	"github.com/kafkas3/kafkas3/internal/testbed"
)

// TestIntegrationSASLGSSAPI: against a real MIT KDC (krb5-kdc) and a real
// broker whose SASL_SSL listener offers GSSAPI, `sink --once` and
// `source` log in with a keytab given as a Kafka Connect worker writes it
// (sasl.jaas.config's Krb5LoginModule, sasl.kerberos.service.name), and
// a principal the KDC does not know fails naming the KDC's refusal.
func TestIntegrationSASLGSSAPI(t *testing.T) {
	b := newBed(t)
	a := authBroker(t)
	kdc, broker := a.needKDC(t), a.broker
	sb := &bed{k: broker, s: b.s}
	const topic, parts, perPart = "e2e-gssapi", 2, 200
	broker.CreateTopic(t, topic, parts)
	sb.produce(t, topic, parts, 0, perPart, value)

	jaas := func(kt, principal string) string {
		return `com.sun.security.auth.module.Krb5LoginModule required useKeyTab=true storeKey=true keyTab="` + kt + `" principal="` + principal + `";`
	}
	clientKT := kdc.MustAddPrincipal(t, "kafkas3")
	secure := sb.sinkConf(topic, topic, b.s.CreateBucket(t)).with("bootstrap.servers", broker.SASLSSLAddr,
		"security.protocol", "SASL_SSL", "ssl.ca.location", broker.CAPath, "sasl.mechanism", "GSSAPI",
		"sasl.kerberos.service.name", "kafka", "kafkas3.krb5.conf", kdc.Krb5Conf,
		"sasl.jaas.config", jaas(clientKT, "kafkas3@"+testbed.KDCRealm))
	sum, _ := runOnce(t, "sink --once, GSSAPI", secure.write(t))
	if sum.records != parts*perPart {
		t.Fatalf("sink archived %s, want %d records", sum.line, parts*perPart)
	}
	src, _ := srcRunOK(t, "source, GSSAPI", secure.write(t), "--topic-rename", "copy_of_$0", "--create-topics")
	if src.records != parts*perPart {
		t.Fatalf("source restored %s, want %d records", src.line, parts*perPart)
	}
	var n int64
	for _, end := range sb.endOffsets(t, "copy_of_"+topic) {
		n += end
	}
	if n != parts*perPart {
		t.Fatalf("copy_of_%s holds %d records, want %d", topic, n, parts*perPart)
	}

	ghost := keytab.New()
	if err := ghost.AddEntry("ghost", testbed.KDCRealm, "pw", time.Now(), 1, etypeID.AES256_CTS_HMAC_SHA1_96); err != nil {
		t.Fatal(err)
	}
	raw, err := ghost.Marshal()
	if err != nil {
		t.Fatal(err)
	}
	ghostKT := filepath.Join(t.TempDir(), "ghost.keytab")
	if err := os.WriteFile(ghostKT, raw, 0o600); err != nil {
		t.Fatal(err)
	}
	wrong := secure.with("name", topic+"-ghost", "sasl.jaas.config", jaas(ghostKT, "ghost"))
	p, code := runSink(t, "sink --once, unknown principal", wrong.write(t), 2*time.Minute, "--once")
	if code == 0 || !strings.Contains(p.stderr(), "KDC_ERR_C_PRINCIPAL_UNKNOWN") {
		t.Fatalf("unknown principal: exit code %d, want the KDC's refusal:\n%s", code, p.logs())
	}
	t.Logf("unknown principal: exit code %d: %s", code, lastLine(p.stderr()))
}
