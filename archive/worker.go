package archive

import (
	"context"
	"log/slog"
	"sync"
	"time"

	"github.com/kafkas3/kafkas3/format"
	"github.com/kafkas3/kafkas3/outage"
	"github.com/kafkas3/kafkas3/partition"
	"github.com/kafkas3/kafkas3/s3store"
	"github.com/twmb/franz-go/pkg/kgo"
)

// workerDeps is what a worker needs, given by its session at construction
// (session.workerDeps): the sink's config, store, logger and tally, the
// session's context, fetch budget and dead letter queue producer, and the
// session's callbacks.
type workerDeps struct {
	cfg   *Config
	store s3store.Store
	log   *slog.Logger
	tally *tally
	// ckpt writes the index checkpoints; nil when none are written.
	ckpt *checkpointer
	// outages are the run's dependency states.
	outages *outage.Tracker
	// ctx is the session's: done when the session ends.
	ctx    context.Context
	budget *budget // the fetch budget the worker's batches hold
	// uploads are the session's upload slots (MaxUploads), shared by its
	// workers' rotations (upload.go).
	uploads chan struct{}
	dlq     *kgo.Client // the dead letter queue producer; nil without one
	// schemaRec records the schemas the archived records name.
	schemaRec *schemaRecorder
	// fail ends the session with err.
	fail func(err error)
	// done tells the session that --once archived the partition k to its
	// target.
	done func(k tp)
	// committable tells the session that every record of k before offset
	// is archived (epoch is the last record's leader epoch).
	committable func(k tp, offset int64, epoch int32)
}

// worker archives one assigned partition. The record path (path.go)
// starts at batch.
type worker struct {
	workerDeps
	tp     tp
	target int64 // --once: stop at this offset; -1 otherwise
	pw     *partitionWriter
	in     chan inBatch
	quit   chan struct{}
	exited chan struct{}
	once   sync.Once
	epoch  int32 // leader epoch of the last record given to pw; -1 before any
	// expect is the lowest offset the next record may have: the
	// committed offset the worker started from, then the last record's
	// plus one; -1 while unknown (inOrder).
	expect int64
	rec    format.Record
	queued []*kgo.Record     // bad records to produce to the DLQ before the next publish
	obs    PartitionObserver // Config.Observer's for the partition
}

// newWorker returns the worker of k; start is the group's committed offset
// for k (-1 when unknown), target the --once end offset (-1 otherwise).
func newWorker(d workerDeps, k tp, start, target int64) *worker {
	w := &worker{
		workerDeps: d, tp: k, target: target, epoch: -1, expect: max(start, -1),
		pw:     newPartitionWriter(k.topic, k.partition, start, d.cfg, d.store, d.log),
		in:     make(chan inBatch, 2),
		quit:   make(chan struct{}),
		exited: make(chan struct{}),
		obs:    d.cfg.Observer.Partition(k.topic, k.partition),
	}
	w.pw.onNullIgnored = func(offset int64) { d.tally.countSkip(k, offset, skipNull) }
	w.pw.onIndex = d.tally.indexObject
	if d.ckpt != nil {
		w.pw.onIndexCommit = d.ckpt.indexed
	}
	w.pw.slots = d.uploads
	if d.cfg.IndexPrefix != "" {
		w.pw.schemaRec = d.schemaRec
	}
	return w
}

// inOrder checks that offset comes after the offsets the partition
// already had (the committed offset the worker started from, the last
// record): offsets that go back (a topic deleted and created again, a
// truncated log) would make the sink write objects over archived ones, so
// the worker stops with a *wentBackError and the next session checks the
// topic (identity.go).
func (w *worker) inOrder(offset int64) error {
	if w.expect >= 0 && offset < w.expect {
		return &wentBackError{topic: w.tp.topic, partition: w.tp.partition, expected: w.expect, got: offset}
	}
	w.expect = offset + 1
	return nil
}

// stop ends the worker: files already complete stay committable, open
// files are aborted. It waits until the worker has exited.
func (w *worker) stop() {
	w.once.Do(func() { close(w.quit) })
	<-w.exited
}

// run takes the worker's batches (batch, path.go) and the scheduled
// rotations until it is stopped, the session ends, it fails (which fails
// the session) or --once is done.
func (w *worker) run() {
	defer close(w.exited)
	defer w.obs.Released()
	defer w.releaseQueued()
	// Use a context that survives the session's cancellation only for the
	// abort calls, so that nothing half-written is left behind.
	defer func() {
		actx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
		defer cancel()
		w.pw.abort(actx)
	}()
	sched := w.schedule()
	defer sched.stop()
	for {
		var finished bool
		var err error
		select {
		case <-w.quit:
			w.stopped()
			return
		case <-w.ctx.Done():
			return
		case r := <-w.pw.uploaded():
			if err = w.pw.finish(r); err == nil {
				err = w.publish()
			}
		case now := <-sched.c:
			err = w.scheduled()
			sched.next(now)
		case b := <-w.in:
			finished, err = w.batch(b)
		}
		if err != nil {
			w.fail(err)
			w.drain()
			return
		}
		if finished {
			w.done(w.tp)
			w.drain()
			return
		}
	}
}

// stopped lets the running upload finish, so that what it completes stays
// committable, and publishes it; the open files are aborted after.
func (w *worker) stopped() {
	if err := w.pw.wait(); err != nil {
		w.log.Warn("upload failed while the partition stopped", "topic", w.tp.topic, "partition", w.tp.partition, "err", err)
	}
	if err := w.publish(); err != nil {
		w.log.Warn("publish failed while the partition stopped", "topic", w.tp.topic, "partition", w.tp.partition, "err", err)
	}
}

// scheduled is a rotation of rotate.schedule.interval.ms: it completes the
// open files and publishes them.
func (w *worker) scheduled() error {
	if err := w.pw.flush(w.ctx); err != nil {
		return err
	}
	return w.publish()
}

// schedule is the wall-clock rotation timer of rotate.schedule.interval.ms;
// its channel c is nil (never ready) without one.
type schedule struct {
	c        <-chan time.Time
	timer    *time.Timer
	interval time.Duration
	loc      *time.Location
}

func (w *worker) schedule() *schedule {
	s := &schedule{interval: w.cfg.RotateScheduleInterval, loc: w.cfg.Timezone}
	if s.interval > 0 {
		s.timer = time.NewTimer(time.Until(nextBoundary(time.Now(), s.interval, s.loc)))
		s.c = s.timer.C
	}
	return s
}

// next sets the timer to the boundary after now.
func (s *schedule) next(now time.Time) {
	s.timer.Reset(time.Until(nextBoundary(now, s.interval, s.loc)))
}

func (s *schedule) stop() {
	if s.timer != nil {
		s.timer.Stop()
	}
}

// nextBoundary returns when the scheduled rotation after now is due, as
// Confluent's DateTimeUtils.getNextTimeAdjustedByDay computes it: the next
// multiple of interval counted from the start of now's day in loc, but no
// later than 24 hours after that start. So a 1h interval rotates on the
// hour, and an interval that does not divide a day (or exceeds one) starts
// again at each midnight.
func nextBoundary(now time.Time, interval time.Duration, loc *time.Location) time.Time {
	const day = int64(24 * time.Hour / time.Millisecond)
	ms := now.UnixMilli()
	start := partition.TimeBucket(ms, day, loc)
	iv := max(interval.Milliseconds(), 1)
	return time.UnixMilli(start + min(((ms-start)/iv+1)*iv, day))
}

// drain discards input until stopped, so the poll loop never blocks on a
// worker that has finished or failed.
func (w *worker) drain() {
	for {
		select {
		case b := <-w.in:
			w.budget.release(b.held)
		case <-w.quit:
			return
		case <-w.ctx.Done():
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
			w.budget.release(b.held)
		default:
			return
		}
	}
}

// forget drops the reused record's references into the batch, so an idle
// worker does not keep its last batch's buffer alive.
func (w *worker) forget() {
	h := w.rec.Headers
	clear(h)
	w.rec = format.Record{Headers: h[:0]}
}
