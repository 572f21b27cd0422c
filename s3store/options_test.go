package s3store_test

import (
	"encoding/base64"
	"errors"
	"io"
	"maps"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"

	"github.com/kafkas3/kafkas3/internal/s3fake"
	"github.com/kafkas3/kafkas3/s3store"
)

// countingProxy is a forward HTTP proxy on loopback that counts the
// requests it passes on and keeps their Proxy-Authorization headers.
type countingProxy struct {
	URL   string
	mu    sync.Mutex
	n     int
	auths map[string]bool
}

func newCountingProxy(t *testing.T) *countingProxy {
	t.Helper()
	p := &countingProxy{auths: map[string]bool{}}
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if !r.URL.IsAbs() {
			http.Error(w, "not a proxy request: "+r.URL.String(), http.StatusBadRequest)
			return
		}
		p.mu.Lock()
		p.n++
		p.auths[r.Header.Get("Proxy-Authorization")] = true
		p.mu.Unlock()
		out, _ := http.NewRequestWithContext(r.Context(), r.Method, r.URL.String(), r.Body)
		out.Header = r.Header.Clone()
		out.Header.Del("Proxy-Authorization")
		out.ContentLength = r.ContentLength
		resp, err := http.DefaultTransport.RoundTrip(out)
		if err != nil {
			http.Error(w, err.Error(), http.StatusBadGateway)
			return
		}
		defer resp.Body.Close()
		maps.Copy(w.Header(), resp.Header)
		w.WriteHeader(resp.StatusCode)
		_, _ = io.Copy(w, resp.Body)
	}))
	t.Cleanup(srv.Close)
	p.URL = srv.URL
	return p
}

func (p *countingProxy) count() (int, map[string]bool) {
	p.mu.Lock()
	defer p.mu.Unlock()
	return p.n, maps.Clone(p.auths)
}

// TestS3Proxy: with s3.proxy.url every request goes through the proxy,
// with s3.proxy.user and s3.proxy.password (winning over the URL's) as
// its basic credentials.
func TestS3Proxy(t *testing.T) {
	isolateAWSEnv(t)
	fake := newFake(t)
	proxy := newCountingProxy(t)
	u := strings.Replace(proxy.URL, "http://", "http://url-user:url-pass@", 1)
	st, bucket := fakeStore(t, fake, func(c *s3store.S3Config) {
		c.Proxy = s3store.ProxyConfig{URL: u, User: "proxy-user", Password: "proxy-pass"}
	})
	if err := st.Check(t.Context()); err != nil {
		t.Fatal(err)
	}
	if err := writeObject(t.Context(), st, "small", []byte("abc")); err != nil {
		t.Fatal(err)
	}
	if err := writeObject(t.Context(), st, "big", pattern(6<<20)); err != nil {
		t.Fatal(err)
	}
	if got, _ := fake.Object(bucket, "big"); len(got) != 6<<20 {
		t.Errorf("big object has %d bytes through the proxy", len(got))
	}
	total := 0
	for _, op := range []string{s3fake.OpHeadBucket, s3fake.OpGetObjectLockConfiguration, s3fake.OpPutObject, s3fake.OpCreateMultipartUpload, s3fake.OpUploadPart, s3fake.OpCompleteMultipartUpload} {
		total += fake.Count(op)
	}
	n, auths := proxy.count()
	if n != total || n < 6 {
		t.Errorf("proxy passed %d requests, the store got %d", n, total)
	}
	want := "Basic " + base64.StdEncoding.EncodeToString([]byte("proxy-user:proxy-pass"))
	if len(auths) != 1 || !auths[want] {
		t.Errorf("Proxy-Authorization headers %v, want only %q", auths, want)
	}
}

// TestS3ProxyConfig: a bad s3.proxy.url is refused naming the key,
// without the password of its user info.
func TestS3ProxyConfig(t *testing.T) {
	for _, bad := range []string{"ftp://proxy:21", "http://", "http://u:secret@proxy:3128/some/path"} {
		_, err := s3store.NewS3(t.Context(), s3store.S3Config{Bucket: "bucket", Proxy: s3store.ProxyConfig{URL: bad}}, nil)
		if err == nil || !strings.Contains(err.Error(), "s3.proxy.url") || strings.Contains(err.Error(), "secret") {
			t.Errorf("proxy %q: err = %v", bad, err)
		}
	}
	_, err := s3store.NewS3(t.Context(), s3store.S3Config{Bucket: "bucket", Proxy: s3store.ProxyConfig{User: "u"}}, nil)
	if err == nil || !strings.Contains(err.Error(), "need s3.proxy.url") {
		t.Errorf("user without URL: err = %v", err)
	}
}

// TestS3Tagging: Tag sets the tags of single-part and multipart objects
// (PutObjectTagging), replacing earlier ones; a missing object is
// ErrNotExist.
func TestS3Tagging(t *testing.T) {
	fake := newFake(t)
	st, bucket := fakeStore(t, fake, nil)
	if err := writeObject(t.Context(), st, "small", []byte("abc")); err != nil {
		t.Fatal(err)
	}
	if err := writeObject(t.Context(), st, "big", pattern(11<<20)); err != nil {
		t.Fatal(err)
	}
	tags := map[string]string{"startOffset": "0", "endOffset": "9", "recordCount": "10"}
	for _, key := range []string{"small", "big"} {
		if err := st.Tag(t.Context(), key, map[string]string{"old": "x"}); err != nil {
			t.Fatal(err)
		}
		if err := st.Tag(t.Context(), key, tags); err != nil {
			t.Fatal(err)
		}
		if got := fake.Tags(bucket, key); !maps.Equal(got, tags) {
			t.Errorf("%s: tags %v, want %v", key, got, tags)
		}
	}
	if err := st.Tag(t.Context(), "missing", tags); !errors.Is(err, s3store.ErrNotExist) {
		t.Errorf("tagging a missing object: %v", err)
	}
}

// sseHeaders are the SSE request headers of S3.
var sseHeaders = []string{"X-Amz-Server-Side-Encryption", "X-Amz-Server-Side-Encryption-Aws-Kms-Key-Id",
	"X-Amz-Server-Side-Encryption-Customer-Algorithm", "X-Amz-Server-Side-Encryption-Customer-Key",
	"X-Amz-Server-Side-Encryption-Customer-Key-Md5"}

// TestS3EncryptionOnTheWire writes a single-part and a three-part object
// with each kind of server-side encryption and checks the headers of
// every request, and how the fake stored the objects: SSE-S3 and SSE-KMS
// (with its key id) on PutObject and CreateMultipartUpload only; SSE-C on
// those, on every UploadPart and CompleteMultipartUpload, and on every
// read. The fake refuses a part or a read of an SSE-C object without the
// key, as S3 does, and a store without the key cannot read the objects.
func TestS3EncryptionOnTheWire(t *testing.T) {
	const key32 = "MDEyMzQ1Njc4OWFiY2RlZjAxMjM0NTY3ODlhYmNkZWY="
	const keyMD5 = "hRasmdxgYDKV3nvbahU1MA=="
	cases := []struct {
		name string
		edit func(*s3store.S3Config)
		want map[string]string // headers of PutObject and CreateMultipartUpload
		sse  s3fake.SSE
	}{
		{"sse-s3", func(c *s3store.S3Config) { c.SSEAlgorithm = "AES256" },
			map[string]string{"X-Amz-Server-Side-Encryption": "AES256"}, s3fake.SSE{Algorithm: "AES256"}},
		{"sse-kms", func(c *s3store.S3Config) { c.SSEAlgorithm, c.KMSKeyID = "aws:kms", "arn:aws:kms:us-west-2:1:key/k" },
			map[string]string{"X-Amz-Server-Side-Encryption": "aws:kms", "X-Amz-Server-Side-Encryption-Aws-Kms-Key-Id": "arn:aws:kms:us-west-2:1:key/k"},
			s3fake.SSE{Algorithm: "aws:kms", KMSKeyID: "arn:aws:kms:us-west-2:1:key/k"}},
		{"sse-c", func(c *s3store.S3Config) { c.SSEAlgorithm, c.CustomerKey = "AES256", key32 },
			map[string]string{"X-Amz-Server-Side-Encryption-Customer-Algorithm": "AES256",
				"X-Amz-Server-Side-Encryption-Customer-Key": key32, "X-Amz-Server-Side-Encryption-Customer-Key-Md5": keyMD5},
			s3fake.SSE{CustomerKeyMD5: keyMD5}},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			fake := newFake(t)
			st, bucket := fakeStore(t, fake, tc.edit)
			if err := writeObject(t.Context(), st, "small", []byte("x")); err != nil {
				t.Fatal(err)
			}
			if err := writeObject(t.Context(), st, "big", pattern(13<<20)); err != nil {
				t.Fatal(err)
			}
			if n := fake.Count(s3fake.OpUploadPart); n != 3 {
				t.Fatalf("%d parts uploaded, want 3", n)
			}
			checkSSEHeaders(t, fake, s3fake.OpPutObject, tc.want)
			checkSSEHeaders(t, fake, s3fake.OpCreateMultipartUpload, tc.want)
			perPart := map[string]string{}
			if tc.sse.CustomerKeyMD5 != "" {
				perPart = tc.want
			}
			checkSSEHeaders(t, fake, s3fake.OpUploadPart, perPart)
			checkSSEHeaders(t, fake, s3fake.OpCompleteMultipartUpload, perPart)
			for _, key := range []string{"small", "big"} {
				if got, _ := fake.ObjectSSE(bucket, key); got != tc.sse {
					t.Errorf("%s stored with %+v, want %+v", key, got, tc.sse)
				}
				if _, err := st.Stat(t.Context(), key); err != nil {
					t.Fatal(err)
				}
				r, err := st.Open(t.Context(), key)
				if err != nil {
					t.Fatal(err)
				}
				_, _ = io.Copy(io.Discard, r)
				r.Close()
			}
			checkSSEHeaders(t, fake, s3fake.OpGetObject, perPart)
			checkSSEHeaders(t, fake, s3fake.OpHeadObject, perPart)
			if tc.sse.CustomerKeyMD5 == "" {
				return
			}
			plain, err := s3store.NewS3(t.Context(), s3store.S3Config{Bucket: bucket, Endpoint: fake.URL, PathStyle: true,
				AccessKeyID: fakeAccessKey, SecretAccessKey: fakeSecretKey, PartRetries: -1}, nil)
			if err != nil {
				t.Fatal(err)
			}
			if _, err := plain.Open(t.Context(), "big"); err == nil || !strings.Contains(err.Error(), "set s3.sse.customer.key") {
				t.Errorf("reading an SSE-C object without the key: %v", err)
			}
		})
	}
}

// checkSSEHeaders checks that every request of op carried exactly the SSE
// headers want (and no other SSE header).
func checkSSEHeaders(t *testing.T, fake *s3fake.Server, op string, want map[string]string) {
	t.Helper()
	all := fake.Headers(op)
	if len(all) == 0 {
		t.Errorf("no %s request", op)
	}
	for i, h := range all {
		for _, name := range sseHeaders {
			if got := h.Get(name); got != want[name] {
				t.Errorf("%s request %d: %s = %q, want %q", op, i+1, name, got, want[name])
			}
		}
	}
}

// TestS3RegionMismatch: a bucket in another region than s3.region gives
// a 400 (AuthorizationHeaderMalformed) or a 301 (PermanentRedirect) with
// x-amz-bucket-region; Check and writes then name the bucket's region and
// the key to set.
func TestS3RegionMismatch(t *testing.T) {
	for _, status := range []int{http.StatusBadRequest, http.StatusMovedPermanently} {
		fake := newFake(t)
		st, bucket := fakeStore(t, fake, func(c *s3store.S3Config) { c.Region = "us-east-1" })
		fake.SetBucketRegion(bucket, "eu-central-1", status)
		err := st.Check(t.Context())
		want := `bucket "` + bucket + `" is in region eu-central-1, not in s3.region "us-east-1": set s3.region=eu-central-1`
		if err == nil || !strings.Contains(err.Error(), want) {
			t.Errorf("status %d: Check: %v\nwant it to contain %s", status, err, want)
		}
		if err := writeObject(t.Context(), st, "o", []byte("x")); err == nil || !strings.Contains(err.Error(), want) {
			t.Errorf("status %d: write: %v", status, err)
		}
		right, _ := fakeStore(t, fake, func(c *s3store.S3Config) { c.Region = "eu-central-1"; c.Bucket = bucket })
		if err := right.Check(t.Context()); err != nil {
			t.Errorf("status %d: Check in the bucket's region: %v", status, err)
		}
	}
}
