package archive

import (
	"fmt"
	"sync"
	"testing"

	"github.com/kafkas3/kafkas3/format"
	"github.com/kafkas3/kafkas3/s3store"
)

// recordingObserver remembers what the sink told it.
type recordingObserver struct {
	mu                      sync.Mutex
	partitions, released    map[string]int
	fetched                 int
	lastLag, lost           map[string]int64
	records, bytes, objects int64
	retries, errors         map[string]int
}

func newRecordingObserver() *recordingObserver {
	return &recordingObserver{partitions: map[string]int{}, released: map[string]int{}, lastLag: map[string]int64{}, lost: map[string]int64{},
		retries: map[string]int{}, errors: map[string]int{}}
}

func (o *recordingObserver) Partition(topic string, partition int32) PartitionObserver {
	o.mu.Lock()
	defer o.mu.Unlock()
	k := fmt.Sprintf("%s/%d", topic, partition)
	o.partitions[k]++
	return &recordingPartition{o: o, key: k}
}

func (o *recordingObserver) Retry(kind string) { o.mu.Lock(); o.retries[kind]++; o.mu.Unlock() }
func (o *recordingObserver) Error(kind string) { o.mu.Lock(); o.errors[kind]++; o.mu.Unlock() }

type recordingPartition struct {
	o   *recordingObserver
	key string
}

func (p *recordingPartition) Archived(int64) {}

func (p *recordingPartition) Fetched(records int, lag int64, _ BatchSpan) {
	p.o.mu.Lock()
	defer p.o.mu.Unlock()
	p.o.fetched += records
	p.o.lastLag[p.key] = lag
}

func (p *recordingPartition) Completed(files []FileStats) {
	p.o.mu.Lock()
	defer p.o.mu.Unlock()
	for _, f := range files {
		p.o.objects++
		p.o.bytes += f.Bytes
		if f.Part == "" {
			p.o.records += f.Records
		}
	}
}

func (p *recordingPartition) Lost(records int64) {
	p.o.mu.Lock()
	defer p.o.mu.Unlock()
	p.o.lost[p.key] += records
}

func (p *recordingPartition) Released() { p.o.mu.Lock(); p.o.released[p.key]++; p.o.mu.Unlock() }

// TestObserverSeesWhatTheSummaryCounts: the completed objects the observer
// is told of are the summary's records, objects and bytes; every fetched
// record is reported with the partition's lag (0 once all is fetched);
// each partition is resolved once and released once.
func TestObserverSeesWhatTheSummaryCounts(t *testing.T) {
	brokers := newCluster(t, 2, "t")
	produce(t, brokers, "t", 2, 0, 7)
	obs := newRecordingObserver()
	cfg := testConfig(brokers, "t")
	cfg.Observer = obs
	sum := runSink(t, cfg, s3store.NewMemory())
	obs.mu.Lock()
	defer obs.mu.Unlock()
	if sum.Records != 14 || obs.records != sum.Records || obs.objects != sum.Objects || obs.bytes != sum.Bytes {
		t.Fatalf("observer: records %d objects %d bytes %d; summary %+v", obs.records, obs.objects, obs.bytes, sum)
	}
	if obs.fetched != 14 {
		t.Errorf("fetched %d, want 14", obs.fetched)
	}
	for _, k := range []string{"t/0", "t/1"} {
		if obs.partitions[k] != 1 || obs.released[k] != 1 {
			t.Errorf("%s resolved %d times, released %d times; want 1 and 1", k, obs.partitions[k], obs.released[k])
		}
		if lag, ok := obs.lastLag[k]; !ok || lag != 0 {
			t.Errorf("%s last lag %d (reported %v), want 0", k, lag, ok)
		}
	}
}

// TestObserverCountsBadRecordsAndRetries: each bad record skipped under
// errors.tolerance=all is one bad_record error (Summary.BadRecords); a
// registry failure the sink rides out is a registry error and a registry
// retry.
func TestObserverCountsBadRecordsAndRetries(t *testing.T) {
	avroFmt, _ := format.NewAvro(format.AvroConfig{})
	brokers := newCluster(t, 1, "t")
	conv, id1, _ := registry(t)
	produceValues(t, brokers, "t", []byte("bad"), wire(t, id1, userV1, user(1, "b")), []byte("worse"), wire(t, id1, userV1, user(3, "d")))
	fc := &flakyConverter{Converter: conv}
	fc.fails.Store(1)
	obs := newRecordingObserver()
	cfg := testConfig(brokers, "t")
	cfg.Format, cfg.ValueConverter, cfg.Observer = avroFmt, fc, obs
	cfg.Errors = ErrorsConfig{Tolerance: ToleranceAll}
	sum := runSink(t, cfg, s3store.NewMemory())
	obs.mu.Lock()
	defer obs.mu.Unlock()
	if sum.BadRecords != 2 || obs.errors[ErrorBadRecord] != 2 {
		t.Errorf("bad records: summary %d, observer %d; want 2", sum.BadRecords, obs.errors[ErrorBadRecord])
	}
	if obs.retries[ErrorRegistry] != 1 || obs.errors[ErrorRegistry] != 1 {
		t.Errorf("registry: %d retries, %d errors; want 1 and 1 (observer %v %v)", obs.retries[ErrorRegistry], obs.errors[ErrorRegistry], obs.retries, obs.errors)
	}
	if sum.Records != 2 || obs.records != 2 {
		t.Errorf("records: summary %d, observer %d", sum.Records, obs.records)
	}
}
