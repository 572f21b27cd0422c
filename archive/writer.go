package archive

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"time"

	"github.com/kafkas3/kafkas3/format"
	"github.com/kafkas3/kafkas3/partition"
	"github.com/kafkas3/kafkas3/s3store"
)

// ErrNullValue is returned when a record has a null value and
// behavior.on.null.values is fail.
var ErrNullValue = errors.New("record has a null value (behavior.on.null.values=fail)")

// StoreError marks a failure of the object store. The sink treats it as
// transient: it drops its open files and resumes from the committed offsets,
// which rewrites the same keys with the same bytes.
type StoreError struct {
	Key string
	Err error
}

func (e *StoreError) Error() string { return fmt.Sprintf("object %q: %v", e.Key, e.Err) }
func (e *StoreError) Unwrap() error { return e.Err }

// openFile is one object being written: the store writer and the format
// writer on top of it.
type openFile struct {
	key     string
	obj     s3store.ObjectWriter
	rw      format.RecordWriter
	counter *countingWriter
	first   int64
	last    int64
	records int64
	// schema is the value schema of the file's records (nil for
	// schemaless data); typed tells which of the two the file holds.
	schema *format.Schema
	typed  bool
}

// countingWriter counts the bytes written to the object and remembers the
// first write error, which tells store failures from bad records.
type countingWriter struct {
	w   interface{ Write([]byte) (int, error) }
	n   int64
	err error
}

func (c *countingWriter) Write(p []byte) (int, error) {
	n, err := c.w.Write(p)
	c.n += int64(n)
	if err != nil && c.err == nil {
		c.err = err
	}
	return n, err
}

// FileStats describes one completed object.
type FileStats struct {
	Key         string
	StartOffset int64
	EndOffset   int64 // last record's offset
	Records     int64
	Bytes       int64
}

// partitionWriter holds the open files of one Kafka partition and decides
// rotation. Its decisions depend only on the records it is given (and, when
// rotate.schedule.interval.ms is set, on the wall clock), so a replay from a
// committed offset rebuilds the same keys with the same bytes.
type partitionWriter struct {
	topic     string
	partition int32
	cfg       *Config
	store     s3store.Store
	log       *slog.Logger

	files   map[string]*openFile // by encoded partition path
	order   []string             // encoded paths in opening order
	count   int                  // records in the open file set
	baseTS  time.Time            // timestamp of the first record of the open set
	last    int64                // offset of the last record consumed; -1 before any
	pending int64                // next offset that may be committed (all files up to it complete); -1 if none
	done    []FileStats          // completed files not yet reported

	schemas *schemas     // schema.compatibility decisions and projections
	json    *connectJSON // typed values as JSON (Config.TypedJSON)
	jsonBuf []byte
}

func newPartitionWriter(topic string, p int32, cfg *Config, store s3store.Store, log *slog.Logger) *partitionWriter {
	return &partitionWriter{
		topic: topic, partition: p, cfg: cfg, store: store,
		log:   log.With("topic", topic, "partition", p),
		files: make(map[string]*openFile),
		last:  -1, pending: -1,
		schemas: newSchemas(cfg.Compatibility),
		json:    newConnectJSON(),
	}
}

// write consumes one record: it may rotate before (record-time interval,
// schema change) and after (flush.size) writing it. A record that cannot be
// written because of its data gives a *BadRecordError, and the writer is
// left as if the record had not been given.
func (w *partitionWriter) write(ctx context.Context, r *format.Record) error {
	if w.cfg.RotateInterval > 0 && w.count > 0 && r.Timestamp.Sub(w.baseTS) >= w.cfg.RotateInterval {
		if err := w.rotate(ctx); err != nil {
			return err
		}
	}
	if r.Value == nil {
		if w.cfg.NullValues != NullIgnore {
			return fmt.Errorf("topic %s partition %d offset %d: %w", r.Topic, r.Partition, r.Offset, ErrNullValue)
		}
		w.skip(r.Offset)
		return nil
	}
	encoded, err := w.cfg.Partitioner.Encode(r)
	if err != nil {
		return fmt.Errorf("topic %s partition %d offset %d: partitioner: %w", r.Topic, r.Partition, r.Offset, err)
	}
	f := w.files[encoded]
	if f != nil {
		var rs *format.Schema
		if r.ValueTyped != nil {
			rs = r.ValueTyped.Schema
		}
		act, err := w.schemas.decide(f.typed, f.schema, rs)
		if err != nil {
			return w.bad(r, err)
		}
		switch act {
		case schemaRotate:
			if err := w.rotate(ctx); err != nil {
				return err
			}
			f = nil
		case schemaProject:
			p, err := w.schemas.project(r.ValueTyped, f.schema)
			if err != nil {
				return w.bad(r, err)
			}
			r.ValueTyped = p
		}
	}
	if f == nil {
		if f, err = w.open(ctx, encoded, r.Offset); err != nil {
			return err
		}
		if r.ValueTyped != nil {
			f.schema, f.typed = r.ValueTyped.Schema, true
		}
	}
	if err := w.writeTo(f, r); err != nil {
		if f.counter.err != nil {
			return &StoreError{Key: f.key, Err: err}
		}
		if errors.Is(err, format.ErrNullValue) {
			return fmt.Errorf("topic %s partition %d offset %d: %w", r.Topic, r.Partition, r.Offset, err)
		}
		if f.records == 0 {
			// The record would have been the file's first: forget the
			// file, so the next record starts it with its own offset.
			w.drop(ctx, encoded)
		}
		return w.bad(r, err)
	}
	f.last = r.Offset
	f.records++
	if w.count == 0 {
		w.baseTS = r.Timestamp
	}
	w.count++
	w.last = r.Offset
	if w.count >= w.cfg.FlushSize {
		return w.rotate(ctx)
	}
	return nil
}

// writeTo writes r to f, rendering a typed value as JSON first for the JSON
// format.
func (w *partitionWriter) writeTo(f *openFile, r *format.Record) error {
	if !w.cfg.TypedJSON || r.ValueTyped == nil {
		return f.rw.Write(r)
	}
	buf, err := w.json.appendValue(w.jsonBuf[:0], r.ValueTyped)
	if err != nil {
		return fmt.Errorf("rendering the typed value as JSON: %w", err)
	}
	w.jsonBuf = buf
	orig := r.Value
	r.Value = buf
	err = f.rw.Write(r)
	r.Value = orig
	return err
}

// bad wraps a record's data error.
func (w *partitionWriter) bad(r *format.Record, err error) error {
	return &BadRecordError{Topic: r.Topic, Partition: r.Partition, Offset: r.Offset, Stage: StageTaskPut, Class: sinkTaskClass, Err: err}
}

// drop aborts the open file of encoded, which holds no record.
func (w *partitionWriter) drop(ctx context.Context, encoded string) {
	f := w.files[encoded]
	if err := f.obj.Abort(ctx); err != nil {
		w.log.Warn("abort failed", "key", f.key, "err", err)
	}
	delete(w.files, encoded)
	for i, e := range w.order {
		if e == encoded {
			w.order = append(w.order[:i], w.order[i+1:]...)
			break
		}
	}
}

// skip consumes a record that is not written (an ignored null, a control
// record). With no open file it can be committed at once.
func (w *partitionWriter) skip(offset int64) {
	w.last = offset
	if w.count == 0 {
		w.pending = offset + 1
	}
}

func (w *partitionWriter) open(ctx context.Context, encoded string, start int64) (*openFile, error) {
	key := w.cfg.Keys.ObjectKey(partition.ObjectName{
		Topic: w.topic, Encoded: encoded, Partition: w.partition,
		StartOffset: start, Ext: w.cfg.Format.Extension(),
	})
	obj, err := w.store.Create(ctx, key)
	if err != nil {
		return nil, &StoreError{Key: key, Err: err}
	}
	cw := &countingWriter{w: obj}
	rw, err := w.cfg.Format.NewWriter(cw)
	if err != nil {
		_ = obj.Abort(ctx)
		return nil, fmt.Errorf("object %q: %w", key, err)
	}
	f := &openFile{key: key, obj: obj, rw: rw, counter: cw, first: start}
	w.files[encoded] = f
	w.order = append(w.order, encoded)
	return f, nil
}

// rotate completes every open file of the partition. On success the
// partition's offset up to the last consumed record may be committed.
func (w *partitionWriter) rotate(ctx context.Context) error {
	for i, enc := range w.order {
		f := w.files[enc]
		if err := f.rw.Close(); err != nil {
			w.abortFrom(ctx, i)
			return &StoreError{Key: f.key, Err: err}
		}
		if err := f.obj.Commit(ctx); err != nil {
			w.abortFrom(ctx, i)
			return &StoreError{Key: f.key, Err: err}
		}
		w.done = append(w.done, FileStats{Key: f.key, StartOffset: f.first, EndOffset: f.last, Records: f.records, Bytes: f.counter.n})
		w.log.Debug("object complete", "key", f.key, "records", f.records, "bytes", f.counter.n)
		delete(w.files, enc)
	}
	w.order = w.order[:0]
	w.count = 0
	if w.last >= 0 {
		w.pending = w.last + 1
	}
	return nil
}

// flush completes the open files (end of --once, scheduled rotation).
func (w *partitionWriter) flush(ctx context.Context) error {
	if w.count == 0 {
		if w.last >= 0 {
			w.pending = w.last + 1
		}
		return nil
	}
	return w.rotate(ctx)
}

// abort discards every open file; nothing of them becomes visible.
func (w *partitionWriter) abort(ctx context.Context) { w.abortFrom(ctx, 0) }

func (w *partitionWriter) abortFrom(ctx context.Context, from int) {
	for _, enc := range w.order[from:] {
		f := w.files[enc]
		if err := f.obj.Abort(ctx); err != nil {
			w.log.Warn("abort failed", "key", f.key, "err", err)
		}
	}
	clear(w.files)
	w.order = w.order[:0]
	w.count = 0
}

// takeDone returns and forgets the files completed since the last call.
func (w *partitionWriter) takeDone() []FileStats {
	d := w.done
	w.done = nil
	return d
}
