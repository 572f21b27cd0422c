package s3store_test

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"net/http"
	"os"
	"path/filepath"
	"runtime"
	"strings"
	"testing"
	"time"

	"github.com/kafkas3/kafkas3/internal/s3fake"
	"github.com/kafkas3/kafkas3/s3store"
	"github.com/kafkas3/kafkas3/s3store/storetest"
)

const (
	fakeAccessKey = "AKFAKEFAKEFAKE"
	fakeSecretKey = "fake-secret"
)

// bucketName derives a bucket name from the test's name.
func bucketName(t *testing.T) string {
	return strings.Trim(strings.Map(func(r rune) rune {
		if r >= 'a' && r <= 'z' || r >= '0' && r <= '9' {
			return r
		}
		if r >= 'A' && r <= 'Z' {
			return r + 'a' - 'A'
		}
		return '-'
	}, t.Name()), "-")
}

// fakeStore returns an S3 store on a fresh bucket of fake. After the test
// it checks that no multipart upload and no spool file was left behind.
func fakeStore(t *testing.T, fake *s3fake.Server, edit func(*s3store.S3Config)) (*s3store.S3, string) {
	t.Helper()
	bucket := bucketName(t)
	fake.CreateBucket(bucket)
	spool := t.TempDir()
	cfg := s3store.S3Config{
		Bucket:          bucket,
		Endpoint:        fake.URL,
		PathStyle:       true,
		AccessKeyID:     fakeAccessKey,
		SecretAccessKey: fakeSecretKey,
		PartSize:        s3store.MinPartSize,
		RetryBackoff:    time.Millisecond,
		SpoolDir:        spool,
	}
	if edit != nil {
		edit(&cfg)
	}
	st, err := s3store.NewS3(t.Context(), cfg, nil)
	if err != nil {
		t.Fatalf("NewS3: %v", err)
	}
	t.Cleanup(func() {
		if n := fake.PendingUploads(bucket); n != 0 {
			t.Errorf("%d multipart uploads left pending in %s", n, bucket)
		}
		if left, _ := os.ReadDir(spool); len(left) != 0 {
			t.Errorf("%d spool files left in %s", len(left), spool)
		}
	})
	return st, bucket
}

func newFake(t *testing.T) *s3fake.Server {
	fake := s3fake.New()
	t.Cleanup(fake.Close)
	return fake
}

func TestS3Conformance(t *testing.T) {
	fake := newFake(t)
	storetest.Run(t, func(t *testing.T) s3store.Store {
		st, _ := fakeStore(t, fake, nil)
		return st
	})
}

// TestS3ConformanceSyncUploads runs the suite with every part uploaded
// inside Write, and with 7-key list pages.
func TestS3ConformanceSyncUploads(t *testing.T) {
	fake := newFake(t)
	fake.SetMaxKeys(7)
	storetest.RunWith(t, storetest.Options{ManyObjects: 60}, func(t *testing.T) s3store.Store {
		st, _ := fakeStore(t, fake, func(c *s3store.S3Config) { c.BackgroundUploads = -1 })
		return st
	})
}

func writeObject(ctx context.Context, st s3store.Store, key string, data []byte) error {
	w, err := st.Create(ctx, key)
	if err != nil {
		return err
	}
	for off := 0; off < len(data); off += 1 << 20 {
		if _, err := w.Write(data[off:min(off+1<<20, len(data))]); err != nil {
			return err
		}
	}
	return w.Commit(ctx)
}

func pattern(n int) []byte {
	b := make([]byte, n)
	for i := range b {
		b[i] = byte(i*7 + i>>13)
	}
	return b
}

func TestS3RetrySucceedsAfterTransientErrors(t *testing.T) {
	for _, bg := range []int{0, -1} {
		t.Run(fmt.Sprintf("background=%d", bg), func(t *testing.T) {
			fake := newFake(t)
			st, bucket := fakeStore(t, fake, func(c *s3store.S3Config) { c.BackgroundUploads = bg })
			data := pattern(11 << 20) // three parts
			fake.FailNext(s3fake.OpCreateMultipartUpload, 1, http.StatusServiceUnavailable)
			fake.FailNext(s3fake.OpUploadPart, 2, http.StatusInternalServerError)
			fake.FailNext(s3fake.OpCompleteMultipartUpload, 1, http.StatusInternalServerError)
			if err := writeObject(t.Context(), st, "multi", data); err != nil {
				t.Fatalf("write with transient errors: %v", err)
			}
			if got, _ := fake.Object(bucket, "multi"); !bytes.Equal(got, data) {
				t.Fatalf("object has %d bytes, want %d identical bytes", len(got), len(data))
			}
			if n := fake.Count(s3fake.OpUploadPart); n != 3+2 {
				t.Errorf("UploadPart requests = %d, want 5 (3 parts + 2 retries)", n)
			}
			if n := fake.Count(s3fake.OpCreateMultipartUpload); n != 2 {
				t.Errorf("CreateMultipartUpload requests = %d, want 2", n)
			}
			if n := fake.Count(s3fake.OpCompleteMultipartUpload); n != 2 {
				t.Errorf("CompleteMultipartUpload requests = %d, want 2", n)
			}

			fake.FailNext(s3fake.OpPutObject, 2, http.StatusInternalServerError)
			small := pattern(1000)
			if err := writeObject(t.Context(), st, "small", small); err != nil {
				t.Fatalf("put with transient errors: %v", err)
			}
			if got, _ := fake.Object(bucket, "small"); !bytes.Equal(got, small) {
				t.Fatalf("small object differs")
			}
			if n := fake.Count(s3fake.OpPutObject); n != 3 {
				t.Errorf("PutObject requests = %d, want 3", n)
			}
		})
	}
}

func TestS3RetriesExhaustedAbortsUpload(t *testing.T) {
	for _, op := range []string{s3fake.OpUploadPart, s3fake.OpCompleteMultipartUpload, s3fake.OpCreateMultipartUpload} {
		for _, bg := range []int{0, -1} {
			t.Run(fmt.Sprintf("%s/background=%d", op, bg), func(t *testing.T) {
				fake := newFake(t)
				st, bucket := fakeStore(t, fake, func(c *s3store.S3Config) {
					c.PartRetries = 2
					c.BackgroundUploads = bg
				})
				fake.FailNext(op, 100, http.StatusInternalServerError)
				ctx := t.Context()
				w, err := st.Create(ctx, "doomed")
				if err != nil {
					t.Fatal(err)
				}
				data := pattern(11 << 20)
				var werr error
				for off := 0; off < len(data) && werr == nil; off += 1 << 20 {
					_, werr = w.Write(data[off:min(off+1<<20, len(data))])
				}
				err = werr
				if err == nil {
					err = w.Commit(ctx)
				} else if cerr := w.Commit(ctx); cerr == nil {
					t.Error("Commit after a failed Write succeeded")
				}
				if err == nil {
					t.Fatal("upload succeeded although every request failed")
				}
				if !strings.Contains(err.Error(), "after 3 attempts") || !strings.Contains(err.Error(), "s3://"+bucket+"/doomed") {
					t.Errorf("error %q should say 'after 3 attempts' and name the object", err)
				}
				if n := fake.Count(op); n != 3 {
					t.Errorf("%s requests = %d, want 3 (1 + s3.part.retries 2)", op, n)
				}
				if err := w.Abort(ctx); err != nil {
					t.Errorf("Abort after failure: %v", err)
				}
				if _, err := w.Write([]byte("x")); !errors.Is(err, s3store.ErrClosed) {
					t.Errorf("Write after failure = %v, want ErrClosed", err)
				}
				if keys := fake.Keys(bucket); len(keys) != 0 {
					t.Errorf("objects left: %v", keys)
				}
				wantAborts := 1
				if op == s3fake.OpCreateMultipartUpload {
					wantAborts = 0 // nothing was started
				}
				if n := fake.Count(s3fake.OpAbortMultipartUpload); n != wantAborts {
					t.Errorf("AbortMultipartUpload requests = %d, want %d", n, wantAborts)
				}
				// fakeStore's cleanup checks no upload is pending.
			})
		}
	}
}

func TestS3ClientErrorsAreNotRetried(t *testing.T) {
	fake := newFake(t)
	st, bucket := fakeStore(t, fake, nil)
	fake.FailNext(s3fake.OpPutObject, 1, http.StatusBadRequest)
	if err := writeObject(t.Context(), st, "bad", []byte("x")); err == nil {
		t.Fatal("put succeeded despite a 400")
	}
	if n := fake.Count(s3fake.OpPutObject); n != 1 {
		t.Errorf("PutObject requests = %d, want 1 (no retry on 400)", n)
	}
	fake.FailNext(s3fake.OpGetObject, 1, http.StatusForbidden)
	if _, err := st.Open(t.Context(), "bad"); !errors.Is(err, s3store.ErrAccessDenied) {
		t.Errorf("Open with 403 = %v, want ErrAccessDenied", err)
	}
	if n := fake.Count(s3fake.OpGetObject); n != 1 {
		t.Errorf("GetObject requests = %d, want 1 (no retry on 403)", n)
	}
	if len(fake.Keys(bucket)) != 0 {
		t.Errorf("objects left: %v", fake.Keys(bucket))
	}
}

func TestS3ReadsRetry(t *testing.T) {
	fake := newFake(t)
	st, _ := fakeStore(t, fake, nil)
	if err := writeObject(t.Context(), st, "k", []byte("value")); err != nil {
		t.Fatal(err)
	}
	fake.FailNext(s3fake.OpGetObject, 1, http.StatusServiceUnavailable)
	fake.FailNext(s3fake.OpHeadObject, 1, http.StatusInternalServerError)
	fake.FailNext(s3fake.OpListObjectsV2, 1, http.StatusBadGateway)
	r, err := st.Open(t.Context(), "k")
	if err != nil {
		t.Fatalf("Open: %v", err)
	}
	got, _ := io.ReadAll(r)
	r.Close()
	if string(got) != "value" {
		t.Errorf("Open = %q", got)
	}
	if info, err := st.Stat(t.Context(), "k"); err != nil || info.Size != 5 {
		t.Errorf("Stat = %+v, %v", info, err)
	}
	n := 0
	if err := st.List(t.Context(), "", func(s3store.ObjectInfo) error { n++; return nil }); err != nil || n != 1 {
		t.Errorf("List = %d objects, %v", n, err)
	}
}

func TestS3CancelDuringBackoff(t *testing.T) {
	fake := newFake(t)
	st, _ := fakeStore(t, fake, func(c *s3store.S3Config) { c.RetryBackoff = time.Hour })
	fake.FailNext(s3fake.OpPutObject, 100, http.StatusInternalServerError)
	ctx, cancel := context.WithTimeout(t.Context(), 100*time.Millisecond)
	defer cancel()
	start := time.Now()
	err := writeObject(ctx, st, "k", []byte("x"))
	if !errors.Is(err, context.DeadlineExceeded) {
		t.Errorf("error = %v, want the context's deadline", err)
	}
	// The first backoff is random in [0, 1h]; it must be cut short.
	if d := time.Since(start); d > 10*time.Second {
		t.Errorf("Commit took %v after the context ended", d)
	}
}

func TestS3AbortWithCancelledContext(t *testing.T) {
	fake := newFake(t)
	st, bucket := fakeStore(t, fake, nil)
	ctx, cancel := context.WithCancel(t.Context())
	w, err := st.Create(ctx, "k")
	if err != nil {
		t.Fatal(err)
	}
	if _, err := w.Write(pattern(6 << 20)); err != nil { // starts the multipart upload
		t.Fatal(err)
	}
	cancel() // shutdown
	if err := w.Abort(ctx); err != nil {
		t.Fatalf("Abort: %v", err)
	}
	if fake.Count(s3fake.OpCreateMultipartUpload) != 1 || fake.Count(s3fake.OpAbortMultipartUpload) != 1 {
		t.Errorf("create/abort requests = %d/%d, want 1/1",
			fake.Count(s3fake.OpCreateMultipartUpload), fake.Count(s3fake.OpAbortMultipartUpload))
	}
	if n := fake.PendingUploads(bucket); n != 0 {
		t.Errorf("%d uploads pending after Abort with a cancelled context", n)
	}
}

// TestS3SpoolsToDisk checks that written bytes go to the spool file, not to
// memory: below one part, the spool file holds all but the small buffer.
func TestS3SpoolsToDisk(t *testing.T) {
	fake := newFake(t)
	spool := t.TempDir()
	st, _ := fakeStore(t, fake, func(c *s3store.S3Config) { c.SpoolDir = spool })
	w, err := st.Create(t.Context(), "k")
	if err != nil {
		t.Fatal(err)
	}
	defer w.Abort(t.Context())
	const n = 3 << 20
	if _, err := w.Write(pattern(n)); err != nil {
		t.Fatal(err)
	}
	// The spool is unlinked at once (nothing is left if the process is
	// killed): the directory is empty, and the data sits in an open,
	// deleted file of this process.
	if left, _ := os.ReadDir(spool); len(left) != 0 {
		t.Fatalf("spool directory holds %d files; want none (unlinked spool)", len(left))
	}
	spools := openSpools(spool)
	if len(spools) != 1 {
		t.Fatalf("open unlinked spool files = %v, want one", spools)
	}
	fi, err := os.Stat(spools[0])
	if err != nil {
		t.Fatal(err)
	}
	if fi.Size() < n-64<<10 || fi.Size() > n {
		t.Errorf("spool file has %d bytes after writing %d; want all but a small buffer", fi.Size(), n)
	}
	if fake.Count(s3fake.OpCreateMultipartUpload)+fake.Count(s3fake.OpPutObject) != 0 {
		t.Error("upload started before a part was full")
	}
}

// openSpools lists this process's open, unlinked spool files in dir, as
// /proc/self/fd paths.
func openSpools(dir string) []string {
	var spools []string
	fds, _ := os.ReadDir("/proc/self/fd")
	for _, fd := range fds {
		p := filepath.Join("/proc/self/fd", fd.Name())
		if target, err := os.Readlink(p); err == nil && strings.HasPrefix(target, filepath.Join(dir, "kafkas3-spool-")) && strings.HasSuffix(target, "(deleted)") {
			spools = append(spools, p)
		}
	}
	return spools
}

// TestS3ReusesSpoolFiles: a finished object's spool file is kept and
// written over by the next object without truncation; the next object
// still stores exactly its own bytes (the stale tail is never sent), in
// one PutObject and in parts, and at most 8 idle spool files are kept.
func TestS3ReusesSpoolFiles(t *testing.T) {
	fake := newFake(t)
	spool := t.TempDir()
	st, bucket := fakeStore(t, fake, func(c *s3store.S3Config) { c.SpoolDir = spool })
	ctx := t.Context()
	put := func(key string, data []byte) {
		t.Helper()
		w, err := st.Create(ctx, key)
		if err != nil {
			t.Fatal(err)
		}
		if _, err := w.Write(data); err != nil {
			t.Fatal(err)
		}
		if key == "small" {
			// The spool is the big object's, written over: larger than
			// what this object wrote.
			spools := openSpools(spool)
			if len(spools) != 1 {
				t.Fatalf("open spool files while writing %s: %v, want the reused one", key, spools)
			}
			if fi, err := os.Stat(spools[0]); err != nil || fi.Size() < 4<<20 {
				t.Fatalf("spool of %s: %v, %v; want the 4 MiB file of the object before, reused", key, fi, err)
			}
		}
		if err := w.Commit(ctx); err != nil {
			t.Fatal(err)
		}
		if got, _ := fake.Object(bucket, key); !bytes.Equal(got, data) {
			t.Fatalf("%s: stored %d bytes, want its own %d", key, len(got), len(data))
		}
	}
	big := pattern(4 << 20)
	put("big", big)
	put("small", bytes.Repeat([]byte("s"), 1<<20))
	put("multipart", pattern(2*s3store.MinPartSize+3<<20)) // spare spools reused between parts
	put("small-again", []byte("tiny"))

	ws := make([]s3store.ObjectWriter, 12)
	for i := range ws {
		w, err := st.Create(ctx, fmt.Sprintf("open/%d", i))
		if err != nil {
			t.Fatal(err)
		}
		if _, err := w.Write([]byte("x")); err != nil {
			t.Fatal(err)
		}
		ws[i] = w
	}
	if n := len(openSpools(spool)); n != 12 {
		t.Fatalf("%d spool files for 12 open objects", n)
	}
	for _, w := range ws {
		if err := w.Abort(ctx); err != nil {
			t.Fatal(err)
		}
	}
	if n := len(openSpools(spool)); n != 8 {
		t.Fatalf("%d idle spool files after aborting 12 objects, want 8 kept", n)
	}
}

func TestS3CheckMissingBucket(t *testing.T) {
	fake := newFake(t)
	st, err := s3store.NewS3(t.Context(), s3store.S3Config{
		Bucket: "no-such-bucket", Endpoint: fake.URL, PathStyle: true,
		AccessKeyID: fakeAccessKey, SecretAccessKey: fakeSecretKey,
	}, nil)
	if err != nil {
		t.Fatal(err)
	}
	err = st.Check(t.Context())
	want := fmt.Sprintf("s3.bucket.name %q: bucket does not exist at %s", "no-such-bucket", fake.URL)
	if err == nil || !strings.HasPrefix(err.Error(), want) {
		t.Fatalf("Check = %v, want prefix %q", err, want)
	}
	if !errors.Is(err, s3store.ErrNotExist) {
		t.Errorf("Check error does not wrap ErrNotExist")
	}
	if n := fake.Count(s3fake.OpHeadBucket); n != 1 {
		t.Errorf("HeadBucket requests = %d, want 1 (404 is not retried)", n)
	}
	fake.CreateBucket("no-such-bucket")
	if err := st.Check(t.Context()); err != nil {
		t.Errorf("Check after creating the bucket: %v", err)
	}
}

func TestS3CheckAccessDenied(t *testing.T) {
	fake := newFake(t)
	fake.CreateBucket("locked")
	fake.DenyAccess(true)

	st, err := s3store.NewS3(t.Context(), s3store.S3Config{
		Bucket: "locked", Endpoint: fake.URL, PathStyle: true,
		AccessKeyID: fakeAccessKey, SecretAccessKey: fakeSecretKey,
	}, nil)
	if err != nil {
		t.Fatal(err)
	}
	err = st.Check(t.Context())
	want := fmt.Sprintf(`s3.bucket.name "locked": access denied at %s with credentials from aws.access.key.id %q`, fake.URL, fakeAccessKey)
	if err == nil || !strings.HasPrefix(err.Error(), want) {
		t.Fatalf("Check = %v, want prefix %q", err, want)
	}
	if !errors.Is(err, s3store.ErrAccessDenied) {
		t.Errorf("Check error does not wrap ErrAccessDenied")
	}

	// The default credential chain, fed from the environment only.
	t.Setenv("AWS_ACCESS_KEY_ID", "AKENVENVENV")
	t.Setenv("AWS_SECRET_ACCESS_KEY", "env-secret")
	t.Setenv("AWS_SESSION_TOKEN", "")
	t.Setenv("AWS_PROFILE", "")
	t.Setenv("AWS_CONFIG_FILE", filepath.Join(t.TempDir(), "none"))
	t.Setenv("AWS_SHARED_CREDENTIALS_FILE", filepath.Join(t.TempDir(), "none"))
	t.Setenv("AWS_EC2_METADATA_DISABLED", "true")
	st, err = s3store.NewS3(t.Context(), s3store.S3Config{Bucket: "locked", Endpoint: fake.URL, PathStyle: true}, nil)
	if err != nil {
		t.Fatal(err)
	}
	err = st.Check(t.Context())
	if err == nil || !strings.Contains(err.Error(), "default credential chain") || !strings.Contains(err.Error(), "AKENVENVENV") {
		t.Fatalf("Check = %v, want it to name the default chain and the access key", err)
	}
	fake.DenyAccess(false)
	if err := st.Check(t.Context()); err != nil {
		t.Errorf("Check with access: %v", err)
	}
}

// TestS3CheckUnknownKeyAs404 mimics a server (versitygw) that answers an
// unknown access key with 404: the body of a GET shows it is not a
// missing bucket.
func TestS3CheckUnknownKeyAs404(t *testing.T) {
	fake := newFake(t)
	fake.CreateBucket("b")
	st, err := s3store.NewS3(t.Context(), s3store.S3Config{
		Bucket: "b", Endpoint: fake.URL, PathStyle: true,
		AccessKeyID: fakeAccessKey, SecretAccessKey: fakeSecretKey,
	}, nil)
	if err != nil {
		t.Fatal(err)
	}
	fake.FailNextCode(s3fake.OpHeadBucket, 1, http.StatusNotFound, "XAdminUserNotFound")
	fake.FailNextCode(s3fake.OpListObjectsV2, 1, http.StatusNotFound, "XAdminUserNotFound")
	err = st.Check(t.Context())
	want := `s3.bucket.name "b": access denied (XAdminUserNotFound) at ` + fake.URL + ` with credentials from aws.access.key.id "` + fakeAccessKey + `"`
	if err == nil || !strings.HasPrefix(err.Error(), want) || !errors.Is(err, s3store.ErrAccessDenied) {
		t.Fatalf("Check = %v, want prefix %q", err, want)
	}
}

func TestS3ConfigValidation(t *testing.T) {
	good := s3store.S3Config{Bucket: "b", AccessKeyID: "a", SecretAccessKey: "s"}
	key32 := "MDEyMzQ1Njc4OWFiY2RlZjAxMjM0NTY3ODlhYmNkZWY=" // 32 bytes
	cases := []struct {
		name string
		edit func(*s3store.S3Config)
		want string
	}{
		{"no bucket", func(c *s3store.S3Config) { c.Bucket = "" }, "s3.bucket.name"},
		{"slash in bucket", func(c *s3store.S3Config) { c.Bucket = "a/b" }, "s3.bucket.name"},
		{"part too small", func(c *s3store.S3Config) { c.PartSize = 5<<20 - 1 }, "s3.part.size"},
		{"part too large", func(c *s3store.S3Config) { c.PartSize = 1 << 31 }, "s3.part.size"},
		{"bad url", func(c *s3store.S3Config) { c.Endpoint = "ftp://x" }, "store.url"},
		{"only key id", func(c *s3store.S3Config) { c.SecretAccessKey = "" }, "aws.secret.access.key"},
		{"bad sse", func(c *s3store.S3Config) { c.SSEAlgorithm = "rot13" }, "s3.ssea.name"},
		{"kms without kms", func(c *s3store.S3Config) { c.KMSKeyID = "k" }, "s3.sse.kms.key.id"},
		{"bad customer key", func(c *s3store.S3Config) { c.CustomerKey = "c2hvcnQ=" }, "s3.sse.customer.key"},
		{"customer key with kms", func(c *s3store.S3Config) { c.CustomerKey = key32; c.SSEAlgorithm = "aws:kms" }, "s3.sse.customer.key"},
		{"bad acl", func(c *s3store.S3Config) { c.CannedACL = "everyone" }, "s3.acl.canned"},
	}
	for _, c := range cases {
		cfg := good
		c.edit(&cfg)
		_, err := s3store.NewS3(t.Context(), cfg, nil)
		if err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("%s: error = %v, want one naming %s", c.name, err, c.want)
		}
	}

	cfg := good
	cfg.Endpoint = "minio.local:9000"
	cfg.SSEAlgorithm = "aws:kms"
	cfg.KMSKeyID = "key"
	cfg.CannedACL = "bucket-owner-full-control"
	st, err := s3store.NewS3(t.Context(), cfg, nil)
	if err != nil {
		t.Fatal(err)
	}
	got := st.Config()
	if got.Endpoint != "https://minio.local:9000" || got.Region != "us-west-2" || got.PartSize != 26214400 ||
		got.PartRetries != 3 || got.RetryBackoff != 200*time.Millisecond || got.BackgroundUploads != s3store.DefaultBackgroundUploads {
		t.Errorf("defaults not applied: %+v", got)
	}
	cfg = good
	cfg.PartRetries, cfg.RetryBackoff, cfg.CustomerKey, cfg.SSEAlgorithm = -1, -1, key32, "AES256"
	if st, err = s3store.NewS3(t.Context(), cfg, nil); err != nil {
		t.Fatal(err)
	}
	if got := st.Config(); got.PartRetries != 0 || got.RetryBackoff != 0 {
		t.Errorf("negative retries/backoff should mean none: %+v", got)
	}
}

// TestS3MemoryBoundedWithManyOpenObjects opens 200 objects at once and
// writes 512 KiB to each: the heap must grow by a small buffer per object,
// not by the bytes written (100 MiB), which sit in the spool files.
func TestS3MemoryBoundedWithManyOpenObjects(t *testing.T) {
	fake := newFake(t)
	st, _ := fakeStore(t, fake, nil)
	const objects, each = 200, 512 << 10
	chunk := pattern(64 << 10)
	runtime.GC()
	var before, after runtime.MemStats
	runtime.ReadMemStats(&before)
	ws := make([]s3store.ObjectWriter, objects)
	for i := range ws {
		w, err := st.Create(t.Context(), fmt.Sprintf("open/%03d", i))
		if err != nil {
			t.Fatal(err)
		}
		ws[i] = w
	}
	for range each / len(chunk) {
		for _, w := range ws {
			if _, err := w.Write(chunk); err != nil {
				t.Fatal(err)
			}
		}
	}
	runtime.GC()
	runtime.ReadMemStats(&after)
	grown := int64(after.HeapInuse) - int64(before.HeapInuse)
	t.Logf("heap grew %d KiB for %d open objects holding %d MiB", grown>>10, objects, objects*each>>20)
	if limit := int64(objects * 64 << 10); grown > limit {
		t.Errorf("heap grew %d bytes with %d open objects; want under %d (64 KiB per object)", grown, objects, limit)
	}
	for _, w := range ws {
		if err := w.Abort(t.Context()); err != nil {
			t.Fatal(err)
		}
	}
}

// TestS3CompleteResponseLost: the server completes the upload but the
// response is lost; the retry gets NoSuchUpload and Commit still succeeds
// because the object is there with the right size.
func TestS3CompleteResponseLost(t *testing.T) {
	fake := newFake(t)
	st, bucket := fakeStore(t, fake, nil)
	fake.FailNextAfter(s3fake.OpCompleteMultipartUpload, 1, http.StatusInternalServerError)
	data := pattern(6 << 20)
	if err := writeObject(t.Context(), st, "lost", data); err != nil {
		t.Fatalf("Commit with a lost Complete response: %v", err)
	}
	if n := fake.Count(s3fake.OpCompleteMultipartUpload); n != 2 {
		t.Errorf("CompleteMultipartUpload requests = %d, want 2", n)
	}
	if got, _ := fake.Object(bucket, "lost"); !bytes.Equal(got, data) {
		t.Errorf("object has %d bytes, want %d identical", len(got), len(data))
	}
	// A lost PutObject response is simply retried: same bytes again.
	fake.FailNextAfter(s3fake.OpPutObject, 1, http.StatusServiceUnavailable)
	if err := writeObject(t.Context(), st, "lost-small", []byte("abc")); err != nil {
		t.Fatalf("Commit with a lost PutObject response: %v", err)
	}
	if got, _ := fake.Object(bucket, "lost-small"); string(got) != "abc" {
		t.Errorf("object = %q", got)
	}
}

// TestS3EncryptionAndACLHeaders checks that SSE and ACL settings reach every
// request that needs them.
func TestS3EncryptionAndACLHeaders(t *testing.T) {
	const key32 = "MDEyMzQ1Njc4OWFiY2RlZjAxMjM0NTY3ODlhYmNkZWY=" // "0123456789abcdef" twice; MD5 checked with python
	t.Run("kms", func(t *testing.T) {
		fake := newFake(t)
		st, _ := fakeStore(t, fake, func(c *s3store.S3Config) {
			c.SSEAlgorithm, c.KMSKeyID, c.CannedACL = "aws:kms", "my-key", "bucket-owner-full-control"
		})
		if err := writeObject(t.Context(), st, "small", []byte("x")); err != nil {
			t.Fatal(err)
		}
		if err := writeObject(t.Context(), st, "big", pattern(6<<20)); err != nil {
			t.Fatal(err)
		}
		for _, op := range []string{s3fake.OpPutObject, s3fake.OpCreateMultipartUpload} {
			h := fake.Header(op)
			if h.Get("X-Amz-Server-Side-Encryption") != "aws:kms" || h.Get("X-Amz-Server-Side-Encryption-Aws-Kms-Key-Id") != "my-key" ||
				h.Get("X-Amz-Acl") != "bucket-owner-full-control" {
				t.Errorf("%s headers lack SSE-KMS or ACL: %v", op, h)
			}
		}
	})
	t.Run("sse-c", func(t *testing.T) {
		fake := newFake(t)
		st, _ := fakeStore(t, fake, func(c *s3store.S3Config) { c.SSEAlgorithm, c.CustomerKey = "AES256", key32 })
		if err := writeObject(t.Context(), st, "small", []byte("x")); err != nil {
			t.Fatal(err)
		}
		if err := writeObject(t.Context(), st, "big", pattern(6<<20)); err != nil {
			t.Fatal(err)
		}
		if _, err := st.Stat(t.Context(), "big"); err != nil {
			t.Fatal(err)
		}
		r, err := st.Open(t.Context(), "small")
		if err != nil {
			t.Fatal(err)
		}
		r.Close()
		for _, op := range []string{s3fake.OpPutObject, s3fake.OpCreateMultipartUpload, s3fake.OpUploadPart,
			s3fake.OpCompleteMultipartUpload, s3fake.OpHeadObject, s3fake.OpGetObject} {
			h := fake.Header(op)
			if h.Get("X-Amz-Server-Side-Encryption-Customer-Algorithm") != "AES256" ||
				h.Get("X-Amz-Server-Side-Encryption-Customer-Key") != key32 ||
				h.Get("X-Amz-Server-Side-Encryption-Customer-Key-Md5") != "hRasmdxgYDKV3nvbahU1MA==" {
				t.Errorf("%s headers lack SSE-C: %v", op, h)
			}
			if h.Get("X-Amz-Server-Side-Encryption") != "" {
				t.Errorf("%s sends x-amz-server-side-encryption with SSE-C", op)
			}
		}
	})
}
