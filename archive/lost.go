package archive

import (
	"context"
	"fmt"
	"slices"

	"github.com/kafkas3/kafkas3/index"
)

// This file holds the records lost before archiving: offsets the sink had
// still to read that Kafka deleted first (retention or DeleteRecords moved
// the partition's log start offset past them), found at no extra request
// from the log start offset each fetch response carries. They are logged,
// counted (Summary.Lost, PartitionObserver.Lost) and recorded in the lost
// runs of the partition's next archive index object.

// lostBefore notes the offsets that batch b shows were lost before
// archiving: from the next offset the writer expects (the committed offset
// it started from, then the offset after the last one consumed) up to
// the first offset b holds, the log start or the --once target, whichever
// is lowest, when the log start is above the expected offset. Offsets
// between the log start and b's first record are merely absent
// (compaction, transaction markers). Nothing is judged while the expected
// offset is unknown (a group without a committed offset). A batch without
// records (lostOnly: its log start is at or past the --once target)
// finishes the partition, committing the lost offsets with a flush.
func (w *worker) lostBefore(b inBatch) (finished bool, err error) {
	next := w.pw.next()
	if next >= 0 && b.logStart > next {
		end := b.logStart
		if len(b.recs) > 0 {
			end = min(end, b.recs[0].Offset)
		}
		if w.target >= 0 {
			end = min(end, w.target)
		}
		if end > next {
			run := index.Run{First: next, Last: end - 1}
			w.reportLost(run, b.logStart)
			w.pw.lose(run)
		}
	}
	if len(b.recs) == 0 && w.target >= 0 {
		// lostOnly's batch: nothing is left to read up to the target.
		return true, w.pw.flush(w.ctx)
	}
	return false, nil
}

// reportLost counts the offsets of run not counted before (a replay after
// a store failure finds the same loss again) and logs them with a warning.
func (w *worker) reportLost(run index.Run, logStart int64) {
	n := w.tally.countLost(w.tp, run)
	if n == 0 {
		w.log.Debug("offsets lost before archiving, counted before", "topic", w.tp.topic, "partition", w.tp.partition, "offsets", run.String())
		return
	}
	w.obs.Lost(n)
	w.log.Warn(fmt.Sprintf("records lost before archiving: %s[%d] lost offsets %d-%d (%d): Kafka deleted them before the sink read them (retention or DeleteRecords moved the log start offset to %d, past the next offset to archive)",
		w.tp.topic, w.tp.partition, run.First, run.Last, run.Len(), logStart),
		"topic", w.tp.topic, "partition", w.tp.partition, "first_offset", run.First, "last_offset", run.Last,
		"count", run.Len(), "log_start_offset", logStart)
}

// next is the offset the writer expects next: the one after the last
// offset consumed, else the committed offset it started from (-1 when
// unknown).
func (w *partitionWriter) next() int64 {
	if w.last >= 0 {
		return w.last + 1
	}
	return w.start
}

// lose consumes run, offsets Kafka deleted before the sink read them.
// Without the archive index and with no open file they are committable at
// once. With the index, they go into the lost runs of the next index
// object (putIndex: a rotation, or a restamp at the next flush), so a
// crash before that commit finds the same loss again from the same
// committed offset.
func (w *partitionWriter) lose(run index.Run) {
	w.begin(run.First)
	w.last = run.Last
	if w.indexed() {
		w.lost = append(w.lost, run)
		return
	}
	if w.count == 0 {
		w.setPending(run.Last + 1)
	}
}

// lostOf returns e's lost runs for its index object at commit: those it
// has (a restamped entry keeps its own) and runs, clipped to [e.From,
// commit-1], joined where they touch, less the offsets e holds. runs must
// be in increasing order and after e's own lost runs.
func lostOf(e *index.Entry, runs []index.Run, commit int64) []index.Run {
	out := slices.Clone(e.Lost)
	for _, r := range runs {
		r.First, r.Last = max(r.First, e.From), min(r.Last, commit-1)
		if r.First > r.Last {
			continue
		}
		if n := len(out); n > 0 && r.First <= out[n-1].Last+1 {
			out[n-1].Last = max(out[n-1].Last, r.Last)
			continue
		}
		out = append(out, r)
	}
	return index.Subtract(out, e.Runs)
}

// countLost counts the offsets of run lost in partition k that were not
// counted before in this run, and returns how many.
func (t *tally) countLost(k tp, run index.Run) int64 {
	t.mu.Lock()
	defer t.mu.Unlock()
	if t.lostHigh == nil {
		t.lostHigh = make(map[tp]int64)
	}
	first := run.First
	if h, ok := t.lostHigh[k]; ok {
		first = max(first, h+1)
	}
	if first > run.Last {
		return 0
	}
	t.lostHigh[k] = run.Last
	n := run.Last - first + 1
	t.lost += n
	return n
}

// lostOnly notes, for --once, a partition whose committed offset is below
// its log start with no record left to read up to its end offset: no
// fetch would show the loss, so its worker is given a batch holding only
// the log start (sendLostOnly), which records the loss and commits the log
// start. It reports whether the partition is such a one.
func (ss *session) lostOnly(k tp, committed, logStart, end int64) bool {
	if committed < 0 || committed >= logStart || logStart < end {
		return false
	}
	if ss.logStarts == nil {
		ss.logStarts = map[tp]int64{}
	}
	ss.logStarts[k] = logStart
	return true
}

// sendLostOnly gives w, new, the batch of lostOnly when its partition has
// one; w.in has room for it.
func (ss *session) sendLostOnly(w *worker) {
	if s, ok := ss.logStarts[w.tp]; ok {
		w.in <- inBatch{logStart: s}
	}
}

// dropLost forgets the lost runs of a restamp that has no index entry to
// carry them (no index object at the committed offset the writer started
// from, and no record since the loss): the offsets are committed without
// an index object, so the index cannot record them; the warning of
// reportLost and the count stay.
func (w *partitionWriter) dropLost(ctx context.Context) {
	if len(w.lost) == 0 {
		return
	}
	w.log.WarnContext(ctx, "the archive index cannot record the offsets lost before archiving: no index entry to carry them (the partition has no index object at the committed offset and no record after the loss yet)",
		"lost", fmt.Sprint(w.lost))
	w.lost = nil
}
