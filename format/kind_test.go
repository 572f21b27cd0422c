package format

import (
	"errors"
	"strings"
	"testing"
)

func TestLookup(t *testing.T) {
	for name, want := range map[string]Kind{
		"io.confluent.connect.s3.format.json.JsonFormat":           KindJSON,
		"io.confluent.connect.s3.format.bytearray.ByteArrayFormat": KindBytes,
		"json": KindJSON, "JSON": KindJSON, " json ": KindJSON,
		"bytes": KindBytes, "bytearray": KindBytes, "ByteArray": KindBytes,
	} {
		k, err := Lookup(name)
		if err != nil || k != want {
			t.Errorf("Lookup(%q) = %v, %v; want %v", name, k, err, want)
		}
	}
	for name, want := range map[string]Kind{
		"io.confluent.connect.s3.format.avro.AvroFormat":       KindAvro,
		"io.confluent.connect.s3.format.parquet.ParquetFormat": KindParquet,
		"avro": KindAvro, "parquet": KindParquet,
	} {
		k, err := Lookup(name)
		if k != want || err != nil {
			t.Errorf("Lookup(%q) = %v, %v; want %v", name, k, err, want)
		}
	}
	for _, name := range []string{"", "csv", "io.confluent.connect.s3.format.json.Json", "io.confluent.connect.gcs.format.json.JsonFormat"} {
		k, err := Lookup(name)
		if k != 0 || !errors.Is(err, ErrUnknownFormat) || !strings.Contains(err.Error(), KeyFormatClass) {
			t.Errorf("Lookup(%q) = %v, %v; want unknown-format error naming %s", name, k, err, KeyFormatClass)
		}
	}
	if got := KindBytes.ClassName(); got != "io.confluent.connect.s3.format.bytearray.ByteArrayFormat" {
		t.Errorf("ClassName = %q", got)
	}
}

func TestParseCompression(t *testing.T) {
	for s, want := range map[string]Compression{"none": CompressionNone, "": CompressionNone, "gzip": CompressionGzip, " GZIP ": CompressionGzip,
		"zstd": CompressionZstd, "ZSTD": CompressionZstd} {
		c, err := ParseCompression(s)
		if err != nil || c != want {
			t.Errorf("ParseCompression(%q) = %v, %v; want %v", s, c, err, want)
		}
	}
	for _, s := range []string{"snappy", "zst", "zstandard", "gz"} {
		_, err := ParseCompression(s)
		if err == nil || !strings.Contains(err.Error(), KeyCompressionType) || !strings.Contains(err.Error(), "none, gzip, zstd") {
			t.Errorf("ParseCompression(%q) = %v, want error naming %s and allowed values", s, err, KeyCompressionType)
		}
	}
}

func TestNew(t *testing.T) {
	tests := []struct {
		cfg     Config
		wantExt string
	}{
		{Config{Kind: KindJSON}, ".json"},
		{Config{Kind: KindJSON, Compression: CompressionGzip, CompressionLevel: -1}, ".json.gz"},
		{Config{Kind: KindBytes, Bytes: DefaultBytesConfig()}, ".bin"},
		{Config{Kind: KindBytes, Bytes: BytesConfig{Separator: []byte("|"), Extension: ".raw"}, Compression: CompressionGzip, CompressionLevel: 9}, ".raw.gz"},
		{Config{Kind: KindJSON, Compression: CompressionZstd, CompressionLevel: -1}, ".json.zst"},
		{Config{Kind: KindJSON, Compression: CompressionZstd, CompressionLevel: 0}, ".json.zst"},
		{Config{Kind: KindBytes, Bytes: DefaultBytesConfig(), Compression: CompressionZstd, CompressionLevel: 9}, ".bin.zst"},
		{Config{Kind: KindBytes, Bytes: BytesConfig{Separator: []byte("|"), Extension: ".raw"}, Compression: CompressionZstd, CompressionLevel: 3}, ".raw.zst"},
		// Avro and Parquet compress inside the file: never .gz or .zst.
		{Config{Kind: KindAvro, Compression: CompressionGzip}, ".avro"},
		{Config{Kind: KindAvro, Compression: CompressionZstd, CompressionLevel: -1}, ".avro"},
		{Config{Kind: KindParquet, Compression: CompressionZstd, CompressionLevel: -1}, ".snappy.parquet"},
		{Config{Kind: KindParquet}, ".snappy.parquet"},
		{Config{Kind: KindParquet, Parquet: ParquetConfig{Codec: "zstd"}}, ".zstd.parquet"},
	}
	for _, tt := range tests {
		f, err := New(tt.cfg)
		if err != nil || f.Extension() != tt.wantExt {
			t.Errorf("New(%+v) = %v, %v; want extension %q", tt.cfg, f, err, tt.wantExt)
		}
	}
	if _, err := New(Config{Kind: KindParquet, Parquet: ParquetConfig{Codec: "lzo"}}); !errors.Is(err, ErrNotSupported) {
		t.Errorf("parquet.codec=lzo: %v, want ErrNotSupported", err)
	}
	for _, cfg := range []Config{
		{},
		{Kind: KindBytes}, // no extension
		{Kind: KindJSON, Compression: CompressionGzip, CompressionLevel: 11},
		{Kind: KindJSON, Compression: CompressionZstd, CompressionLevel: 10},
		{Kind: KindBytes, Bytes: DefaultBytesConfig(), Compression: CompressionZstd, CompressionLevel: -2},
		{Kind: KindJSON, Compression: Compression(7)},
	} {
		if _, err := New(cfg); err == nil {
			t.Errorf("New(%+v) succeeded", cfg)
		}
	}
}

// TestFormatsRegistry: the registry declares each format's names, whether
// it needs a schema, and which parallel objects it can hold; the config
// choices of format.class, keys.format.class and headers.format.class come
// from it.
func TestFormatsRegistry(t *testing.T) {
	if got := strings.Join(Formats().Names(), ","); got != "json,bytes,avro,parquet" {
		t.Errorf("Formats = %s", got)
	}
	if got := strings.Join(KeysFormats().Names(), ","); got != "json,bytes,avro,parquet" {
		t.Errorf("KeysFormats = %s", got)
	}
	if got := strings.Join(HeadersFormats().Names(), ","); got != "json,avro,parquet" {
		t.Errorf("HeadersFormats = %s", got)
	}
	for k, want := range map[Kind]bool{KindJSON: false, KindBytes: false, KindAvro: true, KindParquet: true} {
		if k.NeedsSchema() != want {
			t.Errorf("%v.NeedsSchema() = %v", k, !want)
		}
		if !k.HoldsKeys() || k.HoldsHeaders() != (k != KindBytes) || k.HoldsEnvelope() != (k != KindBytes) {
			t.Errorf("%v: HoldsKeys %v, HoldsHeaders %v, HoldsEnvelope %v", k, k.HoldsKeys(), k.HoldsHeaders(), k.HoldsEnvelope())
		}
	}
	if Kind(9).NeedsSchema() || Kind(9).HoldsKeys() || Kind(9).HoldsHeaders() || Kind(9).HoldsEnvelope() {
		t.Error("an unknown kind holds something")
	}
	e, err := Formats().Lookup("ByteArrayFormat")
	if err != nil || e.Kind != KindBytes || strings.Join(e.Aliases(), ",") != "bytearray,"+KindBytes.ClassName()+",ByteArrayFormat" {
		t.Errorf("ByteArrayFormat: %+v, %v", e, err)
	}
	if _, err := NewHeadersPart(KindBytes); !errors.Is(err, ErrInvalidConfig) || !strings.Contains(err.Error(), KeyHeadersFormatClass) {
		t.Errorf("bytes headers: %v", err)
	}
	if _, err := NewKeyPart(Kind(9), false); !errors.Is(err, ErrUnknownFormat) {
		t.Errorf("unknown keys format: %v", err)
	}
	if Kind(9).String() != "Kind(9)" || Kind(9).ClassName() != "" || Kind(9).Supported() || !KindParquet.Supported() {
		t.Error("String, ClassName or Supported of an unknown kind")
	}
	if _, err := NewEnvelope(NewJSON(), KindBytes); !errors.Is(err, ErrInvalidConfig) || !strings.Contains(err.Error(), "json, avro or parquet") {
		t.Errorf("bytes envelope: %v", err)
	}
}
