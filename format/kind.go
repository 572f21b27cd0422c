package format

import (
	"errors"
	"fmt"
	"strconv"
	"strings"
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

// Kind names a record format.
type Kind int

// The formats Confluent's S3 sink ships, all implemented (see New).
const (
	KindJSON Kind = iota + 1
	KindBytes
	KindAvro
	KindParquet
)

var kindNames = [...]struct{ class, short string }{
	KindJSON:    {"json.JsonFormat", "json"},
	KindBytes:   {"bytearray.ByteArrayFormat", "bytes"},
	KindAvro:    {"avro.AvroFormat", "avro"},
	KindParquet: {"parquet.ParquetFormat", "parquet"},
}

func (k Kind) valid() bool { return k >= KindJSON && int(k) < len(kindNames) }

// String returns the short name of k: "json", "bytes", "avro" or "parquet".
func (k Kind) String() string {
	if !k.valid() {
		return "Kind(" + strconv.Itoa(int(k)) + ")"
	}
	return kindNames[k].short
}

// ClassName returns Confluent's class name for k, e.g.
// "io.confluent.connect.s3.format.json.JsonFormat".
func (k Kind) ClassName() string {
	if !k.valid() {
		return ""
	}
	return confluentFormatPrefix + kindNames[k].class
}

// Supported reports whether kafkas3 implements k.
func (k Kind) Supported() bool { return k.valid() }

// Lookup maps a format.class value to its Kind. It accepts Confluent's
// class names (io.confluent.connect.s3.format.json.JsonFormat,
// ...bytearray.ByteArrayFormat, ...avro.AvroFormat,
// ...parquet.ParquetFormat) and the short names json, bytes, bytearray,
// avro and parquet (case-insensitive). For an unknown name it returns 0 and
// an error wrapping ErrUnknownFormat that names format.class.
func Lookup(name string) (Kind, error) {
	n := strings.TrimSpace(name)
	var kind Kind
	for k := KindJSON; k.valid(); k++ {
		if n == k.ClassName() || strings.EqualFold(n, kindNames[k].short) {
			kind = k
			break
		}
	}
	if kind == 0 && strings.EqualFold(n, "bytearray") {
		kind = KindBytes
	}
	if kind == 0 {
		return 0, fmt.Errorf("%w: %s %q; allowed: json, bytes (or bytearray), avro, parquet, or Confluent's class names such as %s",
			ErrUnknownFormat, KeyFormatClass, name, KindJSON.ClassName())
	}
	if !kind.Supported() {
		return kind, fmt.Errorf("%s %q: the %s format is %w; use json or bytes", KeyFormatClass, name, kind, ErrNotSupported)
	}
	return kind, nil
}

// Compression is the value of s3.compression.type.
type Compression int

// The compression types. Confluent allows gzip for the JSON and bytes
// formats only; Avro and Parquet compress inside the file.
const (
	CompressionNone Compression = iota
	CompressionGzip
)

// String returns "none" or "gzip".
func (c Compression) String() string {
	switch c {
	case CompressionNone:
		return defaultCompressionName
	case CompressionGzip:
		return "gzip"
	}
	return "Compression(" + strconv.Itoa(int(c)) + ")"
}

// ParseCompression parses an s3.compression.type value: "none" or "gzip"
// (case-insensitive, surrounding space ignored). An empty value is "none".
func ParseCompression(s string) (Compression, error) {
	switch strings.ToLower(strings.TrimSpace(s)) {
	case "", "none":
		return CompressionNone, nil
	case "gzip":
		return CompressionGzip, nil
	}
	return 0, fmt.Errorf("%w: %s %q; allowed: none, gzip", ErrInvalidConfig, KeyCompressionType, s)
}

// Config selects and configures a format, as the config layer reads it.
// There are no implicit defaults: the zero CompressionLevel is level 0
// (stored, not compressed); Confluent's default is -1.
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

// New builds the format cfg describes, compression included. Avro and
// Parquet are never gzip-wrapped: they compress inside the file (avro.codec,
// parquet.codec), and s3.compression.type does not apply to them, as in
// Confluent's connector.
func New(cfg Config) (Format, error) {
	var f Format
	var err error
	switch cfg.Kind {
	case KindJSON:
		f = NewJSON()
		if cfg.JSONNulls {
			f = NewNullableJSON()
		}
	case KindBytes:
		f, err = NewBytes(cfg.Bytes)
	case KindAvro:
		f, err = NewAvro(cfg.Avro)
	case KindParquet:
		f, err = NewParquet(cfg.Parquet)
	default:
		return nil, fmt.Errorf("%w: %s %v", ErrUnknownFormat, KeyFormatClass, cfg.Kind)
	}
	if err == nil && cfg.Envelope {
		f, err = NewEnvelope(f, cfg.Kind)
	}
	if err != nil {
		return nil, err
	}
	if cfg.Kind == KindAvro || cfg.Kind == KindParquet {
		return f, nil
	}
	switch cfg.Compression {
	case CompressionNone:
		return f, nil
	case CompressionGzip:
		return WithGzip(f, cfg.CompressionLevel)
	}
	return nil, fmt.Errorf("%w: %s %v; allowed: none, gzip", ErrInvalidConfig, KeyCompressionType, cfg.Compression)
}
