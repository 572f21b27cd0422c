package format

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"math/big"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/parquet-go/parquet-go"
	"github.com/parquet-go/parquet-go/encoding/thrift"
	pqformat "github.com/parquet-go/parquet-go/format"
	"github.com/pierrec/lz4/v4"
	"github.com/twmb/avro"
)

// richSchemaText covers what the Parquet schema derivation handles.
const richSchemaText = `{
  "type": "record", "name": "Order", "namespace": "com.example",
  "fields": [
    {"name": "id", "type": "long"},
    {"name": "qty", "type": "int"},
    {"name": "ok", "type": "boolean"},
    {"name": "ratio", "type": "float"},
    {"name": "score", "type": "double"},
    {"name": "name", "type": "string"},
    {"name": "blob", "type": "bytes"},
    {"name": "tag", "type": {"type": "fixed", "name": "Tag", "size": 4}},
    {"name": "status", "type": {"type": "enum", "name": "Status", "symbols": ["NEW", "PAID", "SHIPPED"]}},
    {"name": "day", "type": {"type": "int", "logicalType": "date"}},
    {"name": "at_ms", "type": {"type": "long", "logicalType": "timestamp-millis"}},
    {"name": "at_us", "type": {"type": "long", "logicalType": "timestamp-micros"}},
    {"name": "price", "type": {"type": "bytes", "logicalType": "decimal", "precision": 12, "scale": 2}},
    {"name": "fprice", "type": {"type": "fixed", "name": "FPrice", "size": 6, "logicalType": "decimal", "precision": 14, "scale": 3}},
    {"name": "note", "type": ["null", "string"], "default": null},
    {"name": "maybe_day", "type": ["null", {"type": "int", "logicalType": "date"}], "default": null},
    {"name": "address", "type": {"type": "record", "name": "Address", "fields": [
      {"name": "street", "type": "string"},
      {"name": "zip", "type": ["null", "int"], "default": null},
      {"name": "geo", "type": ["null", {"type": "record", "name": "Geo", "fields": [
        {"name": "lat", "type": "double"}, {"name": "lon", "type": "double"}]}], "default": null}
    ]}},
    {"name": "lines", "type": {"type": "array", "items": {"type": "record", "name": "Line", "fields": [
      {"name": "sku", "type": "string"},
      {"name": "n", "type": "int"},
      {"name": "opts", "type": {"type": "array", "items": "string"}}
    ]}}},
    {"name": "attrs", "type": {"type": "map", "values": "string"}},
    {"name": "counts", "type": ["null", {"type": "map", "values": ["null", "long"]}], "default": null},
    {"name": "maybe_ints", "type": {"type": "array", "items": ["null", "int"]}},
    {"name": "matrix", "type": {"type": "array", "items": {"type": "array", "items": "int"}}},
    {"name": "billing", "type": ["null", "Address"], "default": null}
  ]
}`

func mustRichSchema(t testing.TB) *Schema {
	t.Helper()
	s, err := avro.Parse(richSchemaText)
	if err != nil {
		t.Fatal(err)
	}
	return &Schema{ID: 7, Version: 1, Avro: s, Text: richSchemaText}
}

// richValues returns values covering nulls and non-nulls, empty and full
// collections, negative decimals and dates before the epoch, in twmb/avro's
// decoded representation (encoded then decoded, so they compare exactly).
func richValues(t testing.TB, s *Schema) []map[string]any {
	t.Helper()
	ts := time.Date(2024, 3, 9, 12, 34, 56, 789123000, time.UTC)
	in := []map[string]any{
		{
			"id": int64(1), "qty": int32(3), "ok": true, "ratio": float32(0.5), "score": 2.25,
			"name": "first", "blob": []byte{0, 1, 2, 255}, "tag": []byte("abcd"), "status": "PAID",
			"day": ts, "at_ms": ts, "at_us": ts, "price": big.NewRat(12345, 100), "fprice": big.NewRat(-1, 1000),
			"note": "hello", "maybe_day": time.Date(1960, 1, 2, 0, 0, 0, 0, time.UTC),
			"address": map[string]any{"street": "Main 1", "zip": int32(12345),
				"geo": map[string]any{"lat": 52.5, "lon": 13.4}},
			"lines": []any{
				map[string]any{"sku": "a", "n": int32(1), "opts": []any{"x", "y"}},
				map[string]any{"sku": "b", "n": int32(2), "opts": []any{}},
				map[string]any{"sku": "c", "n": int32(3), "opts": []any{"z"}},
			},
			"attrs":      map[string]any{"k1": "v1", "k2": "v2", "k3": "v3", "k4": "", "k5": "v5"},
			"counts":     map[string]any{"a": int64(1), "b": nil, "c": int64(-3)},
			"maybe_ints": []any{int32(1), nil, int32(3)},
			"matrix":     []any{[]any{int32(1), int32(2)}, []any{}, []any{int32(3)}},
			"billing":    map[string]any{"street": "Bill 2", "zip": nil, "geo": nil},
		},
		{
			"id": int64(-2), "qty": int32(-1), "ok": false, "ratio": float32(-1.5), "score": -0.125,
			"name": "", "blob": []byte{}, "tag": []byte{0, 0, 0, 0}, "status": "NEW",
			"day": time.Date(1969, 12, 31, 0, 0, 0, 0, time.UTC), "at_ms": time.UnixMilli(-1500).UTC(),
			"at_us": time.UnixMicro(1).UTC(), "price": big.NewRat(-99999999, 100), "fprice": big.NewRat(123456789, 1000),
			"note": nil, "maybe_day": nil,
			"address":    map[string]any{"street": "", "zip": nil, "geo": nil},
			"lines":      []any{},
			"attrs":      map[string]any{},
			"counts":     nil,
			"maybe_ints": []any{nil},
			"matrix":     []any{},
			"billing":    nil,
		},
		{
			"id": int64(3), "qty": int32(0), "ok": true, "ratio": float32(0), "score": 0.0,
			"name": "ünïcode ✓", "blob": bytes.Repeat([]byte("x"), 300), "tag": []byte("wxyz"), "status": "SHIPPED",
			"day": time.Date(2000, 2, 29, 0, 0, 0, 0, time.UTC), "at_ms": ts, "at_us": ts,
			"price": big.NewRat(0, 1), "fprice": big.NewRat(-1, 1),
			"note": "", "maybe_day": time.Date(2000, 1, 1, 0, 0, 0, 0, time.UTC),
			"address": map[string]any{"street": "s", "zip": int32(0), "geo": map[string]any{"lat": -1.0, "lon": 0.0}},
			"lines":   []any{map[string]any{"sku": "only", "n": int32(9), "opts": []any{"o"}}},
			"attrs":   map[string]any{"only": "one"}, "counts": map[string]any{},
			"maybe_ints": []any{}, "matrix": []any{[]any{int32(7)}},
			"billing": map[string]any{"street": "b", "zip": int32(1), "geo": map[string]any{"lat": 1.0, "lon": 2.0}},
		},
	}
	out := make([]map[string]any, len(in))
	for i, v := range in {
		raw, err := s.Avro.Encode(v)
		if err != nil {
			t.Fatalf("encoding value %d: %v", i, err)
		}
		var n any
		if _, err := s.Avro.Decode(raw, &n); err != nil {
			t.Fatalf("decoding value %d: %v", i, err)
		}
		out[i] = n.(map[string]any)
	}
	return out
}

// canonJSON renders an Avro value as JSON with sorted object keys, so
// values compare regardless of Go map order.
func canonJSON(t testing.TB, s *Schema, v any) string {
	t.Helper()
	j, err := s.Avro.EncodeJSON(v)
	if err != nil {
		t.Fatalf("encoding %v as JSON: %v", v, err)
	}
	var x any
	if err := json.Unmarshal(j, &x); err != nil {
		t.Fatal(err)
	}
	out, err := json.Marshal(x)
	if err != nil {
		t.Fatal(err)
	}
	return string(out)
}

// canonRaw decodes Avro binary and renders it as canonJSON does.
func canonRaw(t testing.TB, s *Schema, raw []byte) string {
	t.Helper()
	var v any
	rest, err := s.Avro.Decode(raw, &v)
	if err != nil || len(rest) != 0 {
		t.Fatalf("decoding raw: %v (%d bytes left)", err, len(rest))
	}
	return canonJSON(t, s, v)
}

func typedRecord(s *Schema, native any, offset int64) *Record {
	return &Record{Topic: "t", Partition: 0, Offset: offset, Value: []byte("wire"),
		ValueTyped: &Typed{Schema: s, Native: native}}
}

func mustParquet(t testing.TB, cfg ParquetConfig) *Parquet {
	t.Helper()
	f, err := NewParquet(cfg)
	if err != nil {
		t.Fatal(err)
	}
	return f.(*Parquet)
}

func writeParquet(t testing.TB, p *Parquet, recs []*Record) []byte {
	t.Helper()
	var buf bytes.Buffer
	w, err := p.NewWriter(&buf)
	if err != nil {
		t.Fatal(err)
	}
	for _, r := range recs {
		if err := w.Write(r); err != nil {
			t.Fatalf("write offset %d: %v", r.Offset, err)
		}
	}
	if err := w.Close(); err != nil {
		t.Fatal(err)
	}
	return buf.Bytes()
}

func readParquet(t testing.TB, p *Parquet, r io.Reader) []*Record {
	t.Helper()
	rr, err := p.NewReader(r)
	if err != nil {
		t.Fatal(err)
	}
	var out []*Record
	for {
		rec, err := rr.Read()
		if errors.Is(err, io.EOF) {
			return out
		}
		if err != nil {
			t.Fatalf("read %d: %v", len(out), err)
		}
		out = append(out, rec)
	}
}

func TestParquetRoundTripEveryCodec(t *testing.T) {
	s := mustRichSchema(t)
	values := richValues(t, s)
	exts := map[string]string{"none": ".parquet", "snappy": ".snappy.parquet", "gzip": ".gz.parquet",
		"zstd": ".zstd.parquet", "lz4_raw": ".lz4raw.parquet", "brotli": ".br.parquet"}
	codecs := map[string]pqformat.CompressionCodec{"none": pqformat.Uncompressed, "snappy": pqformat.Snappy,
		"gzip": pqformat.Gzip, "zstd": pqformat.Zstd, "lz4_raw": pqformat.Lz4Raw, "brotli": pqformat.Brotli}
	for _, codec := range ParquetCodecs() {
		t.Run(codec, func(t *testing.T) {
			p := mustParquet(t, ParquetConfig{Codec: strings.ToUpper(codec)})
			if got := p.Extension(); got != exts[codec] {
				t.Errorf("Extension() = %q, want %q", got, exts[codec])
			}
			var recs []*Record
			for i, v := range values {
				recs = append(recs, typedRecord(s, v, int64(i)))
			}
			data := writeParquet(t, p, recs)
			if !bytes.HasPrefix(data, []byte("PAR1")) || !bytes.HasSuffix(data, []byte("PAR1")) {
				t.Fatalf("not a parquet file: % x ...", data[:min(8, len(data))])
			}
			f, err := parquet.OpenFile(bytes.NewReader(data), int64(len(data)))
			if err != nil {
				t.Fatal(err)
			}
			for _, rg := range f.Metadata().RowGroups {
				for _, cc := range rg.Columns {
					if cc.MetaData.Codec != codecs[codec] {
						t.Fatalf("column %v codec %v, want %v", cc.MetaData.PathInSchema, cc.MetaData.Codec, codecs[codec])
					}
				}
			}
			got := readParquet(t, p, bytes.NewReader(data))
			if len(got) != len(values) {
				t.Fatalf("read %d records, want %d", len(got), len(values))
			}
			for i, rec := range got {
				want := canonJSON(t, s, values[i])
				if got := canonJSON(t, s, rec.ValueTyped.Native); got != want {
					t.Errorf("record %d differs:\n got %s\nwant %s", i, got, want)
				}
				if got := canonRaw(t, s, rec.ValueTyped.Raw); got != want || !bytes.Equal(rec.Value, rec.ValueTyped.Raw) {
					t.Errorf("record %d: Raw or Value differs from Native: %s", i, got)
				}
				if rec.ValueTyped.Schema.Text != richSchemaText {
					t.Errorf("record %d schema text not the stored Avro schema", i)
				}
			}
			// Spot checks on the native representation.
			n0 := got[0].ValueTyped.Native.(map[string]any)
			if p := n0["price"].(*big.Rat); p.Cmp(big.NewRat(12345, 100)) != 0 {
				t.Errorf("price = %v", p)
			}
			if d := n0["maybe_day"].(time.Time); !d.Equal(time.Date(1960, 1, 2, 0, 0, 0, 0, time.UTC)) {
				t.Errorf("maybe_day = %v", d)
			}
			if n1 := got[1].ValueTyped.Native.(map[string]any); n1["note"] != nil || n1["billing"] != nil || n1["counts"] != nil {
				t.Errorf("nulls not read back as nil: %v %v %v", n1["note"], n1["billing"], n1["counts"])
			}
		})
	}
}

func TestParquetSchemaLayout(t *testing.T) {
	s := mustRichSchema(t)
	p := mustParquet(t, ParquetConfig{})
	data := writeParquet(t, p, []*Record{typedRecord(s, richValues(t, s)[0], 0)})
	f, err := parquet.OpenFile(bytes.NewReader(data), int64(len(data)))
	if err != nil {
		t.Fatal(err)
	}
	if got, _ := f.Lookup(ParquetAvroSchemaKey); got != richSchemaText {
		t.Errorf("%s metadata = %q", ParquetAvroSchemaKey, got)
	}
	if got := f.Metadata().CreatedBy; got != parquetCreatedBy {
		t.Errorf("created_by = %q", got)
	}
	var cols []string
	for _, c := range f.Schema().Columns() {
		cols = append(cols, strings.Join(c, "."))
	}
	want := []string{"id", "qty", "ok", "ratio", "score", "name", "blob", "tag", "status", "day", "at_ms", "at_us",
		"price", "fprice", "note", "maybe_day", "address.street", "address.zip", "address.geo.lat", "address.geo.lon",
		"lines.list.element.sku", "lines.list.element.n", "lines.list.element.opts.list.element",
		"attrs.key_value.key", "attrs.key_value.value", "counts.key_value.key", "counts.key_value.value",
		"maybe_ints.list.element", "matrix.list.element.list.element",
		"billing.street", "billing.zip", "billing.geo.lat", "billing.geo.lon"}
	if strings.Join(cols, " ") != strings.Join(want, " ") {
		t.Errorf("columns (Avro field order expected):\n got %v\nwant %v", cols, want)
	}
	// Logical types and repetition, as parquet-go prints the schema.
	schema := f.Schema().String()
	for _, frag := range []string{
		"message Order {",
		"required int64 id (INT(64,true));",
		"required binary name (STRING);",
		"required binary status (ENUM);",
		"required fixed_len_byte_array(4) tag;",
		"required int32 day (DATE);",
		"required int64 at_ms (TIMESTAMP(isAdjustedToUTC=true,unit=MILLIS));",
		"required int64 at_us (TIMESTAMP(isAdjustedToUTC=true,unit=MICROS));",
		"required binary price (DECIMAL(12,2));",
		"required fixed_len_byte_array(6) fprice (DECIMAL(14,3));",
		"optional binary note (STRING);",
		"optional int32 maybe_day (DATE);",
		"required group lines (LIST) {",
		"repeated group list {",
		"required group attrs (MAP) {",
		"repeated group key_value {",
		"required binary key (STRING);",
		"optional group counts (MAP) {",
		"optional int64 value (INT(64,true));",
		"optional int32 element (INT(32,true));",
		"optional group billing {",
		"optional group geo {",
	} {
		if !strings.Contains(schema, frag) {
			t.Errorf("schema lacks %q:\n%s", frag, schema)
		}
	}
}

func TestParquetDeterministic(t *testing.T) {
	s := mustRichSchema(t)
	values := richValues(t, s)
	big := map[string]any{}
	for i := range 50 {
		big[fmt.Sprintf("key%02d", i)] = fmt.Sprint(i)
	}
	values[0]["attrs"] = big // map iteration order must not leak into the file
	var recs []*Record
	for i := range 40 {
		recs = append(recs, typedRecord(s, values[i%len(values)], int64(i)))
	}
	for _, codec := range []string{"snappy", "zstd", "gzip"} {
		p := mustParquet(t, ParquetConfig{Codec: codec, RowGroupRecords: 7})
		first := writeParquet(t, p, recs)
		for range 3 {
			if again := writeParquet(t, p, recs); !bytes.Equal(first, again) {
				t.Fatalf("%s: two writes of the same records differ (%d vs %d bytes)", codec, len(first), len(again))
			}
		}
	}
}

func TestParquetRowGroupsBounded(t *testing.T) {
	s := mustRichSchema(t)
	values := richValues(t, s)
	var recs []*Record
	for i := range 25 {
		recs = append(recs, typedRecord(s, values[i%len(values)], int64(i)))
	}
	for _, tc := range []struct {
		cfg        ParquetConfig
		wantGroups int
	}{
		{ParquetConfig{RowGroupRecords: 10}, 3},
		{ParquetConfig{RowGroupRecords: 1}, 25},
		{ParquetConfig{RowGroupBytes: 1}, 25}, // every record exceeds one byte
		{ParquetConfig{}, 1},
	} {
		p := mustParquet(t, tc.cfg)
		data := writeParquet(t, p, recs)
		f, err := parquet.OpenFile(bytes.NewReader(data), int64(len(data)))
		if err != nil {
			t.Fatal(err)
		}
		if got := len(f.RowGroups()); got != tc.wantGroups {
			t.Errorf("%+v: %d row groups, want %d", tc.cfg, got, tc.wantGroups)
		}
		got := readParquet(t, p, bytes.NewReader(data))
		if len(got) != len(recs) {
			t.Fatalf("%+v: read %d records, want %d", tc.cfg, len(got), len(recs))
		}
		for i, rec := range got {
			if canonJSON(t, s, rec.ValueTyped.Native) != canonJSON(t, s, values[i%len(values)]) {
				t.Fatalf("%+v: record %d differs", tc.cfg, i)
			}
		}
	}
}

func TestParquetRawOnlyAndOtherNativeShapes(t *testing.T) {
	text := `{"type":"record","name":"R","fields":[
		{"name":"i","type":"int"},{"name":"l","type":"long"},{"name":"d","type":"double"},
		{"name":"ts","type":{"type":"long","logicalType":"timestamp-millis"}},
		{"name":"dec","type":{"type":"bytes","logicalType":"decimal","precision":5,"scale":2}},
		{"name":"arr","type":{"type":"array","items":"long"}}]}`
	as := avro.MustParse(text)
	s := &Schema{Avro: as, Text: text}
	p := mustParquet(t, ParquetConfig{Codec: "none"})
	raw, err := as.Encode(map[string]any{"i": 1, "l": 2, "d": 3.5, "ts": int64(1700000000000), "dec": "1.25", "arr": []any{int64(1)}})
	if err != nil {
		t.Fatal(err)
	}
	recs := []*Record{
		// Raw only: decoded with the schema.
		{Offset: 0, ValueTyped: &Typed{Schema: s, Raw: raw}},
		// JSON-ish natives: float64 numbers, a decimal string, a typed slice.
		{Offset: 1, ValueTyped: &Typed{Schema: s, Native: map[string]any{"i": float64(1), "l": 2, "d": 3.5,
			"ts": time.UnixMilli(1700000000000), "dec": "1.25", "arr": []int64{1}}}},
	}
	got := readParquet(t, p, bytes.NewReader(writeParquet(t, p, recs)))
	if len(got) != 2 {
		t.Fatalf("read %d records", len(got))
	}
	for i, rec := range got {
		if got, want := canonRaw(t, s, rec.ValueTyped.Raw), canonRaw(t, s, raw); got != want {
			t.Errorf("record %d: %s, want %s", i, got, want)
		}
	}
}

func TestParquetSchemaChanged(t *testing.T) {
	s := mustRichSchema(t)
	v := richValues(t, s)[0]
	p := mustParquet(t, ParquetConfig{})
	w, err := p.NewWriter(io.Discard)
	if err != nil {
		t.Fatal(err)
	}
	if err := w.Write(typedRecord(s, v, 0)); err != nil {
		t.Fatal(err)
	}
	// The same schema under another *Schema is not a change.
	same := &Schema{ID: 7, Avro: avro.MustParse(richSchemaText), Text: richSchemaText}
	if err := w.Write(typedRecord(same, v, 1)); err != nil {
		t.Fatalf("same schema, other pointer: %v", err)
	}
	noID := &Schema{Avro: avro.MustParse(richSchemaText)}
	if err := w.Write(typedRecord(noID, v, 2)); err != nil {
		t.Fatalf("same schema without id: %v", err)
	}
	other := &Schema{ID: 8, Avro: avro.MustParse(`{"type":"record","name":"X","fields":[{"name":"a","type":"int"}]}`)}
	err = w.Write(typedRecord(other, map[string]any{"a": int32(1)}, 3))
	if !errors.Is(err, ErrSchemaChanged) {
		t.Fatalf("different schema: err = %v, want ErrSchemaChanged", err)
	}
	if !strings.Contains(err.Error(), "offset 3") {
		t.Errorf("error does not name the offset: %v", err)
	}
	// The writer is still usable after a schema change error.
	if err := w.Write(typedRecord(s, v, 4)); err != nil {
		t.Fatalf("write after schema change: %v", err)
	}
	if err := w.Close(); err != nil {
		t.Fatal(err)
	}
	if err := w.Write(typedRecord(s, v, 5)); !errors.Is(err, ErrClosed) {
		t.Fatalf("write after close: %v, want ErrClosed", err)
	}
}

func TestParquetWriteErrors(t *testing.T) {
	s := mustRichSchema(t)
	p := mustParquet(t, ParquetConfig{})
	newW := func() RecordWriter {
		w, err := p.NewWriter(io.Discard)
		if err != nil {
			t.Fatal(err)
		}
		return w
	}
	err := newW().Write(&Record{Topic: "t", Offset: 5, Value: []byte(`{"a":1}`)})
	if err == nil || !strings.Contains(err.Error(), "value.converter") || !strings.Contains(err.Error(), "offset 5") {
		t.Errorf("schemaless record: %v", err)
	}
	if err := newW().Write(&Record{Topic: "t"}); !errors.Is(err, ErrNullValue) {
		t.Errorf("tombstone: %v, want ErrNullValue", err)
	}
	bad := richValues(t, s)[0]
	bad["qty"] = "three"
	if err := newW().Write(typedRecord(s, bad, 0)); err == nil || !strings.Contains(err.Error(), "qty") {
		t.Errorf("string for int: %v", err)
	}
	bad = richValues(t, s)[0]
	bad["address"] = map[string]any{"street": nil}
	if err := newW().Write(typedRecord(s, bad, 0)); err == nil || !strings.Contains(err.Error(), "address.street") {
		t.Errorf("null for a required nested field: %v", err)
	}
	bad = richValues(t, s)[0]
	bad["price"] = big.NewRat(1, 1000)
	if err := newW().Write(typedRecord(s, bad, 0)); err == nil || !strings.Contains(err.Error(), "price") {
		t.Errorf("decimal with too many digits: %v", err)
	}
	if err := newW().Write(&Record{ValueTyped: &Typed{Schema: s}}); err == nil {
		t.Error("typed value without Native or Raw: no error")
	}
	if err := newW().Write(&Record{ValueTyped: &Typed{Schema: s, Raw: []byte{1, 2}}}); err == nil {
		t.Error("undecodable Raw: no error")
	}

	// A writer closed without records writes nothing.
	var buf bytes.Buffer
	w, _ := p.NewWriter(&buf)
	if err := w.Close(); err != nil || buf.Len() != 0 {
		t.Errorf("empty close: err %v, %d bytes", err, buf.Len())
	}
}

func TestParquetUnsupportedSchemas(t *testing.T) {
	p := mustParquet(t, ParquetConfig{})
	for _, tc := range []struct{ schema, want string }{
		{`{"type":"record","name":"R","fields":[{"name":"u","type":["int","string"]}]}`, "field u"},
		{`{"type":"record","name":"R","fields":[{"name":"n","type":{"type":"record","name":"N","fields":[{"name":"u","type":["null","int","string"]}]}}]}`, "field n.u"},
		{`{"type":"record","name":"R","fields":[{"name":"next","type":["null","R"]}]}`, "field next"},
		{`"string"`, "not a record"},
		{`{"type":"record","name":"R","fields":[{"name":"z","type":"null"}]}`, "field z"},
	} {
		as, err := avro.Parse(tc.schema)
		if err != nil {
			t.Fatalf("%s: %v", tc.schema, err)
		}
		w, _ := p.NewWriter(io.Discard)
		err = w.Write(&Record{ValueTyped: &Typed{Schema: &Schema{Avro: as}, Native: map[string]any{}}})
		if !errors.Is(err, ErrNotSupported) || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("%s: err = %v, want ErrNotSupported naming %q", tc.schema, err, tc.want)
		}
	}
}

func TestNewParquetCodecErrors(t *testing.T) {
	for _, tc := range []struct {
		codec string
		want  error
	}{
		{"lzo", ErrNotSupported},
		{"lz4", ErrNotSupported},
		{"LZ4", ErrNotSupported},
		{"deflate", ErrInvalidConfig},
		{"snapy", ErrInvalidConfig},
	} {
		_, err := NewParquet(ParquetConfig{Codec: tc.codec})
		if !errors.Is(err, tc.want) {
			t.Errorf("%q: err = %v, want %v", tc.codec, err, tc.want)
			continue
		}
		msg := err.Error()
		for _, frag := range []string{KeyParquetCodec, fmt.Sprintf("%q", tc.codec), "none, snappy, gzip, zstd, lz4_raw, brotli"} {
			if !strings.Contains(msg, frag) {
				t.Errorf("%q: error %q lacks %q", tc.codec, msg, frag)
			}
		}
	}
	p := mustParquet(t, ParquetConfig{Codec: " "})
	if p.Codec() != "snappy" || p.Extension() != ".snappy.parquet" {
		t.Errorf("default codec %q %q", p.Codec(), p.Extension())
	}
	for _, cfg := range []ParquetConfig{{RowGroupRecords: -1}, {RowGroupBytes: -1}, {MaxReadBytes: -1}} {
		if _, err := NewParquet(cfg); !errors.Is(err, ErrInvalidConfig) {
			t.Errorf("%+v: err = %v", cfg, err)
		}
	}
}

// onlyReader hides bytes.Reader's ReaderAt so NewReader must buffer.
type onlyReader struct{ r io.Reader }

func (o onlyReader) Read(b []byte) (int, error) { return o.r.Read(b) }

func TestParquetReaderBuffering(t *testing.T) {
	s := mustRichSchema(t)
	values := richValues(t, s)
	p := mustParquet(t, ParquetConfig{})
	data := writeParquet(t, p, []*Record{typedRecord(s, values[0], 0), typedRecord(s, values[1], 1)})
	if got := readParquet(t, p, onlyReader{bytes.NewReader(data)}); len(got) != 2 {
		t.Fatalf("buffered read: %d records", len(got))
	}
	small := mustParquet(t, ParquetConfig{MaxReadBytes: int64(len(data) - 1)})
	if _, err := small.NewReader(onlyReader{bytes.NewReader(data)}); err == nil || !strings.Contains(err.Error(), "larger than") {
		t.Errorf("over the read bound: %v", err)
	}
	exact := mustParquet(t, ParquetConfig{MaxReadBytes: int64(len(data))})
	if got := readParquet(t, exact, onlyReader{bytes.NewReader(data)}); len(got) != 2 {
		t.Fatalf("at the read bound: %d records", len(got))
	}
}

func TestParquetReaderRejectsBadInput(t *testing.T) {
	s := mustRichSchema(t)
	p := mustParquet(t, ParquetConfig{})
	good := writeParquet(t, p, []*Record{typedRecord(s, richValues(t, s)[0], 0)})

	// A Parquet file without the Avro schema metadata.
	type plain struct{ A int64 }
	var noMeta bytes.Buffer
	if err := parquet.Write(&noMeta, []plain{{1}}); err != nil {
		t.Fatal(err)
	}
	// A file whose Avro schema metadata disagrees with its columns.
	other := `{"type":"record","name":"plain","fields":[{"name":"A","type":"string"}]}`
	var mismatch bytes.Buffer
	if err := parquet.Write(&mismatch, []plain{{1}}, parquet.KeyValueMetadata(ParquetAvroSchemaKey, other)); err != nil {
		t.Fatal(err)
	}
	for name, data := range map[string][]byte{
		"empty":     nil,
		"garbage":   []byte("definitely not parquet, but long enough to have a footer PAR1"),
		"truncated": good[:len(good)/2],
		"no footer": good[:len(good)-8],
		"no avro":   noMeta.Bytes(),
		"mismatch":  mismatch.Bytes(),
	} {
		rr, err := p.NewReader(bytes.NewReader(data))
		if err == nil {
			for {
				if _, err = rr.Read(); err != nil {
					break
				}
			}
			if errors.Is(err, io.EOF) {
				t.Errorf("%s: read to EOF without an error", name)
			}
		}
		if err == nil {
			t.Errorf("%s: no error", name)
		}
	}
}

func TestParquetCorruptLz4RawPage(t *testing.T) {
	page := func(h pqformat.PageHeader, body []byte) []byte {
		var proto thrift.CompactProtocol
		b, err := thrift.Marshal(&proto, &h)
		if err != nil {
			t.Fatal(err)
		}
		return append(b, body...)
	}
	valid := make([]byte, lz4.CompressBlockBound(100))
	n, err := lz4.CompressBlock(bytes.Repeat([]byte("ab"), 50), valid, nil)
	if err != nil || n == 0 {
		t.Fatalf("compress: %d %v", n, err)
	}
	good := page(pqformat.PageHeader{Type: pqformat.DataPage, UncompressedPageSize: 100, CompressedPageSize: int32(n)}, valid[:n])
	if err := checkLz4RawChunk(good); err != nil {
		t.Fatalf("valid page: %v", err)
	}
	garbage := []byte{0xf0, 0xff, 0xff, 0x01, 0x02}
	for name, chunk := range map[string][]byte{
		"garbage body": page(pqformat.PageHeader{Type: pqformat.DataPage, UncompressedPageSize: 100, CompressedPageSize: 5}, garbage),
		"second page":  append(good, page(pqformat.PageHeader{Type: pqformat.DataPage, UncompressedPageSize: 100, CompressedPageSize: 5}, garbage)...),
		"size too big": page(pqformat.PageHeader{Type: pqformat.DataPage, UncompressedPageSize: 100, CompressedPageSize: 50}, garbage),
		"huge page":    page(pqformat.PageHeader{Type: pqformat.DataPage, UncompressedPageSize: 1<<30 + 1, CompressedPageSize: 5}, garbage),
		"bad header":   {0xff, 0xff, 0xff},
	} {
		if err := checkLz4RawChunk(chunk); !errors.Is(err, errCorrupt) {
			t.Errorf("%s: err = %v, want a malformed file error", name, err)
		}
	}
}

func FuzzParquetReader(f *testing.F) {
	s := mustRichSchema(f)
	values := richValues(f, s)
	for _, codec := range []string{"none", "snappy", "gzip", "zstd", "lz4_raw", "brotli"} {
		p := mustParquet(f, ParquetConfig{Codec: codec, RowGroupRecords: 2})
		var recs []*Record
		for i, v := range values {
			recs = append(recs, typedRecord(s, v, int64(i)))
		}
		data := writeParquet(f, p, recs)
		f.Add(data)
		f.Add(data[:len(data)-9])
	}
	p := mustParquet(f, ParquetConfig{MaxReadBytes: 1 << 20})
	f.Fuzz(func(t *testing.T, data []byte) {
		rr, err := p.NewReader(bytes.NewReader(data))
		if err != nil {
			return
		}
		for range 1000 {
			if _, err := rr.Read(); err != nil {
				return
			}
		}
	})
}

// TestParquetSpoolsPagesToUnlinkedFiles checks that a row group's pages wait
// in unlinked temp files under SpoolDir (nothing is left in the directory,
// even mid-write) and that the output is readable and the same whichever
// directory is used.
func TestParquetSpoolsPagesToUnlinkedFiles(t *testing.T) {
	s := mustRichSchema(t)
	values := richValues(t, s)
	dirA, dirB := t.TempDir(), t.TempDir()
	pA := mustParquet(t, ParquetConfig{SpoolDir: dirA})
	var out bytes.Buffer
	w, err := pA.NewWriter(&out)
	if err != nil {
		t.Fatal(err)
	}
	var recs []*Record
	for i := range 20000 { // enough to fill pages, which go to the spool
		r := typedRecord(s, values[i%len(values)], int64(i))
		recs = append(recs, r)
		if err := w.Write(r); err != nil {
			t.Fatal(err)
		}
	}
	spooled := 0
	fds, _ := os.ReadDir("/proc/self/fd")
	for _, fd := range fds {
		if target, err := os.Readlink(filepath.Join("/proc/self/fd", fd.Name())); err == nil &&
			strings.HasPrefix(target, filepath.Join(dirA, "kafkas3-parquet-")) && strings.HasSuffix(target, "(deleted)") {
			spooled++
		}
	}
	if left, _ := os.ReadDir(dirA); len(left) != 0 || spooled == 0 {
		t.Fatalf("mid-write: %d files left in the spool dir, %d unlinked spool files open; want 0 and > 0", len(left), spooled)
	}
	if err := w.Close(); err != nil {
		t.Fatal(err)
	}
	if got := readParquet(t, pA, bytes.NewReader(out.Bytes())); len(got) != len(recs) {
		t.Fatalf("read %d records, want %d", len(got), len(recs))
	}
	if other := writeParquet(t, mustParquet(t, ParquetConfig{SpoolDir: dirB}), recs); !bytes.Equal(other, out.Bytes()) {
		t.Fatal("the output depends on the spool directory")
	}
	if _, err := writeParquetErr(mustParquet(t, ParquetConfig{SpoolDir: filepath.Join(dirA, "missing")}), recs); err == nil {
		t.Fatal("a spool directory that does not exist gave no error")
	}
}

// writeParquetErr writes recs and returns the first error.
func writeParquetErr(p *Parquet, recs []*Record) ([]byte, error) {
	var out bytes.Buffer
	w, err := p.NewWriter(&out)
	if err != nil {
		return nil, err
	}
	for _, r := range recs {
		if err := w.Write(r); err != nil {
			return nil, err
		}
	}
	return out.Bytes(), w.Close()
}
