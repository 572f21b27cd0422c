package s3store_test

import (
	"bytes"
	"encoding/pem"
	"io"
	"log"
	"net"
	"net/http"
	"net/http/httptest"
	"net/http/httputil"
	"net/url"
	"os"
	"path/filepath"
	"strings"
	"sync/atomic"
	"testing"

	"github.com/kafkas3/kafkas3/internal/s3fake"
	"github.com/kafkas3/kafkas3/s3store"
)

// tlsFront serves fake over HTTPS (httptest's certificate, for 127.0.0.1)
// and returns its URL and the PEM file of that certificate, the CA a
// client must trust.
func tlsFront(t *testing.T, fake *s3fake.Server) (endpoint, caPath string) {
	t.Helper()
	target, err := url.Parse(fake.URL)
	if err != nil {
		t.Fatal(err)
	}
	front := httptest.NewUnstartedServer(httputil.NewSingleHostReverseProxy(target))
	front.Config.ErrorLog = log.New(io.Discard, "", 0) // refused handshakes are the point of some tests
	front.StartTLS()
	t.Cleanup(front.Close)
	caPath = filepath.Join(t.TempDir(), "ca.pem")
	ca := pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE", Bytes: front.Certificate().Raw})
	if err := os.WriteFile(caPath, ca, 0o600); err != nil {
		t.Fatal(err)
	}
	return front.URL, caPath
}

// connectProxy is a forward proxy on loopback that only tunnels CONNECT
// requests (how HTTPS goes through a proxy) and counts them.
func connectProxy(t *testing.T) (proxyURL string, tunnels *atomic.Int64) {
	t.Helper()
	tunnels = &atomic.Int64{}
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.Method != http.MethodConnect {
			http.Error(w, "CONNECT only", http.StatusMethodNotAllowed)
			return
		}
		up, err := net.Dial("tcp", r.Host)
		if err != nil {
			http.Error(w, err.Error(), http.StatusBadGateway)
			return
		}
		down, _, err := http.NewResponseController(w).Hijack()
		if err != nil {
			up.Close()
			return
		}
		tunnels.Add(1)
		_, _ = io.WriteString(down, "HTTP/1.1 200 Connection established\r\n\r\n")
		go func() { _, _ = io.Copy(up, down); up.Close() }()
		_, _ = io.Copy(down, up)
		down.Close()
	}))
	t.Cleanup(srv.Close)
	return srv.URL, tunnels
}

// storeAt returns an S3 store of bucket at endpoint, with the fake's keys.
func storeAt(t *testing.T, endpoint, bucket string, proxy string) (*s3store.S3, error) {
	t.Helper()
	return s3store.NewS3(t.Context(), s3store.S3Config{
		Bucket: bucket, Endpoint: endpoint, PathStyle: true,
		AccessKeyID: fakeAccessKey, SecretAccessKey: fakeSecretKey,
		PartSize: s3store.MinPartSize, SpoolDir: t.TempDir(), Proxy: s3store.ProxyConfig{URL: proxy},
	}, nil)
}

// TestS3CABundle: a store over HTTPS with a private CA works when
// AWS_CA_BUNDLE names the CA's PEM file, directly and through
// s3.proxy.url (whose client keeps the bundle), for small objects and
// multipart uploads from the spool; objects read back equal.
func TestS3CABundle(t *testing.T) {
	for _, viaProxy := range []bool{false, true} {
		t.Run(map[bool]string{false: "direct", true: "proxy"}[viaProxy], func(t *testing.T) {
			isolateAWSEnv(t)
			fake := newFake(t)
			endpoint, ca := tlsFront(t, fake)
			t.Setenv("AWS_CA_BUNDLE", ca)
			proxy, tunnels := "", (*atomic.Int64)(nil)
			if viaProxy {
				proxy, tunnels = connectProxy(t)
			}
			fake.CreateBucket("tls")
			st, err := storeAt(t, endpoint, "tls", proxy)
			if err != nil {
				t.Fatal(err)
			}
			if err := st.Check(t.Context()); err != nil {
				t.Fatalf("Check over HTTPS with AWS_CA_BUNDLE: %v", err)
			}
			big := pattern(2*s3store.MinPartSize + 123)
			for key, data := range map[string][]byte{"small": []byte("abc"), "big": big} {
				if err := writeObject(t.Context(), st, key, data); err != nil {
					t.Fatalf("write %s: %v", key, err)
				}
				if got, _ := fake.Object("tls", key); !bytes.Equal(got, data) {
					t.Fatalf("%s: stored %d bytes, want %d equal bytes", key, len(got), len(data))
				}
			}
			if viaProxy && tunnels.Load() == 0 {
				t.Fatal("no request went through the proxy")
			}
		})
	}
}

// TestS3UntrustedCertificate: without the CA the store's first request
// fails at once (not retried, not an outage) with an error naming TLS,
// the endpoint, the unknown authority and AWS_CA_BUNDLE.
func TestS3UntrustedCertificate(t *testing.T) {
	isolateAWSEnv(t)
	fake := newFake(t)
	endpoint, _ := tlsFront(t, fake)
	fake.CreateBucket("tls")
	st, err := storeAt(t, endpoint, "tls", "")
	if err != nil {
		t.Fatal(err)
	}
	err = st.Check(t.Context())
	if err == nil {
		t.Fatal("Check over HTTPS without the CA succeeded")
	}
	msg := err.Error()
	for _, want := range []string{"TLS: the store at " + endpoint, "unknown authority", "AWS_CA_BUNDLE"} {
		if !strings.Contains(msg, want) {
			t.Errorf("Check error lacks %q:\n%s", want, msg)
		}
	}
	if strings.Contains(msg, "attempts") || s3store.Transient(err) {
		t.Errorf("an untrusted certificate was retried or counts as an outage (Transient %v):\n%s", s3store.Transient(err), msg)
	}
}

// TestS3BadCABundle: an AWS_CA_BUNDLE that holds no certificate is an
// error of NewS3 naming the file.
func TestS3BadCABundle(t *testing.T) {
	isolateAWSEnv(t)
	bad := filepath.Join(t.TempDir(), "not-a-ca.pem")
	if err := os.WriteFile(bad, []byte("not a certificate\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	t.Setenv("AWS_CA_BUNDLE", bad)
	_, err := storeAt(t, "https://127.0.0.1:1", "tls", "")
	if err == nil || !strings.Contains(err.Error(), "AWS_CA_BUNDLE=\""+bad+"\"") {
		t.Fatalf("NewS3 with a bad AWS_CA_BUNDLE = %v, want an error naming it", err)
	}
}
