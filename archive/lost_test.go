package archive

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"reflect"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/kafkas3/kafkas3/format"
	"github.com/kafkas3/kafkas3/index"
	"github.com/kafkas3/kafkas3/outage"
	"github.com/kafkas3/kafkas3/s3store"
	"github.com/twmb/franz-go/pkg/kadm"
	"github.com/twmb/franz-go/pkg/kgo"
)

// runSinkLogged runs the sink like runSink and returns its log too.
func runSinkLogged(t *testing.T, cfg Config, store s3store.Store) (Summary, string) {
	t.Helper()
	var buf syncBuffer
	s, err := New(cfg, store, slog.New(slog.NewTextHandler(&buf, &slog.HandlerOptions{Level: slog.LevelDebug})))
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	sum, err := s.Run(ctx)
	if err != nil {
		t.Fatalf("sink: %v\nlog:\n%s", err, buf.String())
	}
	return sum, buf.String()
}

// admin returns an admin client of brokers, closed at the test's end.
func admin(t *testing.T, brokers []string) *kadm.Client {
	t.Helper()
	cl, err := kgo.NewClient(kgo.SeedBrokers(brokers...))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(cl.Close)
	return kadm.NewClient(cl)
}

// deleteRecords moves the log start offset of topic's partition p to
// offset (DeleteRecords), as retention does.
func deleteRecords(t *testing.T, brokers []string, topic string, p int32, offset int64) {
	t.Helper()
	var o kadm.Offsets
	o.Add(kadm.Offset{Topic: topic, Partition: p, At: offset})
	res, err := admin(t, brokers).DeleteRecords(context.Background(), o)
	if err == nil {
		err = res.Error()
	}
	if err != nil {
		t.Fatal(err)
	}
}

// committedOffset returns the sink group's committed offset of topic's
// partition p (-1 without one).
func committedOffset(t *testing.T, brokers []string, cfg Config, topic string, p int32) int64 {
	t.Helper()
	offs, err := admin(t, brokers).FetchOffsets(context.Background(), "connect-"+cfg.Name)
	if err != nil {
		t.Fatal(err)
	}
	if o, ok := offs.Lookup(topic, p); ok {
		return o.At
	}
	return -1
}

// lostWarnings returns the log's warning lines that report a loss.
func lostWarnings(logs string) []string {
	var out []string
	for _, l := range strings.Split(logs, "\n") {
		if strings.Contains(l, "level=WARN") && strings.Contains(l, "lost offsets") {
			out = append(out, l)
		}
	}
	return out
}

// lostConfigs are the formats the loss tests run with: JSON and the
// envelope.
func lostConfigs(t *testing.T, brokers []string, topic string) map[string]Config {
	cfg := indexConfig(brokers, topic)
	cfg.FlushSize = 10
	env := cfg
	env.Format, env.Envelope = envelopeFormat(t, format.KindJSON), true
	return map[string]Config{"json": cfg, "envelope": env}
}

// checkLostIndex checks the archive index after the reten scenario: the
// first entry written after the loss starts its span at the old commit
// and carries the lost run; the partition's coverage counts the lost
// offsets apart from the absent ones and has no gap.
func checkLostIndex(t *testing.T, store s3store.Store, oldCommit int64, lost index.Run, commit int64) {
	t.Helper()
	ix := loadIndex(t, store)
	var carriers []string
	for _, e := range ix.Entries {
		if len(e.Lost) > 0 {
			carriers = append(carriers, e.Key)
			if e.From > lost.First || !reflect.DeepEqual(e.Lost, []index.Run{lost}) {
				t.Errorf("entry %s: from %d lost %v, want lost [%v]", e.Key, e.From, e.Lost, lost)
			}
		}
	}
	if len(carriers) != 1 {
		t.Errorf("entries carrying the lost run: %v, want one", carriers)
	}
	ps := index.Analyze(ix.Entries)
	if len(ps) != 1 {
		t.Fatalf("%d partitions", len(ps))
	}
	p := ps[0]
	if !p.Clean() || p.From != 0 || p.Commit != commit || p.LostCount != lost.Len() || p.Absent != 0 ||
		!reflect.DeepEqual(p.Lost, []index.Run{lost}) || p.Records != commit-lost.Len() {
		t.Errorf("coverage: clean %v from %d commit %d records %d absent %d lost %v (%d); want clean from 0 commit %d, lost %v, no absent (old commit %d)",
			p.Clean(), p.From, p.Commit, p.Records, p.Absent, p.Lost, p.LostCount, commit, lost, oldCommit)
	}
}

// sameObjects fails unless every object of before is in after with the
// same bytes.
func sameObjects(t *testing.T, before, after map[string]string) {
	t.Helper()
	for k, v := range before {
		if after[k] != v {
			t.Errorf("object %s changed or disappeared", k)
		}
	}
}

// TestSinkLostBeforeArchivingOnce is issue 18's reten scenario with
// --once: 20 records archived, 80 more produced, the log start moved to 60
// (DeleteRecords). The next run warns naming the range, counts 40 lost
// (summary, observer), records the run in the index, leaves the older
// objects alone; a run after that finds nothing lost.
func TestSinkLostBeforeArchivingOnce(t *testing.T) {
	for name, cfg := range lostConfigs(t, nil, "reten") {
		t.Run(name, func(t *testing.T) {
			brokers, store, before := retention(t, &cfg)

			obs := newRecordingObserver()
			cfg.Observer = obs
			sum, logs := runSinkLogged(t, cfg, store)
			if sum.Lost != 40 || sum.Records != 40 || !strings.Contains(sum.String(), " lost=40 index_objects=") {
				t.Errorf("summary %s (lost %d), want records=40 lost=40", sum, sum.Lost)
			}
			if !strings.Contains(sum.LostReport(), "40 records were lost before archiving") {
				t.Errorf("lost report %q", sum.LostReport())
			}
			warn := lostWarnings(logs)
			if len(warn) != 1 || !strings.Contains(warn[0], "reten[0] lost offsets 20-59 (40)") ||
				!strings.Contains(warn[0], "retention or DeleteRecords") || !strings.Contains(warn[0], "log_start_offset=60") {
				t.Errorf("lost warnings %q, want one naming reten[0] offsets 20-59 (40)", warn)
			}
			if obs.lost["reten/0"] != 40 {
				t.Errorf("observer told of %v lost, want reten/0: 40", obs.lost)
			}
			sameObjects(t, before, snapshot(t, store))
			checkLostIndex(t, store, 20, index.Run{First: 20, Last: 59}, 100)
			if c := committedOffset(t, brokers, cfg, "reten", 0); c != 100 {
				t.Errorf("committed offset %d, want 100", c)
			}

			sum, logs = runSinkLogged(t, cfg, store)
			if sum.Lost != 0 || len(lostWarnings(logs)) != 0 {
				t.Errorf("a run after the loss: %s, warnings %q", sum, lostWarnings(logs))
			}
		})
	}
}

// TestSinkLostBeforeArchivingContinuous: a sink that runs until stopped
// resumes from the same committed offset below the log start and reports
// the loss in the same way.
func TestSinkLostBeforeArchivingContinuous(t *testing.T) {
	for name, cfg := range lostConfigs(t, nil, "reten") {
		t.Run(name, func(t *testing.T) {
			_, store, before := retention(t, &cfg)

			cfg.Once = false
			obs := newRecordingObserver()
			cfg.Observer = obs
			sum, logs := runUntilCommitted(t, cfg, store, "reten", 0, 100)
			if sum.Lost != 40 || !strings.Contains(sum.String(), " lost=40 ") {
				t.Errorf("summary %s, want lost=40", sum)
			}
			if warn := lostWarnings(logs); len(warn) != 1 || !strings.Contains(warn[0], "reten[0] lost offsets 20-59 (40)") {
				t.Errorf("lost warnings %q", warn)
			}
			if obs.lost["reten/0"] != 40 {
				t.Errorf("observer told of %v lost", obs.lost)
			}
			sameObjects(t, before, snapshot(t, store))
			checkLostIndex(t, store, 20, index.Run{First: 20, Last: 59}, 100)
		})
	}
}

// runUntilCommitted runs a sink without --once until it has committed
// offset on topic's partition p, then stops it and returns its summary and
// log.
func runUntilCommitted(t *testing.T, cfg Config, store s3store.Store, topic string, p int32, offset int64) (Summary, string) {
	t.Helper()
	var buf syncBuffer
	s, err := New(cfg, store, slog.New(slog.NewTextHandler(&buf, &slog.HandlerOptions{Level: slog.LevelDebug})))
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	type result struct {
		sum Summary
		err error
	}
	done := make(chan result, 1)
	go func() { sum, err := s.Run(ctx); done <- result{sum, err} }()
	deadline := time.Now().Add(30 * time.Second)
	for committedOffset(t, cfg.Brokers, cfg, topic, p) < offset {
		if time.Now().After(deadline) {
			cancel()
			<-done
			t.Fatalf("offset %d not committed within 30 s; log:\n%s", offset, buf.String())
		}
		time.Sleep(50 * time.Millisecond)
	}
	cancel()
	r := <-done
	if r.err != nil {
		t.Fatalf("sink: %v", r.err)
	}
	return r.sum, buf.String()
}

// TestSinkLostWithNothingLeft: when the log start passed every record the
// sink had still to read, no fetch shows the loss. --once still warns,
// counts it and commits the log start with an index object that restamps
// the last rotation's entry with the lost run. A continuous sink finds it
// with the next record, whose entry carries it.
func TestSinkLostWithNothingLeft(t *testing.T) {
	brokers := newCluster(t, 1, "gone")
	cfg := lostConfigs(t, brokers, "gone")["json"]
	produce(t, brokers, "gone", 1, 0, 20)
	store := s3store.NewMemory()
	runSink(t, cfg, store)
	produce(t, brokers, "gone", 1, 20, 80)
	deleteRecords(t, brokers, "gone", 0, 100)

	sum, logs := runSinkLogged(t, cfg, store)
	if sum.Lost != 80 || sum.Records != 0 || sum.IndexObjects != 1 {
		t.Errorf("summary %s, want lost=80, no record, one index object", sum)
	}
	if warn := lostWarnings(logs); len(warn) != 1 || !strings.Contains(warn[0], "gone[0] lost offsets 20-99 (80)") {
		t.Errorf("lost warnings %q", warn)
	}
	if c := committedOffset(t, brokers, cfg, "gone", 0); c != 100 {
		t.Errorf("committed offset %d, want the log start 100", c)
	}
	checkLostIndex(t, store, 20, index.Run{First: 20, Last: 99}, 100)
	ix := loadIndex(t, store)
	if e := ix.Entries[len(ix.Entries)-1]; e.Key != "topics/gone/partition=0/gone+0+0000000010.json" || e.From != 10 || e.Commit != 100 {
		t.Errorf("the lost run's entry %s from %d commit %d, want the restamped entry of offsets 10-19", e.Key, e.From, e.Commit)
	}

	// Continuous: more deleted, then ten records.
	produce(t, brokers, "gone", 1, 100, 10)
	deleteRecords(t, brokers, "gone", 0, 110)
	produce(t, brokers, "gone", 1, 110, 10)
	cfg.Once = false
	sum, logs = runUntilCommitted(t, cfg, store, "gone", 0, 120)
	if warn := lostWarnings(logs); sum.Lost != 10 || len(warn) != 1 || !strings.Contains(warn[0], "gone[0] lost offsets 100-109 (10)") {
		t.Errorf("continuous: summary %s, warnings %q", sum, warn)
	}
	ps := index.Analyze(loadIndex(t, store).Entries)
	if want := []index.Run{{First: 20, Last: 109}}; len(ps) != 1 || !reflect.DeepEqual(ps[0].Lost, want) || !ps[0].Clean() || ps[0].Commit != 120 {
		t.Errorf("coverage %+v, want lost %v, clean, commit 120", ps, want)
	}
}

// TestSinkLostCountedOncePerRun: a store failure writing the index object
// that records the loss makes the sink resume from the same committed
// offset and find the same loss again; it is counted and warned about once.
func TestSinkLostCountedOncePerRun(t *testing.T) {
	brokers := newCluster(t, 1, "reten")
	cfg := lostConfigs(t, brokers, "reten")["json"]
	produce(t, brokers, "reten", 1, 0, 20)
	mem := s3store.NewMemory()
	runSink(t, cfg, mem)
	produce(t, brokers, "reten", 1, 20, 80)
	deleteRecords(t, brokers, "reten", 0, 60)

	// The first index object after the loss fails once.
	flaky := &failOnce{Store: mem, key: index.Key(cfg.IndexPrefix, "reten", 0, 70, index.WriterOf("connect-"+cfg.Name))}
	obs := newRecordingObserver()
	cfg.Observer = obs
	sum, logs := runSinkLogged(t, cfg, flaky)
	if !flaky.failed {
		t.Fatalf("%s was never written", flaky.key)
	}
	if sum.Lost != 40 || obs.lost["reten/0"] != 40 || len(lostWarnings(logs)) != 1 {
		t.Errorf("summary %s, observer %v, warnings %q: want 40 counted and warned once", sum, obs.lost, lostWarnings(logs))
	}
	if !strings.Contains(logs, "offsets lost before archiving, counted before") {
		t.Errorf("the replay did not find the loss again:\n%s", logs)
	}
	checkLostIndex(t, mem, 20, index.Run{First: 20, Last: 59}, 100)
}

// failOnce fails the first commit of one key, like a store outage.
type failOnce struct {
	s3store.Store
	key    string
	mu     sync.Mutex
	failed bool
}

func (f *failOnce) Create(ctx context.Context, key string) (s3store.ObjectWriter, error) {
	w, err := f.Store.Create(ctx, key)
	if err != nil || key != f.key {
		return w, err
	}
	f.mu.Lock()
	defer f.mu.Unlock()
	if f.failed {
		return w, nil
	}
	f.failed = true
	_ = w.Abort(ctx)
	return nil, errors.New("injected store failure")
}

// TestSinkLostWithoutIndexEntries: without an index object at the
// committed offset (the archive was written without the index) and no
// record after the loss, nothing can carry the lost run: the loss is
// warned about and counted, the index says why it cannot record it, and
// the log start is committed.
func TestSinkLostWithoutIndexEntries(t *testing.T) {
	brokers := newCluster(t, 1, "old")
	cfg := lostConfigs(t, brokers, "old")["json"]
	produce(t, brokers, "old", 1, 0, 20)
	store := s3store.NewMemory()
	noIndex := cfg
	noIndex.IndexPrefix = ""
	runSink(t, noIndex, store)
	produce(t, brokers, "old", 1, 20, 30)
	deleteRecords(t, brokers, "old", 0, 50)

	sum, logs := runSinkLogged(t, cfg, store)
	if sum.Lost != 30 || len(lostWarnings(logs)) != 1 || !strings.Contains(logs, "the archive index cannot record the offsets lost before archiving") {
		t.Errorf("summary %s, log:\n%s", sum, logs)
	}
	if c := committedOffset(t, brokers, cfg, "old", 0); c != 50 {
		t.Errorf("committed offset %d, want 50", c)
	}
	if ix, err := index.Load(context.Background(), store, cfg.IndexPrefix, nil); err != nil || len(ix.Entries) != 0 {
		t.Errorf("index entries %+v (%v), want none", ix, err)
	}
}

// TestSinkLostWithoutIndex: without the archive index the loss is still
// warned about and counted.
func TestSinkLostWithoutIndex(t *testing.T) {
	brokers := newCluster(t, 1, "noix")
	cfg := testConfig(brokers, "noix")
	produce(t, brokers, "noix", 1, 0, 3)
	store := s3store.NewMemory()
	runSink(t, cfg, store)
	produce(t, brokers, "noix", 1, 3, 7)
	deleteRecords(t, brokers, "noix", 0, 6)
	sum, logs := runSinkLogged(t, cfg, store)
	if warn := lostWarnings(logs); sum.Lost != 3 || sum.Records != 4 || len(warn) != 1 || !strings.Contains(warn[0], "noix[0] lost offsets 3-5 (3)") {
		t.Errorf("summary %s, warnings %q", sum, warn)
	}
}

// testWorker is a worker of partition t[0] whose records are given by the
// test (batch), with inline uploads.
func testWorker(t *testing.T, cfg Config, store s3store.Store, start int64) (*worker, *Sink) {
	t.Helper()
	s, err := New(cfg, store, nil)
	if err != nil {
		t.Fatal(err)
	}
	s.tally.reset(nil)
	ctx := context.Background()
	d := workerDeps{cfg: &s.cfg, store: store, log: s.log, tally: &s.tally, outages: outage.NewTracker(nil, 0),
		ctx: ctx, budget: newBudget(ctx, fetchBudget), fail: func(error) {}, done: func(tp) {},
		committable: func(tp, int64, int32) {}}
	return newWorker(d, tp{"t", 0}, start, -1), s
}

// recs returns records of t[0] at offsets.
func recs(offsets ...int64) []*kgo.Record {
	var out []*kgo.Record
	for _, o := range offsets {
		out = append(out, &kgo.Record{Topic: "t", Partition: 0, Offset: o, Value: fmt.Appendf(nil, `{"o":%d}`, o), Timestamp: time.UnixMilli(1_700_000_000_000 + o)})
	}
	return out
}

// TestWorkerLostMidRun gives a worker batches as fetches would: a batch
// whose first record jumps past the next offset while the log start is
// above that offset shows offsets lost up to the log start; the offsets
// between the log start and the first record are merely absent. A jump
// with the log start below the next offset (compaction) is no loss, and
// neither is anything before the first record when the committed offset
// is unknown.
func TestWorkerLostMidRun(t *testing.T) {
	store := s3store.NewMemory()
	cfg := indexConfig([]string{"127.0.0.1:1"}, "t") // no broker is reached
	cfg.FlushSize = 100
	w, s := testWorker(t, cfg, store, -1)
	for _, b := range []inBatch{
		{recs: recs(5, 6), logStart: 3},      // start unknown: nothing judged
		{recs: recs(9, 10), logStart: 4},     // compaction: 7, 8 absent
		{recs: recs(30, 31), logStart: 25},   // 11-24 lost, 25-29 absent
		{recs: recs(32), logStart: 32},       // no jump
		{recs: recs(50), logStart: 40},       // 33-39 lost, 40-49 absent
		{recs: recs(51, 52), logStart: -1},   // an old broker: unknown
		{recs: recs(60), logStart: 59},       // 53-58 lost, 59 absent
		{recs: recs(61), logStart: 61 + 100}, // (a log start past the batch is clipped to it)
	} {
		if _, err := w.batch(b); err != nil {
			t.Fatal(err)
		}
	}
	if err := w.pw.flush(context.Background()); err != nil {
		t.Fatal(err)
	}
	ix := loadIndex(t, store)
	if len(ix.Entries) != 1 {
		t.Fatalf("entries %+v", ix.Entries)
	}
	e := ix.Entries[0]
	want := []index.Run{{First: 11, Last: 24}, {First: 33, Last: 39}, {First: 53, Last: 58}}
	if !reflect.DeepEqual(e.Lost, want) || e.From != 5 || e.Commit != 62 {
		t.Errorf("entry from %d commit %d lost %v, want from 5 commit 62 lost %v", e.From, e.Commit, e.Lost, want)
	}
	if got := s.tally.summary(time.Now()).Lost; got != 14+7+6 {
		t.Errorf("lost %d, want %d", got, 14+7+6)
	}
}

// TestLostOfClipsAndJoins: an entry's lost runs are clipped to its span,
// joined with its own where they touch, and never cover its records.
func TestLostOfClipsAndJoins(t *testing.T) {
	e := index.Entry{From: 10, Runs: []index.Run{{First: 12, Last: 13}}, Lost: []index.Run{{First: 10, Last: 11}}}
	got := lostOf(&e, []index.Run{{First: 5, Last: 5}, {First: 14, Last: 20}, {First: 25, Last: 40}}, 30)
	want := []index.Run{{First: 10, Last: 11}, {First: 14, Last: 20}, {First: 25, Last: 29}}
	if !reflect.DeepEqual(got, want) {
		t.Errorf("lostOf = %v, want %v", got, want)
	}
	e = index.Entry{From: 0, Runs: []index.Run{{First: 0, Last: 9}}, Lost: []index.Run{{First: 20, Last: 29}}}
	if got := lostOf(&e, []index.Run{{First: 30, Last: 39}}, 50); !reflect.DeepEqual(got, []index.Run{{First: 20, Last: 39}}) {
		t.Errorf("touching runs: %v", got)
	}
	if got := lostOf(&index.Entry{From: 40}, nil, 50); got != nil {
		t.Errorf("no loss: %v, want nil (the field is omitted)", got)
	}
}

// retention is the reten scenario up to the loss: 20 records archived by
// cfg (given a new cluster's brokers), 80 more produced, the log start
// moved to 60. It returns the brokers, the store and its objects then.
func retention(t *testing.T, cfg *Config) ([]string, *s3store.Memory, map[string]string) {
	t.Helper()
	brokers := newCluster(t, 1, "reten")
	cfg.Brokers = brokers
	produce(t, brokers, "reten", 1, 0, 20)
	store := s3store.NewMemory()
	runSink(t, *cfg, store)
	before := snapshot(t, store)
	produce(t, brokers, "reten", 1, 20, 80)
	deleteRecords(t, brokers, "reten", 0, 60)
	return brokers, store, before
}
