package checkpoint

import (
	"context"
	"fmt"
	"slices"
	"testing"

	"github.com/kafkas3/kafkas3/index"
	"github.com/kafkas3/kafkas3/s3store"
)

// TestAStoppedWriterIsSeen: writer x (an older kafkas3 group) stopped
// before checkpoints existed, its index objects all below the commits of
// writer w, which then writes its first checkpoint. The load equals a
// read of the log, and w's first checkpoint wrote x's too, so x's log is
// read from a checkpoint, not object by object.
func TestAStoppedWriterIsSeen(t *testing.T) {
	ctx := context.Background()
	mem := s3store.NewMemory()
	wx, ww := index.WriterOf("old-group"), index.WriterOf("new-group")
	sinkLog(t, mem, "orders", 0, wx, 0, 20, 5, 4)     // commits 5..~110
	sinkLog(t, mem, "orders", 0, ww, 1000, 30, 10, 0) // commits 1010..1300
	r, err := Write(ctx, mem, Partition{Prefix: prefix, Topic: "orders", Partition: 0, Writer: ww}, 1200, 4)
	if err != nil {
		t.Fatal(err)
	}
	xKey := index.CheckpointKey(prefix, "orders", 0, 110, wx)
	if r.Key != index.CheckpointKey(prefix, "orders", 0, 1200, ww) || !slices.Equal(r.Others, []string{xKey}) {
		t.Fatalf("Write = %+v, want w's checkpoint at 1200 and x's at 110", r)
	}
	st := &counting{Store: mem}
	got := load(t, st)
	same(t, "a stopped writer", got, loadLogOnly(t, mem))
	// Two checkpoints and w's 10 index objects above 1200: nothing of x.
	if got.Checkpoints != 2 || st.opens.Load() != 12 {
		t.Fatalf("%d checkpoints read, %d opens; want 2 and 12", got.Checkpoints, st.opens.Load())
	}
	// x's checkpoint is the one x itself would write: the same bytes.
	fresh := s3store.NewMemory()
	sinkLog(t, fresh, "orders", 0, wx, 0, 20, 5, 4)
	if r, err := Write(ctx, fresh, Partition{Prefix: prefix, Topic: "orders", Partition: 0, Writer: wx}, -1, 4); err != nil || r.Key != xKey ||
		string(get(t, fresh, xKey)) != string(get(t, mem, xKey)) {
		t.Fatalf("x's own checkpoint %+v, %v differs from the one w wrote for it", r, err)
	}
}

// TestAWriterWithoutACheckpointIsSeen: after w checkpointed, writer y
// writes index objects at commits below every checkpoint. A sink of this
// version writes its start checkpoint first (Begin), and the load, which
// lists the log only from the lowest live checkpoint on, equals a read
// of the log. An older kafkas3 writes none: its index objects below
// every checkpoint are not listed (the invariant of the package doc,
// "Reading an archive", does not hold) until `index rebuild`
// checkpoints it.
func TestAWriterWithoutACheckpointIsSeen(t *testing.T) {
	ctx := context.Background()
	for _, begins := range []bool{true, false} {
		mem := s3store.NewMemory()
		ww, wy := index.WriterOf("w"), index.WriterOf("y")
		sinkLog(t, mem, "orders", 0, ww, 1000, 30, 10, 0)
		if _, err := Write(ctx, mem, Partition{Prefix: prefix, Topic: "orders", Partition: 0, Writer: ww}, -1, 4); err != nil {
			t.Fatal(err)
		}
		if begins {
			r, err := Begin(ctx, mem, Partition{Prefix: prefix, Topic: "orders", Partition: 0, Writer: wy}, 0, 4)
			if err != nil || r.Start != index.CheckpointKey(prefix, "orders", 0, 0, wy) {
				t.Fatalf("Begin = %+v, %v; want y's start checkpoint at 0", r, err)
			}
		}
		sinkLog(t, mem, "orders", 0, wy, 0, 12, 7, 5) // commits 7..~88, all below 1300
		got := load(t, mem)
		if !begins {
			if len(got.Entries) != 30 || got.FullListings != 0 {
				t.Fatalf("an older writer below the checkpoints: %d entries, %d full listings; want w's 30 alone, listed from its checkpoint",
					len(got.Entries), got.FullListings)
			}
			// index rebuild checkpoints y; the load is then the log's.
			res, err := Rebuild(ctx, mem, RebuildOptions{Prefix: prefix})
			if err != nil || len(res.Written) != 1 {
				t.Fatalf("Rebuild = %+v, %v; want y's checkpoint", res, err)
			}
			got = load(t, mem)
		}
		same(t, fmt.Sprintf("a writer below the checkpoints (its start checkpoint %v)", begins), got, loadLogOnly(t, mem))
		if got.Checkpoints != 2 {
			t.Fatalf("%d checkpoints read, want 2", got.Checkpoints)
		}
	}
}

// rewind writes what a sink of writer does after its group's offset was
// moved back to from: Void, then a replay with another flush.size (other
// keys and commits than the first run's), up to commit upTo.
func rewind(t *testing.T, st s3store.Store, writer string, from, upTo, size int64, void bool) {
	t.Helper()
	if void {
		if _, err := Void(context.Background(), st, Partition{Prefix: prefix, Topic: "orders", Partition: 0, Writer: writer}, from); err != nil {
			t.Fatal(err)
		}
	}
	for off := from; off < upTo; off += size {
		key := fmt.Sprintf("topics/orders/partition=0/orders+0+%010d.json", off)
		putIndex(t, st, "orders", 0, off+size, writer, entry("orders", 0, key, off, off+size-1, off, off+size, 7))
	}
}

// TestOffsetMovedBelowACheckpoint: a writer's group offset moved back
// under its checkpoints; the replay writes index objects at commits they
// cover. After Void every load equals a read of the log: during the
// replay, after the writer's next checkpoints, and after a second rewind
// to between the first rewind and the checkpoints written since.
func TestOffsetMovedBelowACheckpoint(t *testing.T) {
	ctx := context.Background()
	mem := s3store.NewMemory()
	w := index.WriterOf("g")
	p := Partition{Prefix: prefix, Topic: "orders", Partition: 0, Writer: w}
	sinkLog(t, mem, "orders", 0, w, 0, 100, 10, 0) // commits 10..1000
	for _, c := range []int64{300, 600, 1000} {
		if _, err := Write(ctx, mem, p, c, 4); err != nil {
			t.Fatal(err)
		}
	}
	rewind(t, mem, w, 405, 705, 3, true)
	same(t, "during the replay", load(t, mem), loadLogOnly(t, mem))
	if r, err := Write(ctx, mem, p, 705, 4); err != nil || r.Key != index.CheckpointKey(prefix, "orders", 0, 705, w) {
		t.Fatalf("the replay's checkpoint = %+v, %v", r, err)
	}
	same(t, "after the replay's checkpoint", load(t, mem), loadLogOnly(t, mem))
	rewind(t, mem, w, 705, 1201, 4, false) // the replay goes on past the old checkpoint
	if _, err := Write(ctx, mem, p, 1201, 4); err != nil {
		t.Fatal(err)
	}
	got := load(t, mem)
	same(t, "past the old checkpoints", got, loadLogOnly(t, mem))
	if got.Checkpoints != 1 {
		t.Fatalf("%d checkpoints read, want 1 (the one at 1201)", got.Checkpoints)
	}
	// A second rewind, to 500: above the first rewind's 405, below the
	// checkpoints at 600 (stale since the first) and 705 (the replay's).
	rewind(t, mem, w, 500, 800, 5, true)
	same(t, "a second rewind", load(t, mem), loadLogOnly(t, mem))
	if _, err := Write(ctx, mem, p, 800, 4); err != nil {
		t.Fatal(err)
	}
	same(t, "after the second replay's checkpoint", load(t, mem), loadLogOnly(t, mem))
	// Voids are checkpoints a reader reads: a rebuild keeps the load the log's.
	if _, err := Rebuild(ctx, mem, RebuildOptions{Prefix: prefix}); err != nil {
		t.Fatal(err)
	}
	same(t, "after rebuild", load(t, mem), loadLogOnly(t, mem))
}

func TestVoidCheckpointIsRead(t *testing.T) {
	b, err := index.VoidCheckpoint("orders", 0, index.WriterOf("g"), 10, 4)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := index.VoidCheckpoint("orders", 0, index.WriterOf("g"), 10, 10); err == nil {
		t.Fatal("a void at its own commit was accepted")
	}
	mem := s3store.NewMemory()
	key := index.CheckpointKey(prefix, "orders", 0, 10, index.WriterOf("g"))
	put(t, mem, key, b)
	h, _, err := index.ReadLiveCheckpoint(context.Background(), mem, prefix, "orders", 0, index.WriterOf("g"), []int64{10}, nil, nil)
	if err != nil || h.Commit != -1 {
		t.Fatalf("ReadLiveCheckpoint of a lone void = %+v, %v; want none", h, err)
	}
}
