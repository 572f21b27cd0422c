package restore

import (
	"bytes"
	"context"
	"encoding/binary"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"reflect"
	"strings"
	"testing"
	"time"

	"github.com/kafkas3/kafkas3/convert"
	"github.com/kafkas3/kafkas3/format"
	"github.com/kafkas3/kafkas3/internal/srfake"
	"github.com/kafkas3/kafkas3/partition"
	"github.com/twmb/avro"
	"github.com/twmb/franz-go/pkg/kgo"
)

const typedValueSchema = `{"type":"record","name":"order","namespace":"shop","fields":[
 {"name":"id","type":"long"},
 {"name":"item","type":["null","string"],"default":null},
 {"name":"tags","type":{"type":"array","items":"string"}},
 {"name":"day","type":{"type":"int","logicalType":"date"}}]}`

// headersSchema is Confluent's headers view: an array of {key, value}.
const headersSchema = `{"type":"array","items":{"type":"record","name":"ConnectDefault","namespace":"io.confluent.connect.avro",
 "fields":[{"name":"key","type":"string"},{"name":"value","type":["null","string"]}]}}`

func mustSchema(t *testing.T, text string) *format.Schema {
	t.Helper()
	s, err := avro.Parse(text)
	if err != nil {
		t.Fatal(err)
	}
	return &format.Schema{Avro: s, Text: text}
}

// typedRecords makes n records of typedValueSchema with natives.
func typedRecords(t *testing.T, from, n int) ([]*format.Record, []map[string]any) {
	s := mustSchema(t, typedValueSchema)
	recs := make([]*format.Record, n)
	natives := make([]map[string]any, n)
	for i := range recs {
		id := from + i
		var item any
		if id%2 == 0 {
			item = fmt.Sprintf("item-%d", id)
		}
		v := map[string]any{"id": int64(id), "item": item, "tags": []any{"a", fmt.Sprint(id)}, "day": time.Unix(0, 0).UTC().AddDate(0, 0, 19000+id)}
		natives[i] = v
		recs[i] = &format.Record{ValueTyped: &format.Typed{Schema: s, Native: v}}
	}
	return recs, natives
}

// putWith writes one object of topic/0 at start with format f and the
// given extension (".keys.avro", ...).
func (a *archive) putWith(f format.Format, topic string, start int64, ext string, recs []*format.Record) string {
	a.t.Helper()
	key := a.keys.ObjectKey(partition.ObjectName{Topic: topic, Encoded: "partition=0", Partition: 0, StartOffset: start, Ext: ext})
	a.putRaw(key, func(w io.Writer) {
		rw, err := f.NewWriter(w)
		if err != nil {
			a.t.Fatal(err)
		}
		for _, r := range recs {
			if err := rw.Write(r); err != nil {
				a.t.Fatal(err)
			}
		}
		if err := rw.Close(); err != nil {
			a.t.Fatal(err)
		}
	})
	return key
}

func startRegistry(t *testing.T) (*srfake.Server, *convert.AvroConverter) {
	t.Helper()
	s, err := srfake.Start(srfake.Config{})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = s.Close() })
	c, err := convert.NewAvro(convert.Config{Kind: convert.KindAvro, SchemaRegistryURL: s.URL()})
	if err != nil {
		t.Fatal(err)
	}
	return s, c
}

// decodeWire checks Confluent's wire format against the registry's schema
// for subject and returns the decoded value.
func decodeWire(t *testing.T, reg *srfake.Server, subject string, b []byte) any {
	t.Helper()
	if len(b) < 5 || b[0] != 0 {
		t.Fatalf("not the wire format: %x", b)
	}
	c, err := convert.NewAvro(convert.Config{Kind: convert.KindAvro, SchemaRegistryURL: reg.URL()})
	if err != nil {
		t.Fatal(err)
	}
	topic, isKey := strings.TrimSuffix(subject, "-value"), false
	if strings.HasSuffix(subject, "-key") {
		topic, isKey = strings.TrimSuffix(subject, "-key"), true
	}
	typed, err := c.Convert(context.Background(), topic, isKey, b)
	if err != nil {
		t.Fatal(err)
	}
	if typed.Schema.Version == 0 {
		t.Fatalf("schema id %d is not registered under %s", binary.BigEndian.Uint32(b[1:5]), subject)
	}
	v, err := format.AvroNative(typed)
	if err != nil {
		t.Fatal(err)
	}
	return v
}

func TestRestoreTypedAvroWithKeysAndHeaders(t *testing.T) {
	avroF, err := format.NewAvro(format.AvroConfig{Codec: format.AvroCodecSnappy})
	if err != nil {
		t.Fatal(err)
	}
	a := newArchive(t, avroF)
	recs0, nat0 := typedRecords(t, 0, 3)
	recs1, nat1 := typedRecords(t, 3, 2)
	a.put("orders", 0, 0, recs0)
	a.put("orders", 0, 3, recs1)

	// Object 0: Avro keys (string, with a null) and headers.
	keySchema := mustSchema(t, `["null","string"]`)
	hs := mustSchema(t, headersSchema)
	keyVals := []any{"k0", nil, "k2"}
	var keyRecs, hdrRecs []*format.Record
	for i, k := range keyVals {
		keyRecs = append(keyRecs, &format.Record{ValueTyped: &format.Typed{Schema: keySchema, Native: k}})
		h := []any{map[string]any{"key": "h", "value": fmt.Sprint(i)}, map[string]any{"key": "h", "value": nil}}
		if i == 1 {
			h = []any{}
		}
		hdrRecs = append(hdrRecs, &format.Record{ValueTyped: &format.Typed{Schema: hs, Native: h}})
	}
	a.putWith(avroF, "orders", 0, ".keys.avro", keyRecs)
	a.putWith(avroF, "orders", 0, ".headers.avro", hdrRecs)
	// Object 3: JSON keys and headers, as keys.format.class=json writes them.
	a.putRaw("topics/orders/partition=0/orders+0+0000000003.keys.json", func(w io.Writer) {
		io.WriteString(w, "\"k3\"\n\"null\"\n") // the text null (the line null is a null key)
	})
	a.putRaw("topics/orders/partition=0/orders+0+0000000003.headers.json", func(w io.Writer) {
		io.WriteString(w, "[{\"key\":\"x\",\"value\":\"y\"}]\n[]\n")
	})
	// A keys object without a value object (a tombstone's) is skipped.
	a.putWith(avroF, "orders", 9, ".keys.avro", keyRecs[:1])

	reg, enc := startRegistry(t)
	brokers := newCluster(t, 1, "copy")
	cfg := baseConfig(brokers, avroF, "orders")
	cfg.Rename = "copy"
	cfg.ValueEncoder = enc

	plan, err := mustNew(t, cfg, a, nil).Plan(testContext(t))
	if err != nil {
		t.Fatal(err)
	}
	tp := plan.Topics[0]
	if tp.Objects != 2 || tp.KeysObjects != 2 || tp.HeadersObjects != 2 || plan.Skipped[SkipParallelOrphan] != 1 || len(plan.Skipped) != 1 {
		t.Fatalf("plan: objects %d keys %d headers %d skipped %v", tp.Objects, tp.KeysObjects, tp.HeadersObjects, plan.Skipped)
	}
	var text bytes.Buffer
	if err := plan.WriteText(&text); err != nil || !strings.Contains(text.String(), "2 objects (2 with .keys, 2 with .headers objects)") {
		t.Fatalf("plan text (%v):\n%s", err, text.String())
	}

	sum, err := mustNew(t, cfg, a, nil).Run(testContext(t), nil)
	if err != nil {
		t.Fatal(err)
	}
	if sum.Records != 5 {
		t.Fatalf("restored %d records, want 5", sum.Records)
	}
	got := readTopic(t, brokers, "copy")[0]
	wantNat := append(nat0, nat1...)
	wantKeys := [][]byte{[]byte("k0"), nil, []byte("k2"), []byte("k3"), []byte("null")}
	wantHdrs := [][]kgo.RecordHeader{
		{{Key: "h", Value: []byte("0")}, {Key: "h"}}, nil,
		{{Key: "h", Value: []byte("2")}, {Key: "h"}},
		{{Key: "x", Value: []byte("y")}}, nil,
	}
	if len(got) != 5 {
		t.Fatalf("copy holds %d records", len(got))
	}
	for i, r := range got {
		v := decodeWire(t, reg, "copy-value", r.Value)
		if !reflect.DeepEqual(v, map[string]any(wantNat[i])) {
			t.Errorf("record %d value %#v, want %#v", i, v, wantNat[i])
		}
		if !bytes.Equal(r.Key, wantKeys[i]) || (r.Key == nil) != (wantKeys[i] == nil) {
			t.Errorf("record %d key %q, want %q", i, r.Key, wantKeys[i])
		}
		if len(r.Headers) != len(wantHdrs[i]) {
			t.Errorf("record %d headers %v, want %v", i, r.Headers, wantHdrs[i])
			continue
		}
		for j, h := range r.Headers {
			w := wantHdrs[i][j]
			if h.Key != w.Key || !bytes.Equal(h.Value, w.Value) || (h.Value == nil) != (w.Value == nil) {
				t.Errorf("record %d header %d = %q:%q, want %q:%q", i, j, h.Key, h.Value, w.Key, w.Value)
			}
		}
	}
	if n := reg.Requests("POST", "/subjects/copy-value/versions"); n != 1 {
		t.Errorf("registered the value schema %d times, want once (cached)", n)
	}

	// A re-run verifies the tail (re-encoded the same way) and produces nothing.
	sum, err = mustNew(t, cfg, a, nil).Run(testContext(t), nil)
	if err != nil || sum.Records != 0 || sum.AlreadyPresent != 5 {
		t.Fatalf("re-run: %+v, %v", sum, err)
	}
}

func TestRestoreTypedParquetKeysWithRegistry(t *testing.T) {
	pq, err := format.NewParquet(format.ParquetConfig{Codec: "zstd"})
	if err != nil {
		t.Fatal(err)
	}
	a := newArchive(t, pq)
	recs, nat := typedRecords(t, 0, 4)
	a.put("orders", 0, 0, recs)
	// Enveloped record keys in Parquet (Parquet needs a record at the top).
	ks := mustSchema(t, `{"type":"record","name":"RecordKey","fields":[{"name":"key","type":
		{"type":"record","name":"K","fields":[{"name":"id","type":"long"}]}}]}`)
	var keyRecs []*format.Record
	for i := range 4 {
		keyRecs = append(keyRecs, &format.Record{ValueTyped: &format.Typed{Schema: ks,
			Native: map[string]any{"key": map[string]any{"id": int64(i)}}}})
	}
	a.putWith(pq, "orders", 0, ".keys"+pq.Extension(), keyRecs)

	reg, enc := startRegistry(t)
	brokers := newCluster(t, 1, "copy")
	cfg := baseConfig(brokers, pq, "orders")
	cfg.Rename = "copy"
	cfg.ValueEncoder = enc

	// Record keys need a key registry.
	if _, err := mustNew(t, cfg, a, nil).Run(testContext(t), nil); !errors.Is(err, ErrNoRegistry) || !strings.Contains(err.Error(), ".keys.zstd.parquet") {
		t.Fatalf("without a key registry: %v, want ErrNoRegistry naming the keys object", err)
	}
	cfg.KeyEncoder = enc
	sum, err := mustNew(t, cfg, a, nil).Run(testContext(t), nil)
	if err != nil || sum.Records != 4 {
		t.Fatalf("%+v, %v", sum, err)
	}
	got := readTopic(t, brokers, "copy")[0]
	for i, r := range got {
		if v := decodeWire(t, reg, "copy-value", r.Value); !reflect.DeepEqual(v, map[string]any(nat[i])) {
			t.Errorf("record %d value %#v, want %#v", i, v, nat[i])
		}
		if k := decodeWire(t, reg, "copy-key", r.Key); !reflect.DeepEqual(k, map[string]any{"id": int64(i)}) {
			t.Errorf("record %d key %#v", i, k)
		}
	}
}

// TestRestoreOptionalKeysWithRegistry: the sink writes untyped keys with
// the optional schema ["null","string"]; with a key registry the target
// gets the non-null branch ("string") under copy-key, and a null stays a
// null key.
func TestRestoreOptionalKeysWithRegistry(t *testing.T) {
	avroF, err := format.NewAvro(format.AvroConfig{})
	if err != nil {
		t.Fatal(err)
	}
	a := newArchive(t, avroF)
	recs, _ := typedRecords(t, 0, 3)
	a.put("orders", 0, 0, recs)
	ks := mustSchema(t, `["null","string"]`)
	var keyRecs []*format.Record
	for _, k := range []any{"a", nil, "c"} {
		keyRecs = append(keyRecs, &format.Record{ValueTyped: &format.Typed{Schema: ks, Native: k}})
	}
	a.putWith(avroF, "orders", 0, ".keys.avro", keyRecs)
	reg, enc := startRegistry(t)
	brokers := newCluster(t, 1, "copy")
	cfg := baseConfig(brokers, avroF, "orders")
	cfg.Rename = "copy"
	cfg.ValueEncoder, cfg.KeyEncoder = enc, enc
	if sum, err := mustNew(t, cfg, a, nil).Run(testContext(t), nil); err != nil || sum.Records != 3 {
		t.Fatalf("%+v, %v", sum, err)
	}
	got := readTopic(t, brokers, "copy")[0]
	if got[1].Key != nil {
		t.Errorf("record 1 key %q, want a null key", got[1].Key)
	}
	// The key is the string branch on the wire: its length, then "a".
	if len(got[0].Key) != 7 || string(got[0].Key[5:]) != "\x02a" {
		t.Errorf("record 0 key %x, want a wire-format Avro string (no union branch)", got[0].Key)
	}
	if typed, err := enc.Convert(testContext(t), "copy", true, got[0].Key); err != nil || typed.Schema.Avro.Root().Type != "string" {
		t.Errorf("copy-key schema: %v %v", typed, err)
	}
	for _, i := range []int{0, 2} {
		if k := decodeWire(t, reg, "copy-key", got[i].Key); k != []string{"a", "", "c"}[i] {
			t.Errorf("record %d key %#v", i, k)
		}
	}
}

func TestRestoreTypedErrors(t *testing.T) {
	avroF, err := format.NewAvro(format.AvroConfig{})
	if err != nil {
		t.Fatal(err)
	}
	ctx := testContext(t)
	t.Run("no registry", func(t *testing.T) {
		a := newArchive(t, avroF)
		recs, _ := typedRecords(t, 0, 2)
		a.put("orders", 0, 0, recs)
		brokers := newCluster(t, 1, "copy")
		cfg := baseConfig(brokers, avroF, "orders")
		cfg.Rename = "copy"
		sum, err := mustNew(t, cfg, a, nil).Run(ctx, nil)
		if !errors.Is(err, ErrNoRegistry) || !strings.Contains(err.Error(), "value.converter.schema.registry.url") || sum.Records != 0 {
			t.Fatalf("%+v, %v", sum, err)
		}
	})
	for _, tc := range []struct {
		name, keys string
	}{
		{"keys object short", "\"a\"\n"},
		{"keys object long", "\"a\"\n\"b\"\n\"c\"\n"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			a := newArchive(t, avroF)
			recs, _ := typedRecords(t, 0, 2)
			a.put("orders", 0, 0, recs)
			a.putRaw("topics/orders/partition=0/orders+0+0000000000.keys.json", func(w io.Writer) { io.WriteString(w, tc.keys) })
			_, enc := startRegistry(t)
			brokers := newCluster(t, 1, "copy")
			cfg := baseConfig(brokers, avroF, "orders")
			cfg.Rename, cfg.ValueEncoder = "copy", enc
			_, err := mustNew(t, cfg, a, nil).Run(ctx, nil)
			if !errors.Is(err, ErrParallelMismatch) || !strings.Contains(err.Error(), "orders+0+0000000000.keys.json") {
				t.Fatalf("err = %v, want ErrParallelMismatch naming the keys object", err)
			}
		})
	}
	t.Run("bad headers", func(t *testing.T) {
		a := newArchive(t, format.NewJSON())
		a.put("orders", 0, 0, values("v", 0, 1))
		a.putRaw("topics/orders/partition=0/orders+0+0000000000.headers.json", func(w io.Writer) { io.WriteString(w, "[{\"key\":1}]\n") })
		brokers := newCluster(t, 1, "copy")
		cfg := baseConfig(brokers, a.f, "orders")
		cfg.Rename = "copy"
		_, err := mustNew(t, cfg, a, nil).Run(ctx, nil)
		if err == nil || !strings.Contains(err.Error(), "headers.json") || !strings.Contains(err.Error(), "key is float64") {
			t.Fatalf("err = %v", err)
		}
	})
}

// TestHeadersFromWrapsDecodeError: a .headers line that is not JSON fails
// naming the object and record, and keeps the decoder's error in the chain.
func TestHeadersFromWrapsDecodeError(t *testing.T) {
	_, err := headersFrom(&format.Record{Value: []byte("[{")}, "h.headers.json", 3)
	var syn *json.SyntaxError
	if !errors.As(err, &syn) {
		t.Fatalf("err = %v, want it to wrap a *json.SyntaxError", err)
	}
	if !strings.Contains(err.Error(), `object "h.headers.json": record 3: headers: want a JSON array`) {
		t.Errorf("err = %v", err)
	}
}
