package format

import (
	"bufio"
	"bytes"
	"errors"
	"fmt"
	"io"
	"strings"
)

// ErrNoSeparator is returned by the bytes format's NewReader when the
// separator is empty: the values were written back to back and cannot be
// told apart.
var ErrNoSeparator = errors.New("bytes format has an empty separator; records cannot be split")

// BytesConfig configures the bytes format (Confluent's ByteArrayFormat).
type BytesConfig struct {
	// Separator is written after every value (format.bytearray.separator).
	// It is used byte for byte, whitespace included. Confluent's default is
	// the JVM's line separator, "\n" on the systems it runs on. An empty
	// separator is allowed, as in Confluent: values are written back to
	// back, and such objects cannot be read back (ErrNoSeparator).
	Separator []byte
	// Extension is the object key suffix before any compression suffix
	// (format.bytearray.extension); it must start with '.'.
	Extension string
}

// defaultBytesExtension is format.bytearray.extension's default.
const defaultBytesExtension = ".bin"

// DefaultBytesConfig returns Confluent's defaults: separator "\n" and
// extension ".bin".
func DefaultBytesConfig() BytesConfig {
	return BytesConfig{Separator: []byte("\n"), Extension: defaultBytesExtension}
}

// Validate checks the extension.
func (c BytesConfig) Validate() error {
	if !strings.HasPrefix(c.Extension, ".") || len(c.Extension) < 2 {
		return fmt.Errorf("%w: %s %q must start with '.' and name an extension, e.g. \".bin\"",
			ErrInvalidConfig, KeyBytesExtension, c.Extension)
	}
	if strings.ContainsAny(c.Extension, "/\\") {
		return fmt.Errorf("%w: %s %q must not contain a path separator", ErrInvalidConfig, KeyBytesExtension, c.Extension)
	}
	return nil
}

// NewBytes returns the bytes format: each record's value, as is, followed
// by the separator. Keys, headers and timestamps are not stored.
//
// Reading splits at the first occurrence of the separator, scanning
// forward, so a value is restored exactly only if the separator does not
// occur in value+separator before its final position. For a one-byte
// separator this means: the value does not contain it. A value that does
// comes back as several records, as Confluent's docs warn. Every record is
// followed by a separator, so an empty value is a separator on its own and
// is restored as an empty (non-nil) value; the final separator does not
// start another record. Bytes after the last separator (an object not
// written by a sink) are returned as one last record.
func NewBytes(cfg BytesConfig) (Format, error) {
	if err := cfg.Validate(); err != nil {
		return nil, err
	}
	return &bytesFormat{sep: bytes.Clone(cfg.Separator), ext: cfg.Extension}, nil
}

type bytesFormat struct {
	sep []byte
	ext string
}

func (f *bytesFormat) Extension() string { return f.ext }

func (f *bytesFormat) NewWriter(w io.Writer) (RecordWriter, error) {
	if w == nil {
		return nil, errors.New("bytes format: nil writer")
	}
	return &bytesWriter{w: w, sep: f.sep}, nil
}

func (f *bytesFormat) NewReader(r io.Reader) (RecordReader, error) {
	if r == nil {
		return nil, errors.New("bytes format: nil reader")
	}
	if len(f.sep) == 0 {
		return nil, ErrNoSeparator
	}
	return &bytesReader{br: bufio.NewReaderSize(r, 64<<10), sep: f.sep}, nil
}

// smallValue is the size up to which a value and its separator are copied
// into one buffer and written with one call; larger values are written
// with two calls rather than copied.
const smallValue = 32 << 10

type bytesWriter struct {
	w      io.Writer
	sep    []byte
	buf    []byte
	err    error // sticky write error
	closed bool
}

func (bw *bytesWriter) Write(r *Record) error {
	if bw.closed {
		return ErrClosed
	}
	if bw.err != nil {
		return bw.err
	}
	if r == nil {
		return fmt.Errorf("bytes format: %w: nil record", ErrNullValue)
	}
	if r.Value == nil {
		return nullValueError(r)
	}
	if len(r.Value) <= smallValue {
		bw.buf = append(append(bw.buf[:0], r.Value...), bw.sep...)
		bw.err = writeAll(bw.w, bw.buf)
	} else if bw.err = writeAll(bw.w, r.Value); bw.err == nil {
		bw.err = writeAll(bw.w, bw.sep)
	}
	if bw.err != nil {
		bw.err = fmt.Errorf("bytes format: writing record at offset %d: %w", r.Offset, bw.err)
	}
	return bw.err
}

func (bw *bytesWriter) Close() error {
	if bw.closed {
		return nil
	}
	bw.closed = true
	return bw.err
}

type bytesReader struct {
	br   *bufio.Reader
	sep  []byte
	cur  []byte // scratch for the record being assembled
	slab slab   // the values' bytes
	n    int    // records returned so far
	err  error  // sticky: io.EOF or a read error
}

func (br *bytesReader) Read() (*Record, error) {
	if br.err != nil {
		return nil, br.err
	}
	last := br.sep[len(br.sep)-1]
	chunk, err := br.br.ReadSlice(last)
	if err == nil && bytes.HasSuffix(chunk, br.sep) {
		// The common case: the value and its separator are in the buffer.
		return br.record(chunk[:len(chunk)-len(br.sep)]), nil
	}
	br.cur = append(br.cur[:0], chunk...)
	for {
		switch {
		case err == nil:
			if bytes.HasSuffix(br.cur, br.sep) {
				return br.record(br.cur[:len(br.cur)-len(br.sep)]), nil
			}
		case errors.Is(err, bufio.ErrBufferFull):
			// A long value: keep reading.
		case errors.Is(err, io.EOF):
			br.err = io.EOF
			if len(br.cur) == 0 {
				return nil, io.EOF
			}
			return br.record(br.cur), nil
		default:
			br.err = fmt.Errorf("bytes format: reading record %d: %w", br.n+1, err)
			return nil, br.err
		}
		chunk, err = br.br.ReadSlice(last)
		br.cur = append(br.cur, chunk...)
	}
}

// record returns the record of value v, copied out of the reader's
// buffers.
func (br *bytesReader) record(v []byte) *Record {
	br.n++
	return &Record{Value: br.slab.clone(v)}
}

// writeAll writes p to w, turning a short write into an error.
func writeAll(w io.Writer, p []byte) error {
	n, err := w.Write(p)
	if err == nil && n < len(p) {
		err = io.ErrShortWrite
	}
	return err
}

func nullValueError(r *Record) error {
	return fmt.Errorf("%w: topic %q partition %d offset %d", ErrNullValue, r.Topic, r.Partition, r.Offset)
}
