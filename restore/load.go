package restore

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"hash"
	"hash/crc32"
	"io"

	"github.com/kafkas3/kafkas3/convert"
	"github.com/kafkas3/kafkas3/format"
	"github.com/kafkas3/kafkas3/index"
	"github.com/kafkas3/kafkas3/s3store"
	"github.com/kafkas3/kafkas3/schemas"
)

// No partial objects
//
// To produce an object, loadObject reads it completely (again, after the
// proof), into a recordBuffer (up to Config.SpillBytes of decoded records
// in memory, the rest in an unlinked temporary file in Config.TempDir),
// and checks that its record count and its checksums, and those of its
// .keys and .headers twins, are the proof's (sameAsProved; an error names
// the object or twin that changed), or, read once, its index entry's
// (entryMatch.read). Only then is its first record produced; an object that
// changed or broke in between stops the restore with nothing of it
// produced. Objects whose offsets interleave
// (folders of one partition) stay loaded together until their last
// segment.
//
// Each partition stream reads one object ahead (prefetch.go): while it
// produces an object, its prefetcher loads the next one it needs, so
// downloading and decoding overlap producing, in parallel across the
// Config.Parallelism streams. A stream that has handed all its records to
// the producer waits for their acknowledgements outside that bound, so the
// next partition starts meanwhile. The decoded records that loaded objects keep
// in memory, across the whole restore, stay within Config.Parallelism ×
// Config.SpillBytes (a record past it goes to its object's temporary
// file), and MaxRecordMemory; the producer buffers at most 32 MiB of
// records until the broker acknowledges them (producerBufferBytes).

// ErrDamagedObject is wrapped when an archive object (or its .keys or
// .headers twin) cannot be restored as a whole: it is missing, does not
// decode to its end (truncated, a flipped byte caught by a checksum), its
// size differs from the listing or the index, its CRC32C or SHA-256
// differs from the index, its record count differs from its twins' or the index's, or its
// offsets are not increasing. The error names the object.
var ErrDamagedObject = errors.New("damaged archive object")

// readMode says what reading an object is for.
type readMode int

const (
	// modeProve reads an object for the plan: every record is decoded and
	// checked, nothing is sent to a registry (typed values and keys are
	// measured as their Avro bytes plus the 5-byte wire-format frame).
	modeProve readMode = iota
	// modeRestore reads an object to produce it: typed values and keys
	// are framed for the target registry.
	modeRestore
	// modeCat reads an object for `kafkas3 cat` (records.go): as
	// modeProve, but a typed key is kept typed when it has no plain bytes
	// (objectReader.key).
	modeCat
)

// objectFacts holds an object's facts: what a read computed of it, or,
// taking the entry's word, what its index entry says (entryFacts).
type objectFacts struct {
	records int64
	// sums are what a read computed of each part's bytes; nil when
	// nothing was read (the entry's word), so the facts of an object
	// not read cost no digests.
	sums  *readSums
	bytes int64 // bytes read from the store, all parts
	// offsets are the source offsets of the records as runs, when the
	// records carry them (envelope objects); nil otherwise.
	offsets []offsetRun
	// largest is the index and size (as produceSize measures it) of the
	// largest record.
	largestIdx, largestSize int64
	// nullKeys counts the records without a key (a compacted target
	// refuses them); nullKeyIdx is the index of the first (-1: none).
	nullKeys, nullKeyIdx int64
	// until is what the records' timestamps say about Config.Until (set
	// only with it).
	until *untilFacts
	// filtered counts the records Config.Filter leaves out (counted by
	// the proof's read, for the plan).
	filtered int64
	// stamps is the range of the records' timestamps, when they carry
	// them (envelopes), for --skip-expired's count (expired.go).
	stamps stampRange
}

// stampRange is the range of an object's record timestamps (Unix ms);
// !ok when its records carry none.
type stampRange struct {
	lo, hi int64
	ok     bool
}

// add widens s to ms.
func (s *stampRange) add(ms int64) {
	if !s.ok {
		*s = stampRange{lo: ms, hi: ms, ok: true}
		return
	}
	s.lo, s.hi = min(s.lo, ms), max(s.hi, ms)
}

// storeError marks an error of the store itself (network, permissions),
// as opposed to the bytes it returned: those stop the restore whatever
// behavior.on.error says.
type storeError struct{ err error }

func (e *storeError) Error() string { return e.err.Error() }
func (e *storeError) Unwrap() error { return e.err }

// readSums are the digests a read computed of an object's parts: value
// (the keys object of a tombstone object), and the twins' (zero without
// them).
type readSums struct {
	value, keys, headers digest
}

// untilOf returns what the records' timestamps say about Config.Until:
// a read's, or, for facts that read nothing (the entry's word) or a
// restore without --until, nothing stamped and nothing after it.
func (p objectFacts) untilOf() untilFacts {
	if p.until == nil {
		return untilFacts{after: -1}
	}
	return *p.until
}

// digests returns what the read computed, zero when nothing was read.
func (p objectFacts) digests() readSums {
	if p.sums == nil {
		return readSums{}
	}
	return *p.sums
}

// digest is what reading an object computed of its bytes (read is set):
// the CRC32C, always, and the hex SHA-256 when asked for (Object.sha256:
// an index entry of the object gives one), else "".
type digest struct {
	crc    uint32
	read   bool
	sha256 string
}

// crc32c is d's CRC32C as the index writes it (index.FormatCRC32C).
func (d digest) crc32c() string { return index.FormatCRC32C(d.crc) }

// differs returns how d and was differ, comparing the SHA-256 only when
// both have one; "" when they agree.
func (d digest) differs(was digest) string {
	if d.crc != was.crc {
		return fmt.Sprintf("CRC32C %s, was %s", d.crc32c(), was.crc32c())
	}
	if d.sha256 != "" && was.sha256 != "" && d.sha256 != was.sha256 {
		return fmt.Sprintf("SHA-256 %s, was %s", d.sha256, was.sha256)
	}
	return ""
}

// castagnoli is the CRC32C table (hardware accelerated by hash/crc32).
var castagnoli = crc32.MakeTable(crc32.Castagnoli)

// checkedReader reads a whole object, checksumming (digest) and counting
// its bytes, and tags read errors as store errors.
type checkedReader struct {
	r   io.Reader
	crc uint32
	sha hash.Hash // nil unless the SHA-256 is asked for
	n   int64
}

func newCheckedReader(r io.Reader, withSHA256 bool) *checkedReader {
	c := &checkedReader{r: r}
	if withSHA256 {
		c.sha = sha256.New()
	}
	return c
}

func (c *checkedReader) Read(b []byte) (int, error) {
	n, err := c.r.Read(b)
	c.n += int64(n)
	c.crc = crc32.Update(c.crc, castagnoli, b[:n])
	if c.sha != nil {
		c.sha.Write(b[:n])
	}
	if err != nil && !errors.Is(err, io.EOF) {
		err = &storeError{err}
	}
	return n, err
}

// finish reads what the decoder left (a trailer it did not need, or
// garbage after the last record) and checks the size against want.
func (c *checkedReader) finish(key string, want int64) error {
	if _, err := io.Copy(io.Discard, c); err != nil {
		return fmt.Errorf("read object %q: %w", key, err)
	}
	if c.n != want {
		return fmt.Errorf("%w: %q is %d bytes, the listing says %d", ErrDamagedObject, key, c.n, want)
	}
	return nil
}

// sum returns the digest of the bytes read.
func (c *checkedReader) sum() digest {
	d := digest{crc: c.crc, read: true}
	if c.sha != nil {
		d.sha256 = hex.EncodeToString(c.sha.Sum(nil))
	}
	return d
}

// openChecked opens key for a whole read, computing its SHA-256 too with
// withSHA256.
func (r *Restorer) openChecked(ctx context.Context, key string, withSHA256 bool) (io.Closer, *checkedReader, error) {
	rc, err := r.store.Open(ctx, key)
	if err != nil {
		if errors.Is(err, s3store.ErrNotExist) {
			return nil, nil, fmt.Errorf("%w: %q is listed but cannot be opened: %w", ErrDamagedObject, key, err)
		}
		return nil, nil, &storeError{fmt.Errorf("open object %q: %w", key, err)}
	}
	return rc, newCheckedReader(rc, withSHA256), nil
}

// isDamage reports whether err is about an object's bytes (so
// behavior.on.error and --allow-gaps may skip the object) rather than the
// store, the registry, the context or the configuration.
func isDamage(err error) bool {
	if err == nil || errors.Is(err, context.Canceled) || errors.Is(err, context.DeadlineExceeded) ||
		errors.Is(err, ErrNoRegistry) || errors.Is(err, format.ErrUnknownFormat) {
		return false
	}
	var se *storeError
	return !errors.As(err, &se)
}

// readObject reads obj and its .keys and .headers twins completely, from
// the first byte to the last, and calls fn with each record as the target
// gets it (key and headers from the twins, typed values framed in
// modeRestore). The object has been fully checked only when readObject
// returns nil: fn must not produce anything, only keep the records (see
// loadObject). A decode error, a size that differs from the listing, or a
// twin with another record count is an error naming the object that
// isDamage accepts.
//
// In modeProve fn keeps nothing, so the value reader does not copy values
// out of its buffers (format.Transient): each record is valid only until
// the next one is read. Nor does it once copies (when set) reports true:
// fn keeps no record of those that follow (a recordBuffer that spilled
// encodes each record into its file at once).
func (r *Restorer) readObject(ctx context.Context, obj Object, target string, mode readMode, fn func(rec *format.Record) error, copies func() bool) (objectFacts, error) {
	or, err := r.openObject(ctx, obj, target, mode)
	if err != nil {
		return objectFacts{nullKeyIdx: -1}, err
	}
	defer or.close()
	t, _ := or.rd.(format.Transient)
	if t != nil && mode == modeProve {
		t.SetTransient(true)
		t = nil
	}
	for {
		if t != nil && copies != nil && copies() {
			t.SetTransient(true)
			t = nil
		}
		rec, err := or.next(ctx)
		if err != nil {
			return or.facts, err
		}
		if rec == nil {
			return or.finish()
		}
		if err := or.account(rec); err != nil {
			return or.facts, err
		}
		if err := fn(rec); err != nil {
			return or.facts, err
		}
		or.n++
	}
}

// objectReader reads one archive object and its twins, record by record,
// and computes its facts (objectFacts).
type objectReader struct {
	r      *Restorer
	obj    Object
	target string
	mode   readMode

	closers       []func() error
	value         *checkedReader
	rd            format.RecordReader
	ec            *envelopeChecker // rd, when the value records may be envelopes
	keys, headers *parallelReader  // nil without the twin

	n       int64 // records read
	offsets offsetRuns
	carried bool // records carry their source offsets
	facts   objectFacts
	// ids maps the target topic's schema ids (schemas.go); nil without.
	ids schemas.Map
}

// openObject opens obj and its twins and the reader of its format (the
// .keys format for a tombstone object).
func (r *Restorer) openObject(ctx context.Context, obj Object, target string, mode readMode) (*objectReader, error) {
	valueFormat := r.cfg.Format
	if obj.Tombstone {
		f, err := r.parallelFormat(obj.twinPart(index.PartKeys).ext, true)
		if err != nil {
			return nil, fmt.Errorf("read object %q: %w", obj.Key, err)
		}
		valueFormat = f
	}
	or := &objectReader{r: r, obj: obj, target: target, mode: mode, facts: objectFacts{nullKeyIdx: -1}}
	if !r.cfg.Until.IsZero() {
		u := newUntilFacts()
		or.facts.until = &u
	}
	closer, cr, err := r.openChecked(ctx, obj.Key, obj.sha256)
	if err != nil {
		return nil, err
	}
	or.closers, or.value = append(or.closers, closer.Close), cr
	if t := obj.twinPart(index.PartKeys); t.key != "" {
		if or.keys, err = r.openParallel(ctx, t.key, t.ext, t.size, true, obj.sha256); err != nil {
			or.close()
			return nil, err
		}
		or.closers = append(or.closers, or.keys.close)
	}
	if t := obj.twinPart(index.PartHeaders); t.key != "" {
		if or.headers, err = r.openParallel(ctx, t.key, t.ext, t.size, false, obj.sha256); err != nil {
			or.close()
			return nil, err
		}
		or.closers = append(or.closers, or.headers.close)
	}
	var value io.Reader = cr
	if mode == modeRestore && needsRandomAccess(valueFormat) {
		sr, closeFile, err := spool(cr, r.cfg.TempDir, obj.Key)
		if err != nil {
			or.close()
			return nil, err
		}
		or.closers, value = append(or.closers, closeFile), sr
	}
	if or.rd, err = valueFormat.NewReader(value); err != nil {
		or.close()
		return nil, fmt.Errorf("%w: read object %q: %w", ErrDamagedObject, obj.Key, err)
	}
	if !obj.Tombstone {
		or.rd = r.envelopes(or.rd, obj)
	}
	if mode == modeRestore {
		or.ids = r.idMap(target)
	}
	or.ec, _ = or.rd.(*envelopeChecker)
	return or, nil
}

// close closes the object and its twins.
func (or *objectReader) close() {
	for _, c := range or.closers {
		_ = c()
	}
}

// next returns the next record as the target gets it: its key from the
// .keys twin (a tombstone object's records are keys with a nil value), its
// headers from the .headers twin, a typed value framed in modeRestore
// (without its decoded form), and its source offset. It returns nil at the
// end of the object.
func (or *objectReader) next(ctx context.Context) (*format.Record, error) {
	obj, n := &or.obj, or.n
	rec, err := or.rd.Read()
	if errors.Is(err, io.EOF) {
		return nil, nil
	}
	if err != nil {
		return nil, fmt.Errorf("%w: read object %q: record %d: %w", ErrDamagedObject, obj.Key, n, err)
	}
	// valueFramed, keyFramed: framed here for the target registry, so
	// their ids need no rewrite (rewriteIDs).
	var valueFramed, keyFramed bool
	switch {
	case obj.Tombstone:
		krec := rec
		rec = &format.Record{Offset: krec.Offset, Timestamp: krec.Timestamp, TimestampType: krec.TimestampType}
		keyFramed = or.r.framesKey(krec)
		if err := or.key(ctx, rec, krec, obj.Key); err != nil {
			return nil, err
		}
	default:
		valueFramed = rec.ValueTyped != nil && rec.ValueTyped.Schema != nil
		if or.mode == modeRestore {
			if err := or.r.typedValue(ctx, rec, or.target, obj.Key, n); err != nil {
				return nil, err
			}
			// Framed: the decoded form (Raw and Native) is not produced,
			// and recordSize does not count it; a buffered record must
			// not hold it (dropTyped).
			dropTyped(rec)
		}
		if or.keys != nil {
			krec, err := or.keys.next(obj.Key)
			if err != nil {
				return nil, err
			}
			keyFramed = or.r.framesKey(krec)
			if err := or.key(ctx, rec, krec, or.keys.key); err != nil {
				return nil, err
			}
		}
	}
	if or.headers != nil {
		if rec.Headers, err = or.headers.nextHeaders(obj.Key, n); err != nil {
			return nil, err
		}
	}
	or.r.erase(rec)
	if or.mode == modeRestore {
		or.r.rewriteIDs(or.ids, rec, valueFramed, keyFramed) // after erase: the list names archived keys
	}
	// Records that carry their offset (envelope objects) keep it; the
	// others get start+i, the offset their name implies.
	if rec.Offset != 0 {
		or.carried = true
	}
	if !or.carried && rec.Offset == 0 {
		rec.Offset = obj.StartOffset + n
	}
	return rec, nil
}

// account adds rec to the object's facts: its offset (increasing), what its
// timestamp says about Config.Until, its produce size and a missing key.
func (or *objectReader) account(rec *format.Record) error {
	p, n := &or.facts, or.n
	if err := or.offsets.add(rec.Offset); err != nil {
		return fmt.Errorf("%w: object %q: record %d: %w", ErrDamagedObject, or.obj.Key, n, err)
	}
	stamped := or.ec != nil && or.ec.er.Envelopes()
	ts := rec.Timestamp
	if stamped {
		ts = or.ec.archived // before --timestamps now cleared it
	}
	if !ts.IsZero() {
		p.stamps.add(ts.UnixMilli())
	}
	if !or.r.cfg.Until.IsZero() {
		if p.until != nil {
			p.until.add(rec, ts, stamped, rec.Offset, or.r.untilMS())
		}
	}
	if size := produceSize(rec, or.mode); size > p.largestSize {
		p.largestIdx, p.largestSize = n, size
	}
	if rec.Key == nil {
		if p.nullKeys == 0 {
			p.nullKeyIdx = n
		}
		p.nullKeys++
	}
	if or.mode == modeProve && or.r.cfg.Filter.Active() && !or.r.keeps(rec) {
		p.filtered++ // the plan's count (production counts what it leaves out itself)
	}
	return nil
}

// finish reads what is left of the object and its twins, checks their
// sizes and that the twins end with the object, and completes the facts.
func (or *objectReader) finish() (objectFacts, error) {
	p := &or.facts
	if err := or.value.finish(or.obj.Key, or.obj.Size); err != nil {
		return *p, err
	}
	p.bytes = or.value.n
	for _, tw := range []*parallelReader{or.keys, or.headers} {
		if tw == nil {
			continue
		}
		if err := tw.finish(or.obj.Key); err != nil {
			return *p, err
		}
		if err := tw.cr.finish(tw.key, tw.size); err != nil {
			return *p, err
		}
		p.bytes += tw.cr.n
		if p.sums == nil {
			p.sums = &readSums{}
		}
		if tw.isKey {
			p.sums.keys = tw.cr.sum()
		} else {
			p.sums.headers = tw.cr.sum()
		}
	}
	p.records = or.n
	if p.sums == nil {
		p.sums = &readSums{}
	}
	p.sums.value = or.value.sum()
	if or.carried {
		p.offsets = or.offsets.runs
	}
	return *p, nil
}

// key sets rec's key from krec, record or.n of the keys object objKey
// (keyFor). Reading for `kafkas3 cat` (modeCat), a key that a restore
// produces only through a registry (a typed key other than a string or
// bytes) is kept typed instead (Record.KeyTyped), for cat to print.
func (or *objectReader) key(ctx context.Context, rec, krec *format.Record, objKey string) error {
	k, err := or.r.keyFor(ctx, krec, or.target, objKey, or.n, or.mode)
	if err != nil && or.mode == modeCat && krec.ValueTyped != nil && errors.Is(err, ErrNoRegistry) {
		native, schema, raw, err := typedKey(krec, objKey, or.n)
		rec.KeyTyped = &format.Typed{Schema: schema, Raw: raw, Native: native}
		return err
	}
	rec.Key = k
	return err
}

// keyFor is keyFrom, except that modeProve sends nothing to a registry:
// a typed key that KeyEncoder would frame is measured as its Avro bytes
// plus the 5-byte frame.
func (r *Restorer) keyFor(ctx context.Context, krec *format.Record, target, objKey string, i int64, mode readMode) ([]byte, error) {
	if mode == modeProve && r.cfg.KeyEncoder != nil && krec.ValueTyped != nil && krec.ValueTyped.Schema != nil {
		raw := krec.ValueTyped.Raw
		if raw == nil {
			raw = krec.Value
		}
		return make([]byte, len(raw)+convert.WireHeaderLen), nil
	}
	return r.keyFrom(ctx, krec, target, objKey, i)
}

// dropTyped lets go of rec's decoded key and value (KeyTyped, ValueTyped:
// the Avro bytes and the Go value) once rec holds the bytes the target
// gets. Nothing after framing reads them: produceSize looks at
// ValueTyped in modeProve only, before framing, and the spill encoding
// writes the bytes alone. A record held in a recordBuffer must not keep
// them, as recordSize, and so the restore's memory budget, does not count
// them.
func dropTyped(rec *format.Record) {
	rec.KeyTyped, rec.ValueTyped = nil, nil
}

// produceSize is the size a record adds to a produce batch, as Kafka
// measures it against max.message.bytes, counted generously: key, value,
// header keys and values, their length varints and the record's fixed
// fields (at most 21 bytes of varints and attributes), plus the 61-byte
// batch header of a batch that holds only this record. In modeProve a
// typed value is counted with the wire-format frame it will get.
func produceSize(rec *format.Record, mode readMode) int64 {
	value := int64(len(rec.Value))
	if mode == modeProve && rec.ValueTyped != nil && rec.ValueTyped.Schema != nil {
		value += convert.WireHeaderLen
	}
	var hb int64
	for _, h := range rec.Headers {
		hb += int64(len(h.Key) + len(h.Value))
	}
	return index.RecordSize(int64(len(rec.Key)), value, hb, len(rec.Headers))
}

// loadedObject is an object read completely and checked, whose records
// wait in a recordBuffer to be produced.
type loadedObject struct {
	buf   *recordBuffer
	facts objectFacts
}

// loadObject reads obj completely in modeRestore into a recordBuffer
// (memory up to spill bytes while the restore's memBudget allows, then an
// unlinked temporary file) and checks it (checkLoaded): against the
// proof's read of it and of its .keys and .headers twins (the same record
// count, the twins ending with the object, and the same checksums: CRC32C,
// and the SHA-256 when the proof computed one), or, when the plan took
// its entry's word, against its entry. Nothing of obj can be produced
// before loadObject returns.
func (r *Restorer) loadObject(ctx context.Context, obj Object, target string, spill int64) (*loadedObject, error) {
	buf := newRecordBuffer(spill, r.cfg.TempDir, r.mem)
	facts, err := r.readObject(ctx, obj, target, modeRestore, buf.add, buf.Spilled)
	if err == nil {
		err = checkLoaded(&obj, facts)
	}
	if err == nil {
		err = buf.rewind()
	}
	if err != nil {
		buf.close()
		return nil, err
	}
	return &loadedObject{buf: buf, facts: facts}, nil
}

// sameAsProved compares what reading obj now gave with what the proof
// read: record count, and the checksums of the object and of each
// twin. Its error names the object that changed.
func sameAsProved(obj *Object, now, was objectFacts) error {
	if now.records != was.records {
		return fmt.Errorf("%w: %q now holds %d records, %d when the restore was planned: the object changed", ErrDamagedObject, obj.Key, now.records, was.records)
	}
	for _, c := range []struct {
		key      string
		now, was digest
	}{{obj.Key, now.digests().value, was.digests().value}, {obj.KeysKey(), now.digests().keys, was.digests().keys},
		{obj.HeadersKey(), now.digests().headers, was.digests().headers}} {
		if c.key == "" || c.was == (digest{}) {
			continue // no such twin, or facts that read nothing (the entry's word)
		}
		if d := c.now.differs(c.was); d != "" {
			return fmt.Errorf("%w: %q changed since the restore was planned (%s)", ErrDamagedObject, c.key, d)
		}
	}
	return nil
}
