package archive

import (
	"sort"
	"sync"
	"time"
)

// tally counts what a run archived, for its Summary. Workers, sessions and
// the snapshotter report to it concurrently.
type tally struct {
	mu sync.Mutex
	stats
	// onObject is Sink.OnObject, called for each completed object.
	onObject func(FileStats)
	// obs is Config.Observer: told of each bad record counted.
	obs Observer
}

type stats struct {
	topics     map[string]bool
	partitions map[tp]bool
	records    int64
	objects    int64
	bytes      int64
	// skipHigh is, per partition, the highest skipped offset counted, so a
	// replay after a store failure does not count a skip twice.
	skipHigh               map[tp]int64
	bad, dlq, nullsIgnored int64
	indexObjects           int64
	snapshots              int64

	// lost counts the offsets lost before archiving (lost.go); lostHigh
	// is, per partition, the highest one counted.
	lost     int64
	lostHigh map[tp]int64
}

// skipReason says why a record was not archived.
type skipReason int

const (
	skipBad skipReason = iota + 1
	skipBadDLQ
	skipNull
)

// reset starts the counts of a new run; onObject is told of each
// completed object.
func (t *tally) reset(onObject func(FileStats)) {
	t.mu.Lock()
	defer t.mu.Unlock()
	t.stats = stats{topics: map[string]bool{}, partitions: map[tp]bool{}}
	t.onObject = onObject
}

// assigned counts partition k as archived by the run.
func (t *tally) assigned(k tp) {
	t.mu.Lock()
	defer t.mu.Unlock()
	t.topics[k.topic] = true
	t.partitions[k] = true
}

// addFiles counts completed objects and tells onObject of each.
func (t *tally) addFiles(files []FileStats) {
	if len(files) == 0 {
		return
	}
	t.mu.Lock()
	for _, f := range files {
		t.objects++
		if f.Part == "" {
			t.records += f.Records
		}
		t.bytes += f.Bytes
	}
	onObject := t.onObject
	t.mu.Unlock()
	if onObject != nil {
		for _, f := range files {
			onObject(f)
		}
	}
}

// countSkip counts a record of k at offset that is not archived.
func (t *tally) countSkip(k tp, offset int64, why skipReason) {
	t.mu.Lock()
	defer t.mu.Unlock()
	if t.skipHigh == nil {
		t.skipHigh = make(map[tp]int64)
	}
	if h, ok := t.skipHigh[k]; ok && offset <= h {
		return
	}
	t.skipHigh[k] = offset
	switch why {
	case skipBadDLQ:
		t.dlq++
		t.bad++
	case skipBad:
		t.bad++
	case skipNull:
		t.nullsIgnored++
	}
	if why != skipNull && t.obs != nil {
		t.obs.Error(ErrorBadRecord)
	}
}

// indexObject counts an archive index object written.
func (t *tally) indexObject() {
	t.mu.Lock()
	t.indexObjects++
	t.mu.Unlock()
}

// snapshot counts a group offset snapshot written.
func (t *tally) snapshot() {
	t.mu.Lock()
	t.snapshots++
	t.mu.Unlock()
}

// summary is the run's Summary, started at start.
func (t *tally) summary(start time.Time) Summary {
	t.mu.Lock()
	defer t.mu.Unlock()
	out := Summary{Partitions: len(t.partitions), Records: t.records, Objects: t.objects, Bytes: t.bytes, Elapsed: time.Since(start),
		BadRecords: t.bad, DLQ: t.dlq, NullsIgnored: t.nullsIgnored, Skipped: t.bad + t.nullsIgnored, Lost: t.lost,
		IndexObjects: t.indexObjects, Snapshots: t.snapshots}
	for topic := range t.topics {
		out.Topics = append(out.Topics, topic)
	}
	sort.Strings(out.Topics)
	return out
}
