package checkpoint

import (
	"bytes"
	"cmp"
	"context"
	"errors"
	"fmt"
	"math/rand/v2"
	"slices"
	"strings"
	"sync"
	"testing"

	"github.com/kafkas3/kafkas3/index"
	"github.com/kafkas3/kafkas3/s3store"
)

// begin is Begin, failing the test on an error.
func begin(t testing.TB, st Store, writer string, from int64) BeginResult {
	t.Helper()
	r, err := Begin(context.Background(), st, Partition{Prefix: prefix, Topic: "orders", Partition: 0, Writer: writer}, from, 4)
	if err != nil {
		t.Fatal(err)
	}
	return r
}

// TestLoadListsOnlyAfterTheCheckpoint: a partition of 1,000 index
// objects, a checkpoint at the last one's commit and 5 after it. The load
// lists the log from the checkpoint's commit on (6 keys), reads the
// checkpoint and the 5 index objects after it, and gives what a read of
// the whole log gives.
func TestLoadListsOnlyAfterTheCheckpoint(t *testing.T) {
	ctx := context.Background()
	mem := s3store.NewMemory()
	w := index.WriterOf("g")
	begin(t, mem, w, 0)
	end := sinkLog(t, mem, "orders", 0, w, 0, 1000, 5, 0)
	if _, err := Write(ctx, mem, Partition{Prefix: prefix, Topic: "orders", Partition: 0, Writer: w}, end, 8); err != nil {
		t.Fatal(err)
	}
	sinkLog(t, mem, "orders", 0, w, end, 5, 5, 0)
	st := &counting{Store: mem}
	got := load(t, st)
	full := &counting{Store: hideCheckpoints{mem}}
	want := load(t, full)
	same(t, "listed after the checkpoint", got, want)
	t.Logf("1,005 index objects, a checkpoint at the 1,000th: keys of the log listed %d (a full listing %d), opens %d (%d checkpoints; a full read %d), listing requests %d (a full listing %d)",
		st.logListed.Load(), full.logListed.Load(), st.opens.Load(), st.ckptOpens.Load(), full.opens.Load(), st.lists.Load(), full.lists.Load())
	// The skip scan lists one key; the tail is the index object at the
	// checkpoint's commit and the 5 after it.
	if st.logListed.Load() != 1+6 || got.Listed != 6 || got.FullListings != 0 {
		t.Fatalf("listed %d keys of the log (Index.Listed %d, full listings %d); want 7 (6)", st.logListed.Load(), got.Listed, got.FullListings)
	}
	// Two opens of the live checkpoint (Begin's start checkpoint is not
	// read: the live one is the newest), 5 of index objects.
	if st.ckptOpens.Load() != 1 || st.opens.Load() != 6 {
		t.Fatalf("opened %d objects (%d checkpoints); want 6 (1)", st.opens.Load(), st.ckptOpens.Load())
	}
	if want.FullListings != 1 || want.Listed != 1005 {
		t.Fatalf("a load without checkpoints: %d full listings, %d listed; want 1 and 1005", want.FullListings, want.Listed)
	}
}

// TestLoadListsFromTheLowestCheckpoint: writer a stopped long ago (its
// checkpoint at 100), writer b goes on (its checkpoint at its commit
// 10,000, a tail after it). The listing starts at a's checkpoint's
// commit; only b's tail is read; the load is the log's.
func TestLoadListsFromTheLowestCheckpoint(t *testing.T) {
	ctx := context.Background()
	mem := s3store.NewMemory()
	wa, wb := index.WriterOf("a"), index.WriterOf("b")
	begin(t, mem, wa, 0)
	sinkLog(t, mem, "orders", 0, wa, 0, 20, 5, 0) // commits 5..100
	if _, err := Write(ctx, mem, Partition{Prefix: prefix, Topic: "orders", Partition: 0, Writer: wa}, -1, 4); err != nil {
		t.Fatal(err)
	}
	begin(t, mem, wb, 0)
	end := sinkLog(t, mem, "orders", 0, wb, 0, 100, 100, 0) // commits 100..10,000
	if _, err := Write(ctx, mem, Partition{Prefix: prefix, Topic: "orders", Partition: 0, Writer: wb}, end, 4); err != nil {
		t.Fatal(err)
	}
	sinkLog(t, mem, "orders", 0, wb, end, 3, 100, 0)
	st := &counting{Store: mem}
	got := load(t, st)
	same(t, "two writers", got, loadLogOnly(t, mem))
	// From commit 100: a's last index object and all of b's (103).
	if got.Listed != 1+103 || got.FullListings != 0 || got.Checkpoints != 2 {
		t.Fatalf("listed %d, full listings %d, checkpoints %d; want 104, 0, 2", got.Listed, got.FullListings, got.Checkpoints)
	}
	if opens := st.opens.Load() - st.ckptOpens.Load(); opens != 3 {
		t.Fatalf("read %d index objects, want b's 3 after its checkpoint", opens)
	}
}

// TestAWriterOnlyInTheTail: writer y of an older kafkas3 (no start
// checkpoint) writes after w checkpointed, above and below w's
// checkpoint. Its objects in the listed tail tell the load that the
// partition has a writer without a checkpoint, so it lists the whole log:
// the load is the log's. An older writer whose objects all lie below
// the checkpoints is not seen (TestAWriterWithoutACheckpointIsSeen).
func TestAWriterOnlyInTheTail(t *testing.T) {
	ctx := context.Background()
	mem := s3store.NewMemory()
	ww, wy := index.WriterOf("w"), index.WriterOf("y")
	begin(t, mem, ww, 0)
	sinkLog(t, mem, "orders", 0, ww, 0, 30, 10, 0) // commits 10..300
	if _, err := Write(ctx, mem, Partition{Prefix: prefix, Topic: "orders", Partition: 0, Writer: ww}, 200, 4); err != nil {
		t.Fatal(err)
	}
	sinkLog(t, mem, "orders", 0, wy, 0, 40, 7, 0) // commits 7..280
	got := load(t, mem)
	same(t, "a writer only in the tail", got, loadLogOnly(t, mem))
	if got.FullListings != 1 {
		t.Fatalf("%d full listings, want 1", got.FullListings)
	}
	// A sink of this version checkpoints y at its first run (Begin's
	// sweep), and the listing starts after the checkpoints again.
	r := begin(t, mem, index.WriterOf("z"), 0)
	if len(r.Others) != 1 || !strings.Contains(r.Others[0], wy) {
		t.Fatalf("Begin = %+v, want y's checkpoint among Others", r)
	}
	got = load(t, mem)
	same(t, "after z's start", got, loadLogOnly(t, mem))
	if got.FullListings != 0 {
		t.Fatalf("%d full listings after z's start, want 0", got.FullListings)
	}
}

// TestBeginWritesTheStartCheckpoint: a new writer's start checkpoint has
// no entry and reads as a live checkpoint; written again (or by anyone)
// it has the same bytes; a second Begin writes nothing. A writer with
// index objects below its offset and no checkpoint (an older kafkas3's
// group) gets the checkpoint of its log up to there. A writer moved back
// below every checkpoint gets one at or below its offset, before its
// checkpoints above are voided.
func TestBeginWritesTheStartCheckpoint(t *testing.T) {
	ctx := context.Background()
	mem := s3store.NewMemory()
	w := index.WriterOf("g")
	r := begin(t, mem, w, 42)
	key := index.CheckpointKey(prefix, "orders", 0, 42, w)
	if r.Start != key || len(r.Voided) != 0 || r.Read != 0 {
		t.Fatalf("Begin = %+v, want the start checkpoint %s", r, key)
	}
	h, _, err := index.ReadLiveCheckpoint(ctx, mem, prefix, "orders", 0, w, []int64{42}, nil, func(*index.Entry) error {
		return fmt.Errorf("an entry in an empty checkpoint")
	})
	if err != nil || h.Commit != 42 || h.LogObjects != 0 {
		t.Fatalf("the start checkpoint reads as %+v, %v", h, err)
	}
	first := get(t, mem, key)
	if again := begin(t, mem, w, 42); again.Start != "" {
		t.Fatalf("a second Begin = %+v, want nothing written", again)
	}
	other := s3store.NewMemory()
	begin(t, other, w, 42)
	if !bytes.Equal(get(t, other, key), first) {
		t.Fatal("two start checkpoints of one writer at one offset differ")
	}

	// An older kafkas3's group: index objects, no checkpoint.
	wo := index.WriterOf("old")
	sinkLog(t, mem, "orders", 0, wo, 0, 10, 10, 0) // commits 10..100
	if r := begin(t, mem, wo, 100); r.Start != index.CheckpointKey(prefix, "orders", 0, 100, wo) || r.Read != 10 {
		t.Fatalf("Begin of an older group = %+v, want its checkpoint at 100 of 10 index objects", r)
	}

	// Moved back below every checkpoint.
	p := Partition{Prefix: prefix, Topic: "orders", Partition: 0, Writer: wo}
	sinkLog(t, mem, "orders", 0, wo, 100, 10, 10, 0) // commits 110..200
	if _, err := Write(ctx, mem, p, -1, 4); err != nil {
		t.Fatal(err)
	}
	r = begin(t, mem, wo, 55)
	if r.Start != index.CheckpointKey(prefix, "orders", 0, 50, wo) || len(r.Voided) != 2 {
		t.Fatalf("Begin below every checkpoint = %+v, want the start checkpoint at 50 and the ones at 100 and 200 void", r)
	}
	same(t, "after a move back", load(t, mem), loadLogOnly(t, mem))
}

// TestLoadRandomHistories: random histories of three writers of this
// version and an older one (no Begin, writing only before any checkpoint
// exists): runs from the committed offset or from an offset moved back,
// checkpoints at random commits, crashes after Begin, rebuilds. After
// every step the load, listing only after the lowest live checkpoint,
// equals a read of the whole log.
func TestLoadRandomHistories(t *testing.T) {
	for seed := range uint64(40) {
		t.Run(fmt.Sprint(seed), func(t *testing.T) { randomHistory(t, rand.New(rand.NewPCG(seed, 19))) })
	}
}

// history is one random history's state: each writer's committed offset.
type history struct {
	t    *testing.T
	rng  *rand.Rand
	mem  *s3store.Memory
	next map[string]int64
}

func randomHistory(t *testing.T, rng *rand.Rand) {
	h := &history{t: t, rng: rng, mem: s3store.NewMemory(), next: map[string]int64{}}
	writers := []string{index.WriterOf("a"), index.WriterOf("b"), index.WriterOf("c")}
	if rng.IntN(2) == 0 {
		h.older("")
	}
	for step := range 30 {
		w := writers[rng.IntN(len(writers))]
		switch k := rng.IntN(10); {
		case k < 6:
			h.run(w, h.next[w])
		case k < 8:
			h.run(w, rng.Int64N(h.next[w]+1)) // moved back
		case k < 9:
			begin(t, h.mem, w, h.next[w]) // a crash before the first index object
		default:
			if _, err := Rebuild(context.Background(), h.mem, RebuildOptions{Prefix: prefix}); err != nil {
				t.Fatal(err)
			}
		}
		got := load(t, h.mem)
		same(t, fmt.Sprintf("step %d", step), got, loadLogOnly(t, h.mem))
	}
}

// older writes the log of an older kafkas3 (writer ""): no Begin, no
// checkpoint.
func (h *history) older(w string) {
	h.next[w] = sinkLog(h.t, h.mem, "orders", 0, w, 0, 1+h.rng.Int64N(6), 1+h.rng.Int64N(9), 0)
}

// run is one sink run of w from offset from: Begin, index objects of a
// random flush size (restamps among them), maybe a checkpoint of a
// committed offset.
func (h *history) run(w string, from int64) {
	begin(h.t, h.mem, w, from)
	size := 1 + h.rng.Int64N(9)
	n := 1 + h.rng.Int64N(8)
	end := sinkLog(h.t, h.mem, "orders", 0, w, from, n, size, 1+h.rng.Int64N(4))
	h.next[w] = end
	if h.rng.IntN(3) > 0 {
		upTo := from + 1 + h.rng.Int64N(end-from)
		p := Partition{Prefix: prefix, Topic: "orders", Partition: 0, Writer: w}
		if _, err := Write(context.Background(), h.mem, p, upTo, 4); err != nil {
			h.t.Fatal(err)
		}
	}
}

// TestEachPartitionIsLoad: index.EachPartition hands each partition of
// the log to its function once, with exactly the entries, superseded
// ones included, and the counts that LoadWith gives of that partition,
// whatever the partitions at once and the requests in flight.
func TestEachPartitionIsLoad(t *testing.T) {
	rng := rand.New(rand.NewPCG(7, 19))
	mem := s3store.NewMemory()
	for _, topic := range []string{"orders", "payments"} {
		for part := range int32(5) {
			for _, w := range []string{index.WriterOf("a"), index.WriterOf("b")} {
				if _, err := Begin(context.Background(), mem, Partition{Prefix: prefix, Topic: topic, Partition: part, Writer: w}, 0, 4); err != nil {
					t.Fatal(err)
				}
				end := sinkLog(t, mem, topic, part, w, 0, 1+rng.Int64N(20), 1+rng.Int64N(9), 1+rng.Int64N(4))
				if rng.IntN(2) == 0 {
					p := Partition{Prefix: prefix, Topic: topic, Partition: part, Writer: w}
					if _, err := Write(context.Background(), mem, p, 1+rng.Int64N(end), 4); err != nil {
						t.Fatal(err)
					}
				}
			}
		}
	}
	whole := load(t, mem)
	for _, opt := range []index.LoadOptions{{}, {PartitionsAtOnce: 1, Concurrency: 1}, {PartitionsAtOnce: 3, Concurrency: 2}} {
		var got index.Index
		var mu sync.Mutex
		calls := 0
		err := index.EachPartition(context.Background(), mem, prefix, nil, opt, func(ix *index.Index) error {
			mu.Lock()
			defer mu.Unlock()
			calls++
			for i := range ix.All {
				if ix.All[i].Topic != ix.All[0].Topic || ix.All[i].Partition != ix.All[0].Partition {
					return fmt.Errorf("one call holds %s-%d and %s-%d", ix.All[0].Topic, ix.All[0].Partition, ix.All[i].Topic, ix.All[i].Partition)
				}
			}
			got.Entries = append(got.Entries, ix.Entries...)
			got.All = append(got.All, ix.All...)
			got.Superseded += ix.Superseded
			got.IndexObjects += ix.IndexObjects
			return nil
		})
		if err != nil {
			t.Fatal(err)
		}
		if calls != 10 {
			t.Fatalf("%+v: %d calls, want one per partition (10)", opt, calls)
		}
		sortEntries(got.Entries)
		sortEntries(got.All)
		same(t, fmt.Sprintf("%+v", opt), &got, whole)
	}
	if err := index.EachPartition(context.Background(), mem, prefix, []string{"payments"}, index.LoadOptions{}, func(ix *index.Index) error {
		if ix.All[0].Topic != "payments" {
			return fmt.Errorf("topic %q, only payments asked for", ix.All[0].Topic)
		}
		return nil
	}); err != nil {
		t.Fatal(err)
	}
	stop := errors.New("stop")
	if err := index.EachPartition(context.Background(), mem, prefix, nil, index.LoadOptions{}, func(*index.Index) error { return stop }); !errors.Is(err, stop) {
		t.Fatalf("EachPartition = %v, want the function's error", err)
	}
}

// sortEntries puts entries in the order LoadWith gives (topic, partition,
// first offset, key, then decreasing commit).
func sortEntries(es []index.Entry) {
	slices.SortStableFunc(es, func(a, b index.Entry) int {
		return cmp.Or(cmp.Compare(a.Topic, b.Topic), cmp.Compare(a.Partition, b.Partition),
			cmp.Compare(a.First(), b.First()), cmp.Compare(a.Key, b.Key), cmp.Compare(b.Commit, a.Commit))
	})
}
