package s3store_test

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"net/http"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/kafkas3/kafkas3/internal/s3fake"
	"github.com/kafkas3/kafkas3/s3store"
)

// wormStore is fakeStore on a bucket with Object Lock (default retention
// GOVERNANCE, 1 day) that Check has found.
func wormStore(t *testing.T, fake *s3fake.Server, edit func(*s3store.S3Config)) (*s3store.S3, string) {
	t.Helper()
	st, bucket := fakeStore(t, fake, edit)
	fake.SetObjectLock(bucket, "GOVERNANCE", 1)
	if err := st.Check(t.Context()); err != nil {
		t.Fatal(err)
	}
	if !st.WORM() {
		t.Fatal("Check did not find the bucket's Object Lock")
	}
	return st, bucket
}

// TestS3ChecksumHeadersForObjectLock: every PutObject and UploadPart
// carries the CRC32C of its body and x-amz-sdk-checksum-algorithm, the
// headers S3 Object Lock requires of an upload.
func TestS3ChecksumHeadersForObjectLock(t *testing.T) {
	fake := newFake(t)
	st, _ := fakeStore(t, fake, nil)
	ctx := t.Context()
	if err := writeObject(ctx, st, "small", []byte("hello")); err != nil {
		t.Fatal(err)
	}
	if err := writeObject(ctx, st, "big", pattern(2*s3store.MinPartSize+10)); err != nil {
		t.Fatal(err)
	}
	for _, op := range []string{s3fake.OpPutObject, s3fake.OpUploadPart} {
		hs := fake.Headers(op)
		if len(hs) == 0 {
			t.Fatalf("no %s", op)
		}
		for i, h := range hs {
			if h.Get("X-Amz-Checksum-Crc32c") == "" || h.Get("X-Amz-Sdk-Checksum-Algorithm") != "CRC32C" {
				t.Errorf("%s %d: x-amz-checksum-crc32c %q, x-amz-sdk-checksum-algorithm %q", op, i,
					h.Get("X-Amz-Checksum-Crc32c"), h.Get("X-Amz-Sdk-Checksum-Algorithm"))
			}
			if h.Get("X-Amz-Content-Sha256") != "UNSIGNED-PAYLOAD" {
				t.Errorf("%s %d: x-amz-content-sha256 %q: the SDK computed the body's hash", op, i, h.Get("X-Amz-Content-Sha256"))
			}
		}
	}
}

// TestS3StorageClassAndRetention: s3.storage.class goes on every object
// (PutObject and CreateMultipartUpload), an archive tier only on those
// created with s3store.Data (the index must stay readable);
// s3.object.lock.mode and retain.days on every object.
func TestS3StorageClassAndRetention(t *testing.T) {
	fake := newFake(t)
	st, bucket := fakeStore(t, fake, func(c *s3store.S3Config) {
		c.StorageClass = "STANDARD_IA"
		c.ObjectLockMode = "COMPLIANCE"
		c.ObjectLockRetain = 3 * 24 * time.Hour
	})
	ctx := t.Context()
	data := s3store.Data(ctx)
	if err := writeObject(data, st, "small", []byte("hello")); err != nil {
		t.Fatal(err)
	}
	if err := writeObject(data, st, "big", pattern(s3store.MinPartSize+10)); err != nil {
		t.Fatal(err)
	}
	if err := writeObject(ctx, st, "index", []byte("{}")); err != nil {
		t.Fatal(err)
	}
	for _, c := range []struct{ key, class string }{{"small", "STANDARD_IA"}, {"big", "STANDARD_IA"}, {"index", "STANDARD_IA"}} {
		class, mode, until := fake.StorageClass(bucket, c.key)
		if class != c.class || mode != "COMPLIANCE" {
			t.Errorf("%s: storage class %q, lock mode %q; want %q, COMPLIANCE", c.key, class, mode, c.class)
		}
		u, err := time.Parse(time.RFC3339, until)
		if d := time.Until(u); err != nil || d < 71*time.Hour || d > 73*time.Hour {
			t.Errorf("%s: retain until %q (%v), want about 3 days from now", c.key, until, err)
		}
	}
	var classes []string
	if err := st.List(ctx, "", func(o s3store.ObjectInfo) error { classes = append(classes, o.Key+"="+o.StorageClass); return nil }); err != nil {
		t.Fatal(err)
	}
	if got := strings.Join(classes, " "); got != "big=STANDARD_IA index=STANDARD_IA small=STANDARD_IA" {
		t.Errorf("listing: %s", got)
	}
	if !st.WORM() {
		t.Error("s3.object.lock.mode set, but the store does not write as on a WORM bucket")
	}
	// An archive tier goes on the data only.
	deep, bucket2 := fakeStore(t, fake, func(c *s3store.S3Config) { c.StorageClass = "DEEP_ARCHIVE" })
	if err := writeObject(data, deep, "cold", []byte("x")); err != nil {
		t.Fatal(err)
	}
	if err := writeObject(ctx, deep, "index", []byte("{}")); err != nil {
		t.Fatal(err)
	}
	if cold, _, _ := fake.StorageClass(bucket2, "cold"); cold != "DEEP_ARCHIVE" {
		t.Errorf("data object with DEEP_ARCHIVE: class %q", cold)
	}
	if idx, _, _ := fake.StorageClass(bucket2, "index"); idx != "" {
		t.Errorf("index object with DEEP_ARCHIVE: class %q, want the default (readable)", idx)
	}
}

// TestS3ObjectLockConfigValidation: the keys' errors name them.
func TestS3ObjectLockConfigValidation(t *testing.T) {
	for _, c := range []struct {
		edit func(*s3store.S3Config)
		want string
	}{
		{func(c *s3store.S3Config) { c.StorageClass = "COLD" }, "s3.storage.class \"COLD\""},
		{func(c *s3store.S3Config) { c.ObjectLockMode = "forever"; c.ObjectLockRetain = time.Hour }, "s3.object.lock.mode \"forever\""},
		{func(c *s3store.S3Config) { c.ObjectLockMode = "GOVERNANCE" }, "needs s3.object.lock.retain.days"},
		{func(c *s3store.S3Config) { c.ObjectLockRetain = time.Hour }, "s3.object.lock.retain.days: needs s3.object.lock.mode"},
	} {
		cfg := s3store.S3Config{Bucket: "b"}
		c.edit(&cfg)
		_, err := s3store.NewS3(context.Background(), cfg, nil)
		if err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("error %v, want one containing %q", err, c.want)
		}
	}
}

// TestS3WORMReplaySameBytesIsSkipped: on a WORM bucket, writing an
// object again with the same bytes (a replay) sends a conditional write,
// which S3 refuses, and succeeds without a new version, with the stored
// object's ETag; for one PutObject and for a multipart upload (FULL_OBJECT
// and COMPOSITE checksums), whose upload is aborted.
func TestS3WORMReplaySameBytesIsSkipped(t *testing.T) {
	for _, composite := range []bool{false, true} {
		fake := newFake(t)
		fake.RefuseFullObject(composite)
		st, bucket := wormStore(t, fake, nil)
		ctx := t.Context()
		for _, c := range []struct {
			key  string
			data []byte
		}{{"small", []byte("hello")}, {"big", pattern(2*s3store.MinPartSize + 7)}} {
			etag1 := writeETag(t, st, c.key, c.data)
			etag2 := writeETag(t, st, c.key, c.data)
			if etag1 == "" || etag1 != etag2 {
				t.Errorf("composite %v, %s: ETags %q then %q", composite, c.key, etag1, etag2)
			}
			got, _ := fake.Object(bucket, c.key)
			if !bytes.Equal(got, c.data) {
				t.Errorf("%s: stored bytes differ", c.key)
			}
		}
		for _, op := range []string{s3fake.OpPutObject, s3fake.OpCompleteMultipartUpload} {
			for i, h := range fake.Headers(op) {
				if h.Get("If-None-Match") != "*" {
					t.Errorf("%s %d: If-None-Match %q", op, i, h.Get("If-None-Match"))
				}
			}
		}
		if n := fake.Count(s3fake.OpAbortMultipartUpload); n != 1 {
			t.Errorf("composite %v: %d aborts, want 1 (the replay's upload)", composite, n)
		}
		_ = ctx
	}
}

// writeETag writes data at key and returns the ETag Commit gave.
func writeETag(t *testing.T, st s3store.Store, key string, data []byte) string {
	t.Helper()
	w, err := st.Create(t.Context(), key)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := w.Write(data); err != nil {
		t.Fatal(err)
	}
	if err := w.Commit(t.Context()); err != nil {
		t.Fatalf("%s: %v", key, err)
	}
	return w.(s3store.ETagger).ETag()
}

// TestS3WORMRewriteOtherBytesRefused: on a WORM bucket, other bytes
// under a stored key are refused with an error naming the object, and
// the stored object stays; a write with s3store.Replacing writes them.
func TestS3WORMRewriteOtherBytesRefused(t *testing.T) {
	fake := newFake(t)
	st, bucket := wormStore(t, fake, nil)
	ctx := t.Context()
	for _, c := range []struct {
		key       string
		old, next []byte
	}{{"a/small", []byte("hello"), []byte("hellO")}, {"a/big", pattern(s3store.MinPartSize + 7), pattern(s3store.MinPartSize + 8)}} {
		if err := writeObject(ctx, st, c.key, c.old); err != nil {
			t.Fatal(err)
		}
		err := writeObject(ctx, st, c.key, c.next)
		var re *s3store.RewriteError
		if !errors.As(err, &re) || !errors.Is(err, s3store.ErrRewrite) || !strings.Contains(err.Error(), "s3://"+bucket+"/"+c.key) {
			t.Fatalf("%s: error %v, want a RewriteError naming the object", c.key, err)
		}
		got, _ := fake.Object(bucket, c.key)
		if !bytes.Equal(got, c.old) {
			t.Errorf("%s: the stored object changed", c.key)
		}
		if err := writeObject(s3store.Replacing(ctx), st, c.key, c.next); err != nil {
			t.Fatalf("%s: replacing: %v", c.key, err)
		}
		if got, _ := fake.Object(bucket, c.key); !bytes.Equal(got, c.next) {
			t.Errorf("%s: Replacing did not write the new bytes", c.key)
		}
	}
}

// TestS3NoConditionWithoutObjectLock: without Object Lock nothing is
// conditional and a second write replaces the object.
func TestS3NoConditionWithoutObjectLock(t *testing.T) {
	fake := newFake(t)
	st, bucket := fakeStore(t, fake, nil)
	if err := st.Check(t.Context()); err != nil {
		t.Fatal(err)
	}
	if st.WORM() {
		t.Fatal("WORM without Object Lock")
	}
	for _, b := range []string{"one", "two"} {
		if err := writeObject(t.Context(), st, "k", []byte(b)); err != nil {
			t.Fatal(err)
		}
	}
	if got, _ := fake.Object(bucket, "k"); string(got) != "two" {
		t.Errorf("object %q", got)
	}
	if h := fake.Header(s3fake.OpPutObject); h.Get("If-None-Match") != "" {
		t.Errorf("If-None-Match %q without Object Lock", h.Get("If-None-Match"))
	}
}

// TestS3ArchiveTierStat: listings give the storage class; Stat tells a
// restored copy; reading an archive-tier object is refused.
func TestS3ArchiveTierStat(t *testing.T) {
	fake := newFake(t)
	st, bucket := fakeStore(t, fake, nil)
	ctx := t.Context()
	if err := writeObject(ctx, st, "k", []byte("x")); err != nil {
		t.Fatal(err)
	}
	fake.SetStorageClass(bucket, "k", "DEEP_ARCHIVE")
	info, err := st.Stat(ctx, "k")
	if err != nil || info.StorageClass != "DEEP_ARCHIVE" || info.Restored || !s3store.ArchiveTier(info.StorageClass) {
		t.Fatalf("stat %+v, %v", info, err)
	}
	if _, err := st.Open(ctx, "k"); err == nil {
		t.Fatal("read an archived object")
	}
	fake.SetRestored(bucket, "k", true)
	if info, err = st.Stat(ctx, "k"); err != nil || !info.Restored {
		t.Fatalf("stat after restore %+v, %v", info, err)
	}
	rc, err := st.Open(ctx, "k")
	if err != nil {
		t.Fatal(err)
	}
	b, _ := io.ReadAll(rc)
	rc.Close()
	if string(b) != "x" {
		t.Errorf("read %q", b)
	}
	for c, want := range map[string]bool{"GLACIER": true, "DEEP_ARCHIVE": true, "GLACIER_IR": false, "STANDARD_IA": false, "": false} {
		if s3store.ArchiveTier(c) != want {
			t.Errorf("ArchiveTier(%q) = %v", c, !want)
		}
	}
}

// TestS3WORMRewriteNewVersion: with s3.object.lock.rewrite new-version,
// other bytes under a stored key are written (a new version on S3), one
// PutObject after its conditional write found them, a multipart upload
// after a HEAD found them; the same bytes are still not written again.
func TestS3WORMRewriteNewVersion(t *testing.T) {
	fake := newFake(t)
	st, bucket := wormStore(t, fake, func(c *s3store.S3Config) { c.RewriteNewVersion = true })
	ctx := t.Context()
	for _, c := range []struct {
		key       string
		old, next []byte
	}{{"small", []byte("hello"), []byte("hellO")}, {"big", pattern(s3store.MinPartSize + 7), pattern(s3store.MinPartSize + 8)}} {
		for _, b := range [][]byte{c.old, c.next} {
			if err := writeObject(ctx, st, c.key, b); err != nil {
				t.Fatalf("%s: %v", c.key, err)
			}
			if got, _ := fake.Object(bucket, c.key); !bytes.Equal(got, b) {
				t.Errorf("%s: the stored bytes are not the last written", c.key)
			}
		}
	}
	puts, completes := fake.Count(s3fake.OpPutObject), fake.Count(s3fake.OpCompleteMultipartUpload)
	if err := writeObject(ctx, st, "small", []byte("hellO")); err != nil {
		t.Fatal(err)
	}
	if err := writeObject(ctx, st, "big", pattern(s3store.MinPartSize+8)); err != nil {
		t.Fatal(err)
	}
	if n := fake.Count(s3fake.OpCompleteMultipartUpload) - completes; n != 0 {
		t.Errorf("the same bytes again: %d multipart uploads completed, want none", n)
	}
	if n := fake.Count(s3fake.OpPutObject) - puts; n != 1 || fake.Header(s3fake.OpPutObject).Get("If-None-Match") != "*" {
		t.Errorf("the same bytes again: %d PutObjects (If-None-Match %q), want 1, conditional and refused",
			n, fake.Header(s3fake.OpPutObject).Get("If-None-Match"))
	}
}

// TestArchiveTierCheckNamesFirstTen: of many archived objects without a
// restored copy the error names the first ten in key order and counts
// them all; restored ones and other classes are not named, and only the
// archive-tier objects are asked (one HEAD each).
func TestArchiveTierCheckNamesFirstTen(t *testing.T) {
	fake := newFake(t)
	st, bucket := fakeStore(t, fake, nil)
	ctx := t.Context()
	var c s3store.ArchiveTierCheck
	for i := range 60 {
		key := fmt.Sprintf("k%03d", 59-i)
		if err := writeObject(ctx, st, key, []byte("x")); err != nil {
			t.Fatal(err)
		}
		switch {
		case i%3 == 0:
			fake.SetStorageClass(bucket, key, "GLACIER")
		case i%3 == 1:
			fake.SetStorageClass(bucket, key, "DEEP_ARCHIVE")
			fake.SetRestored(bucket, key, i%2 == 0)
		default:
			fake.SetStorageClass(bucket, key, "GLACIER_IR")
		}
	}
	if err := st.List(ctx, "", func(o s3store.ObjectInfo) error { c.Add(o); return nil }); err != nil {
		t.Fatal(err)
	}
	heads := fake.Count(s3fake.OpHeadObject)
	err := c.Check(ctx, st, 4)
	var ae *s3store.ArchivedError
	if !errors.As(err, &ae) || !errors.Is(err, s3store.ErrArchived) {
		t.Fatalf("error %v", err)
	}
	if n := fake.Count(s3fake.OpHeadObject) - heads; n != 40 {
		t.Errorf("%d HEADs, want 40 (the GLACIER and DEEP_ARCHIVE objects)", n)
	}
	// i%3==0: 20 GLACIER; i%3==1 with i odd: 10 DEEP_ARCHIVE not restored.
	if ae.Count != 30 || len(ae.Keys) != 10 || !slices.IsSorted(ae.Keys) || ae.Keys[0] != "k002 (GLACIER)" {
		t.Errorf("count %d, keys %v", ae.Count, ae.Keys)
	}
	if !strings.Contains(err.Error(), "and 20 more") {
		t.Errorf("error %v", err)
	}
}

// TestS3WORMConditionalConflictRetried: S3's 409
// ConditionalRequestConflict (a conditional write that met another write
// of the key) is retried; a retry after a lost answer (the object was
// stored) finds the same bytes and succeeds.
func TestS3WORMConditionalConflictRetried(t *testing.T) {
	fake := newFake(t)
	st, bucket := wormStore(t, fake, nil)
	fake.FailNextCode(s3fake.OpPutObject, 1, http.StatusConflict, "ConditionalRequestConflict")
	if err := writeObject(t.Context(), st, "k", []byte("v")); err != nil {
		t.Fatal(err)
	}
	fake.FailNextAfter(s3fake.OpPutObject, 1, http.StatusInternalServerError)
	if err := writeObject(t.Context(), st, "k2", []byte("v2")); err != nil {
		t.Fatal(err)
	}
	if got, _ := fake.Object(bucket, "k2"); string(got) != "v2" {
		t.Errorf("k2 holds %q", got)
	}
}
