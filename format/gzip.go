package format

import (
	"bytes"
	"compress/flate"
	"encoding/binary"
	"errors"
	"fmt"
	"hash/crc32"
	"io"

	"github.com/klauspost/compress/gzip"
)

// WithGzip wraps f so that objects are gzip-compressed
// (s3.compression.type=gzip) at level (s3.compression.level: -1 for the
// default, 0 for stored, 1..9 from fastest to smallest). The extension
// becomes f.Extension()+".gz". The writer's Close finishes the inner format
// and the gzip stream but does not close the underlying writer. The output
// is deterministic: the same records give the same bytes (no name, no
// modification time in the header, and every choice below depends only on
// the bytes written).
//
// An object is one gzip stream, compressed by the standard library's
// compress/flate. To keep memory flat with many open objects, the stream is
// built the way pigz builds it: the input is compressed gzipChunk bytes at a
// time, each chunk with the previous 32 KiB (deflate's whole window) as
// preset dictionary and ended with a sync flush (a byte-aligned empty
// stored block), so the chunks' deflate blocks join into one deflate stream
// whose back references reach across chunks as a single compressor's would.
// An open object holds only its chunk and the 32 KiB before it, its running
// CRC-32 and length; at most gzipCompressors chunks of one format are
// compressed at once, each by a compressor of about 1 MiB.
//
// Levels 0..9 are compress/flate's levels, every chunk at the level asked
// for: an object is within 0.1% of one compress/gzip stream of the same
// bytes at that level (1.2% at level 1, whose compressor takes no
// dictionary). Level -1, the default, means level 6's size (the default of
// zlib, of Java's Deflater that Confluent's sink uses, and of compress/gzip)
// and takes level 1's speed where the data allow it: the first chunk of an
// object, every gzipProbeEvery-th chunk after it, and the chunk after one
// whose level-1 ratio moved by more than gzipDriftPermille from the last
// sample's, are compressed at both levels and the smaller is written; while
// the last sample found level 1 within gzipFastPermille of level 6, the
// chunks between samples are compressed at level 1 (3-4 times as fast:
// random letters, base64, most already compact data), else at level 6
// (text with many repeats, where level 1 is 20-30% larger). So an object at
// -1 is within 3% of one level-6 stream on data that does not change its
// nature within 4 MiB unseen.
//
// The reader accepts concatenated gzip members (as gzip -c a b does, and
// as objects written before this layout hold: one member per 128 KiB) and
// reports a bad header, bad checksum, truncation or corrupt data as an
// error. An empty object is not a gzip stream and is an error too.
func WithGzip(f Format, level int) (Format, error) {
	if f == nil {
		return nil, errors.New("gzip: nil format")
	}
	if level < -1 || level > 9 {
		return nil, fmt.Errorf("%w: %s is %d, want -1 (default) or 0..9", ErrInvalidConfig, KeyCompressionLevel, level)
	}
	g := &gzipFormat{inner: f, level: level, encoders: make(chan *gzipEncoder, gzipCompressors)}
	if level == -1 {
		g.level, g.adaptive = gzipDefaultLevel, true
	}
	for range gzipCompressors {
		g.encoders <- &gzipEncoder{}
	}
	return g, nil
}

// gzipDefaultLevel is the level whose size s3.compression.level -1 keeps:
// zlib's default, which Java's Deflater (Confluent's sink) and compress/gzip
// use too.
const gzipDefaultLevel = 6

// gzipCompressors bounds the chunks of one format compressed at once.
const gzipCompressors = 4

// gzipChunk is the uncompressed size of the input compressed at a time.
const gzipChunk = 128 << 10

// gzipWindow is deflate's window: the dictionary carried from one chunk to
// the next.
const gzipWindow = 32 << 10

// At level -1: a chunk is sampled (compressed at levels 1 and 6) every
// gzipProbeEvery chunks; level 1 is used between samples while it was at
// most gzipFastPermille per mille larger than level 6 in the last one, and
// a level-1 chunk whose compressed size per input byte differs from the
// last sample's level-1 chunk by more than gzipDriftPermille per mille
// makes the next chunk a sample.
const (
	gzipProbeEvery    = 32
	gzipFastPermille  = 25
	gzipDriftPermille = 20
)

type gzipFormat struct {
	inner    Format
	level    int  // compress/flate level, 0..9
	adaptive bool // level -1: level 6's size, level 1's speed where it keeps it
	// encoders holds one encoder per chunk that may be compressed at once;
	// taking one is the right to compress.
	encoders chan *gzipEncoder
}

// gzipEncoder is what compressing a chunk reuses: a level-1 compressor
// (level 1 takes no dictionary, so a Reset one writes what a new one
// would) and the two outputs of a sampled chunk.
type gzipEncoder struct {
	fast   *flate.Writer
	b1, b6 bytes.Buffer
}

func (g *gzipFormat) Extension() string { return g.inner.Extension() + ".gz" }

func (g *gzipFormat) NewWriter(w io.Writer) (RecordWriter, error) {
	if w == nil {
		return nil, errors.New("gzip: nil writer")
	}
	zw := &gzipStream{g: g, w: w}
	rw, err := g.inner.NewWriter(zw)
	if err != nil {
		return nil, err
	}
	return &gzipWriter{rw: rw, zw: zw}, nil
}

// gzipStream writes one gzip stream, compressing gzipChunk bytes at a time.
type gzipStream struct {
	g *gzipFormat
	w io.Writer
	// buf holds the dictionary (the last dict bytes of the input already
	// compressed, at most gzipWindow) followed by the input not yet
	// compressed (at most gzipChunk).
	buf     []byte
	dict    int
	crc     uint32
	size    uint32 // input length modulo 2^32 (RFC 1952 ISIZE)
	started bool   // header written
	err     error  // sticky: the stream is broken after a failed write
	pick    gzipPick
}

// gzipPick is level -1's choice between levels 1 and 6 for an object.
type gzipPick struct {
	chunks int   // chunks compressed so far
	next   int   // the chunk that is sampled next
	fast   bool  // the last sample found level 1 within gzipFastPermille
	ratio1 int64 // the last sample's level-1 output per input byte, per million
}

func (c *gzipStream) Write(p []byte) (int, error) {
	if c.err != nil {
		return 0, c.err
	}
	n := len(p)
	for len(p) > 0 {
		if c.buf == nil {
			c.buf = make([]byte, 0, gzipWindow+gzipChunk)
		}
		k := min(len(p), c.dict+gzipChunk-len(c.buf))
		c.buf = append(c.buf, p[:k]...)
		p = p[k:]
		if len(c.buf) == c.dict+gzipChunk {
			if err := c.chunk(false); err != nil {
				return n - len(p), err
			}
		}
	}
	return n, nil
}

// chunk compresses the pending input with the dictionary before it, ending
// with a sync flush, or, when final, with the final block and the trailer;
// then keeps the last gzipWindow bytes as the next chunk's dictionary.
func (c *gzipStream) chunk(final bool) error {
	e := <-c.g.encoders
	err := c.compress(e, final)
	c.g.encoders <- e
	if err != nil {
		c.err = err
		return err
	}
	in := c.buf[c.dict:]
	c.crc = crc32.Update(c.crc, crc32.IEEETable, in)
	c.size += uint32(len(in))
	keep := min(gzipWindow, len(c.buf))
	c.dict = copy(c.buf, c.buf[len(c.buf)-keep:])
	c.buf = c.buf[:c.dict]
	return nil
}

func (c *gzipStream) compress(e *gzipEncoder, final bool) error {
	if !c.started {
		if _, err := c.w.Write(gzipHeader(c.g.level)); err != nil {
			return err
		}
		c.started = true
	}
	dict, in := c.buf[:c.dict], c.buf[c.dict:]
	if !c.g.adaptive {
		return deflateChunk(c.w, e, c.g.level, dict, in, final)
	}
	p := &c.pick
	defer func() { p.chunks++ }()
	if p.chunks == p.next {
		return c.sample(e, dict, in, final)
	}
	if !p.fast {
		return deflateChunk(c.w, e, gzipDefaultLevel, dict, in, final)
	}
	cw := &countWriter{w: c.w}
	if err := deflateChunk(cw, e, flate.BestSpeed, nil, in, final); err != nil {
		return err
	}
	if r := perMillion(cw.n, len(in)); len(in) == gzipChunk && drifted(r, p.ratio1) {
		p.next = p.chunks + 1
	}
	return nil
}

// sample compresses a chunk at levels 1 and 6, writes the smaller and
// decides the level of the chunks up to the next sample.
func (c *gzipStream) sample(e *gzipEncoder, dict, in []byte, final bool) error {
	p := &c.pick
	e.b1.Reset()
	e.b6.Reset()
	if err := deflateChunk(&e.b1, e, flate.BestSpeed, nil, in, final); err != nil {
		return err
	}
	if err := deflateChunk(&e.b6, e, gzipDefaultLevel, dict, in, final); err != nil {
		return err
	}
	n1, n6 := int64(e.b1.Len()), int64(e.b6.Len())
	p.fast = n1*1000 <= n6*(1000+gzipFastPermille)
	p.ratio1 = perMillion(n1, len(in))
	p.next = p.chunks + gzipProbeEvery
	out := e.b6.Bytes()
	if n1 < n6 {
		out = e.b1.Bytes()
	}
	_, err := c.w.Write(out)
	return err
}

// perMillion is n per input byte of in bytes, in millionths.
func perMillion(n int64, in int) int64 {
	if in == 0 {
		return 0
	}
	return n * 1_000_000 / int64(in)
}

// drifted tells whether a level-1 ratio r moved from the sampled one by
// more than gzipDriftPermille of it.
func drifted(r, sampled int64) bool {
	d := r - sampled
	return d*1000 > sampled*gzipDriftPermille || -d*1000 > sampled*gzipDriftPermille
}

// deflateChunk compresses in at level with dict as preset dictionary to w,
// ending with a sync flush or, when final, with the final block. Level 1
// ignores the dictionary (compress/flate's level 1 takes none), so its
// compressor is e's, reset.
func deflateChunk(w io.Writer, e *gzipEncoder, level int, dict, in []byte, final bool) error {
	var fw *flate.Writer
	if level == flate.BestSpeed {
		if e.fast == nil {
			f, err := flate.NewWriter(w, level)
			if err != nil {
				return err
			}
			e.fast = f
		}
		e.fast.Reset(w)
		fw = e.fast
		defer e.fast.Reset(io.Discard) // do not keep w
	} else {
		f, err := flate.NewWriterDict(w, level, dict)
		if err != nil {
			return err
		}
		fw = f
	}
	if _, err := fw.Write(in); err != nil {
		return err
	}
	if !final {
		return fw.Flush()
	}
	return fw.Close()
}

// countWriter counts the bytes written through it.
type countWriter struct {
	w io.Writer
	n int64
}

func (cw *countWriter) Write(p []byte) (int, error) {
	n, err := cw.w.Write(p)
	cw.n += int64(n)
	return n, err
}

// gzipHeader is RFC 1952's member header: deflate, no flags, no
// modification time, the extra flags of the level, operating system
// unknown (as compress/gzip writes it).
func gzipHeader(level int) []byte {
	h := []byte{0x1f, 0x8b, 8, 0, 0, 0, 0, 0, 0, 255}
	switch level {
	case flate.BestCompression:
		h[8] = 2
	case flate.BestSpeed:
		h[8] = 4
	}
	return h
}

// Close compresses the last input (none if nothing is pending: the final
// block is then empty, so an object without records is still a gzip
// stream), writes the trailer (CRC-32 and length) and releases the buffer.
func (c *gzipStream) Close() error {
	if c.err != nil {
		return c.err
	}
	if c.buf == nil {
		c.buf = make([]byte, 0, gzipWindow)
	}
	err := c.chunk(true)
	if err == nil {
		var t [8]byte
		binary.LittleEndian.PutUint32(t[:4], c.crc)
		binary.LittleEndian.PutUint32(t[4:], c.size)
		_, err = c.w.Write(t[:])
	}
	c.buf = nil
	c.err = errors.New("gzip: write after close")
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
	zw     *gzipStream
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
