package s3store_test

import (
	"bytes"
	"encoding/base64"
	"encoding/binary"
	"errors"
	"hash/crc32"
	"io"
	"net/http"
	"net/http/httptest"
	"net/http/httputil"
	"net/url"
	"strings"
	"sync"
	"testing"

	"github.com/kafkas3/kafkas3/internal/s3fake"
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

// TestS3FullObjectChecksum: a multipart upload asks for the FULL_OBJECT
// CRC32C type and completes with the whole object's CRC32C, which the
// store checks and keeps (StoredCRC32C); a single PutObject carries and
// keeps the whole object's. A store that refuses FULL_OBJECT gets a
// composite upload instead, for that object and the later ones (one
// refused request in all), and StoredCRC32C says it keeps no
// full-object CRC32C.
func TestS3FullObjectChecksum(t *testing.T) {
	for _, refuse := range []bool{false, true} {
		t.Run(map[bool]string{false: "full", true: "refused"}[refuse], func(t *testing.T) {
			fake := newFake(t)
			fake.RefuseFullObject(refuse)
			st, bucket := fakeStore(t, fake, nil)
			big, small := pattern(11<<20), pattern(1000)
			for _, o := range []struct {
				key  string
				data []byte
			}{{"a/big1", big}, {"a/big2", big[1:]}, {"a/small", small}} {
				if err := writeObject(t.Context(), st, o.key, o.data); err != nil {
					t.Fatal(err)
				}
				want := index32(o.data)
				typ, kept := fake.Checksum(bucket, o.key)
				crc, has, err := st.StoredCRC32C(t.Context(), o.key)
				if err != nil {
					t.Fatal(err)
				}
				switch {
				case len(o.data) < s3store.MinPartSize || !refuse:
					if typ != "FULL_OBJECT" || kept != want || !has || crc != want {
						t.Errorf("%s: store keeps %s %s, StoredCRC32C %q %v; want FULL_OBJECT %s", o.key, typ, kept, crc, has, want)
					}
				default:
					if typ != "COMPOSITE" || has {
						t.Errorf("%s: store keeps %s %s, StoredCRC32C %q %v; want a composite checksum, not reported", o.key, typ, kept, crc, has)
					}
				}
			}
			creates := fake.Count(s3fake.OpCreateMultipartUpload)
			if want := 2 + map[bool]int{false: 0, true: 1}[refuse]; creates != want {
				t.Errorf("%d CreateMultipartUpload requests, want %d", creates, want)
			}
			if h := fake.Header(s3fake.OpCompleteMultipartUpload); (h.Get("X-Amz-Checksum-Type") == "FULL_OBJECT") == refuse {
				t.Errorf("last CompleteMultipartUpload headers %v", h)
			}
		})
	}
}

// index32 is the CRC32C of b as S3 prints it.
func index32(b []byte) string {
	return base64.StdEncoding.EncodeToString(binary.BigEndian.AppendUint32(nil, crc32.Checksum(b, crc32.MakeTable(crc32.Castagnoli))))
}
