package restore

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/kafkas3/kafkas3/format"
	"github.com/twmb/franz-go/pkg/kfake"
	"github.com/twmb/franz-go/pkg/kmsg"
)

// TestPrefetchLoadsOneAhead: the prefetcher loads the next object while
// the stream has the current one, and no further: after the stream took
// object 0 it loads object 1 without being asked, and object 2 only once
// object 1 is taken. Objects come out in the order given, each once.
func TestPrefetchLoadsOneAhead(t *testing.T) {
	ctx, cancel := context.WithCancelCause(testContext(t))
	defer cancel(nil)
	var mu sync.Mutex
	var loads []int
	loaded := make(chan int, 10)
	load := func(_ context.Context, i int) (*loadedObject, error) {
		mu.Lock()
		loads = append(loads, i)
		mu.Unlock()
		loaded <- i
		return &loadedObject{buf: newRecordBuffer(1, "", nil), facts: objectFacts{records: int64(i)}}, nil
	}
	p := startPrefetch(ctx, []int{4, 1, 7}, load, nil, 0)
	waitLoad := func(want int) {
		t.Helper()
		select {
		case got := <-loaded:
			if got != want {
				t.Fatalf("loaded object %d, want %d", got, want)
			}
		case <-time.After(10 * time.Second):
			t.Fatalf("object %d was not loaded ahead", want)
		}
	}
	waitLoad(4)
	if lo, err := p.take(ctx, 4); err != nil || lo.facts.records != 4 {
		t.Fatalf("take(4) = %+v, %v", lo, err)
	}
	waitLoad(1) // loaded while the stream holds object 4
	time.Sleep(50 * time.Millisecond)
	mu.Lock()
	n := len(loads)
	mu.Unlock()
	if n != 2 {
		t.Fatalf("loads %v before object 1 was taken: more than one object ahead", loads)
	}
	if _, err := p.take(ctx, 1); err != nil {
		t.Fatal(err)
	}
	waitLoad(7)
	if _, err := p.take(ctx, 1); !errors.Is(err, errPrefetchOrder) {
		t.Fatalf("taking object 1 again: %v, want errPrefetchOrder", err)
	}
	cancel(nil)
	p.wait()
}

// TestPrefetchStopsOnError: a failed load is handed over in its place,
// and nothing after it is loaded; a cancelled stream's prefetcher returns
// and releases what it loaded.
func TestPrefetchStopsOnError(t *testing.T) {
	boom := errors.New("boom")
	var calls []int
	load := func(_ context.Context, i int) (*loadedObject, error) {
		calls = append(calls, i)
		if i == 1 {
			return nil, boom
		}
		return &loadedObject{buf: newRecordBuffer(1, "", nil)}, nil
	}
	ctx, cancel := context.WithCancelCause(testContext(t))
	p := startPrefetch(ctx, []int{0, 1, 2}, load, nil, 0)
	if _, err := p.take(ctx, 0); err != nil {
		t.Fatal(err)
	}
	if _, err := p.take(ctx, 1); !errors.Is(err, boom) {
		t.Fatalf("take(1) = %v, want the load's error", err)
	}
	p.wait()
	if fmt.Sprint(calls) != "[0 1]" {
		t.Fatalf("loads %v, want [0 1]", calls)
	}
	cancel(nil)

	// Cancelled while an object waits to be taken.
	budget := newMemBudget(1 << 20)
	ctx, cancel = context.WithCancelCause(testContext(t))
	p = startPrefetch(ctx, []int{0}, func(context.Context, int) (*loadedObject, error) {
		b := newRecordBuffer(1<<20, "", budget)
		if err := b.add(&format.Record{Value: []byte("v")}); err != nil {
			return nil, err
		}
		return &loadedObject{buf: b}, nil
	}, nil, 0)
	for budget.used.Load() == 0 {
		time.Sleep(time.Millisecond)
	}
	cancel(errors.New("stop"))
	p.wait()
	if u := budget.used.Load(); u != 0 {
		t.Fatalf("%d bytes of the budget still used after the prefetcher stopped", u)
	}
}

// TestLoadOrder: the objects a stream loads, in the order it first needs
// them, leaving out the segments skipped unread.
func TestLoadOrder(t *testing.T) {
	segs := []segment{{obj: 0, from: 0, to: 10}, {obj: 1, from: 0, to: 5}, {obj: 0, from: 10, to: 20}, {obj: 2, from: 0, to: 5}, {obj: 1, from: 5, to: 10}}
	for _, tc := range []struct {
		skip int64
		want string
	}{
		{0, "[0 1 2]"}, {9, "[0 1 2]"}, {10, "[1 0 2]"}, {15, "[0 2 1]"}, {25, "[2 1]"}, {30, "[1]"}, {35, "[]"}, {100, "[]"},
	} {
		if got := fmt.Sprint(loadOrder(segs, tc.skip)); got != tc.want {
			t.Errorf("loadOrder(skip %d) = %s, want %s", tc.skip, got, tc.want)
		}
	}
}

// TestRecordBuffersShareTheBudget: loaded objects together keep at most
// the budget in memory; what does not fit goes to their temporary files,
// and every record comes back, in order. Handing a record over and closing
// a buffer give its bytes back.
func TestRecordBuffersShareTheBudget(t *testing.T) {
	dir := t.TempDir()
	budget := newMemBudget(5000)
	var bufs []*recordBuffer
	var want [][]*format.Record
	for b := range 3 {
		buf := newRecordBuffer(4000, dir, budget)
		bufs = append(bufs, buf)
		var recs []*format.Record
		for i := range 20 {
			rec := &format.Record{Key: fmt.Appendf(nil, "k%d-%d", b, i), Value: bytes.Repeat([]byte{byte(i)}, 100)}
			if err := buf.add(rec); err != nil {
				t.Fatal(err)
			}
			recs = append(recs, rec)
		}
		want = append(want, recs)
		if used := budget.used.Load(); used > budget.limit {
			t.Fatalf("after object %d: %d bytes in memory, budget %d", b, used, budget.limit)
		}
	}
	if !bufs[1].Spilled() || !bufs[2].Spilled() {
		t.Fatal("objects past the budget did not spill")
	}
	if p := budget.peak.Load(); p > budget.limit || p < budget.limit-300 {
		t.Fatalf("peak %d, budget %d", p, budget.limit)
	}
	for b, buf := range bufs {
		if err := buf.rewind(); err != nil {
			t.Fatal(err)
		}
		for i, w := range want[b] {
			got, err := buf.get()
			if err != nil || !bytes.Equal(got.Key, w.Key) || !bytes.Equal(got.Value, w.Value) {
				t.Fatalf("object %d record %d: %+v, %v", b, i, got, err)
			}
			if i == 9 && b == 0 {
				buf.close() // half handed over
				break
			}
		}
		buf.close()
	}
	if u := budget.used.Load(); u != 0 {
		t.Fatalf("%d bytes still taken after every buffer closed", u)
	}
}

// TestRestoreWithinMemoryBudget restores partitions of several objects each,
// read one ahead, with a budget (Parallelism × SpillBytes) far below the
// decoded archive: the decoded records kept in memory never exceed it,
// the rest goes through the temporary files, every bit of the budget is
// given back, and every partition holds exactly its records, in order.
func TestRestoreWithinMemoryBudget(t *testing.T) {
	const parts, perObject, objects = 3, 200, 4
	brokers := newCluster(t, parts, "dst")
	a := newArchive(t, format.NewJSON())
	want := map[int32][]*format.Record{}
	for p := range int32(parts) {
		for o := range objects {
			a.putAt("src", p, o*perObject, perObject)
		}
		want[p] = offsetValues("v", 0, objects*perObject)
	}
	cfg := baseConfig(brokers, a.f, "src")
	cfg.Rename, cfg.Parallelism, cfg.SpillBytes, cfg.TempDir = "dst", 2, 8000, t.TempDir()
	r := mustNew(t, cfg, a, nil)
	sum, err := r.Run(testContext(t), nil)
	if err != nil || sum.Records != parts*objects*perObject {
		t.Fatalf("restore: %+v, %v", sum, err)
	}
	// Each object decodes to about 200 × 100 bytes, five times its share.
	if peak, limit := r.mem.peak.Load(), r.mem.limit; peak > limit || peak == 0 || limit != 16000 {
		t.Fatalf("peak %d bytes of decoded records in memory, budget %d", peak, limit)
	}
	if u := r.mem.used.Load(); u != 0 {
		t.Fatalf("%d bytes of the budget still taken after the restore", u)
	}
	got := readTopic(t, brokers, "dst")
	for p := range int32(parts) {
		checkValues(t, fmt.Sprintf("dst/%d", p), got[p], want[p])
	}
}

// TestPartitionWaitingForAcksFreesItsPlace: with Parallelism 1, the next
// partition starts reading once the first has handed all its records to
// the producer, while the broker has not answered the first produce
// request yet: a partition waiting for acknowledgements does not hold its
// place. Both partitions end up exact.
func TestPartitionWaitingForAcksFreesItsPlace(t *testing.T) {
	c, err := kfake.NewCluster(kfake.NumBrokers(1), kfake.SeedTopics(2, "dst"))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(c.Close)
	brokers := c.ListenAddrs()
	a := newArchive(t, format.NewJSON())
	a.putAt("src", 0, 0, 50)
	second := a.putAt("src", 1, 0, 50)
	started := make(chan struct{}) // partition 1's object opened to be produced
	st := &openLog{Store: a.store, onOpen: func(key string, n int) {
		if key == second && n == 2 { // the proof's read, then the production's
			close(started)
		}
	}}
	var held, timedOut atomic.Bool
	c.ControlKey(int16(kmsg.Produce), func(kmsg.Request) (kmsg.Response, error, bool) {
		if held.CompareAndSwap(false, true) {
			c.SleepControl(func() {
				select {
				case <-started:
				case <-time.After(10 * time.Second):
					timedOut.Store(true)
				}
			})
		}
		return nil, nil, false
	})
	cfg := baseConfig(brokers, a.f, "src")
	cfg.Rename, cfg.Parallelism = "dst", 1
	r, err := New(cfg, st, nil)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := r.Run(testContext(t), nil); err != nil {
		t.Fatal(err)
	}
	if timedOut.Load() || !held.Load() {
		t.Fatal("partition 1 was not read while partition 0's first produce request was unanswered")
	}
	got := readTopic(t, brokers, "dst")
	checkValues(t, "dst/0", got[0], offsetValues("v", 0, 50))
	checkValues(t, "dst/1", got[1], offsetValues("v", 0, 50))
}

// TestPrefetchLoadsSmallObjectsAtOnce: with sizes, objects smaller than
// the limit together are loaded several at once, at most prefetchMax
// ahead, and handed over in order, each once; a failed load is handed
// over in its place, nothing after it, and every object loaded after it
// is released.
func TestPrefetchLoadsSmallObjectsAtOnce(t *testing.T) {
	const n = 100
	order := make([]int, n)
	for i := range order {
		order[i] = n - 1 - i
	}
	var cur, peak atomic.Int64
	budget := newMemBudget(1 << 30)
	load := func(fail int) func(context.Context, int) (*loadedObject, error) {
		return func(_ context.Context, i int) (*loadedObject, error) {
			c := cur.Add(1)
			for p := peak.Load(); c > p && !peak.CompareAndSwap(p, c); p = peak.Load() {
			}
			time.Sleep(5 * time.Millisecond)
			cur.Add(-1)
			if i == fail {
				return nil, fmt.Errorf("boom %d", i)
			}
			b := newRecordBuffer(1<<20, "", budget)
			if err := b.add(&format.Record{Value: []byte("v")}); err != nil {
				return nil, err
			}
			return &loadedObject{buf: b, facts: objectFacts{records: int64(i)}}, nil
		}
	}
	small := func(int) int64 { return 1 << 10 }
	ctx := testContext(t)
	p := startPrefetch(ctx, order, load(-1), small, 4<<20)
	for _, i := range order {
		lo, err := p.take(ctx, i)
		if err != nil || lo.facts.records != int64(i) {
			t.Fatalf("take(%d) = %+v, %v", i, lo, err)
		}
		lo.buf.close()
	}
	p.wait()
	if pk := peak.Load(); pk < 2 || pk > prefetchMax+1 {
		t.Errorf("%d loads at once at most, want between 2 and %d", pk, prefetchMax+1)
	}

	p = startPrefetch(ctx, order, load(50), small, 4<<20)
	for _, i := range order {
		lo, err := p.take(ctx, i)
		if i == 50 {
			if err == nil || err.Error() != "boom 50" {
				t.Fatalf("take(50) = %v, want the load's error", err)
			}
			break
		}
		if err != nil {
			t.Fatalf("take(%d): %v", i, err)
		}
		lo.buf.close()
	}
	p.wait()
	if u := budget.used.Load(); u != 0 {
		t.Fatalf("%d bytes of the budget still used after the prefetcher stopped", u)
	}
}
