package metrics

import (
	"strings"
	"testing"
	"time"

	"github.com/kafkas3/kafkas3/health"
	"github.com/kafkas3/kafkas3/restore"
	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/testutil"
	"github.com/twmb/franz-go/pkg/kgo"
)

func newTestSource(t *testing.T) (*Source, *prometheus.Registry, *health.Readiness) {
	t.Helper()
	reg := prometheus.NewRegistry()
	ready := health.NewReadiness(nil)
	s, err := NewSource(reg, ready)
	if err != nil {
		t.Fatal(err)
	}
	return s, reg, ready
}

func TestSourceCountsPerTargetTopic(t *testing.T) {
	s, _, _ := newTestSource(t)
	a0, a1, b := s.Stream("copy_orders", 0), s.Stream("copy_orders", 1), s.Stream("copy_pay", 0)
	a0.Produced(512)
	a0.Produced(88)
	a1.Produced(7)
	a0.Restored(1000)
	a1.Restored(500)
	b.Produced(3)
	b.Restored(30)
	b.Failed(restore.ErrorProduce)
	a1.Failed(restore.ErrorForeignWrite)
	for _, tc := range []struct {
		c    prometheus.Collector
		want float64
	}{
		{s.records.WithLabelValues("copy_orders"), 607},
		{s.bytes.WithLabelValues("copy_orders"), 1500},
		{s.objects.WithLabelValues("copy_orders"), 2},
		{s.records.WithLabelValues("copy_pay"), 3},
		{s.objects.WithLabelValues("copy_pay"), 1},
		{s.errors.WithLabelValues(restore.ErrorProduce), 1},
		{s.errors.WithLabelValues(restore.ErrorForeignWrite), 1},
	} {
		if got := testutil.ToFloat64(tc.c); got != tc.want {
			t.Errorf("%s = %v, want %v", desc(tc.c), got, tc.want)
		}
	}
	s.Retry(restore.RetryCluster)
	if got := testutil.ToFloat64(s.retries.WithLabelValues(restore.RetryCluster)); got != 1 {
		t.Errorf("cluster retries = %v", got)
	}
}

// recordProgress remembers what it was told.
type recordProgress struct {
	planned        restore.Totals
	records, bytes int64
	finished       bool
}

func (p *recordProgress) Planned(t restore.Totals) { p.planned = t }
func (p *recordProgress) Advance(r, b int64)       { p.records += r; p.bytes += b }
func (p *recordProgress) Finish(restore.Summary)   { p.finished = true }

func TestSourceProgressAndStall(t *testing.T) {
	s, _, ready := newTestSource(t)
	next := &recordProgress{}
	p := s.Progress(next)
	p.Planned(restore.Totals{Objects: 4, Bytes: 4000})
	p.Advance(100, 0)
	p.Advance(0, 1000)
	if got := testutil.ToFloat64(s.planned); got != 4000 {
		t.Errorf("planned bytes = %v", got)
	}
	if got := testutil.ToFloat64(s.plannedObjects); got != 4 {
		t.Errorf("planned objects = %v", got)
	}
	if testutil.ToFloat64(s.done) != 1000 || testutil.ToFloat64(s.doneRecords) != 100 {
		t.Errorf("done = %v bytes, %v records", testutil.ToFloat64(s.done), testutil.ToFloat64(s.doneRecords))
	}
	if next.planned.Bytes != 4000 || next.records != 100 || next.bytes != 1000 {
		t.Errorf("not passed on: %+v", next)
	}
	last := s.watch(-1, time.Minute)
	if err := ready.Ready(); err != nil {
		t.Fatalf("advancing: %v", err)
	}
	last = s.watch(last, time.Minute)
	if err := ready.Ready(); err == nil || !strings.Contains(err.Error(), "3000 of 4000 bytes") {
		t.Fatalf("stalled pass: Ready() = %v", err)
	}
	p.Advance(0, 3000)
	last = s.watch(last, time.Minute)
	if err := ready.Ready(); err != nil {
		t.Fatalf("advanced again: %v", err)
	}
	// A pass that is done (a follow run between polls) is not stalled.
	_ = s.watch(last, time.Minute)
	if err := ready.Ready(); err != nil {
		t.Fatalf("pass done, idle: %v", err)
	}
	// A second pass starts from zero.
	p.Planned(restore.Totals{Objects: 1, Bytes: 10})
	if testutil.ToFloat64(s.done) != 0 || testutil.ToFloat64(s.passes) != 2 {
		t.Errorf("second pass: done %v, passes %v", testutil.ToFloat64(s.done), testutil.ToFloat64(s.passes))
	}
	p.Finish(restore.Summary{})
	if !next.finished {
		t.Error("Finish not passed on")
	}
}

func TestKafkaHooksProduceLatencyAndFirstConnection(t *testing.T) {
	s, reg, ready := newTestSource(t)
	ready.Expect(health.Broker)
	h, err := s.SourceHooks(reg)
	if err != nil {
		t.Fatal(err)
	}
	var _ kgo.HookBrokerE2E = h
	h.OnBrokerE2E(kgo.BrokerMetadata{}, produceKey, kgo.BrokerE2E{WriteErr: errTest})
	if err := ready.Ready(); err == nil {
		t.Fatal("a failed write connected the broker")
	}
	if n := histogramCount(t, reg, "kafkas3_source_produce_duration_seconds"); n != 0 {
		t.Fatalf("a failed request was observed: %d", n)
	}
	h.OnBrokerE2E(kgo.BrokerMetadata{}, 3 /* metadata */, kgo.BrokerE2E{TimeToWrite: time.Millisecond, ReadWait: 2 * time.Millisecond})
	if err := ready.Ready(); err != nil {
		t.Fatalf("after a broker's response: %v", err)
	}
	h.OnBrokerE2E(kgo.BrokerMetadata{}, produceKey, kgo.BrokerE2E{ReadWait: 15625 * time.Microsecond})
	h.OnBrokerE2E(kgo.BrokerMetadata{}, produceKey, kgo.BrokerE2E{ReadWait: 3 * time.Second})
	if n := histogramCount(t, reg, "kafkas3_source_produce_duration_seconds"); n != 2 {
		t.Fatalf("produce observations = %d, want 2 (metadata is not produce)", n)
	}
	want := `
# HELP kafkas3_source_produce_duration_seconds Round trip of each produce request to the target brokers (write to the end of the response; acks=all, so until every in-sync replica has the batch).
# TYPE kafkas3_source_produce_duration_seconds histogram
kafkas3_source_produce_duration_seconds_bucket{le="0.001"} 0
kafkas3_source_produce_duration_seconds_bucket{le="0.005"} 0
kafkas3_source_produce_duration_seconds_bucket{le="0.01"} 0
kafkas3_source_produce_duration_seconds_bucket{le="0.025"} 1
kafkas3_source_produce_duration_seconds_bucket{le="0.05"} 1
kafkas3_source_produce_duration_seconds_bucket{le="0.1"} 1
kafkas3_source_produce_duration_seconds_bucket{le="0.25"} 1
kafkas3_source_produce_duration_seconds_bucket{le="0.5"} 1
kafkas3_source_produce_duration_seconds_bucket{le="1"} 1
kafkas3_source_produce_duration_seconds_bucket{le="2.5"} 1
kafkas3_source_produce_duration_seconds_bucket{le="5"} 2
kafkas3_source_produce_duration_seconds_bucket{le="10"} 2
kafkas3_source_produce_duration_seconds_bucket{le="30"} 2
kafkas3_source_produce_duration_seconds_bucket{le="60"} 2
kafkas3_source_produce_duration_seconds_bucket{le="+Inf"} 2
kafkas3_source_produce_duration_seconds_sum 3.015625
kafkas3_source_produce_duration_seconds_count 2
`
	if err := testutil.GatherAndCompare(reg, strings.NewReader(want), "kafkas3_source_produce_duration_seconds"); err != nil {
		t.Error(err)
	}
}
