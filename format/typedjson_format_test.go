package format

import (
	"bytes"
	"testing"

	"github.com/twmb/avro"
)

// TestNewJSONTyped: New's JSON renders a typed value as JsonConverter
// would (NewTypedJSON), gzip and zstd included; a value without a schema is written
// as NewJSON writes it; the envelope keeps typed values as their bytes,
// and NewJSON ignores the schema.
func TestNewJSONTyped(t *testing.T) {
	text := `{"type":"record","name":"R","fields":[{"name":"id","type":"int"}]}`
	s := avro.MustParse(text)
	raw, err := s.Encode(map[string]any{"id": 7})
	if err != nil {
		t.Fatal(err)
	}
	typed := &Record{Topic: "t", Value: []byte("wire"), ValueTyped: &Typed{Schema: &Schema{Avro: s, Text: text}, Raw: raw}}
	plain := &Record{Topic: "t", Value: []byte("text")}
	write := func(f Format, recs ...*Record) string {
		t.Helper()
		var buf bytes.Buffer
		w, err := f.NewWriter(&buf)
		if err != nil {
			t.Fatal(err)
		}
		for _, r := range recs {
			if err := w.Write(r); err != nil {
				t.Fatal(err)
			}
		}
		if err := w.Close(); err != nil {
			t.Fatal(err)
		}
		return buf.String()
	}
	for _, cfg := range []Config{{Kind: KindJSON}, {Kind: KindJSON, Compression: CompressionGzip, CompressionLevel: -1},
		{Kind: KindJSON, Compression: CompressionZstd, CompressionLevel: -1}} {
		f, err := New(cfg)
		if err != nil {
			t.Fatal(err)
		}
		got := write(f, typed, plain)
		if cfg.Compression != CompressionNone {
			rd, err := f.NewReader(bytes.NewReader([]byte(got)))
			if err != nil {
				t.Fatal(err)
			}
			r1, err1 := rd.Read()
			r2, err2 := rd.Read()
			if err1 != nil || err2 != nil {
				t.Fatal(err1, err2)
			}
			got = string(r1.Value) + "\n" + string(r2.Value) + "\n"
		}
		if got != `{"id":7}`+"\n"+`"text"`+"\n" && got != `{"id":7}`+"\ntext\n" {
			t.Errorf("%+v: %q", cfg, got)
		}
	}
	if got := write(NewJSON(), typed); got != `"wire"`+"\n" {
		t.Errorf("NewJSON: %q", got)
	}
	env, err := New(Config{Kind: KindJSON, Envelope: true})
	if err != nil {
		t.Fatal(err)
	}
	if got := write(env, typed); !bytes.Contains([]byte(got), []byte(`"value":"d2lyZQ=="`)) {
		t.Errorf("envelope: %q", got)
	}
	if typed.Value == nil || string(typed.Value) != "wire" {
		t.Errorf("the writer changed the record: %q", typed.Value)
	}
	bad := &Record{Value: []byte("x"), ValueTyped: &Typed{}}
	w, err := NewTypedJSON().NewWriter(&bytes.Buffer{})
	if err != nil {
		t.Fatal(err)
	}
	if err := w.Write(bad); err == nil {
		t.Error("a typed value without a schema was written")
	}
	if err := w.Write(plain); err != nil {
		t.Errorf("after a rendering error: %v", err)
	}
}
