package testbed

import (
	"crypto/tls"
	"crypto/x509"
	"errors"
	"io"
	"net/http"
	"net/http/httptest"
	"os"
	"strings"
	"testing"
)

// TestSelfSigned: the generated certificate and key serve TLS for
// 127.0.0.1 and localhost; a client trusting the written PEM file
// (LoadRoots, HTTPClient) connects, and one trusting the system roots
// fails with an unknown authority. The key file is private.
func TestSelfSigned(t *testing.T) {
	dir := t.TempDir()
	c, err := writeSelfSigned(dir, "test")
	if err != nil {
		t.Fatal(err)
	}
	if fi, err := os.Stat(c.keyPath); err != nil || fi.Mode().Perm() != 0o600 {
		t.Fatalf("key file %s: %v, mode %v; want 0600", c.keyPath, err, fi.Mode().Perm())
	}
	pair, err := tls.LoadX509KeyPair(c.certPath, c.keyPath)
	if err != nil {
		t.Fatal(err)
	}
	srv := httptest.NewUnstartedServer(http.HandlerFunc(func(w http.ResponseWriter, _ *http.Request) {
		_, _ = io.WriteString(w, "ok")
	}))
	srv.TLS = &tls.Config{Certificates: []tls.Certificate{pair}}
	srv.StartTLS()
	defer srv.Close()
	roots, err := LoadRoots(c.certPath)
	if err != nil {
		t.Fatal(err)
	}
	trusting := HTTPClient(roots)
	for _, u := range []string{srv.URL, strings.Replace(srv.URL, "127.0.0.1", "localhost", 1)} {
		req, _ := http.NewRequest(http.MethodGet, u, nil)
		resp, err := trusting.Do(req)
		if err != nil {
			t.Fatalf("GET %s trusting the CA: %v", u, err)
		}
		body, _ := io.ReadAll(resp.Body)
		resp.Body.Close()
		if string(body) != "ok" {
			t.Fatalf("GET %s: %q", u, body)
		}
	}
	req, _ := http.NewRequest(http.MethodGet, srv.URL, nil)
	_, err = HTTPClient(nil).Do(req)
	var unknown x509.UnknownAuthorityError
	if !errors.As(err, &unknown) {
		t.Fatalf("GET %s with the system roots: %v, want an unknown authority", srv.URL, err)
	}
}

// TestLoadRootsErrors: a missing file and a file without a certificate.
func TestLoadRootsErrors(t *testing.T) {
	dir := t.TempDir()
	if _, err := LoadRoots(dir + "/none.pem"); err == nil {
		t.Fatal("missing file: no error")
	}
	empty := dir + "/empty.pem"
	if err := os.WriteFile(empty, []byte("not a certificate\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	if _, err := LoadRoots(empty); err == nil || !strings.Contains(err.Error(), empty) {
		t.Fatalf("no certificate: %v, want an error naming %s", err, empty)
	}
}
