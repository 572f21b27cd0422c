package format

import (
	"bufio"
	"bytes"
	"compress/bzip2"
	"crypto/sha256"
	"encoding/binary"
	"errors"
	"fmt"
	"hash/crc32"
	"io"
	"math"
	"slices"
	"strconv"
	"strings"

	dsbzip2 "github.com/dsnet/compress/bzip2"
	"github.com/klauspost/compress/flate"
	"github.com/klauspost/compress/snappy"
	"github.com/klauspost/compress/zstd"
	"github.com/twmb/avro"
)

// KeyAvroCodec is Confluent's config key for the Avro container codec.
const KeyAvroCodec = "avro.codec"

// ErrNoSchema is returned by typed writers for a record without a value
// schema (ValueTyped nil): the value converter produced schemaless data.
var ErrNoSchema = errors.New("AvroFormat needs a schema: set value.converter to AvroConverter or JsonConverter with schemas.enable=true")

// ErrBadAvro is wrapped by errors for Avro data that does not match its
// schema, and for malformed Avro container files.
var ErrBadAvro = errors.New("bad Avro data")

// AvroCodec is an avro.codec value: how the blocks of a container file are
// compressed.
type AvroCodec int

// The Avro codecs. Confluent offers null, deflate, snappy and bzip2;
// zstandard is an Avro standard codec that kafkas3 adds.
const (
	AvroCodecNull AvroCodec = iota
	AvroCodecDeflate
	AvroCodecSnappy
	AvroCodecBzip2
	AvroCodecZstandard
)

var avroCodecNames = [...]string{"null", "deflate", "snappy", "bzip2", "zstandard"}

// String returns the codec's name as written in the file's avro.codec
// metadata: "null", "deflate", "snappy", "bzip2" or "zstandard".
func (c AvroCodec) String() string {
	if c < 0 || int(c) >= len(avroCodecNames) {
		return "AvroCodec(" + strconv.Itoa(int(c)) + ")"
	}
	return avroCodecNames[c]
}

// ParseAvroCodec parses an avro.codec value, case-insensitively: null (or
// empty, or none), deflate, snappy, bzip2, zstandard (or zstd).
func ParseAvroCodec(s string) (AvroCodec, error) {
	n := strings.ToLower(strings.TrimSpace(s))
	switch n {
	case "", "none":
		return AvroCodecNull, nil
	case "zstd":
		return AvroCodecZstandard, nil
	}
	for i, name := range avroCodecNames {
		if n == name {
			return AvroCodec(i), nil
		}
	}
	return 0, fmt.Errorf("%w: %s %q; allowed: null, deflate, snappy, bzip2, zstandard", ErrInvalidConfig, KeyAvroCodec, s)
}

// Defaults of AvroConfig's zero fields.
const (
	DefaultAvroBlockBytes   = 64 << 10
	DefaultAvroBlockRecords = 4096
	// maxAvroBlock bounds a block the reader accepts, compressed and
	// decompressed.
	maxAvroBlock = 64 << 20
)

// AvroConfig configures NewAvro.
type AvroConfig struct {
	// Codec is avro.codec.
	Codec AvroCodec
	// Level is the compression level: -1 for the codec's default (deflate
	// 6, zstandard 3, as Avro's Java library), deflate 0..9, zstandard
	// 0..22 (0 is the default too). Ignored by the other codecs.
	Level int
	// BlockBytes flushes a block once it holds this many uncompressed
	// bytes (0: DefaultAvroBlockBytes). It bounds the writer's memory.
	BlockBytes int
	// BlockRecords flushes a block once it holds this many records (0:
	// DefaultAvroBlockRecords).
	BlockRecords int
}

// NewAvro returns Confluent's AvroFormat: an Avro object container file
// per object, extension ".avro" (never gzip-wrapped: the codec compresses
// inside the file).
//
// The writer takes the file's schema from the first record's
// ValueTyped.Schema and writes the header then. Each record's value is
// appended as its ValueTyped.Raw bytes when present (the fast path: no
// decoding, only a structural check that the bytes are one datum of the
// schema), else encoded from ValueTyped.Native. A record whose schema is
// not the file's (see SameAvroSchema) gets ErrSchemaChanged; a record
// without ValueTyped gets ErrNoSchema, or ErrNullValue for a null value.
// Bad data gets an error wrapping ErrBadAvro. In every error case nothing
// is written and the writer stays usable. Close on a writer that got no
// record writes nothing.
//
// Output is deterministic: the metadata holds only avro.codec and
// avro.schema (the schema text as the registry gave it), and the 16-byte
// sync marker is derived from the codec and schema text, so the same
// records give the same bytes.
//
// The reader accepts any container file with the null, deflate, snappy,
// bzip2 or zstandard codec, whatever its sync marker or metadata. Each
// record has ValueTyped{Schema (ID 0, Text from the header), Raw, Native}
// and Value set to the datum's Avro binary encoding (the same bytes as
// Raw), ready to be framed for a registry again.
func NewAvro(cfg AvroConfig) (Format, error) {
	if cfg.Codec < 0 || int(cfg.Codec) >= len(avroCodecNames) {
		return nil, fmt.Errorf("%w: %s %v", ErrInvalidConfig, KeyAvroCodec, cfg.Codec)
	}
	switch cfg.Codec {
	case AvroCodecDeflate:
		if cfg.Level < -1 || cfg.Level > 9 {
			return nil, fmt.Errorf("%w: deflate level %d, want -1 (default) or 0..9", ErrInvalidConfig, cfg.Level)
		}
	case AvroCodecZstandard:
		if cfg.Level < -1 || cfg.Level > 22 {
			return nil, fmt.Errorf("%w: zstandard level %d, want -1 or 0 (default) or 1..22", ErrInvalidConfig, cfg.Level)
		}
	}
	if cfg.BlockBytes < 0 || cfg.BlockRecords < 0 {
		return nil, fmt.Errorf("%w: negative Avro block size", ErrInvalidConfig)
	}
	if cfg.BlockBytes == 0 {
		cfg.BlockBytes = DefaultAvroBlockBytes
	}
	if cfg.BlockRecords == 0 {
		cfg.BlockRecords = DefaultAvroBlockRecords
	}
	return &avroFormat{cfg: cfg}, nil
}

type avroFormat struct{ cfg AvroConfig }

func (f *avroFormat) Extension() string { return ".avro" }

// SameAvroSchema reports whether values under a and b have the same Avro
// encoding as far as a file is concerned: the same pointer, the same
// non-zero registry id, or (when either id is 0) the same schema text.
func SameAvroSchema(a, b *Schema) bool {
	if a == nil || b == nil {
		return a == b
	}
	if a == b {
		return true
	}
	if a.ID != 0 && b.ID != 0 {
		return a.ID == b.ID
	}
	return avroSchemaText(a) == avroSchemaText(b)
}

func avroSchemaText(s *Schema) string {
	if s.Text != "" {
		return s.Text
	}
	if s.Avro != nil {
		return s.Avro.String()
	}
	return ""
}

// AvroNative returns t's decoded value: t.Native, or t.Raw decoded under
// t.Schema (which is then stored in t.Native). Bytes left over after the
// datum are an error wrapping ErrBadAvro.
func AvroNative(t *Typed) (any, error) {
	if t == nil {
		return nil, nil
	}
	if t.Native != nil || t.Raw == nil {
		return t.Native, nil
	}
	if t.Schema == nil || t.Schema.Avro == nil {
		return nil, fmt.Errorf("%w: typed value without a parsed schema", ErrBadAvro)
	}
	var v any
	rest, err := t.Schema.Avro.Decode(t.Raw, &v)
	if err != nil {
		return nil, fmt.Errorf("%w: schema id %d: %w", ErrBadAvro, t.Schema.ID, err)
	}
	if len(rest) != 0 {
		return nil, fmt.Errorf("%w: schema id %d: %d bytes left after the datum", ErrBadAvro, t.Schema.ID, len(rest))
	}
	t.Native = v
	return v, nil
}

// ---- compression ----

type avroCompressor interface {
	compress(dst, src []byte) ([]byte, error)
	close()
}

type avroNullComp struct{}

func (avroNullComp) compress(dst, src []byte) ([]byte, error) { return append(dst, src...), nil }
func (avroNullComp) close()                                   {}

type avroDeflateComp struct {
	fw  *flate.Writer
	out *bytes.Buffer
}

func (c *avroDeflateComp) compress(dst, src []byte) ([]byte, error) {
	c.out.Reset()
	c.fw.Reset(c.out)
	if _, err := c.fw.Write(src); err != nil {
		return dst, err
	}
	if err := c.fw.Close(); err != nil {
		return dst, err
	}
	return append(dst, c.out.Bytes()...), nil
}
func (c *avroDeflateComp) close() {}

type avroSnappyComp struct{}

func (avroSnappyComp) compress(dst, src []byte) ([]byte, error) {
	dst = append(dst, snappy.Encode(nil, src)...)
	return binary.BigEndian.AppendUint32(dst, crc32.ChecksumIEEE(src)), nil
}
func (avroSnappyComp) close() {}

type avroBzip2Comp struct{ out bytes.Buffer }

func (c *avroBzip2Comp) compress(dst, src []byte) ([]byte, error) {
	c.out.Reset()
	zw, err := dsbzip2.NewWriter(&c.out, &dsbzip2.WriterConfig{Level: dsbzip2.DefaultCompression})
	if err != nil {
		return dst, err
	}
	if _, err := zw.Write(src); err != nil {
		return dst, err
	}
	if err := zw.Close(); err != nil {
		return dst, err
	}
	return append(dst, c.out.Bytes()...), nil
}
func (c *avroBzip2Comp) close() {}

type avroZstdComp struct{ enc *zstd.Encoder }

func (c *avroZstdComp) compress(dst, src []byte) ([]byte, error) {
	return c.enc.EncodeAll(src, dst), nil
}
func (c *avroZstdComp) close() { _ = c.enc.Close() }

func newAvroCompressor(cfg AvroConfig) (avroCompressor, error) {
	switch cfg.Codec {
	case AvroCodecNull:
		return avroNullComp{}, nil
	case AvroCodecDeflate:
		level := cfg.Level
		if level == -1 {
			level = 6
		}
		out := new(bytes.Buffer)
		fw, err := flate.NewWriter(out, level)
		if err != nil {
			return nil, err
		}
		return &avroDeflateComp{fw: fw, out: out}, nil
	case AvroCodecSnappy:
		return avroSnappyComp{}, nil
	case AvroCodecBzip2:
		return &avroBzip2Comp{}, nil
	case AvroCodecZstandard:
		level := cfg.Level
		if level <= 0 {
			level = 3
		}
		enc, err := zstd.NewWriter(nil, zstd.WithEncoderConcurrency(1),
			zstd.WithEncoderLevel(zstd.EncoderLevelFromZstd(level)))
		if err != nil {
			return nil, err
		}
		return &avroZstdComp{enc: enc}, nil
	}
	return nil, fmt.Errorf("%w: %s %v", ErrInvalidConfig, KeyAvroCodec, cfg.Codec)
}

// avroDecompress decompresses one block of codec, refusing output over max.
func avroDecompress(codec string, src []byte, max int) ([]byte, error) {
	limited := func(r io.Reader) ([]byte, error) {
		b, err := io.ReadAll(io.LimitReader(r, int64(max)+1))
		if err != nil {
			return nil, err
		}
		if len(b) > max {
			return nil, fmt.Errorf("block decompresses to over %d bytes", max)
		}
		return b, nil
	}
	switch codec {
	case "null":
		return src, nil
	case "deflate":
		fr := flate.NewReader(bytes.NewReader(src))
		defer fr.Close()
		return limited(fr)
	case "snappy":
		if len(src) < 4 {
			return nil, errors.New("snappy block shorter than its checksum")
		}
		body, sum := src[:len(src)-4], binary.BigEndian.Uint32(src[len(src)-4:])
		n, err := snappy.DecodedLen(body)
		if err != nil {
			return nil, err
		}
		if n > max {
			return nil, fmt.Errorf("block decompresses to over %d bytes", max)
		}
		out, err := snappy.Decode(nil, body)
		if err != nil {
			return nil, err
		}
		if crc32.ChecksumIEEE(out) != sum {
			return nil, errors.New("snappy block checksum mismatch")
		}
		return out, nil
	case "bzip2":
		return limited(bzip2.NewReader(bytes.NewReader(src)))
	case "zstandard":
		dec, err := zstd.NewReader(nil, zstd.WithDecoderConcurrency(1), zstd.WithDecoderMaxMemory(uint64(max)))
		if err != nil {
			return nil, err
		}
		defer dec.Close()
		return dec.DecodeAll(src, nil)
	}
	return nil, fmt.Errorf("unsupported avro.codec %q", codec)
}

// ---- writer ----

var avroMagic = []byte{'O', 'b', 'j', 1}

// avroSync derives a file's sync marker from its codec and schema text.
func avroSync(codec AvroCodec, text string) [16]byte {
	h := sha256.New()
	h.Write([]byte("kafkas3 avro sync\x00"))
	h.Write([]byte(codec.String()))
	h.Write([]byte{0})
	h.Write([]byte(text))
	var s [16]byte
	copy(s[:], h.Sum(nil))
	return s
}

func appendAvroLong(b []byte, v int64) []byte {
	return binary.AppendUvarint(b, uint64(v<<1)^uint64(v>>63))
}

func appendAvroBytes(b []byte, p []byte) []byte {
	b = appendAvroLong(b, int64(len(p)))
	return append(b, p...)
}

func (f *avroFormat) NewWriter(w io.Writer) (RecordWriter, error) {
	if w == nil {
		return nil, errors.New("avro: nil writer")
	}
	return &avroWriter{cfg: f.cfg, w: w}, nil
}

type avroWriter struct {
	cfg     AvroConfig
	w       io.Writer
	schema  *Schema
	datum   *AvroDatum
	sync    [16]byte
	comp    avroCompressor
	block   []byte
	count   int
	out     []byte // compressed block scratch
	blk     []byte // framed block scratch
	err     error  // sticky I/O or compression error
	closed  bool
	started bool
}

func avroWhere(r *Record) string {
	return fmt.Sprintf("topic %q partition %d offset %d", r.Topic, r.Partition, r.Offset)
}

func (aw *avroWriter) Write(r *Record) error {
	if aw.closed {
		return ErrClosed
	}
	if aw.err != nil {
		return aw.err
	}
	if r == nil {
		return errors.New("avro: nil record")
	}
	t := r.ValueTyped
	if t == nil {
		if r.Value == nil {
			return fmt.Errorf("avro: %s: %w", avroWhere(r), ErrNullValue)
		}
		return fmt.Errorf("avro: %s: %w", avroWhere(r), ErrNoSchema)
	}
	if t.Schema == nil || t.Schema.Avro == nil {
		return fmt.Errorf("avro: %s: typed value without a parsed schema: %w", avroWhere(r), ErrNoSchema)
	}
	if !aw.started {
		if err := aw.start(t.Schema); err != nil {
			return err
		}
	} else if !SameAvroSchema(aw.schema, t.Schema) {
		return fmt.Errorf("avro: %s: schema id %d version %d, file has id %d version %d: %w",
			avroWhere(r), t.Schema.ID, t.Schema.Version, aw.schema.ID, aw.schema.Version, ErrSchemaChanged)
	}
	if t.Raw != nil {
		if err := aw.datum.Check(t.Raw); err != nil {
			return fmt.Errorf("avro: %s: value is not one datum of schema id %d: %w", avroWhere(r), t.Schema.ID, err)
		}
		aw.block = append(aw.block, t.Raw...)
	} else {
		out, err := aw.datum.Append(aw.block, t.Native)
		if err != nil {
			return fmt.Errorf("avro: %s: encoding under schema id %d: %w", avroWhere(r), aw.schema.ID, err)
		}
		aw.block = out
	}
	aw.count++
	if len(aw.block) >= aw.cfg.BlockBytes || aw.count >= aw.cfg.BlockRecords {
		return aw.flush()
	}
	return nil
}

func (aw *avroWriter) start(s *Schema) error {
	datum, err := NewAvroDatum(s.Avro)
	if err != nil {
		return fmt.Errorf("avro: schema id %d: %w", s.ID, err)
	}
	comp, err := newAvroCompressor(aw.cfg)
	if err != nil {
		return fmt.Errorf("avro: %w", err)
	}
	text := avroSchemaText(s)
	aw.schema, aw.datum, aw.comp, aw.started = s, datum, comp, true
	aw.sync = avroSync(aw.cfg.Codec, text)
	h := append([]byte(nil), avroMagic...)
	h = appendAvroLong(h, 2)
	h = appendAvroBytes(h, []byte("avro.codec"))
	h = appendAvroBytes(h, []byte(aw.cfg.Codec.String()))
	h = appendAvroBytes(h, []byte("avro.schema"))
	h = appendAvroBytes(h, []byte(text))
	h = appendAvroLong(h, 0)
	h = append(h, aw.sync[:]...)
	return aw.write(h)
}

func (aw *avroWriter) write(p []byte) error {
	if _, err := aw.w.Write(p); err != nil {
		aw.err = fmt.Errorf("avro: write: %w", err)
		return aw.err
	}
	return nil
}

func (aw *avroWriter) flush() error {
	if aw.count == 0 {
		return nil
	}
	body, err := aw.comp.compress(aw.out[:0], aw.block)
	if err != nil {
		aw.err = fmt.Errorf("avro: compress %s block: %w", aw.cfg.Codec, err)
		return aw.err
	}
	blk := appendAvroLong(aw.blk[:0], int64(aw.count))
	blk = appendAvroBytes(blk, body)
	blk = append(blk, aw.sync[:]...)
	aw.out, aw.blk = body[:0], blk[:0]
	aw.block = aw.block[:0]
	aw.count = 0
	return aw.write(blk)
}

func (aw *avroWriter) Close() error {
	if aw.closed {
		return nil
	}
	aw.closed = true
	var err error
	if aw.err == nil {
		err = aw.flush()
	} else {
		err = aw.err
	}
	if aw.comp != nil {
		aw.comp.close()
	}
	return err
}

// ---- reader ----

// limits on header fields, against hostile input.
const (
	maxAvroMetaEntries = 1024
	maxAvroMetaBytes   = 16 << 20
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
		return nil, badAvro("%s length: %v", what, err)
	}
	if n < 0 || n > max {
		return nil, badAvro("%s length %d out of range 0..%d", what, n, max)
	}
	// Grow with the data actually read, so a hostile length cannot make
	// us allocate before the bytes arrive.
	var buf bytes.Buffer
	if n <= 64<<10 {
		buf.Grow(int(n))
	}
	if m, err := io.CopyN(&buf, ar.br, n); err != nil {
		return nil, badAvro("%s: read %d of %d bytes: %v", what, m, n, err)
	}
	return buf.Bytes(), nil
}

func (ar *avroReader) readHeader() error {
	var magic [4]byte
	if _, err := io.ReadFull(ar.br, magic[:]); err != nil {
		return badAvro("reading magic: %v", err)
	}
	if !bytes.Equal(magic[:], avroMagic) {
		return badAvro("not an Avro container file (magic %q)", magic[:])
	}
	meta := map[string][]byte{}
	total := int64(0)
	for {
		n, err := ar.readLong()
		if err != nil {
			return badAvro("metadata count: %v", err)
		}
		if n == 0 {
			break
		}
		if n < 0 { // block with byte size
			n = -n
			if _, err := ar.readLong(); err != nil {
				return badAvro("metadata block size: %v", err)
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
		return badAvro("reading sync marker: %v", err)
	}
	text, ok := meta["avro.schema"]
	if !ok {
		return badAvro("header has no avro.schema")
	}
	s, err := avro.Parse(string(text))
	if err != nil {
		return badAvro("header schema: %v", err)
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
		return badAvro("block %d count: %v", ar.nblocks, err)
	}
	n := int64(count>>1) ^ -int64(count&1)
	data, err := ar.readBytes(maxAvroBlock, fmt.Sprintf("block %d", ar.nblocks))
	if err != nil {
		return err
	}
	var sync [16]byte
	if _, err := io.ReadFull(ar.br, sync[:]); err != nil {
		return badAvro("block %d sync marker: %v", ar.nblocks, err)
	}
	if sync != ar.sync {
		return badAvro("block %d sync marker does not match the header's", ar.nblocks)
	}
	raw, err := avroDecompress(ar.codec, data, maxAvroBlock)
	if err != nil {
		return badAvro("block %d (%s): %v", ar.nblocks, ar.codec, err)
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

func (ar *avroReader) Read() (*Record, error) {
	if ar.err != nil {
		return nil, ar.err
	}
	for ar.left == 0 {
		if len(ar.block) != 0 {
			ar.err = badAvro("block %d has %d bytes after its last datum", ar.nblocks-1, len(ar.block))
			return nil, ar.err
		}
		if err := ar.nextBlock(); err != nil {
			ar.err = err
			return nil, err
		}
	}
	var v any
	rest, err := ar.schema.Avro.Decode(ar.block, &v)
	if err != nil {
		ar.err = badAvro("block %d: %v", ar.nblocks-1, err)
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

// ---- AvroDatum: structural checks and deterministic encoding ----

// AvroDatum checks and encodes datums of one Avro schema. Build it once
// per schema with NewAvroDatum; it is safe for concurrent use.
type AvroDatum struct {
	schema *avro.Schema
	root   *avroNode
}

// NewAvroDatum compiles s for Check and Append.
func NewAvroDatum(s *avro.Schema) (*AvroDatum, error) {
	if s == nil {
		return nil, errors.New("avro: nil schema")
	}
	c := &avroCompiler{named: map[string]*avroNode{}}
	root, err := c.compile(s.Root(), "")
	if err != nil {
		return nil, err
	}
	return &AvroDatum{schema: s, root: root}, nil
}

// Check reports whether raw is exactly one datum of the schema, checking
// structure only (lengths, varints, union branches, enum ordinals; not
// UTF-8). It does not allocate. Errors wrap ErrBadAvro.
func (d *AvroDatum) Check(raw []byte) error {
	budget := avroItemBudget(len(raw))
	rest, err := avroSkip(d.root, raw, 0, &budget)
	if err == nil && len(rest) != 0 {
		err = fmt.Errorf("%d bytes left after the datum", len(rest))
	}
	if err != nil {
		return fmt.Errorf("%w: %w", ErrBadAvro, err)
	}
	return nil
}

// Append appends the Avro binary encoding of v to dst. Unlike
// avro.Schema.AppendEncode, the output is deterministic: map entries are
// written sorted by key in a single block (Go map order is random), so
// the same value always gives the same bytes. Errors wrap ErrBadAvro; on
// error dst is returned unchanged.
func (d *AvroDatum) Append(dst []byte, v any) ([]byte, error) {
	if !d.root.hasMap {
		out, err := d.schema.AppendEncode(dst, v)
		if err != nil {
			return dst, fmt.Errorf("%w: %w", ErrBadAvro, err)
		}
		return out, nil
	}
	enc, err := d.schema.Encode(v)
	if err != nil {
		return dst, fmt.Errorf("%w: %w", ErrBadAvro, err)
	}
	budget := avroItemBudget(len(enc))
	out, rest, err := avroCanon(d.root, dst, enc, 0, &budget)
	if err == nil && len(rest) != 0 {
		err = errors.New("encoder left trailing bytes")
	}
	if err != nil {
		return dst, fmt.Errorf("%w: %w", ErrBadAvro, err)
	}
	return out, nil
}

type avroKind uint8

const (
	avroKNull avroKind = iota
	avroKFixedLen
	avroKVarint
	avroKBytes
	avroKEnum
	avroKArray
	avroKMap
	avroKRecord
	avroKUnion
)

// avroNode is a compiled schema node.
type avroNode struct {
	kind     avroKind
	n        int64 // fixed length, or enum symbol count
	elem     *avroNode
	children []*avroNode // record fields or union branches
	hasMap   bool        // a map occurs at or under this node
}

type avroCompiler struct {
	named map[string]*avroNode
}

func avroFullName(name, ns string) string {
	if strings.Contains(name, ".") || ns == "" {
		return name
	}
	return ns + "." + name
}

func (c *avroCompiler) compile(n *avro.SchemaNode, ns string) (*avroNode, error) {
	if n.Namespace != "" {
		ns = n.Namespace
	}
	switch n.Type {
	case "null":
		return &avroNode{kind: avroKNull}, nil
	case "boolean":
		return &avroNode{kind: avroKFixedLen, n: 1}, nil
	case "int", "long":
		return &avroNode{kind: avroKVarint}, nil
	case "float":
		return &avroNode{kind: avroKFixedLen, n: 4}, nil
	case "double":
		return &avroNode{kind: avroKFixedLen, n: 8}, nil
	case "string", "bytes":
		return &avroNode{kind: avroKBytes}, nil
	case "fixed":
		nd := &avroNode{kind: avroKFixedLen, n: int64(n.Size)}
		c.named[avroFullName(n.Name, ns)] = nd
		return nd, nil
	case "enum":
		nd := &avroNode{kind: avroKEnum, n: int64(len(n.Symbols))}
		c.named[avroFullName(n.Name, ns)] = nd
		return nd, nil
	case "array", "map":
		elem := n.Items
		nd := &avroNode{kind: avroKArray}
		if n.Type == "map" {
			elem, nd.kind, nd.hasMap = n.Values, avroKMap, true
		}
		if elem == nil {
			return nil, fmt.Errorf("%s without element schema", n.Type)
		}
		e, err := c.compile(elem, ns)
		if err != nil {
			return nil, err
		}
		nd.elem = e
		nd.hasMap = nd.hasMap || e.hasMap
		return nd, nil
	case "record", "error":
		nd := &avroNode{kind: avroKRecord}
		c.named[avroFullName(n.Name, ns)] = nd
		for i := range n.Fields {
			f, err := c.compile(&n.Fields[i].Type, ns)
			if err != nil {
				return nil, err
			}
			nd.children = append(nd.children, f)
			nd.hasMap = nd.hasMap || f.hasMap
		}
		return nd, nil
	case "union":
		nd := &avroNode{kind: avroKUnion}
		for i := range n.Branches {
			b, err := c.compile(&n.Branches[i], ns)
			if err != nil {
				return nil, err
			}
			nd.children = append(nd.children, b)
			nd.hasMap = nd.hasMap || b.hasMap
		}
		return nd, nil
	}
	// A reference to a named type defined earlier (possibly an enclosing
	// record, for recursive schemas; such a record's hasMap may be
	// incomplete, which only costs the map sorting under the recursion).
	for _, name := range []string{n.Type, avroFullName(n.Type, ns)} {
		if nd, ok := c.named[name]; ok {
			return nd, nil
		}
	}
	return nil, fmt.Errorf("unknown Avro type %q", n.Type)
}

const maxAvroDepth = 256

// avroItemBudget is how many array and map items a datum of n bytes may
// hold in all: one per byte plus a margin for zero-byte items.
func avroItemBudget(n int) int64 { return int64(n) + 1<<16 }

var errAvroShort = errors.New("datum truncated")

func avroReadLong(src []byte) (int64, []byte, error) {
	u, n := binary.Uvarint(src)
	if n <= 0 {
		if n == 0 {
			return 0, nil, errAvroShort
		}
		return 0, nil, errors.New("varint overflows 64 bits")
	}
	return int64(u>>1) ^ -int64(u&1), src[n:], nil
}

func avroSkipN(src []byte, n int64) ([]byte, error) {
	if n < 0 {
		return nil, fmt.Errorf("negative length %d", n)
	}
	if int64(len(src)) < n {
		return nil, errAvroShort
	}
	return src[n:], nil
}

// avroBlockCount reads an array or map block header: the item count (a
// negative count is followed by the block's byte size, which we skip).
func avroBlockCount(src []byte, budget *int64) (int64, []byte, error) {
	cnt, src, err := avroReadLong(src)
	if err != nil {
		return 0, nil, err
	}
	if cnt < 0 {
		if cnt == math.MinInt64 {
			return 0, nil, errors.New("bad block count")
		}
		cnt = -cnt
		if _, src, err = avroReadLong(src); err != nil {
			return 0, nil, err
		}
	}
	// Every item but a zero-byte one takes a byte: the budget (the datum's
	// length plus a margin for zero-byte items) bounds the items of all
	// arrays and maps of a datum, so hostile counts cannot spin.
	if cnt > *budget {
		return 0, nil, fmt.Errorf("block count %d exceeds the data", cnt)
	}
	*budget -= cnt
	return cnt, src, nil
}

// avroSkip advances past one datum of nd.
func avroSkip(nd *avroNode, src []byte, depth int, budget *int64) ([]byte, error) {
	if depth > maxAvroDepth {
		return nil, errors.New("nesting too deep")
	}
	switch nd.kind {
	case avroKNull:
		return src, nil
	case avroKFixedLen:
		return avroSkipN(src, nd.n)
	case avroKVarint:
		_, rest, err := avroReadLong(src)
		return rest, err
	case avroKBytes:
		l, rest, err := avroReadLong(src)
		if err != nil {
			return nil, err
		}
		return avroSkipN(rest, l)
	case avroKEnum:
		i, rest, err := avroReadLong(src)
		if err != nil {
			return nil, err
		}
		if i < 0 || i >= nd.n {
			return nil, fmt.Errorf("enum index %d out of range", i)
		}
		return rest, nil
	case avroKArray, avroKMap:
		for {
			cnt, rest, err := avroBlockCount(src, budget)
			if err != nil {
				return nil, err
			}
			src = rest
			if cnt == 0 {
				return src, nil
			}
			for range cnt {
				if nd.kind == avroKMap {
					l, rest, err := avroReadLong(src)
					if err != nil {
						return nil, err
					}
					if src, err = avroSkipN(rest, l); err != nil {
						return nil, err
					}
				}
				if src, err = avroSkip(nd.elem, src, depth+1, budget); err != nil {
					return nil, err
				}
			}
		}
	case avroKRecord:
		var err error
		for _, f := range nd.children {
			if src, err = avroSkip(f, src, depth+1, budget); err != nil {
				return nil, err
			}
		}
		return src, nil
	case avroKUnion:
		i, rest, err := avroReadLong(src)
		if err != nil {
			return nil, err
		}
		if i < 0 || i >= int64(len(nd.children)) {
			return nil, fmt.Errorf("union branch %d out of range", i)
		}
		return avroSkip(nd.children[i], rest, depth+1, budget)
	}
	return nil, fmt.Errorf("bad node kind %d", nd.kind)
}

// avroCanon appends the canonical form of one datum of nd from src to dst:
// arrays and maps in a single block, map entries sorted by key (stable for
// equal keys). It returns the rest of src.
func avroCanon(nd *avroNode, dst, src []byte, depth int, budget *int64) ([]byte, []byte, error) {
	if !nd.hasMap && nd.kind != avroKArray {
		rest, err := avroSkip(nd, src, depth, budget)
		if err != nil {
			return nil, nil, err
		}
		return append(dst, src[:len(src)-len(rest)]...), rest, nil
	}
	if depth > maxAvroDepth {
		return nil, nil, errors.New("nesting too deep")
	}
	switch nd.kind {
	case avroKRecord:
		var err error
		for _, f := range nd.children {
			if dst, src, err = avroCanon(f, dst, src, depth+1, budget); err != nil {
				return nil, nil, err
			}
		}
		return dst, src, nil
	case avroKUnion:
		i, rest, err := avroReadLong(src)
		if err != nil {
			return nil, nil, err
		}
		if i < 0 || i >= int64(len(nd.children)) {
			return nil, nil, fmt.Errorf("union branch %d out of range", i)
		}
		dst = append(dst, src[:len(src)-len(rest)]...)
		return avroCanon(nd.children[i], dst, rest, depth+1, budget)
	case avroKArray, avroKMap:
		type entry struct{ key, val []byte }
		var items []entry
		for {
			cnt, rest, err := avroBlockCount(src, budget)
			if err != nil {
				return nil, nil, err
			}
			src = rest
			if cnt == 0 {
				break
			}
			for range cnt {
				var e entry
				if nd.kind == avroKMap {
					l, rest, err := avroReadLong(src)
					if err != nil {
						return nil, nil, err
					}
					after, err := avroSkipN(rest, l)
					if err != nil {
						return nil, nil, err
					}
					e.key, src = rest[:l], after
				}
				if e.val, src, err = avroCanon(nd.elem, nil, src, depth+1, budget); err != nil {
					return nil, nil, err
				}
				items = append(items, e)
			}
		}
		if nd.kind == avroKMap {
			slices.SortStableFunc(items, func(a, b entry) int { return bytes.Compare(a.key, b.key) })
		}
		if len(items) > 0 {
			dst = appendAvroLong(dst, int64(len(items)))
			for _, e := range items {
				if nd.kind == avroKMap {
					dst = appendAvroBytes(dst, e.key)
				}
				dst = append(dst, e.val...)
			}
		}
		return appendAvroLong(dst, 0), src, nil
	}
	return nil, nil, fmt.Errorf("bad node kind %d", nd.kind)
}
