package restore

import (
	"bufio"
	"encoding/binary"
	"errors"
	"fmt"
	"io"
	"os"
	"time"

	"github.com/kafkas3/kafkas3/format"
)

// DefaultSpillBytes is Config.SpillBytes's default: how many bytes of
// decoded records one object may hold in memory before the rest of it goes
// to a temporary file.
const DefaultSpillBytes = 64 << 20

// recordBuffer holds the decoded records of one object between reading
// the object and producing it. Records are kept in memory up to limit
// bytes (recordSize) while the restore's budget has room; past either every
// further record is appended to
// an unlinked temporary file, so memory stays bounded whatever the object
// size. Records are handed back in the order they were added.
type recordBuffer struct {
	limit  int64
	dir    string
	budget *memBudget // shared by every loaded object of the restore; nil: none
	held   int64      // bytes of records in mem taken from budget

	mem      []*format.Record
	memBytes int64
	file     *os.File      // nil until the first spill
	w        *bufio.Writer // appends to file
	spilled  int64         // records in file
	r        *bufio.Reader // replay position in file
	next     int64         // index of the next record to hand back
	scratch  []byte
}

func newRecordBuffer(limit int64, dir string, budget *memBudget) *recordBuffer {
	if limit <= 0 {
		limit = DefaultSpillBytes
	}
	return &recordBuffer{limit: limit, dir: dir, budget: budget}
}

// Len is the number of records added.
func (b *recordBuffer) Len() int64 { return int64(len(b.mem)) + b.spilled }

// Spilled reports whether part of the buffer is on disk.
func (b *recordBuffer) Spilled() bool { return b.file != nil }

// add appends rec. It keeps rec (the caller must not change it) while
// the buffer is below its limit.
func (b *recordBuffer) add(rec *format.Record) error {
	if b.addInMemory(rec) {
		return nil
	}
	if b.file == nil {
		f, err := os.CreateTemp(b.dir, "kafkas3-restore-*.spill")
		if err != nil {
			return fmt.Errorf("spill decoded records to a temporary file: %w", err)
		}
		// Unlinked at once: the file disappears with the process, even
		// on a crash.
		if err := os.Remove(f.Name()); err != nil {
			_ = f.Close()
			return fmt.Errorf("spill decoded records to a temporary file: %w", err)
		}
		b.file = f
		b.w = bufio.NewWriterSize(f, 1<<20)
	}
	b.scratch = appendSpillRecord(b.scratch[:0], rec)
	if _, err := b.w.Write(b.scratch); err != nil {
		return fmt.Errorf("spill decoded records to a temporary file: %w", err)
	}
	b.spilled++
	return nil
}

// addInMemory appends rec in memory if it fits under the limit and the budget,
// and reports whether it did; then the buffer keeps rec (the caller must
// not change it). A buffer that spilled keeps nothing more in memory.
func (b *recordBuffer) addInMemory(rec *format.Record) bool {
	size := recordSize(rec)
	if b.file != nil || b.memBytes+size > b.limit || !b.budget.take(size) {
		return false
	}
	b.mem = append(b.mem, rec)
	b.memBytes += size
	b.held += size
	return true
}

// rewind starts handing records back from the first one.
func (b *recordBuffer) rewind() error {
	b.next = 0
	b.r = nil
	if b.file == nil {
		return nil
	}
	if err := b.w.Flush(); err != nil {
		return fmt.Errorf("spill decoded records to a temporary file: %w", err)
	}
	if _, err := b.file.Seek(0, io.SeekStart); err != nil {
		return fmt.Errorf("replay spilled records: %w", err)
	}
	b.r = bufio.NewReaderSize(b.file, 1<<20)
	return nil
}

// get returns the next record; io.EOF after the last.
func (b *recordBuffer) get() (*format.Record, error) {
	if b.next < int64(len(b.mem)) {
		rec := b.mem[b.next]
		b.mem[b.next] = nil // handed over: let it go
		b.next++
		size := recordSize(rec)
		b.held -= size
		b.budget.give(size)
		return rec, nil
	}
	if b.next >= b.Len() {
		return nil, io.EOF
	}
	if b.r == nil {
		return nil, errors.New("replay spilled records: buffer not rewound")
	}
	rec, err := readSpillRecord(b.r)
	if err != nil {
		return nil, fmt.Errorf("replay spilled record %d: %w", b.next, err)
	}
	b.next++
	return rec, nil
}

// close releases the memory and the temporary file.
func (b *recordBuffer) close() {
	b.mem = nil
	b.budget.give(b.held)
	b.held = 0
	if b.file != nil {
		_ = b.file.Close()
		b.file = nil
	}
}

// recordSize is what a record weighs in memory, roughly: its bytes plus a
// fixed cost per record and header. It does not count a decoded key or
// value (KeyTyped, ValueTyped): records are buffered without them
// (dropTyped).
func recordSize(rec *format.Record) int64 {
	n := int64(len(rec.Key) + len(rec.Value) + 96)
	for _, h := range rec.Headers {
		n += int64(len(h.Key) + len(h.Value) + 48)
	}
	return n
}

// The spill encoding of a record: the fields a restore produces, each
// nullable byte string as a varint length (-1 for nil) and its bytes.
//
//	uvarint total length of what follows
//	varint  offset
//	varint  timestamp in Unix nanoseconds, or a 0 flag byte for none
//	byte    timestamp type
//	bytes   key, value
//	uvarint header count, then per header: bytes key (never nil), bytes value
//
// The body is written in place after room for the longest length prefix,
// then moved next to the prefix: no allocation when dst has room (a
// record of a restore is spilled this way, a body allocated per record
// was a third of a bytes restore's allocations).
func appendSpillRecord(dst []byte, rec *format.Record) []byte {
	start := len(dst)
	dst = append(dst, make([]byte, binary.MaxVarintLen64)...)
	body := len(dst)
	dst = binary.AppendVarint(dst, rec.Offset)
	if rec.Timestamp.IsZero() {
		dst = append(dst, 0)
	} else {
		dst = append(dst, 1)
		dst = binary.AppendVarint(dst, rec.Timestamp.UnixNano())
	}
	dst = append(dst, byte(rec.TimestampType))
	dst = appendNullable(dst, rec.Key)
	dst = appendNullable(dst, rec.Value)
	dst = binary.AppendUvarint(dst, uint64(len(rec.Headers)))
	for _, h := range rec.Headers {
		dst = appendNullable(dst, []byte(h.Key))
		dst = appendNullable(dst, h.Value)
	}
	n := len(dst) - body
	k := binary.PutUvarint(dst[start:], uint64(n))
	copy(dst[start+k:], dst[body:])
	return dst[:start+k+n]
}

func appendNullable(dst, b []byte) []byte {
	if b == nil {
		return binary.AppendVarint(dst, -1)
	}
	dst = binary.AppendVarint(dst, int64(len(b)))
	return append(dst, b...)
}

// errSpillCorrupt is returned for a spill record that does not decode.
var errSpillCorrupt = errors.New("corrupt spill record")

// maxSpillRecord bounds one spilled record (a Kafka record is far smaller).
const maxSpillRecord = 1 << 30

// readSpillRecord reads one record written by appendSpillRecord; io.EOF
// when r is at its end.
func readSpillRecord(r *bufio.Reader) (*format.Record, error) {
	n, err := binary.ReadUvarint(r)
	if err != nil {
		if errors.Is(err, io.EOF) {
			return nil, io.EOF
		}
		return nil, fmt.Errorf("%w: %w", errSpillCorrupt, err)
	}
	if n > maxSpillRecord {
		return nil, fmt.Errorf("%w: length %d", errSpillCorrupt, n)
	}
	body := make([]byte, n)
	if _, err := io.ReadFull(r, body); err != nil {
		return nil, fmt.Errorf("%w: %w", errSpillCorrupt, err)
	}
	return decodeSpillRecord(body)
}

// decodeSpillRecord decodes the body of a spill record.
func decodeSpillRecord(b []byte) (*format.Record, error) {
	d := spillDecoder{b: b}
	rec := &format.Record{Offset: d.varint()}
	if d.byte() == 1 {
		rec.Timestamp = time.Unix(0, d.varint())
	}
	rec.TimestampType = format.TimestampType(d.byte())
	rec.Key = d.nullable()
	rec.Value = d.nullable()
	nh := d.uvarint()
	if nh > uint64(len(d.b)) { // every header takes at least two bytes
		d.err = errSpillCorrupt
	}
	if d.err == nil && nh > 0 {
		rec.Headers = make([]format.Header, nh)
		for i := range rec.Headers {
			k := d.nullable()
			rec.Headers[i] = format.Header{Key: string(k), Value: d.nullable()}
		}
	}
	if d.err == nil && len(d.b) != 0 {
		d.err = fmt.Errorf("%w: %d trailing bytes", errSpillCorrupt, len(d.b))
	}
	if d.err != nil {
		return nil, d.err
	}
	return rec, nil
}

type spillDecoder struct {
	b   []byte
	err error
}

func (d *spillDecoder) fail() {
	if d.err == nil {
		d.err = errSpillCorrupt
	}
}

func (d *spillDecoder) varint() int64 {
	if d.err != nil {
		return 0
	}
	v, n := binary.Varint(d.b)
	if n <= 0 {
		d.fail()
		return 0
	}
	d.b = d.b[n:]
	return v
}

func (d *spillDecoder) uvarint() uint64 {
	if d.err != nil {
		return 0
	}
	v, n := binary.Uvarint(d.b)
	if n <= 0 {
		d.fail()
		return 0
	}
	d.b = d.b[n:]
	return v
}

func (d *spillDecoder) byte() byte {
	if d.err != nil || len(d.b) == 0 {
		d.fail()
		return 0
	}
	c := d.b[0]
	d.b = d.b[1:]
	return c
}

func (d *spillDecoder) nullable() []byte {
	n := d.varint()
	if d.err != nil {
		return nil
	}
	if n == -1 {
		return nil
	}
	if n < 0 || n > int64(len(d.b)) {
		d.fail()
		return nil
	}
	out := make([]byte, n)
	copy(out, d.b[:n])
	d.b = d.b[n:]
	return out
}
