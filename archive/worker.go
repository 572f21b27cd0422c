package archive

import (
	"context"
	"errors"
	"sync"
	"time"

	"github.com/kafkas3/kafkas3/format"
	"github.com/twmb/franz-go/pkg/kgo"
)

// worker archives one assigned partition.
type worker struct {
	ss     *session
	tp     tp
	target int64 // --once: stop at this offset; -1 otherwise
	pw     *partitionWriter
	in     chan inBatch
	quit   chan struct{}
	exited chan struct{}
	once   sync.Once
	rec    format.Record
	dlq    []*kgo.Record // bad records to produce to the DLQ before the next publish
}

// newWorker returns the worker of k; start is the group's committed offset
// for k (-1 when unknown), target the --once end offset (-1 otherwise).
func newWorker(ss *session, k tp, start, target int64) *worker {
	w := &worker{
		ss: ss, tp: k, target: target,
		pw:     newPartitionWriter(k.topic, k.partition, start, &ss.s.cfg, ss.s.store, ss.s.log),
		in:     make(chan inBatch, 2),
		quit:   make(chan struct{}),
		exited: make(chan struct{}),
	}
	w.pw.onNullIgnored = func(offset int64) { ss.s.countSkip(k, offset, skipNull) }
	w.pw.onIndex = func() {
		ss.s.mu.Lock()
		ss.s.stats.indexObjects++
		ss.s.mu.Unlock()
	}
	return w
}

// stop ends the worker: files already complete stay committable, open
// files are aborted. It waits until the worker has exited.
func (w *worker) stop() {
	w.once.Do(func() { close(w.quit) })
	<-w.exited
}

func (w *worker) run() {
	defer close(w.exited)
	defer w.releaseQueued()
	// Use a context that survives the session's cancellation only for the
	// abort calls, so that nothing half-written is left behind.
	defer func() {
		actx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
		defer cancel()
		w.pw.abort(actx)
	}()
	var tick <-chan time.Time
	var timer *time.Timer
	if iv := w.ss.s.cfg.RotateScheduleInterval; iv > 0 {
		timer = time.NewTimer(time.Until(nextBoundary(time.Now(), iv, w.ss.s.cfg.Timezone)))
		defer timer.Stop()
		tick = timer.C
	}
	var epoch int32 = -1
	for {
		select {
		case <-w.quit:
			return
		case <-w.ss.ctx.Done():
			return
		case now := <-tick:
			if err := w.pw.flush(w.ss.ctx); err != nil {
				w.ss.fail(err)
				w.drain()
				return
			}
			if err := w.publish(epoch); err != nil {
				w.ss.fail(err)
				w.drain()
				return
			}
			timer.Reset(time.Until(nextBoundary(now, w.ss.s.cfg.RotateScheduleInterval, w.ss.s.cfg.Timezone)))
		case b := <-w.in:
			finished, err := w.process(b.recs, &epoch)
			w.ss.budget.release(b.held)
			if err != nil {
				_ = w.publish(epoch) // what is complete stays committable
				w.ss.fail(err)
				w.drain()
				return
			}
			if err := w.publish(epoch); err != nil {
				w.ss.fail(err)
				w.drain()
				return
			}
			if finished {
				w.ss.markDone(w.tp)
				w.drain()
				return
			}
		}
	}
}

// drain discards input until stopped, so the poll loop never blocks on a
// worker that has finished or failed.
func (w *worker) drain() {
	for {
		select {
		case b := <-w.in:
			w.ss.budget.release(b.held)
		case <-w.quit:
			return
		case <-w.ss.ctx.Done():
			return
		}
	}
}

// releaseQueued returns the budget of batches still queued when the worker
// exits (nothing sends to a worker that was removed from the session).
func (w *worker) releaseQueued() {
	for {
		select {
		case b := <-w.in:
			w.ss.budget.release(b.held)
		default:
			return
		}
	}
}

// process writes a fetched batch. It reports finished when --once has
// reached the target offset.
func (w *worker) process(recs []*kgo.Record, epoch *int32) (bool, error) {
	defer w.forget()
	for _, kr := range recs {
		if w.target >= 0 && kr.Offset >= w.target {
			return true, w.pw.flush(w.ss.ctx)
		}
		*epoch = kr.LeaderEpoch
		if kr.Attrs.IsControl() {
			if err := w.pw.skip(w.ss.ctx, kr.Offset); err != nil {
				return false, err
			}
		} else {
			toFormat(kr, &w.rec)
			err := w.convert(&w.rec)
			if err == nil {
				err = w.pw.write(w.ss.ctx, &w.rec)
			}
			var bad *BadRecordError
			if errors.As(err, &bad) {
				err = w.badRecord(kr, bad)
			}
			if err != nil {
				return false, err
			}
		}
		if w.target >= 0 && kr.Offset >= w.target-1 {
			return true, w.pw.flush(w.ss.ctx)
		}
	}
	return false, nil
}

// forget drops the reused record's references into the batch, so an idle
// worker does not keep its last batch's buffer alive.
func (w *worker) forget() {
	h := w.rec.Headers
	clear(h)
	w.rec = format.Record{Headers: h[:0]}
}

// publish hands completed files to the stats and their offset to the
// committer. Bad records waiting for the dead letter queue are produced
// first: an offset past a bad record becomes committable only once the
// record is in the DLQ. If that fails, nothing is made committable.
func (w *worker) publish(epoch int32) error {
	w.ss.s.addFiles(w.pw.takeDone())
	if err := w.flushDLQ(); err != nil {
		return err
	}
	if w.pw.pending >= 0 {
		w.ss.setCommittable(w.tp, w.pw.pending, epoch)
	}
	return nil
}

// toFormat converts a franz-go record, reusing dst's header slice.
func toFormat(kr *kgo.Record, dst *format.Record) {
	dst.Topic = kr.Topic
	dst.Partition = kr.Partition
	dst.Offset = kr.Offset
	dst.Timestamp = kr.Timestamp
	dst.TimestampType = format.TimestampType(kr.Attrs.TimestampType())
	dst.Key = kr.Key
	dst.Value = kr.Value
	dst.Headers = dst.Headers[:0]
	for _, h := range kr.Headers {
		dst.Headers = append(dst.Headers, format.Header{Key: h.Key, Value: h.Value})
	}
}

// nextBoundary returns the first multiple of interval after now, counted in
// loc's local time (so a 1h interval rotates on the hour in that zone).
func nextBoundary(now time.Time, interval time.Duration, loc *time.Location) time.Time {
	_, off := now.In(loc).Zone()
	local := now.UnixMilli() + int64(off)*1000
	iv := interval.Milliseconds()
	next := (local/iv + 1) * iv
	return time.UnixMilli(next - int64(off)*1000)
}
