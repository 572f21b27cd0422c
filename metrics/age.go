package metrics

import (
	"fmt"
	"sync"
	"time"

	"github.com/kafkas3/kafkas3/archive"
)

// How far behind the archive is
//
// Per partition the sink exports two timestamps (alert on time() minus
// them, as Prometheus does for last-success times):
//
//   - kafkas3_sink_newest_archived_timestamp_seconds: the newest record
//     timestamp of the objects completed in the store;
//   - kafkas3_sink_oldest_unarchived_timestamp_seconds: the oldest record
//     fetched and not yet archived (absent when none is waiting).
//
// The second needs no per-record work: each fetched batch's first offset,
// last offset and first timestamp are queued (partitionAge.fetched), and
// when the worker reports every offset before next archived
// (PartitionObserver.Archived) the batches wholly before it are dropped;
// the oldest waiting record is then in the first batch left, whose first
// timestamp stands for it (to within that batch). The queue is bounded
// (maxSpans): past it the newest two batches merge, keeping the older
// timestamp, so a long rotation costs a few KiB per partition.
//
// The interval log line ("sink progress") adds the worst partition of
// each (newest_archived_age with newest_archived_partition,
// oldest_unarchived_age with oldest_unarchived_partition).

// maxSpans bounds the fetched batches a partition remembers.
const maxSpans = 64

// partitionAge is one partition's archive freshness.
type partitionAge struct {
	label string // the partition label

	mu     sync.Mutex
	newest int64 // newest archived record timestamp, Unix ms; 0: none yet
	// spans are the fetched batches not wholly archived, in offset order.
	spans []archive.BatchSpan
}

// fetched queues a fetched batch.
func (a *partitionAge) fetched(span archive.BatchSpan) {
	a.mu.Lock()
	defer a.mu.Unlock()
	if n := len(a.spans); n == maxSpans {
		a.spans[n-2].Last = max(a.spans[n-2].Last, a.spans[n-1].Last)
		a.spans = a.spans[:n-1]
	}
	a.spans = append(a.spans, span)
}

// archived drops the batches wholly before offset next.
func (a *partitionAge) archived(next int64) {
	a.mu.Lock()
	defer a.mu.Unlock()
	i := 0
	for i < len(a.spans) && a.spans[i].Last < next {
		i++
	}
	a.spans = append(a.spans[:0], a.spans[i:]...)
}

// completed notes the newest record timestamp of completed objects.
func (a *partitionAge) completed(files []archive.FileStats) {
	a.mu.Lock()
	defer a.mu.Unlock()
	for _, f := range files {
		if f.Part == "" && f.Records > 0 {
			a.newest = max(a.newest, f.MaxTime)
		}
	}
}

// newestMS is the newest archived record timestamp (Unix ms; 0: none).
func (a *partitionAge) newestMS() int64 {
	a.mu.Lock()
	defer a.mu.Unlock()
	return a.newest
}

// oldestMS is the oldest waiting record's timestamp (Unix ms), if any.
func (a *partitionAge) oldestMS() (int64, bool) {
	a.mu.Lock()
	defer a.mu.Unlock()
	if len(a.spans) == 0 {
		return 0, false
	}
	return a.spans[0].FirstTime.UnixMilli(), true
}

// ages are the worst partitions' freshness at now, for the interval line:
// the oldest newest-archived record and the oldest waiting one.
type ages struct {
	newest, oldest         time.Duration
	newestPart, oldestPart string
}

// fields are the log attributes of a (none for what no partition has).
func (a ages) fields() []any {
	var out []any
	if a.newestPart != "" {
		out = append(out, "newest_archived_age", a.newest.Round(time.Second).String(), "newest_archived_partition", a.newestPart)
	}
	if a.oldestPart != "" {
		out = append(out, "oldest_unarchived_age", a.oldest.Round(time.Second).String(), "oldest_unarchived_partition", a.oldestPart)
	}
	return out
}

// ages returns the worst partitions' freshness at now.
func (s *Sink) ages(now time.Time) ages {
	s.mu.Lock()
	defer s.mu.Unlock()
	var out ages
	for p := range s.parts {
		name := fmt.Sprintf("%s/%d", p.key.topic, p.key.partition)
		if ms := p.age.newestMS(); ms > 0 {
			if d := now.Sub(time.UnixMilli(ms)); out.newestPart == "" || d > out.newest {
				out.newest, out.newestPart = d, name
			}
		}
		if ms, ok := p.age.oldestMS(); ok {
			if d := now.Sub(time.UnixMilli(ms)); out.oldestPart == "" || d > out.oldest {
				out.oldest, out.oldestPart = d, name
			}
		}
	}
	return out
}
