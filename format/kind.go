package format

import (
	"errors"
	"fmt"
	"strconv"
	"strings"

	"github.com/kafkas3/kafkas3/internal/registry"
)

// Confluent config keys the format package reads; errors name them.
const (
	KeyFormatClass         = "format.class"
	KeyBytesSeparator      = "format.bytearray.separator"
	KeyBytesExtension      = "format.bytearray.extension"
	KeyCompressionType     = "s3.compression.type"
	KeyCompressionLevel    = "s3.compression.level"
	confluentFormatPrefix  = "io.confluent.connect.s3.format."
	defaultCompressionName = "none"
)

// ErrNullValue is returned by the JSON and bytes writers for a record whose
// Value is nil (a Kafka tombstone). Neither layout can hold a null, so the
// caller decides what to do, per behavior.on.null.values: fail (return the
// error), ignore (skip the record before writing), or write (Confluent then
// writes only the key file under the tombstone encoded partition; that is
// the caller's business, not the value format's).
var ErrNullValue = errors.New("null value cannot be written")

// ErrNotSupported is wrapped when a format, codec or schema is recognised
// but kafkas3 does not implement it (parquet.codec lz4 and lzo, a Parquet
// value schema that is not a record, ...).
var ErrNotSupported = errors.New("not supported yet")

// ErrUnknownFormat is wrapped when a format.class value is not recognised.
var ErrUnknownFormat = errors.New("unknown format")

// ErrClosed is returned by RecordWriter.Write after Close.
var ErrClosed = errors.New("record writer is closed")

// ErrInvalidConfig is wrapped by errors for bad format settings.
var ErrInvalidConfig = errors.New("invalid format config")

// Kind names a record format. The formats, their names and what they can
// do are declared once, in Formats.
type Kind int

// The formats Confluent's S3 sink ships, all implemented (see Formats).
const (
	KindJSON Kind = iota + 1
	KindBytes
	KindAvro
	KindParquet
)

// Entry is one format of the registry: its Kind, names and Spec.
type Entry = registry.Entry[Kind, Spec]

// Registry is a table of formats (Formats, KeysFormats, HeadersFormats).
type Registry = registry.Registry[Kind, Spec]

// Spec is what the format registry declares about a format beyond its
// names.
type Spec struct {
	// Extension is the format's object key suffix before any compression
	// suffix (.gz, .zst): ".json", ".avro", ".parquet" (after the codec's
	// part, ".snappy.parquet"); for bytes the default of
	// format.bytearray.extension.
	Extension string
	// CodecInExtension tells that the codec's part precedes Extension
	// (Parquet).
	CodecInExtension bool
	// NeedsSchema tells that values must have a schema
	// (Record.ValueTyped): a sink writing this format needs a
	// schema-aware value converter (AvroConverter, JsonConverter with
	// schemas), unless store.envelope holds the values as bytes.
	NeedsSchema bool
	// Compress tells that s3.compression.type (gzip, zstd) applies (JSON
	// and bytes); the other formats compress inside the file.
	Compress bool

	build    func(Config) (Format, error)
	envelope func(inner Format) Format                                         // nil: no store.envelope
	parallel func(keys bool) (Format, error)                                   // reads .keys/.headers objects; nil: none
	key      func(p *partSchemas, r *Record, stringKeys bool) (*Record, error) // nil: cannot hold keys
	headers  func(p *partSchemas, r *Record) (*Record, error)                  // nil: cannot hold headers
}

// HoldsKeys reports whether the format can hold the .keys objects of
// store.kafka.keys (see NewKeyPart).
func (s Spec) HoldsKeys() bool { return s.key != nil }

// HoldsHeaders reports whether the format can hold the .headers objects
// of store.kafka.headers (see NewHeadersPart): not bytes.
func (s Spec) HoldsHeaders() bool { return s.headers != nil }

// HoldsEnvelope reports whether store.envelope applies to the format
// (NewEnvelope): JSON, Avro and Parquet.
func (s Spec) HoldsEnvelope() bool { return s.envelope != nil }

// Formats returns the format registry: every format.class value kafkas3
// knows, in the order docs list them, with Confluent's class names. It is
// built on each call (no package state).
func Formats() Registry {
	return Registry{
		Key: KeyFormatClass, What: "format", Unknown: ErrUnknownFormat, NotSupported: ErrNotSupported,
		Entries: []Entry{
			{Kind: KindJSON, Name: "json", Class: confluentFormatPrefix + "json.JsonFormat", Spec: Spec{
				Extension: ".json", Compress: true,
				build: buildJSON, envelope: func(Format) Format { return jsonEnvelopeFormat{} },
				parallel: parallelJSON, key: jsonKey, headers: jsonHeaders,
			}},
			{Kind: KindBytes, Name: "bytes", Short: []string{"bytearray"}, Class: confluentFormatPrefix + "bytearray.ByteArrayFormat", Spec: Spec{
				Extension: defaultBytesExtension, Compress: true,
				build: func(cfg Config) (Format, error) { return NewBytes(cfg.Bytes) },
				key:   bytesKey,
			}},
			{Kind: KindAvro, Name: "avro", Class: confluentFormatPrefix + "avro.AvroFormat", Spec: Spec{
				Extension: ".avro", NeedsSchema: true,
				build:    func(cfg Config) (Format, error) { return NewAvro(cfg.Avro) },
				envelope: func(inner Format) Format { return &typedEnvelopeFormat{inner: inner} },
				parallel: func(bool) (Format, error) { return NewAvro(AvroConfig{}) },
				key:      avroKey, headers: avroHeaders,
			}},
			{Kind: KindParquet, Name: "parquet", Class: confluentFormatPrefix + "parquet.ParquetFormat", Spec: Spec{
				Extension: ".parquet", CodecInExtension: true, NeedsSchema: true,
				build:    func(cfg Config) (Format, error) { return NewParquet(cfg.Parquet) },
				envelope: func(inner Format) Format { return &typedEnvelopeFormat{inner: inner, parquet: true} },
				parallel: func(bool) (Format, error) { return NewParquet(ParquetConfig{Codec: "none"}) },
				key:      parquetKey, headers: parquetHeaders,
			}},
		},
	}
}

// KeysFormats returns the formats of keys.format.class (those that hold
// keys: all).
func KeysFormats() Registry {
	return Formats().Filter(func(e Entry) bool { return e.Spec.HoldsKeys() })
}

// HeadersFormats returns the formats of headers.format.class (those that
// hold headers: not bytes).
func HeadersFormats() Registry {
	return Formats().Filter(func(e Entry) bool { return e.Spec.HoldsHeaders() })
}

// spec returns k's entry, or an error wrapping ErrUnknownFormat.
func (k Kind) spec() (Entry, error) {
	e, ok := Formats().Get(k)
	if !ok {
		return e, fmt.Errorf("%w: %s %v", ErrUnknownFormat, KeyFormatClass, k)
	}
	return e, nil
}

// String returns the short name of k: "json", "bytes", "avro" or "parquet".
func (k Kind) String() string {
	if e, ok := Formats().Get(k); ok {
		return e.Name
	}
	return "Kind(" + strconv.Itoa(int(k)) + ")"
}

// ClassName returns Confluent's class name for k, e.g.
// "io.confluent.connect.s3.format.json.JsonFormat"; "" for an unknown k.
func (k Kind) ClassName() string {
	e, _ := Formats().Get(k)
	return e.Class
}

// Supported reports whether kafkas3 implements k.
func (k Kind) Supported() bool {
	e, ok := Formats().Get(k)
	return ok && !e.Unsupported
}

// NeedsSchema reports whether values of format k need a schema (see
// Spec.NeedsSchema): avro and parquet.
func (k Kind) NeedsSchema() bool {
	e, _ := Formats().Get(k)
	return e.Spec.NeedsSchema
}

// HoldsKeys reports whether format k can hold .keys objects (see
// Spec.HoldsKeys).
func (k Kind) HoldsKeys() bool {
	e, _ := Formats().Get(k)
	return e.Spec.HoldsKeys()
}

// HoldsHeaders reports whether format k can hold .headers objects (see
// Spec.HoldsHeaders): not bytes.
func (k Kind) HoldsHeaders() bool {
	e, _ := Formats().Get(k)
	return e.Spec.HoldsHeaders()
}

// HoldsEnvelope reports whether store.envelope applies to format k (see
// Spec.HoldsEnvelope): not bytes.
func (k Kind) HoldsEnvelope() bool {
	e, _ := Formats().Get(k)
	return e.Spec.HoldsEnvelope()
}

// Lookup maps a format.class value to its Kind (see Formats): Confluent's
// class names (io.confluent.connect.s3.format.json.JsonFormat, ...), their
// last segment (JsonFormat, ...) and the short names json, bytes,
// bytearray, avro and parquet, case-insensitively. For an unknown name it
// returns 0 and an error wrapping ErrUnknownFormat that names
// format.class.
func Lookup(name string) (Kind, error) {
	e, err := Formats().Lookup(name)
	return e.Kind, err
}

// Compression is the value of s3.compression.type.
type Compression int

// The compression types. Confluent allows gzip for the JSON and bytes
// formats only; kafkas3 adds zstd for the same formats. Avro and Parquet
// compress inside the file.
const (
	CompressionNone Compression = iota
	CompressionGzip
	CompressionZstd
)

// compressions lists the compression types in the order errors name them.
func compressions() []Compression {
	return []Compression{CompressionNone, CompressionGzip, CompressionZstd}
}

// String returns "none", "gzip" or "zstd".
func (c Compression) String() string {
	switch c {
	case CompressionNone:
		return defaultCompressionName
	case CompressionGzip:
		return "gzip"
	case CompressionZstd:
		return "zstd"
	}
	return "Compression(" + strconv.Itoa(int(c)) + ")"
}

// Extension returns the suffix c adds to a format's extension: ".gz",
// ".zst", or "" for none.
func (c Compression) Extension() string {
	switch c {
	case CompressionGzip:
		return ".gz"
	case CompressionZstd:
		return ".zst"
	}
	return ""
}

// ParseCompression parses an s3.compression.type value: "none", "gzip" or
// "zstd" (case-insensitive, surrounding space ignored). An empty value is
// "none".
func ParseCompression(s string) (Compression, error) {
	v := strings.ToLower(strings.TrimSpace(s))
	if v == "" {
		return CompressionNone, nil
	}
	for _, c := range compressions() {
		if v == c.String() {
			return c, nil
		}
	}
	return 0, fmt.Errorf("%w: %s %q; allowed: %s", ErrInvalidConfig, KeyCompressionType, s, compressionNames())
}

// compressionNames lists the compression types for errors: "none, gzip,
// zstd".
func compressionNames() string {
	names := make([]string, 0, 3)
	for _, c := range compressions() {
		names = append(names, c.String())
	}
	return strings.Join(names, ", ")
}

// WithCompression wraps f in compression c at level (s3.compression.level):
// WithGzip, WithZstd, or f itself for CompressionNone.
func WithCompression(f Format, c Compression, level int) (Format, error) {
	switch c {
	case CompressionNone:
		return f, nil
	case CompressionGzip:
		return WithGzip(f, level)
	case CompressionZstd:
		return WithZstd(f, level)
	}
	return nil, fmt.Errorf("%w: %s %v; allowed: %s", ErrInvalidConfig, KeyCompressionType, c, compressionNames())
}

// cutCompression splits a compression suffix (.gz, .zst) off an
// extension.
func cutCompression(ext string) (string, Compression) {
	for _, c := range compressions() {
		if base, ok := strings.CutSuffix(ext, c.Extension()); ok && c != CompressionNone {
			return base, c
		}
	}
	return ext, CompressionNone
}

// Config selects and configures a format, as the config layer reads it.
// There are no implicit defaults: the zero CompressionLevel is level 0
// (gzip: stored, not compressed; zstd: the fastest level); Confluent's
// default is -1.
type Config struct {
	Kind             Kind          // format.class
	Bytes            BytesConfig   // for KindBytes
	Avro             AvroConfig    // for KindAvro
	Parquet          ParquetConfig // for KindParquet
	Compression      Compression   // s3.compression.type (json and bytes only)
	CompressionLevel int           // s3.compression.level, -1..9
	// JSONNulls builds NewNullableJSON instead of NewJSON for KindJSON:
	// the .keys objects of store.kafka.keys, where a key may be null.
	JSONNulls bool
	// Envelope is store.envelope: each record is written whole (partition,
	// offset, timestamp, key, value, headers; see NewEnvelope). JSON, Avro
	// and Parquet only.
	Envelope bool
}

// New builds the format cfg describes, compression included. KindJSON is
// NewTypedJSON (NewNullableJSON with JSONNulls). Avro and Parquet are never
// wrapped in gzip or zstd: they compress inside the file (avro.codec,
// parquet.codec), and s3.compression.type does not apply to them, as in
// Confluent's connector.
func New(cfg Config) (Format, error) {
	e, err := cfg.Kind.spec()
	if err != nil {
		return nil, err
	}
	f, err := e.Spec.build(cfg)
	if err == nil && cfg.Envelope {
		f, err = NewEnvelope(f, cfg.Kind)
	}
	if err != nil {
		return nil, err
	}
	if !e.Spec.Compress {
		return f, nil
	}
	return WithCompression(f, cfg.Compression, cfg.CompressionLevel)
}

// buildJSON builds the JSON format of cfg: the .keys objects' nullable
// JSON, or typed JSON (the envelope, which replaces it, ignores it).
func buildJSON(cfg Config) (Format, error) {
	if cfg.JSONNulls {
		return NewNullableJSON(), nil
	}
	return NewTypedJSON(), nil
}
