package format

import (
	"errors"
	"fmt"
	"io"

	"github.com/klauspost/compress/gzip"
)

// WithGzip wraps f so that objects are gzip-compressed
// (s3.compression.type=gzip) at level (s3.compression.level: -1 for the
// default, 0 for stored, 1..9 from fastest to smallest). The extension
// becomes f.Extension()+".gz". The writer's Close finishes the inner format
// and the gzip stream but does not close the underlying writer. The output
// is deterministic: the same records give the same bytes (no name, no
// modification time in the header).
//
// The reader accepts concatenated gzip members (as gzip -c a b does) and
// reports a bad header, bad checksum, truncation or corrupt data as an
// error. An empty object is not a gzip stream and is an error too.
func WithGzip(f Format, level int) (Format, error) {
	if f == nil {
		return nil, errors.New("gzip: nil format")
	}
	if level < -1 || level > 9 {
		return nil, fmt.Errorf("%w: %s is %d, want -1 (default) or 0..9", ErrInvalidConfig, KeyCompressionLevel, level)
	}
	return &gzipFormat{inner: f, level: level}, nil
}

type gzipFormat struct {
	inner Format
	level int
}

func (g *gzipFormat) Extension() string { return g.inner.Extension() + ".gz" }

func (g *gzipFormat) NewWriter(w io.Writer) (RecordWriter, error) {
	if w == nil {
		return nil, errors.New("gzip: nil writer")
	}
	zw, err := gzip.NewWriterLevel(w, g.level)
	if err != nil {
		return nil, fmt.Errorf("gzip: %w", err)
	}
	rw, err := g.inner.NewWriter(zw)
	if err != nil {
		return nil, err
	}
	return &gzipWriter{rw: rw, zw: zw}, nil
}

func (g *gzipFormat) NewReader(r io.Reader) (RecordReader, error) {
	if r == nil {
		return nil, errors.New("gzip: nil reader")
	}
	zr, err := gzip.NewReader(r)
	if err != nil {
		if errors.Is(err, io.EOF) {
			return nil, fmt.Errorf("gzip: empty object: %w", gzip.ErrHeader)
		}
		return nil, fmt.Errorf("gzip: %w", err)
	}
	zr.Multistream(true)
	return g.inner.NewReader(&gzipErrReader{zr})
}

type gzipWriter struct {
	rw     RecordWriter
	zw     *gzip.Writer
	closed bool
}

func (gw *gzipWriter) Write(r *Record) error {
	if gw.closed {
		return ErrClosed
	}
	return gw.rw.Write(r)
}

func (gw *gzipWriter) Close() error {
	if gw.closed {
		return nil
	}
	gw.closed = true
	err := gw.rw.Close()
	if zerr := gw.zw.Close(); zerr != nil && err == nil {
		err = fmt.Errorf("gzip: %w", zerr)
	}
	return err
}

// gzipErrReader prefixes decompression errors with "gzip:". A stream cut
// inside a member already fails with io.ErrUnexpectedEOF, so the inner
// reader never mistakes truncation for a clean end.
type gzipErrReader struct{ zr *gzip.Reader }

func (g *gzipErrReader) Read(p []byte) (int, error) {
	n, err := g.zr.Read(p)
	if err != nil && !errors.Is(err, io.EOF) {
		err = fmt.Errorf("gzip: %w", err)
	}
	return n, err
}
