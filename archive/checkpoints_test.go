package archive

import (
	"context"
	"errors"
	"fmt"
	"reflect"
	"slices"
	"strings"
	"sync"
	"testing"

	"github.com/kafkas3/kafkas3/index"
	"github.com/kafkas3/kafkas3/s3store"
	"github.com/twmb/franz-go/pkg/kadm"
	"github.com/twmb/franz-go/pkg/kgo"
)

// checkpointKeys lists the checkpoints in store.
func checkpointKeys(t *testing.T, store s3store.Store) []string {
	t.Helper()
	var keys []string
	err := store.List(context.Background(), index.CheckpointDir(index.DefaultPrefix), func(info s3store.ObjectInfo) error {
		keys = append(keys, info.Key)
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	return keys
}

// logOnly hides the checkpoints of a store.
type logOnly struct{ s3store.Store }

func (l logOnly) List(ctx context.Context, prefix string, fn func(s3store.ObjectInfo) error) error {
	return l.Store.List(ctx, prefix, func(info s3store.ObjectInfo) error {
		if strings.HasPrefix(info.Key, index.CheckpointDir(index.DefaultPrefix)) {
			return nil
		}
		return fn(info)
	})
}

// sameAsLog fails unless the index loaded with the checkpoints is the one
// the log alone gives.
func sameAsLog(t *testing.T, store s3store.Store) *index.Index {
	t.Helper()
	got := loadIndex(t, store)
	want, err := index.Load(context.Background(), logOnly{store}, index.DefaultPrefix, nil)
	if err != nil {
		t.Fatal(err)
	}
	if !reflect.DeepEqual(got.Entries, want.Entries) || !reflect.DeepEqual(got.All, want.All) ||
		got.Superseded != want.Superseded || got.IndexObjects != want.IndexObjects {
		t.Fatalf("index with checkpoints: %d entries, %d index objects; from the log: %d, %d", len(got.Entries), got.IndexObjects, len(want.Entries), want.IndexObjects)
	}
	return got
}

// TestSinkWritesCheckpoints: --once writes each partition's checkpoint
// after its final commit, covering its last index object; a second run
// adds one at its commit; the index read with them is the log's.
func TestSinkWritesCheckpoints(t *testing.T) {
	brokers := newCluster(t, 2, "ck")
	var recs []*kgo.Record
	for p := range int32(2) {
		for i := range 20 {
			recs = append(recs, &kgo.Record{Topic: "ck", Partition: p, Value: fmt.Appendf(nil, `{"i":%d}`, i)})
		}
	}
	produceRecs(t, brokers, recs...)
	store := s3store.NewMemory()
	cfg := indexConfig(brokers, "ck")
	cfg.CheckpointInterval = 3
	runSink(t, cfg, store)
	w := index.WriterOf("connect-" + cfg.Name) // the default group.id
	// flush.size 3 over 20 records: 7 index objects per partition, the
	// last at commit 20.
	for p := range int32(2) {
		last := index.CheckpointKey(index.DefaultPrefix, "ck", p, 20, w)
		if keys := checkpointKeys(t, store); !slicesContain(keys, last) {
			t.Fatalf("checkpoints %v, want %s among them", keys, last)
		}
	}
	ix := sameAsLog(t, store)
	if ix.IndexObjects != 14 || ix.Checkpoints != 2 {
		t.Fatalf("index objects %d from %d checkpoints, want 14 from 2", ix.IndexObjects, ix.Checkpoints)
	}
	produceRecs(t, brokers, &kgo.Record{Topic: "ck", Partition: 1, Value: []byte(`{"i":20}`)})
	runSink(t, cfg, store)
	if keys := checkpointKeys(t, store); !slicesContain(keys, index.CheckpointKey(index.DefaultPrefix, "ck", 1, 21, w)) {
		t.Fatalf("checkpoints after the second run %v, want one at 21", keys)
	}
	sameAsLog(t, store)
}

func slicesContain(ss []string, s string) bool {
	for _, x := range ss {
		if x == s {
			return true
		}
	}
	return false
}

// refuseCheckpoints fails every checkpoint's creation but the start
// checkpoint of a new writer (commit 0), which a run needs before its
// first index object (checkpoint.Begin; TestSinkNeedsItsStartCheckpoint).
type refuseCheckpoints struct{ s3store.Store }

func (r refuseCheckpoints) Create(ctx context.Context, key string) (s3store.ObjectWriter, error) {
	if strings.HasPrefix(key, index.CheckpointDir(index.DefaultPrefix)) && !strings.Contains(key, "/00000000000000000000-") {
		return nil, errors.New("store refuses checkpoints")
	}
	return r.Store.Create(ctx, key)
}

// TestSinkCheckpointFailureIsAWarning: a store that refuses checkpoints
// stops nothing: the run archives and commits everything, warns, and
// the index (the log alone) is complete.
func TestSinkCheckpointFailureIsAWarning(t *testing.T) {
	brokers := newCluster(t, 1, "cf")
	var recs []*kgo.Record
	for i := range 9 {
		recs = append(recs, &kgo.Record{Topic: "cf", Value: fmt.Appendf(nil, `{"i":%d}`, i)})
	}
	produceRecs(t, brokers, recs...)
	mem := s3store.NewMemory()
	cfg := indexConfig(brokers, "cf")
	cfg.CheckpointInterval = 1
	sum, log := runSinkLogged(t, cfg, refuseCheckpoints{mem})
	if sum.Records != 9 || !strings.Contains(log, "checkpoint not written") {
		t.Fatalf("records %d; log:\n%s", sum.Records, log)
	}
	if keys := checkpointKeys(t, mem); len(keys) != 1 || !strings.Contains(keys[0], "/00000000000000000000-") {
		t.Fatalf("checkpoints %v, want the start checkpoint alone", keys)
	}
	ix := sameAsLog(t, mem)
	if len(ix.Entries) != 3 {
		t.Fatalf("%d entries, want 3", len(ix.Entries))
	}
	// The next run (the store healed) checkpoints the whole log.
	produceRecs(t, brokers, &kgo.Record{Topic: "cf", Value: []byte(`{"i":9}`)})
	runSink(t, cfg, mem)
	if keys := checkpointKeys(t, mem); len(keys) != 2 || !strings.Contains(keys[1], "00000000000000000010-") {
		t.Fatalf("checkpoints %v, want the start checkpoint and one at 10", keys)
	}
	sameAsLog(t, mem)
}

// TestCheckpointsDue: a partition's checkpoint is due at its first
// committed index object of a run, then after every interval index
// objects, never past the committed offset.
func TestCheckpointsDue(t *testing.T) {
	c := newCheckpointer(&Sink{cfg: Config{CheckpointInterval: 3, GroupID: "g"}})
	k := tp{"t", 0}
	c.indexed("p/", "t", 0, 10)
	if jobs := c.due(false); len(jobs) != 0 {
		t.Fatalf("due before a commit: %v", jobs)
	}
	c.committed(k, 10)
	jobs := c.due(false)
	if len(jobs) != 1 || jobs[0].upTo != 10 || jobs[0].prefix != "p/" {
		t.Fatalf("due at the first commit: %v", jobs)
	}
	c.done(k, 10)
	c.indexed("p/", "t", 0, 20)
	c.indexed("p/", "t", 0, 30)
	c.committed(k, 30)
	if jobs := c.due(false); len(jobs) != 0 {
		t.Fatalf("due after 2 of 3: %v", jobs)
	}
	c.indexed("p/", "t", 0, 40)
	if jobs := c.due(false); len(jobs) != 1 || jobs[0].upTo != 30 {
		t.Fatalf("due after 3, committed to 30: %v", jobs)
	}
	if jobs := c.due(true); len(jobs) != 1 || jobs[0].upTo != 30 {
		t.Fatalf("flush: %v", jobs)
	}
	c.done(k, 30)
	if p := c.parts[k].pending; !reflect.DeepEqual(p, []int64{40}) {
		t.Fatalf("pending %v, want [40]", p)
	}
}

// TestSinkVoidsCheckpointsAboveItsOffset: an operator moves the group's
// offset back under the sink's checkpoint; the replay (another flush.size,
// so other index objects) writes index objects at commits it covers. The
// sink voids it before its first index object, so the index read with the
// checkpoints is still the log's.
func TestSinkVoidsCheckpointsAboveItsOffset(t *testing.T) {
	brokers := newCluster(t, 1, "rw")
	var recs []*kgo.Record
	for i := range 20 {
		recs = append(recs, &kgo.Record{Topic: "rw", Value: fmt.Appendf(nil, `{"i":%d}`, i)})
	}
	produceRecs(t, brokers, recs...)
	store := s3store.NewMemory()
	cfg := indexConfig(brokers, "rw")
	cfg.CheckpointInterval = 3
	runSink(t, cfg, store)
	w := index.WriterOf("connect-" + cfg.Name)
	if keys := checkpointKeys(t, store); !slicesContain(keys, index.CheckpointKey(index.DefaultPrefix, "rw", 0, 20, w)) {
		t.Fatalf("checkpoints %v, want one at 20", keys)
	}
	cl, err := kgo.NewClient(kgo.SeedBrokers(brokers...))
	if err != nil {
		t.Fatal(err)
	}
	defer cl.Close()
	var offs kadm.Offsets
	offs.Add(kadm.Offset{Topic: "rw", Partition: 0, At: 4, LeaderEpoch: -1})
	if _, err := kadm.NewClient(cl).CommitOffsets(t.Context(), "connect-"+cfg.Name, offs); err != nil {
		t.Fatal(err)
	}
	cfg.FlushSize = 5 // keys 4, 9, 14, 19: none of the first run's (0, 3, ..., 18)
	_, log := runSinkLogged(t, cfg, store)
	if !strings.Contains(log, "void") {
		t.Fatalf("no warning of the voided checkpoints:\n%s", log)
	}
	// The replay's index objects at commits 9 and 20 replaced the first
	// run's (objects 6 and 18 lost their entries; loadIndex would say
	// so): compare the loads only.
	got, err := index.Load(t.Context(), store, index.DefaultPrefix, nil)
	if err != nil {
		t.Fatal(err)
	}
	want, err := index.Load(t.Context(), logOnly{store}, index.DefaultPrefix, nil)
	if err != nil {
		t.Fatal(err)
	}
	if !reflect.DeepEqual(got.Entries, want.Entries) || !reflect.DeepEqual(got.All, want.All) || got.Checkpoints != 1 {
		t.Fatalf("with %d checkpoints: %d entries; from the log: %d", got.Checkpoints, len(got.Entries), len(want.Entries))
	}
}

// orderStore records the order in which objects are stored.
type orderStore struct {
	s3store.Store
	mu   sync.Mutex
	keys []string
}

func (o *orderStore) Create(ctx context.Context, key string) (s3store.ObjectWriter, error) {
	w, err := o.Store.Create(ctx, key)
	if err != nil {
		return nil, err
	}
	return &orderWriter{ObjectWriter: w, o: o, key: key}, nil
}

type orderWriter struct {
	s3store.ObjectWriter
	o   *orderStore
	key string
}

func (w *orderWriter) Commit(ctx context.Context) error {
	if err := w.ObjectWriter.Commit(ctx); err != nil {
		return err
	}
	w.o.mu.Lock()
	w.o.keys = append(w.o.keys, w.key)
	w.o.mu.Unlock()
	return nil
}

// firstUnder returns the position of the first key stored under dir, -1
// when none is.
func (o *orderStore) firstUnder(dir string) int {
	o.mu.Lock()
	defer o.mu.Unlock()
	for i, k := range o.keys {
		if strings.HasPrefix(k, dir) {
			return i
		}
	}
	return -1
}

// TestSinkWritesItsStartCheckpointFirst: with checkpoints off, a new
// group's sink stores its start checkpoint (no entry, at the offset it
// starts from) before its first index object, and the index is read
// from it without a full listing. Then the group's offset is moved back
// below every checkpoint of the writer: the next run writes a start
// checkpoint there before its first index object and voids the others.
func TestSinkWritesItsStartCheckpointFirst(t *testing.T) {
	brokers := newCluster(t, 1, "sc")
	var recs []*kgo.Record
	for i := range 20 {
		recs = append(recs, &kgo.Record{Topic: "sc", Value: fmt.Appendf(nil, `{"i":%d}`, i)})
	}
	produceRecs(t, brokers, recs...)
	cfg := indexConfig(brokers, "sc")
	w := index.WriterOf("connect-" + cfg.Name)
	commitAt := func(at int64) {
		cl, err := kgo.NewClient(kgo.SeedBrokers(brokers...))
		if err != nil {
			t.Fatal(err)
		}
		defer cl.Close()
		var offs kadm.Offsets
		offs.Add(kadm.Offset{Topic: "sc", Partition: 0, At: at, LeaderEpoch: -1})
		if _, err := kadm.NewClient(cl).CommitOffsets(t.Context(), "connect-"+cfg.Name, offs); err != nil {
			t.Fatal(err)
		}
	}
	commitAt(10)
	cfg.CheckpointInterval = 0
	store := &orderStore{Store: s3store.NewMemory()}
	runSink(t, cfg, store)
	start := index.CheckpointKey(index.DefaultPrefix, "sc", 0, 10, w)
	if keys := checkpointKeys(t, store); fmt.Sprint(keys) != fmt.Sprint([]string{start}) {
		t.Fatalf("checkpoints %v, want the start checkpoint %s alone (checkpoints off)", keys, start)
	}
	if c, i := store.firstUnder(index.CheckpointDir(index.DefaultPrefix)), store.firstUnder(index.Dir(index.DefaultPrefix)); c < 0 || i < 0 || c > i {
		t.Fatalf("the start checkpoint stored at %d, the first index object at %d", c, i)
	}
	if ix := sameAsLog(t, store); ix.FullListings != 0 || ix.Checkpoints != 1 {
		t.Fatalf("full listings %d, checkpoints %d; want 0 and 1", ix.FullListings, ix.Checkpoints)
	}

	// Checkpoints on, then the offset moved back below all of them.
	produceRecs(t, brokers, &kgo.Record{Topic: "sc", Value: []byte(`{"i":20}`)})
	cfg.CheckpointInterval = 1
	runSink(t, cfg, store)
	commitAt(4)
	store.keys = nil
	_, log := runSinkLogged(t, cfg, store)
	if !strings.Contains(log, "void") {
		t.Fatalf("no warning of the voided checkpoints:\n%s", log)
	}
	start = index.CheckpointKey(index.DefaultPrefix, "sc", 0, 4, w)
	if c, i := slices.Index(store.keys, start), store.firstUnder(index.Dir(index.DefaultPrefix)); c < 0 || i < 0 || c > i {
		t.Fatalf("the start checkpoint at 4 stored at %d, the first index object at %d: %v", c, i, store.keys)
	}
	got, err := index.Load(t.Context(), store, index.DefaultPrefix, nil)
	if err != nil {
		t.Fatal(err)
	}
	want, err := index.Load(t.Context(), logOnly{store}, index.DefaultPrefix, nil)
	if err != nil {
		t.Fatal(err)
	}
	if !reflect.DeepEqual(got.Entries, want.Entries) || !reflect.DeepEqual(got.All, want.All) || got.FullListings != 0 {
		t.Fatalf("with %d checkpoints, %d full listings: %d entries; from the log: %d", got.Checkpoints, got.FullListings, len(got.Entries), len(want.Entries))
	}
}
