package archive

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"strings"
	"testing"
	"time"

	"github.com/kafkas3/kafkas3/format"
	"github.com/kafkas3/kafkas3/partition"
	"github.com/kafkas3/kafkas3/s3store"
	"github.com/twmb/franz-go/pkg/kgo"
)

// at is 2026-08-01 hh:mm UTC.
func at(hh, mm int) time.Time { return time.Date(2026, 8, 1, hh, mm, 0, 0, time.UTC) }

// produceTimed writes one record per value to partition 0 of topic, with
// the Kafka timestamps ts (or at(9, 0) for all when ts is nil).
func produceTimed(t *testing.T, brokers []string, topic string, values []string, ts []time.Time) {
	t.Helper()
	var recs []*kgo.Record
	for i, v := range values {
		stamp := at(9, 0)
		if ts != nil {
			stamp = ts[i]
		}
		recs = append(recs, &kgo.Record{Topic: topic, Value: []byte(v), Timestamp: stamp})
	}
	produceRecs(t, brokers, recs...)
}

func mustPartitioner(t *testing.T, k partition.Kind, cfg partition.Config) partition.Partitioner {
	t.Helper()
	p, err := partition.New(k, cfg)
	if err != nil {
		t.Fatal(err)
	}
	return p
}

// wantObjects requires exactly the objects want (key suffix below
// topics/<topic>/ -> content).
func wantObjects(t *testing.T, store s3store.Store, topic string, want map[string]string) {
	t.Helper()
	got := snapshot(t, store)
	prefix := "topics/" + topic + "/"
	trimmed := map[string]string{}
	for k, v := range got {
		if strings.HasPrefix(k, prefix) {
			trimmed[strings.TrimPrefix(k, prefix)] = v
		}
	}
	if fmt.Sprint(trimmed) != fmt.Sprint(want) {
		t.Fatalf("objects:\n got %q\nwant %q", trimmed, want)
	}
}

// TestSinkHourlyLateRecords: with the hourly partitioner, the Record
// extractor and rotate.interval.ms of an hour, a record of a later hour
// rotates (Confluent's rule: one file per hour of in-order data), but a
// late record goes into its own hour's file without cutting the current
// hour's file.
func TestSinkHourlyLateRecords(t *testing.T) {
	brokers := newCluster(t, 1, "h")
	ts := []time.Time{at(9, 10), at(9, 50), at(10, 5), at(9, 58), at(10, 20), at(10, 40), at(11, 1), at(9, 59), at(11, 30)}
	var values []string
	for i := range ts {
		values = append(values, fmt.Sprint(i))
	}
	produceTimed(t, brokers, "h", values, ts)
	cfg := testConfig(brokers, "h")
	cfg.FlushSize = 100
	cfg.RotateInterval = time.Hour
	cfg.Partitioner = mustPartitioner(t, partition.KindHourly, partition.Config{Locale: "en-US", Location: time.UTC,
		Extractor: partition.ExtractRecord})
	store := s3store.NewMemory()
	sum := runSink(t, cfg, store)
	d := "year=2026/month=08/day=01/hour="
	wantObjects(t, store, "h", map[string]string{
		d + "09/h+0+0000000000.json": "0\n1\n",
		d + "10/h+0+0000000002.json": "2\n4\n5\n", // not cut by the late record 3
		d + "09/h+0+0000000003.json": "3\n",
		d + "11/h+0+0000000006.json": "6\n8\n", // not cut by the late record 7
		d + "09/h+0+0000000007.json": "7\n",
	})
	if sum.Records != 9 || sum.Objects != 5 {
		t.Fatalf("summary %+v", sum)
	}
}

// TestSinkRotateIntervalExtractorTime: with a time-based partitioner,
// rotate.interval.ms measures the partitioner's extractor (here a field),
// not the Kafka timestamps (all equal here).
func TestSinkRotateIntervalExtractorTime(t *testing.T) {
	brokers := newCluster(t, 1, "x")
	var values []string
	for _, m := range []int{0, 20, 40, 50} {
		values = append(values, fmt.Sprintf(`{"at":%d}`, at(9, m).UnixMilli()))
	}
	produceTimed(t, brokers, "x", values, nil)
	cfg := testConfig(brokers, "x")
	cfg.FlushSize = 100
	cfg.RotateInterval = 30 * time.Minute
	cfg.Partitioner = mustPartitioner(t, partition.KindHourly, partition.Config{Locale: "en", Location: time.UTC,
		Extractor: partition.ExtractRecordField, TimestampField: "at"})
	store := s3store.NewMemory()
	runSink(t, cfg, store)
	d := "year=2026/month=08/day=01/hour=09/"
	wantObjects(t, store, "x", map[string]string{
		d + "x+0+0000000000.json": values[0] + "\n" + values[1] + "\n",
		d + "x+0+0000000002.json": values[2] + "\n" + values[3] + "\n",
	})
}

// TestSinkTimeBasedPathFormat: a custom path.format and duration, in a
// zone with an offset, through the sink.
func TestSinkTimeBasedPathFormat(t *testing.T) {
	brokers := newCluster(t, 1, "tb")
	produceTimed(t, brokers, "tb", []string{"1", "2", "3"}, []time.Time{at(9, 0), at(9, 59), at(21, 0)})
	berlin, _ := time.LoadLocation("Europe/Berlin")
	cfg := testConfig(brokers, "tb")
	cfg.FlushSize = 100
	cfg.Partitioner = mustPartitioner(t, partition.KindTimeBased, partition.Config{PathFormat: "'dt'=YYYY-MM-dd/'h'=HH/",
		Duration: 12 * time.Hour, Locale: "en", Location: berlin, Extractor: partition.ExtractRecord})
	store := s3store.NewMemory()
	runSink(t, cfg, store)
	wantObjects(t, store, "tb", map[string]string{
		"dt=2026-08-01/h=00/tb+0+0000000000.json": "1\n2\n", // 11:00 and 11:59 CEST
		"dt=2026-08-01/h=12/tb+0+0000000002.json": "3\n",    // 23:00 CEST
	})
}

// TestSinkFieldPartitioner: folders per field value, a null written as
// null, and flush.size counting over every open file of the partition.
func TestSinkFieldPartitioner(t *testing.T) {
	brokers := newCluster(t, 1, "f")
	values := []string{`{"region":"eu","n":0}`, `{"region":"us","n":1}`, `{"region":"eu","n":2}`, `{"region":null,"n":3}`, `{"region":"us","n":4}`}
	produceTimed(t, brokers, "f", values, nil)
	cfg := testConfig(brokers, "f")
	cfg.FlushSize = 4
	cfg.Partitioner = mustPartitioner(t, partition.KindField, partition.Config{Fields: []string{"region"}})
	store := s3store.NewMemory()
	runSink(t, cfg, store)
	wantObjects(t, store, "f", map[string]string{
		"region=eu/f+0+0000000000.json":   values[0] + "\n" + values[2] + "\n",
		"region=us/f+0+0000000001.json":   values[1] + "\n",
		"region=null/f+0+0000000003.json": values[3] + "\n",
		"region=us/f+0+0000000004.json":   values[4] + "\n",
	})
}

// TestSinkMaxOpenPartitions: a record for a folder that is not open when
// kafkas3.max.open.partitions are rotates first.
func TestSinkMaxOpenPartitions(t *testing.T) {
	brokers := newCluster(t, 1, "m")
	var values []string
	for i, r := range []string{"eu", "us", "eu", "ap", "us", "eu"} {
		values = append(values, fmt.Sprintf(`{"r":%q,"i":%d}`, r, i))
	}
	produceTimed(t, brokers, "m", values, nil)
	cfg := testConfig(brokers, "m")
	cfg.FlushSize = 100
	cfg.MaxOpenPartitions = 2
	cfg.Partitioner = mustPartitioner(t, partition.KindField, partition.Config{Fields: []string{"r"}})
	store := s3store.NewMemory()
	sum := runSink(t, cfg, store)
	wantObjects(t, store, "m", map[string]string{
		"r=eu/m+0+0000000000.json": values[0] + "\n" + values[2] + "\n",
		"r=us/m+0+0000000001.json": values[1] + "\n",
		"r=ap/m+0+0000000003.json": values[3] + "\n",
		"r=us/m+0+0000000004.json": values[4] + "\n",
		"r=eu/m+0+0000000005.json": values[5] + "\n",
	})
	if sum.Objects != 5 {
		t.Fatalf("summary %+v", sum)
	}
}

// TestSinkPartitionerBadRecords: a record the partitioner cannot place
// (partition.ErrBadRecord) stops the sink under errors.tolerance none,
// naming topic, partition and offset, and is skipped and counted under
// all.
func TestSinkPartitionerBadRecords(t *testing.T) {
	brokers := newCluster(t, 1, "b")
	values := []string{`{"region":"eu"}`, `{"other":1}`, `{"region":1.5}`, `{"region":"us"}`}
	produceTimed(t, brokers, "b", values, nil)
	cfg := testConfig(brokers, "b")
	cfg.FlushSize = 100
	cfg.Partitioner = mustPartitioner(t, partition.KindField, partition.Config{Fields: []string{"region"}})
	store := s3store.NewMemory()
	s, err := New(cfg, store, nil)
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	_, err = s.Run(ctx)
	var bad *BadRecordError
	if !errors.Is(err, partition.ErrBadRecord) || !errors.As(err, &bad) || bad.Offset != 1 ||
		!strings.Contains(err.Error(), "topic b partition 0 offset 1") || !strings.Contains(err.Error(), `has no field "region"`) ||
		!strings.Contains(err.Error(), "errors.tolerance is none") {
		t.Fatalf("tolerance none: %v", err)
	}
	if got := snapshot(t, store); len(got) != 0 {
		t.Fatalf("tolerance none left objects %q", keysOf(got))
	}

	cfg.Errors.Tolerance = ToleranceAll
	store = s3store.NewMemory()
	sum := runSink(t, cfg, store)
	wantObjects(t, store, "b", map[string]string{
		"region=eu/b+0+0000000000.json": values[0] + "\n",
		"region=us/b+0+0000000003.json": values[3] + "\n",
	})
	if sum.Records != 2 || sum.BadRecords != 2 || sum.Skipped != 2 || !strings.Contains(sum.SkipReport(), "2 bad records") {
		t.Fatalf("summary %+v, %q", sum, sum.SkipReport())
	}

	// With a dead letter queue the two records go there, unchanged, with
	// the partitioner's error in the context headers.
	cfg.Errors = ErrorsConfig{Tolerance: ToleranceAll, DLQTopic: "b-dlq", DLQContextHeaders: true}
	cfg.GroupID = "dlq-run"
	sum = runSink(t, cfg, s3store.NewMemory())
	if sum.DLQ != 2 || sum.BadRecords != 2 {
		t.Fatalf("summary %+v", sum)
	}
	dlq := consumeAll(t, brokers, "b-dlq", 2)
	for i, off := range []int{1, 2} {
		h := map[string]string{}
		for _, x := range dlq[i].Headers {
			h[x.Key] = string(x.Value)
		}
		if string(dlq[i].Value) != values[off] || h[HeaderErrOffset] != fmt.Sprint(off) || h[HeaderErrStage] != StageTaskPut ||
			!strings.Contains(h[HeaderErrMessage], "record cannot be partitioned") {
			t.Fatalf("DLQ record %d: value %q headers %v", i, dlq[i].Value, h)
		}
	}
}

// consumeAll reads n records of topic from its start.
func consumeAll(t *testing.T, brokers []string, topic string, n int) []*kgo.Record {
	t.Helper()
	cl, err := kgo.NewClient(kgo.SeedBrokers(brokers...), kgo.ConsumeTopics(topic), kgo.ConsumeResetOffset(kgo.NewOffset().AtStart()))
	if err != nil {
		t.Fatal(err)
	}
	defer cl.Close()
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	var out []*kgo.Record
	for len(out) < n && ctx.Err() == nil {
		cl.PollFetches(ctx).EachRecord(func(r *kgo.Record) { out = append(out, r) })
	}
	if len(out) != n {
		t.Fatalf("%d records in %s, want %d", len(out), topic, n)
	}
	return out
}

// TestSinkWarnsWallclock: the wall clock extractor, which gives up
// exactly-once, is named in a warning when the sink starts.
func TestSinkWarnsWallclock(t *testing.T) {
	for _, ex := range []partition.Extractor{partition.ExtractWallclock, partition.ExtractRecord} {
		var logs strings.Builder
		cfg := testConfig([]string{"localhost:1"}, "w")
		cfg.Partitioner = mustPartitioner(t, partition.KindDaily, partition.Config{Locale: "en", Location: time.UTC, Extractor: ex})
		if _, err := New(cfg, s3store.NewMemory(), slog.New(slog.NewTextHandler(&logs, nil))); err != nil {
			t.Fatal(err)
		}
		if warned := strings.Contains(logs.String(), "timestamp.extractor is Wallclock"); warned != (ex == partition.ExtractWallclock) {
			t.Errorf("extractor %d: log %q", ex, logs.String())
		}
	}
}

// TestSinkTimeBasedReplayIdentical: store failures in the middle of
// rotations of several open folders (some of late records) make the sink
// resume from the committed offsets; the replay rewrites the same keys
// with the same bytes, so the archive equals a clean run's.
func TestSinkTimeBasedReplayIdentical(t *testing.T) {
	brokers := newCluster(t, 2, "rp")
	var recs []*kgo.Record
	for p := range int32(2) {
		for i := range 60 {
			ts := at(6, 0).Add(time.Duration(i) * 7 * time.Minute)
			if i%9 == 4 {
				ts = ts.Add(-100 * time.Minute) // late
			}
			recs = append(recs, &kgo.Record{Topic: "rp", Partition: p, Timestamp: ts,
				Value: fmt.Appendf(nil, `{"p":%d,"i":%d,"at":%d}`, p, i, ts.UnixMilli())})
		}
	}
	produceRecs(t, brokers, recs...)
	cfg := testConfig(brokers, "rp")
	cfg.FlushSize = 6
	cfg.RotateInterval = time.Hour
	cfg.MaxOpenPartitions = 2
	cfg.IndexPrefix = "_kafkas3/"
	cfg.Partitioner = mustPartitioner(t, partition.KindHourly, partition.Config{Locale: "en", Location: time.UTC,
		Extractor: partition.ExtractRecordField, TimestampField: "at"})
	cfg.Name = "clean"
	clean := s3store.NewMemory()
	runSink(t, cfg, clean)

	cfg.Name = "flaky"
	flaky := &flakyStore{Store: s3store.NewMemory(), fails: map[int]bool{3: true, 8: true, 14: true}}
	runSink(t, cfg, flaky)
	got, want := snapshot(t, flaky), snapshot(t, clean)
	if len(want) < 20 {
		t.Fatalf("clean run wrote only %d objects", len(want))
	}
	for k, v := range want {
		if strings.HasPrefix(k, "_kafkas3/") {
			continue // index keys name the writer's group
		}
		if got[k] != v {
			t.Errorf("%s differs after the replay", k)
		}
	}
	for k := range got {
		if _, ok := want[k]; !ok && !strings.HasPrefix(k, "_kafkas3/") {
			t.Errorf("extra object %s after the replay", k)
		}
	}
}

// perPartition is a partition.PerPartition whose EncodePartition and
// Encode give different folders, to tell which one the writer used.
type perPartition struct{}

func (perPartition) Encode(r *format.Record) (string, error) { return "per-record", nil }
func (perPartition) EncodePartition(p int32) (string, error) {
	return fmt.Sprintf("kafka=%d", p), nil
}

// TestPerPartitionEncodedOnce: a partitioner that depends only on the Kafka
// partition (partition.PerPartition, as the default one) is asked once per
// partition writer, and every record of that partition goes to its folder.
func TestPerPartitionEncodedOnce(t *testing.T) {
	ctx := context.Background()
	store := s3store.NewMemory()
	cfg := testConfig(nil, "t")
	cfg.FlushSize = 2
	cfg.Partitioner = perPartition{}
	w := newPartitionWriter("t", 3, -1, &cfg, store, slog.New(slog.DiscardHandler))
	for off := range int64(4) {
		r := uploadRecord(off)
		r.Partition = 3
		if err := w.write(ctx, r); err != nil {
			t.Fatal(err)
		}
	}
	keys := keysOf(snapshot(t, store))
	if len(keys) != 2 {
		t.Fatalf("objects %v, want 2", keys)
	}
	for _, k := range keys {
		if !strings.Contains(k, "/kafka=3/") {
			t.Errorf("object %s is not in the per-partition folder kafka=3", k)
		}
	}
}
