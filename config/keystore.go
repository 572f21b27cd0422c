package config

import (
	"bytes"
	"context"
	"crypto"
	"crypto/tls"
	"crypto/x509"
	"errors"
	"fmt"
	"net"
	"os"
	"strings"

	keystore "github.com/pavlo-v-chernykh/keystore-go/v4"
	pkcs12 "software.sslmate.com/src/go-pkcs12"
)

// Java keystores (ssl.truststore.*, ssl.keystore.*, ssl.key.password), as
// Kafka's Java clients and Kafka Connect workers read them: JKS through
// keystore-go, PKCS12 through go-pkcs12.

// The keystore types of ssl.truststore.type and ssl.keystore.type.
const (
	storeJKS    = "JKS"
	storePKCS12 = "PKCS12"
)

// jksMagic starts every JKS file; jceksMagic starts Java's JCEKS files.
const (
	jksMagic   = "\xfe\xed\xfe\xed"
	jceksMagic = "\xce\xce\xce\xce"
)

// wrongPassword is how a keystore reports a password that does not open
// it (JKS: the integrity digest does not match; PKCS12: the MAC).
const wrongPassword = "does not open with its password: wrong password, or the file is damaged"

// sniffStore tells which keystore format data is in: JKS, PKCS12 (a DER
// sequence), or "" for neither.
func sniffStore(data []byte) string {
	switch {
	case bytes.HasPrefix(data, []byte(jksMagic)):
		return storeJKS
	case len(data) > 1 && data[0] == 0x30 && (data[1] == 0x80 || data[1] >= 0x81 && data[1] <= 0x84):
		return storePKCS12
	}
	return ""
}

// readStore reads a keystore file and checks that it is of type typ,
// saying what it is when it is not.
func readStore(path, typ, typeKey string) ([]byte, error) {
	data, err := os.ReadFile(path)
	if err != nil {
		return nil, fmt.Errorf("cannot be read (%w)", err)
	}
	switch got := sniffStore(data); {
	case got == typ:
		return data, nil
	case bytes.HasPrefix(data, []byte(jceksMagic)):
		return nil, errors.New("is a JCEKS keystore, which kafkas3 does not read; convert it with keytool -importkeystore -deststoretype PKCS12")
	case got == "":
		return nil, errors.New("is neither a JKS nor a PKCS12 keystore (for PEM files use ssl.ca.location, ssl.certificate.location and ssl.key.location)")
	default:
		return nil, fmt.Errorf("is a %s keystore, not %s; set %s=%s", got, typ, typeKey, got)
	}
}

// loadTrustStore returns the certificates of a truststore: every trusted
// certificate entry, and the certificate of each private key entry, as
// Java's TrustManager takes them.
func loadTrustStore(path, typ, password string) ([]*x509.Certificate, error) {
	data, err := readStore(path, typ, "ssl.truststore.type")
	if err != nil {
		return nil, err
	}
	if typ == storePKCS12 {
		certs, err := pkcs12.DecodeTrustStore(data, password)
		if err != nil && !errors.Is(err, pkcs12.ErrIncorrectPassword) {
			// A keystore with a private key entry (keytool -genkeypair):
			// Java's TrustManager trusts the entry's certificate.
			if _, leaf, _, chainErr := pkcs12.DecodeChain(data, password); chainErr == nil {
				certs, err = []*x509.Certificate{leaf}, nil
			}
		}
		if err != nil {
			return nil, pkcs12Error(err)
		}
		return nonEmpty(certs)
	}
	ks, err := loadJKS(data, password)
	if err != nil {
		return nil, err
	}
	var certs []*x509.Certificate
	for _, alias := range ks.Aliases() {
		var chain []keystore.Certificate
		if e, err := ks.GetTrustedCertificateEntry(alias); err == nil {
			chain = []keystore.Certificate{e.Certificate}
		} else if c, err := ks.GetPrivateKeyEntryCertificateChain(alias); err == nil && len(c) > 0 {
			chain = c[:1]
		}
		for _, c := range chain {
			cert, err := x509.ParseCertificate(c.Content)
			if err != nil {
				return nil, fmt.Errorf("entry %q holds a certificate that does not parse (%w)", alias, err)
			}
			certs = append(certs, cert)
		}
	}
	return nonEmpty(certs)
}

func nonEmpty(certs []*x509.Certificate) ([]*x509.Certificate, error) {
	if len(certs) == 0 {
		return nil, errors.New("holds no certificates")
	}
	return certs, nil
}

// loadKeyStore returns the client certificate of a keystore: its one
// private key entry with the entry's certificate chain. keyPassword ""
// means the store's password, as in Kafka.
func loadKeyStore(path, typ, password, keyPassword string) (tls.Certificate, error) {
	data, err := readStore(path, typ, "ssl.keystore.type")
	if err != nil {
		return tls.Certificate{}, err
	}
	if typ == storePKCS12 {
		if keyPassword != "" && keyPassword != password {
			return tls.Certificate{}, errors.New("is PKCS12, whose key has the store's password; ssl.key.password differs from ssl.keystore.password")
		}
		key, leaf, cas, err := pkcs12.DecodeChain(data, password)
		if err != nil {
			return tls.Certificate{}, pkcs12Error(err)
		}
		chain := [][]byte{leaf.Raw}
		for _, c := range cas {
			chain = append(chain, c.Raw)
		}
		return keyPair(key, chain)
	}
	return loadJKSKey(data, password, keyPassword)
}

// loadJKSKey returns the one private key entry of a JKS keystore.
func loadJKSKey(data []byte, password, keyPassword string) (tls.Certificate, error) {
	ks, err := loadJKS(data, password)
	if err != nil {
		return tls.Certificate{}, err
	}
	var aliases []string
	for _, alias := range ks.Aliases() {
		if ks.IsPrivateKeyEntry(alias) {
			aliases = append(aliases, alias)
		}
	}
	if len(aliases) != 1 {
		return tls.Certificate{}, fmt.Errorf("holds %d private key entries (%s); want exactly one", len(aliases), strings.Join(aliases, ", "))
	}
	if keyPassword == "" {
		keyPassword = password
	}
	entry, err := ks.GetPrivateKeyEntry(aliases[0], []byte(keyPassword))
	if err != nil {
		return tls.Certificate{}, fmt.Errorf("private key %q does not open with ssl.key.password (or ssl.keystore.password when that is unset): %w", aliases[0], err)
	}
	key, err := x509.ParsePKCS8PrivateKey(entry.PrivateKey)
	if err != nil {
		return tls.Certificate{}, fmt.Errorf("private key %q does not parse (%w)", aliases[0], err)
	}
	var chain [][]byte
	for _, c := range entry.CertificateChain {
		chain = append(chain, c.Content)
	}
	return keyPair(key, chain)
}

// loadJKS opens a JKS keystore, checking its integrity with password.
func loadJKS(data []byte, password string) (keystore.KeyStore, error) {
	ks := keystore.New()
	if err := ks.Load(bytes.NewReader(data), []byte(password)); err != nil {
		if strings.Contains(err.Error(), "invalid digest") {
			return ks, errors.New(wrongPassword)
		}
		return ks, fmt.Errorf("is not a readable JKS keystore (%w)", err)
	}
	return ks, nil
}

// pkcs12Error words go-pkcs12's errors for the user.
func pkcs12Error(err error) error {
	if errors.Is(err, pkcs12.ErrIncorrectPassword) {
		return errors.New(wrongPassword)
	}
	return fmt.Errorf("is not a readable PKCS12 keystore (%w)", err)
}

// keyPair builds a TLS certificate from a private key and a DER chain,
// leaf first, checking that the key belongs to the leaf.
func keyPair(key crypto.PrivateKey, chain [][]byte) (tls.Certificate, error) {
	if len(chain) == 0 {
		return tls.Certificate{}, errors.New("holds a private key without a certificate")
	}
	leaf, err := x509.ParseCertificate(chain[0])
	if err != nil {
		return tls.Certificate{}, fmt.Errorf("holds a certificate that does not parse (%w)", err)
	}
	signer, ok := key.(crypto.Signer)
	if !ok {
		return tls.Certificate{}, fmt.Errorf("holds a private key of unsupported type %T", key)
	}
	if pub, ok := signer.Public().(interface{ Equal(crypto.PublicKey) bool }); !ok || !pub.Equal(leaf.PublicKey) {
		return tls.Certificate{}, errors.New("holds a private key that does not match its certificate")
	}
	return tls.Certificate{Certificate: chain, PrivateKey: key, Leaf: leaf}, nil
}

// tlsDialer dials a broker and runs the TLS handshake with tc (the server
// name is the broker's host unless tc sets one, as kgo.DialTLSConfig
// does). A failed handshake names TLS, the broker and the keys that
// choose what is trusted, so a wrong CA is not taken for a network fault.
func tlsDialer(tc *tls.Config) func(ctx context.Context, network, host string) (net.Conn, error) {
	return func(ctx context.Context, network, host string) (net.Conn, error) {
		var d net.Dialer
		conn, err := d.DialContext(ctx, network, host)
		if err != nil {
			return nil, err
		}
		cfg := tc.Clone()
		if cfg.ServerName == "" {
			if name, _, err := net.SplitHostPort(host); err == nil {
				cfg.ServerName = name
			}
		}
		tlsConn := tls.Client(conn, cfg)
		if err := tlsConn.HandshakeContext(ctx); err != nil {
			_ = conn.Close()
			return nil, fmt.Errorf("TLS handshake with broker %s failed (check ssl.truststore.location or ssl.ca.location, and the client certificate): %w", host, err)
		}
		return tlsConn, nil
	}
}
