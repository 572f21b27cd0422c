package metrics

import (
	"fmt"
	"sync"
	"sync/atomic"
	"time"

	"github.com/kafkas3/kafkas3/health"
	"github.com/kafkas3/kafkas3/restore"
	"github.com/prometheus/client_golang/prometheus"
)

// Source is the source's restore.Observer: it counts into the Prometheus
// metrics registered by NewSource. Progress wraps the run's
// restore.Progress to export the pass's progress too. Build one with
// NewSource.
type Source struct {
	records, bytes, objects *prometheus.CounterVec // by target topic
	retries, errors         *prometheus.CounterVec // by kind
	planned, plannedObjects prometheus.Gauge
	done, doneRecords       prometheus.Gauge
	passes                  prometheus.Counter
	ready                   *health.Readiness

	mu     sync.Mutex
	topics map[string]*sourceTopic

	// The pass's progress, for Watch.
	pBytes, pDone, advanced atomic.Int64
	finished                atomic.Bool
}

// sourceTopic is one target topic's resolved metrics, shared by its
// partitions' streams.
type sourceTopic struct {
	records, bytes, objects prometheus.Counter
	produce, foreign        prometheus.Counter
}

// NewSource registers the source's metrics with reg and returns the
// observer counting into them. ready (nil: none) gets the Progress state
// from Watch and the store's state from Store.
func NewSource(reg prometheus.Registerer, ready *health.Readiness) (*Source, error) {
	s := &Source{
		records: counterVec("kafkas3_source_records_total", "Records produced to the target and acknowledged, per target topic (the run summary's records).", "topic"),
		bytes:   counterVec("kafkas3_source_bytes_total", "Listed (stored, compressed) bytes of the archived value objects restored or found already restored, each counted once per process, per target topic (the summary's bytes).", "topic"),
		objects: counterVec("kafkas3_source_objects_total", "Archived value objects restored or found already restored, each counted once per process, per target topic.", "topic"),
		retries: counterVec("kafkas3_retries_total", "Retries of a transient error, by kind: cluster (an admin step's transient cluster error), broker, store, registry (a --follow pass run again after that dependency failed).", "kind"),
		errors:  counterVec("kafkas3_errors_total", "Errors by kind: produce (a record the target did not take), foreign_write (a restored record landed where another writer's record is).", "kind"),
		planned: prometheus.NewGauge(prometheus.GaugeOpts{Name: "kafkas3_source_pass_planned_bytes",
			Help: "Listed bytes of the objects of the current pass's plan (a follow run plans a pass per poll)."}),
		plannedObjects: prometheus.NewGauge(prometheus.GaugeOpts{Name: "kafkas3_source_pass_planned_objects",
			Help: "Objects of the current pass's plan."}),
		done: prometheus.NewGauge(prometheus.GaugeOpts{Name: "kafkas3_source_pass_done_bytes",
			Help: "Listed bytes of the current pass's objects restored or skipped (already in the target): with kafkas3_source_pass_planned_bytes, the restore's progress."}),
		doneRecords: prometheus.NewGauge(prometheus.GaugeOpts{Name: "kafkas3_source_pass_done_records",
			Help: "Records of the current pass acknowledged by the target."}),
		passes: prometheus.NewCounter(prometheus.CounterOpts{Name: "kafkas3_source_passes_total", Help: "Restore passes started (one without --follow, one per poll with it)."}),
		ready:  ready,
		topics: map[string]*sourceTopic{},
	}
	s.retries.WithLabelValues(restore.RetryCluster)
	for _, k := range []string{restore.ErrorProduce, restore.ErrorForeignWrite} {
		s.errors.WithLabelValues(k)
	}
	if err := register(reg, s.records, s.bytes, s.objects, s.retries, s.errors, s.planned, s.plannedObjects, s.done, s.doneRecords, s.passes); err != nil {
		return nil, err
	}
	return s, nil
}

// Stream returns the target topic's metrics, resolved once per topic.
func (s *Source) Stream(topic string, _ int32) restore.StreamObserver {
	s.mu.Lock()
	defer s.mu.Unlock()
	t := s.topics[topic]
	if t == nil {
		t = &sourceTopic{
			records: s.records.WithLabelValues(topic), bytes: s.bytes.WithLabelValues(topic), objects: s.objects.WithLabelValues(topic),
			produce: s.errors.WithLabelValues(restore.ErrorProduce), foreign: s.errors.WithLabelValues(restore.ErrorForeignWrite),
		}
		s.topics[topic] = t
	}
	return t
}

// Retry counts a retry.
func (s *Source) Retry(kind string) { s.retries.WithLabelValues(kind).Inc() }

// Store wraps st so that its failures set the store's readiness.
func (s *Source) Store(st storeType) storeType {
	return observe(&observedStore{Store: st, ready: s.ready})
}

func (t *sourceTopic) Produced(records int64) { t.records.Add(float64(records)) }

func (t *sourceTopic) Restored(bytes int64) {
	t.objects.Inc()
	t.bytes.Add(float64(bytes))
}

func (t *sourceTopic) Failed(kind string) {
	if kind == restore.ErrorForeignWrite {
		t.foreign.Inc()
		return
	}
	t.produce.Inc()
}

// Progress returns a restore.Progress that exports each pass's progress
// and passes everything on to next (nil: nothing).
func (s *Source) Progress(next restore.Progress) restore.Progress {
	return &sourceProgress{s: s, next: next}
}

type sourceProgress struct {
	s    *Source
	next restore.Progress
}

func (p *sourceProgress) Planned(t restore.Totals) {
	s := p.s
	s.passes.Inc()
	s.planned.Set(float64(t.Bytes))
	s.plannedObjects.Set(float64(t.Objects))
	s.done.Set(0)
	s.doneRecords.Set(0)
	s.pBytes.Store(t.Bytes)
	s.pDone.Store(0)
	s.advanced.Add(1)
	if p.next != nil {
		p.next.Planned(t)
	}
}

func (p *sourceProgress) Advance(records, bytes int64) {
	s := p.s
	s.done.Add(float64(bytes))
	s.doneRecords.Add(float64(records))
	s.pDone.Add(bytes)
	s.advanced.Add(1)
	if p.next != nil {
		p.next.Advance(records, bytes)
	}
}

func (p *sourceProgress) Finish(sum restore.Summary) {
	p.s.finished.Store(true)
	p.s.ready.SetUp(health.Progress)
	if p.next != nil {
		p.next.Finish(sum)
	}
}

// Watch sets the Progress readiness every interval until stop is closed:
// down when the pass has objects left and nothing advanced in the whole
// interval, up otherwise.
func (s *Source) Watch(stop <-chan struct{}, interval time.Duration) {
	t := time.NewTicker(interval)
	defer t.Stop()
	var last int64 = -1
	for {
		select {
		case <-stop:
			return
		case <-t.C:
			last = s.watch(last, interval)
		}
	}
}

// watch is one of Watch's checks; last is the advance count of the
// previous one. It returns this one's.
func (s *Source) watch(last int64, interval time.Duration) int64 {
	n := s.advanced.Load()
	planned, done := s.pBytes.Load(), s.pDone.Load()
	if n == last && done < planned && !s.finished.Load() {
		s.ready.SetDown(health.Progress, fmt.Errorf("nothing restored for %s with %d of %d bytes of the pass left", interval, planned-done, planned))
	} else {
		s.ready.SetUp(health.Progress)
	}
	return n
}
