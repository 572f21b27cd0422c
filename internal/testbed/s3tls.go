package testbed

import (
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/tls"
	"crypto/x509"
	"crypto/x509/pkix"
	"encoding/pem"
	"errors"
	"fmt"
	"math/big"
	"net"
	"net/http"
	"os"
	"path/filepath"
	"time"

	awshttp "github.com/aws/aws-sdk-go-v2/aws/transport/http"
)

// selfSignedValidity is how long the test bed's certificates are valid;
// they start an hour in the past, so a clock a little behind accepts them.
const selfSignedValidity = 48 * time.Hour

// selfSigned is a certificate and key written as PEM files.
type selfSigned struct {
	certPath, keyPath string
	roots             *x509.CertPool // the certificate as the only root
}

// writeSelfSigned generates an ECDSA P-256 key and a self-signed
// certificate for 127.0.0.1 and localhost, usable as a server certificate
// and as its own CA, and writes them to dir as <name>-cert.pem and
// <name>-key.pem (PKCS #8, mode 0600).
func writeSelfSigned(dir, name string) (selfSigned, error) {
	key, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		return selfSigned{}, fmt.Errorf("testbed: generate key: %w", err)
	}
	serial, err := rand.Int(rand.Reader, new(big.Int).Lsh(big.NewInt(1), 62))
	if err != nil {
		return selfSigned{}, fmt.Errorf("testbed: serial number: %w", err)
	}
	now := time.Now()
	tmpl := &x509.Certificate{
		SerialNumber:          serial,
		Subject:               pkix.Name{CommonName: "kafkas3 testbed " + name},
		NotBefore:             now.Add(-time.Hour),
		NotAfter:              now.Add(selfSignedValidity),
		KeyUsage:              x509.KeyUsageDigitalSignature | x509.KeyUsageCertSign,
		ExtKeyUsage:           []x509.ExtKeyUsage{x509.ExtKeyUsageServerAuth},
		BasicConstraintsValid: true,
		IsCA:                  true,
		IPAddresses:           []net.IP{net.IPv4(127, 0, 0, 1)},
		DNSNames:              []string{"localhost"},
	}
	der, err := x509.CreateCertificate(rand.Reader, tmpl, tmpl, &key.PublicKey, key)
	if err != nil {
		return selfSigned{}, fmt.Errorf("testbed: create certificate: %w", err)
	}
	cert, err := x509.ParseCertificate(der)
	if err != nil {
		return selfSigned{}, fmt.Errorf("testbed: parse certificate: %w", err)
	}
	keyDER, err := x509.MarshalPKCS8PrivateKey(key)
	if err != nil {
		return selfSigned{}, fmt.Errorf("testbed: marshal key: %w", err)
	}
	s := selfSigned{certPath: filepath.Join(dir, name+"-cert.pem"), keyPath: filepath.Join(dir, name+"-key.pem"),
		roots: x509.NewCertPool()}
	s.roots.AddCert(cert)
	if err := writePEM(s.certPath, "CERTIFICATE", der, 0o644); err != nil {
		return selfSigned{}, err
	}
	if err := writePEM(s.keyPath, "PRIVATE KEY", keyDER, 0o600); err != nil {
		return selfSigned{}, err
	}
	return s, nil
}

// writePEM writes one PEM block of type typ to path.
func writePEM(path, typ string, der []byte, mode os.FileMode) error {
	data := pem.EncodeToMemory(&pem.Block{Type: typ, Bytes: der})
	if err := os.WriteFile(path, data, mode); err != nil {
		return fmt.Errorf("testbed: write %s: %w", path, err)
	}
	return nil
}

// LoadRoots reads a PEM file of CA certificates (such as S3Server.CAPath)
// into a pool.
func LoadRoots(path string) (*x509.CertPool, error) {
	data, err := os.ReadFile(path)
	if err != nil {
		return nil, fmt.Errorf("testbed: read CA %s: %w", path, err)
	}
	pool := x509.NewCertPool()
	if !pool.AppendCertsFromPEM(data) {
		return nil, errors.New("testbed: no PEM certificate in " + path)
	}
	return pool, nil
}

// HTTPClient is an aws-sdk-go-v2 HTTP client that trusts only roots, as
// the SDK's default configuration builds it from AWS_CA_BUNDLE (its
// default transport with those root CAs).
func HTTPClient(roots *x509.CertPool) *awshttp.BuildableClient {
	return awshttp.NewBuildableClient().WithTransportOptions(func(tr *http.Transport) {
		if tr.TLSClientConfig == nil {
			tr.TLSClientConfig = &tls.Config{}
		}
		tr.TLSClientConfig.RootCAs = roots
	})
}
