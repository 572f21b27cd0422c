package archive

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"hash"
	"log/slog"
	"slices"
	"time"

	"github.com/kafkas3/kafkas3/format"
	"github.com/kafkas3/kafkas3/index"
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
	// runs, minTS and maxTS describe the records for the archive index
	// (Config.IndexPrefix): their offsets as runs and their timestamps.
	runs         []index.Run
	minTS, maxTS int64
}

// add records that the file now holds the record at offset with timestamp
// ts (Unix ms).
func (f *openFile) add(offset, ts int64) {
	if n := len(f.runs); n > 0 && f.runs[n-1].Last+1 == offset {
		f.runs[n-1].Last = offset
	} else {
		f.runs = append(f.runs, index.Run{First: offset, Last: offset})
	}
	if f.records == 0 || ts < f.minTS {
		f.minTS = ts
	}
	if f.records == 0 || ts > f.maxTS {
		f.maxTS = ts
	}
	f.last = offset
	f.records++
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

// countingWriter counts the bytes written to the object, hashes them with
// SHA-256 when h is set (for the archive index) and remembers the first
// write error, which tells store failures from bad records.
type countingWriter struct {
	w   interface{ Write([]byte) (int, error) }
	n   int64
	h   hash.Hash // nil without the index
	err error
}

func (c *countingWriter) Write(p []byte) (int, error) {
	n, err := c.w.Write(p)
	c.n += int64(n)
	if c.h != nil {
		c.h.Write(p[:n])
	}
	if err != nil && c.err == nil {
		c.err = err
	}
	return n, err
}

// sum returns the hex SHA-256 of the bytes written ("" without a hash).
func (c *countingWriter) sum() string {
	if c.h == nil {
		return ""
	}
	return hex.EncodeToString(c.h.Sum(nil))
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
	// SHA256 is the hex SHA-256 of the object's bytes, computed while
	// writing when the archive index is on; "" otherwise.
	SHA256 string
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

	// The archive index (Config.IndexPrefix != ""). Every offset the
	// writer makes committable has an index object with that commit, so
	// each rotation's entries can say "from": the offset the previous
	// index object (of this writer, or the committed offset it started
	// at) committed, and the next offsets the sink read, up to the commit,
	// are accounted for by the entries or were absent.
	start       int64         // committed offset at assignment; -1 unknown
	from        int64         // the current span's first offset; -1 before any record
	lastEntries []index.Entry // entries of the last index object written; nil if none
	onIndex     func()        // called after each index object is written; may be nil
	// indexWriter names this sink's group in its index keys
	// (index.WriterOf), so another group's sink into the same bucket
	// never overwrites them.
	indexWriter string

	schemas *schemas            // schema.compatibility decisions and projections
	keys    *format.KeyPart     // records of the .keys objects; nil without KeysFormat
	headers *format.HeadersPart // records of the .headers objects; nil without HeadersFormat
	// tombstones tells whether the open set holds tombstones
	// (behavior.on.null.values=write); a switch rotates.
	tombstones bool
	// onNullIgnored, when set, is told the offset of each null value that
	// behavior.on.null.values=ignore drops (the summary counts them).
	onNullIgnored func(offset int64)
}

// newPartitionWriter returns the writer of one partition; start is the
// group's committed offset for it (-1 when unknown or none), where the
// archive index's first span starts.
func newPartitionWriter(topic string, p int32, start int64, cfg *Config, store s3store.Store, log *slog.Logger) *partitionWriter {
	w := &partitionWriter{
		topic: topic, partition: p, cfg: cfg, store: store,
		log:   log.With("topic", topic, "partition", p),
		files: make(map[string]*openFile),
		last:  -1, pending: -1, start: start, from: -1,
		indexWriter: index.WriterOf(cfg.GroupID),
		schemas:     newSchemas(cfg.Compatibility),
	}
	// New checked that the formats hold keys and headers.
	if cfg.KeysFormat != nil {
		w.keys, _ = format.NewKeyPart(cfg.KeysFormat.Kind, cfg.KeyConverterClass == stringKeyConverter)
	}
	if cfg.HeadersFormat != nil {
		w.headers, _ = format.NewHeadersPart(cfg.HeadersFormat.Kind)
	}
	return w
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
	tomb := w.isTombstone(r)
	if tomb {
		switch w.cfg.NullValues {
		case NullIgnore:
			if w.onNullIgnored != nil {
				w.onNullIgnored(r.Offset)
			}
			return w.skip(ctx, r.Offset)
		case NullWrite:
		default:
			return fmt.Errorf("topic %s partition %d offset %d: %w", r.Topic, r.Partition, r.Offset, ErrNullValue)
		}
	}
	// The key and headers records are built first: a record that cannot
	// give them is refused before anything of it is written.
	var keyRec, hdrRec *format.Record
	var err error
	if w.keys != nil {
		if keyRec, err = w.keys.Record(r); err != nil {
			return w.bad(r, err)
		}
	}
	if w.headers != nil {
		if hdrRec, err = w.headers.Record(r); err != nil {
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
		act, err := w.decideSchema(f, r)
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
		if err := f.rw.Write(r); err != nil {
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
	w.begin(r.Offset)
	f.add(r.Offset, r.Timestamp.UnixMilli())
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
// record, a bad record). Without the archive index, with no open file, it
// can be committed at once. With the index, every commit needs an index
// object that says what the offsets before it held: skipped offsets after
// the last rotation are committed by the next rotation, by flush, or, once
// flush.size of them accumulate, by an index object that restamps the last
// rotation's entries with the new commit (restamp).
func (w *partitionWriter) skip(ctx context.Context, offset int64) error {
	w.begin(offset)
	w.last = offset
	if w.count > 0 {
		return nil
	}
	if !w.indexed() {
		w.pending = offset + 1
		return nil
	}
	if offset+1-w.from >= int64(w.cfg.FlushSize) {
		return w.restamp(ctx, offset+1)
	}
	return nil
}

// indexed reports whether the archive index is written.
func (w *partitionWriter) indexed() bool { return w.cfg.IndexPrefix != "" }

// begin notes the first offset the writer consumes: the index's first span
// starts at the committed offset the writer started from, or at this
// offset when that is unknown.
func (w *partitionWriter) begin(offset int64) {
	if w.from >= 0 {
		return
	}
	if w.start >= 0 && w.start <= offset {
		w.from = w.start
	} else {
		w.from = offset
	}
}

func (w *partitionWriter) open(ctx context.Context, encoded string, start int64, tomb bool) (*openFile, error) {
	name := partition.ObjectName{
		Topic: w.topic, Encoded: encoded, Partition: w.partition,
		StartOffset: start, Ext: w.cfg.Format.Extension(),
	}
	f := &openFile{first: start, tombstone: tomb, runs: make([]index.Run, 0, 1)}
	var created []*object
	create := func(part string, ext string, ft format.Format) (*object, error) {
		name.Ext = ext
		key := w.cfg.Keys.ObjectKey(name)
		obj, err := w.store.Create(ctx, key)
		if err != nil {
			return nil, &StoreError{Key: key, Err: err}
		}
		cw := &countingWriter{w: obj}
		if w.indexed() {
			cw.h = sha256.New()
		}
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
	var entries []index.Entry
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
			w.done = append(w.done, FileStats{Key: o.key, Part: part, StartOffset: f.first, EndOffset: f.last, Records: f.records, Bytes: o.counter.n, SHA256: o.counter.sum()})
			w.log.Debug("object complete", "key", o.key, "records", f.records, "bytes", o.counter.n)
		}
		if w.indexed() {
			entries = append(entries, w.entry(f))
		}
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
		return w.putIndex(ctx, entries, w.last+1)
	}
	w.pending = w.last + 1
	return nil
}

// entry is the archive index entry of a file whose objects are complete.
func (w *partitionWriter) entry(f *openFile) index.Entry {
	e := index.Entry{
		V: index.Version, Topic: w.topic, Partition: w.partition, Key: f.key,
		Runs: f.runs, Records: f.records, MinTS: f.minTS, MaxTS: f.maxTS, Tombstone: f.tombstone,
		Envelope: w.cfg.Envelope,
	}
	for _, o := range f.objects() {
		part := o.part
		if f.tombstone && o == f.keys {
			part = index.PartKeys
		}
		e.Objects = append(e.Objects, index.Object{Key: o.key, Part: indexPart(part), Size: o.counter.n, SHA256: o.counter.sum()})
	}
	return e
}

// indexPart maps a FileStats part to the index's part name.
func indexPart(part string) string {
	switch part {
	case PartKeys:
		return index.PartKeys
	case PartHeaders:
		return index.PartHeaders
	}
	return index.PartValue
}

// putIndex writes the index object of entries at commit and makes commit
// committable: the next span starts there.
func (w *partitionWriter) putIndex(ctx context.Context, entries []index.Entry, commit int64) error {
	for i := range entries {
		entries[i].Commit = commit
	}
	data, err := index.Encode(entries)
	if err != nil {
		return fmt.Errorf("topic %s partition %d: archive index: %w", w.topic, w.partition, err)
	}
	key := index.Key(w.cfg.IndexPrefix, w.topic, w.partition, commit, w.indexWriter)
	if err := putObject(ctx, w.store, key, data); err != nil {
		return err
	}
	if w.onIndex != nil {
		w.onIndex()
	}
	w.log.Debug("index object complete", "key", key, "entries", len(entries), "commit", commit)
	w.lastEntries = entries
	w.from = commit
	w.pending = commit
	return nil
}

// restamp commits skipped offsets up to commit when no file is open: it
// writes the last rotation's entries again with the new commit (an entry
// with a higher commit supersedes the older one for the same object), so
// the index accounts for every offset below every commit. When the writer
// has written no index object yet, it reads the one at the committed
// offset it started from. Without any (an archive written before the
// index, or by Confluent's connector) the offset is committed without an
// index object: nothing before it is indexed.
func (w *partitionWriter) restamp(ctx context.Context, commit int64) error {
	if commit <= w.from {
		return nil
	}
	entries := w.lastEntries
	if entries == nil && w.start >= 0 && w.from == w.start {
		key := index.Key(w.cfg.IndexPrefix, w.topic, w.partition, w.start, w.indexWriter)
		rc, err := w.store.Open(ctx, key)
		switch {
		case errors.Is(err, s3store.ErrNotExist):
		case err != nil:
			return &StoreError{Key: key, Err: err}
		default:
			entries, err = index.Decode(key, rc)
			rc.Close()
			if err != nil {
				return fmt.Errorf("topic %s partition %d: %w", w.topic, w.partition, err)
			}
		}
	}
	if entries == nil {
		w.from = commit
		w.pending = commit
		return nil
	}
	// The entries keep the From they were written with.
	return w.putIndex(ctx, slices.Clone(entries), commit)
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

// putObject stores data as the object key: created, written, committed;
// on failure it is aborted and nothing of it stays. Errors are
// *StoreError naming the key.
func putObject(ctx context.Context, store s3store.Store, key string, data []byte) error {
	obj, err := store.Create(ctx, key)
	if err != nil {
		return &StoreError{Key: key, Err: err}
	}
	if _, err := obj.Write(data); err != nil {
		_ = obj.Abort(ctx)
		return &StoreError{Key: key, Err: err}
	}
	if err := obj.Commit(ctx); err != nil {
		_ = obj.Abort(ctx)
		return &StoreError{Key: key, Err: err}
	}
	return nil
}
