package restore

import (
	"sync"
	"testing"
)

// recordingObserver remembers what the restore told it, per target topic.
type recordingObserver struct {
	mu       sync.Mutex
	streams  map[string]int
	records  map[string]int64
	bytes    map[string]int64
	objects  map[string]int
	failures map[string]int
	retries  map[string]int
}

func newRecordingObserver() *recordingObserver {
	return &recordingObserver{streams: map[string]int{}, records: map[string]int64{}, bytes: map[string]int64{},
		objects: map[string]int{}, failures: map[string]int{}, retries: map[string]int{}}
}

func (o *recordingObserver) Stream(topic string, _ int32) StreamObserver {
	o.mu.Lock()
	defer o.mu.Unlock()
	o.streams[topic]++
	return &recordingStream{o: o, topic: topic}
}

func (o *recordingObserver) Retry(kind string) { o.mu.Lock(); o.retries[kind]++; o.mu.Unlock() }

type recordingStream struct {
	o     *recordingObserver
	topic string
}

func (s *recordingStream) Produced(n int64) {
	s.o.mu.Lock()
	s.o.records[s.topic] += n
	s.o.mu.Unlock()
}
func (s *recordingStream) Restored(b int64) {
	s.o.mu.Lock()
	s.o.bytes[s.topic] += b
	s.o.objects[s.topic]++
	s.o.mu.Unlock()
}
func (s *recordingStream) Failed(kind string) { s.o.mu.Lock(); s.o.failures[kind]++; s.o.mu.Unlock() }

// TestObserverSeesWhatTheSummaryCounts: the records the streams report
// produced and the objects and bytes they report restored are the
// summary's, per target topic; a re-run that finds everything restored
// produces nothing and counts no object twice in one process.
func TestObserverSeesWhatTheSummaryCounts(t *testing.T) {
	brokers := newCluster(t, 2, "copy_of_orders")
	a := newArchive(t, gzipJSON(t))
	a.put("orders", 0, 0, values("p0a", 0, 600))
	a.put("orders", 0, 600, values("p0b", 600, 5))
	a.put("orders", 1, 0, values("p1", 0, 3))
	obs := newRecordingObserver()
	cfg := baseConfig(brokers, a.f, "orders")
	cfg.Rename = "copy_of_$0"
	cfg.Observer = obs
	r := mustNew(t, cfg, a, nil)
	sum, err := r.Run(testContext(t), nil)
	if err != nil {
		t.Fatal(err)
	}
	obs.mu.Lock()
	if sum.Records != 608 || obs.records["copy_of_orders"] != sum.Records || obs.bytes["copy_of_orders"] != sum.Bytes ||
		obs.objects["copy_of_orders"] != sum.Objects || obs.streams["copy_of_orders"] != 2 || len(obs.failures) != 0 {
		t.Fatalf("observer %+v, summary %+v", obs, sum)
	}
	obs.mu.Unlock()
	// Again in the same process: nothing produced, nothing counted again.
	sum2, err := r.Run(testContext(t), nil)
	if err != nil {
		t.Fatal(err)
	}
	obs.mu.Lock()
	defer obs.mu.Unlock()
	if sum2.Records != 0 || obs.records["copy_of_orders"] != 608 || obs.objects["copy_of_orders"] != 3 {
		t.Fatalf("re-run: observer %+v, summary %+v", obs, sum2)
	}
}
