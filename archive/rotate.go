package archive

import (
	"context"

	"github.com/kafkas3/kafkas3/format"
)

// This file holds when the partition writer rotates (rotate itself is in
// path.go): the rotations of write, and flush. The schema decision may
// rotate too (schema.go), and so may a new key schema (writer.go fileFor).

// rotateOnRecordTime rotates before r when rotate.interval.ms has passed,
// in Kafka record time, since the first record of the open set. A
// time-based partitioner measures the interval with its extractor
// instead (rotateOnPlace).
func (w *partitionWriter) rotateOnRecordTime(ctx context.Context, r *format.Record) error {
	if w.timed == nil && w.cfg.RotateInterval > 0 && w.count > 0 && r.Timestamp.Sub(w.baseTS) >= w.cfg.RotateInterval {
		return w.rotate(ctx)
	}
	return nil
}

// rotateOnPlace rotates before a record placed at pl, whose folder is not
// open, when kafkas3.max.open.partitions folders are. With a time-based
// partitioner and rotate.interval.ms it also rotates as Confluent's
// TopicPartitionWriter does: once the interval has passed, in the
// extractor's time, since the open set's first record, and before a
// record of a bucket later than every record of the open set whose
// folder is not open (time moves on). Unlike Confluent's, a late record
// (an earlier bucket) does not rotate: it goes into its bucket's open
// file, or opens one, so late data does not cut small files
// (kafka-connect-storage-cloud #529, #574). Every input of the decision is
// in the records, so a replay rotates at the same offsets (the wall clock
// extractor aside).
func (w *partitionWriter) rotateOnPlace(ctx context.Context, pl placement) error {
	if w.count == 0 {
		return nil
	}
	_, open := w.files[pl.encoded]
	rotate := !open && len(w.files) >= w.maxOpen
	if pl.timed && w.timeSet && w.cfg.RotateInterval > 0 {
		rotate = rotate || pl.at-w.baseAt >= w.cfg.RotateInterval.Milliseconds() || (!open && pl.bucket > w.latest)
	}
	if rotate {
		return w.rotate(ctx)
	}
	return nil
}

// rotateOnTombstoneSwitch rotates before a tombstone when the open set
// holds other records, and the other way round (behavior.on.null.values=write).
func (w *partitionWriter) rotateOnTombstoneSwitch(ctx context.Context, tomb bool) error {
	if w.count > 0 && tomb != w.tombstones {
		return w.rotate(ctx)
	}
	return nil
}

// rotateOnFlushSize rotates once the open set holds flush.size records.
func (w *partitionWriter) rotateOnFlushSize(ctx context.Context) error {
	if w.count >= w.cfg.FlushSize {
		return w.rotate(ctx)
	}
	return nil
}

// flush completes the open files (end of --once, scheduled rotation) and
// makes every offset consumed committable; it returns when their upload is
// done.
func (w *partitionWriter) flush(ctx context.Context) error {
	var err error
	switch {
	case w.count > 0:
		err = w.rotate(ctx)
	case w.last < 0:
	case w.indexed():
		err = w.restamp(ctx, w.last+1)
	default:
		w.setPending(w.last + 1)
	}
	if err != nil {
		return err
	}
	return w.wait()
}
