package checkpoint

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"reflect"
	"strings"
	"sync/atomic"
	"testing"

	"github.com/kafkas3/kafkas3/index"
	"github.com/kafkas3/kafkas3/s3store"
)

const prefix = "_kafkas3/"

// crc is the CRC32C of "123456789", as S3 prints it.
const crc = "4waSgw=="

// entry builds a valid value entry of topic/part holding [first, last],
// read in [from, commit-1], in an object of size bytes.
func entry(topic string, part int32, key string, first, last, from, commit, size int64) index.Entry {
	return index.Entry{
		V: index.Version, Topic: topic, Partition: part, Key: key,
		Objects: []index.Object{{Key: key, Part: index.PartValue, Size: size, CRC32C: crc}},
		Runs:    []index.Run{{First: first, Last: last}}, Records: last - first + 1, From: from, Commit: commit, MinTS: first, MaxTS: last,
	}
}

func put(t testing.TB, st s3store.Store, key string, data []byte) {
	t.Helper()
	ctx := context.Background()
	w, err := st.Create(ctx, key)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := w.Write(data); err != nil {
		t.Fatal(err)
	}
	if err := w.Commit(ctx); err != nil {
		t.Fatal(err)
	}
}

// putIndex writes one index object of writer at commit.
func putIndex(t testing.TB, st s3store.Store, topic string, part int32, commit int64, writer string, es ...index.Entry) {
	t.Helper()
	data, err := index.Encode(es)
	if err != nil {
		t.Fatal(err)
	}
	put(t, st, index.Key(prefix, topic, part, commit, writer), data)
}

// sinkLog writes what a sink of writer does: n rotations of size records
// from offset start, each one index object, with a restamp of the last
// rotation every restampEvery rotations (skipped offsets committed).
func sinkLog(t testing.TB, st s3store.Store, topic string, part int32, writer string, start, n, size int64, restampEvery int64) int64 {
	t.Helper()
	off := start
	var last index.Entry
	for i := int64(0); i < n; i++ {
		key := fmt.Sprintf("topics/%s/partition=%d/%s+%d+%010d.json", topic, part, topic, part, off)
		e := entry(topic, part, key, off, off+size-1, off, off+size, 100+size)
		putIndex(t, st, topic, part, off+size, writer, e)
		off += size
		last = e
		if restampEvery > 0 && i%restampEvery == restampEvery-1 {
			off += 2 // two skipped offsets (transaction markers)
			r := last
			r.Commit = off
			putIndex(t, st, topic, part, off, writer, r)
		}
	}
	return off
}

// load loads the whole index and fails the test on an error.
func load(t testing.TB, st index.Store) *index.Index {
	t.Helper()
	ix, err := index.Load(context.Background(), st, prefix, nil)
	if err != nil {
		t.Fatal(err)
	}
	return ix
}

// same fails unless got is what want (a load of the log alone) gives.
func same(t testing.TB, what string, got, want *index.Index) {
	t.Helper()
	if !reflect.DeepEqual(got.Entries, want.Entries) || !reflect.DeepEqual(got.All, want.All) ||
		got.Superseded != want.Superseded || got.IndexObjects != want.IndexObjects {
		t.Fatalf("%s: loaded with checkpoints: %d entries, %d in All, superseded %d, %d index objects; from the log: %d, %d, %d, %d",
			what, len(got.Entries), len(got.All), got.Superseded, got.IndexObjects,
			len(want.Entries), len(want.All), want.Superseded, want.IndexObjects)
	}
}

func TestLoadWithCheckpointsIsLoadOfTheLog(t *testing.T) {
	ctx := context.Background()
	st := s3store.NewMemory()
	wa, wb := index.WriterOf("group-a"), index.WriterOf("group-b")
	// Two writers interleaved in one partition (two topics.dir, one
	// index prefix), a third partition and topic, with restamps.
	sinkLog(t, st, "orders", 0, wa, 0, 30, 10, 7)
	sinkLog(t, st, "orders", 0, wb, 5, 25, 13, 0)
	sinkLog(t, st, "orders", 1, wa, 0, 12, 4, 3)
	sinkLog(t, st, "payments", 0, wa, 100, 8, 3, 0)
	// A replay after a crash rewrote orders/0's object at 50 as a
	// superset with a higher commit; a later run with a smaller
	// flush.size rewrote the one at 100 with fewer records and a lower
	// commit (so All keeps both).
	k50 := "topics/orders/partition=0/orders+0+0000000050.json"
	putIndex(t, st, "orders", 0, 1000, wa, entry("orders", 0, k50, 50, 64, 50, 1000, 300))
	k100 := "topics/orders/partition=0/orders+0+0000000100.json"
	putIndex(t, st, "orders", 0, 103, wb, entry("orders", 0, k100, 100, 102, 100, 103, 42))
	// Two writers writing the same key at the same commit: the index
	// object whose key sorts first wins, as a listing reads it first.
	putIndex(t, st, "orders", 0, 2000, wa, entry("orders", 0, "x", 1500, 1999, 1500, 2000, 1))
	putIndex(t, st, "orders", 0, 2000, wb, entry("orders", 0, "x", 1500, 1999, 1500, 2000, 2))

	want := load(t, st)
	if want.Superseded == 0 || len(want.All) <= len(want.Entries) {
		t.Fatalf("the log has no superseded entries: %d, All %d", want.Superseded, len(want.All))
	}
	steps := []struct {
		writer string
		part   int32
		topic  string
		upTo   int64
	}{
		{wa, 0, "orders", 120},  // one writer checkpointed, the other not
		{wb, 0, "orders", 90},   // both, at different commits
		{wa, 0, "orders", 1000}, // past the replay
		{wa, 1, "orders", -1},   // the whole log of a partition
		{wb, 0, "orders", -1},
		{wa, 0, "orders", -1},
		{wa, 0, "payments", 110},
	}
	for _, s := range steps {
		p := Partition{Prefix: prefix, Topic: s.topic, Partition: s.part, Writer: s.writer}
		if _, err := Write(ctx, st, p, s.upTo, 4); err != nil {
			t.Fatal(err)
		}
		same(t, fmt.Sprintf("after the checkpoint of %s/%d writer %s up to %d", s.topic, s.part, s.writer, s.upTo), load(t, st), want)
	}
	// The log goes on after the checkpoints: a tail is read.
	putIndex(t, st, "orders", 0, 3000, wb, entry("orders", 0, "y", 2500, 2999, 2500, 3000, 1))
	want = load(t, st)
	same(t, "with a tail", want, loadLogOnly(t, st))
	// One topic only.
	ix, err := index.Load(ctx, st, prefix, []string{"payments"})
	if err != nil {
		t.Fatal(err)
	}
	if len(ix.Entries) != 8 || ix.Checkpoints != 1 {
		t.Fatalf("payments: %d entries from %d checkpoints, want 8 from 1", len(ix.Entries), ix.Checkpoints)
	}
}

// loadLogOnly loads the index from its log alone (the checkpoints hidden).
func loadLogOnly(t testing.TB, st s3store.Store) *index.Index {
	return load(t, hideCheckpoints{st})
}

// hideCheckpoints is a store without the checkpoints folder.
type hideCheckpoints struct{ s3store.Store }

func (h hideCheckpoints) List(ctx context.Context, prefix string, fn func(s3store.ObjectInfo) error) error {
	return h.Store.List(ctx, prefix, func(info s3store.ObjectInfo) error {
		if strings.Contains(info.Key, "/checkpoints/") || strings.HasPrefix(info.Key, index.CheckpointDir(prefix)) {
			return nil
		}
		return fn(info)
	})
}

// counting counts a store's requests, and the keys of the log listed.
type counting struct {
	s3store.Store
	lists, opens, ckptOpens, logListed atomic.Int64
}

func (c *counting) List(ctx context.Context, prefix string, fn func(s3store.ObjectInfo) error) error {
	c.lists.Add(1)
	return c.Store.List(ctx, prefix, c.count(fn))
}

func (c *counting) ListAfter(ctx context.Context, prefix, after string, fn func(s3store.ObjectInfo) error) error {
	c.lists.Add(1)
	return s3store.ListAfter(ctx, c.Store, prefix, after, c.count(fn))
}

// count counts the keys of the log fn is given.
func (c *counting) count(fn func(s3store.ObjectInfo) error) func(s3store.ObjectInfo) error {
	return func(info s3store.ObjectInfo) error {
		if strings.HasPrefix(info.Key, index.Dir(prefix)) {
			c.logListed.Add(1)
		}
		return fn(info)
	}
}

func (c *counting) Open(ctx context.Context, key string) (io.ReadCloser, error) {
	c.opens.Add(1)
	if strings.HasPrefix(key, index.CheckpointDir(prefix)) {
		c.ckptOpens.Add(1)
	}
	return c.Store.Open(ctx, key)
}

func TestLoadReadsCheckpointsAndTail(t *testing.T) {
	ctx := context.Background()
	mem := s3store.NewMemory()
	w := index.WriterOf("g")
	const parts, objects, every = 3, 1000, 100
	for p := int32(0); p < parts; p++ {
		off := int64(0)
		for i := 0; i < objects; i++ {
			key := fmt.Sprintf("topics/orders/partition=%d/orders+%d+%010d.json", p, p, off)
			putIndex(t, mem, "orders", p, off+5, w, entry("orders", p, key, off, off+4, off, off+5, 50))
			off += 5
			if (i+1)%every == 0 {
				// The sink's checkpoint every 100 index objects.
				if _, err := Write(ctx, mem, Partition{Prefix: prefix, Topic: "orders", Partition: p, Writer: w}, off, 8); err != nil {
					t.Fatal(err)
				}
			}
		}
		// 99 index objects after the last checkpoint.
		for i := 0; i < every-1; i++ {
			key := fmt.Sprintf("topics/orders/partition=%d/orders+%d+%010d.json", p, p, off)
			putIndex(t, mem, "orders", p, off+5, w, entry("orders", p, key, off, off+4, off, off+5, 50))
			off += 5
		}
	}
	st := &counting{Store: mem}
	got := load(t, st)
	if got.IndexObjects != parts*(objects+every-1) || len(got.Entries) != parts*(objects+every-1) || got.Checkpoints != parts {
		t.Fatalf("IndexObjects %d, Entries %d, Checkpoints %d", got.IndexObjects, len(got.Entries), got.Checkpoints)
	}
	opens, ckpts, lists := st.opens.Load(), st.ckptOpens.Load(), st.lists.Load()
	t.Logf("%d partitions of %d index objects, a checkpoint every %d: %d opens (%d checkpoints), %d listings",
		parts, objects+every-1, every, opens, ckpts, lists)
	if ckpts != parts || opens != parts*every || lists > 3*parts+1 {
		t.Fatalf("the load opened %d objects (%d checkpoints) and listed %d times; want %d checkpoints and %d index objects, at most %d listings",
			opens, ckpts, lists, parts, parts*(every-1), 3*parts+1)
	}
	same(t, "counted", got, loadLogOnly(t, mem))
}

// failCreate fails every checkpoint's Commit.
type failCreate struct{ s3store.Store }

type failWriter struct{ s3store.ObjectWriter }

func (failWriter) Commit(context.Context) error { return errors.New("store down") }

func (f failCreate) Create(ctx context.Context, key string) (s3store.ObjectWriter, error) {
	w, err := f.Store.Create(ctx, key)
	return failWriter{w}, err
}

func TestWriteFailureLeavesTheIndexCorrect(t *testing.T) {
	ctx := context.Background()
	st := s3store.NewMemory()
	w := index.WriterOf("g")
	p := Partition{Prefix: prefix, Topic: "orders", Partition: 0, Writer: w}
	sinkLog(t, st, "orders", 0, w, 0, 20, 10, 4)
	if _, err := Write(ctx, st, p, 100, 2); err != nil {
		t.Fatal(err)
	}
	sinkLog(t, st, "orders", 0, w, 500, 20, 10, 0)
	_, err := Write(ctx, failCreate{st}, p, -1, 2)
	if err == nil || !strings.Contains(err.Error(), "store down") {
		t.Fatalf("Write on a failing store = %v", err)
	}
	var n int
	_ = st.List(ctx, index.CheckpointDir(prefix), func(s3store.ObjectInfo) error { n++; return nil })
	if n != 1 {
		t.Fatalf("%d checkpoints after a failed write, want the 1 before it", n)
	}
	// The previous checkpoint and a longer tail: the same index.
	same(t, "after a failed checkpoint", load(t, st), loadLogOnly(t, st))
	// Written again: the same bytes (idempotent), nothing new to write.
	r1, err := Write(ctx, st, p, -1, 2)
	if err != nil || r1.Key == "" {
		t.Fatal(r1, err)
	}
	b1 := get(t, st, r1.Key)
	if r, err := Write(ctx, st, p, -1, 2); err != nil || r.Key != "" {
		t.Fatalf("a second Write = %+v, %v; want nothing written", r, err)
	}
	// From scratch (no previous checkpoint): the same bytes.
	fresh := s3store.NewMemory()
	_ = st.List(ctx, index.Dir(prefix), func(info s3store.ObjectInfo) error {
		put(t, fresh, info.Key, get(t, st, info.Key))
		return nil
	})
	r2, err := Write(ctx, fresh, p, -1, 2)
	if err != nil || r2.Key != r1.Key || !bytes.Equal(get(t, fresh, r2.Key), b1) {
		t.Fatalf("a checkpoint built from the log alone differs from one built on the previous checkpoint: %v", err)
	}
	same(t, "after the checkpoint", load(t, st), loadLogOnly(t, st))
}

func get(t testing.TB, st s3store.Store, key string) []byte {
	t.Helper()
	rc, err := st.Open(context.Background(), key)
	if err != nil {
		t.Fatal(err)
	}
	defer rc.Close()
	b, err := io.ReadAll(rc)
	if err != nil {
		t.Fatal(err)
	}
	return b
}

func TestLoadNamesAMalformedCheckpoint(t *testing.T) {
	ctx := context.Background()
	st := s3store.NewMemory()
	w := index.WriterOf("g")
	sinkLog(t, st, "orders", 0, w, 0, 5, 10, 0)
	r, err := Write(ctx, st, Partition{Prefix: prefix, Topic: "orders", Partition: 0, Writer: w}, -1, 2)
	if err != nil {
		t.Fatal(err)
	}
	b := get(t, st, r.Key)
	put(t, st, r.Key, b[:len(b)-9]) // truncated
	_, err = index.Load(ctx, st, prefix, nil)
	if !errors.Is(err, index.ErrMalformed) || !strings.Contains(err.Error(), r.Key) {
		t.Fatalf("Load with a truncated checkpoint = %v, want ErrMalformed naming %s", err, r.Key)
	}
	put(t, st, index.CheckpointPartitionDir(prefix, "orders", 0)+"junk", []byte("x"))
	_, err = index.Load(ctx, st, prefix, nil)
	if !errors.Is(err, index.ErrMalformed) || !strings.Contains(err.Error(), "junk") {
		t.Fatalf("Load with a stray checkpoint = %v, want ErrMalformed naming it", err)
	}
}
