package s3store_test

import (
	"context"
	"crypto/md5"
	"encoding/hex"
	"fmt"
	"net/http"
	"testing"

	"github.com/kafkas3/kafkas3/internal/s3fake"
	"github.com/kafkas3/kafkas3/s3store"
)

// wantETag is S3's ETag of data written in parts of partSize bytes: the
// hex MD5 of the bytes for one PutObject (parts 0), else the hex MD5 of
// the parts' MD5s and "-<parts>".
func wantETag(data []byte, partSize int) string {
	if len(data) < partSize {
		sum := md5.Sum(data)
		return hex.EncodeToString(sum[:])
	}
	var sums []byte
	n := 0
	for off := 0; off < len(data); off += partSize {
		sum := md5.Sum(data[off:min(off+partSize, len(data))])
		sums = append(sums, sum[:]...)
		n++
	}
	sum := md5.Sum(sums)
	return fmt.Sprintf("%s-%d", hex.EncodeToString(sum[:]), n)
}

// commitETag writes data at key and returns the committed writer's ETag.
func commitETag(t *testing.T, st s3store.Store, key string, data []byte) string {
	t.Helper()
	ctx := t.Context()
	w, err := st.Create(ctx, key)
	if err != nil {
		t.Fatal(err)
	}
	for off := 0; off < len(data); off += 1 << 20 {
		if _, err := w.Write(data[off:min(off+1<<20, len(data))]); err != nil {
			t.Fatal(err)
		}
	}
	if err := w.Commit(ctx); err != nil {
		t.Fatalf("Commit(%q): %v", key, err)
	}
	et, ok := w.(s3store.ETagger)
	if !ok {
		t.Fatalf("the S3 writer is no s3store.ETagger")
	}
	return et.ETag()
}

// listETags returns the ETags List gives, by key.
func listETags(t *testing.T, st s3store.Store, prefix string) map[string]string {
	t.Helper()
	out := map[string]string{}
	err := st.List(t.Context(), prefix, func(info s3store.ObjectInfo) error {
		out[info.Key] = info.ETag
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	return out
}

// TestS3ETag: the S3 writer's ETag is the PutObject's (one request) or the
// CompleteMultipartUpload's (multipart), S3's MD5 forms, and List, ListAfter
// and Stat give the same, without quotes.
func TestS3ETag(t *testing.T) {
	fake := newFake(t)
	st, _ := fakeStore(t, fake, nil)
	objects := map[string][]byte{
		"e/small":     pattern(1000),
		"e/multipart": pattern(11 << 20), // 3 parts of 5 MiB
	}
	written := map[string]string{}
	for key, data := range objects {
		got := commitETag(t, st, key, data)
		if want := wantETag(data, s3store.MinPartSize); got != want {
			t.Errorf("writer ETag of %q = %q, want %q", key, got, want)
		}
		written[key] = got
		info, err := st.Stat(t.Context(), key)
		if err != nil || info.ETag != got {
			t.Errorf("Stat(%q) = ETag %q, %v; want %q", key, info.ETag, err, got)
		}
	}
	for key, etag := range listETags(t, st, "e/") {
		if etag != written[key] {
			t.Errorf("List: %q has ETag %q, the writer gave %q", key, etag, written[key])
		}
	}
	err := st.ListAfter(t.Context(), "e/", "e/multipart", func(info s3store.ObjectInfo) error {
		if info.ETag != written[info.Key] {
			t.Errorf("ListAfter: %q has ETag %q, the writer gave %q", info.Key, info.ETag, written[info.Key])
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
}

// TestS3ETagCompleteResponseLost: when an earlier attempt completed the
// upload and its response was lost, the writer's ETag is the HeadObject's,
// the one the listing gives.
func TestS3ETagCompleteResponseLost(t *testing.T) {
	fake := newFake(t)
	st, _ := fakeStore(t, fake, nil)
	fake.FailNextAfter(s3fake.OpCompleteMultipartUpload, 1, http.StatusInternalServerError)
	data := pattern(6 << 20)
	got := commitETag(t, st, "lost", data)
	if n := fake.Count(s3fake.OpCompleteMultipartUpload); n != 2 {
		t.Fatalf("CompleteMultipartUpload requests = %d, want 2", n)
	}
	if want := wantETag(data, s3store.MinPartSize); got != want {
		t.Errorf("writer ETag = %q, want %q", got, want)
	}
	if listed := listETags(t, st, "lost")["lost"]; listed != got {
		t.Errorf("listed ETag %q, the writer gave %q", listed, got)
	}
}

// TestMemoryETag: the memory store's ETag is the hex MD5 of the bytes,
// from the writer, Stat and List alike, and "" before Commit.
func TestMemoryETag(t *testing.T) {
	st := s3store.NewMemory()
	w, err := st.Create(context.Background(), "k")
	if err != nil {
		t.Fatal(err)
	}
	et := w.(s3store.ETagger)
	if _, err := w.Write([]byte("hello")); err != nil {
		t.Fatal(err)
	}
	if got := et.ETag(); got != "" {
		t.Errorf("ETag before Commit = %q, want none", got)
	}
	if err := w.Commit(t.Context()); err != nil {
		t.Fatal(err)
	}
	want := wantETag([]byte("hello"), 1<<20)
	if got := et.ETag(); got != want {
		t.Errorf("writer ETag = %q, want %q", got, want)
	}
	if info, _ := st.Stat(t.Context(), "k"); info.ETag != want {
		t.Errorf("Stat ETag = %q, want %q", info.ETag, want)
	}
	if got := listETags(t, st, "")["k"]; got != want {
		t.Errorf("List ETag = %q, want %q", got, want)
	}
}
