package s3store_test

import (
	"bytes"
	"errors"
	"io"
	"net/http"
	"net/http/httptest"
	"net/http/httputil"
	"net/url"
	"strings"
	"sync"
	"testing"

	"github.com/kafkas3/kafkas3/s3store"
)

// corruptor is a reverse proxy in front of an S3 server that flips one
// byte in the body of the next bad PUT requests that carry one, keeping
// their length and headers: a body corrupted on the way.
type corruptor struct {
	URL string

	mu        sync.Mutex
	bad       int // PUTs with a body still to corrupt; < 0 means all
	corrupted int
	unsigned  int // PUTs with a body sent with x-amz-content-sha256: UNSIGNED-PAYLOAD
	withCRC   int // PUTs with a body that carried x-amz-checksum-crc32c
}

func newCorruptor(t *testing.T, target string, bad int) *corruptor {
	t.Helper()
	u, err := url.Parse(target)
	if err != nil {
		t.Fatal(err)
	}
	c := &corruptor{bad: bad}
	rp := httputil.NewSingleHostReverseProxy(u)
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.Method == http.MethodPut && r.ContentLength > 0 {
			c.inspect(r)
		}
		rp.ServeHTTP(w, r)
	}))
	t.Cleanup(srv.Close)
	c.URL = srv.URL
	return c
}

func (c *corruptor) inspect(r *http.Request) {
	body, err := io.ReadAll(r.Body)
	_ = r.Body.Close()
	c.mu.Lock()
	defer c.mu.Unlock()
	if r.Header.Get("X-Amz-Content-Sha256") == "UNSIGNED-PAYLOAD" {
		c.unsigned++
	}
	if r.Header.Get("X-Amz-Checksum-Crc32c") != "" {
		c.withCRC++
	}
	if err == nil && len(body) > 0 && c.bad != 0 {
		body[len(body)/2] ^= 0x20
		c.corrupted++
		if c.bad > 0 {
			c.bad--
		}
	}
	r.Body = io.NopCloser(bytes.NewReader(body))
}

func (c *corruptor) counts() (corrupted, unsigned, withCRC int) {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.corrupted, c.unsigned, c.withCRC
}

// TestS3CorruptedBodyIsRefused: the sink sends bodies without SigV4's
// payload hash (UNSIGNED-PAYLOAD) but with their CRC32C, so a body
// corrupted on the way is refused by the store (400 BadDigest) instead of
// stored. A single PutObject and a multipart upload (each part) are
// checked: with every body corrupted the write fails after its retries
// and nothing is stored or left pending; with one corrupted body the
// retry, which reads the spool afresh, stores the exact bytes.
func TestS3CorruptedBodyIsRefused(t *testing.T) {
	for _, size := range []int{1000, 2*s3store.MinPartSize + 77} {
		fake := newFake(t)
		for _, bad := range []int{-1, 1} {
			c := newCorruptor(t, fake.URL, bad)
			st, bucket := fakeStore(t, fake, func(cfg *s3store.S3Config) { cfg.Endpoint = c.URL })
			data := pattern(size)
			key := strings.Repeat("k", 1+len(fake.Keys(bucket)))
			err := writeObject(t.Context(), st, key, data)
			corrupted, unsigned, withCRC := c.counts()
			if corrupted == 0 {
				t.Fatalf("size %d: the proxy corrupted no body", size)
			}
			if unsigned == 0 || unsigned != withCRC {
				t.Errorf("size %d: %d bodies sent unsigned, %d with x-amz-checksum-crc32c: want every body both", size, unsigned, withCRC)
			}
			got, ok := fake.Object(bucket, key)
			if bad < 0 {
				var apiErr interface{ ErrorCode() string }
				if err == nil || !errors.As(err, &apiErr) || apiErr.ErrorCode() != "BadDigest" {
					t.Fatalf("size %d: write with every body corrupted = %v, want BadDigest", size, err)
				}
				if ok {
					t.Errorf("size %d: a corrupted object was stored (%d bytes)", size, len(got))
				}
				continue
			}
			if err != nil {
				t.Fatalf("size %d: write with one corrupted body (retried) = %v", size, err)
			}
			if !ok || !bytes.Equal(got, data) {
				t.Errorf("size %d: stored %d bytes (present %v), want the %d bytes written", size, len(got), ok, len(data))
			}
		}
	}
}

// TestS3FakeRefusesBadChecksum: the fake, like S3, verifies a body
// against its x-amz-checksum-* header.
func TestS3FakeRefusesBadChecksum(t *testing.T) {
	fake := newFake(t)
	fake.CreateBucket("b")
	put := func(body, crc string) int {
		req, _ := http.NewRequest(http.MethodPut, fake.URL+"/b/k", strings.NewReader(body))
		req.Header.Set("X-Amz-Checksum-Crc32c", crc)
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		_ = resp.Body.Close()
		return resp.StatusCode
	}
	// CRC32C("hello") = 0x9a71bb4c.
	if code := put("hello", "mnG7TA=="); code != http.StatusOK {
		t.Errorf("PUT with the right CRC32C: status %d, want 200", code)
	}
	if code := put("hellO", "mnG7TA=="); code != http.StatusBadRequest {
		t.Errorf("PUT with a wrong CRC32C: status %d, want 400", code)
	}
	if got, _ := fake.Object("b", "k"); string(got) != "hello" {
		t.Errorf("object = %q, want the body with the right checksum", got)
	}
}
