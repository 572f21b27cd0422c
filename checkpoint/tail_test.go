package checkpoint

import (
	"context"
	"fmt"
	"math/rand/v2"
	"testing"

	"github.com/kafkas3/kafkas3/index"
	"github.com/kafkas3/kafkas3/s3store"
)

// TestTailRandomHistories: random histories as TestLoadRandomHistories
// makes them (runs from the committed offset or moved back, checkpoints,
// crashes after Begin, rebuilds), plus sink crashes before the commit (the
// next run replays index objects the Tail has read, at the same or lower
// commits, with another flush size), new writers, and new partitions and
// topics appearing between refreshes. After every step one Tail, refreshed
// (index.Tail.Refresh reads only what changed), equals a fresh load of the
// whole log: a Tail that missed a replayed, voided or new index object,
// or kept one a load no longer gives, fails it.
func TestTailRandomHistories(t *testing.T) {
	for seed := range uint64(60) {
		t.Run(fmt.Sprint(seed), func(t *testing.T) { tailHistory(t, rand.New(rand.NewPCG(seed, 5))) })
	}
}

func tailHistory(t *testing.T, rng *rand.Rand) {
	h := &history{t: t, rng: rng, mem: s3store.NewMemory(), next: map[string]int64{}}
	writers := []string{index.WriterOf("a"), index.WriterOf("b"), index.WriterOf("c")}
	if rng.IntN(2) == 0 {
		h.older("")
	}
	tail := index.NewTail(h.mem, prefix, nil, index.LoadOptions{Concurrency: 4})
	others := map[[2]int64]int64{} // the other partitions' next commits
	for step := range 40 {
		w := writers[rng.IntN(len(writers))]
		switch k := rng.IntN(12); {
		case k < 5:
			h.run(w, h.next[w])
		case k < 6:
			h.run(w, rng.Int64N(h.next[w]+1)) // moved back
		case k < 8:
			from := h.next[w]
			h.run(w, from)
			h.next[w] = from + rng.Int64N(h.next[w]-from+1) // a crash before the commit
		case k < 9:
			begin(t, h.mem, w, h.next[w]) // a crash before the first index object
		case k < 10:
			// Another partition or topic, new or going on.
			tp := [2]int64{rng.Int64N(2), 1 + rng.Int64N(2)}
			topic := []string{"orders", "payments"}[tp[0]]
			others[tp] = sinkLog(t, h.mem, topic, int32(tp[1]), w, others[tp], 1+rng.Int64N(4), 1+rng.Int64N(5), 0)
		default:
			if _, err := Rebuild(context.Background(), h.mem, RebuildOptions{Prefix: prefix}); err != nil {
				t.Fatal(err)
			}
		}
		got, err := tail.Refresh(context.Background())
		if err != nil {
			t.Fatal(err)
		}
		same(t, fmt.Sprintf("step %d", step), got, loadLogOnly(t, h.mem))
	}
}

// TestTailReadsOnlyWhatWasAdded: a partition of 300 index objects with a
// checkpoint; each refresh after 5 more index objects reads those 5 (no
// checkpoint again, no index object read before), and when the sink
// writes its next checkpoint, that checkpoint's first line only; the
// listing of the log starts at the lowest live checkpoint, so its keys do
// not grow with the log.
func TestTailReadsOnlyWhatWasAdded(t *testing.T) {
	ctx := context.Background()
	mem := s3store.NewMemory()
	w := index.WriterOf("g")
	p := Partition{Prefix: prefix, Topic: "orders", Partition: 0, Writer: w}
	begin(t, mem, w, 0)
	end := sinkLog(t, mem, "orders", 0, w, 0, 300, 5, 0)
	if _, err := Write(ctx, mem, p, end, 8); err != nil {
		t.Fatal(err)
	}
	st := &counting{Store: mem}
	tail := index.NewTail(st, prefix, nil, index.LoadOptions{})
	if _, err := tail.Refresh(ctx); err != nil {
		t.Fatal(err)
	}
	for pass := range 12 {
		end = sinkLog(t, mem, "orders", 0, w, end, 5, 5, 0)
		if pass%4 == 3 { // the sink checkpoints every 20 index objects
			if _, err := Write(ctx, mem, p, end, 8); err != nil {
				t.Fatal(err)
			}
		}
		opens, ckpts, lists, listed := st.opens.Load(), st.ckptOpens.Load(), st.lists.Load(), st.logListed.Load()
		got, err := tail.Refresh(ctx)
		if err != nil {
			t.Fatal(err)
		}
		same(t, fmt.Sprintf("pass %d", pass), got, loadLogOnly(t, mem))
		opens, ckpts = st.opens.Load()-opens, st.ckptOpens.Load()-ckpts
		lists, listed = st.lists.Load()-lists, st.logListed.Load()-listed
		wantCkpts := int64(0)
		if pass%4 == 3 {
			wantCkpts = 1
		}
		if opens-ckpts != 5 || ckpts != wantCkpts || lists != 4 || listed > 1+21 {
			t.Fatalf("pass %d: %d index objects read (want 5), %d checkpoints (want %d), %d listing requests (want 4), %d keys of the log listed (want at most 22)",
				pass, opens-ckpts, ckpts, wantCkpts, lists, listed)
		}
	}
}
