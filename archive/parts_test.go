package archive

import (
	"context"
	"errors"
	"fmt"
	"io"
	"strings"
	"testing"

	"github.com/kafkas3/kafkas3/format"
	"github.com/kafkas3/kafkas3/s3store"
	"github.com/twmb/franz-go/pkg/kgo"
)

func produceRecs(t *testing.T, brokers []string, recs ...*kgo.Record) {
	t.Helper()
	cl, err := kgo.NewClient(kgo.SeedBrokers(brokers...), kgo.RecordPartitioner(kgo.ManualPartitioner()))
	if err != nil {
		t.Fatal(err)
	}
	defer cl.Close()
	if err := cl.ProduceSync(context.Background(), recs...).FirstErr(); err != nil {
		t.Fatal(err)
	}
}

func TestSinkKeysAndHeadersJSON(t *testing.T) {
	brokers := newCluster(t, 1, "kh")
	var recs []*kgo.Record
	for i := range 5 {
		recs = append(recs, &kgo.Record{Topic: "kh", Key: fmt.Appendf(nil, "k%d", i), Value: fmt.Appendf(nil, `{"i":%d}`, i),
			Headers: []kgo.RecordHeader{{Key: "a", Value: []byte("1")}, {Key: "a", Value: fmt.Appendf(nil, "x%d", i)}, {Key: "n", Value: nil}}})
	}
	produceRecs(t, brokers, recs...)
	store := s3store.NewMemory()
	cfg := testConfig(brokers, "kh")
	cfg.KeysFormat = &PartFormat{Format: format.NewJSON(), Kind: format.KindJSON}
	cfg.HeadersFormat = &PartFormat{Format: format.NewJSON(), Kind: format.KindJSON}
	sum := runSink(t, cfg, store)
	if sum.Records != 5 || sum.Objects != 6 {
		t.Fatalf("summary %+v", sum)
	}
	got := snapshot(t, store)
	hdr := func(i int) string {
		return fmt.Sprintf(`[{"key":"a","value":"1"},{"key":"a","value":"x%d"},{"key":"n","value":null}]`, i)
	}
	p := "topics/kh/partition=0/kh+0+"
	want := map[string]string{
		p + "0000000000.json":         "{\"i\":0}\n{\"i\":1}\n{\"i\":2}\n",
		p + "0000000000.keys.json":    "\"k0\"\n\"k1\"\n\"k2\"\n",
		p + "0000000000.headers.json": hdr(0) + "\n" + hdr(1) + "\n" + hdr(2) + "\n",
		p + "0000000003.json":         "{\"i\":3}\n{\"i\":4}\n",
		p + "0000000003.keys.json":    "\"k3\"\n\"k4\"\n",
		p + "0000000003.headers.json": hdr(3) + "\n" + hdr(4) + "\n",
	}
	if fmt.Sprint(got) != fmt.Sprint(want) {
		t.Fatalf("objects:\n got %q\nwant %q", got, want)
	}
}

func TestSinkKeysAndHeadersAvro(t *testing.T) {
	brokers := newCluster(t, 1, "ka")
	produceRecs(t, brokers,
		&kgo.Record{Topic: "ka", Key: []byte("k0"), Value: []byte(`0`), Headers: []kgo.RecordHeader{{Key: "h", Value: []byte{0xff, 0}}, {Key: "h", Value: nil}}},
		&kgo.Record{Topic: "ka", Key: []byte{}, Value: []byte(`1`), Headers: []kgo.RecordHeader{{Key: "z", Value: []byte{}}}},
	)
	avroF, err := format.NewAvro(format.AvroConfig{})
	if err != nil {
		t.Fatal(err)
	}
	store := s3store.NewMemory()
	cfg := testConfig(brokers, "ka")
	cfg.KeysFormat = &PartFormat{Format: avroF, Kind: format.KindAvro}
	cfg.HeadersFormat = &PartFormat{Format: avroF, Kind: format.KindAvro}
	runSink(t, cfg, store)
	objs := snapshot(t, store)
	read := func(key string) []*format.Record {
		rr, err := avroF.NewReader(strings.NewReader(objs[key]))
		if err != nil {
			t.Fatalf("%s: %v (objects %v)", key, err, keysOf(objs))
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
	keys := read("topics/ka/partition=0/ka+0+0000000000.keys.avro")
	hdrs := read("topics/ka/partition=0/ka+0+0000000000.headers.avro")
	if len(keys) != 2 || len(hdrs) != 2 || len(objs) != 3 {
		t.Fatalf("objects %v: %d keys, %d headers", keysOf(objs), len(keys), len(hdrs))
	}
	if k0, k1 := native(t, keys[0]), native(t, keys[1]); fmt.Sprintf("%q %q", k0, k1) != `"k0" ""` {
		t.Fatalf("keys %q %q", k0, k1)
	}
	if txt := keys[0].ValueTyped.Schema.Text; !strings.Contains(txt, "bytes") {
		t.Fatalf("key schema %s", keys[0].ValueTyped.Schema.Text)
	}
	h0 := fmt.Sprintf("%#v", native(t, hdrs[0]))
	want0 := fmt.Sprintf("%#v", []any{map[string]any{"key": "h", "value": "\xff\x00"}, map[string]any{"key": "h", "value": nil}})
	if h0 != want0 {
		t.Fatalf("headers 0:\n got %s\nwant %s", h0, want0)
	}
	h1 := fmt.Sprintf("%#v", native(t, hdrs[1]))
	if want1 := fmt.Sprintf("%#v", []any{map[string]any{"key": "z", "value": ""}}); h1 != want1 {
		t.Fatalf("headers 1:\n got %s\nwant %s", h1, want1)
	}
}

func TestSinkTombstonesWrite(t *testing.T) {
	brokers := newCluster(t, 1, "tb")
	v := func(s string) []byte { return []byte(s) }
	produceRecs(t, brokers,
		&kgo.Record{Topic: "tb", Key: v("a"), Value: v("1")},
		&kgo.Record{Topic: "tb", Key: v("b"), Value: nil},
		&kgo.Record{Topic: "tb", Key: v("c"), Value: nil},
		&kgo.Record{Topic: "tb", Key: v("d"), Value: v("4")},
		&kgo.Record{Topic: "tb", Key: v("e"), Value: v("5")},
		&kgo.Record{Topic: "tb", Key: v("f"), Value: nil},
	)
	store := s3store.NewMemory()
	cfg := testConfig(brokers, "tb")
	cfg.FlushSize = 10
	cfg.NullValues = NullWrite
	cfg.KeysFormat = &PartFormat{Format: format.NewJSON(), Kind: format.KindJSON}
	sum := runSink(t, cfg, store)
	got := snapshot(t, store)
	want := map[string]string{
		"topics/tb/partition=0/tb+0+0000000000.json":      "1\n",
		"topics/tb/partition=0/tb+0+0000000000.keys.json": "\"a\"\n",
		"topics/tb/tombstone/tb+0+0000000001.keys.json":   "\"b\"\n\"c\"\n",
		"topics/tb/partition=0/tb+0+0000000003.json":      "4\n5\n",
		"topics/tb/partition=0/tb+0+0000000003.keys.json": "\"d\"\n\"e\"\n",
		"topics/tb/tombstone/tb+0+0000000005.keys.json":   "\"f\"\n",
	}
	if fmt.Sprint(got) != fmt.Sprint(want) {
		t.Fatalf("objects:\n got %q\nwant %q", got, want)
	}
	if sum.Records != 6 || sum.Objects != 6 {
		t.Fatalf("summary %+v", sum)
	}
	if c := committed(t, brokers, "connect-test", "tb"); c != 6 {
		t.Fatalf("committed %d, want 6", c)
	}

	// A custom tombstone folder.
	store = s3store.NewMemory()
	cfg.GroupID = "other"
	cfg.TombstonePartition = "deleted"
	runSink(t, cfg, store)
	if _, ok := snapshot(t, store)["topics/tb/deleted/tb+0+0000000001.keys.json"]; !ok {
		t.Fatalf("objects %v", keysOf(snapshot(t, store)))
	}
}

// TestSinkNullKeysAndNoHeadersAreKept: with store.kafka.keys a null key is
// written as null (the line null, apart from the text null), and with
// store.kafka.headers a record without headers gets an empty list; nothing
// is a bad record, nothing is dropped. The bytes keys format has no null: a
// null key there is a bad record naming its offset.
func TestSinkNullKeysAndNoHeadersAreKept(t *testing.T) {
	brokers := newCluster(t, 1, "nk")
	h := []kgo.RecordHeader{{Key: "h", Value: []byte("v")}}
	produceRecs(t, brokers,
		&kgo.Record{Topic: "nk", Key: []byte("a"), Value: []byte("0"), Headers: h},
		&kgo.Record{Topic: "nk", Key: nil, Value: []byte("1"), Headers: h},
		&kgo.Record{Topic: "nk", Key: []byte("c"), Value: []byte("2")},
		&kgo.Record{Topic: "nk", Key: []byte("null"), Value: []byte("3"), Headers: h},
	)
	cfg := testConfig(brokers, "nk")
	cfg.FlushSize = 10
	cfg.KeysFormat = &PartFormat{Format: format.NewNullableJSON(), Kind: format.KindJSON}
	cfg.HeadersFormat = &PartFormat{Format: format.NewJSON(), Kind: format.KindJSON}
	store := s3store.NewMemory()
	sum := runSink(t, cfg, store)
	if sum.Records != 4 || sum.Skipped != 0 {
		t.Fatalf("summary %+v", sum)
	}
	got := snapshot(t, store)
	p := "topics/nk/partition=0/nk+0+0000000000"
	hj := `[{"key":"h","value":"v"}]` + "\n"
	if got[p+".json"] != "0\n1\n2\n3\n" || got[p+".keys.json"] != "\"a\"\nnull\n\"c\"\n\"null\"\n" || got[p+".headers.json"] != hj+hj+"[]\n"+hj {
		t.Fatalf("objects %q", got)
	}

	cfg.GroupID = "bytes-keys"
	bytesFmt, err := format.NewBytes(format.DefaultBytesConfig())
	if err != nil {
		t.Fatal(err)
	}
	cfg.KeysFormat = &PartFormat{Format: bytesFmt, Kind: format.KindBytes}
	err = runSinkErr(t, cfg, s3store.NewMemory())
	if err == nil || !strings.Contains(err.Error(), "offset 1") || !errors.Is(err, ErrNullKeyBytes) {
		t.Fatalf("want a null key error at offset 1, got %v", err)
	}
}

func TestNewRejectsNullWriteWithoutKeys(t *testing.T) {
	cfg := testConfig([]string{"127.0.0.1:1"}, "x")
	cfg.NullValues = NullWrite
	if _, err := New(cfg, s3store.NewMemory(), nil); err == nil || !strings.Contains(err.Error(), "store.kafka.keys") {
		t.Fatalf("got %v", err)
	}
	cfg.NullValues = NullFail
	cfg.HeadersFormat = &PartFormat{Format: format.NewJSON(), Kind: format.KindBytes}
	if _, err := New(cfg, s3store.NewMemory(), nil); err == nil || !strings.Contains(err.Error(), "headers.format.class") {
		t.Fatalf("got %v", err)
	}
}
