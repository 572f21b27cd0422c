package restore

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"hash"
	"io"

	"github.com/kafkas3/kafkas3/format"
	"github.com/kafkas3/kafkas3/s3store"
)

// ErrDamagedObject is wrapped when an archive object (or its .keys or
// .headers twin) cannot be restored as a whole: it is missing, does not
// decode to its end (truncated, a flipped byte caught by a checksum), its
// size differs from the listing or the index, its SHA-256 differs from the
// index, its record count differs from its twins' or the index's, or its
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
)

// objectProof is what reading one object proved about it.
type objectProof struct {
	records int64
	sha256  string // hex SHA-256 of the value object (the keys object for a tombstone object)
	// keysSHA256 and headersSHA256 are the twins' (empty without them).
	keysSHA256, headersSHA256 string
	bytes                     int64 // bytes read from the store, all parts
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
	until untilProof
}

// storeError marks an error of the store itself (network, permissions),
// as opposed to the bytes it returned: those stop the restore whatever
// behavior.on.error says.
type storeError struct{ err error }

func (e *storeError) Error() string { return e.err.Error() }
func (e *storeError) Unwrap() error { return e.err }

// checkedReader reads a whole object, hashing and counting its bytes, and
// tags read errors as store errors.
type checkedReader struct {
	r io.Reader
	h hash.Hash
	n int64
}

func newCheckedReader(r io.Reader) *checkedReader {
	return &checkedReader{r: r, h: sha256.New()}
}

func (c *checkedReader) Read(b []byte) (int, error) {
	n, err := c.r.Read(b)
	c.n += int64(n)
	c.h.Write(b[:n])
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

func (c *checkedReader) sum() string { return hex.EncodeToString(c.h.Sum(nil)) }

// openChecked opens key for a whole read.
func (r *Restorer) openChecked(ctx context.Context, key string) (io.Closer, *checkedReader, error) {
	rc, err := r.store.Open(ctx, key)
	if err != nil {
		if errors.Is(err, s3store.ErrNotExist) {
			return nil, nil, fmt.Errorf("%w: %q is listed but cannot be opened: %w", ErrDamagedObject, key, err)
		}
		return nil, nil, &storeError{fmt.Errorf("open object %q: %w", key, err)}
	}
	return rc, newCheckedReader(rc), nil
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
func (r *Restorer) readObject(ctx context.Context, obj Object, target string, mode readMode, fn func(rec *format.Record) error) (objectProof, error) {
	proof := objectProof{nullKeyIdx: -1}
	valueFormat := r.cfg.Format
	if obj.Tombstone {
		f, err := r.parallelFormat(obj.keysExt, true)
		if err != nil {
			return proof, fmt.Errorf("read object %q: %w", obj.Key, err)
		}
		valueFormat = f
	}
	closer, cr, err := r.openChecked(ctx, obj.Key)
	if err != nil {
		return proof, err
	}
	defer closer.Close()
	var keys, headers *parallelReader
	if obj.KeysKey != "" {
		if keys, err = r.openParallel(ctx, obj.KeysKey, obj.keysExt, obj.KeysSize, true); err != nil {
			return proof, err
		}
		defer keys.close()
	}
	if obj.HeadersKey != "" {
		if headers, err = r.openParallel(ctx, obj.HeadersKey, obj.headersExt, obj.HeadersSize, false); err != nil {
			return proof, err
		}
		defer headers.close()
	}
	rd, err := valueFormat.NewReader(cr)
	if err != nil {
		return proof, fmt.Errorf("%w: read object %q: %w", ErrDamagedObject, obj.Key, err)
	}
	if !obj.Tombstone {
		rd = r.envelopes(rd, obj)
	}
	var (
		n       int64
		offsets offsetRuns
		carried bool // records carry their source offsets
	)
	ec, _ := rd.(*envelopeChecker)
	untilSet, untilMS := !r.cfg.Until.IsZero(), r.untilMS()
	proof.until = newUntilProof()
	for {
		rec, err := rd.Read()
		if errors.Is(err, io.EOF) {
			break
		}
		if err != nil {
			return proof, fmt.Errorf("%w: read object %q: record %d: %w", ErrDamagedObject, obj.Key, n, err)
		}
		if obj.Tombstone {
			krec := rec
			rec = &format.Record{Offset: krec.Offset, Timestamp: krec.Timestamp, TimestampType: krec.TimestampType}
			if rec.Key, err = r.keyFor(ctx, krec, target, obj.Key, n, mode); err != nil {
				return proof, err
			}
		} else {
			if mode == modeRestore {
				if err := r.typedValue(ctx, rec, target, obj.Key, n); err != nil {
					return proof, err
				}
			}
			if keys != nil {
				krec, err := keys.next(obj.Key)
				if err != nil {
					return proof, err
				}
				if rec.Key, err = r.keyFor(ctx, krec, target, keys.key, n, mode); err != nil {
					return proof, err
				}
			}
		}
		if headers != nil {
			if rec.Headers, err = headers.nextHeaders(obj.Key, n); err != nil {
				return proof, err
			}
		}
		// Records that carry their offset (envelope objects) keep it;
		// the others get start+i, the offset their name implies.
		if rec.Offset != 0 {
			carried = true
		}
		if !carried && rec.Offset == 0 {
			rec.Offset = obj.StartOffset + n
		}
		if err := offsets.add(rec.Offset); err != nil {
			return proof, fmt.Errorf("%w: object %q: record %d: %w", ErrDamagedObject, obj.Key, n, err)
		}
		if untilSet {
			stamped := ec != nil && ec.er.Envelopes()
			ts := rec.Timestamp
			if stamped {
				ts = ec.archived // before --timestamps now cleared it
			}
			proof.until.add(rec, ts, stamped, rec.Offset, untilMS)
		}
		if size := produceSize(rec, mode); size > proof.largestSize {
			proof.largestIdx, proof.largestSize = n, size
		}
		if rec.Key == nil {
			if proof.nullKeys == 0 {
				proof.nullKeyIdx = n
			}
			proof.nullKeys++
		}
		if err := fn(rec); err != nil {
			return proof, err
		}
		n++
	}
	if err := cr.finish(obj.Key, obj.Size); err != nil {
		return proof, err
	}
	proof.bytes = cr.n
	for _, p := range []*parallelReader{keys, headers} {
		if p == nil {
			continue
		}
		if err := p.finish(obj.Key); err != nil {
			return proof, err
		}
		if err := p.cr.finish(p.key, p.size); err != nil {
			return proof, err
		}
		proof.bytes += p.cr.n
		if p.isKey {
			proof.keysSHA256 = p.cr.sum()
		} else {
			proof.headersSHA256 = p.cr.sum()
		}
	}
	proof.records = n
	proof.sha256 = cr.sum()
	if carried {
		proof.offsets = offsets.runs
	}
	return proof, nil
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
		return make([]byte, len(raw)+wireFrame), nil
	}
	return r.keyFrom(ctx, krec, target, objKey, i)
}

// wireFrame is the size of Confluent's wire-format frame: magic byte and
// schema id.
const wireFrame = 5

// produceSize is the size a record adds to a produce batch, as Kafka
// measures it against max.message.bytes, counted generously: key, value,
// header keys and values, their length varints and the record's fixed
// fields (at most 21 bytes of varints and attributes), plus the 61-byte
// batch header of a batch that holds only this record. In modeProve a
// typed value is counted with the wire-format frame it will get.
func produceSize(rec *format.Record, mode readMode) int64 {
	n := int64(61 + 21 + len(rec.Key) + len(rec.Value) + 2*5 + 5)
	if mode == modeProve && rec.ValueTyped != nil && rec.ValueTyped.Schema != nil {
		n += wireFrame
	}
	for _, h := range rec.Headers {
		n += int64(len(h.Key) + len(h.Value) + 2*5)
	}
	return n
}

// loadedObject is an object read completely and checked, whose records
// wait in a recordBuffer to be produced.
type loadedObject struct {
	buf   *recordBuffer
	proof objectProof
}

// loadObject reads obj completely in modeRestore into a recordBuffer
// (memory up to Config.SpillBytes, then an unlinked temporary file) and
// checks that it is the object the plan proved (same record count and
// SHA-256). Nothing of obj can be produced before loadObject returns.
func (r *Restorer) loadObject(ctx context.Context, obj Object, target string) (*loadedObject, error) {
	buf := newRecordBuffer(r.cfg.SpillBytes, r.cfg.TempDir)
	proof, err := r.readObject(ctx, obj, target, modeRestore, buf.add)
	if err == nil && obj.proof != nil {
		switch {
		case proof.records != obj.proof.records:
			err = fmt.Errorf("%w: %q now holds %d records, %d when the restore was planned: the object changed", ErrDamagedObject, obj.Key, proof.records, obj.proof.records)
		case proof.sha256 != obj.proof.sha256:
			err = fmt.Errorf("%w: %q changed since the restore was planned (SHA-256 %s, was %s)", ErrDamagedObject, obj.Key, proof.sha256, obj.proof.sha256)
		}
	}
	if err == nil {
		err = buf.rewind()
	}
	if err != nil {
		buf.close()
		return nil, err
	}
	return &loadedObject{buf: buf, proof: proof}, nil
}
