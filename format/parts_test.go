package format

import (
	"errors"
	"testing"

	"github.com/twmb/avro"
)

// TestKeyPart: each keys format turns a key into its record: JSON keeps
// the bytes (a typed key rendered as JsonConverter would), bytes refuses
// a null key, Avro gives untyped keys the optional bytes (string with
// string keys) schema, Parquet wraps the key in the record RecordKey, one
// envelope per key schema.
func TestKeyPart(t *testing.T) {
	rec := &Record{Topic: "t", Partition: 1, Offset: 7, Key: []byte("k"), Value: []byte("v")}
	part := func(k Kind, stringKeys bool) *KeyPart {
		t.Helper()
		p, err := NewKeyPart(k, stringKeys)
		if err != nil {
			t.Fatal(err)
		}
		return p
	}
	out, err := part(KindJSON, false).Record(rec)
	if err != nil || string(out.Value) != "k" || out.ValueTyped != nil || out.Offset != 7 || out.Topic != "t" || out.Partition != 1 {
		t.Errorf("json: %+v, %v", out, err)
	}
	text := `{"type":"record","name":"K","fields":[{"name":"id","type":"int"}]}`
	ks := &Schema{Avro: avro.MustParse(text), Text: text}
	typed := &Record{Key: []byte("wire"), KeyTyped: &Typed{Schema: ks, Native: map[string]any{"id": int32(3)}}}
	if out, err := part(KindJSON, false).Record(typed); err != nil || string(out.Value) != `{"id":3}` {
		t.Errorf("json typed: %+v, %v", out, err)
	}
	if _, err := part(KindBytes, false).Record(&Record{Offset: 1}); !errors.Is(err, ErrNullKeyBytes) {
		t.Errorf("bytes null key: %v", err)
	}
	for _, stringKeys := range []bool{false, true} {
		out, err := part(KindAvro, stringKeys).Record(rec)
		want, native := `["null","bytes"]`, any([]byte("k"))
		if stringKeys {
			want, native = `["null","string"]`, "k"
		}
		if err != nil || out.ValueTyped == nil || out.ValueTyped.Schema.Text != want || !equalNative(out.ValueTyped.Native, native) {
			t.Errorf("avro (string keys %v): %+v, %v", stringKeys, out, err)
		}
		null, err := part(KindAvro, stringKeys).Record(&Record{})
		if err != nil || null.Value == nil || len(null.Value) != 0 || null.ValueTyped.Native != nil {
			t.Errorf("avro null key: %+v, %v", null, err)
		}
	}
	pq := part(KindParquet, false)
	a, err := pq.Record(typed)
	if err != nil {
		t.Fatal(err)
	}
	b, err := pq.Record(typed)
	if err != nil {
		t.Fatal(err)
	}
	m, ok := a.ValueTyped.Native.(map[string]any)
	if a.ValueTyped.Schema != b.ValueTyped.Schema || a.ValueTyped.Schema.Avro.Root().Name != "RecordKey" || !ok || m["key"] == nil {
		t.Errorf("parquet: %+v / %+v", a.ValueTyped, b.ValueTyped)
	}
}

func equalNative(a, b any) bool {
	if ab, ok := a.([]byte); ok {
		bb, ok := b.([]byte)
		return ok && string(ab) == string(bb)
	}
	return a == b
}

// TestHeadersPart: JSON headers are a JSON array (values must be UTF-8),
// Avro the array of {key, value}, Parquet that array in RecordHeaders.
func TestHeadersPart(t *testing.T) {
	rec := &Record{Offset: 2, Headers: []Header{{Key: "a", Value: []byte("1")}, {Key: "n"}}}
	part := func(k Kind) *HeadersPart {
		t.Helper()
		p, err := NewHeadersPart(k)
		if err != nil {
			t.Fatal(err)
		}
		return p
	}
	if out, err := part(KindJSON).Record(rec); err != nil || string(out.Value) != `[{"key":"a","value":"1"},{"key":"n","value":null}]` {
		t.Errorf("json: %+v, %v", out, err)
	}
	if _, err := part(KindJSON).Record(&Record{Headers: []Header{{Key: "b", Value: []byte{0xff}}}}); err == nil {
		t.Error("json took a header value that is not UTF-8")
	}
	out, err := part(KindAvro).Record(rec)
	list, ok := out.ValueTyped.Native.([]any)
	if err != nil || !ok || len(list) != 2 || out.Value == nil || out.ValueTyped.Schema.Text != headersSchemaText {
		t.Errorf("avro: %+v, %v", out, err)
	}
	out, err = part(KindParquet).Record(&Record{})
	m, ok := out.ValueTyped.Native.(map[string]any)
	if err != nil || !ok || out.ValueTyped.Schema.Avro.Root().Name != "RecordHeaders" || len(m["headers"].([]any)) != 0 {
		t.Errorf("parquet: %+v, %v", out, err)
	}
}
