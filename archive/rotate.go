package archive

import (
	"context"

	"github.com/kafkas3/kafkas3/format"
)

// This file holds when the partition writer rotates (rotate itself is in
// path.go): the rotations of write, and flush. The schema decision may
// rotate too (schema.go), and so may a new key schema (writer.go fileFor).

// rotateOnRecordTime rotates before r when rotate.interval.ms has passed,
// in record time, since the first record of the open set.
func (w *partitionWriter) rotateOnRecordTime(ctx context.Context, r *format.Record) error {
	if w.cfg.RotateInterval > 0 && w.count > 0 && r.Timestamp.Sub(w.baseTS) >= w.cfg.RotateInterval {
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
// makes every offset consumed committable.
func (w *partitionWriter) flush(ctx context.Context) error {
	if w.count == 0 {
		if w.last < 0 {
			return nil
		}
		if w.indexed() {
			return w.restamp(ctx, w.last+1)
		}
		w.pending = w.last + 1
		return nil
	}
	return w.rotate(ctx)
}
