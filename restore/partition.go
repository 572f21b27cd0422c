package restore

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"sync"
	"sync/atomic"
	"time"

	"github.com/kafkas3/kafkas3/format"
	"github.com/twmb/franz-go/pkg/kgo"
)

// Exactly once without a local state file
//
// (This is the restore into the same partitions. A repartitioning one,
// Config.Repartition, keeps its state in transactions: repartition.go,
// txn.go.)
//
// The restore keeps its state on the target cluster. For each target
// partition, the consumer group "kafkas3-restore-<target topic>" (never
// joined by any member) holds a committed offset E0: the partition's end
// offset just before this restore first produced to it, committed before the
// first record is produced. The commit metadata names the archive
// (Config.Identity) and the source topic.
//
// Records are produced with franz-go's idempotent producer (acks=all), one
// ordered stream per partition (the plan's deduplicated stream: each
// source offset once, in offset order; the same archive always gives the
// same stream), so what lands in a partition is always a prefix of that
// stream, even after a crash. A re-run reads E0 and the current end offset
// E: the first E-E0 records of the stream are already there. It skips them
// (whole objects by their planned counts, without reading them), compares the last few of them
// (Config.VerifyRecords) with the records at E-n..E-1 of the target (key,
// value, headers), and produces the rest. Every acknowledged record must
// land at offset E0 + its index; a different offset means another writer
// and stops the restore. A target that holds more records than the archive,
// or other records, is refused with an error that names the topic,
// partition, offsets and the marker group. A run after completion produces
// nothing.
//
// Known limits of this protocol:
//
//   - Two restores into the same target at the same moment both see no
//     marker and both produce; the per-record offset check stops at least
//     one of them, but only after some records are duplicated.
//   - A killed process's produce requests that reach the broker after the
//     re-run has read E (or, with replication, records above the high
//     watermark) are detected by the offset check, not prevented.
//   - Committed offsets of an empty group expire after the broker's
//     offsets.retention.minutes (7 days by default). Each run re-commits its
//     markers, but a re-run after they expired appends the archive again.
//   - A run with a proof reads the whole archive once for it. Objects
//     wholly restored before (and before the verification window) are not
//     read a second time, nor, read once, at all.
//   - The record stream is deterministic for a given archive. If the
//     archive changes inside what was already restored (an object of a
//     gap a run with AllowGaps skipped comes back, a damaged object is
//     replaced), the stream shifts: only the verification of the last
//     Config.VerifyRecords records can notice it.

// progressEvery is how many records a partition stream produces between
// progress reports.
const progressEvery = 512

// verifyTimeout bounds the read of the target's last records.
const verifyTimeout = 30 * time.Second

// partitionResult is what one partition job did.
type partitionResult struct {
	records int64 // produced and acknowledged
	bytes   int64 // listed sizes of the value objects this run restored or found restored (Summary.Bytes)
	skipped int64 // archived records already in the target
	erased  int64 // records produced as tombstones of listed keys (Config.ExcludeKeys)
	// filtered counts the records Config.Filter left out, of every
	// segment the stream read; expired those --skip-expired left out.
	filtered, expired int64
}

// producePartition restores one target partition, up to handing its
// records to the producer: it skips the archived records the target
// already holds (end - start of them, a prefix thanks to the idempotent
// producer), verifies the last of them against the target, and hands the
// rest over in order, until the last or the stream's first error (its
// context is then cancelled with it). finish waits for the
// acknowledgements: every acknowledged record must land at offset start +
// its index in the archive; anything else means another writer, and stops
// the stream.
func (r *Restorer) producePartition(ctx context.Context, cl *kgo.Client, j job, progress Progress) *stream {
	s := r.newStream(ctx, cl, j, progress)
	s.pre = startPrefetch(s.ctx, loadOrder(j.part.segments, j.skipUnread(int64(r.cfg.VerifyRecords))), s.loadObject, func(i int) int64 {
		o := &j.part.Objects[i]
		return o.Size + o.twinBytes()
	}, r.cfg.PrefetchBytes)
	if j.verifies() {
		r.log.Info("resuming restore", "topic", s.target, "partition", s.p, "already_restored", s.already, "from_offset", j.start)
	}
	s.skipEmptyObjects()
	for _, seg := range j.part.segments {
		if context.Cause(s.ctx) != nil {
			break
		}
		if err := s.segment(seg); err != nil {
			s.cancel(err)
			break
		}
	}
	if context.Cause(s.ctx) == nil {
		if err := s.checkEnd(); err != nil {
			s.cancel(err)
		}
	}
	if s.tx != nil && context.Cause(s.ctx) == nil {
		if err := s.commitTxn(true); err != nil {
			s.cancel(err)
		}
	}
	if context.Cause(s.ctx) == nil && s.kept != nil {
		r.mu.Lock()
		if r.keptCounts == nil {
			r.keptCounts = map[topicPartition]map[int64]int64{}
		}
		r.keptCounts[topicPartition{j.topic.Source, j.part.Partition}] = s.kept.end()
		r.mu.Unlock()
	}
	return s
}

// finish waits until the records the stream handed to the producer are
// acknowledged (or failed), ends the stream and returns what it did.
func (s *stream) finish() (partitionResult, error) {
	defer s.stop()
	s.inflight.Wait()
	s.report()
	s.res.records = s.acked.Load()
	if s.tx != nil {
		return s.finishTxn()
	}
	if err := context.Cause(s.ctx); err != nil {
		return s.res, err
	}
	s.r.mu.Lock()
	s.r.memo[topicPartition{s.target, s.p}] = partitionMemo{start: s.j.marker, end: s.j.start + s.idx}
	s.r.mu.Unlock()
	if s.res.records > 0 {
		s.r.log.Debug("partition restored", "topic", s.target, "partition", s.p, "records", s.res.records, "end_offset", s.j.start+s.idx)
	}
	return s.res, nil
}

// stream is one target partition's restore under way (producePartition, finish).
type stream struct {
	r        *Restorer
	cl       *kgo.Client
	j        job
	progress Progress
	target   string
	p        int32
	// already is how many archived records the target holds (end -
	// start); the last window of them are verified against the target.
	already, window int64

	// ctx is cancelled with the stream's first error. Records are
	// produced with pctx, which is never cancelled: a record failed on
	// the client while later ones are sent would leave a gap, not a
	// prefix. On cancellation the stream stops handing records over and
	// waits for those in flight.
	ctx    context.Context
	cancel context.CancelCauseFunc
	pctx   context.Context

	inflight sync.WaitGroup
	acked    atomic.Int64
	reported int64 // acked records reported to progress

	idx      int64            // index of the next archived record of this partition
	tail     []*format.Record // the archived records of the verification window
	verified bool

	segsLeft []int // segments of each object still to go
	// earlier marks the objects earlier passes restored records of (one
	// of the stream's first restoredSegments segments; in a later pass,
	// every object without a segment too): counted in Summary.Bytes then.
	earlier []bool
	// spill is each loaded object's share of Config.SpillBytes: objects
	// whose offsets interleave (folders of a field or time-based layout)
	// stay loaded together, and together they keep at most SpillBytes in
	// memory (maxLoaded).
	spill  int64
	loaded map[int]*loadedObject // objects read and checked, by index
	pos    map[int]int64         // next record index of each loaded object
	pre    *prefetcher           // loads the objects one ahead (nil until started)
	res    partitionResult
	obs    StreamObserver // Config.Observer's for the target partition
	// damaged names the object whose damage, found when it was read to
	// be produced, stopped the stream ("" if none).
	damaged string
	// kept counts the kept records before the partition's group offsets
	// (a filtering run with --restore-groups; nil otherwise).
	kept *keptCounter
	// tx is the stream's transactional producer when repartitioning
	// (txn.go; it is then cl too), nil otherwise.
	tx *txnStream
}

// verifies reports whether job j's stream checks the target's last
// records before it resumes (with a consumer of its own): the target holds
// some of the partition's archived records and they are not trusted.
func (j job) verifies() bool { return j.end > j.start && !j.trust }

// skipUnread is how many of job j's first archived records its stream
// skips without reading them: those the target holds before the last
// verify of them (the verification window; none when j.trust).
func (j job) skipUnread(verify int64) int64 {
	if j.filtered {
		return 0 // its records' share of the stream is known only by reading them
	}
	if j.trust {
		verify = 0
	}
	return j.end - j.start - verify
}

// newStream starts the stream of job j: nothing read or produced yet.
func (r *Restorer) newStream(ctx context.Context, cl *kgo.Client, j job, progress Progress) *stream {
	s := &stream{
		r: r, cl: cl, j: j, progress: progress,
		target: j.topic.Target, p: j.part.Partition,
		already: j.end - j.start, window: int64(r.cfg.VerifyRecords),
		segsLeft: make([]int, len(j.part.Objects)),
		loaded:   map[int]*loadedObject{},
		pos:      map[int]int64{},
		obs:      r.observer().Stream(j.topic.Target, j.part.Partition),
		tx:       j.tx,
	}
	if j.tx != nil {
		s.cl = j.tx.cl
	}
	if j.trust {
		s.window = 0
	}
	s.verified = !j.verifies()
	s.ctx, s.cancel = context.WithCancelCause(ctx)
	s.pctx = context.WithoutCancel(s.ctx)
	for _, seg := range j.part.segments {
		s.segsLeft[seg.obj]++
	}
	s.earlier = make([]bool, len(j.part.Objects))
	if n := r.restoredSegments(j.topic.Source, j.part.Partition) - j.part.baseSegments(); n > 0 {
		for _, seg := range j.part.segments[:min(n, len(j.part.segments))] {
			s.earlier[seg.obj] = true
		}
		for i, left := range s.segsLeft {
			s.earlier[i] = s.earlier[i] || left == 0
		}
	}
	s.spill = max(r.cfg.SpillBytes/int64(maxLoaded(j.part.segments, len(j.part.Objects))), 1)
	r.mu.Lock()
	s.kept = newKeptCounter(r.groupQueries[topicPartition{j.topic.Source, j.part.Partition}])
	r.mu.Unlock()
	return s
}

// maxLoaded returns how many of n objects are at most loaded at once
// while segs are produced in order (an object is loaded from its first
// segment to its last), at least 1.
func maxLoaded(segs []segment, n int) int {
	last := make([]int, n)
	for i, seg := range segs {
		last[seg.obj] = i
	}
	seen := make([]bool, n)
	open, most := 0, 1
	for i, seg := range segs {
		if !seen[seg.obj] {
			seen[seg.obj] = true
			open++
			most = max(most, open)
		}
		if last[seg.obj] == i {
			open--
		}
	}
	return most
}

// report passes the records acknowledged since the last report to
// progress.
func (s *stream) report() {
	a := s.acked.Load()
	s.progress.Advance(a-s.reported, 0)
	s.obs.Produced(a - s.reported)
	s.reported = a
}

// promise checks that the archived record number idx landed at
// start+idx: anything else is a gap or another writer.
func (s *stream) promise(rec *kgo.Record, err error, idx int64) {
	defer s.inflight.Done()
	if err != nil {
		s.obs.Failed(ErrorProduce)
		s.cancel(fmt.Errorf("produce to %s/%d: %w", s.target, rec.Partition, err))
		return
	}
	if want := s.j.start + idx; s.tx == nil && rec.Offset != want {
		s.obs.Failed(ErrorForeignWrite)
		s.cancel(fmt.Errorf("%w: a restored record landed at %s/%d offset %d, expected %d: another producer is writing to the partition",
			ErrForeignWrite, s.target, s.p, rec.Offset, want))
		return
	}
	s.acked.Add(1)
}

// verify compares the verification window with the target (verifyTail),
// once.
func (s *stream) verify() error {
	s.verified = true
	return s.r.verifyTail(s.ctx, s.j, s.tail)
}

// covered counts object i in Summary.Bytes once per process: not when
// an earlier pass did (stream.earlier), nor again in a pass after one
// that failed (Restorer.covered).
func (s *stream) covered(i int) {
	o := s.j.part.Objects[i]
	if o.Damage != nil || o.pastCut || s.earlier[i] {
		return
	}
	s.r.mu.Lock()
	defer s.r.mu.Unlock()
	tp := topicPartition{s.j.topic.Source, s.p}
	m := s.r.covered[tp]
	if m == nil {
		m = map[string]int64{}
		s.r.covered[tp] = m
	}
	if size, ok := m[o.Key]; !ok || size != o.Size {
		m[o.Key] = o.Size
		s.res.bytes += o.Size
		s.obs.Restored(o.Size)
	}
}

// skipEmptyObjects counts the objects with nothing to restore (damaged,
// or whose offsets other objects hold) as done.
func (s *stream) skipEmptyObjects() {
	for i, o := range s.j.part.Objects {
		if s.segsLeft[i] == 0 {
			s.progress.Advance(0, o.Size)
			s.covered(i)
		}
	}
}

// done counts one segment of object i as restored; after its last, the
// object is released and counted.
func (s *stream) done(i int) {
	s.segsLeft[i]--
	if s.segsLeft[i] > 0 {
		return
	}
	if lo := s.loaded[i]; lo != nil {
		lo.buf.close()
		delete(s.loaded, i)
		s.report()
	}
	s.progress.Advance(0, s.j.part.Objects[i].Size)
	s.covered(i)
}

// stop ends the stream: its context is cancelled, its prefetcher has
// returned (releasing an object it loaded and did not hand over), and the
// objects still loaded are released.
func (s *stream) stop() {
	s.cancel(nil)
	if s.pre != nil {
		s.pre.wait()
	}
	for _, lo := range s.loaded {
		lo.buf.close()
	}
}

// segment restores one segment: records the target already holds are
// skipped (those before the verification window without reading them),
// the others produced. An error stops the stream.
func (s *stream) segment(seg segment) error {
	n := seg.to - seg.from
	if !s.j.filtered && s.idx+n <= s.already-s.window {
		s.idx += n
		s.res.skipped += n
		s.done(seg.obj)
		return nil
	}
	lo, err := s.load(seg.obj)
	if err != nil {
		return err
	}
	for s.pos[seg.obj] < seg.to {
		rec, err := lo.buf.get()
		if err != nil {
			return fmt.Errorf("object %q: %w", s.j.part.Objects[seg.obj].Key, err)
		}
		at := s.pos[seg.obj]
		s.pos[seg.obj]++
		if at < seg.from {
			continue // held by an earlier object: restored from there
		}
		if err := s.take(rec); err != nil {
			return err
		}
	}
	s.done(seg.obj)
	return nil
}

// load returns object i read completely and checked (loadObject,
// checkSize), taking it from the prefetcher on first use. Nothing of it is
// produced before.
func (s *stream) load(i int) (*loadedObject, error) {
	if lo := s.loaded[i]; lo != nil {
		return lo, nil
	}
	lo, err := s.take1(i)
	if err != nil {
		if context.Cause(s.ctx) == nil {
			if isDamage(err) && errors.Is(err, ErrDamagedObject) {
				s.damaged = s.j.part.Objects[i].Key
			}
			err = stoppedAt(s.j, s.j.part.Objects[i], err)
		}
		return nil, err
	}
	obj := s.j.part.Objects[i]
	err = s.r.checkSize(s.j, obj, lo.facts)
	if err == nil {
		err = s.r.checkNullKeysLoaded(s.j, obj, lo.facts)
	}
	if err != nil {
		lo.buf.close()
		return nil, err
	}
	s.loaded[i] = lo
	return lo, nil
}

// take1 takes object i from the prefetcher. A repartitioning stream
// with a transaction open that waits for it longer than txnLoadWait
// commits the transaction first, so no transaction stays open while the
// store is slow (TxnTimeout), and a store that keeps up costs no commits.
func (s *stream) take1(i int) (*loadedObject, error) {
	if s.tx != nil && s.tx.records > 0 {
		if lo, ok, err := s.pre.takeWithin(s.ctx, i, txnLoadWait); ok {
			return lo, err
		}
		if err := s.commitTxn(false); err != nil {
			s.cancel(err) // the stream's error, not the object's
			return nil, err
		}
	}
	return s.pre.take(s.ctx, i)
}

// loadObject returns object i of the stream read completely and checked
// (Restorer.loadObject). The prefetcher calls it.
func (s *stream) loadObject(ctx context.Context, i int) (*loadedObject, error) {
	return s.r.loadObject(ctx, s.j.part.Objects[i], s.target, s.spill)
}

// take handles the next archived record of the partition: one the target
// already holds is skipped (kept for the verification window); the first
// one it does not hold is preceded by the verification; the others are
// produced.
func (s *stream) take(rec *format.Record) error {
	keep := s.r.keeps(rec)
	expired := keep && s.j.expired(rec.Timestamp)
	s.kept.record(rec.Offset, keep && !expired)
	switch {
	case !keep:
		s.res.filtered++
		return s.commitIfDue()
	case expired:
		s.res.expired++
		return s.commitIfDue()
	}
	if s.idx < s.already {
		if s.idx >= s.already-s.window {
			s.tail = append(s.tail, rec)
		}
		s.idx++
		s.res.skipped++
		return nil
	}
	if !s.verified {
		if err := s.verify(); err != nil {
			return err
		}
	}
	if s.r.limit != nil {
		if err := s.r.limit.Wait(s.ctx, 1, payloadBytes(rec)); err != nil {
			return err
		}
	}
	if err := context.Cause(s.ctx); err != nil {
		return err // stop handing records over; those in flight land
	}
	if s.r.erased(rec) {
		s.res.erased++
	}
	s.inflight.Add(1)
	at := s.idx
	s.cl.Produce(s.pctx, toKgo(rec, s.target, s.place(rec, at)), func(kr *kgo.Record, err error) { s.promise(kr, err, at) })
	s.idx++
	if (s.idx-s.already)%progressEvery == 0 {
		s.report()
	}
	if s.tx != nil {
		s.tx.records++
		s.tx.bytes += payloadBytes(rec)
	}
	return s.commitIfDue()
}

// commitIfDue commits a repartitioning stream's open transaction when it
// holds records and is full or old (txnStream.full): also while records
// are left out, so that a long run of them does not keep a transaction
// open past the producer's transaction.timeout.ms.
func (s *stream) commitIfDue() error {
	if s.tx != nil && s.tx.records > 0 && s.tx.full() {
		return s.commitTxn(false)
	}
	return nil
}

// payloadBytes is what a rate limit counts of a record: its key, value,
// and header keys and values.
func payloadBytes(rec *format.Record) int64 {
	n := len(rec.Key) + len(rec.Value)
	for _, h := range rec.Headers {
		n += len(h.Key) + len(h.Value)
	}
	return int64(n)
}

// checkEnd runs after the last segment: the target must not hold more of
// this restore than the archive, and what it held is verified even when
// nothing was left to produce.
func (s *stream) checkEnd() error {
	switch {
	case s.tx != nil && s.idx < s.already:
		return fmt.Errorf("%w: group %q says %d records of source partition %s/%d were restored into %q, the archive has only %d for it: "+
			"the archive lost records since (or --until cuts earlier than before); restore into another topic",
			ErrForeignWrite, s.tx.id, s.already, s.j.topic.Source, s.p, s.target, s.idx)
	case s.idx < s.already:
		return fmt.Errorf("%w: %s/%d holds %d records after the restore's start offset %d, the archive has only %d for it: "+
			"another producer wrote to the partition (delete group %q to append anyway, or restore into another topic)",
			ErrForeignWrite, s.target, s.p, s.already+s.j.start-s.j.marker, s.j.marker, s.idx+s.j.start-s.j.marker, MarkerGroup(s.target))
	case !s.verified:
		return s.verify()
	}
	return nil
}

// verifyTail compares the last records the target holds before this run
// (offsets end-len(tail) .. end-1) with the archived records that should be
// there. Records deleted by retention cannot be compared; if none is left,
// a warning is logged and the count is trusted.
func (r *Restorer) verifyTail(ctx context.Context, j job, tail []*format.Record) error {
	target, p := j.topic.Target, j.part.Partition
	from := j.end - int64(len(tail))
	if from < j.low {
		tail = tail[j.low-from:]
		from = j.low
	}
	if len(tail) == 0 {
		r.log.Warn("cannot verify the records already restored: the target no longer holds them (retention); trusting the offsets",
			"topic", target, "partition", p, "end_offset", j.end)
		return nil
	}
	got, err := r.readTarget(ctx, target, p, from, len(tail))
	if err != nil {
		return fmt.Errorf("verify %s/%d before resuming: %w", target, p, err)
	}
	for i, want := range tail {
		if !sameRecord(got[i], want) {
			idx := j.end - j.marker - int64(len(tail)) + int64(i)
			return fmt.Errorf("%w: %s/%d offset %d does not hold archived record %d of source partition %d "+
				"(restore started at offset %d, marker group %q): someone else wrote to the partition; "+
				"restore into another topic, or delete the group to append anyway",
				ErrForeignWrite, target, p, got[i].Offset, idx, p, j.marker, MarkerGroup(target))
		}
	}
	return nil
}

// readTarget reads n records of topic/p starting at offset from, with a
// short-lived direct consumer.
func (r *Restorer) readTarget(ctx context.Context, topic string, p int32, from int64, n int) ([]*kgo.Record, error) {
	opts := []kgo.Opt{kgo.SeedBrokers(r.cfg.Brokers...)}
	opts = append(opts, r.cfg.KafkaOpts...)
	opts = append(opts, kgo.ConsumePartitions(map[string]map[int32]kgo.Offset{topic: {p: kgo.NewOffset().At(from)}}))
	cl, err := kgo.NewClient(opts...)
	if err != nil {
		return nil, err
	}
	defer cl.Close()
	ctx, cancel := context.WithTimeout(ctx, verifyTimeout)
	defer cancel()
	out := make([]*kgo.Record, 0, n)
	for len(out) < n {
		fs := cl.PollFetches(ctx)
		if err := ctx.Err(); err != nil {
			return nil, fmt.Errorf("read offsets %d..%d: got %d records: %w", from, from+int64(n)-1, len(out), err)
		}
		var ferr error
		fs.EachError(func(_ string, _ int32, err error) { ferr = err })
		if ferr != nil {
			return nil, fmt.Errorf("read offsets %d..%d: %w", from, from+int64(n)-1, ferr)
		}
		fs.EachRecord(func(rec *kgo.Record) {
			if rec.Offset >= from+int64(len(out)) && len(out) < n {
				if rec.Offset != from+int64(len(out)) {
					// A gap (compaction, transaction markers):
					// the records cannot be ours.
					ferr = fmt.Errorf("offset %d is missing (next record is at %d)", from+int64(len(out)), rec.Offset)
				}
				out = append(out, rec)
			}
		})
		if ferr != nil {
			return nil, fmt.Errorf("read offsets %d..%d: %w: %w", from, from+int64(n)-1, ErrForeignWrite, ferr)
		}
	}
	return out, nil
}

// sameRecord compares what a restore writes: key, value (a nil value, a
// tombstone, differs from an empty one), headers and, when the archived
// record carries a timestamp it is produced with (envelopes with
// --timestamps original), the timestamp to the millisecond; a target
// record stamped by the broker (LogAppendTime) is not compared on time.
func sameRecord(got *kgo.Record, want *format.Record) bool {
	if !bytes.Equal(got.Key, want.Key) || !bytes.Equal(got.Value, want.Value) || (got.Value == nil) != (want.Value == nil) ||
		len(got.Headers) != len(want.Headers) {
		return false
	}
	if !sameTime(got.Timestamp, want.Timestamp, got.Attrs.TimestampType() == 1) {
		return false
	}
	for i, h := range want.Headers {
		g := got.Headers[i]
		if g.Key != h.Key || !bytes.Equal(g.Value, h.Value) || (g.Value == nil) != (h.Value == nil) {
			return false
		}
	}
	return true
}

// sameTime tells whether a target record's timestamp got is the archived
// want: always when the archive gives none (zero) or the broker stamped
// the target record (LogAppendTime), else to the millisecond.
func sameTime(got, want time.Time, brokerStamped bool) bool {
	return want.IsZero() || brokerStamped || got.UnixMilli() == want.UnixMilli()
}

// toKgo converts an archived record into the record to produce. It carries
// exactly what the archive holds: key, value, headers (order, duplicates
// and nil values kept) and the timestamp when there is one. A zero
// timestamp is left zero, so the producer stamps the current time.
func toKgo(rec *format.Record, topic string, p int32) *kgo.Record {
	out := &kgo.Record{
		Topic:     topic,
		Partition: p,
		Key:       rec.Key,
		Value:     rec.Value,
		Timestamp: rec.Timestamp,
	}
	if len(rec.Headers) > 0 {
		out.Headers = make([]kgo.RecordHeader, len(rec.Headers))
		for i, h := range rec.Headers {
			out.Headers[i] = kgo.RecordHeader{Key: h.Key, Value: h.Value}
		}
	}
	return out
}

// nextHeaders reads the next record of a parallel .headers object and
// returns the headers of record n of the value object objKey.
func (p *parallelReader) nextHeaders(objKey string, n int64) ([]format.Header, error) {
	hrec, err := p.next(objKey)
	if err != nil {
		return nil, err
	}
	return headersFrom(hrec, p.key, n)
}
