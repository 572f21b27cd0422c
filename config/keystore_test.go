package config

import (
	"context"
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/rsa"
	"crypto/tls"
	"crypto/x509"
	"crypto/x509/pkix"
	pemlib "encoding/pem"
	"errors"
	"io"
	"math/big"
	"net"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	keystore "github.com/pavlo-v-chernykh/keystore-go/v4"
	pkcs12 "software.sslmate.com/src/go-pkcs12"
)

// testPKI is a CA, a server certificate for 127.0.0.1 and a client
// certificate, all issued by the CA.
type testPKI struct {
	ca                  *x509.Certificate
	server, client      tls.Certificate
	clientKey           any
	clientLeaf, foreign *x509.Certificate
}

func newTestPKI(t *testing.T) testPKI {
	t.Helper()
	caKey, _ := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	caTmpl := &x509.Certificate{SerialNumber: big.NewInt(1), Subject: pkix.Name{CommonName: "kafkas3 test CA"},
		NotBefore: time.Now().Add(-time.Hour), NotAfter: time.Now().Add(time.Hour),
		IsCA: true, BasicConstraintsValid: true, KeyUsage: x509.KeyUsageCertSign}
	caDER, err := x509.CreateCertificate(rand.Reader, caTmpl, caTmpl, &caKey.PublicKey, caKey)
	if err != nil {
		t.Fatal(err)
	}
	ca, _ := x509.ParseCertificate(caDER)
	issue := func(serial int64, cn string, key any, pub any, usage x509.ExtKeyUsage) tls.Certificate {
		tmpl := &x509.Certificate{SerialNumber: big.NewInt(serial), Subject: pkix.Name{CommonName: cn},
			NotBefore: time.Now().Add(-time.Hour), NotAfter: time.Now().Add(time.Hour),
			ExtKeyUsage: []x509.ExtKeyUsage{usage}, IPAddresses: []net.IP{net.IPv4(127, 0, 0, 1)}}
		der, err := x509.CreateCertificate(rand.Reader, tmpl, ca, pub, caKey)
		if err != nil {
			t.Fatal(err)
		}
		leaf, _ := x509.ParseCertificate(der)
		return tls.Certificate{Certificate: [][]byte{der, caDER}, PrivateKey: key, Leaf: leaf}
	}
	serverKey, _ := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	clientKey, _ := rsa.GenerateKey(rand.Reader, 2048)
	other, _ := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	foreignTmpl := &x509.Certificate{SerialNumber: big.NewInt(9), Subject: pkix.Name{CommonName: "other CA"},
		NotBefore: time.Now().Add(-time.Hour), NotAfter: time.Now().Add(time.Hour), IsCA: true, BasicConstraintsValid: true}
	foreignDER, _ := x509.CreateCertificate(rand.Reader, foreignTmpl, foreignTmpl, &other.PublicKey, other)
	foreign, _ := x509.ParseCertificate(foreignDER)
	pki := testPKI{ca: ca, clientKey: clientKey, foreign: foreign,
		server: issue(2, "broker", serverKey, &serverKey.PublicKey, x509.ExtKeyUsageServerAuth),
		client: issue(3, "client", clientKey, &clientKey.PublicKey, x509.ExtKeyUsageClientAuth)}
	pki.clientLeaf = pki.client.Leaf
	return pki
}

// writeJKS writes a JKS truststore holding ca and a JKS keystore holding
// the client key (with keyPass) and chain, as keytool would.
func (k testPKI) writeJKS(t *testing.T, dir, storePass, keyPass string, ca *x509.Certificate) (trust, key string) {
	t.Helper()
	ts := keystore.New()
	if err := ts.SetTrustedCertificateEntry("ca", keystore.TrustedCertificateEntry{CreationTime: time.Now(),
		Certificate: keystore.Certificate{Type: "X509", Content: ca.Raw}}); err != nil {
		t.Fatal(err)
	}
	ks := keystore.New()
	pk, err := x509.MarshalPKCS8PrivateKey(k.clientKey)
	if err != nil {
		t.Fatal(err)
	}
	var chain []keystore.Certificate
	for _, der := range k.client.Certificate {
		chain = append(chain, keystore.Certificate{Type: "X509", Content: der})
	}
	if err := ks.SetPrivateKeyEntry("client", keystore.PrivateKeyEntry{CreationTime: time.Now(), PrivateKey: pk, CertificateChain: chain}, []byte(keyPass)); err != nil {
		t.Fatal(err)
	}
	trust, key = filepath.Join(dir, "truststore.jks"), filepath.Join(dir, "keystore.jks")
	for path, s := range map[string]keystore.KeyStore{trust: ts, key: ks} {
		f, err := os.Create(path)
		if err != nil {
			t.Fatal(err)
		}
		if err := s.Store(f, []byte(storePass)); err != nil {
			t.Fatal(err)
		}
		f.Close()
	}
	return trust, key
}

// writePKCS12 writes a PKCS12 truststore holding ca and a PKCS12 keystore
// with the client key and chain, encrypted as modern keytool does.
func (k testPKI) writePKCS12(t *testing.T, dir, pass string, ca *x509.Certificate) (trust, key string) {
	t.Helper()
	ts, err := pkcs12.Modern.EncodeTrustStore([]*x509.Certificate{ca}, pass)
	if err != nil {
		t.Fatal(err)
	}
	chainCA, _ := x509.ParseCertificate(k.client.Certificate[1])
	ks, err := pkcs12.Modern.Encode(k.clientKey, k.clientLeaf, []*x509.Certificate{chainCA}, pass)
	if err != nil {
		t.Fatal(err)
	}
	trust, key = filepath.Join(dir, "truststore.p12"), filepath.Join(dir, "keystore.p12")
	for path, data := range map[string][]byte{trust: ts, key: ks} {
		if err := os.WriteFile(path, data, 0o600); err != nil {
			t.Fatal(err)
		}
	}
	return trust, key
}

// loadTLS loads a sink config with params and returns the TLS config the
// Kafka client gets, and the problems.
func loadTLS(t *testing.T, params ...string) (*tls.Config, error) {
	t.Helper()
	st, err := Load(Input{Command: Sink, ConfigFile: writeFile(t, "c.yaml", minimalYAML), Params: append([]string{"security.protocol=SSL"}, params...)})
	if err != nil {
		return nil, err
	}
	if _, err := st.Sink(nil); err != nil {
		return nil, err
	}
	p := newParser(st)
	return p.tlsConfig(), p.problems()
}

// handshake runs a TLS handshake of tc against a server that presents the
// PKI's server certificate and requires a client certificate of its CA;
// it returns the client certificate the server saw and the client's error.
func (k testPKI) handshake(t *testing.T, tc *tls.Config) (string, error) {
	t.Helper()
	roots := x509.NewCertPool()
	roots.AddCert(k.ca)
	ln, err := tls.Listen("tcp", "127.0.0.1:0", &tls.Config{Certificates: []tls.Certificate{k.server},
		ClientAuth: tls.RequireAndVerifyClientCert, ClientCAs: roots})
	if err != nil {
		t.Fatal(err)
	}
	defer ln.Close()
	seen := make(chan string, 1)
	go func() {
		c, err := ln.Accept()
		if err != nil {
			seen <- ""
			return
		}
		defer c.Close()
		tlsConn := c.(*tls.Conn)
		if tlsConn.Handshake() != nil || len(tlsConn.ConnectionState().PeerCertificates) == 0 {
			seen <- ""
			return
		}
		seen <- tlsConn.ConnectionState().PeerCertificates[0].Subject.CommonName
	}()
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	conn, err := tlsDialer(tc)(ctx, "tcp", ln.Addr().String()) // the Kafka client's dialer
	if err == nil {
		_, err = conn.Read(make([]byte, 1)) // TLS 1.3: the server's verdict on the client certificate
		if errors.Is(err, io.EOF) {
			err = nil
		}
		conn.Close()
	}
	return <-seen, err
}

// TestJavaKeystores: a JKS and a PKCS12 truststore and keystore, written
// by the libraries kafkas3 reads them with, load through the ssl.* keys
// and authenticate both sides of a real TLS handshake.
func TestJavaKeystores(t *testing.T) {
	pki := newTestPKI(t)
	dir := t.TempDir()
	jksTrust, jksKey := pki.writeJKS(t, dir, "storepass", "keypass", pki.ca)
	p12Trust, p12Key := pki.writePKCS12(t, dir, "storepass", pki.ca)
	for name, params := range map[string][]string{
		"JKS": {"ssl.truststore.location=" + jksTrust, "ssl.truststore.password=storepass",
			"ssl.keystore.location=" + jksKey, "ssl.keystore.password=storepass", "ssl.key.password=keypass"},
		"PKCS12": {"ssl.truststore.location=" + p12Trust, "ssl.truststore.password=storepass", "ssl.truststore.type=PKCS12",
			"ssl.keystore.location=" + p12Key, "ssl.keystore.password=storepass", "ssl.keystore.type=PKCS12"},
		"JKS trust, PKCS12 key": {"ssl.truststore.location=" + jksTrust, "ssl.truststore.password=storepass",
			"ssl.keystore.location=" + p12Key, "ssl.keystore.password=storepass", "ssl.keystore.type=pkcs12"},
	} {
		t.Run(name, func(t *testing.T) {
			tc, err := loadTLS(t, params...)
			if err != nil {
				t.Fatal(err)
			}
			if cn, err := pki.handshake(t, tc); err != nil || cn != "client" {
				t.Fatalf("handshake: %v; server saw client %q", err, cn)
			}
		})
	}
	t.Run("keystore as truststore", func(t *testing.T) {
		// Java's TrustManager trusts the certificate of a private key entry.
		for path, typ := range map[string]string{jksKey: storeJKS, p12Key: storePKCS12} {
			certs, err := loadTrustStore(path, typ, "storepass")
			if err != nil || len(certs) != 1 || !certs[0].Equal(pki.clientLeaf) {
				t.Errorf("%s truststore of a keystore: %d certificates, %v; want the client certificate", typ, len(certs), err)
			}
		}
	})
	t.Run("foreign CA", func(t *testing.T) {
		other := t.TempDir()
		trust, _ := pki.writeJKS(t, other, "storepass", "keypass", pki.foreign)
		tc, err := loadTLS(t, "ssl.truststore.location="+trust, "ssl.truststore.password=storepass")
		if err != nil {
			t.Fatal(err)
		}
		_, err = pki.handshake(t, tc)
		if err == nil || !strings.Contains(err.Error(), "TLS handshake with broker 127.0.0.1:") || !strings.Contains(err.Error(), "certificate signed by unknown authority") {
			t.Fatalf("handshake with a truststore of another CA: %v, want unknown authority", err)
		}
	})
}

// TestJavaKeystoreErrors: a wrong password, a file of the other type, a
// file of neither format, a missing password and mixing the PEM and Java
// forms are reported naming the key, without showing the passwords.
func TestJavaKeystoreErrors(t *testing.T) {
	pki := newTestPKI(t)
	dir := t.TempDir()
	jksTrust, jksKey := pki.writeJKS(t, dir, "storepass", "keypass", pki.ca)
	p12Trust, p12Key := pki.writePKCS12(t, dir, "storepass", pki.ca)
	pem := filepath.Join(dir, "ca.pem")
	if err := os.WriteFile(pem, pemlib.EncodeToMemory(&pemlib.Block{Type: "CERTIFICATE", Bytes: pki.ca.Raw}), 0o600); err != nil {
		t.Fatal(err)
	}
	for name, tc := range map[string]struct {
		params []string
		want   string
	}{
		"wrong JKS store password": {[]string{"ssl.truststore.location=" + jksTrust, "ssl.truststore.password=s3cret"},
			`ssl.truststore.location: "` + jksTrust + `" does not open with its password: wrong password, or the file is damaged`},
		"wrong PKCS12 store password": {[]string{"ssl.keystore.location=" + p12Key, "ssl.keystore.password=s3cret", "ssl.keystore.type=PKCS12"},
			`ssl.keystore.location: "` + p12Key + `" does not open with its password: wrong password, or the file is damaged`},
		"wrong JKS key password": {[]string{"ssl.keystore.location=" + jksKey, "ssl.keystore.password=storepass", "ssl.key.password=hunter2"},
			`ssl.keystore.location: "` + jksKey + `" private key "client" does not open with ssl.key.password`},
		"PKCS12 as JKS": {[]string{"ssl.truststore.location=" + p12Trust, "ssl.truststore.password=storepass"},
			`ssl.truststore.location: "` + p12Trust + `" is a PKCS12 keystore, not JKS; set ssl.truststore.type=PKCS12`},
		"JKS as PKCS12": {[]string{"ssl.keystore.location=" + jksKey, "ssl.keystore.password=storepass", "ssl.keystore.type=PKCS12"},
			`ssl.keystore.location: "` + jksKey + `" is a JKS keystore, not PKCS12; set ssl.keystore.type=JKS`},
		"neither format": {[]string{"ssl.truststore.location=" + pem, "ssl.truststore.password=storepass"},
			`ssl.truststore.location: "` + pem + `" is neither a JKS nor a PKCS12 keystore (for PEM files use ssl.ca.location`},
		"missing file": {[]string{"ssl.truststore.location=" + dir + "/nope.jks", "ssl.truststore.password=storepass"},
			`ssl.truststore.location: "` + dir + `/nope.jks" cannot be read`},
		"keystore without password": {[]string{"ssl.keystore.location=" + jksKey},
			"ssl.keystore.password: required key is not set (ssl.keystore.location is set)"},
		"truststore without password": {[]string{"ssl.truststore.location=" + jksTrust},
			"ssl.truststore.password: required key is not set (ssl.truststore.location is set"},
		"both CA forms": {[]string{"ssl.truststore.location=" + jksTrust, "ssl.truststore.password=storepass", "ssl.ca.location=" + pem},
			`ssl.ca.location: "` + pem + `" is set together with ssl.truststore.location; set one of them`},
		"bad type": {[]string{"ssl.keystore.type=PEM"}, `ssl.keystore.type: "PEM" is not allowed; want one of JKS, PKCS12`},
	} {
		t.Run(name, func(t *testing.T) {
			_, err := loadTLS(t, tc.params...)
			if err == nil || !strings.Contains(err.Error(), tc.want) {
				t.Fatalf("error %v\nwant %q", err, tc.want)
			}
			for _, secret := range []string{"s3cret", "hunter2", "storepass"} {
				if strings.Contains(err.Error(), secret) {
					t.Errorf("error shows a password: %v", err)
				}
			}
		})
	}
}

// TestJavaKeystoresNeedTLS: a keystore key with security.protocol
// PLAINTEXT is refused, like the PEM keys.
func TestJavaKeystoresNeedTLS(t *testing.T) {
	err := sinkErr(t, minimalYAML, "ssl.truststore.location=/x.jks", "ssl.truststore.password=p")
	if err == nil || !strings.Contains(err.Error(), `security.protocol: "PLAINTEXT" does not use TLS`) {
		t.Fatalf("error %v", err)
	}
}
