package verify

import (
	"context"
	"fmt"
	"strings"
	"testing"

	"github.com/kafkas3/kafkas3/index"
	"github.com/kafkas3/kafkas3/s3store"
)

// etagOf returns the ETag the store lists for key.
func etagOf(t *testing.T, st s3store.Store, key string) string {
	t.Helper()
	info, err := st.Stat(context.Background(), key)
	if err != nil || info.ETag == "" {
		t.Fatalf("Stat(%q) = %+v, %v: want an ETag", key, info, err)
	}
	return info.ETag
}

// TestPlainVerifyProvesByETag: objects listed with the size and ETag their
// entries record are proven without a stored-checksum request (HEAD);
// an entry without an ETag, or with another one than the listing's (the
// same bytes written again), goes through the stored checksum and is no
// problem; an object replaced by other bytes of the same size has
// another ETag, and its stored checksum names it; --deep is unchanged.
func TestPlainVerifyProvesByETag(t *testing.T) {
	const p = "topics/e/partition=0/e+0+"
	const n = 10
	st := &countingStore{Memory: s3store.NewMemory()}
	key := func(i int) string { return fmt.Sprintf("%s%010d.json", p, i) }
	write := func(i int, body, etag string) {
		o := obj(key(i), "", body)
		o.ETag = etag
		archive(t, st, int64(i+1), entry("e", 0, key(i), int64(i), int64(i+1), []index.Run{{First: int64(i), Last: int64(i)}}, o))
	}
	for i := range n {
		body := fmt.Sprintf("%d\n", 10+i)
		put(t, st, key(i), body)
		etag := etagOf(t, st, key(i))
		switch i {
		case 3:
			etag = "" // an older archive's entry
		case 4:
			etag = "0123456789abcdef0123456789abcdef-2" // the same bytes, written with another part size
		}
		write(i, body, etag)
	}
	cfg := baseConfig()
	cfg.Deep = false
	rep := run(t, cfg, st)
	if !rep.Clean || rep.ETagsCompared != n-2 || rep.ChecksumsCompared != 2 || rep.NoChecksum != 0 {
		t.Fatalf("intact archive: problems %q, proven by ETag %d, by stored checksum %d, size only %d; want clean, %d, 2, 0",
			problemKinds(rep), rep.ETagsCompared, rep.ChecksumsCompared, rep.NoChecksum, n-2)
	}
	if got := st.calls.Load(); got != 2 {
		t.Errorf("%d stored-checksum requests, want 2 (the entries without the listed ETag)", got)
	}

	bad := key(6)
	put(t, st, bad, "17\n") // was "16\n": same size, another ETag
	st.calls.Store(0)
	rep = run(t, cfg, st)
	if got := problemKinds(rep); got != "checksum:"+bad || !strings.Contains(rep.Problems[0].Detail, "the store keeps CRC32C") {
		t.Fatalf("replaced object: problems %q (%v), want checksum:%s from the stored checksum", got, rep.Problems, bad)
	}
	if rep.ETagsCompared != n-3 || rep.ChecksumsCompared != 3 || st.calls.Load() != 3 {
		t.Errorf("replaced object: proven by ETag %d, by stored checksum %d, %d requests; want %d, 3, 3",
			rep.ETagsCompared, rep.ChecksumsCompared, st.calls.Load(), n-3)
	}
	cfg.Deep = true
	if rep := run(t, cfg, st); problemKinds(rep) != "checksum:"+bad || rep.ETagsCompared != 0 {
		t.Fatalf("deep: problems %q, proven by ETag %d", problemKinds(rep), rep.ETagsCompared)
	}
}

// TestPlainVerifyETagWithoutChecksummer: a store that lists ETags but
// keeps no checksum proves objects by ETag alone.
func TestPlainVerifyETagWithoutChecksummer(t *testing.T) {
	const key = "topics/e/partition=0/e+0+0000000000.json"
	mem := s3store.NewMemory()
	put(t, mem, key, "1\n")
	o := obj(key, "", "1\n")
	o.ETag = etagOf(t, mem, key)
	archive(t, mem, 1, entry("e", 0, key, 0, 1, []index.Run{{First: 0, Last: 0}}, o))
	cfg := baseConfig()
	cfg.Deep = false
	rep := run(t, cfg, noChecksums{mem})
	if !rep.Clean || rep.StoreChecksums || rep.ETagsCompared != 1 || rep.NoChecksum != 0 {
		t.Fatalf("problems %q, store checksums %v, proven by ETag %d, size only %d", problemKinds(rep), rep.StoreChecksums, rep.ETagsCompared, rep.NoChecksum)
	}
}

// noChecksums hides the memory store's stored checksums.
type noChecksums struct{ s3store.Store }

// TestOlderEntryMatchesByETag: of two entries of one key with the same
// size and other bytes, plain verification takes the one whose ETag the
// listing gives, with no stored-checksum request, as it takes the one
// whose CRC32C the store keeps; when the object is replaced by other
// bytes, the stored checksum names the live entry's problem as before.
func TestOlderEntryMatchesByETag(t *testing.T) {
	const key = "topics/o/partition=0/o+0+0000000000.json"
	st := &countingStore{Memory: s3store.NewMemory()}
	a, b := "1\n2\n", "3\n4\n"
	put(t, st, key, a)
	etagA := etagOf(t, st, key)
	put(t, st, key, b)
	oa, ob := obj(key, "", a), obj(key, "", b)
	oa.ETag, ob.ETag = etagA, etagOf(t, st, key)
	archive(t, st, 3, entry("o", 0, key, 0, 3, []index.Run{{First: 0, Last: 1}}, oa))
	archive(t, st, 2, entry("o", 0, key, 0, 2, []index.Run{{First: 0, Last: 1}}, ob))
	cfg := baseConfig()
	cfg.Deep = false
	rep := run(t, cfg, st)
	if !rep.Clean || rep.ETagsCompared != 1 || rep.ChecksumsCompared != 0 || st.calls.Load() != 0 {
		t.Fatalf("older entry by ETag: problems %s, proven by ETag %d, by stored checksum %d, %d requests",
			problemKinds(rep), rep.ETagsCompared, rep.ChecksumsCompared, st.calls.Load())
	}
	if len(rep.Partitions) != 1 || rep.Partitions[0].Commit != 2 {
		t.Errorf("partitions %+v: want the older entry's commit 2", rep.Partitions)
	}
	put(t, st, key, "5\n6\n")
	if rep := run(t, cfg, st); problemKinds(rep) != "checksum:"+key || !strings.Contains(rep.Problems[0].Detail, "the index says "+oa.CRC32C) {
		t.Fatalf("no match: %s %+v", problemKinds(rep), rep.Problems)
	}
}
