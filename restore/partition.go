package restore

import (
	"bytes"
	"context"
	"fmt"
	"sync"
	"sync/atomic"
	"time"

	"github.com/kafkas3/kafkas3/format"
	"github.com/twmb/franz-go/pkg/kgo"
)

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
}

// restorePartition restores one target partition: it skips the archived
// records the target already holds (end - start of them, a prefix thanks to
// the idempotent producer), verifies the last of them against the target,
// and produces the rest in order. Every acknowledged record must land at
// offset start + its index in the archive; anything else means another
// writer, and stops the stream.
func (r *Restorer) restorePartition(ctx context.Context, cl *kgo.Client, j job, progress Progress) (partitionResult, error) {
	var res partitionResult
	target, p := j.topic.Target, j.part.Partition
	already := j.end - j.start
	window := int64(r.cfg.VerifyRecords)
	if j.trust {
		window = 0
	}
	if already > 0 && !j.trust {
		r.log.Info("resuming restore", "topic", target, "partition", p, "already_restored", already, "from_offset", j.start)
	}

	ctx, cancel := context.WithCancelCause(ctx)
	defer cancel(nil)

	// Records are produced with a context that is never cancelled: a
	// record failed on the client while later ones are sent would leave a
	// gap, not a prefix. On cancellation the loop below stops handing
	// records over and waits for those in flight.
	pctx := context.WithoutCancel(ctx)
	var (
		inflight sync.WaitGroup
		acked    atomic.Int64
		reported int64
	)
	report := func(bytes int64) {
		a := acked.Load()
		progress.Advance(a-reported, bytes)
		reported = a
	}

	// promise checks that the archived record number idx landed at
	// start+idx: anything else is a gap or another writer.
	promise := func(rec *kgo.Record, err error, idx int64) {
		defer inflight.Done()
		if err != nil {
			cancel(fmt.Errorf("produce to %s/%d: %w", target, p, err))
			return
		}
		if want := j.start + idx; rec.Offset != want {
			cancel(fmt.Errorf("%w: a restored record landed at %s/%d offset %d, expected %d: another producer is writing to the partition",
				ErrForeignWrite, target, p, rec.Offset, want))
			return
		}
		acked.Add(1)
	}

	var (
		idx      int64 // index of the next archived record of this partition
		tail     []*format.Record
		verified = already == 0 || j.trust
	)
	verify := func() error {
		verified = true
		return r.verifyTail(ctx, j, tail)
	}

	objs := j.part.Objects
	segsLeft := make([]int, len(objs)) // segments of each object still to go
	for _, s := range j.part.segments {
		segsLeft[s.obj]++
	}
	// covered counts o in Summary.Bytes once per process.
	covered := func(o Object) {
		if o.Damage != nil || o.pastCut {
			return
		}
		r.mu.Lock()
		defer r.mu.Unlock()
		if size, ok := r.covered[o.Key]; !ok || size != o.Size {
			r.covered[o.Key] = o.Size
			res.bytes += o.Size
		}
	}
	// Objects with nothing to restore (damaged, or whose offsets other
	// objects hold) count as done.
	for i, o := range objs {
		if segsLeft[i] == 0 {
			progress.Advance(0, o.Size)
			covered(o)
		}
	}
	loaded := map[int]*loadedObject{}
	pos := map[int]int64{} // next record index of each loaded object
	defer func() {
		for _, lo := range loaded {
			lo.buf.close()
		}
	}()
	done := func(i int) {
		segsLeft[i]--
		if segsLeft[i] > 0 {
			return
		}
		if lo := loaded[i]; lo != nil {
			lo.buf.close()
			delete(loaded, i)
			report(0)
		}
		progress.Advance(0, objs[i].Size)
		covered(objs[i])
	}

segments:
	for _, s := range j.part.segments {
		if err := context.Cause(ctx); err != nil {
			break
		}
		n := s.to - s.from
		// Segments wholly before the verification window are counted,
		// not read.
		if idx+n <= already-window {
			idx += n
			res.skipped += n
			done(s.obj)
			continue
		}
		lo := loaded[s.obj]
		if lo == nil {
			var err error
			// The whole object is read and checked before its first
			// record is produced.
			if lo, err = r.loadObject(ctx, objs[s.obj], target); err != nil {
				cancel(fmt.Errorf("%s/%d: %w", target, p, err))
				break
			}
			if err := r.checkSize(j, objs[s.obj], lo.proof); err != nil {
				lo.buf.close()
				cancel(err)
				break
			}
			loaded[s.obj] = lo
		}
		for pos[s.obj] < s.to {
			rec, err := lo.buf.get()
			if err != nil {
				cancel(fmt.Errorf("object %q: %w", objs[s.obj].Key, err))
				break segments
			}
			at := pos[s.obj]
			pos[s.obj]++
			if at < s.from {
				continue // held by an earlier object: restored from there
			}
			if idx < already {
				if idx >= already-window {
					tail = append(tail, rec)
				}
				idx++
				res.skipped++
				continue
			}
			if !verified {
				if err := verify(); err != nil {
					cancel(err)
					break segments
				}
			}
			if err := context.Cause(ctx); err != nil {
				break segments // stop handing records over; those in flight land
			}
			inflight.Add(1)
			at = idx
			cl.Produce(pctx, toKgo(rec, target, p), func(kr *kgo.Record, err error) { promise(kr, err, at) })
			idx++
			if (idx-already)%progressEvery == 0 {
				report(0)
			}
		}
		done(s.obj)
	}

	if context.Cause(ctx) == nil {
		switch {
		case idx < already:
			cancel(fmt.Errorf("%w: %s/%d holds %d records after the restore's start offset %d, the archive has only %d for it: "+
				"another producer wrote to the partition (delete group %q to append anyway, or restore into another topic)",
				ErrForeignWrite, target, p, already, j.start, idx, MarkerGroup(target)))
		case !verified:
			if err := verify(); err != nil {
				cancel(err)
			}
		}
	}
	inflight.Wait()
	report(0)
	res.records = acked.Load()
	if err := context.Cause(ctx); err != nil {
		return res, err
	}
	r.mu.Lock()
	r.memo[topicPartition{target, p}] = partitionMemo{start: j.start, end: j.start + idx}
	r.mu.Unlock()
	if res.records > 0 {
		r.log.Debug("partition restored", "topic", target, "partition", p, "records", res.records, "end_offset", j.start+idx)
	}
	return res, nil
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
			idx := j.end - j.start - int64(len(tail)) + int64(i)
			return fmt.Errorf("%w: %s/%d offset %d does not hold archived record %d of source partition %d "+
				"(restore started at offset %d, marker group %q): someone else wrote to the partition; "+
				"restore into another topic, or delete the group to append anyway",
				ErrForeignWrite, target, p, got[i].Offset, idx, p, j.start, MarkerGroup(target))
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
