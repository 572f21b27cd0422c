package format

import (
	"errors"
	"fmt"
	"strconv"
	"strings"
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

// avroCodecNames are the avro.codec names of the AvroCodec values, in
// order.
func avroCodecNames() [5]string {
	return [...]string{"null", "deflate", "snappy", "bzip2", "zstandard"}
}

// String returns the codec's name as written in the file's avro.codec
// metadata: "null", "deflate", "snappy", "bzip2" or "zstandard".
func (c AvroCodec) String() string {
	names := avroCodecNames()
	if c < 0 || int(c) >= len(names) {
		return "AvroCodec(" + strconv.Itoa(int(c)) + ")"
	}
	return names[c]
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
	for i, name := range avroCodecNames() {
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
	if cfg.Codec < AvroCodecNull || cfg.Codec > AvroCodecZstandard {
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
