package restore

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"runtime"
	"slices"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/kafkas3/kafkas3/format"
	"github.com/kafkas3/kafkas3/s3store"
)

// openLog is a store that records which keys were opened, in order.
type openLog struct {
	s3store.Store
	mu   sync.Mutex
	keys []string
	// onOpen, when set, is called with each key and how many times it has
	// been opened, this time included.
	onOpen func(key string, n int)
}

func (o *openLog) Open(ctx context.Context, key string) (io.ReadCloser, error) {
	o.mu.Lock()
	o.keys = append(o.keys, key)
	o.mu.Unlock()
	if o.onOpen != nil {
		o.onOpen(key, o.count(key))
	}
	return o.Store.Open(ctx, key)
}

func (o *openLog) count(key string) int {
	o.mu.Lock()
	defer o.mu.Unlock()
	n := 0
	for _, k := range o.keys {
		if k == key {
			n++
		}
	}
	return n
}

// TestRestoreKeepsTheProofsFirstObjects: the first object of each
// partition is read once, by the proof, and produced from that read; the
// others are read by the proof and again to be produced. Every property of
// every record (nil and empty keys, values and header values, duplicate
// headers, timestamps) comes back, in order, and the memory the kept
// records took is given back.
func TestRestoreKeepsTheProofsFirstObjects(t *testing.T) {
	brokers := newCluster(t, 2, "dst")
	a := newArchive(t, fullFormat{})
	want := map[int32][]*format.Record{}
	keys := map[int32][]string{}
	for p := range int32(2) {
		for obj := range 3 {
			var recs []*format.Record
			for i := range 50 {
				n := obj*50 + i
				rec := &format.Record{Value: fmt.Appendf(nil, "v%d-%d", p, n), Timestamp: timeAt(n)}
				switch n % 4 {
				case 0:
					rec.Key = nil
				case 1:
					rec.Key, rec.Value = []byte{}, []byte{}
				default:
					rec.Key = fmt.Appendf(nil, "k%d", n)
				}
				if n%3 == 0 {
					rec.Headers = []format.Header{{Key: "h", Value: nil}, {Key: "h", Value: []byte{}}, {Key: "x", Value: []byte("y")}}
				}
				recs = append(recs, rec)
			}
			keys[p] = append(keys[p], a.put("src", p, int64(obj*50), recs))
			want[p] = append(want[p], recs...)
		}
	}
	st := &openLog{Store: a.store}
	cfg := baseConfig(brokers, a.f, "src")
	cfg.Rename = "dst"
	r, err := New(cfg, st, nil)
	if err != nil {
		t.Fatal(err)
	}
	if sum, err := r.Run(testContext(t), nil); err != nil || sum.Records != 300 {
		t.Fatalf("restore: %+v, %v", sum, err)
	}
	for p := range int32(2) {
		for i, key := range keys[p] {
			wantOpens := 2 // the proof, then the production
			if i == 0 {
				wantOpens = 1 // produced from the proof's read
			}
			if n := st.count(key); n != wantOpens {
				t.Errorf("object %d of partition %d (%s) opened %d times, want %d", i, p, key, n, wantOpens)
			}
		}
	}
	if r.mem.peak.Load() == 0 || r.mem.used.Load() != 0 {
		t.Fatalf("memory budget: peak %d, %d still taken", r.mem.peak.Load(), r.mem.used.Load())
	}
	got := readTopic(t, brokers, "dst")
	for p := range int32(2) {
		if len(got[p]) != len(want[p]) {
			t.Fatalf("dst/%d: %d records, want %d", p, len(got[p]), len(want[p]))
		}
		for i, w := range want[p] {
			if !sameRecord(got[p][i], w) || !got[p][i].Timestamp.Equal(w.Timestamp) {
				t.Fatalf("dst/%d record %d: key %q value %q headers %v, want %q %q %v", p, i, got[p][i].Key, got[p][i].Value, got[p][i].Headers, w.Key, w.Value, w.Headers)
			}
		}
	}
}

// TestKeepingStaysWithinItsBudget: an object whose records do not fit in
// the half of the memory budget keeping may take is not kept (nothing of
// it spills) and is read again to be produced; the restore is exact.
func TestKeepingStaysWithinItsBudget(t *testing.T) {
	brokers := newCluster(t, 1, "dst")
	a := newArchive(t, format.NewJSON())
	big := a.put("src", 0, 0, offsetValues("v"+string(bytes.Repeat([]byte("x"), 200)), 0, 100))
	small := a.putAt("src", 0, 100, 5)
	st := &openLog{Store: a.store}
	cfg := baseConfig(brokers, a.f, "src")
	cfg.Rename, cfg.CreateTopics, cfg.Parallelism, cfg.SpillBytes, cfg.TempDir = "dst", true, 1, 20000, t.TempDir()
	r, err := New(cfg, st, nil)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := r.Run(testContext(t), nil); err != nil {
		t.Fatal(err)
	}
	if n := st.count(big); n != 2 {
		t.Fatalf("the object too large to keep was opened %d times, want 2", n)
	}
	if n := st.count(small); n != 2 {
		t.Fatalf("the second object was opened %d times, want 2", n)
	}
	if p := r.keepBudget.peak.Load(); p > r.keepBudget.limit || r.keepBudget.limit != 10000 {
		t.Fatalf("kept %d bytes, keeping's budget %d", p, r.keepBudget.limit)
	}
	want := append(offsetValues("v"+string(bytes.Repeat([]byte("x"), 200)), 0, 100), offsetValues("v", 100, 5)...)
	checkValues(t, "dst/0", readTopic(t, brokers, "dst")[0], want)
}

// TestKeptRecordsReleased: kept records are given back when the run stops
// before producing (a gap), and a dry run keeps nothing.
func TestKeptRecordsReleased(t *testing.T) {
	brokers := newCluster(t, 1)
	a := newArchive(t, format.NewJSON())
	a.putAt("src", 0, 0, 3)
	a.putAt("src", 0, 6, 3) // 3..5 missing
	cfg := baseConfig(brokers, a.f, "src")
	cfg.Rename, cfg.CreateTopics = "dst", true
	r := mustNew(t, cfg, a, nil)
	if _, err := r.Run(testContext(t), nil); !errors.Is(err, ErrGaps) {
		t.Fatalf("err = %v, want ErrGaps", err)
	}
	if r.mem.peak.Load() == 0 || r.mem.used.Load() != 0 {
		t.Fatalf("after a run stopped by a gap: peak %d, %d still taken", r.mem.peak.Load(), r.mem.used.Load())
	}
	cfg.DryRun = true
	r = mustNew(t, cfg, a, nil)
	if _, err := r.Run(testContext(t), nil); err != nil && !errors.Is(err, ErrGaps) {
		t.Fatal(err)
	}
	if p := r.mem.peak.Load(); p != 0 {
		t.Fatalf("a dry run kept %d bytes", p)
	}
}

// startLog is an Observer that closes started when the stream of
// partition part starts.
type startLog struct {
	nopObserver
	part    int32
	once    sync.Once
	started chan struct{}
}

func (l *startLog) Stream(_ string, p int32) StreamObserver {
	if p == l.part {
		l.once.Do(func() { close(l.started) })
	}
	return nopObserver{}
}

// TestKeptPartitionsNeedNoPlace: a partition whose records the proof kept
// reads nothing and starts without one of Config.Parallelism's places:
// with Parallelism 1, partition 1 (kept) starts while partition 0, whose
// object was too large to keep, holds the place reading it again (its
// production read waits for partition 1's start, at most 10 s). Every
// partition is restored exactly.
func TestKeptPartitionsNeedNoPlace(t *testing.T) {
	brokers := newCluster(t, 1)
	a := newArchive(t, format.NewJSON())
	long := "v" + string(bytes.Repeat([]byte("x"), 200))
	big := a.put("src", 0, 0, offsetValues(long, 0, 100))
	a.putAt("src", 1, 0, 5)
	starts := &startLog{part: 1, started: make(chan struct{})}
	var timedOut atomic.Bool
	st := &openLog{Store: a.store, onOpen: func(key string, n int) {
		if key == big && n == 2 { // the proof's read, then the production's
			select {
			case <-starts.started:
			case <-time.After(10 * time.Second):
				timedOut.Store(true)
			}
		}
	}}
	cfg := baseConfig(brokers, a.f, "src")
	cfg.Rename, cfg.CreateTopics, cfg.Parallelism, cfg.SpillBytes, cfg.TempDir = "dst", true, 1, 20000, t.TempDir()
	cfg.Observer = starts
	r, err := New(cfg, st, nil)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := r.Run(testContext(t), nil); err != nil {
		t.Fatal(err)
	}
	if n := st.count(big); n != 2 {
		t.Fatalf("the object too large to keep was opened %d times, want 2", n)
	}
	if timedOut.Load() {
		t.Fatal("partition 1, whose records were kept, did not start while partition 0 held the only place")
	}
	got := readTopic(t, brokers, "dst")
	checkValues(t, "dst/0", got[0], offsetValues(long, 0, 100))
	checkValues(t, "dst/1", got[1], offsetValues("v", 0, 5))
}

// TestProofCopiesNoValueItDoesNotKeep: the proof of an object whose
// records it does not keep (a plan alone, or an object past keeping's
// budget) reads the values without copying them (format.Transient):
// planning 2,000 JSON events of 1 KiB allocates less than a quarter of
// their 2 MB; the same proof with the object kept copies them all.
func TestProofCopiesNoValueItDoesNotKeep(t *testing.T) {
	a := newArchive(t, format.NewJSON())
	recs := make([]*format.Record, 2000)
	for i := range recs {
		recs[i] = &format.Record{Value: fmt.Appendf(nil, `{"i":%d,"pad":"%s"}`, i, bytes.Repeat([]byte("p"), 1000))}
	}
	a.put("src", 0, 0, recs)
	cfg := baseConfig(nil, a.f, "src")
	cfg.DryRun = true
	allocs := func(keep bool) uint64 {
		r := mustNew(t, cfg, a, nil)
		r.keepProofs = keep
		var before, after runtime.MemStats
		runtime.GC()
		runtime.ReadMemStats(&before)
		plan, err := r.Plan(testContext(t))
		runtime.ReadMemStats(&after)
		if err != nil {
			t.Fatal(err)
		}
		if plan.Topics[0].Records != 2000 {
			t.Fatalf("planned %d records, want 2000", plan.Topics[0].Records)
		}
		releaseKept(plan)
		return after.TotalAlloc - before.TotalAlloc
	}
	kept, transient := allocs(true), allocs(false)
	if kept < 2_000_000 || transient > 500_000 {
		t.Fatalf("the proof allocated %d bytes keeping the object, %d not keeping it; want ≥ 2,000,000 and ≤ 500,000", kept, transient)
	}
}

// TestSplitKept: a partition takes a place when it reads an object the
// proof did not keep, or verifies the target's records before resuming
// (a consumer per partition); one that only produces kept records, fresh
// or trusted, takes none. Each group keeps the jobs' order.
func TestSplitKept(t *testing.T) {
	r := &Restorer{cfg: Config{VerifyRecords: 10}}
	kept := func() *keptObject {
		k := &keptObject{}
		k.buf.Store(&recordBuffer{})
		return k
	}
	part := func(k *keptObject) PartitionPlan {
		return PartitionPlan{Objects: []Object{{kept: k}}, segments: []segment{{obj: 0, from: 0, to: 100}}}
	}
	jobs := []job{
		{part: part(kept()), start: 0, end: 0},               // fresh, kept: no place
		{part: part(nil), start: 0, end: 0},                  // reads its object again
		{part: part(kept()), start: 5, end: 50},              // resumes: verifies the target
		{part: part(kept()), start: 5, end: 50, trust: true}, // resumes, trusted: no read
		{part: part(&keptObject{}), start: 0, end: 0},        // marked, but the proof did not keep it
	}
	for i := range jobs {
		jobs[i].low = int64(i) // to tell them apart
	}
	reading, keptOnly := r.splitKept(jobs)
	ids := func(js []job) (out []int64) {
		for _, j := range js {
			out = append(out, j.low)
		}
		return out
	}
	if got, want := ids(reading), []int64{1, 2, 4}; !slices.Equal(got, want) {
		t.Fatalf("reading %v, want %v", got, want)
	}
	if got, want := ids(keptOnly), []int64{0, 3}; !slices.Equal(got, want) {
		t.Fatalf("kept only %v, want %v", got, want)
	}
}
