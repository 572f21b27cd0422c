package metrics

import (
	"fmt"
	"log/slog"
	"strconv"
	"sync"
	"sync/atomic"
	"time"

	"github.com/kafkas3/kafkas3/archive"
	"github.com/kafkas3/kafkas3/health"
	"github.com/prometheus/client_golang/prometheus"
)

// Sink is the sink's archive.Observer: it counts into the Prometheus
// metrics registered by NewSink and keeps the totals of the interval log
// line (Report). Build one with NewSink.
type Sink struct {
	records, bytes, objects, fetched *prometheus.CounterVec // by topic
	lost                             *prometheus.CounterVec // by topic
	lag                              *prometheus.GaugeVec   // by topic, partition
	// newest and oldest are the partitions' archive freshness (age.go).
	newest, oldest  *prometheus.GaugeVec // by topic, partition
	partitions      prometheus.Gauge
	retries, errors *prometheus.CounterVec // by kind
	store           *storeMetrics
	ready           *health.Readiness

	mu    sync.Mutex
	parts map[*sinkPartition]bool
	held  map[partKey]int // workers per partition, so a lag series goes with the last one

	// The run's totals, for Report.
	nFetched, nRecords, nBytes, nObjects atomic.Int64
	// last is what the previous Report saw.
	last reportTotals
}

type partKey struct {
	topic     string
	partition int32
}

// NewSink registers the sink's metrics with reg and returns the observer
// counting into them. ready (nil: none) gets the Progress state from
// Report and the store's state from Store.
func NewSink(reg prometheus.Registerer, ready *health.Readiness) (*Sink, error) {
	s := &Sink{
		records: counterVec("kafkas3_sink_records_total", "Records in the value objects the sink completed in the store, per topic (the run summary's records).", "topic"),
		bytes:   counterVec("kafkas3_sink_bytes_total", "Bytes of the objects the sink completed in the store (value, .keys and .headers objects), per topic (the summary's bytes).", "topic"),
		objects: counterVec("kafkas3_sink_objects_total", "Objects the sink completed in the store (value, .keys and .headers objects; not index objects), per topic (the summary's objects).", "topic"),
		fetched: counterVec("kafkas3_sink_fetched_records_total", "Records fetched from Kafka and given to the partition writers, per topic (a replay after a store failure fetches records again).", "topic"),
		lost:    counterVec("kafkas3_sink_lost_records_total", "Offsets lost before archiving, per topic: Kafka deleted them (retention or DeleteRecords moved the log start offset past them) before the sink read them (the summary's lost).", "topic"),
		lag:     prometheus.NewGaugeVec(prometheus.GaugeOpts{Name: "kafkas3_sink_consumer_lag_records", Help: "Records of the partition after the last fetched one: the high watermark minus the next offset to fetch, as of the partition's last fetch."}, []string{"topic", "partition"}),
		newest: prometheus.NewGaugeVec(prometheus.GaugeOpts{Name: "kafkas3_sink_newest_archived_timestamp_seconds",
			Help: "Timestamp of the newest record of the partition in an object the sink completed in the store (alert on time() minus it: how long nothing newer was archived)."}, []string{"topic", "partition"}),
		oldest: prometheus.NewGaugeVec(prometheus.GaugeOpts{Name: "kafkas3_sink_oldest_unarchived_timestamp_seconds",
			Help: "Timestamp of the oldest record of the partition the sink fetched and has not archived yet (to within one fetched batch); absent when every fetched record is archived."}, []string{"topic", "partition"}),
		partitions: prometheus.NewGauge(prometheus.GaugeOpts{Name: "kafkas3_sink_assigned_partitions", Help: "Kafka partitions the sink is archiving now."}),
		retries:    counterVec("kafkas3_retries_total", "Sessions resumed from the committed offsets after a transient failure, by the dependency that failed (broker, store, registry).", "kind"),
		errors:     counterVec("kafkas3_errors_total", "Errors by kind: broker, store, registry and other (a failed session, by what failed), fetch (a fetch error the Kafka client reported), bad_record (a record skipped under errors.tolerance=all).", "kind"),
		store:      newStoreMetrics(),
		ready:      ready,
		parts:      map[*sinkPartition]bool{},
		held:       map[partKey]int{},
	}
	for _, k := range []string{archive.ErrorBroker, archive.ErrorStore, archive.ErrorRegistry} {
		s.retries.WithLabelValues(k)
		s.errors.WithLabelValues(k)
	}
	for _, k := range []string{archive.ErrorOther, archive.ErrorFetch, archive.ErrorBadRecord} {
		s.errors.WithLabelValues(k)
	}
	cs := []prometheus.Collector{s.records, s.bytes, s.objects, s.fetched, s.lost, s.lag, s.newest, s.oldest, s.partitions, s.retries, s.errors}
	if err := register(reg, append(cs, s.store.collectors()...)...); err != nil {
		return nil, err
	}
	return s, nil
}

// Partition resolves the partition's metric children once.
func (s *Sink) Partition(topic string, partition int32) archive.PartitionObserver {
	k := partKey{topic, partition}
	p := &sinkPartition{
		s: s, key: k,
		records: s.records.WithLabelValues(topic), bytes: s.bytes.WithLabelValues(topic),
		objects: s.objects.WithLabelValues(topic), fetched: s.fetched.WithLabelValues(topic),
		lost:     s.lost.WithLabelValues(topic),
		lagGauge: s.lag.WithLabelValues(topic, strconv.Itoa(int(partition))),
	}
	p.age.label = strconv.Itoa(int(partition))
	s.mu.Lock()
	s.parts[p] = true
	s.held[k]++
	s.partitions.Set(float64(len(s.held)))
	s.mu.Unlock()
	return p
}

// Retry counts a resumed session.
func (s *Sink) Retry(kind string) { s.retries.WithLabelValues(kind).Inc() }

// Error counts an error.
func (s *Sink) Error(kind string) { s.errors.WithLabelValues(kind).Inc() }

// Store wraps st so that its objects are measured (open files, spool
// bytes, upload latency) and its failures reported to the readiness.
func (s *Sink) Store(st storeType) storeType {
	return observe(&observedStore{Store: st, m: s.store, ready: s.ready})
}

// sinkPartition is one partition's resolved metrics.
type sinkPartition struct {
	s                                *Sink
	key                              partKey
	records, bytes, objects, fetched prometheus.Counter
	lost                             prometheus.Counter
	lagGauge                         prometheus.Gauge
	lag                              atomic.Int64
	released                         atomic.Bool
	age                              partitionAge
}

func (p *sinkPartition) Fetched(records int, lag int64, span archive.BatchSpan) {
	p.fetched.Add(float64(records))
	p.s.nFetched.Add(int64(records))
	p.lagGauge.Set(float64(lag))
	p.lag.Store(lag)
	p.age.fetched(span)
	p.setOldest()
}

func (p *sinkPartition) Completed(files []archive.FileStats) {
	var recs, bytes int64
	for _, f := range files {
		if f.Part == "" {
			recs += f.Records
		}
		bytes += f.Bytes
	}
	p.age.completed(files)
	p.s.newest.WithLabelValues(p.key.topic, p.age.label).Set(float64(p.age.newestMS()) / 1000)
	p.records.Add(float64(recs))
	p.bytes.Add(float64(bytes))
	p.objects.Add(float64(len(files)))
	p.s.nRecords.Add(recs)
	p.s.nBytes.Add(bytes)
	p.s.nObjects.Add(int64(len(files)))
}

func (p *sinkPartition) Lost(records int64) { p.lost.Add(float64(records)) }

func (p *sinkPartition) Archived(next int64) {
	p.age.archived(next)
	p.setOldest()
}

// setOldest exports the partition's oldest unarchived record, or drops
// the series when every fetched record is archived.
func (p *sinkPartition) setOldest() {
	if ms, ok := p.age.oldestMS(); ok {
		p.s.oldest.WithLabelValues(p.key.topic, p.age.label).Set(float64(ms) / 1000)
		return
	}
	p.s.oldest.DeleteLabelValues(p.key.topic, p.age.label)
}

func (p *sinkPartition) Released() {
	if p.released.Swap(true) {
		return
	}
	s := p.s
	s.mu.Lock()
	delete(s.parts, p)
	s.held[p.key]--
	last := s.held[p.key] == 0
	if last {
		delete(s.held, p.key)
		s.lag.DeleteLabelValues(p.key.topic, strconv.Itoa(int(p.key.partition)))
		s.oldest.DeleteLabelValues(p.key.topic, strconv.Itoa(int(p.key.partition)))
	}
	s.partitions.Set(float64(len(s.held)))
	s.mu.Unlock()
}

// reportTotals are the run's totals at one Report.
type reportTotals struct {
	fetched, records, bytes, objects int64
}

// Report is the sink's interval: every interval it logs one info line
// (records, bytes and objects archived per second and in the interval,
// the consumer lag, the partitions) and sets the Progress readiness: down
// when nothing was fetched or completed in the whole interval while the
// lag says records wait, up otherwise. It returns when stop is closed.
func (s *Sink) Report(stop <-chan struct{}, interval time.Duration, log *slog.Logger) {
	t := time.NewTicker(interval)
	defer t.Stop()
	for {
		select {
		case <-stop:
			return
		case <-t.C:
			s.report(interval, log)
		}
	}
}

// report logs one interval's line and sets the Progress readiness.
func (s *Sink) report(interval time.Duration, log *slog.Logger) {
	now := reportTotals{s.nFetched.Load(), s.nRecords.Load(), s.nBytes.Load(), s.nObjects.Load()}
	d := reportTotals{now.fetched - s.last.fetched, now.records - s.last.records, now.bytes - s.last.bytes, now.objects - s.last.objects}
	s.last = now
	lag, parts := s.lagSum()
	secs := interval.Seconds()
	log.Info("sink progress", append([]any{"interval", interval.String(),
		"records_per_s", perSecond(d.records, secs), "bytes_per_s", perSecond(d.bytes, secs),
		"fetched_per_s", perSecond(d.fetched, secs), "objects", d.objects, "lag", lag, "partitions", parts,
		"records_total", now.records, "bytes_total", now.bytes, "objects_total", now.objects},
		s.ages(time.Now()).fields()...)...)
	if d.fetched == 0 && d.objects == 0 && lag > 0 {
		s.ready.SetDown(health.Progress, fmt.Errorf("nothing fetched or archived for %s while the consumer lag is %d records", interval, lag))
		return
	}
	s.ready.SetUp(health.Progress)
}

// lagSum returns the consumer lag summed over the assigned partitions and
// how many there are.
func (s *Sink) lagSum() (lag int64, parts int) {
	s.mu.Lock()
	defer s.mu.Unlock()
	byPart := make(map[partKey]int64, len(s.held))
	for p := range s.parts {
		byPart[p.key] = max(byPart[p.key], p.lag.Load())
	}
	for _, l := range byPart {
		lag += l
	}
	return lag, len(byPart)
}

func perSecond(n int64, secs float64) float64 {
	if secs <= 0 {
		return 0
	}
	return float64(int64(float64(n)/secs*10)) / 10
}
