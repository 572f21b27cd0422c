//go:build integration

package s3store_test

import (
	"context"
	"errors"
	"maps"
	"net/http"
	"net/http/httptest"
	"net/http/httputil"
	"net/url"
	"path"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/s3"
	"github.com/aws/aws-sdk-go-v2/service/s3/types"
	"github.com/kafkas3/kafkas3/internal/testbed"
	"github.com/kafkas3/kafkas3/s3store"
)

// headerLog is a reverse proxy in front of versitygw that keeps the
// headers of every request and the status of its answer.
type headerLog struct {
	URL  string
	mu   sync.Mutex
	reqs []loggedRequest
}

type loggedRequest struct {
	method, query, url string
	header             http.Header
	status             int
}

// statusWriter keeps the status of an answer.
type statusWriter struct {
	http.ResponseWriter
	status int
}

func (w *statusWriter) WriteHeader(code int) { w.status = code; w.ResponseWriter.WriteHeader(code) }

func newHeaderLog(t *testing.T, target string) *headerLog {
	t.Helper()
	u, err := url.Parse(target)
	if err != nil {
		t.Fatal(err)
	}
	l := &headerLog{}
	rp := httputil.NewSingleHostReverseProxy(u)
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		sw := &statusWriter{ResponseWriter: w, status: http.StatusOK}
		h := r.Header.Clone()
		rp.ServeHTTP(sw, r)
		l.mu.Lock()
		l.reqs = append(l.reqs, loggedRequest{method: r.Method, query: r.URL.RawQuery, url: r.URL.Path, header: h, status: sw.status})
		l.mu.Unlock()
	}))
	t.Cleanup(srv.Close)
	l.URL = srv.URL
	return l
}

// TestIntegrationS3ObjectLock (issue 22): on a versitygw bucket with
// Object Lock and a default retention (GOVERNANCE and COMPLIANCE), seen
// through a proxy that logs every request: each PutObject and UploadPart
// carries x-amz-checksum-crc32c and x-amz-sdk-checksum-algorithm, and
// versitygw accepts them; Check finds the Object Lock; the objects get
// s3.object.lock.mode's retention (GetObjectRetention); writing the same
// bytes again (one PutObject, and a multipart upload) is a conditional
// write versitygw refuses with 412 and leaves one version; other bytes
// are refused naming the object, and the stored version stays.
func TestIntegrationS3ObjectLock(t *testing.T) {
	srv := testbed.S3(t)
	for _, mode := range []types.ObjectLockRetentionMode{types.ObjectLockRetentionModeGovernance, types.ObjectLockRetentionModeCompliance} {
		t.Run(string(mode), func(t *testing.T) {
			bucket := srv.CreateLockedBucket(t, mode, 1)
			proxy := newHeaderLog(t, srv.Endpoint)
			st, err := s3store.NewS3(t.Context(), s3store.S3Config{Bucket: bucket, Region: srv.Region, Endpoint: proxy.URL, PathStyle: true,
				AccessKeyID: srv.AccessKey, SecretAccessKey: srv.SecretKey, PartSize: s3store.MinPartSize, SpoolDir: t.TempDir(),
				ObjectLockMode: string(mode), ObjectLockRetain: 2 * 24 * time.Hour}, nil)
			if err != nil {
				t.Fatal(err)
			}
			ctx := t.Context()
			if err := st.Check(ctx); err != nil || !st.WORM() {
				t.Fatalf("Check: %v, WORM %v", err, st.WORM())
			}
			small, big := []byte("hello, worm"), pattern(2*s3store.MinPartSize+99)
			for i := range 2 {
				if err := writeObject(ctx, st, "small", small); err != nil {
					t.Fatalf("write %d of small: %v", i, err)
				}
				if err := writeObject(ctx, st, "big", big); err != nil {
					t.Fatalf("write %d of big: %v", i, err)
				}
			}
			checkWire(t, proxy)
			cl := srv.Client()
			for _, key := range []string{"small", "big"} {
				vs, err := cl.ListObjectVersions(ctx, &s3.ListObjectVersionsInput{Bucket: &bucket, Prefix: aws.String(key)})
				if err != nil {
					t.Fatal(err)
				}
				if len(vs.Versions) != 1 {
					t.Errorf("%s: %d versions after writing the same bytes twice, want 1", key, len(vs.Versions))
				}
				r, err := cl.GetObjectRetention(ctx, &s3.GetObjectRetentionInput{Bucket: &bucket, Key: aws.String(key)})
				if err != nil {
					t.Fatalf("GetObjectRetention %s: %v", key, err)
				}
				until := aws.ToTime(r.Retention.RetainUntilDate)
				if r.Retention.Mode != types.ObjectLockRetentionMode(mode) || time.Until(until) < 47*time.Hour || time.Until(until) > 49*time.Hour {
					t.Errorf("%s: retention %s until %v, want %s about 2 days from now", key, r.Retention.Mode, until, mode)
				}
			}
			err = writeObject(ctx, st, "small", []byte("other bytes"))
			if !errors.Is(err, s3store.ErrRewrite) {
				t.Fatalf("other bytes: %v, want a refusal", err)
			}
			t.Logf("refusal: %v", err)
			got, err := cl.GetObject(ctx, &s3.GetObjectInput{Bucket: &bucket, Key: aws.String("small")})
			if err != nil {
				t.Fatal(err)
			}
			got.Body.Close()
			if aws.ToInt64(got.ContentLength) != int64(len(small)) {
				t.Errorf("small holds %d bytes after the refusal", aws.ToInt64(got.ContentLength))
			}
			waitNoUploads(t, cl, bucket)
		})
	}
}

// checkWire fails unless every PutObject and UploadPart the proxy saw
// carried the checksum headers Object Lock asks for and was accepted
// (200), and the second writes were conditional and refused with 412.
func checkWire(t *testing.T, proxy *headerLog) {
	t.Helper()
	proxy.mu.Lock()
	defer proxy.mu.Unlock()
	uploads, refused := 0, 0
	for _, r := range proxy.reqs {
		if r.header.Get("If-None-Match") == "*" && r.status == http.StatusPreconditionFailed {
			refused++
		}
		if r.method != http.MethodPut {
			continue
		}
		uploads++
		if r.header.Get("X-Amz-Checksum-Crc32c") == "" || r.header.Get("X-Amz-Sdk-Checksum-Algorithm") != "CRC32C" {
			t.Errorf("PUT ?%s without the checksum headers: %v", r.query, r.header)
		}
		if r.status != http.StatusOK && r.status != http.StatusPreconditionFailed {
			t.Errorf("PUT ?%s: status %d", r.query, r.status)
		}
	}
	if uploads < 6 || refused != 2 {
		t.Errorf("%d PUTs, %d conditional writes refused with 412; want at least 6 and 2", uploads, refused)
	}
}

// waitNoUploads fails if a multipart upload of bucket is left pending.
func waitNoUploads(t *testing.T, cl *s3.Client, bucket string) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	out, err := cl.ListMultipartUploads(ctx, &s3.ListMultipartUploadsInput{Bucket: &bucket})
	if err != nil || len(out.Uploads) != 0 {
		t.Errorf("pending uploads of %s: %v, %v", bucket, out, err)
	}
}

// TestIntegrationS3StorageClass (issue 22): versitygw accepts the
// storage class the store sends: every PutObject and
// CreateMultipartUpload carries x-amz-storage-class (STANDARD_IA, not an
// archive tier: the index object too), answered 200. versitygw's posix backend keeps no storage class (its
// HeadObject and listings say STANDARD), so the header on the wire is
// what this test can check; the hermetic tests check the listing's class.
func TestIntegrationS3StorageClass(t *testing.T) {
	srv := testbed.S3(t)
	proxy := newHeaderLog(t, srv.Endpoint)
	st, _ := versityStore(t, srv, func(c *s3store.S3Config) { c.StorageClass = "STANDARD_IA"; c.Endpoint = proxy.URL })
	ctx := t.Context()
	data := s3store.Data(ctx)
	if err := writeObject(data, st, "small", []byte("x")); err != nil {
		t.Fatal(err)
	}
	if err := writeObject(data, st, "big", pattern(s3store.MinPartSize+1)); err != nil {
		t.Fatal(err)
	}
	if err := writeObject(ctx, st, "index", []byte("{}")); err != nil {
		t.Fatal(err)
	}
	proxy.mu.Lock()
	defer proxy.mu.Unlock()
	creates := map[string]string{} // "PUT small", "POST big" -> class
	for _, r := range proxy.reqs {
		put := r.method == http.MethodPut && !strings.Contains(r.query, "uploadId")
		create := r.method == http.MethodPost && strings.Contains(r.query, "uploads")
		if !put && !create {
			continue
		}
		if r.status != http.StatusOK {
			t.Errorf("%s ?%s: status %d", r.method, r.query, r.status)
		}
		creates[r.method+" "+path.Base(r.url)] = r.header.Get("X-Amz-Storage-Class")
	}
	want := map[string]string{"PUT small": "STANDARD_IA", "POST big": "STANDARD_IA", "PUT index": "STANDARD_IA"}
	if !maps.Equal(creates, want) {
		t.Errorf("x-amz-storage-class of the writes %v, want %v", creates, want)
	}
}

// TestIntegrationS3ObjectLockNewVersion (issue 22): with
// s3.object.lock.rewrite new-version on a versitygw bucket with
// COMPLIANCE default retention, other bytes under a stored key become a
// second version (one PutObject, and a multipart upload), the first one
// kept; the same bytes again add none.
func TestIntegrationS3ObjectLockNewVersion(t *testing.T) {
	srv := testbed.S3(t)
	bucket := srv.CreateLockedBucket(t, types.ObjectLockRetentionModeCompliance, 1)
	st, err := s3store.NewS3(t.Context(), s3store.S3Config{Bucket: bucket, Region: srv.Region, Endpoint: srv.Endpoint, PathStyle: true,
		AccessKeyID: srv.AccessKey, SecretAccessKey: srv.SecretKey, PartSize: s3store.MinPartSize, SpoolDir: t.TempDir(), RewriteNewVersion: true}, nil)
	if err != nil {
		t.Fatal(err)
	}
	ctx := t.Context()
	if err := st.Check(ctx); err != nil || !st.WORM() {
		t.Fatalf("Check: %v, WORM %v", err, st.WORM())
	}
	cl := srv.Client()
	for key, data := range map[string][2][]byte{
		"small": {[]byte("first"), []byte("second")},
		"big":   {pattern(s3store.MinPartSize + 1), pattern(s3store.MinPartSize + 2)},
	} {
		for _, b := range [][]byte{data[0], data[1], data[1]} {
			if err := writeObject(ctx, st, key, b); err != nil {
				t.Fatalf("%s: %v", key, err)
			}
		}
		vs, err := cl.ListObjectVersions(ctx, &s3.ListObjectVersionsInput{Bucket: &bucket, Prefix: aws.String(key)})
		if err != nil {
			t.Fatal(err)
		}
		if len(vs.Versions) != 2 {
			t.Errorf("%s: %d versions, want 2 (the first write and the other bytes)", key, len(vs.Versions))
		}
		h, err := cl.HeadObject(ctx, &s3.HeadObjectInput{Bucket: &bucket, Key: aws.String(key)})
		if err != nil || aws.ToInt64(h.ContentLength) != int64(len(data[1])) {
			t.Errorf("%s: current version %v bytes (%v), want %d", key, aws.ToInt64(h.ContentLength), err, len(data[1]))
		}
	}
	waitNoUploads(t, cl, bucket)
}
