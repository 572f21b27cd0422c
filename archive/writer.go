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

// object is one object being written: the store writer and the format
// writer on top of it.
type object struct {
	key     string
	obj     s3store.ObjectWriter
	rw      format.RecordWriter
	counter *countingWriter
	part    string // "", PartKeys or PartHeaders
}

// openFile is the set of objects being written for one encoded partition:
// the value object and, with store.kafka.keys and store.kafka.headers, its
// parallel .keys and .headers objects, which get the same records in the
// same order. A tombstone file (behavior.on.null.values=write) has no value
// object: its object's obj is nil.
type openFile struct {
	object
	keys    *object
	headers *object
	first   int64
	last    int64
	records int64
	// schema is the value schema of the file's records (nil for
	// schemaless data); typed tells which of the two the file holds.
	schema *format.Schema
	typed  bool
	// keySchema is the schema of the .keys object's records (Avro keys).
	keySchema *format.Schema
	tombstone bool
}

// objects returns the objects of f that exist: value, keys, headers.
func (f *openFile) objects() []*object {
	out := make([]*object, 0, 3)
	if f.obj != nil {
		out = append(out, &f.object)
	}
	if f.keys != nil {
		out = append(out, f.keys)
	}
	if f.headers != nil {
		out = append(out, f.headers)
	}
	return out
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
	Key string
	// Part is "" for a value object (or a tombstone's .keys object), or
	// PartKeys / PartHeaders for the parallel objects of store.kafka.keys
	// and store.kafka.headers, whose records are also in the value object.
	Part        string
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
	parts   *partSchemas // schemas of untyped keys and of headers
	// tombstones tells whether the open set holds tombstones
	// (behavior.on.null.values=write); a switch rotates.
	tombstones bool
	// onNullIgnored, when set, is told the offset of each null value that
	// behavior.on.null.values=ignore drops (the summary counts them).
	onNullIgnored func(offset int64)
}

func newPartitionWriter(topic string, p int32, cfg *Config, store s3store.Store, log *slog.Logger) *partitionWriter {
	return &partitionWriter{
		topic: topic, partition: p, cfg: cfg, store: store,
		log:   log.With("topic", topic, "partition", p),
		files: make(map[string]*openFile),
		last:  -1, pending: -1,
		schemas: newSchemas(cfg.Compatibility),
		json:    newConnectJSON(),
		parts:   newPartSchemas(),
	}
}

// write consumes one record: it may rotate before (record-time interval,
// schema change, a switch between tombstones and other records) and after
// (flush.size) writing it. A record that cannot be written because of its
// data gives a *BadRecordError, and the writer is left as if the record had
// not been given.
func (w *partitionWriter) write(ctx context.Context, r *format.Record) error {
	if w.cfg.RotateInterval > 0 && w.count > 0 && r.Timestamp.Sub(w.baseTS) >= w.cfg.RotateInterval {
		if err := w.rotate(ctx); err != nil {
			return err
		}
	}
	tomb := r.Value == nil
	if tomb {
		switch w.cfg.NullValues {
		case NullIgnore:
			w.skip(r.Offset)
			if w.onNullIgnored != nil {
				w.onNullIgnored(r.Offset)
			}
			return nil
		case NullWrite:
		default:
			return fmt.Errorf("topic %s partition %d offset %d: %w", r.Topic, r.Partition, r.Offset, ErrNullValue)
		}
	}
	// The key and headers records are built first: a record that cannot
	// give them is refused before anything of it is written.
	var keyRec, hdrRec *format.Record
	var err error
	if w.cfg.KeysFormat != nil {
		if keyRec, err = w.keyRecord(r); err != nil {
			return w.bad(r, err)
		}
	}
	if w.cfg.HeadersFormat != nil {
		if hdrRec, err = w.headersRecord(r); err != nil {
			return w.bad(r, err)
		}
	}
	if w.count > 0 && tomb != w.tombstones {
		if err := w.rotate(ctx); err != nil {
			return err
		}
	}
	var encoded string
	if tomb {
		encoded = w.cfg.TombstonePartition
	} else if encoded, err = w.cfg.Partitioner.Encode(r); err != nil {
		return fmt.Errorf("topic %s partition %d offset %d: partitioner: %w", r.Topic, r.Partition, r.Offset, err)
	}
	f := w.files[encoded]
	if f != nil && !tomb {
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
	if f != nil && keyRec != nil && keyRec.ValueTyped != nil && f.keySchema != nil && !format.SameAvroSchema(f.keySchema, keyRec.ValueTyped.Schema) {
		// One .keys object holds one key schema: a new one rotates.
		if err := w.rotate(ctx); err != nil {
			return err
		}
		f = nil
	}
	if f == nil {
		if f, err = w.open(ctx, encoded, r.Offset, tomb); err != nil {
			return err
		}
		if r.ValueTyped != nil {
			f.schema, f.typed = r.ValueTyped.Schema, true
		}
		if keyRec != nil && keyRec.ValueTyped != nil {
			f.keySchema = keyRec.ValueTyped.Schema
		}
	}
	if !tomb {
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
	}
	for _, pw := range []struct {
		o   *object
		rec *format.Record
	}{{f.keys, keyRec}, {f.headers, hdrRec}} {
		if pw.o == nil {
			continue
		}
		if err := pw.o.rw.Write(pw.rec); err != nil {
			if pw.o.counter.err != nil {
				return &StoreError{Key: pw.o.key, Err: err}
			}
			if f.records == 0 {
				// The set is new: drop it whole, the objects written
				// above included.
				w.drop(ctx, encoded)
				return w.bad(r, err)
			}
			// The value (and maybe the keys) object already holds the
			// record: the objects are out of step and cannot be
			// committed. Stop rather than write misaligned files.
			w.abort(ctx)
			return fmt.Errorf("topic %s partition %d offset %d: object %q: %w (the %s object would no longer match its value object)",
				r.Topic, r.Partition, r.Offset, pw.o.key, err, pw.o.part)
		}
	}
	f.last = r.Offset
	f.records++
	if w.count == 0 {
		w.baseTS = r.Timestamp
		w.tombstones = tomb
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
	for _, o := range f.objects() {
		if err := o.obj.Abort(ctx); err != nil {
			w.log.Warn("abort failed", "key", o.key, "err", err)
		}
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

func (w *partitionWriter) open(ctx context.Context, encoded string, start int64, tomb bool) (*openFile, error) {
	name := partition.ObjectName{
		Topic: w.topic, Encoded: encoded, Partition: w.partition,
		StartOffset: start, Ext: w.cfg.Format.Extension(),
	}
	f := &openFile{first: start, tombstone: tomb}
	var created []*object
	create := func(part string, ext string, ft format.Format) (*object, error) {
		name.Ext = ext
		key := w.cfg.Keys.ObjectKey(name)
		obj, err := w.store.Create(ctx, key)
		if err != nil {
			return nil, &StoreError{Key: key, Err: err}
		}
		cw := &countingWriter{w: obj}
		rw, err := ft.NewWriter(cw)
		if err != nil {
			_ = obj.Abort(ctx)
			return nil, fmt.Errorf("object %q: %w", key, err)
		}
		o := &object{key: key, obj: obj, rw: rw, counter: cw, part: part}
		created = append(created, o)
		return o, nil
	}
	fail := func(err error) (*openFile, error) {
		for _, o := range created {
			_ = o.obj.Abort(ctx)
		}
		return nil, err
	}
	if !tomb {
		o, err := create("", w.cfg.Format.Extension(), w.cfg.Format)
		if err != nil {
			return fail(err)
		}
		f.object = *o
	}
	if pf := w.cfg.KeysFormat; pf != nil {
		o, err := create(PartKeys, ".keys"+pf.Format.Extension(), pf.Format)
		if err != nil {
			return fail(err)
		}
		f.keys = o
	}
	if pf := w.cfg.HeadersFormat; pf != nil {
		o, err := create(PartHeaders, ".headers"+pf.Format.Extension(), pf.Format)
		if err != nil {
			return fail(err)
		}
		f.headers = o
	}
	if tomb {
		// A tombstone file's .keys object stands in for the value object
		// (FileStats, errors).
		f.key, f.counter = f.keys.key, f.keys.counter
	}
	w.files[encoded] = f
	w.order = append(w.order, encoded)
	return f, nil
}

// rotate completes every open file of the partition, with their parallel
// objects. On success the partition's offset up to the last consumed record
// may be committed: only then are all objects holding those records
// complete.
func (w *partitionWriter) rotate(ctx context.Context) error {
	for i, enc := range w.order {
		f := w.files[enc]
		objs := f.objects()
		for j, o := range objs {
			err := o.rw.Close()
			if err == nil {
				err = o.obj.Commit(ctx)
			}
			if err != nil {
				// Objects committed before stay; a replay from the
				// committed offset rewrites them with the same bytes.
				for _, rest := range objs[j:] {
					if aerr := rest.obj.Abort(ctx); aerr != nil {
						w.log.Warn("abort failed", "key", rest.key, "err", aerr)
					}
				}
				w.abortFrom(ctx, i+1)
				return &StoreError{Key: o.key, Err: err}
			}
			// The parallel objects of a value object are reported as
			// such; a tombstone file's .keys object is its main object.
			part := o.part
			if f.tombstone && o == f.keys {
				part = ""
			}
			w.done = append(w.done, FileStats{Key: o.key, Part: part, StartOffset: f.first, EndOffset: f.last, Records: f.records, Bytes: o.counter.n})
			w.log.Debug("object complete", "key", o.key, "records", f.records, "bytes", o.counter.n)
		}
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
		for _, o := range w.files[enc].objects() {
			if err := o.obj.Abort(ctx); err != nil {
				w.log.Warn("abort failed", "key", o.key, "err", err)
			}
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
