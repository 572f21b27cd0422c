package format

import (
	"errors"
	"fmt"
	"io"
	"sync"

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
// To keep memory flat with many open objects, an object is written as a
// series of gzip members, one per gzipChunk bytes of input, each compressed
// by a compressor borrowed from a pool shared by all writers of this
// format: an open object holds only its uncompressed chunk buffer, not a
// compressor's state (about 1 MiB each). Deflate's window is 32 KiB, so the
// chunking costs almost nothing in size. Multi-member gzip is standard
// (RFC 1952): gzip -d, Python, Java's GZIPInputStream, Spark, Athena and
// Trino read it.
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
	return &gzipFormat{inner: f, level: level, pool: make(chan *gzip.Writer, gzipCompressors)}, nil
}

// gzipCompressors bounds the compressors of one format (about 1 MiB each).
const gzipCompressors = 4

// gzipChunk is the uncompressed size of one gzip member.
const gzipChunk = 128 << 10

type gzipFormat struct {
	inner Format
	level int

	mu      sync.Mutex
	created int
	pool    chan *gzip.Writer // idle compressors
}

// compressor borrows a compressor, waiting when all are in use.
func (g *gzipFormat) compressor() *gzip.Writer {
	select {
	case zw := <-g.pool:
		return zw
	default:
	}
	g.mu.Lock()
	if g.created < cap(g.pool) {
		g.created++
		g.mu.Unlock()
		zw, _ := gzip.NewWriterLevel(io.Discard, g.level) // level checked by WithGzip
		return zw
	}
	g.mu.Unlock()
	return <-g.pool
}

func (g *gzipFormat) Extension() string { return g.inner.Extension() + ".gz" }

func (g *gzipFormat) NewWriter(w io.Writer) (RecordWriter, error) {
	if w == nil {
		return nil, errors.New("gzip: nil writer")
	}
	zw := &chunkedGzip{g: g, w: w}
	rw, err := g.inner.NewWriter(zw)
	if err != nil {
		return nil, err
	}
	return &gzipWriter{rw: rw, zw: zw}, nil
}

// chunkedGzip buffers up to gzipChunk bytes and writes each full buffer as
// one gzip member.
type chunkedGzip struct {
	g       *gzipFormat
	w       io.Writer
	buf     []byte
	members int
}

func (c *chunkedGzip) Write(p []byte) (int, error) {
	n := len(p)
	for len(p) > 0 {
		if c.buf == nil {
			c.buf = make([]byte, 0, gzipChunk)
		}
		k := min(len(p), gzipChunk-len(c.buf))
		c.buf = append(c.buf, p[:k]...)
		p = p[k:]
		if len(c.buf) == gzipChunk {
			if err := c.member(); err != nil {
				return n - len(p), err
			}
		}
	}
	return n, nil
}

// member compresses the buffer as one gzip member.
func (c *chunkedGzip) member() error {
	zw := c.g.compressor()
	defer func() { c.g.pool <- zw }()
	zw.Reset(c.w)
	if _, err := zw.Write(c.buf); err != nil {
		return err
	}
	if err := zw.Close(); err != nil {
		return err
	}
	c.buf = c.buf[:0]
	c.members++
	return nil
}

// Close writes the last member (an empty one if nothing was written, so the
// object is still a gzip stream) and releases the buffer.
func (c *chunkedGzip) Close() error {
	var err error
	if len(c.buf) > 0 || c.members == 0 {
		err = c.member()
	}
	c.buf = nil
	return err
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
	zw     *chunkedGzip
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
