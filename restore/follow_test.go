package restore

import (
	"context"
	"errors"
	"fmt"
	"io"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/kafkas3/kafkas3/checkpoint"
	"github.com/kafkas3/kafkas3/format"
	"github.com/kafkas3/kafkas3/index"
	"github.com/kafkas3/kafkas3/s3store"
)

// indexCounting counts the store requests of the archive index: opens
// (GETs) and listings, and the keys those listings give.
type indexCounting struct {
	s3store.Store
	mu                    sync.Mutex
	gets, lists, listKeys int
}

func (c *indexCounting) Open(ctx context.Context, key string) (io.ReadCloser, error) {
	if strings.HasPrefix(key, index.DefaultPrefix) {
		c.mu.Lock()
		c.gets++
		c.mu.Unlock()
	}
	return c.Store.Open(ctx, key)
}

func (c *indexCounting) List(ctx context.Context, prefix string, fn func(s3store.ObjectInfo) error) error {
	if !strings.HasPrefix(prefix, index.DefaultPrefix) {
		return c.Store.List(ctx, prefix, fn)
	}
	c.mu.Lock()
	c.lists++
	c.mu.Unlock()
	return c.Store.List(ctx, prefix, func(info s3store.ObjectInfo) error {
		c.mu.Lock()
		c.listKeys++
		c.mu.Unlock()
		return fn(info)
	})
}

// ListAfter is an S3 listing with StartAfter: the keys after after only.
func (c *indexCounting) ListAfter(ctx context.Context, prefix, after string, fn func(s3store.ObjectInfo) error) error {
	if !strings.HasPrefix(prefix, index.DefaultPrefix) {
		return s3store.ListAfter(ctx, c.Store, prefix, after, fn)
	}
	c.mu.Lock()
	c.lists++
	c.mu.Unlock()
	return s3store.ListAfter(ctx, c.Store, prefix, after, func(info s3store.ObjectInfo) error {
		c.mu.Lock()
		c.listKeys++
		c.mu.Unlock()
		return fn(info)
	})
}

// counts returns the counters.
func (c *indexCounting) counts() [3]int {
	c.mu.Lock()
	defer c.mu.Unlock()
	return [3]int{c.gets, c.lists, c.listKeys}
}

// passLog is a Progress that notes, at the start of each pass (after its
// plan), the index requests so far and the state the Restorer keeps.
type passLog struct {
	nopProgress
	st *indexCounting
	r  *Restorer

	mu      sync.Mutex
	counts  [][3]int
	kept    []int
	objects []int // the objects of each pass's plan
}

func (p *passLog) Planned(t Totals) {
	c, k := p.st.counts(), p.r.retained()
	p.mu.Lock()
	defer p.mu.Unlock()
	p.counts = append(p.counts, c)
	p.kept = append(p.kept, k)
	p.objects = append(p.objects, t.Objects)
}

// newFollower returns a follow restore of a (indexed) into brokers,
// polling every 5 ms, reading each object once (once) or proving the
// archive first, with the passLog of its passes.
func newFollower(t *testing.T, a *archive, brokers []string, once bool) (*Restorer, *passLog) {
	t.Helper()
	cfg := indexedConfig(brokers, a)
	cfg.Follow, cfg.PollInterval, cfg.ReadOnce = true, 5*time.Millisecond, once
	st := &indexCounting{Store: a.store}
	r, err := New(cfg, st, nil)
	if err != nil {
		t.Fatal(err)
	}
	return r, &passLog{st: st, r: r}
}

func (p *passLog) passes() int {
	p.mu.Lock()
	defer p.mu.Unlock()
	return len(p.counts)
}

// TestFollowReadsOnlyTheNewIndex: a follow restore of two indexed
// partitions over many passes, the sink adding a rotation to each
// partition between them (and a checkpoint every 4 rotations, as
// kafkas3.index.checkpoint.interval does). (a) The target holds the
// archive record by record. (b) Each plan after the first reads (GETs)
// only the index objects added since the last one, and checkpoints'
// first lines (each index object is read once in the whole run); its
// listings are a fixed number, and their keys do not grow with the log
// (from the lowest live checkpoint on), where a plan that loads the
// index again (index.LoadWith) would read every index object above the
// checkpoints and grow with them. (c) The state the Restorer keeps across
// passes (Restorer.retained: the proofs, the per-pass byte set, the
// stream summaries, the target memos, the index entries its Tails hold)
// stays within one per partition and the objects of one rotation,
// however many passes restored objects (before, every object's proof and
// key were kept, and every index entry). (d) Each plan after the first
// holds only the objects added since the last pass (the marks, prune.go),
// and the run's summary still counts every object. With the
// whole-archive proof (--prove-first) and with one read per object.
func TestFollowReadsOnlyTheNewIndex(t *testing.T) {
	for _, once := range []bool{false, true} {
		t.Run(fmt.Sprintf("read once %v", once), func(t *testing.T) { followNewIndex(t, once) })
	}
}

func followNewIndex(t *testing.T, once bool) {
	const rounds, per = 30, 5
	a := newArchive(t, format.NewJSON())
	want := map[int32][]*format.Record{}
	next := map[int32]int64{}
	ctx := context.Background()
	rotate := func(p int32) {
		recs := values(fmt.Sprintf("p%d", p), int(next[p]), per)
		key := a.put("src", p, next[p], recs)
		a.writeIndex("src", p, next[p]+per, indexed{key: key, runs: []index.Run{{First: next[p], Last: next[p] + per - 1}}, from: next[p]})
		want[p] = append(want[p], recs...)
		next[p] += per
	}
	ckpt := func(p int32) {
		part := checkpoint.Partition{Prefix: index.DefaultPrefix, Topic: "src", Partition: p}
		if _, err := checkpoint.Write(ctx, a.store, part, next[p], 4); err != nil {
			t.Fatal(err)
		}
	}
	for p := range int32(2) {
		if _, err := checkpoint.Begin(ctx, a.store, checkpoint.Partition{Prefix: index.DefaultPrefix, Topic: "src", Partition: p}, 0, 4); err != nil {
			t.Fatal(err)
		}
		for range 3 {
			rotate(p)
		}
		ckpt(p)
	}
	brokers := newCluster(t, 2, "dst")
	r, log := newFollower(t, a, brokers, once)
	runCtx, cancel := context.WithCancel(testContext(t))
	done := make(chan error, 1)
	var sum Summary
	go func() {
		var err error
		sum, err = r.Run(runCtx, log)
		done <- err
	}()
	waitPasses := func(n int) {
		t.Helper()
		for deadline := time.Now().Add(20 * time.Second); log.passes() < n; time.Sleep(2 * time.Millisecond) {
			if time.Now().After(deadline) {
				t.Fatalf("%d passes, want %d", log.passes(), n)
			}
		}
	}
	waitTarget := func() {
		t.Helper()
		for deadline := time.Now().Add(20 * time.Second); ; time.Sleep(5 * time.Millisecond) {
			got := readTopic(t, brokers, "dst")
			if len(got[0]) == len(want[0]) && len(got[1]) == len(want[1]) {
				return
			}
			if time.Now().After(deadline) {
				t.Fatalf("the target holds %d and %d records, want %d and %d", len(got[0]), len(got[1]), len(want[0]), len(want[1]))
			}
		}
	}
	waitTarget()
	added := 0 // index objects and checkpoints added after the first plan
	for round := range rounds {
		for p := range int32(2) {
			rotate(p)
			added++
			if round%4 == 3 {
				ckpt(p)
				added++
			}
		}
		waitTarget()
		waitPasses(log.passes() + 2) // a pass with nothing new
	}
	cancel()
	if err := <-done; err != nil && !strings.Contains(err.Error(), context.Canceled.Error()) {
		t.Fatal(err)
	}
	// (a)
	got := readTopic(t, brokers, "dst")
	checkValues(t, "dst/0", got[0], want[0])
	checkValues(t, "dst/1", got[1], want[1])
	// (b)
	counts := log.counts
	first := counts[0]
	last := counts[len(counts)-1]
	if gets := last[0] - first[0]; gets > added || gets < added-rounds/4*2 {
		t.Fatalf("the plans after the first read %d index objects and checkpoints, want the %d index objects added (and at most the %d checkpoints' first lines)", gets, added-rounds/4*2, rounds/4*2)
	}
	maxLists, maxKeys := 0, 0
	for i := 1; i < len(counts); i++ {
		maxLists = max(maxLists, counts[i][1]-counts[i-1][1])
		maxKeys = max(maxKeys, counts[i][2]-counts[i-1][2])
	}
	logObjects := 2 * (3 + rounds)
	// Per plan: the skip scan of the topic (3 requests, 2 keys), per
	// partition its checkpoints (keys only: Begin's, the first, one per 4
	// rotations) and its log from the lowest live checkpoint on (at most
	// 4 rotations and the one at the checkpoint), and the topic's
	// descriptions (describeArchived).
	if maxLists > 3+2*2+1 || maxKeys > 2+2*(2+rounds/4+5) {
		t.Fatalf("a plan listed %d times, %d keys (the log holds %d index objects)", maxLists, maxKeys, logObjects)
	}
	full := &indexCounting{Store: a.store}
	if _, err := index.Load(ctx, full, index.DefaultPrefix, []string{"src"}); err != nil {
		t.Fatal(err)
	}
	t.Logf("%d passes; the plans after the first read %d index objects, listed at most %d times and %d keys per plan; a load of the index now: %v (GETs, lists, keys)",
		len(counts), last[0]-first[0], maxLists, maxKeys, full.counts())
	// (c) Noted after each plan: a stream summary and a target memo per
	// partition, the proofs of the objects that plan read and the index
	// entries of the Tail (a rotation of each partition at most), let go
	// when its pass completes.
	for i, k := range log.kept[1:] {
		if k > 2*2+2+2 {
			t.Fatalf("after pass %d the Restorer keeps %d items (%v): it grows with what was restored", i+1, k, log.kept)
		}
	}
	// (d)
	if log.objects[0] != 2*3 {
		t.Fatalf("the first plan holds %d objects, want %d", log.objects[0], 2*3)
	}
	for i, n := range log.objects[1:] {
		if n > 2 {
			t.Fatalf("plan %d holds %d objects (%v): more than the rotations added since the last pass", i+2, n, log.objects)
		}
	}
	if sum.Objects != logObjects {
		t.Fatalf("the summary counts %d objects, the archive holds %d", sum.Objects, logObjects)
	}
}

// TestFollowKeepsSkippingADamagedObject: --follow with
// behavior.on.error=log (so the whole-archive proof) over an indexed
// archive with a damaged object (same size, a flipped bit): the first
// pass skips it, and later passes, which prove the objects restored
// before from their index entries instead of keeping their proofs, still
// read it, find it damaged and skip it, rather than taking it for
// restorable and stopping on a changed stream (or producing it).
func TestFollowKeepsSkippingADamagedObject(t *testing.T) {
	a := newArchive(t, format.NewJSON())
	at := func(start int) {
		key := a.putAt("src", 0, start, 5)
		a.writeIndex("src", 0, int64(start+5), indexed{key: key, runs: []index.Run{{First: int64(start), Last: int64(start + 4)}}, from: int64(start)})
		if start == 5 {
			a.damage(key, flip)
		}
	}
	at(0)
	at(5)
	at(10)
	brokers := newCluster(t, 1)
	cfg := indexedConfig(brokers, a)
	cfg.Follow, cfg.PollInterval, cfg.OnError = true, 5*time.Millisecond, OnErrorLog
	stop := followUntil(t, mustNew(t, cfg, a, nil))
	waitRecords(t, brokers, "dst", 10)
	at(15)
	waitRecords(t, brokers, "dst", 15)
	time.Sleep(100 * time.Millisecond) // more passes
	sum, err := stop()
	if err != nil || sum.Records != 15 {
		t.Fatalf("%+v, %v", sum, err)
	}
	want := append(offsetValues("v", 0, 5), offsetValues("v", 10, 10)...)
	checkValues(t, "dst/0", readTopic(t, brokers, "dst")[0], want)
}

// TestFollowPlansWholeWhenTheArchiveChangesBelowTheMark: a follow
// restore of an indexed partition whose plans leave out what earlier
// passes restored (prune.go). (a) A sink's replay restamps the entries
// of restored objects (a new index object at a later commit naming them
// again): the next plan cannot be made from the mark, the archive is
// planned whole once (its stream checked against what was restored), and
// nothing is produced twice; later plans leave out the restored objects
// again. (b) An object below the mark is rewritten with other records of
// the same size: the whole plan finds it does not match its entry, and
// the run stops naming it, producing nothing more. With one read per
// object and with the whole-archive proof.
func TestFollowPlansWholeWhenTheArchiveChangesBelowTheMark(t *testing.T) {
	for _, once := range []bool{false, true} {
		t.Run(fmt.Sprintf("read once %v", once), func(t *testing.T) { followWhole(t, once) })
	}
}

func followWhole(t *testing.T, once bool) {
	const per = 4
	a := newArchive(t, format.NewJSON())
	var want []*format.Record
	var keys []string
	next := int64(0)
	rotate := func() {
		recs := values("p0", int(next), per)
		key := a.put("src", 0, next, recs)
		a.writeIndex("src", 0, next+per, indexed{key: key, runs: []index.Run{{First: next, Last: next + per - 1}}, from: next})
		want, keys = append(want, recs...), append(keys, key)
		next += per
	}
	for range 3 {
		rotate()
	}
	brokers := newCluster(t, 1, "dst")
	r, log := newFollower(t, a, brokers, once)
	done := make(chan error, 1)
	go func() {
		_, err := r.Run(testContext(t), log)
		done <- err
	}()
	waitFor := func(what string, ok func() bool) {
		t.Helper()
		for deadline := time.Now().Add(20 * time.Second); !ok(); time.Sleep(5 * time.Millisecond) {
			if time.Now().After(deadline) {
				t.Fatalf("waiting for %s: plans held %v objects", what, log.objects)
			}
		}
	}
	restored := func() bool { return len(readTopic(t, brokers, "dst")[0]) == len(want) }
	passes := func(n int) func() bool { return func() bool { return log.passes() >= n } }
	waitFor("the first records", restored)
	rotate()
	waitFor("a rotation", restored)
	waitFor("a pass after it", passes(log.passes()+2))
	// (a) The replay: the first two objects named again at a later commit.
	a.writeIndex("src", 0, next+1, indexed{key: keys[0], runs: []index.Run{{First: 0, Last: per - 1}}, from: 0},
		indexed{key: keys[1], runs: []index.Run{{First: per, Last: 2*per - 1}}, from: per})
	at := log.passes()
	waitFor("two passes after the replay", passes(at+2))
	rotate()
	waitFor("a rotation after the replay", restored)
	waitFor("a pass after it", passes(log.passes()+2))
	got := readTopic(t, brokers, "dst")[0]
	checkValues(t, "dst/0", got, want)
	log.mu.Lock()
	objects := slices.Clone(log.objects)
	log.mu.Unlock()
	whole := 0
	for _, n := range objects[at:] {
		if n >= 4 {
			whole++
		}
	}
	if whole != 1 || objects[len(objects)-1] > 1 {
		t.Fatalf("after the replay the plans held %v objects: want one whole plan (4 or more), then the new ones only", objects[at:])
	}
	// (b)
	a.putRecords(keys[1], values("XX", per, per)) // the same size as "p0"'s
	select {
	case err := <-done:
		if !errors.Is(err, ErrDamagedObject) || !strings.Contains(err.Error(), keys[1]) {
			t.Fatalf("the run ended with %v, want the damaged %q named", err, keys[1])
		}
	case <-time.After(20 * time.Second):
		t.Fatal("the run goes on after an object below the mark was rewritten")
	}
	checkValues(t, "dst/0", readTopic(t, brokers, "dst")[0], want)
}
