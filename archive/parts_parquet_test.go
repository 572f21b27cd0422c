package archive

import (
	"context"
	"fmt"
	"io"
	"reflect"
	"sort"
	"strconv"
	"strings"
	"testing"

	"github.com/kafkas3/kafkas3/format"
	"github.com/kafkas3/kafkas3/s3store"
	"github.com/twmb/avro"
	"github.com/twmb/franz-go/pkg/kgo"
)

// readParquet reads every record of the Parquet object body.
func readParquet(t *testing.T, key, body string) []*format.Record {
	t.Helper()
	pq, err := format.NewParquet(format.ParquetConfig{Codec: "none"})
	if err != nil {
		t.Fatal(err)
	}
	rr, err := pq.NewReader(strings.NewReader(body))
	if err != nil {
		t.Fatalf("%s: %v", key, err)
	}
	var out []*format.Record
	for {
		r, err := rr.Read()
		if err == io.EOF {
			return out
		}
		if err != nil {
			t.Fatalf("%s: %v", key, err)
		}
		out = append(out, r)
	}
}

// parquetParts returns a keys and a headers PartFormat writing Parquet with
// codec.
func parquetParts(t *testing.T, codec string) *PartFormat {
	t.Helper()
	pq, err := format.NewParquet(format.ParquetConfig{Codec: codec})
	if err != nil {
		t.Fatal(err)
	}
	return &PartFormat{Format: pq, Kind: format.KindParquet}
}

func TestSinkKeysAndHeadersParquet(t *testing.T) {
	brokers := newCluster(t, 1, "kp")
	produceRecs(t, brokers,
		&kgo.Record{Topic: "kp", Key: []byte("k0"), Value: []byte(`0`), Headers: []kgo.RecordHeader{{Key: "h", Value: []byte{0xff, 0}}, {Key: "h", Value: nil}}},
		&kgo.Record{Topic: "kp", Key: []byte{}, Value: []byte(`1`), Headers: []kgo.RecordHeader{{Key: "z", Value: []byte{}}}},
		&kgo.Record{Topic: "kp", Key: []byte{1, 2, 0xfe}, Value: []byte(`2`), Headers: []kgo.RecordHeader{{Key: "b", Value: []byte("2")}, {Key: "a", Value: []byte("1")}}},
		&kgo.Record{Topic: "kp", Key: []byte("k3"), Value: []byte(`3`), Headers: []kgo.RecordHeader{{Key: "ü", Value: []byte("✓")}}},
	)
	store := s3store.NewMemory()
	cfg := testConfig(brokers, "kp")
	cfg.KeysFormat = parquetParts(t, "snappy")
	cfg.HeadersFormat = parquetParts(t, "zstd")
	sum := runSink(t, cfg, store)
	if sum.Records != 4 || sum.Objects != 6 {
		t.Fatalf("summary %+v", sum)
	}
	objs := snapshot(t, store)
	p := "topics/kp/partition=0/kp+0+"
	want := []string{
		p + "0000000000.headers.zstd.parquet", p + "0000000000.json", p + "0000000000.keys.snappy.parquet",
		p + "0000000003.headers.zstd.parquet", p + "0000000003.json", p + "0000000003.keys.snappy.parquet",
	}
	if got := keysOf(objs); !reflect.DeepEqual(got, want) {
		t.Fatalf("objects\n got %q\nwant %q", got, want)
	}

	var keys, hdrs []*format.Record
	for _, base := range []string{p + "0000000000", p + "0000000003"} {
		keys = append(keys, readParquet(t, base+".keys.snappy.parquet", objs[base+".keys.snappy.parquet"])...)
		hdrs = append(hdrs, readParquet(t, base+".headers.zstd.parquet", objs[base+".headers.zstd.parquet"])...)
	}
	if len(keys) != 4 || len(hdrs) != 4 {
		t.Fatalf("%d keys, %d headers records", len(keys), len(hdrs))
	}
	// Keys: the record RecordKey with the field key of type optional
	// bytes (Connect's OPTIONAL_BYTES: a null key is its null).
	root := keys[0].ValueTyped.Schema.Avro.Root()
	if root.Type != "record" || root.Name != "RecordKey" || len(root.Fields) != 1 || root.Fields[0].Name != "key" || optionalType(root.Fields[0].Type) != "bytes" {
		t.Fatalf("keys schema %s", keys[0].ValueTyped.Schema.Avro.String())
	}
	wantKeys := []any{[]byte("k0"), []byte{}, []byte{1, 2, 0xfe}, []byte("k3")}
	for i, k := range keys {
		got := native(t, k)
		if !reflect.DeepEqual(got, map[string]any{"key": wantKeys[i]}) {
			t.Errorf("key %d = %#v, want {key: %#v}", i, got, wantKeys[i])
		}
	}
	// Headers: the record RecordHeaders with the field headers, an array
	// of {key, value (nullable)}.
	root = hdrs[0].ValueTyped.Schema.Avro.Root()
	if root.Type != "record" || root.Name != "RecordHeaders" || len(root.Fields) != 1 || root.Fields[0].Name != "headers" || root.Fields[0].Type.Type != "array" {
		t.Fatalf("headers schema %s", hdrs[0].ValueTyped.Schema.Avro.String())
	}
	h := func(kv ...any) map[string]any {
		var list []any
		for i := 0; i < len(kv); i += 2 {
			list = append(list, map[string]any{"key": kv[i], "value": kv[i+1]})
		}
		return map[string]any{"headers": list}
	}
	wantHdrs := []map[string]any{
		h("h", "\xff\x00", "h", nil),
		h("z", ""),
		h("b", "2", "a", "1"),
		h("ü", "✓"),
	}
	for i, r := range hdrs {
		if got := native(t, r); fmt.Sprintf("%#v", got) != fmt.Sprintf("%#v", wantHdrs[i]) {
			t.Errorf("headers %d:\n got %#v\nwant %#v", i, got, wantHdrs[i])
		}
	}
}

func TestSinkStringKeysParquet(t *testing.T) {
	brokers := newCluster(t, 1, "sp")
	produceRecs(t, brokers,
		&kgo.Record{Topic: "sp", Key: []byte("a"), Value: []byte(`0`)},
		&kgo.Record{Topic: "sp", Key: []byte("bé"), Value: []byte(`1`)},
	)
	store := s3store.NewMemory()
	cfg := testConfig(brokers, "sp")
	cfg.KeyConverterClass = stringKeyConverter
	cfg.KeysFormat = parquetParts(t, "none")
	runSink(t, cfg, store)
	objs := snapshot(t, store)
	key := "topics/sp/partition=0/sp+0+0000000000.keys.parquet"
	keys := readParquet(t, key, objs[key])
	if len(keys) != 2 || len(objs) != 2 {
		t.Fatalf("objects %q, %d keys", keysOf(objs), len(keys))
	}
	if ft := optionalType(keys[0].ValueTyped.Schema.Avro.Root().Fields[0].Type); ft != "string" {
		t.Fatalf("key field type %s, want string", ft)
	}
	if got := fmt.Sprintf("%#v %#v", native(t, keys[0]), native(t, keys[1])); got != `map[string]interface {}{"key":"a"} map[string]interface {}{"key":"bé"}` {
		t.Fatalf("keys %s", got)
	}
}

// keyConverter types keys "<id>" or "v2:<id>" as records of kSchemaV1 or
// kSchemaV2, handing out a new *format.Schema each time, as a converter
// without a cache would.
type keyConverter struct{}

const (
	kSchemaV1 = `{"type":"record","name":"K","namespace":"kk","fields":[{"name":"id","type":"long"}]}`
	kSchemaV2 = `{"type":"record","name":"K","namespace":"kk","fields":[{"name":"id","type":"long"},{"name":"tag","type":["null","string"],"default":null}]}`
)

func (keyConverter) Convert(_ context.Context, _ string, isKey bool, data []byte) (*format.Typed, error) {
	if !isKey {
		return nil, fmt.Errorf("keyConverter: values are not typed")
	}
	text, s := kSchemaV1, string(data)
	v := map[string]any{}
	if rest, ok := strings.CutPrefix(s, "v2:"); ok {
		text, s = kSchemaV2, rest
		v["tag"] = "t" + rest
	}
	id, err := strconv.ParseInt(s, 10, 64)
	if err != nil {
		return nil, BadData(err)
	}
	v["id"] = id
	return &format.Typed{Schema: &format.Schema{Avro: avro.MustParse(text), Text: text}, Native: v}, nil
}

func TestSinkTypedKeysParquet(t *testing.T) {
	brokers := newCluster(t, 1, "tk")
	var recs []*kgo.Record
	for i, k := range []string{"0", "1", "2", "3", "v2:4"} {
		recs = append(recs, &kgo.Record{Topic: "tk", Key: []byte(k), Value: fmt.Appendf(nil, "%d", i)})
	}
	produceRecs(t, brokers, recs...)
	store := s3store.NewMemory()
	cfg := testConfig(brokers, "tk")
	cfg.KeyConverter = keyConverter{}
	cfg.KeysFormat = parquetParts(t, "gzip")
	runSink(t, cfg, store)
	objs := snapshot(t, store)
	// flush.size 3 closes 0..2; the new key schema at offset 4 closes 3.
	p := "topics/tk/partition=0/tk+0+"
	var keyObjs []string
	for _, k := range keysOf(objs) {
		if strings.HasSuffix(k, ".keys.gz.parquet") {
			keyObjs = append(keyObjs, k)
		}
	}
	sort.Strings(keyObjs)
	if want := []string{p + "0000000000.keys.gz.parquet", p + "0000000003.keys.gz.parquet", p + "0000000004.keys.gz.parquet"}; !reflect.DeepEqual(keyObjs, want) || len(objs) != 6 {
		t.Fatalf("objects %q", keysOf(objs))
	}
	var got []any
	for _, k := range keyObjs {
		recs := readParquet(t, k, objs[k])
		root := recs[0].ValueTyped.Schema.Avro.Root()
		if root.Name != "RecordKey" || len(root.Fields) != 1 || root.Fields[0].Type.Name != "K" || root.Fields[0].Type.Namespace != "kk" {
			t.Fatalf("%s: schema %s", k, recs[0].ValueTyped.Schema.Avro.String())
		}
		for _, r := range recs {
			got = append(got, native(t, r))
		}
	}
	want := []any{
		map[string]any{"key": map[string]any{"id": int64(0)}},
		map[string]any{"key": map[string]any{"id": int64(1)}},
		map[string]any{"key": map[string]any{"id": int64(2)}},
		map[string]any{"key": map[string]any{"id": int64(3)}},
		map[string]any{"key": map[string]any{"id": int64(4), "tag": "t4"}},
	}
	if !reflect.DeepEqual(got, want) {
		t.Fatalf("keys\n got %#v\nwant %#v", got, want)
	}
}

func TestNewAcceptsParquetParts(t *testing.T) {
	cfg := testConfig([]string{"127.0.0.1:1"}, "x")
	cfg.KeysFormat = parquetParts(t, "snappy")
	cfg.HeadersFormat = parquetParts(t, "snappy")
	if _, err := New(cfg, s3store.NewMemory(), nil); err != nil {
		t.Fatalf("parquet keys and headers: %v", err)
	}
}

// optionalType returns the type of the non-null branch of the union
// ["null", T], or "" for any other schema.
func optionalType(n avro.SchemaNode) string {
	if n.Type != "union" || len(n.Branches) != 2 || n.Branches[0].Type != "null" {
		return ""
	}
	return n.Branches[1].Type
}
