package archive

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/kafkas3/kafkas3/format"
	"github.com/kafkas3/kafkas3/index"
	"github.com/kafkas3/kafkas3/outage"
	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kgo"
	"github.com/twmb/franz-go/pkg/kmsg"
)

// This file is one record's path from fetch to store, top-down in call
// order (doc.go lists the stops): poll, dispatch, worker.batch,
// worker.process, worker.archive, toFormat, worker.convert,
// partitionWriter.write, partitionWriter.rotate, worker.publish,
// session.setCommittable, session.commitLoop, session.commitNow. The
// details of each stop live in the file of its stage: fetch.go and
// budget.go (fetching), worker.go (the worker's loop and its deps),
// writer.go (the partition writer's steps), rotate.go (when it rotates),
// parts.go (the .keys and .headers objects), schema.go (the schema
// decision), objects.go (the store objects of a file), upload.go (a
// rotation's store work, off the worker's path), indexwriter.go (the
// archive index), tally.go (the run's counts), dlq.go (bad records),
// commit.go (the offsets to commit), lost.go (records lost before
// archiving).

// poll is the fetch loop: it hands each partition's records to its worker
// until --once is done, the session ends or a fetch fails for good.
func (ss *session) poll() error {
	for {
		fetches := ss.cl.PollRecords(ss.pollCtx, 4096)
		if fetches.IsClientClosed() {
			return nil
		}
		if over, err := ss.pollOver(fetches); over {
			ss.cl.AllowRebalance()
			return err
		}
		ss.dispatch(fetches)
		ss.cl.AllowRebalance()
		if ss.s.cfg.Once && ss.onceDone() {
			return nil
		}
	}
}

// dispatch hands each partition's fetched records to its worker, copied
// out of the fetch response where they alias it (detach) and holding their
// share of the fetch budget until the worker has written them.
func (ss *session) dispatch(fetches kgo.Fetches) {
	// The worker set cannot change between PollRecords and
	// AllowRebalance, so look workers up first and send unlocked (a
	// worker may need the lock to report that it is done).
	type batch struct {
		w            *worker
		recs         []*kgo.Record
		hw, logStart int64
	}
	var batches []batch
	ss.mu.Lock()
	fetches.EachPartition(func(p kgo.FetchTopicPartition) {
		if w := ss.workers[tp{p.Topic, p.Partition}]; w != nil && len(p.Records) > 0 {
			batches = append(batches, batch{w, p.Records, p.HighWatermark, p.LogStartOffset})
		}
	})
	ss.mu.Unlock()
	if len(batches) > 0 {
		ss.s.deps.Recovered(outage.Broker) // records fetched
	}
	for _, b := range batches {
		first, last := b.recs[0], b.recs[len(b.recs)-1]
		b.w.obs.Fetched(len(b.recs), max(b.hw-last.Offset-1, 0), BatchSpan{First: first.Offset, Last: last.Offset, FirstTime: first.Timestamp})
		held, ok := ss.budget.acquire(batchBytes(b.recs))
		if !ok {
			return
		}
		detach(b.recs)
		select {
		case b.w.in <- inBatch{b.recs, held, b.logStart}:
		case <-ss.ctx.Done():
			ss.budget.release(held)
		}
	}
}

// batch writes a batch the worker received (worker.run) and publishes
// what it completed, after noting the offsets it shows were lost before
// archiving (lostBefore, lost.go). It reports finished when --once has
// reached the target offset.
func (w *worker) batch(b inBatch) (finished bool, err error) {
	if finished, err = w.lostBefore(b); err == nil && !finished {
		finished, err = w.process(b.recs)
	}
	w.budget.release(b.held)
	if err != nil {
		// What is complete, or being uploaded, stays committable.
		if werr := w.pw.wait(); werr != nil {
			w.log.Warn("upload failed", "topic", w.tp.topic, "partition", w.tp.partition, "err", werr)
		}
		_ = w.publish()
		return false, err
	}
	return finished, w.publish()
}

// process writes the records of a batch, in offset order, up to the
// --once target.
func (w *worker) process(recs []*kgo.Record) (bool, error) {
	defer w.forget()
	for _, kr := range recs {
		if w.target >= 0 && kr.Offset >= w.target {
			return true, w.pw.flush(w.ctx)
		}
		if err := w.inOrder(kr.Offset); err != nil {
			return false, err
		}
		w.epoch = kr.LeaderEpoch
		if err := w.archive(kr); err != nil {
			return false, err
		}
		if w.target >= 0 && kr.Offset >= w.target-1 {
			return true, w.pw.flush(w.ctx)
		}
	}
	return false, nil
}

// archive takes one record to the partition writer: a control record (a
// transaction marker) is only consumed; any other is converted and
// written. A bad record goes to errors.tolerance (badRecord, dlq.go).
func (w *worker) archive(kr *kgo.Record) error {
	if kr.Attrs.IsControl() {
		return w.pw.skip(w.ctx, kr.Offset)
	}
	toFormat(kr, &w.rec)
	err := w.convert(&w.rec)
	if err == nil {
		err = w.pw.write(w.ctx, &w.rec)
	}
	if err == nil {
		return nil // before bad: errors.As makes it escape, an allocation per record
	}
	var bad *BadRecordError
	if errors.As(err, &bad) {
		return w.badRecord(kr, bad)
	}
	return err
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

// convert sets r's KeyTyped and ValueTyped with the configured converters.
// A bad key or value gives a *BadRecordError, any other converter failure
// a *ConverterError (convertError).
func (w *worker) convert(r *format.Record) error {
	r.KeyTyped, r.ValueTyped = nil, nil
	if c := w.cfg.KeyConverter; c != nil && r.Key != nil {
		t, err := c.Convert(w.ctx, r.Topic, true, r.Key)
		if err != nil {
			return convertError(w.ctx, r, StageKeyConverter, w.cfg.KeyConverterClass, err)
		}
		r.KeyTyped = t
	}
	if c := w.cfg.ValueConverter; c != nil && r.Value != nil {
		t, err := c.Convert(w.ctx, r.Topic, false, r.Value)
		if err != nil {
			return convertError(w.ctx, r, StageValueConverter, w.cfg.ValueConverterClass, err)
		}
		r.ValueTyped = t
	}
	w.outages.Recovered(outage.Registry)
	return nil
}

// write consumes one record: it may rotate before (record-time interval,
// a switch between tombstones and other records, a new time bucket or
// too many open folders, a schema change) and after (flush.size) writing
// it. A record that cannot be written because of its data, the
// partitioner's ErrBadRecord included, gives a *BadRecordError, and the
// writer is left as if the record had not been given. The steps are in
// writer.go, the rotations in rotate.go, the .keys and .headers records
// in parts.go, the schema decision in schema.go.
func (w *partitionWriter) write(ctx context.Context, r *format.Record) error {
	if err := w.rotateOnRecordTime(ctx, r); err != nil {
		return err
	}
	tomb := w.isTombstone(r)
	if tomb {
		if consumed, err := w.nullValue(ctx, r); consumed {
			return err
		}
	}
	// The key and headers records are built first: a record that cannot
	// give them is refused before anything of it is written.
	parts, err := w.partRecords(r)
	if err != nil {
		return w.bad(r, err)
	}
	if err := w.rotateOnTombstoneSwitch(ctx, tomb); err != nil {
		return err
	}
	pl, err := w.place(r, tomb)
	if err != nil {
		return err
	}
	if err := w.rotateOnPlace(ctx, pl); err != nil {
		return err
	}
	f, err := w.fileFor(ctx, pl.encoded, r, tomb, parts.key)
	if err != nil {
		return err
	}
	if !tomb {
		if err := w.writeValue(ctx, f, pl.encoded, r); err != nil {
			return err
		}
	}
	if err := w.writeParts(ctx, f, pl.encoded, r, parts); err != nil {
		return err
	}
	return w.added(ctx, f, r, tomb, pl)
}

// rotate completes every open file of the partition, with their parallel
// objects, and writes their archive index object: it closes the files'
// format writers and hands their commits and the index object to an
// upload (startUpload, upload.go), which runs off the worker's path after the
// partition's previous one. When the upload is done the partition's
// offset up to the last consumed record may be committed: only then are
// all objects holding those records complete.
func (w *partitionWriter) rotate(ctx context.Context) error {
	var entries []index.Entry
	files := make([]*openFile, 0, len(w.order))
	for i, enc := range w.order {
		f := w.files[enc]
		if err := w.closeFile(ctx, f); err != nil {
			abortFiles(ctx, w, files)
			w.abortFrom(ctx, i+1)
			return err
		}
		if w.indexed() {
			entries = append(entries, w.entry(f))
		}
		files = append(files, f)
		delete(w.files, enc)
	}
	w.order = w.order[:0]
	w.count = 0
	if w.last < 0 {
		return nil
	}
	if w.indexed() {
		if len(entries) == 0 {
			return w.restamp(ctx, w.last+1) // no file was open
		}
		// The index object is complete in the store before the offset
		// becomes committable; if it fails, nothing past the previous
		// commit is committed and the replay rewrites the same bytes.
		for i := range entries {
			entries[i].From = w.from
		}
		return w.putIndex(ctx, files, entries, w.last+1)
	}
	if len(files) == 0 {
		w.setPending(w.last + 1)
		return nil
	}
	return w.startUpload(ctx, upload{files: files, commit: w.last + 1})
}

// publish hands completed files to the tally and their offset to the
// committer. Bad records waiting for the dead letter queue are produced
// first: an offset past a bad record becomes committable only once the
// record is in the DLQ. If that fails, nothing is made committable.
func (w *worker) publish() error {
	files := w.pw.takeDone()
	w.tally.addFiles(files)
	if len(files) > 0 {
		w.obs.Completed(files)
	}
	if err := w.flushDLQ(); err != nil {
		return err
	}
	if w.pw.pending >= 0 {
		w.committable(w.tp, w.pw.pending, w.epoch)
		w.obs.Archived(w.pw.pending)
	}
	return nil
}

// setCommittable records that every record of k before offset is archived.
func (ss *session) setCommittable(k tp, offset int64, epoch int32) {
	ss.commitMu.Lock()
	if offset > ss.committed[k] {
		ss.toCommit[k] = kgo.EpochOffset{Epoch: epoch, Offset: offset}
	}
	ss.commitMu.Unlock()
}

// commitLoop commits what is committable every half second until the
// session ends (which commits a last time, session.go).
func (ss *session) commitLoop() {
	t := time.NewTicker(500 * time.Millisecond)
	defer t.Stop()
	for {
		select {
		case <-ss.ctx.Done():
			return
		case <-t.C:
			ss.commitLogged()
		}
	}
}

// commitLogged commits (commitNow): a transient failure marks the brokers
// down (logged once), any other is a warning; the next tick retries.
func (ss *session) commitLogged() {
	err := ss.commitNow(ss.ctx)
	switch {
	case err == nil || ss.ctx.Err() != nil:
	case outage.Transient(err):
		ss.s.deps.Down(outage.Broker, fmt.Errorf("offset commit: %w", err))
	default:
		ss.s.log.Warn("offset commit failed; will retry", "err", err)
	}
}

// commitNow commits every pending offset in one request.
// Commits are serialised by commitSerial; commitMu guards only the maps and
// is never held across the network call, so a worker publishing an offset
// never waits for the broker.
func (ss *session) commitNow(ctx context.Context) error {
	ss.commitSerial.Lock()
	defer ss.commitSerial.Unlock()
	m := ss.pendingCommits()
	if len(m) == 0 {
		return nil
	}
	var cerr error
	ss.cl.CommitOffsetsSync(ctx, m, func(_ *kgo.Client, _ *kmsg.OffsetCommitRequest, resp *kmsg.OffsetCommitResponse, err error) {
		if err != nil {
			cerr = err
			return
		}
		ss.s.deps.Recovered(outage.Broker) // the coordinator answered
		ss.commitMu.Lock()
		defer ss.commitMu.Unlock()
		for _, t := range resp.Topics {
			for _, p := range t.Partitions {
				k := tp{t.Topic, p.Partition}
				if e := kerr.ErrorForCode(p.ErrorCode); e != nil {
					cerr = fmt.Errorf("commit %s[%d]: %w", t.Topic, p.Partition, e)
					continue
				}
				ss.committedTo(k, m[t.Topic][p.Partition].Offset)
			}
		}
	})
	return cerr
}
