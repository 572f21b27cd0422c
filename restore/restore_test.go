package restore

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"regexp"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/kafkas3/kafkas3/format"
	"github.com/kafkas3/kafkas3/index"
	"github.com/kafkas3/kafkas3/partition"
	"github.com/kafkas3/kafkas3/s3store"
	"github.com/twmb/franz-go/pkg/kadm"
	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kfake"
	"github.com/twmb/franz-go/pkg/kgo"
	"github.com/twmb/franz-go/pkg/kmsg"
)

func baseConfig(brokers []string, f format.Format, topics ...string) Config {
	return Config{
		Brokers:  brokers,
		Topics:   topics,
		Keys:     partition.DefaultKeyConfig(),
		Format:   f,
		Identity: "memory://bucket/topics",
	}
}

func mustNew(t *testing.T, cfg Config, a *archive, log *logBuffer) *Restorer {
	t.Helper()
	if log == nil {
		log = &logBuffer{}
	}
	var st s3store.Store = a.store
	if a.blind {
		st = blindStore{a.store}
	}
	r, err := New(cfg, st, log.logger())
	if err != nil {
		t.Fatal(err)
	}
	return r
}

func gzipJSON(t *testing.T) format.Format {
	f, err := format.WithGzip(format.NewJSON(), -1)
	if err != nil {
		t.Fatal(err)
	}
	return f
}

func zstdJSON(t *testing.T) format.Format {
	f, err := format.WithZstd(format.NewJSON(), -1)
	if err != nil {
		t.Fatal(err)
	}
	return f
}

// TestRestoreOrdersObjectsByNumericOffset restores objects whose keys sort
// differently as strings (pad width 1: 10, 100, 9) and checks each target
// partition holds exactly the archived records, in order, under the
// renamed topic.
func TestRestoreOrdersObjectsByNumericOffset(t *testing.T) {
	brokers := newCluster(t, 2, "copy_of_orders")
	a := newArchive(t, gzipJSON(t))
	a.keys.OffsetPadWidth = 1
	// Partition 0: offsets 9 (1 record), 10 (90 records), 100 (5 records).
	a.put("orders", 0, 100, values("p0c", 100, 5))
	a.put("orders", 0, 9, values("p0a", 9, 1))
	a.put("orders", 0, 10, values("p0b", 10, 90))
	a.put("orders", 1, 0, values("p1", 0, 3))
	var want0 []*format.Record
	want0 = append(append(append(want0, values("p0a", 9, 1)...), values("p0b", 10, 90)...), values("p0c", 100, 5)...)

	cfg := baseConfig(brokers, a.f, "orders")
	cfg.Keys = a.keys
	cfg.Rename = "copy_of_$0"
	r := mustNew(t, cfg, a, nil)
	plan, err := r.Plan(testContext(t))
	if err != nil {
		t.Fatal(err)
	}
	if len(plan.Topics) != 1 || plan.Topics[0].Target != "copy_of_orders" || plan.Topics[0].Partitions != 2 || plan.Topics[0].Objects != 4 {
		t.Fatalf("plan = %+v", plan.Topics)
	}
	var starts []int64
	for _, o := range plan.Topics[0].Parts[0].Objects {
		starts = append(starts, o.StartOffset)
	}
	if fmt.Sprint(starts) != "[9 10 100]" {
		t.Fatalf("partition 0 object order = %v, want [9 10 100]", starts)
	}

	sum, err := r.Run(testContext(t), nil)
	if err != nil {
		t.Fatal(err)
	}
	if sum.Records != 99 || sum.Objects != 4 || sum.Partitions != 2 || sum.Topics != 1 || sum.Bytes != plan.Bytes() {
		t.Fatalf("summary = %+v (plan bytes %d)", sum, plan.Bytes())
	}
	got := readTopic(t, brokers, "copy_of_orders")
	checkValues(t, "copy_of_orders/0", got[0], want0)
	checkValues(t, "copy_of_orders/1", got[1], values("p1", 0, 3))
	if !strings.Contains(sum.String(), "restored 99 records") {
		t.Fatalf("summary line %q", sum.String())
	}
}

// TestRestoreCarriesFullRecords restores keys, headers (order, duplicates,
// nil and empty values) and timestamps as the reader yields them, adding
// nothing.
func TestRestoreCarriesFullRecords(t *testing.T) {
	brokers := newCluster(t, 1, "t2")
	a := newArchive(t, fullFormat{})
	ts := time.UnixMilli(1700000000123)
	recs := []*format.Record{
		{Key: []byte("k1"), Value: []byte("v1"), Timestamp: ts, Headers: []format.Header{
			{Key: "h", Value: []byte("1")}, {Key: "nil", Value: nil}, {Key: "h", Value: []byte("2")}, {Key: "empty", Value: []byte{}},
		}},
		{Key: nil, Value: []byte("no key, no timestamp")},
		{Key: []byte{}, Value: nil, Timestamp: ts.Add(time.Second)}, // tombstone with an empty key
	}
	a.put("t", 0, 0, recs)
	cfg := baseConfig(brokers, a.f, "t")
	cfg.Rename = "${0}2"
	before := time.Now().Add(-time.Second)
	if _, err := mustNew(t, cfg, a, nil).Run(testContext(t), nil); err != nil {
		t.Fatal(err)
	}
	got := readTopic(t, brokers, "t2")[0]
	if len(got) != len(recs) {
		t.Fatalf("%d records, want %d", len(got), len(recs))
	}
	for i, want := range recs {
		g := got[i]
		if !bytes.Equal(g.Key, want.Key) || (g.Key == nil) != (want.Key == nil) {
			t.Errorf("record %d key %q (nil %v), want %q (nil %v)", i, g.Key, g.Key == nil, want.Key, want.Key == nil)
		}
		if !bytes.Equal(g.Value, want.Value) || (g.Value == nil) != (want.Value == nil) {
			t.Errorf("record %d value %q (nil %v), want %q", i, g.Value, g.Value == nil, want.Value)
		}
		if len(g.Headers) != len(want.Headers) {
			t.Fatalf("record %d has %d headers, want %d: %+v", i, len(g.Headers), len(want.Headers), g.Headers)
		}
		for j, h := range want.Headers {
			gh := g.Headers[j]
			if gh.Key != h.Key || !bytes.Equal(gh.Value, h.Value) || (gh.Value == nil) != (h.Value == nil) {
				t.Errorf("record %d header %d = %q:%q (nil %v), want %q:%q (nil %v)", i, j, gh.Key, gh.Value, gh.Value == nil, h.Key, h.Value, h.Value == nil)
			}
		}
		if want.Timestamp.IsZero() {
			if g.Timestamp.Before(before) {
				t.Errorf("record %d without archived timestamp got %v, want about now", i, g.Timestamp)
			}
		} else if !g.Timestamp.Equal(want.Timestamp) {
			t.Errorf("record %d timestamp %v, want %v", i, g.Timestamp, want.Timestamp)
		}
	}
}

// TestPlanSkipsKeys counts keys outside topics.dir and of other formats,
// and handles malformed names by behavior.on.error.
func TestPlanSkipsKeys(t *testing.T) {
	a := newArchive(t, format.NewJSON())
	a.put("orders", 0, 0, values("a", 0, 2))
	a.put("orders", 0, 2, values("b", 2, 2))
	raw := func(key string) { a.putRaw(key, func(w io.Writer) { fmt.Fprintln(w, `"x"`) }) }
	raw("topics/orders/partition=0/orders+0+0000000004.json.gz")   // other extension
	raw("topics/orders/partition=0/orders+0+0000000004.keys.json") // keys file without a value object
	raw("topics/orders/partition=0/orders+0+0000000004.avro")      // other extension
	raw("topics-old/orders/partition=0/orders+0+0000000000.json")  // outside topics.dir
	raw("topics/README.json")                                      // not in a topic folder
	raw("topics/other/partition=0/other+0+0000000000.json")        // not selected
	malformed := "topics/orders/partition=0/orders+x+0000000009.json"
	raw(malformed)

	for _, onErr := range []OnError{OnErrorFail, OnErrorIgnore, OnErrorLog} {
		t.Run(string(onErr), func(t *testing.T) {
			cfg := baseConfig(nil, a.f)
			cfg.DryRun = true
			cfg.TopicsRegex = regexp.MustCompile(`ord.*`)
			cfg.OnError = onErr
			log := &logBuffer{}
			r := mustNew(t, cfg, a, log)
			plan, err := r.Plan(testContext(t))
			if onErr == OnErrorFail {
				if !errors.Is(err, partition.ErrMalformedKey) || !strings.Contains(err.Error(), malformed) {
					t.Fatalf("err = %v, want a malformed-key error quoting %q", err, malformed)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			want := map[string]int{SkipOtherExtension: 2, SkipParallelOrphan: 1, SkipOutsideTopicsDir: 1, SkipNoTopicFolder: 1, SkipMalformed: 1}
			if fmt.Sprint(plan.Skipped) != fmt.Sprint(want) {
				t.Fatalf("skipped = %v, want %v", plan.Skipped, want)
			}
			if len(plan.Topics) != 1 || plan.Topics[0].Objects != 2 || plan.Topics[0].FirstOffset != 0 || plan.Topics[0].LastOffset != 2 {
				t.Fatalf("plan = %+v", plan.Topics)
			}
			logged := strings.Contains(log.String(), malformed)
			if logged != (onErr == OnErrorLog) {
				t.Fatalf("log mentions the malformed key: %v, want %v; log:\n%s", logged, onErr == OnErrorLog, log)
			}
			sum, err := r.Run(testContext(t), nil)
			if err != nil || sum.KeysSkipped[SkipOtherExtension] != 2 || sum.Records != 0 || !sum.DryRun {
				t.Fatalf("dry run summary %+v, err %v", sum, err)
			}
			var out bytes.Buffer
			if err := plan.WriteText(&out); err != nil {
				t.Fatal(err)
			}
			for _, s := range []string{"orders", "0..2", "2 other extension", "1 keys or headers without a value object", "1 malformed name"} {
				if !strings.Contains(out.String(), s) {
					t.Errorf("dry-run text lacks %q:\n%s", s, out.String())
				}
			}
		})
	}
}

// TestTargetChecks covers missing topics (all listed), too few partitions,
// more partitions (warning), the feedback-loop guard and --create-topics,
// each failing before anything is produced.
func TestTargetChecks(t *testing.T) {
	brokers := newCluster(t, 1, "small", "orders")
	a := newArchive(t, format.NewJSON())
	for _, topic := range []string{"a", "b", "c"} {
		a.put(topic, 0, 0, values(topic, 0, 2))
		a.put(topic, 1, 0, values(topic, 0, 2))
	}

	t.Run("missing", func(t *testing.T) {
		cfg := baseConfig(brokers, a.f, "a", "b", "c")
		cfg.Rename = "missing_$0"
		_, err := mustNew(t, cfg, a, nil).Run(testContext(t), nil)
		if !errors.Is(err, ErrMissingTopics) {
			t.Fatalf("err = %v, want ErrMissingTopics", err)
		}
		for _, m := range []string{"missing_a", "missing_b", "missing_c"} {
			if !strings.Contains(err.Error(), m) {
				t.Errorf("error %q does not name %q", err, m)
			}
		}
	})
	t.Run("fewer partitions", func(t *testing.T) {
		cfg := baseConfig(brokers, a.f, "a")
		cfg.Rename = "small"
		_, err := mustNew(t, cfg, a, nil).Run(testContext(t), nil)
		if !errors.Is(err, ErrTooFewPartitions) || !strings.Contains(err.Error(), `"small" has 1 partitions, the archive has 2`) {
			t.Fatalf("err = %v", err)
		}
		if n := len(readTopic(t, brokers, "small")[0]); n != 0 {
			t.Fatalf("%d records produced to small", n)
		}
	})
	t.Run("feedback guard", func(t *testing.T) {
		cfg := baseConfig(brokers, a.f, "a", "b")
		cfg.RenameRegex = regexp.MustCompile("a")
		cfg.Rename = "orders"
		cfg.ArchiveTopicsRegex = regexp.MustCompile(`ord`) // full match only: "orders" is not archived
		cfg.DryRun = true
		if _, err := mustNew(t, cfg, a, nil).Run(testContext(t), nil); err != nil {
			t.Fatalf("regex %q must not match %q: %v", "ord", "orders", err)
		}
		cfg.DryRun = false
		cfg.ArchiveTopicsRegex = regexp.MustCompile(`ord.*`)
		_, err := mustNew(t, cfg, a, nil).Run(testContext(t), nil)
		if !errors.Is(err, ErrFeedbackLoop) || !strings.Contains(err.Error(), `"orders"`) {
			t.Fatalf("err = %v, want ErrFeedbackLoop naming orders", err)
		}
		cfg.ArchiveTopicsRegex = nil
		cfg.ArchiveTopics = []string{"b"}
		cfg.Topics = []string{"b"}
		cfg.Rename = ""
		cfg.DryRun = true
		if _, err := mustNew(t, cfg, a, nil).Run(testContext(t), nil); !errors.Is(err, ErrFeedbackLoop) {
			t.Fatalf("restore of b into b: err = %v, want ErrFeedbackLoop", err)
		}
		cfg.AllowSameTopic = true
		if _, err := mustNew(t, cfg, a, nil).Run(testContext(t), nil); err != nil {
			t.Fatalf("with AllowSameTopic: %v", err)
		}
	})
	t.Run("create topics and more partitions", func(t *testing.T) {
		cfg := baseConfig(brokers, a.f, "a", "b")
		cfg.Rename = "new_$0"
		cfg.CreateTopics = true
		sum, err := mustNew(t, cfg, a, nil).Run(testContext(t), nil)
		if err != nil {
			t.Fatal(err)
		}
		if sum.Records != 8 {
			t.Fatalf("records = %d, want 8", sum.Records)
		}
		adm := newAdmin(t, brokers)
		details, err := adm.ListTopics(testContext(t), "new_a", "new_b")
		if err != nil {
			t.Fatal(err)
		}
		for _, n := range []string{"new_a", "new_b"} {
			if got := len(details[n].Partitions); got != 2 {
				t.Fatalf("%s has %d partitions, want 2", n, got)
			}
		}
		// A target with more partitions than the archive: warning.
		if _, err := adm.CreateTopics(testContext(t), 3, 1, nil, "wide"); err != nil {
			t.Fatal(err)
		}
		cfg = baseConfig(brokers, a.f, "c")
		cfg.Rename = "wide"
		log := &logBuffer{}
		if _, err := mustNew(t, cfg, a, log).Run(testContext(t), nil); err != nil {
			t.Fatal(err)
		}
		if !strings.Contains(log.String(), "more partitions") || !strings.Contains(log.String(), "target_partitions=3") {
			t.Fatalf("no warning about extra partitions in log:\n%s", log)
		}
	})
}

// TestDryRunProducesNothing checks a dry run neither produces nor needs
// brokers, nor writes markers.
func TestDryRunProducesNothing(t *testing.T) {
	brokers := newCluster(t, 1, "t")
	a := newArchive(t, format.NewJSON())
	a.put("t", 0, 0, values("x", 0, 5))
	cfg := baseConfig(brokers, a.f, "t")
	cfg.DryRun = true
	cfg.AllowSameTopic = true
	sum, err := mustNew(t, cfg, a, nil).Run(testContext(t), nil)
	if err != nil {
		t.Fatal(err)
	}
	if sum.Records != 0 || sum.Objects != 1 || !strings.Contains(sum.String(), "dry run") {
		t.Fatalf("summary %+v", sum)
	}
	if n := len(readTopic(t, brokers, "t")[0]); n != 0 {
		t.Fatalf("dry run produced %d records", n)
	}
	offs, err := newAdmin(t, brokers).FetchOffsets(testContext(t), MarkerGroup("t"))
	if err == nil && len(offs["t"]) > 0 {
		t.Fatalf("dry run wrote markers: %v", offs)
	}
}

// bigArchive writes parts partitions of objs objects of per records each.
func bigArchive(t *testing.T, a *archive, topic string, parts int32, objs, per int) map[int32][]*format.Record {
	want := map[int32][]*format.Record{}
	for p := range parts {
		for o := range objs {
			recs := values(fmt.Sprintf("p%d", p), o*per, per)
			a.put(topic, p, int64(o*per), recs)
			want[p] = append(want[p], recs...)
		}
	}
	return want
}

// cancelStore cancels a run in the middle of the n-th object opened: a
// crash in the middle of a restore, with records in flight.
type cancelStore struct {
	s3store.Store
	n      int64
	opens  atomic.Int64
	cancel context.CancelFunc
}

func (c *cancelStore) Open(ctx context.Context, key string) (io.ReadCloser, error) {
	rc, err := c.Store.Open(ctx, key)
	if err != nil || c.opens.Add(1) != c.n {
		return rc, err
	}
	// Cancel in the middle of this object, while earlier records of the
	// partition are still in flight.
	b, err := io.ReadAll(rc)
	if err != nil {
		return nil, err
	}
	half := bytes.IndexByte(b[len(b)/2:], '\n') + len(b)/2 + 1
	return io.NopCloser(io.MultiReader(bytes.NewReader(b[:half]), readerFunc(func([]byte) (int, error) {
		c.cancel()
		time.Sleep(5 * time.Millisecond) // let the producer react, as a dying process would not
		return 0, io.ErrUnexpectedEOF
	}))), nil
}

type readerFunc func([]byte) (int, error)

func (f readerFunc) Read(b []byte) (int, error) { return f(b) }

// checkPrefix asserts that every partition of topic holds a prefix of
// want, exactly, and returns the total held.
func checkPrefix(t *testing.T, brokers []string, topic string, want map[int32][]*format.Record) int {
	t.Helper()
	got := readTopic(t, brokers, topic)
	total := 0
	for p, recs := range got {
		if len(recs) > len(want[p]) {
			t.Fatalf("%s/%d holds %d records, the archive %d", topic, p, len(recs), len(want[p]))
		}
		checkValues(t, fmt.Sprintf("%s/%d prefix", topic, p), recs, want[p][:len(recs)])
		total += len(recs)
	}
	return total
}

// TestResumeAfterCancel interrupts restores in the middle and re-runs:
// after each interrupted run every target partition holds an exact prefix
// of the archive, the final run completes it with no duplicates, and a run
// after completion produces nothing.
func TestResumeAfterCancel(t *testing.T) {
	brokers := newCluster(t, 4, "dst")
	a := newArchive(t, format.NewJSON())
	want := bigArchive(t, a, "src", 4, 10, 500) // 40 objects, 20,000 records
	cfg := baseConfig(brokers, a.f, "src")
	cfg.Rename = "dst"
	cfg.Parallelism = 2 // partitions 2 and 3 start late: early runs stop before them
	cfg.KafkaOpts = []kgo.Opt{kgo.ProducerLinger(0), kgo.MaxBufferedRecords(300)}

	held := 0
	// The plan opens each of the 40 objects once (its proof) before the
	// restore opens them again to produce them.
	for _, at := range []int64{40 + 3, 40 + 22, 40 + 10} {
		ctx, cancel := context.WithCancel(testContext(t))
		store := &cancelStore{Store: a.store, n: at, cancel: cancel}
		r, err := New(cfg, store, nil)
		if err != nil {
			t.Fatal(err)
		}
		sum, err := r.Run(ctx, nil)
		cancel()
		if !errors.Is(err, context.Canceled) && !errors.Is(err, io.ErrUnexpectedEOF) {
			t.Fatalf("run cancelled at open %d: err = %v", at, err)
		}
		now := checkPrefix(t, brokers, "dst", want)
		t.Logf("cancelled at open %d: produced %d, already present %d; target holds %d", at, sum.Records, sum.AlreadyPresent, now)
		if now < held || now >= 20000 {
			t.Fatalf("target holds %d records after a cancelled run (before: %d)", now, held)
		}
		held = now
	}
	if held == 0 {
		t.Fatal("no cancelled run left records in the target: the cancels missed the produce phase")
	}
	sum, err := mustNew(t, cfg, a, nil).Run(testContext(t), nil)
	if err != nil {
		t.Fatal(err)
	}
	got := readTopic(t, brokers, "dst")
	for p := range int32(4) {
		checkValues(t, fmt.Sprintf("dst/%d", p), got[p], want[p])
	}
	if sum.Records != int64(20000-held) || sum.AlreadyPresent != int64(held) {
		t.Fatalf("final run: %d records + %d already present, want %d + %d", sum.Records, sum.AlreadyPresent, 20000-held, held)
	}

	sum, err = mustNew(t, cfg, a, nil).Run(testContext(t), nil)
	if err != nil {
		t.Fatal(err)
	}
	if sum.Records != 0 || sum.AlreadyPresent != 20000 {
		t.Fatalf("run after completion: %+v", sum)
	}
	if n := checkPrefix(t, brokers, "dst", want); n != 20000 {
		t.Fatalf("run after completion changed dst: %d records", n)
	}
}

// commitMarker writes a marker by hand.
func commitMarker(t *testing.T, brokers []string, target, archive, source string, p int32, start int64) {
	t.Helper()
	r := &Restorer{cfg: Config{RetryTimeout: time.Second}, log: slog.New(slog.DiscardHandler)}
	if err := r.writeMarkers(testContext(t), newAdmin(t, brokers), target, map[int32]marker{p: {Start: start, Archive: archive, Source: source}}); err != nil {
		t.Fatal(err)
	}
}

// TestResumeFromPrefixAndForeignWriters restores after a hand-made prefix
// (target not empty before the restore), and refuses when someone else
// wrote to the partition.
func TestResumeFromPrefixAndForeignWriters(t *testing.T) {
	brokers := newCluster(t, 1, "dst", "dst2", "dst3")
	a := newArchive(t, format.NewJSON())
	want := bigArchive(t, a, "src", 1, 3, 10)[0]
	cfg := baseConfig(brokers, a.f, "src")
	vals := func(recs []*format.Record) []string {
		var s []string
		for _, r := range recs {
			s = append(s, string(r.Value))
		}
		return s
	}

	t.Run("prefix by hand", func(t *testing.T) {
		produce(t, brokers, "dst", 0, "older-1", "older-2") // existed before the restore
		commitMarker(t, brokers, "dst", cfg.Identity, "src", 0, 2)
		produce(t, brokers, "dst", 0, vals(want[:14])...) // a crash after 14 records
		cfg := cfg
		cfg.Rename = "dst"
		sum, err := mustNew(t, cfg, a, nil).Run(testContext(t), nil)
		if err != nil {
			t.Fatal(err)
		}
		if sum.Records != 16 || sum.AlreadyPresent != 14 {
			t.Fatalf("summary %+v, want 16 produced, 14 present", sum)
		}
		got := readTopic(t, brokers, "dst")[0]
		checkValues(t, "dst/0", got[2:], want)
		if string(got[0].Value) != "older-1" {
			t.Fatalf("dst/0 offset 0 = %q", got[0].Value)
		}
		// Someone appends after completion: refused, nothing produced.
		produce(t, brokers, "dst", 0, "intruder")
		_, err = mustNew(t, cfg, a, nil).Run(testContext(t), nil)
		if !errors.Is(err, ErrForeignWrite) || !strings.Contains(err.Error(), "dst/0") {
			t.Fatalf("after a foreign append: err = %v, want ErrForeignWrite naming dst/0", err)
		}
	})
	t.Run("foreign record inside the prefix", func(t *testing.T) {
		commitMarker(t, brokers, "dst2", cfg.Identity, "src", 0, 0)
		produce(t, brokers, "dst2", 0, vals(want[:4])...)
		produce(t, brokers, "dst2", 0, "intruder")
		cfg := cfg
		cfg.Rename = "dst2"
		_, err := mustNew(t, cfg, a, nil).Run(testContext(t), nil)
		if !errors.Is(err, ErrForeignWrite) || !strings.Contains(err.Error(), "dst2/0 offset 4") {
			t.Fatalf("err = %v, want ErrForeignWrite naming dst2/0 offset 4", err)
		}
		if n := len(readTopic(t, brokers, "dst2")[0]); n != 5 {
			t.Fatalf("dst2/0 has %d records after a refused run, want 5", n)
		}
	})
	t.Run("marker of another archive", func(t *testing.T) {
		commitMarker(t, brokers, "dst3", "s3://other/topics", "src", 0, 0)
		cfg := cfg
		cfg.Rename = "dst3"
		_, err := mustNew(t, cfg, a, nil).Run(testContext(t), nil)
		if !errors.Is(err, ErrMarkerMismatch) || !strings.Contains(err.Error(), MarkerGroup("dst3")) {
			t.Fatalf("err = %v, want ErrMarkerMismatch naming the group", err)
		}
	})
}

// TestFollowPicksUpNewObjects runs in follow mode, adds objects while it
// runs, and stops it with a cancel.
func TestFollowPicksUpNewObjects(t *testing.T) {
	brokers := newCluster(t, 2, "dst")
	a := newArchive(t, format.NewJSON())
	want := bigArchive(t, a, "src", 2, 2, 5)
	cfg := baseConfig(brokers, a.f, "src")
	cfg.Rename = "dst"
	cfg.Follow = true
	cfg.PollInterval = 20 * time.Millisecond
	ctx, cancel := context.WithCancel(testContext(t))
	done := make(chan struct{})
	var sum Summary
	var runErr error
	go func() {
		defer close(done)
		sum, runErr = mustNew(t, cfg, a, nil).Run(ctx, nil)
	}()
	waitFor := func(n int) {
		t.Helper()
		deadline := time.Now().Add(20 * time.Second)
		for {
			got := readTopic(t, brokers, "dst")
			if len(got[0])+len(got[1]) >= n {
				return
			}
			if time.Now().After(deadline) {
				t.Fatalf("follow: %d records restored, want %d", len(got[0])+len(got[1]), n)
			}
			time.Sleep(20 * time.Millisecond)
		}
	}
	waitFor(20)
	more := values("p1-new", 10, 7)
	a.put("src", 1, 10, more)
	want[1] = append(want[1], more...)
	waitFor(27)
	time.Sleep(100 * time.Millisecond) // a few more passes: nothing may be duplicated
	cancel()
	<-done
	// A cancel between passes returns nil, one during a pass (even one
	// with nothing new to produce) the context's error; cmd maps both to
	// a clean stop.
	if runErr != nil && !errors.Is(runErr, context.Canceled) {
		t.Fatalf("follow stopped with %v", runErr)
	}
	got := readTopic(t, brokers, "dst")
	checkValues(t, "dst/0", got[0], want[0])
	checkValues(t, "dst/1", got[1], want[1])
	if sum.Records != 27 || sum.Objects != 5 || sum.AlreadyPresent != 0 || sum.Bytes != mustPlanBytes(t, a, cfg) {
		t.Fatalf("summary %+v", sum)
	}
}

func TestNewRejectsBadConfig(t *testing.T) {
	a := newArchive(t, format.NewJSON())
	good := baseConfig([]string{"127.0.0.1:1"}, a.f, "t")
	for name, mod := range map[string]func(*Config){
		"no topics":       func(c *Config) { c.Topics = nil },
		"both":            func(c *Config) { c.TopicsRegex = regexp.MustCompile("x") },
		"no format":       func(c *Config) { c.Format = nil },
		"no brokers":      func(c *Config) { c.Brokers = nil },
		"bad on error":    func(c *Config) { c.OnError = "skip" },
		"bad rename":      func(c *Config) { c.Rename = "x_$1" },
		"bad delim":       func(c *Config) { c.Keys.DirectoryDelim = "" },
		"delim in topics": func(c *Config) { c.Topics = []string{"a/b"} },
	} {
		cfg := good
		mod(&cfg)
		if _, err := New(cfg, a.store, nil); !errors.Is(err, ErrInvalidConfig) {
			t.Errorf("%s: err = %v, want ErrInvalidConfig", name, err)
		}
	}
	if _, err := New(good, a.store, nil); err != nil {
		t.Fatal(err)
	}
}

// TestRenameTargets checks Connect RegexRouter semantics with Java-style
// replacements.
func TestRenameTargets(t *testing.T) {
	for _, c := range []struct {
		regex, repl, in, want string
	}{
		{".*", "copy_of_$0", "orders", "copy_of_orders"},
		{".*", "$0_copy", "orders", "orders_copy"},
		{"(.*)-(.*)", "$2.$1", "eu-orders", "orders.eu"},
		{"(.*)-(.*)", "$21", "eu-orders", "orders1"},
		{"o(?P<rest>.*)", "x${rest}", "orders", "xrders"},
		{"o.*", "restored", "payments", "payments"}, // no full match: unchanged
		{"rders", "x", "orders", "orders"},          // partial match does not rename
		{".*", `a\$b`, "t", "a$b"},                  // "$" is not legal in a topic: checked below
	} {
		r, err := newRenamer(regexp.MustCompile(c.regex), c.repl)
		if err != nil {
			t.Fatalf("%q %q: %v", c.regex, c.repl, err)
		}
		got, err := r.Target(c.in)
		if c.want == "a$b" {
			if !errors.Is(err, ErrInvalidConfig) || !strings.Contains(err.Error(), "a$b") {
				t.Errorf("rename to %q: err = %v, want an invalid-topic error", c.want, err)
			}
			continue
		}
		if err != nil || got != c.want {
			t.Errorf("%q -> %q on %q = %q, %v; want %q", c.regex, c.repl, c.in, got, err, c.want)
		}
	}
	for _, bad := range []string{"x$", "x$a", "${nope}", `x\`, "$3"} {
		if _, err := newRenamer(regexp.MustCompile("(a)(b)"), bad); !errors.Is(err, ErrInvalidConfig) {
			t.Errorf("replacement %q: err = %v, want ErrInvalidConfig", bad, err)
		}
	}
}

func mustPlanBytes(t *testing.T, a *archive, cfg Config) int64 {
	t.Helper()
	cfg.Follow = false
	plan, err := mustNew(t, cfg, a, nil).Plan(testContext(t))
	if err != nil {
		t.Fatal(err)
	}
	return plan.Bytes()
}

// TestRestoreCompressed restores the JSON and bytes formats, gzip- and
// zstd-compressed (Confluent's older source cannot read compressed bytes;
// neither reads zstd), objects of one block and of several.
func TestRestoreCompressed(t *testing.T) {
	bin, err := format.NewBytes(format.DefaultBytesConfig())
	if err != nil {
		t.Fatal(err)
	}
	for _, c := range []struct {
		name  string
		inner format.Format
		comp  format.Compression
		level int
	}{
		{"bytes+gzip", bin, format.CompressionGzip, 6},
		{"bytes+zstd", bin, format.CompressionZstd, -1},
		{"json+zstd", format.NewJSON(), format.CompressionZstd, 3},
		{"json+zstd best", format.NewJSON(), format.CompressionZstd, 9},
	} {
		t.Run(c.name, func(t *testing.T) {
			brokers := newCluster(t, 1, "bin_copy")
			f, err := format.WithCompression(c.inner, c.comp, c.level)
			if err != nil {
				t.Fatal(err)
			}
			a := newArchive(t, f)
			a.put("bin", 0, 0, values("x", 0, 100))
			big := values(strings.Repeat("large value ", 100), 100, 2000) // 2.4 MB: many blocks
			a.put("bin", 0, 100, big)
			a.put("bin", 0, 2100, values("x", 2100, 50))
			cfg := baseConfig(brokers, f, "bin")
			cfg.Rename = "$0_copy"
			sum, err := mustNew(t, cfg, a, nil).Run(testContext(t), nil)
			if err != nil {
				t.Fatal(err)
			}
			if sum.Records != 2150 {
				t.Fatalf("records = %d", sum.Records)
			}
			want := append(append(values("x", 0, 100), big...), values("x", 2100, 50)...)
			checkValues(t, "bin_copy/0", readTopic(t, brokers, "bin_copy")[0], want)
		})
	}
}

// TestResumeEdgeCases: a crash right after the marker was written, and a
// resume whose already-restored records were deleted by retention.
func TestResumeEdgeCases(t *testing.T) {
	brokers := newCluster(t, 1, "m1", "m2")
	a := newArchive(t, format.NewJSON())
	want := bigArchive(t, a, "src", 1, 2, 10)[0]
	cfg := baseConfig(brokers, a.f, "src")

	t.Run("marker only", func(t *testing.T) {
		produce(t, brokers, "m1", 0, "before")
		commitMarker(t, brokers, "m1", cfg.Identity, "src", 0, 1)
		cfg := cfg
		cfg.Rename = "m1"
		sum, err := mustNew(t, cfg, a, nil).Run(testContext(t), nil)
		if err != nil || sum.Records != 20 || sum.AlreadyPresent != 0 {
			t.Fatalf("summary %+v, err %v", sum, err)
		}
		checkValues(t, "m1/0", readTopic(t, brokers, "m1")[0][1:], want)
	})
	t.Run("prefix deleted by retention", func(t *testing.T) {
		commitMarker(t, brokers, "m2", cfg.Identity, "src", 0, 0)
		var vals []string
		for _, r := range want[:12] {
			vals = append(vals, string(r.Value))
		}
		produce(t, brokers, "m2", 0, vals...)
		adm := newAdmin(t, brokers)
		var os kadm.Offsets
		os.AddOffset("m2", 0, 12, -1)
		if resp, err := adm.DeleteRecords(testContext(t), os); err != nil || resp.Error() != nil {
			t.Fatalf("delete records: %v %v", err, resp.Error())
		}
		cfg := cfg
		cfg.Rename = "m2"
		log := &logBuffer{}
		sum, err := mustNew(t, cfg, a, log).Run(testContext(t), nil)
		if err != nil || sum.Records != 8 || sum.AlreadyPresent != 12 {
			t.Fatalf("summary %+v, err %v", sum, err)
		}
		if !strings.Contains(log.String(), "cannot verify") {
			t.Fatalf("no warning about the unverifiable prefix:\n%s", log)
		}
		checkValues(t, "m2/0", readTopic(t, brokers, "m2")[0], want[12:])
	})
}

// TestPlanSkipsIndexWithEmptyTopicsDir archives with an empty topics.dir,
// where the archive index's folder sits next to the topic folders: the plan
// counts the index objects as such and never takes "_kafkas3" for a topic.
func TestPlanSkipsIndexWithEmptyTopicsDir(t *testing.T) {
	a := newArchive(t, format.NewJSON())
	a.keys.TopicsDir = ""
	key := a.put("orders", 0, 0, values("a", 0, 2))
	// Two index objects (the second a replay that supersedes the first).
	a.writeIndex("orders", 0, 2, indexed{key: key, runs: []index.Run{{First: 0, Last: 1}}})
	a.writeIndex("orders", 0, 4, indexed{key: key, runs: []index.Run{{First: 0, Last: 1}}})
	for _, withPrefix := range []bool{true, false} {
		cfg := baseConfig(nil, a.f)
		cfg.Keys.TopicsDir = ""
		cfg.DryRun = true
		cfg.TopicsRegex = regexp.MustCompile(`.*`)
		cfg.OnError = OnErrorIgnore
		if withPrefix {
			cfg.IndexPrefix = "_kafkas3/"
		}
		plan, err := mustNew(t, cfg, a, nil).Plan(testContext(t))
		if err != nil {
			t.Fatal(err)
		}
		var topics []string
		for _, tp := range plan.Topics {
			topics = append(topics, tp.Source)
		}
		if !withPrefix {
			// Without the prefix the index folder looks like a topic: the
			// failure this skip prevents.
			if fmt.Sprint(topics) != "[_kafkas3 orders]" {
				t.Fatalf("without IndexPrefix: topics %v, want the index taken for a topic", topics)
			}
			continue
		}
		if fmt.Sprint(topics) != "[orders]" || plan.Skipped[SkipIndex] != 2 || plan.Objects() != 1 {
			t.Fatalf("topics %v, skipped %v, objects %d; want [orders], 2 archive index, 1", topics, plan.Skipped, plan.Objects())
		}
	}
}

// TestClientBackoff: the restore client's retry waits start at 25 ms
// (±20%) and double up to 5 s.
func TestClientBackoff(t *testing.T) {
	for fails, want := range map[int]time.Duration{1: 25 * time.Millisecond, 2: 50 * time.Millisecond, 4: 200 * time.Millisecond,
		8: 3200 * time.Millisecond, 9: 5 * time.Second, 40: 5 * time.Second} {
		for range 50 {
			if got := clientBackoff(fails); got < want*4/5 || got > want*6/5 {
				t.Fatalf("clientBackoff(%d) = %v, want %v ± 20%%", fails, got, want)
			}
		}
	}
}

// TestCreatedTargetNotLeaderYet: a target the pass created answers its
// first ListOffsets with NOT_LEADER_OR_FOLLOWER three times (a topic that
// is still being set up); the restore retries quickly (25, 50 and 100 ms,
// where franz-go's default waits 250, 500 and 1,000 ms) and restores
// every record.
func TestCreatedTargetNotLeaderYet(t *testing.T) {
	c, err := kfake.NewCluster(kfake.NumBrokers(1))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(c.Close)
	brokers := c.ListenAddrs()
	var mu sync.Mutex
	var calls []time.Time
	c.ControlKey(int16(kmsg.ListOffsets), func(kr kmsg.Request) (kmsg.Response, error, bool) {
		mu.Lock()
		defer mu.Unlock()
		calls = append(calls, time.Now())
		if len(calls) > 3 {
			return nil, nil, false
		}
		c.KeepControl()
		req := kr.(*kmsg.ListOffsetsRequest)
		resp := req.ResponseKind().(*kmsg.ListOffsetsResponse)
		for _, rt := range req.Topics {
			st := kmsg.NewListOffsetsResponseTopic()
			st.Topic = rt.Topic
			for _, rp := range rt.Partitions {
				sp := kmsg.NewListOffsetsResponseTopicPartition()
				sp.Partition = rp.Partition
				sp.ErrorCode = kerr.NotLeaderForPartition.Code
				st.Partitions = append(st.Partitions, sp)
			}
			resp.Topics = append(resp.Topics, st)
		}
		return resp, nil, true
	})
	a := newArchive(t, format.NewJSON())
	a.putAt("src", 0, 0, 10)
	cfg := baseConfig(brokers, a.f, "src")
	cfg.Rename, cfg.CreateTopics = "dst", true
	r := mustNew(t, cfg, a, nil)
	if _, err := r.Run(testContext(t), nil); err != nil {
		t.Fatal(err)
	}
	mu.Lock()
	if len(calls) < 4 {
		t.Fatalf("%d ListOffsets requests, want the 3 refused and more", len(calls))
	}
	// franz-go's default waits at least 0.8 × (250+500+1000) ms in between.
	if waited := calls[3].Sub(calls[0]); waited > 700*time.Millisecond {
		t.Fatalf("the refused ListOffsets were retried over %v, want about 175 ms", waited)
	}
	mu.Unlock()
	checkValues(t, "dst/0", readTopic(t, brokers, "dst")[0], offsetValues("v", 0, 10))
}
