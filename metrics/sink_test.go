package metrics

import (
	"bytes"
	"encoding/json"
	"log/slog"
	"strings"
	"testing"

	"github.com/kafkas3/kafkas3/archive"
	"github.com/kafkas3/kafkas3/health"
	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/testutil"
)

func newTestSink(t *testing.T) (*Sink, *prometheus.Registry, *health.Readiness) {
	t.Helper()
	reg := prometheus.NewRegistry()
	ready := health.NewReadiness(nil)
	s, err := NewSink(reg, ready)
	if err != nil {
		t.Fatal(err)
	}
	return s, reg, ready
}

func TestSinkCountsCompletedObjectsPerTopic(t *testing.T) {
	s, _, _ := newTestSink(t)
	a := s.Partition("orders", 0)
	b := s.Partition("orders", 1)
	c := s.Partition("payments", 0)
	// A value object with its .keys and .headers objects: three objects,
	// their bytes, the records once (as Summary counts them).
	a.Completed([]archive.FileStats{
		{Key: "k0", Records: 10, Bytes: 100},
		{Key: "k0.keys", Part: archive.PartKeys, Records: 10, Bytes: 20},
		{Key: "k0.headers", Part: archive.PartHeaders, Records: 10, Bytes: 30},
	})
	b.Completed([]archive.FileStats{{Key: "k1", Records: 5, Bytes: 50}})
	c.Completed([]archive.FileStats{{Key: "k2", Records: 7, Bytes: 70}, {Key: "k3", Records: 1, Bytes: 9}})
	for _, tc := range []struct {
		c    prometheus.Collector
		want float64
	}{
		{s.records.WithLabelValues("orders"), 15},
		{s.bytes.WithLabelValues("orders"), 200},
		{s.objects.WithLabelValues("orders"), 4},
		{s.records.WithLabelValues("payments"), 8},
		{s.bytes.WithLabelValues("payments"), 79},
		{s.objects.WithLabelValues("payments"), 2},
	} {
		if got := testutil.ToFloat64(tc.c); got != tc.want {
			t.Errorf("%s = %v, want %v", desc(tc.c), got, tc.want)
		}
	}
	if s.nRecords.Load() != 23 || s.nBytes.Load() != 279 || s.nObjects.Load() != 6 {
		t.Errorf("totals: records %d bytes %d objects %d", s.nRecords.Load(), s.nBytes.Load(), s.nObjects.Load())
	}
}

// TestSinkCountsLostRecordsPerTopic: the offsets lost before archiving
// that the partitions report add up per topic in
// kafkas3_sink_lost_records_total, exported as such.
func TestSinkCountsLostRecordsPerTopic(t *testing.T) {
	s, reg, _ := newTestSink(t)
	s.Partition("reten", 0).Lost(40)
	s.Partition("reten", 1).Lost(2)
	s.Partition("other", 0).Lost(1)
	want := `
# HELP kafkas3_sink_lost_records_total Offsets lost before archiving, per topic: Kafka deleted them (retention or DeleteRecords moved the log start offset past them) before the sink read them (the summary's lost).
# TYPE kafkas3_sink_lost_records_total counter
kafkas3_sink_lost_records_total{topic="other"} 1
kafkas3_sink_lost_records_total{topic="reten"} 42
`
	if err := testutil.GatherAndCompare(reg, strings.NewReader(want), "kafkas3_sink_lost_records_total"); err != nil {
		t.Error(err)
	}
}

func desc(c prometheus.Collector) string {
	ch := make(chan *prometheus.Desc, 1)
	c.Describe(ch)
	return (<-ch).String()
}

func TestSinkLagPerPartitionFollowsTheWorkers(t *testing.T) {
	s, reg, _ := newTestSink(t)
	p0 := s.Partition("orders", 0)
	p1 := s.Partition("orders", 1)
	p0.Fetched(100, 400, archive.BatchSpan{})
	p1.Fetched(3, 0, archive.BatchSpan{})
	p0.Fetched(50, 350, archive.BatchSpan{})
	if got := testutil.ToFloat64(s.lag.WithLabelValues("orders", "0")); got != 350 {
		t.Errorf("lag of orders/0 = %v, want the last fetch's 350", got)
	}
	if got := testutil.ToFloat64(s.fetched.WithLabelValues("orders")); got != 153 {
		t.Errorf("fetched = %v, want 153", got)
	}
	if got := testutil.ToFloat64(s.partitions); got != 2 {
		t.Errorf("assigned partitions = %v, want 2", got)
	}
	if lag, n := s.lagSum(); lag != 350 || n != 2 {
		t.Errorf("lagSum = %d over %d, want 350 over 2", lag, n)
	}
	// A new worker of orders/0 (resumed session) before the old one's
	// release keeps the series; the last release removes it.
	again := s.Partition("orders", 0)
	p0.Released()
	p0.Released() // once only
	if n := testutil.CollectAndCount(reg, "kafkas3_sink_consumer_lag_records"); n != 2 {
		t.Errorf("lag series after one of two workers of orders/0 left: %d, want 2", n)
	}
	again.Released()
	p1.Released()
	if n := testutil.CollectAndCount(reg, "kafkas3_sink_consumer_lag_records"); n != 0 {
		t.Errorf("lag series after every release: %d, want 0", n)
	}
	if got := testutil.ToFloat64(s.partitions); got != 0 {
		t.Errorf("assigned partitions = %v, want 0", got)
	}
}

func TestSinkRetriesAndErrorsByKind(t *testing.T) {
	s, reg, _ := newTestSink(t)
	// Every kind is exported from the start, at zero.
	if n := testutil.CollectAndCount(reg, "kafkas3_errors_total"); n != 6 {
		t.Errorf("error kinds exported at start: %d, want 6", n)
	}
	s.Retry(archive.ErrorStore)
	s.Retry(archive.ErrorStore)
	s.Error(archive.ErrorStore)
	s.Error(archive.ErrorBadRecord)
	s.Error(archive.ErrorBadRecord)
	s.Error(archive.ErrorBadRecord)
	want := `
# HELP kafkas3_retries_total Sessions resumed from the committed offsets after a transient failure, by the dependency that failed (broker, store, registry).
# TYPE kafkas3_retries_total counter
kafkas3_retries_total{kind="broker"} 0
kafkas3_retries_total{kind="registry"} 0
kafkas3_retries_total{kind="store"} 2
`
	if err := testutil.GatherAndCompare(reg, strings.NewReader(want), "kafkas3_retries_total"); err != nil {
		t.Error(err)
	}
	if got := testutil.ToFloat64(s.errors.WithLabelValues(archive.ErrorBadRecord)); got != 3 {
		t.Errorf("bad_record errors = %v, want 3", got)
	}
	if got := testutil.ToFloat64(s.errors.WithLabelValues(archive.ErrorFetch)); got != 0 {
		t.Errorf("fetch errors = %v, want 0", got)
	}
}

// logLine is one parsed JSON log line.
func logLines(t *testing.T, b *bytes.Buffer) []map[string]any {
	t.Helper()
	var out []map[string]any
	for _, l := range strings.Split(strings.TrimSpace(b.String()), "\n") {
		if l == "" {
			continue
		}
		m := map[string]any{}
		if err := json.Unmarshal([]byte(l), &m); err != nil {
			t.Fatalf("not JSON: %q", l)
		}
		out = append(out, m)
	}
	return out
}

func TestSinkReportLineAndProgressReadiness(t *testing.T) {
	s, _, ready := newTestSink(t)
	var buf bytes.Buffer
	log := slog.New(slog.NewJSONHandler(&buf, nil))
	p := s.Partition("orders", 0)
	p.Fetched(3000, 500, archive.BatchSpan{})
	p.Completed([]archive.FileStats{{Key: "a", Records: 1000, Bytes: 60000}, {Key: "b", Records: 1000, Bytes: 40000}})
	s.report(10e9, log) // 10 s
	lines := logLines(t, &buf)
	if len(lines) != 1 {
		t.Fatalf("want one line, got %v", lines)
	}
	l := lines[0]
	want := map[string]any{"msg": "sink progress", "level": "INFO", "interval": "10s", "records_per_s": 200.0, "bytes_per_s": 10000.0,
		"fetched_per_s": 300.0, "objects": 2.0, "lag": 500.0, "partitions": 1.0, "records_total": 2000.0, "objects_total": 2.0, "bytes_total": 100000.0}
	for k, v := range want {
		if l[k] != v {
			t.Errorf("%s = %v, want %v (line %v)", k, l[k], v, l)
		}
	}
	if err := ready.Ready(); err != nil {
		t.Fatalf("progress made: %v", err)
	}
	// An interval with nothing fetched or completed while records wait:
	// progress is down; the next interval that moves brings it back.
	buf.Reset()
	s.report(10e9, log)
	if err := ready.Ready(); err == nil || !strings.Contains(err.Error(), "progress: down") || !strings.Contains(err.Error(), "consumer lag is 500 records") {
		t.Fatalf("stalled: Ready() = %v", err)
	}
	if l := logLines(t, &buf)[0]; l["records_per_s"] != 0.0 || l["objects"] != 0.0 || l["records_total"] != 2000.0 {
		t.Errorf("idle interval line: %v", l)
	}
	p.Fetched(10, 0, archive.BatchSpan{})
	s.report(10e9, log)
	if err := ready.Ready(); err != nil {
		t.Fatalf("moving again: %v", err)
	}
	// Caught up (no lag) and idle is not a stall.
	s.report(10e9, log)
	if err := ready.Ready(); err != nil {
		t.Fatalf("idle without lag: %v", err)
	}
}

func TestRegistryIsTheOnePassedIn(t *testing.T) {
	reg := prometheus.NewRegistry()
	if _, err := NewSink(reg, nil); err != nil {
		t.Fatal(err)
	}
	if _, err := NewSink(reg, nil); err == nil {
		t.Fatal("a second sink registered the same metrics into one registry")
	}
	if _, err := NewSink(prometheus.NewRegistry(), nil); err != nil {
		t.Fatalf("a second registry: %v", err)
	}
	mfs, err := prometheus.DefaultGatherer.Gather()
	if err != nil {
		t.Fatal(err)
	}
	for _, mf := range mfs {
		if strings.HasPrefix(mf.GetName(), "kafkas3_") {
			t.Errorf("%s is in the default registry", mf.GetName())
		}
	}
}
