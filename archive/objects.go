package archive

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"hash"
	"hash/crc32"

	"github.com/kafkas3/kafkas3/format"
	"github.com/kafkas3/kafkas3/index"
	"github.com/kafkas3/kafkas3/partition"
	"github.com/kafkas3/kafkas3/s3store"
)

// This file holds the store objects of the partition writer's files: an
// open file's value object and its parallel .keys and .headers objects,
// from creation (open) to completion (complete) or abort.

// StoreError marks a failure of the object store. The sink treats it as
// transient: it drops its open files and resumes from the committed offsets,
// which rewrites the same keys with the same bytes.
type StoreError struct {
	Key string
	Err error
}

func (e *StoreError) Error() string {
	if e.Key == "" {
		return "object store: " + e.Err.Error()
	}
	return fmt.Sprintf("object %q: %v", e.Key, e.Err)
}
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
	// maxRecord is the largest record's size as a restore produces it
	// (restoreSize), nullKeys the records a restore produces without a
	// key: the entry's max_record_bytes and null_keys.
	maxRecord, nullKeys int64
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

// castagnoli is the CRC32C table; hash/crc32 uses the CPU's CRC32
// instructions with it (SSE 4.2, ARMv8), at memory speed.
var castagnoli = crc32.MakeTable(crc32.Castagnoli)

// countingWriter counts the bytes written to the object and, for the
// archive index, checksums them: the CRC32C of the whole object (the
// checksum S3 verifies on receipt and keeps) when crc is set, and the
// SHA-256 when sha is set (kafkas3.index.digest=sha256). It remembers the
// first write error, which tells store failures from bad records.
type countingWriter struct {
	w      interface{ Write([]byte) (int, error) }
	n      int64
	crc    bool // compute crc32c (the index is on)
	crc32c uint32
	sha    hash.Hash // nil unless SHA-256 is asked for
	err    error
}

func (c *countingWriter) Write(p []byte) (int, error) {
	n, err := c.w.Write(p)
	c.n += int64(n)
	if c.crc {
		c.crc32c = crc32.Update(c.crc32c, castagnoli, p[:n])
	}
	if c.sha != nil {
		c.sha.Write(p[:n])
	}
	if err != nil && c.err == nil {
		c.err = err
	}
	return n, err
}

// crcText returns the CRC32C of the bytes written as the index and S3
// print it ("" when not computed).
func (c *countingWriter) crcText() string {
	if !c.crc {
		return ""
	}
	return index.FormatCRC32C(c.crc32c)
}

// shaText returns the hex SHA-256 of the bytes written ("" when not
// computed).
func (c *countingWriter) shaText() string {
	if c.sha == nil {
		return ""
	}
	return hex.EncodeToString(c.sha.Sum(nil))
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
	// MaxTime is the newest record timestamp of the object (Unix ms).
	MaxTime int64
	// CRC32C is the CRC32C of the object's bytes (index.FormatCRC32C),
	// computed while writing when the archive index is on; "" otherwise.
	CRC32C string
	// SHA256 is the hex SHA-256 of the object's bytes, computed while
	// writing with Config.IndexSHA256 (or when the object replaces one
	// that an older index describes by its SHA-256 only); "" otherwise.
	SHA256 string
	// ETag is the ETag the store answered when it committed the object
	// (s3store.ETagger), as the archive index records it; "" when the
	// store gives none (a local directory).
	ETag string
}

// open starts the file of encoded whose first record is at start: its
// value object (none for a tombstone file) and its parallel objects. On a
// failure the objects already created are aborted.
func (w *partitionWriter) open(ctx context.Context, encoded string, start int64, tomb bool) (*openFile, error) {
	name := partition.ObjectName{Topic: w.topic, Encoded: encoded, Partition: w.partition, StartOffset: start}
	f := &openFile{first: start, tombstone: tomb, runs: make([]index.Run, 0, 1)}
	var created []*object
	create := func(part, ext string, ft format.Format) (*object, error) {
		o, err := w.create(ctx, name, part, ext, ft)
		if err == nil {
			created = append(created, o)
		}
		return o, err
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

// create starts the store object of name with extension ext and the
// format writer ft on top of it, checksumming its bytes for the index.
func (w *partitionWriter) create(ctx context.Context, name partition.ObjectName, part, ext string, ft format.Format) (*object, error) {
	name.Ext = ext
	key := w.cfg.Keys.ObjectKey(name)
	if err := w.checkKey(ctx, key, name.StartOffset); err != nil {
		return nil, err
	}
	// s3store.Data: the object holds records, and gets s3.storage.class.
	obj, err := w.store.Create(s3store.Data(ctx), key)
	if err != nil {
		return nil, &StoreError{Key: key, Err: err}
	}
	cw := &countingWriter{w: obj, crc: w.indexed()}
	if w.indexed() && (w.cfg.IndexSHA256 || w.guard.needsSHA256(key)) {
		cw.sha = sha256.New()
	}
	rw, err := ft.NewWriter(cw)
	if err != nil {
		_ = obj.Abort(ctx)
		return nil, fmt.Errorf("object %q: %w", key, err)
	}
	return &object{key: key, obj: obj, rw: rw, counter: cw, part: part}, nil
}

// closeFile closes f's format writers, so that its objects hold all their
// bytes and only their commit is left (runUpload, upload.go). On a
// failure f's objects are aborted, and the error is a *StoreError.
func (w *partitionWriter) closeFile(ctx context.Context, f *openFile) error {
	objs := f.objects()
	for _, o := range objs {
		if err := o.rw.Close(); err != nil {
			abortObjects(ctx, w, objs)
			return &StoreError{Key: o.key, Err: err}
		}
	}
	return nil
}

// drop aborts the open file of encoded, which holds no record.
func (w *partitionWriter) drop(ctx context.Context, encoded string) {
	abortObjects(ctx, w, w.files[encoded].objects())
	delete(w.files, encoded)
	for i, e := range w.order {
		if e == encoded {
			w.order = append(w.order[:i], w.order[i+1:]...)
			break
		}
	}
}

// abort stops the running upload (what it did not complete is aborted)
// and discards every open file; nothing of them becomes visible.
func (w *partitionWriter) abort(ctx context.Context) {
	w.cancelUpload()
	w.abortFrom(ctx, 0)
}

// abortFrom discards the open files from the from-th in opening order on
// (those before are complete) and forgets them all.
func (w *partitionWriter) abortFrom(ctx context.Context, from int) {
	for _, enc := range w.order[from:] {
		abortObjects(ctx, w, w.files[enc].objects())
	}
	clear(w.files)
	w.order = w.order[:0]
	w.count = 0
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
