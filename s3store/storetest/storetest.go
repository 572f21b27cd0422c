package storetest

import (
	"bytes"
	"crypto/sha256"
	"encoding/base64"
	"encoding/binary"
	"errors"
	"fmt"
	"hash/crc32"
	"io"
	"math/rand/v2"
	"slices"
	"sort"
	"strings"
	"sync"
	"testing"

	"github.com/kafkas3/kafkas3/s3store"
)

// Options tunes the costly parts of the suite. Zero fields take defaults.
type Options struct {
	// ManyObjects is the object count of the listing test; the default
	// 1100 passes S3's 1000-key page size, so pagination is exercised.
	ManyObjects int
	// LargeObjectSize is the size of the large object test; the default
	// 11 MiB spans three parts of 5 MiB.
	LargeObjectSize int
}

// Run runs the suite with default Options. newStore must return an empty
// store each time it is called.
func Run(t *testing.T, newStore func(t *testing.T) s3store.Store) {
	RunWith(t, Options{}, newStore)
}

// RunWith runs the suite with opts.
func RunWith(t *testing.T, opts Options, newStore func(t *testing.T) s3store.Store) {
	if opts.ManyObjects <= 0 {
		opts.ManyObjects = 1100
	}
	if opts.LargeObjectSize <= 0 {
		opts.LargeObjectSize = 11 << 20
	}
	tests := []struct {
		name string
		fn   func(t *testing.T, st s3store.Store)
	}{
		{"Check", testCheck},
		{"CommitMakesVisible", testCommitMakesVisible},
		{"AbortLeavesNothing", testAbortLeavesNothing},
		{"WriterClosedAfterCommit", testWriterClosedAfterCommit},
		{"Overwrite", testOverwrite},
		{"Missing", testMissing},
		{"ListPrefixAndOrder", testListPrefixAndOrder},
		{"ListStopsOnError", testListStopsOnError},
		{"ListAfter", testListAfter},
		{"ManyObjects", func(t *testing.T, st s3store.Store) { testManyObjects(t, st, opts.ManyObjects) }},
		{"LargeObject", func(t *testing.T, st s3store.Store) { testLargeObject(t, st, opts.LargeObjectSize) }},
		{"LargeObjectAbort", func(t *testing.T, st s3store.Store) { testLargeObjectAbort(t, st, opts.LargeObjectSize) }},
		{"ETag", func(t *testing.T, st s3store.Store) { testETag(t, st, opts.LargeObjectSize) }},
		{"EmptyObject", testEmptyObject},
		{"SmallWrites", testSmallWrites},
		{"ConcurrentWriters", testConcurrentWriters},
		{"SpecialKeys", testSpecialKeys},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			tc.fn(t, newStore(t))
		})
	}
}

// put writes and commits one object.
func put(t *testing.T, st s3store.Store, key string, data []byte) {
	t.Helper()
	ctx := t.Context()
	w, err := st.Create(ctx, key)
	if err != nil {
		t.Fatalf("Create(%q): %v", key, err)
	}
	if _, err := w.Write(data); err != nil {
		_ = w.Abort(ctx)
		t.Fatalf("Write(%q): %v", key, err)
	}
	if err := w.Commit(ctx); err != nil {
		t.Fatalf("Commit(%q): %v", key, err)
	}
}

// read returns an object's bytes via Open.
func read(t *testing.T, st s3store.Store, key string) []byte {
	t.Helper()
	r, err := st.Open(t.Context(), key)
	if err != nil {
		t.Fatalf("Open(%q): %v", key, err)
	}
	defer r.Close()
	data, err := io.ReadAll(r)
	if err != nil {
		t.Fatalf("reading %q: %v", key, err)
	}
	return data
}

// list returns the keys under prefix and checks each reported size
// against Stat.
func list(t *testing.T, st s3store.Store, prefix string) []s3store.ObjectInfo {
	t.Helper()
	var infos []s3store.ObjectInfo
	err := st.List(t.Context(), prefix, func(info s3store.ObjectInfo) error {
		infos = append(infos, info)
		return nil
	})
	if err != nil {
		t.Fatalf("List(%q): %v", prefix, err)
	}
	return infos
}

func keys(infos []s3store.ObjectInfo) []string {
	out := make([]string, len(infos))
	for i, info := range infos {
		out[i] = info.Key
	}
	return out
}

func wantMissing(t *testing.T, st s3store.Store, key string) {
	t.Helper()
	if _, err := st.Stat(t.Context(), key); !errors.Is(err, s3store.ErrNotExist) {
		t.Errorf("Stat(%q) error = %v, want ErrNotExist", key, err)
	}
	if r, err := st.Open(t.Context(), key); !errors.Is(err, s3store.ErrNotExist) {
		if err == nil {
			_ = r.Close()
		}
		t.Errorf("Open(%q) error = %v, want ErrNotExist", key, err)
	}
	if cs, ok := st.(s3store.Checksummer); ok {
		if _, _, err := cs.StoredCRC32C(t.Context(), key); !errors.Is(err, s3store.ErrNotExist) {
			t.Errorf("StoredCRC32C(%q) error = %v, want ErrNotExist", key, err)
		}
	}
}

func wantObject(t *testing.T, st s3store.Store, key string, want []byte) {
	t.Helper()
	info, err := st.Stat(t.Context(), key)
	if err != nil {
		t.Fatalf("Stat(%q): %v", key, err)
	}
	if info.Key != key || info.Size != int64(len(want)) {
		t.Errorf("Stat(%q) = key %q size %d, want size %d", key, info.Key, info.Size, len(want))
	}
	if info.ModTime.IsZero() {
		t.Errorf("Stat(%q): zero ModTime", key)
	}
	got := read(t, st, key)
	if !bytes.Equal(got, want) {
		t.Errorf("Open(%q) = %d bytes (sha256 %x), want %d bytes (sha256 %x)",
			key, len(got), sha256.Sum256(got), len(want), sha256.Sum256(want))
	}
	wantCRC32C(t, st, key, want)
}

// wantCRC32C checks that a store that keeps checksums (s3store.Checksummer)
// keeps the whole object's CRC32C, whether it was stored with one request
// or as a multipart upload.
func wantCRC32C(t *testing.T, st s3store.Store, key string, want []byte) {
	t.Helper()
	cs, ok := st.(s3store.Checksummer)
	if !ok {
		return
	}
	crc := base64.StdEncoding.EncodeToString(binary.BigEndian.AppendUint32(nil, crc32.Checksum(want, crc32.MakeTable(crc32.Castagnoli))))
	got, has, err := cs.StoredCRC32C(t.Context(), key)
	if err != nil || !has || got != crc {
		t.Errorf("StoredCRC32C(%q) = %q, %v, %v; want %q, the CRC32C of its %d bytes", key, got, has, err, crc, len(want))
	}
}

// payload returns n deterministic pseudo-random bytes.
func payload(seed uint64, n int) []byte {
	r := rand.New(rand.NewPCG(seed, seed^0x9e3779b97f4a7c15))
	b := make([]byte, n)
	for i := range b {
		b[i] = byte(r.Uint32())
	}
	return b
}

func testCheck(t *testing.T, st s3store.Store) {
	if err := st.Check(t.Context()); err != nil {
		t.Fatalf("Check: %v", err)
	}
}

func testCommitMakesVisible(t *testing.T, st s3store.Store) {
	ctx := t.Context()
	key := "topics/t/partition=0/t+0+0000000000.json"
	w, err := st.Create(ctx, key)
	if err != nil {
		t.Fatalf("Create: %v", err)
	}
	data := []byte("hello, object\n")
	if n, err := w.Write(data); err != nil || n != len(data) {
		t.Fatalf("Write = %d, %v", n, err)
	}
	// Not visible before Commit.
	wantMissing(t, st, key)
	if got := list(t, st, ""); len(got) != 0 {
		t.Errorf("List before Commit = %v, want nothing", keys(got))
	}
	if err := w.Commit(ctx); err != nil {
		t.Fatalf("Commit: %v", err)
	}
	wantObject(t, st, key, data)
	got := list(t, st, "")
	if !slices.Equal(keys(got), []string{key}) {
		t.Fatalf("List = %v, want [%s]", keys(got), key)
	}
	if got[0].Size != int64(len(data)) {
		t.Errorf("List size = %d, want %d", got[0].Size, len(data))
	}
}

func testAbortLeavesNothing(t *testing.T, st s3store.Store) {
	ctx := t.Context()
	key := "dir/aborted.bin"
	w, err := st.Create(ctx, key)
	if err != nil {
		t.Fatalf("Create: %v", err)
	}
	if _, err := w.Write(payload(1, 1000)); err != nil {
		t.Fatalf("Write: %v", err)
	}
	if err := w.Abort(ctx); err != nil {
		t.Fatalf("Abort: %v", err)
	}
	wantMissing(t, st, key)
	if got := list(t, st, ""); len(got) != 0 {
		t.Errorf("List after Abort = %v, want nothing", keys(got))
	}
	if err := w.Abort(ctx); err != nil {
		t.Errorf("second Abort: %v", err)
	}
	if _, err := w.Write([]byte("x")); err == nil {
		t.Error("Write after Abort succeeded")
	}
	if err := w.Commit(ctx); err == nil {
		t.Error("Commit after Abort succeeded")
	}
	wantMissing(t, st, key)
	if got := list(t, st, ""); len(got) != 0 {
		t.Errorf("List after Commit-after-Abort = %v, want nothing", keys(got))
	}
}

func testWriterClosedAfterCommit(t *testing.T, st s3store.Store) {
	ctx := t.Context()
	key := "closed"
	w, err := st.Create(ctx, key)
	if err != nil {
		t.Fatalf("Create: %v", err)
	}
	if _, err := w.Write([]byte("data")); err != nil {
		t.Fatalf("Write: %v", err)
	}
	if err := w.Commit(ctx); err != nil {
		t.Fatalf("Commit: %v", err)
	}
	if _, err := w.Write([]byte("more")); !errors.Is(err, s3store.ErrClosed) {
		t.Errorf("Write after Commit error = %v, want ErrClosed", err)
	}
	if err := w.Commit(ctx); !errors.Is(err, s3store.ErrClosed) {
		t.Errorf("second Commit error = %v, want ErrClosed", err)
	}
	if err := w.Abort(ctx); err != nil {
		t.Errorf("Abort after Commit: %v", err)
	}
	wantObject(t, st, key, []byte("data"))
}

func testOverwrite(t *testing.T, st s3store.Store) {
	ctx := t.Context()
	key := "a/over"
	put(t, st, key, []byte("version one"))
	w, err := st.Create(ctx, key)
	if err != nil {
		t.Fatalf("Create: %v", err)
	}
	v2 := []byte("v2")
	if _, err := w.Write(v2); err != nil {
		t.Fatalf("Write: %v", err)
	}
	wantObject(t, st, key, []byte("version one"))
	if err := w.Commit(ctx); err != nil {
		t.Fatalf("Commit: %v", err)
	}
	wantObject(t, st, key, v2)

	// An aborted rewrite keeps the old object.
	w, err = st.Create(ctx, key)
	if err != nil {
		t.Fatalf("Create: %v", err)
	}
	if _, err := w.Write([]byte("never")); err != nil {
		t.Fatalf("Write: %v", err)
	}
	if err := w.Abort(ctx); err != nil {
		t.Fatalf("Abort: %v", err)
	}
	wantObject(t, st, key, v2)
	if got := list(t, st, ""); !slices.Equal(keys(got), []string{key}) {
		t.Errorf("List = %v, want [%s]", keys(got), key)
	}
}

func testMissing(t *testing.T, st s3store.Store) {
	wantMissing(t, st, "no/such/key")
	put(t, st, "some/key", []byte("x"))
	wantMissing(t, st, "some/key2")
	wantMissing(t, st, "some/ke")
	wantMissing(t, st, "some")
	wantMissing(t, st, "some/key/below")
}

func testListPrefixAndOrder(t *testing.T, st s3store.Store) {
	// The order of "p/a-c" before "p/a/b" ('-' < '/') catches directory
	// walks that are not in key order.
	all := []string{"p/a-c", "p/a/b", "p/a/c/d", "p/ab", "p/b", "pz", "q/x", "p/a/c0"}
	for i, k := range slices.Backward(all) {
		put(t, st, k, payload(uint64(i), i+1))
	}
	sorted := slices.Sorted(slices.Values(all))
	cases := map[string][]string{
		"":          sorted,
		"p":         {"p/a-c", "p/a/b", "p/a/c/d", "p/a/c0", "p/ab", "p/b", "pz"},
		"p/":        {"p/a-c", "p/a/b", "p/a/c/d", "p/a/c0", "p/ab", "p/b"},
		"p/a":       {"p/a-c", "p/a/b", "p/a/c/d", "p/a/c0", "p/ab"},
		"p/a/":      {"p/a/b", "p/a/c/d", "p/a/c0"},
		"p/a/c":     {"p/a/c/d", "p/a/c0"},
		"p/a/c/":    {"p/a/c/d"},
		"p/a/c/d":   {"p/a/c/d"},
		"p/a/c/d/":  nil,
		"q/":        {"q/x"},
		"nothing/":  nil,
		"no/such/x": nil,
	}
	for prefix, want := range cases {
		infos := list(t, st, prefix)
		if got := keys(infos); !slices.Equal(got, want) {
			t.Errorf("List(%q) = %q, want %q", prefix, got, want)
		}
	}
	// Sizes reported by List match what was written.
	for _, info := range list(t, st, "") {
		i := slices.Index(all, info.Key)
		if want := int64(i + 1); info.Size != want {
			t.Errorf("List size of %q = %d, want %d", info.Key, info.Size, want)
		}
	}
}

// testListAfter checks s3store.ListAfter: the store's own (S3 StartAfter,
// a directory walk that skips whole directories) or List's filtered.
func testListAfter(t *testing.T, st s3store.Store) {
	all := []string{"i/0/0010-w.jsonl", "i/0/0020-a.jsonl", "i/0/0020-b.jsonl", "i/0/0030-a.jsonl", "i/0/x/0040", "i/1/0010-a.jsonl", "i/0-z"}
	for i, k := range all {
		put(t, st, k, payload(uint64(i), 1))
	}
	cases := []struct {
		prefix, after string
		want          []string
	}{
		{"i/0/", "", []string{"i/0/0010-w.jsonl", "i/0/0020-a.jsonl", "i/0/0020-b.jsonl", "i/0/0030-a.jsonl", "i/0/x/0040"}},
		{"i/0/", "i/0/0020~", []string{"i/0/0030-a.jsonl", "i/0/x/0040"}},
		{"i/0/", "i/0/0020-a.jsonl", []string{"i/0/0020-b.jsonl", "i/0/0030-a.jsonl", "i/0/x/0040"}},
		{"i/0/", "i/0/y", nil},
		{"i/", "i/0/z", []string{"i/1/0010-a.jsonl"}},
		{"i/", "i/0-a", []string{"i/0-z", "i/0/0010-w.jsonl", "i/0/0020-a.jsonl", "i/0/0020-b.jsonl", "i/0/0030-a.jsonl", "i/0/x/0040", "i/1/0010-a.jsonl"}},
	}
	for _, c := range cases {
		var got []string
		if err := s3store.ListAfter(t.Context(), st, c.prefix, c.after, func(info s3store.ObjectInfo) error {
			got = append(got, info.Key)
			return nil
		}); err != nil {
			t.Fatalf("ListAfter(%q, %q): %v", c.prefix, c.after, err)
		}
		if !slices.Equal(got, c.want) {
			t.Errorf("ListAfter(%q, %q) = %q, want %q", c.prefix, c.after, got, c.want)
		}
	}
}

func testListStopsOnError(t *testing.T, st s3store.Store) {
	for i := range 5 {
		put(t, st, fmt.Sprintf("stop/%d", i), []byte{byte(i)})
	}
	stop := errors.New("stop here")
	var seen []string
	err := st.List(t.Context(), "stop/", func(info s3store.ObjectInfo) error {
		seen = append(seen, info.Key)
		if len(seen) == 2 {
			return stop
		}
		return nil
	})
	if !errors.Is(err, stop) {
		t.Errorf("List error = %v, want the callback's error", err)
	}
	if !slices.Equal(seen, []string{"stop/0", "stop/1"}) {
		t.Errorf("List visited %v after the callback failed, want [stop/0 stop/1]", seen)
	}
}

func testManyObjects(t *testing.T, st s3store.Store, n int) {
	want := make([]string, n)
	for i := range want {
		want[i] = fmt.Sprintf("many/%06d.bin", i)
	}
	// Write in a shuffled order from a few goroutines.
	order := rand.New(rand.NewPCG(7, 7)).Perm(n)
	var wg sync.WaitGroup
	const workers = 8
	errs := make(chan error, workers)
	for wkr := range workers {
		wg.Go(func() {
			ctx := t.Context()
			for j := wkr; j < n; j += workers {
				key := want[order[j]]
				w, err := st.Create(ctx, key)
				if err != nil {
					errs <- err
					return
				}
				if _, err := w.Write([]byte(key)); err != nil {
					errs <- err
					return
				}
				if err := w.Commit(ctx); err != nil {
					errs <- err
					return
				}
			}
		})
	}
	wg.Wait()
	close(errs)
	for err := range errs {
		t.Fatalf("writing %d objects: %v", n, err)
	}
	put(t, st, "manz", []byte("outside the prefix"))
	infos := list(t, st, "many/")
	got := keys(infos)
	if len(got) != n || !slices.Equal(got, want) {
		t.Fatalf("List(many/) returned %d keys, want %d in order (first diff at %d)", len(got), n, firstDiff(got, want))
	}
	for _, info := range infos {
		if info.Size != int64(len(info.Key)) {
			t.Fatalf("List size of %q = %d, want %d", info.Key, info.Size, len(info.Key))
		}
	}
	// A prefix in the middle of the key space.
	if got := keys(list(t, st, "many/00001")); len(got) != min(10, max(0, n-10)) {
		t.Errorf("List(many/00001) returned %d keys", len(got))
	}
}

func firstDiff(a, b []string) int {
	for i := range min(len(a), len(b)) {
		if a[i] != b[i] {
			return i
		}
	}
	return min(len(a), len(b))
}

func writeChunked(w io.Writer, data []byte, chunk int) error {
	for len(data) > 0 {
		n := min(chunk, len(data))
		m, err := w.Write(data[:n])
		if err != nil {
			return err
		}
		if m != n {
			return fmt.Errorf("short write %d of %d", m, n)
		}
		data = data[n:]
	}
	return nil
}

func testLargeObject(t *testing.T, st s3store.Store, size int) {
	ctx := t.Context()
	key := "large/object.bin"
	data := payload(42, size)
	w, err := st.Create(ctx, key)
	if err != nil {
		t.Fatalf("Create: %v", err)
	}
	// An odd chunk size so part boundaries fall inside writes.
	if err := writeChunked(w, data, 100_003); err != nil {
		_ = w.Abort(ctx)
		t.Fatalf("Write: %v", err)
	}
	wantMissing(t, st, key)
	if err := w.Commit(ctx); err != nil {
		t.Fatalf("Commit: %v", err)
	}
	wantObject(t, st, key, data)

	// Exactly a multiple of 5 MiB: the last part is full.
	key2 := "large/exact.bin"
	exact := payload(43, 10<<20)
	w, err = st.Create(ctx, key2)
	if err != nil {
		t.Fatalf("Create: %v", err)
	}
	if err := writeChunked(w, exact, 1<<20); err != nil {
		_ = w.Abort(ctx)
		t.Fatalf("Write: %v", err)
	}
	if err := w.Commit(ctx); err != nil {
		t.Fatalf("Commit: %v", err)
	}
	wantObject(t, st, key2, exact)
}

func testLargeObjectAbort(t *testing.T, st s3store.Store, size int) {
	ctx := t.Context()
	key := "large/aborted.bin"
	w, err := st.Create(ctx, key)
	if err != nil {
		t.Fatalf("Create: %v", err)
	}
	if err := writeChunked(w, payload(44, size), 1<<20); err != nil {
		t.Fatalf("Write: %v", err)
	}
	if err := w.Abort(ctx); err != nil {
		t.Fatalf("Abort: %v", err)
	}
	wantMissing(t, st, key)
	if got := list(t, st, ""); len(got) != 0 {
		t.Errorf("List after Abort = %v, want nothing", keys(got))
	}
}

func testEmptyObject(t *testing.T, st s3store.Store) {
	ctx := t.Context()
	w, err := st.Create(ctx, "empty")
	if err != nil {
		t.Fatalf("Create: %v", err)
	}
	if err := w.Commit(ctx); err != nil {
		t.Fatalf("Commit: %v", err)
	}
	wantObject(t, st, "empty", nil)
	got := list(t, st, "")
	if len(got) != 1 || got[0].Key != "empty" || got[0].Size != 0 {
		t.Errorf("List = %+v, want one empty object", got)
	}
}

func testSmallWrites(t *testing.T, st s3store.Store) {
	data := payload(5, 70_001)
	ctx := t.Context()
	w, err := st.Create(ctx, "small-writes")
	if err != nil {
		t.Fatalf("Create: %v", err)
	}
	if err := writeChunked(w, data, 1); err != nil {
		t.Fatalf("Write: %v", err)
	}
	if _, err := w.Write(nil); err != nil {
		t.Fatalf("Write(nil): %v", err)
	}
	if err := w.Commit(ctx); err != nil {
		t.Fatalf("Commit: %v", err)
	}
	wantObject(t, st, "small-writes", data)
}

func testConcurrentWriters(t *testing.T, st s3store.Store) {
	ctx := t.Context()
	const writers = 8
	contents := make([][]byte, writers)
	for i := range contents {
		contents[i] = payload(uint64(100+i), 50_000+i*1000)
	}
	// Every writer has its own key and also writes the shared key; all
	// writers are open at once and interleave their writes.
	type pair struct{ own, shared s3store.ObjectWriter }
	ws := make([]pair, writers)
	for i := range ws {
		var err error
		if ws[i].own, err = st.Create(ctx, fmt.Sprintf("conc/own-%d", i)); err != nil {
			t.Fatalf("Create: %v", err)
		}
		if ws[i].shared, err = st.Create(ctx, "conc/shared"); err != nil {
			t.Fatalf("Create: %v", err)
		}
	}
	var wg sync.WaitGroup
	errs := make(chan error, writers)
	for i := range ws {
		wg.Go(func() {
			data := contents[i]
			for off := 0; off < len(data); off += 4096 {
				chunk := data[off:min(off+4096, len(data))]
				if _, err := ws[i].own.Write(chunk); err != nil {
					errs <- err
					return
				}
				if _, err := ws[i].shared.Write(chunk); err != nil {
					errs <- err
					return
				}
			}
			if err := ws[i].own.Commit(ctx); err != nil {
				errs <- err
				return
			}
			if i%4 == 3 {
				errs <- ws[i].shared.Abort(ctx)
				return
			}
			errs <- ws[i].shared.Commit(ctx)
		})
	}
	wg.Wait()
	close(errs)
	for err := range errs {
		if err != nil {
			t.Fatalf("concurrent writer: %v", err)
		}
	}
	for i := range writers {
		wantObject(t, st, fmt.Sprintf("conc/own-%d", i), contents[i])
	}
	shared := read(t, st, "conc/shared")
	match := -1
	for i, c := range contents {
		if bytes.Equal(shared, c) {
			match = i
		}
	}
	if match < 0 || match%4 == 3 {
		t.Errorf("conc/shared (%d bytes) is not one committed writer's whole content (match %d)", len(shared), match)
	}
	got := keys(list(t, st, "conc/"))
	if len(got) != writers+1 || !sort.StringsAreSorted(got) {
		t.Errorf("List(conc/) = %v, want %d sorted keys", got, writers+1)
	}
}

func testSpecialKeys(t *testing.T, st s3store.Store) {
	special := []string{
		"topics/orders/partition=0/orders+0+0000000000.json",
		"topics/orders/year=2024/month=01/orders+12+0000000042.avro",
		"x/a b",
		"x/plus+and=equals",
		"x/percent%41",
		"x/tilde~and'quote",
		"x/ünïcødé",
		"x/amp&semi;colon",
		"x/question?hash#",
	}
	for i, k := range special {
		put(t, st, k, []byte(fmt.Sprintf("object %d", i)))
	}
	for i, k := range special {
		wantObject(t, st, k, []byte(fmt.Sprintf("object %d", i)))
	}
	want := slices.Sorted(slices.Values(special))
	if got := keys(list(t, st, "")); !slices.Equal(got, want) {
		t.Errorf("List = %q, want %q", got, want)
	}
	if got := keys(list(t, st, "x/plus+")); !slices.Equal(got, []string{"x/plus+and=equals"}) {
		t.Errorf("List(x/plus+) = %q", got)
	}
	if got := keys(list(t, st, "topics/orders/partition=0/")); len(got) != 1 {
		t.Errorf("List(topics/orders/partition=0/) = %q", got)
	}
	// A similar key that was not written is missing.
	wantMissing(t, st, "x/plus and=equals")
	wantMissing(t, st, "x/percentA")
}

// testETag checks that the ETag a committed writer gives (s3store.ETagger)
// is the one Stat and List give the object, for an object of one request
// and a multipart one (size bytes), and that an object rewritten with the
// same bytes keeps a consistent ETag. A store without ETags gives "" for
// all of them.
func testETag(t *testing.T, st s3store.Store, size int) {
	ctx := t.Context()
	objects := map[string][]byte{"etag/small.bin": payload(7, 1000), "etag/large.bin": payload(8, size)}
	written := map[string]string{}
	for key, data := range objects {
		w, err := st.Create(ctx, key)
		if err != nil {
			t.Fatalf("Create(%q): %v", key, err)
		}
		if err := writeChunked(w, data, 1<<20); err != nil {
			_ = w.Abort(ctx)
			t.Fatalf("Write(%q): %v", key, err)
		}
		if err := w.Commit(ctx); err != nil {
			t.Fatalf("Commit(%q): %v", key, err)
		}
		if et, ok := w.(s3store.ETagger); ok {
			written[key] = et.ETag()
		}
		info, err := st.Stat(ctx, key)
		if err != nil {
			t.Fatalf("Stat(%q): %v", key, err)
		}
		if info.ETag != written[key] {
			t.Errorf("Stat(%q).ETag = %q, the writer gave %q", key, info.ETag, written[key])
		}
		if strings.Contains(info.ETag, `"`) {
			t.Errorf("Stat(%q).ETag = %q: quotes not stripped", key, info.ETag)
		}
	}
	for _, info := range list(t, st, "etag/") {
		if info.ETag != written[info.Key] {
			t.Errorf("List: %q has ETag %q, the writer gave %q", info.Key, info.ETag, written[info.Key])
		}
	}
	if written["etag/small.bin"] != "" && written["etag/small.bin"] == written["etag/large.bin"] {
		t.Errorf("two objects of other bytes have the same ETag %q", written["etag/small.bin"])
	}
}
