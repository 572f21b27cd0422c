//go:build integration

package s3store_test

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"strings"
	"testing"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/s3"
	"github.com/kafkas3/kafkas3/internal/testbed"
	"github.com/kafkas3/kafkas3/s3store"
	"github.com/kafkas3/kafkas3/s3store/storetest"
)

func TestMain(m *testing.M) { os.Exit(testbed.Main(m)) }

// versityStore returns an S3 store on a fresh versitygw bucket. After the
// test it checks, with a plain SDK client, that no multipart upload was
// left pending, and that no spool file was left.
func versityStore(t *testing.T, srv *testbed.S3Server, edit func(*s3store.S3Config)) (*s3store.S3, string) {
	t.Helper()
	bucket := srv.CreateBucket(t)
	spool := t.TempDir()
	cfg := s3store.S3Config{
		Bucket:          bucket,
		Region:          srv.Region,
		Endpoint:        srv.Endpoint,
		PathStyle:       true,
		AccessKeyID:     srv.AccessKey,
		SecretAccessKey: srv.SecretKey,
		PartSize:        s3store.MinPartSize,
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
		ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
		defer cancel()
		out, err := srv.Client().ListMultipartUploads(ctx, &s3.ListMultipartUploadsInput{Bucket: &bucket})
		if err != nil {
			t.Errorf("ListMultipartUploads(%s): %v", bucket, err)
		} else if len(out.Uploads) != 0 {
			t.Errorf("%d multipart uploads left pending in %s (first key %q)", len(out.Uploads), bucket, aws.ToString(out.Uploads[0].Key))
		}
		if left, _ := os.ReadDir(spool); len(left) != 0 {
			t.Errorf("%d spool files left in %s", len(left), spool)
		}
	})
	return st, bucket
}

func TestIntegrationS3Conformance(t *testing.T) {
	srv := testbed.S3(t)
	storetest.Run(t, func(t *testing.T) s3store.Store {
		st, _ := versityStore(t, srv, nil)
		return st
	})
}

// TestIntegrationS3Objects checks what the store wrote with a plain SDK
// client: sizes, bytes, and that a multipart object has several parts.
func TestIntegrationS3Objects(t *testing.T) {
	srv := testbed.S3(t)
	st, bucket := versityStore(t, srv, nil)
	data := pattern(11<<20 + 123)
	if err := writeObject(t.Context(), st, "topics/t/partition=0/t+0+0000000000.bin", data); err != nil {
		t.Fatal(err)
	}
	out, err := srv.Client().GetObject(t.Context(), &s3.GetObjectInput{Bucket: &bucket, Key: aws.String("topics/t/partition=0/t+0+0000000000.bin")})
	if err != nil {
		t.Fatalf("GetObject: %v", err)
	}
	got, err := io.ReadAll(out.Body)
	out.Body.Close()
	if err != nil || !bytes.Equal(got, data) {
		t.Fatalf("object read back with the SDK: %d bytes, err %v; want %d identical bytes", len(got), err, len(data))
	}
	if etag := aws.ToString(out.ETag); !strings.HasSuffix(strings.Trim(etag, `"`), "-3") {
		t.Errorf("ETag %s: want a 3-part multipart ETag", etag)
	}
}

func TestIntegrationS3Check(t *testing.T) {
	srv := testbed.S3(t)
	missing := fmt.Sprintf("kafkas3-missing-%d", time.Now().UnixNano())
	st, err := s3store.NewS3(t.Context(), s3store.S3Config{
		Bucket: missing, Region: srv.Region, Endpoint: srv.Endpoint, PathStyle: true,
		AccessKeyID: srv.AccessKey, SecretAccessKey: srv.SecretKey,
	}, nil)
	if err != nil {
		t.Fatal(err)
	}
	err = st.Check(t.Context())
	want := fmt.Sprintf("s3.bucket.name %q: bucket does not exist at %s", missing, srv.Endpoint)
	if err == nil || !strings.HasPrefix(err.Error(), want) || !errors.Is(err, s3store.ErrNotExist) {
		t.Errorf("Check on a missing bucket = %v, want prefix %q", err, want)
	}

	bucket := srv.CreateBucket(t)
	st, err = s3store.NewS3(t.Context(), s3store.S3Config{
		Bucket: bucket, Region: srv.Region, Endpoint: srv.Endpoint, PathStyle: true,
		AccessKeyID: "wrong-key", SecretAccessKey: "wrong-secret",
	}, nil)
	if err != nil {
		t.Fatal(err)
	}
	err = st.Check(t.Context())
	want = fmt.Sprintf(`s3.bucket.name %q: access denied`, bucket)
	want2 := fmt.Sprintf(`at %s with credentials from aws.access.key.id "wrong-key"`, srv.Endpoint)
	if err == nil || !strings.HasPrefix(err.Error(), want) || !strings.Contains(err.Error(), want2) || !errors.Is(err, s3store.ErrAccessDenied) {
		t.Errorf("Check with wrong credentials = %v, want prefix %q", err, want)
	}
}

// TestIntegrationS3ServerRestart stops versitygw in the middle of an upload
// and starts it again: the store's retries carry the object through.
func TestIntegrationS3ServerRestart(t *testing.T) {
	srv := testbed.S3(t)
	st, bucket := versityStore(t, srv, func(c *s3store.S3Config) {
		c.PartRetries = 12
		c.RetryBackoff = 100 * time.Millisecond
		c.BackgroundUploads = -1
	})
	ctx := t.Context()
	w, err := st.Create(ctx, "restart.bin")
	if err != nil {
		t.Fatal(err)
	}
	data := pattern(12 << 20)
	if _, err := w.Write(data[:6<<20]); err != nil { // part 1 uploaded
		t.Fatal(err)
	}
	if err := srv.Stop(); err != nil {
		t.Fatalf("Stop: %v", err)
	}
	restarted := make(chan error, 1)
	go func() {
		time.Sleep(time.Second)
		restarted <- srv.Start()
	}()
	if _, err := w.Write(data[6<<20:]); err != nil { // part 2 while the server is down
		_ = w.Abort(ctx)
		t.Fatalf("Write across a restart: %v", err)
	}
	if err := <-restarted; err != nil {
		t.Fatalf("Start: %v", err)
	}
	if err := w.Commit(ctx); err != nil {
		t.Fatalf("Commit after restart: %v", err)
	}
	out, err := srv.Client().GetObject(ctx, &s3.GetObjectInput{Bucket: &bucket, Key: aws.String("restart.bin")})
	if err != nil {
		t.Fatal(err)
	}
	got, _ := io.ReadAll(out.Body)
	out.Body.Close()
	if !bytes.Equal(got, data) {
		t.Errorf("object after restart: %d bytes, want %d identical", len(got), len(data))
	}
}

// TestIntegrationS3CorruptedBodyIsRefused: versitygw verifies the CRC32C
// the store sends with each unsigned body (PutObject and every part), so
// a body corrupted on the way is refused, not stored; with one corrupted
// body the retry stores the exact bytes.
func TestIntegrationS3CorruptedBodyIsRefused(t *testing.T) {
	srv := testbed.S3(t)
	for _, size := range []int{1000, 2*s3store.MinPartSize + 77} {
		for _, bad := range []int{-1, 1} {
			c := newCorruptor(t, srv.Endpoint, bad)
			st, bucket := versityStore(t, srv, func(cfg *s3store.S3Config) {
				cfg.Endpoint = c.URL
				cfg.RetryBackoff = time.Millisecond
			})
			data := pattern(size)
			err := writeObject(t.Context(), st, "k", data)
			corrupted, unsigned, withCRC := c.counts()
			if corrupted == 0 || unsigned == 0 || unsigned != withCRC {
				t.Fatalf("size %d: %d bodies corrupted, %d unsigned, %d with CRC32C", size, corrupted, unsigned, withCRC)
			}
			out, gerr := srv.Client().GetObject(t.Context(), &s3.GetObjectInput{Bucket: &bucket, Key: aws.String("k")})
			var got []byte
			if gerr == nil {
				got, gerr = io.ReadAll(out.Body)
				out.Body.Close()
			}
			if bad < 0 {
				if err == nil {
					t.Fatalf("size %d: write with every body corrupted succeeded", size)
				}
				if gerr == nil {
					t.Errorf("size %d: a corrupted object was stored (%d bytes)", size, len(got))
				}
				continue
			}
			if err != nil {
				t.Fatalf("size %d: write with one corrupted body (retried) = %v", size, err)
			}
			if gerr != nil || !bytes.Equal(got, data) {
				t.Errorf("size %d: read back %d bytes (err %v), want the %d bytes written", size, len(got), gerr, len(data))
			}
		}
	}
}

// TestIntegrationS3Tagging tags a single-part and a multipart object on
// versitygw and reads the tags back with a plain SDK client
// (GetObjectTagging).
func TestIntegrationS3Tagging(t *testing.T) {
	srv := testbed.S3(t)
	st, bucket := versityStore(t, srv, nil)
	for key, size := range map[string]int{"small": 3, "big": 11 << 20} {
		if err := writeObject(t.Context(), st, key, pattern(size)); err != nil {
			t.Fatal(err)
		}
		want := map[string]string{"startOffset": "7", "endOffset": "19", "recordCount": "13", "team": "data"}
		if err := st.Tag(t.Context(), key, want); err != nil {
			t.Fatalf("tag %s: %v", key, err)
		}
		out, err := srv.Client().GetObjectTagging(t.Context(), &s3.GetObjectTaggingInput{Bucket: &bucket, Key: aws.String(key)})
		if err != nil {
			t.Fatalf("GetObjectTagging(%s): %v", key, err)
		}
		got := map[string]string{}
		for _, tag := range out.TagSet {
			got[aws.ToString(tag.Key)] = aws.ToString(tag.Value)
		}
		if fmt.Sprint(got) != fmt.Sprint(want) {
			t.Errorf("%s: tags %v, want %v", key, got, want)
		}
	}
}

// TestIntegrationS3ETag: versitygw's listing gives each object the ETag
// its PutObject or CompleteMultipartUpload answered (what the sink
// records in the archive index and plain verify compares), in S3's MD5
// forms, and a rewrite of the same bytes gets the same ETag.
func TestIntegrationS3ETag(t *testing.T) {
	srv := testbed.S3(t)
	st, _ := versityStore(t, srv, nil)
	objects := map[string][]byte{"e/small": pattern(1000), "e/multipart": pattern(11 << 20)}
	written := map[string]string{}
	for key, data := range objects {
		got := commitETag(t, st, key, data)
		if want := wantETag(data, s3store.MinPartSize); got != want {
			t.Errorf("writer ETag of %q = %q, want %q", key, got, want)
		}
		if again := commitETag(t, st, key, data); again != got {
			t.Errorf("ETag of %q rewritten with the same bytes = %q, was %q", key, again, got)
		}
		written[key] = got
	}
	listed := listETags(t, st, "e/")
	for key, etag := range written {
		if listed[key] != etag {
			t.Errorf("listed ETag of %q = %q, the writer gave %q", key, listed[key], etag)
		}
	}
}
