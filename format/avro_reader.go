package format

import (
	"bufio"
	"bytes"
	"encoding/binary"
	"errors"
	"fmt"
	"io"

	"github.com/twmb/avro"
)

// This file holds the Avro container file reader.

// limits on header fields, against hostile input.
const (
	maxAvroMetaEntries = 1024
	maxAvroMetaBytes   = 16 << 20
	// avroPrealloc is the longest length readBytes allocates before
	// reading: what a hostile length can make it allocate for nothing.
	avroPrealloc = 8 << 20
)

func (f *avroFormat) NewReader(r io.Reader) (RecordReader, error) {
	if r == nil {
		return nil, errors.New("avro: nil reader")
	}
	ar := &avroReader{br: bufio.NewReader(r)}
	if err := ar.readHeader(); err != nil {
		return nil, err
	}
	return ar, nil
}

type avroReader struct {
	br      *bufio.Reader
	codec   string
	schema  *Schema
	sync    [16]byte
	block   []byte // decompressed rest of the current block
	left    int64  // datums left in the current block
	err     error
	nblocks int
}

func badAvro(format string, args ...any) error {
	return fmt.Errorf("avro: %w: "+format, append([]any{ErrBadAvro}, args...)...)
}

// inData wraps err, met while reading inside a file, for badAvro's %w:
// io.EOF and io.ErrUnexpectedEOF there mean a truncated file, so they keep
// their text but leave the chain (a caller stops at io.EOF, and must not
// take a damaged file for its end).
func inData(err error) error {
	if errors.Is(err, io.EOF) || errors.Is(err, io.ErrUnexpectedEOF) {
		return truncatedError{msg: err.Error()}
	}
	return err
}

// truncatedError is an end of data inside a file (see inData).
type truncatedError struct{ msg string }

func (e truncatedError) Error() string { return e.msg }

func (ar *avroReader) readLong() (int64, error) {
	u, err := binary.ReadUvarint(ar.br)
	if err != nil {
		if errors.Is(err, io.EOF) {
			return 0, io.ErrUnexpectedEOF
		}
		return 0, err
	}
	return int64(u>>1) ^ -int64(u&1), nil
}

func (ar *avroReader) readBytes(max int64, what string) ([]byte, error) {
	n, err := ar.readLong()
	if err != nil {
		return nil, badAvro("%s length: %w", what, inData(err))
	}
	if n < 0 || n > max {
		return nil, badAvro("%s length %d out of range 0..%d", what, n, max)
	}
	// Up to avroPrealloc the length is allocated at once (a block of
	// DefaultAvroBlockRecords records of 1 KiB is 4 MiB); past it the
	// buffer grows with the data actually read, so a hostile length
	// cannot make us allocate more before the bytes arrive. Growing a
	// 4 MiB block from nothing allocated about three times its size, a
	// good part of a restore's allocations (BENCHMARKS.md, "Restore
	// memory").
	if n <= avroPrealloc {
		b := make([]byte, n)
		if m, err := io.ReadFull(ar.br, b); err != nil {
			return nil, badAvro("%s: read %d of %d bytes: %w", what, m, n, inData(err))
		}
		return b, nil
	}
	var buf bytes.Buffer
	if m, err := io.CopyN(&buf, ar.br, n); err != nil {
		return nil, badAvro("%s: read %d of %d bytes: %w", what, m, n, inData(err))
	}
	return buf.Bytes(), nil
}

func (ar *avroReader) readHeader() error {
	var magic [4]byte
	if _, err := io.ReadFull(ar.br, magic[:]); err != nil {
		return badAvro("reading magic: %w", inData(err))
	}
	if string(magic[:]) != avroMagic {
		return badAvro("not an Avro container file (magic %q)", magic[:])
	}
	meta := map[string][]byte{}
	total := int64(0)
	for {
		n, err := ar.readLong()
		if err != nil {
			return badAvro("metadata count: %w", inData(err))
		}
		if n == 0 {
			break
		}
		if n < 0 { // block with byte size
			n = -n
			if _, err := ar.readLong(); err != nil {
				return badAvro("metadata block size: %w", inData(err))
			}
		}
		if n > maxAvroMetaEntries || int64(len(meta))+n > maxAvroMetaEntries {
			return badAvro("metadata has over %d entries", maxAvroMetaEntries)
		}
		for range n {
			k, err := ar.readBytes(maxAvroMetaBytes-total, "metadata key")
			if err != nil {
				return err
			}
			total += int64(len(k))
			v, err := ar.readBytes(maxAvroMetaBytes-total, "metadata value")
			if err != nil {
				return err
			}
			total += int64(len(v))
			meta[string(k)] = v
		}
	}
	if _, err := io.ReadFull(ar.br, ar.sync[:]); err != nil {
		return badAvro("reading sync marker: %w", inData(err))
	}
	text, ok := meta["avro.schema"]
	if !ok {
		return badAvro("header has no avro.schema")
	}
	s, err := avro.Parse(string(text))
	if err != nil {
		return badAvro("header schema: %w", inData(err))
	}
	ar.codec = "null"
	if c, ok := meta["avro.codec"]; ok && len(c) > 0 {
		ar.codec = string(c)
	}
	switch ar.codec {
	case "null", "deflate", "snappy", "bzip2", "zstandard":
	default:
		return badAvro("unsupported avro.codec %q", ar.codec)
	}
	ar.schema = &Schema{Avro: s, Text: string(text)}
	return nil
}

func (ar *avroReader) nextBlock() error {
	count, err := binary.ReadUvarint(ar.br)
	if errors.Is(err, io.EOF) {
		return io.EOF // clean end between blocks
	}
	if err != nil {
		return badAvro("block %d count: %w", ar.nblocks, inData(err))
	}
	n := int64(count>>1) ^ -int64(count&1)
	data, err := ar.readBytes(maxAvroBlock, fmt.Sprintf("block %d", ar.nblocks))
	if err != nil {
		return err
	}
	var sync [16]byte
	if _, err := io.ReadFull(ar.br, sync[:]); err != nil {
		return badAvro("block %d sync marker: %w", ar.nblocks, inData(err))
	}
	if sync != ar.sync {
		return badAvro("block %d sync marker does not match the header's", ar.nblocks)
	}
	raw, err := avroDecompress(ar.codec, data, maxAvroBlock)
	if err != nil {
		return badAvro("block %d (%s): %w", ar.nblocks, ar.codec, inData(err))
	}
	// Every datum but a zero-byte one takes a byte: bound the count so a
	// hostile count cannot spin.
	if n < 0 || n > int64(len(raw))+(1<<20) {
		return badAvro("block %d count %d out of range for %d bytes", ar.nblocks, n, len(raw))
	}
	ar.nblocks++
	ar.block, ar.left = raw, n
	return nil
}

// next makes sure a datum is left in the current block, reading the next
// block when it is done.
func (ar *avroReader) next() error {
	if ar.err != nil {
		return ar.err
	}
	for ar.left == 0 {
		if len(ar.block) != 0 {
			ar.err = badAvro("block %d has %d bytes after its last datum", ar.nblocks-1, len(ar.block))
			return ar.err
		}
		if err := ar.nextBlock(); err != nil {
			ar.err = err
			return err
		}
	}
	return nil
}

// readDatum hands the next datum to decode, which decodes it (an
// envelope: the envelope reader decodes the datums of an envelope file
// itself, once, instead of Read's generic decoding) and returns the bytes
// after it; decode's errors are returned as they are.
func (ar *avroReader) readDatum(decode func([]byte) (*Record, []byte, error)) (*Record, error) {
	if err := ar.next(); err != nil {
		return nil, err
	}
	r, rest, err := decode(ar.block)
	if err != nil {
		ar.err = err
		return nil, err
	}
	ar.block = rest
	ar.left--
	return r, nil
}

func (ar *avroReader) Read() (*Record, error) {
	if err := ar.next(); err != nil {
		return nil, err
	}
	var v any
	rest, err := ar.schema.Avro.Decode(ar.block, &v)
	if err != nil {
		ar.err = badAvro("block %d: %w", ar.nblocks-1, inData(err))
		return nil, ar.err
	}
	raw := bytes.Clone(ar.block[:len(ar.block)-len(rest)])
	if raw == nil {
		raw = []byte{}
	}
	ar.block = rest
	ar.left--
	return &Record{Value: raw, ValueTyped: &Typed{Schema: ar.schema, Raw: raw, Native: v}}, nil
}
