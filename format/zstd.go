package format

import (
	"bufio"
	"errors"
	"fmt"
	"io"
	"os"

	"github.com/klauspost/compress/zstd"
)

// WithZstd wraps f so that objects are zstd-compressed
// (s3.compression.type=zstd) at level (s3.compression.level; see zstdLevel
// for the table: -1, the default, is the encoder's default level, about
// zstd -3). The extension becomes f.Extension()+".zst". The writer's Close
// finishes the inner format and the zstd frame but does not close the
// underlying writer.
//
// An object is one zstd frame (RFC 8878) with a content checksum and a
// window of zstdWindow, written by github.com/klauspost/compress/zstd with
// one goroutine (no concurrent blocks), so the output is deterministic: the
// same records give the same bytes, whatever objects the encoder served
// before. The frame is the one a single zstd.Encoder stream with these
// options writes for the same bytes.
//
// Memory: unlike gzip's, a zstd frame cannot be built from chunks
// compressed by shared compressors (a block depends on the repeat offsets
// and entropy tables of the blocks before it), so an object streams
// through an encoder of its own once its input passes one block
// (zstdBlock, 128 KiB): the match tables of its level plus the window and
// a block, about 1.3 MiB at levels 0..2, 2.2 MiB at -1 and 3..5, 5.0 MiB
// at 6..8 and 35 MiB at 9 (TestZstdMemoryPerObject measures them). At
// most zstdStreamEncoders objects of a format hold one at once; the others
// past one block write their input to an unlinked temporary file (in
// os.TempDir, as Parquet's spool) and are compressed from it at Close, as
// one stream, by one of the format's zstdSharedEncoders shared encoders:
// with 200 open objects a format holds at most zstdStreamEncoders +
// zstdSharedEncoders + zstdIdle encoders, and the rest of the input waits
// on disk, not in memory (TestZstdMemoryBounded). Until it passes one
// block an object holds only its input, and an object that ends within
// one block is compressed at Close by a shared encoder too. The encoders
// of closed objects are kept for the next ones (at most zstdIdle). Every
// path writes the frame one encoder stream writes for the object's bytes,
// so the bytes of an object do not depend on the path it took.
//
// The reader accepts what zstd -d accepts with a window up to
// zstdMaxWindow (concatenated frames, skippable frames) and decodes with
// one goroutine and bounded memory: the window and a block (about 0.8 MiB
// for kafkas3's frames); a reader that reaches the end of its object
// leaves its decoder to the next one (at most zstdIdle are kept). A bad
// frame, bad checksum, truncation, data after the last frame, a larger
// window or an empty object is an error, never a panic.
func WithZstd(f Format, level int) (Format, error) {
	if f == nil {
		return nil, errors.New("zstd: nil format")
	}
	l, err := zstdLevel(level)
	if err != nil {
		return nil, err
	}
	z := &zstdFormat{inner: f, level: l, shared: make(chan *zstdShared, zstdSharedEncoders),
		idle: make(chan *zstd.Encoder, zstdIdle), decoders: make(chan *zstd.Decoder, zstdIdle),
		streams: make(chan struct{}, zstdStreamEncoders)}
	for range zstdSharedEncoders {
		z.shared <- &zstdShared{}
	}
	return z, nil
}

// zstdWindow is the window of the frames written: how far back a match
// may reach, and what a decoder keeps.
const zstdWindow = 256 << 10

// zstdBlock is the encoder's block size (zstd's largest): the input an
// object holds before it takes an encoder of its own.
const zstdBlock = 128 << 10

// zstdSharedEncoders bounds the objects of one format that are compressed
// in one block at once (at Close).
const zstdSharedEncoders = 4

// zstdIdle is how many encoders of closed objects, and decoders of objects
// read to the end, a format keeps for the next ones.
const zstdIdle = 4

// zstdStreamEncoders bounds the open objects of one format that stream
// through an encoder of their own; the others wait on disk until Close.
const zstdStreamEncoders = 8

// zstdMaxWindow is the largest window the reader accepts: zstd's own
// levels up to 19 use at most 8 MiB (--long and --ultra more).
const zstdMaxWindow = 8 << 20

// zstdLevel maps s3.compression.level onto the encoder's levels (the
// levels of the reference zstd they are closest to in brackets):
//
//	-1     SpeedDefault (zstd -3), the default
//	0..2   SpeedFastest (zstd -1)
//	3..5   SpeedDefault (zstd -3)
//	6..8   SpeedBetterCompression (zstd -7)
//	9      SpeedBestCompression (zstd -11)
//
// 1..8 are klauspost's EncoderLevelFromZstd of the same number; 9 reaches
// the smallest level, and 0, gzip's "stored", is the fastest (zstd has no
// stored level).
func zstdLevel(level int) (zstd.EncoderLevel, error) {
	switch {
	case level == -1:
		return zstd.SpeedDefault, nil
	case level < -1 || level > 9:
		return 0, fmt.Errorf("%w: %s is %d, want -1 (default) or 0..9", ErrInvalidConfig, KeyCompressionLevel, level)
	case level == 9:
		return zstd.SpeedBestCompression, nil
	}
	return zstd.EncoderLevelFromZstd(level), nil
}

type zstdFormat struct {
	inner Format
	level zstd.EncoderLevel
	// shared holds the encoders that compress objects of one block at
	// Close; taking one is the right to use it.
	shared chan *zstdShared
	// idle holds the encoders of closed objects for the next ones.
	idle chan *zstd.Encoder
	// decoders holds the decoders of objects read to the end for the next
	// ones.
	decoders chan *zstd.Decoder
	// streams holds a token for each open object streaming through an
	// encoder of its own (zstdStreamEncoders at most).
	streams chan struct{}
}

// zstdShared is a shared encoder (made on first use) and its output buffer.
type zstdShared struct {
	enc *zstd.Encoder
	out []byte
}

// options are the encoder's options. The window comes before the level so
// that every level keeps zstdBlock blocks.
func (z *zstdFormat) options() []zstd.EOption {
	return []zstd.EOption{
		zstd.WithWindowSize(zstdWindow),
		zstd.WithEncoderLevel(z.level),
		zstd.WithEncoderConcurrency(1),
		zstd.WithLowerEncoderMem(true),
		zstd.WithAllLitEntropyCompression(true),
		zstd.WithEncoderCRC(true),
	}
}

func (z *zstdFormat) Extension() string { return z.inner.Extension() + ".zst" }

func (z *zstdFormat) NewWriter(w io.Writer) (RecordWriter, error) {
	if w == nil {
		return nil, errors.New("zstd: nil writer")
	}
	zw := &zstdStream{z: z, w: w}
	rw, err := z.inner.NewWriter(zw)
	if err != nil {
		return nil, err
	}
	return &zstdWriter{rw: rw, zw: zw}, nil
}

// zstdStream writes one zstd frame: it holds the input while it stays
// under one block, then streams it through an encoder of its own or, when
// zstdStreamEncoders objects have one, writes it to a temporary file that
// Close compresses.
type zstdStream struct {
	z   *zstdFormat
	w   io.Writer
	buf []byte        // the input while it is under zstdBlock
	enc *zstd.Encoder // the object's own encoder, past one block
	// file holds the input past one block when no encoder was free, out
	// buffers the writes to it.
	file *os.File
	out  *bufio.Writer
	err  error // sticky: the stream is broken after a failed write
}

func (s *zstdStream) Write(p []byte) (int, error) {
	if s.err != nil {
		return 0, s.err
	}
	if s.enc == nil && s.out == nil {
		if len(s.buf)+len(p) < zstdBlock {
			s.buf = append(s.buf, p...)
			return len(p), nil
		}
		if err := s.pastOneBlock(); err != nil {
			s.err = err
			return 0, err
		}
	}
	var n int
	var err error
	if s.enc != nil {
		n, err = s.enc.Write(p)
	} else {
		n, err = s.out.Write(p)
	}
	if err != nil {
		s.err = err
	}
	return n, err
}

// pastOneBlock moves the held input to the object's own encoder, when
// fewer than zstdStreamEncoders objects have one, or else to a temporary
// file.
func (s *zstdStream) pastOneBlock() error {
	select {
	case s.z.streams <- struct{}{}:
		enc, err := s.z.encoder(s.w)
		if err != nil {
			<-s.z.streams
			return err
		}
		s.enc = enc
		_, err = s.enc.Write(s.buf)
		s.buf = nil
		return err
	default:
	}
	f, err := os.CreateTemp("", "kafkas3-zstd-*")
	if err != nil {
		return fmt.Errorf("zstd: a temporary file for an object's input: %w", err)
	}
	_ = os.Remove(f.Name()) // unlinked: nothing is left behind
	s.file, s.out = f, bufio.NewWriterSize(f, zstdFileBuffer)
	_, err = s.out.Write(s.buf)
	s.buf = nil
	return err
}

// zstdFileBuffer buffers the writes of an object's input to its
// temporary file, and the reads back at Close.
const zstdFileBuffer = 64 << 10

// Close ends the frame: the object's encoder writes its last block and
// the checksum and is kept for the next object, or a shared encoder
// compresses the object's one block (an object without records is still a
// zstd frame).
func (s *zstdStream) Close() error {
	if s.err != nil {
		s.release()
		return s.err
	}
	s.err = errors.New("zstd: write after close")
	if s.enc != nil {
		err := s.enc.Close()
		if err != nil {
			s.release()
			return err
		}
		s.z.keep(s.enc)
		s.enc = nil
		<-s.z.streams
		return nil
	}
	if s.file != nil {
		defer s.release()
		return s.closeFile()
	}
	e, err := s.z.sharedEncoder()
	if err != nil {
		return err
	}
	defer func() { s.z.shared <- e }()
	e.out = e.enc.EncodeAll(s.buf, e.out[:0])
	s.buf = nil
	_, err = s.w.Write(e.out)
	return err
}

// release gives back what the stream holds without ending its frame:
// its encoder's slot (the encoder, reset, is kept for another object) and
// its temporary file. It is idempotent; the stream takes no more writes.
func (s *zstdStream) release() {
	if s.err == nil {
		s.err = errors.New("zstd: write after close")
	}
	if s.enc != nil {
		s.z.keep(s.enc)
		s.enc = nil
		<-s.z.streams
	}
	if s.file != nil {
		s.file.Close()
		s.file, s.out = nil, nil
	}
	s.buf = nil
}

// sharedEncoder takes one of the format's shared encoders (made on first
// use); the caller gives it back to z.shared.
func (z *zstdFormat) sharedEncoder() (*zstdShared, error) {
	e := <-z.shared
	if e.enc == nil {
		enc, err := zstd.NewWriter(nil, z.options()...)
		if err != nil {
			z.shared <- e
			return nil, err
		}
		e.enc = enc
	}
	return e, nil
}

// closeFile compresses the object's input from its temporary file with a
// shared encoder, as one stream, and closes the file.
func (s *zstdStream) closeFile() error {
	if err := s.out.Flush(); err != nil {
		return err
	}
	if _, err := s.file.Seek(0, io.SeekStart); err != nil {
		return err
	}
	e, err := s.z.sharedEncoder()
	if err != nil {
		return err
	}
	defer func() { s.z.shared <- e }()
	e.enc.Reset(s.w)
	defer e.enc.Reset(io.Discard) // holds no writer of the object's
	if _, err := io.CopyBuffer(e.enc, s.file, make([]byte, zstdFileBuffer)); err != nil {
		return err
	}
	return e.enc.Close()
}

// encoder returns an encoder for a new frame on w: a kept one, reset, or a
// new one.
func (z *zstdFormat) encoder(w io.Writer) (*zstd.Encoder, error) {
	select {
	case e := <-z.idle:
		e.Reset(w)
		return e, nil
	default:
	}
	return zstd.NewWriter(w, z.options()...)
}

// keep keeps a closed object's encoder for the next object, unless
// zstdIdle are kept already; it no longer holds the object's writer.
func (z *zstdFormat) keep(e *zstd.Encoder) {
	e.Reset(io.Discard)
	select {
	case z.idle <- e:
	default:
	}
}

func (z *zstdFormat) NewReader(r io.Reader) (RecordReader, error) {
	if r == nil {
		return nil, errors.New("zstd: nil reader")
	}
	in := &CountingReader{R: r}
	zr, err := z.decoder(in)
	if err != nil {
		return nil, fmt.Errorf("zstd: %w", err)
	}
	return z.inner.NewReader(&zstdErrReader{z: z, zr: zr, in: in})
}

// decoder returns a decoder of r: a kept one, reset, or a new one.
func (z *zstdFormat) decoder(r io.Reader) (*zstd.Decoder, error) {
	select {
	case d := <-z.decoders:
		return d, d.Reset(r) // reads nothing yet (one goroutine, not a *bytes.Buffer)
	default:
	}
	return zstd.NewReader(r, zstd.WithDecoderConcurrency(1), zstd.WithDecoderLowmem(true),
		zstd.WithDecoderMaxWindow(zstdMaxWindow), zstd.WithDecoderMaxMemory(zstdMaxWindow))
}

type zstdWriter struct {
	rw     RecordWriter
	zw     *zstdStream
	closed bool
}

func (zw *zstdWriter) Write(r *Record) error {
	if zw.closed {
		return ErrClosed
	}
	return zw.rw.Write(r)
}

// Discard gives back the object's encoder slot and temporary file without
// finishing the frame (format.Discarder): the object is aborted.
func (zw *zstdWriter) Discard() {
	zw.closed = true
	zw.zw.release()
}

func (zw *zstdWriter) Close() error {
	if zw.closed {
		return nil
	}
	zw.closed = true
	err := zw.rw.Close()
	if zerr := zw.zw.Close(); zerr != nil && err == nil {
		err = fmt.Errorf("zstd: %w", zerr)
	}
	return err
}

// zstdErrReader prefixes decompression errors with "zstd:" and makes an
// empty object an error (the decoder reads no frame as a clean end). A
// frame cut short fails with io.ErrUnexpectedEOF, so the inner reader
// never mistakes truncation for a clean end. At the clean end its decoder
// goes back to the format for the next object.
type zstdErrReader struct {
	z  *zstdFormat
	zr *zstd.Decoder // nil after the clean end
	in *CountingReader
}

func (z *zstdErrReader) Read(p []byte) (int, error) {
	if z.zr == nil {
		return 0, io.EOF
	}
	n, err := z.zr.Read(p)
	switch {
	case err == nil:
	case errors.Is(err, io.EOF) && z.in.N == 0:
		err = errors.New("zstd: empty object: no zstd frame")
	case errors.Is(err, io.EOF):
		z.z.keepDecoder(z.zr)
		z.zr = nil
	case errors.Is(err, zstd.ErrWindowSizeExceeded), errors.Is(err, zstd.ErrDecoderSizeExceeded):
		err = fmt.Errorf("zstd: %w (the reader takes windows up to %d MiB)", err, zstdMaxWindow>>20)
	case !errors.Is(err, io.EOF):
		err = fmt.Errorf("zstd: %w", err)
	}
	return n, err
}

// keepDecoder keeps a decoder that reached the clean end of its object for
// the next object, unless zstdIdle are kept already; it no longer holds
// the object's reader.
func (z *zstdFormat) keepDecoder(d *zstd.Decoder) {
	if err := d.Reset(nil); err != nil {
		return
	}
	select {
	case z.decoders <- d:
	default:
	}
}

// CountingReader counts the bytes read through it (N).
type CountingReader struct {
	R io.Reader
	N int64
}

func (c *CountingReader) Read(p []byte) (int, error) {
	n, err := c.R.Read(p)
	c.N += int64(n)
	return n, err
}
