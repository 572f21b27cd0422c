package format

import (
	"bytes"
	"compress/bzip2"
	"errors"
	"fmt"
	"io"
	"math/big"
	"math/rand/v2"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"
	"time"

	"github.com/twmb/avro"
	"github.com/twmb/avro/ocf"
)

const avroTestSchema = `{"type":"record","name":"Order","namespace":"kafkas3.test","fields":[
 {"name":"id","type":"long"},
 {"name":"name","type":"string"},
 {"name":"note","type":["null","string"],"default":null},
 {"name":"tags","type":{"type":"array","items":"string"}},
 {"name":"attrs","type":{"type":"map","values":"int"}},
 {"name":"status","type":{"type":"enum","name":"Status","symbols":["NEW","PAID","SHIPPED"]}},
 {"name":"hash","type":{"type":"fixed","name":"Hash4","size":4}},
 {"name":"price","type":{"type":"bytes","logicalType":"decimal","precision":10,"scale":2}},
 {"name":"ts","type":{"type":"long","logicalType":"timestamp-millis"}},
 {"name":"day","type":{"type":"int","logicalType":"date"}},
 {"name":"ratio","type":"double"},
 {"name":"score","type":"float"},
 {"name":"ok","type":"boolean"},
 {"name":"blob","type":"bytes"},
 {"name":"addr","type":["null",{"type":"record","name":"Addr","fields":[{"name":"city","type":"string"}]}],"default":null},
 {"name":"prev","type":["null","Addr"],"default":null}
]}`

func testAvroSchema(t testing.TB, id int, text string) *Schema {
	t.Helper()
	s, err := avro.Parse(text)
	if err != nil {
		t.Fatal(err)
	}
	return &Schema{ID: id, Version: 1, Avro: s, Text: text}
}

// avroTestNative builds record i of the test schema.
func avroTestNative(rng *rand.Rand, i int) map[string]any {
	tags := make([]any, rng.IntN(4))
	for j := range tags {
		tags[j] = fmt.Sprintf("tag-%d", rng.IntN(100))
	}
	attrs := map[string]any{}
	for j := range rng.IntN(3) {
		attrs[fmt.Sprintf("k%d", j)] = int32(rng.IntN(1000) - 500)
	}
	var note, addr, prev any
	if i%3 == 0 {
		note = fmt.Sprintf("note %d with ünïcode", i)
	}
	if i%2 == 0 {
		addr = map[string]any{"city": fmt.Sprintf("city-%d", i)}
	}
	if i%5 == 0 {
		prev = map[string]any{"city": "old"}
	}
	blob := make([]byte, rng.IntN(50))
	for j := range blob {
		blob[j] = byte(rng.IntN(256))
	}
	return map[string]any{
		"id":     int64(i) * 1_000_003,
		"name":   strings.Repeat("n", rng.IntN(40)),
		"note":   note,
		"tags":   tags,
		"attrs":  attrs,
		"status": []string{"NEW", "PAID", "SHIPPED"}[i%3],
		"hash":   [4]byte{byte(i), 1, 2, 3},
		"price":  big.NewRat(int64(rng.IntN(1_000_000)), 100),
		"ts":     time.UnixMilli(1_700_000_000_000 + int64(i)*1000).UTC(),
		"day":    time.Date(2024, 1, 1+i%300, 0, 0, 0, 0, time.UTC),
		"ratio":  rng.Float64(),
		"score":  float32(rng.IntN(1000)) / 8,
		"ok":     i%2 == 1,
		"blob":   blob,
		"addr":   addr,
		"prev":   prev,
	}
}

// avroTestRecords returns n records whose ValueTyped has Raw (fast path)
// and, when withNative, Native too; Raw is dropped when !withRaw.
func avroTestRecords(t testing.TB, s *Schema, n int, withRaw, withNative bool) []*Record {
	t.Helper()
	rng := rand.New(rand.NewPCG(1, 2))
	recs := make([]*Record, n)
	d, err := NewAvroDatum(s.Avro)
	if err != nil {
		t.Fatal(err)
	}
	for i := range recs {
		nat := avroTestNative(rng, i)
		raw, err := d.Append(nil, nat)
		if err != nil {
			t.Fatalf("encode record %d: %v", i, err)
		}
		typed := &Typed{Schema: s}
		if withRaw {
			typed.Raw = raw
		}
		if withNative {
			typed.Native = nat
		}
		recs[i] = &Record{Topic: "orders", Offset: int64(i), Value: append([]byte{0, 0, 0, 0, byte(s.ID)}, raw...), ValueTyped: typed}
	}
	return recs
}

func writeAvro(t testing.TB, cfg AvroConfig, recs []*Record) []byte {
	t.Helper()
	f, err := NewAvro(cfg)
	if err != nil {
		t.Fatal(err)
	}
	var buf bytes.Buffer
	w, err := f.NewWriter(&buf)
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

func readAvroAll(t testing.TB, data []byte) []*Record {
	t.Helper()
	f, err := NewAvro(AvroConfig{})
	if err != nil {
		t.Fatal(err)
	}
	rr, err := f.NewReader(bytes.NewReader(data))
	if err != nil {
		t.Fatal(err)
	}
	var out []*Record
	for {
		r, err := rr.Read()
		if errors.Is(err, io.EOF) {
			return out
		}
		if err != nil {
			t.Fatalf("read record %d: %v", len(out), err)
		}
		out = append(out, r)
	}
}

// bzip2OCFCodec lets twmb/avro's ocf reader read bzip2 files in tests
// (it has no bzip2 codec); it decompresses with the standard library.
type bzip2OCFCodec struct{}

func (bzip2OCFCodec) Name() string                        { return "bzip2" }
func (bzip2OCFCodec) Compress(src []byte) ([]byte, error) { return nil, errors.New("not used") }
func (bzip2OCFCodec) Decompress(src []byte) ([]byte, error) {
	return io.ReadAll(bzip2.NewReader(bytes.NewReader(src)))
}
func (bzip2OCFCodec) Close() error { return nil }

var allAvroCodecs = []AvroCodec{AvroCodecNull, AvroCodecDeflate, AvroCodecSnappy, AvroCodecBzip2, AvroCodecZstandard}

// TestAvroRoundTripAllCodecs writes records with each codec, reads them
// back with this package's reader and with twmb/avro's independent ocf
// reader, and checks every value.
func TestAvroRoundTripAllCodecs(t *testing.T) {
	s := testAvroSchema(t, 7, avroTestSchema)
	recs := avroTestRecords(t, s, 500, true, false)
	for _, codec := range allAvroCodecs {
		t.Run(codec.String(), func(t *testing.T) {
			data := writeAvro(t, AvroConfig{Codec: codec, Level: -1, BlockBytes: 8 << 10}, recs)
			datum, err := NewAvroDatum(s.Avro)
			if err != nil {
				t.Fatal(err)
			}

			got := readAvroAll(t, data)
			if len(got) != len(recs) {
				t.Fatalf("read %d records, wrote %d", len(got), len(recs))
			}
			for i, r := range got {
				if !bytes.Equal(r.Value, recs[i].ValueTyped.Raw) || !bytes.Equal(r.ValueTyped.Raw, r.Value) {
					t.Fatalf("record %d: datum bytes differ", i)
				}
				if r.ValueTyped.Schema.Text != avroTestSchema {
					t.Fatalf("record %d: schema text %q", i, r.ValueTyped.Schema.Text)
				}
				again, err := datum.Append(nil, r.ValueTyped.Native)
				if err != nil || !bytes.Equal(again, recs[i].ValueTyped.Raw) {
					t.Fatalf("record %d: native value re-encodes differently (%v)", i, err)
				}
			}

			// Independent reader.
			or, err := ocf.NewReader(bytes.NewReader(data), ocf.WithCodec(bzip2OCFCodec{}))
			if err != nil {
				t.Fatal(err)
			}
			defer or.Close()
			if got := string(or.Metadata()["avro.codec"]); got != codec.String() {
				t.Errorf("avro.codec metadata %q, want %q", got, codec)
			}
			n := 0
			for ; ; n++ {
				var v any
				err := or.Decode(&v)
				if errors.Is(err, io.EOF) {
					break
				}
				if err != nil {
					t.Fatalf("ocf record %d: %v", n, err)
				}
				if !reflect.DeepEqual(v, got[n].ValueTyped.Native) {
					t.Fatalf("ocf record %d differs:\n%#v\n%#v", n, v, got[n].ValueTyped.Native)
				}
			}
			if n != len(recs) {
				t.Fatalf("ocf read %d records, wrote %d", n, len(recs))
			}
		})
	}
}

// TestAvroFastPathEqualsSlowPath proves that appending registry bytes as
// they are gives the very file that encoding the decoded values gives.
func TestAvroFastPathEqualsSlowPath(t *testing.T) {
	s := testAvroSchema(t, 7, avroTestSchema)
	for _, codec := range allAvroCodecs {
		fast := writeAvro(t, AvroConfig{Codec: codec, Level: -1}, avroTestRecords(t, s, 300, true, false))
		slow := writeAvro(t, AvroConfig{Codec: codec, Level: -1}, avroTestRecords(t, s, 300, false, true))
		if !bytes.Equal(fast, slow) {
			t.Errorf("%s: fast path file (%d bytes) differs from slow path file (%d bytes)", codec, len(fast), len(slow))
		}
		// Records that carry both take the fast path and agree too.
		both := writeAvro(t, AvroConfig{Codec: codec, Level: -1}, avroTestRecords(t, s, 300, true, true))
		if !bytes.Equal(fast, both) {
			t.Errorf("%s: raw+native file differs", codec)
		}
	}
}

func TestAvroDeterministic(t *testing.T) {
	s := testAvroSchema(t, 7, avroTestSchema)
	for _, codec := range allAvroCodecs {
		a := writeAvro(t, AvroConfig{Codec: codec, Level: -1}, avroTestRecords(t, s, 200, true, false))
		// A fresh schema value with the same text, as after a restart.
		s2 := testAvroSchema(t, 7, avroTestSchema)
		b := writeAvro(t, AvroConfig{Codec: codec, Level: -1}, avroTestRecords(t, s2, 200, true, false))
		if !bytes.Equal(a, b) {
			t.Errorf("%s: two runs wrote different bytes", codec)
		}
	}
	// The sync marker depends on the schema: another schema, another marker.
	other := testAvroSchema(t, 8, `{"type":"record","name":"R","fields":[{"name":"f1","type":"string"}]}`)
	if avroSync(AvroCodecNull, other.Text) == avroSync(AvroCodecNull, avroTestSchema) {
		t.Error("sync marker does not depend on the schema")
	}
}

func TestAvroBlocksBounded(t *testing.T) {
	s := testAvroSchema(t, 7, avroTestSchema)
	recs := avroTestRecords(t, s, 1000, true, false)
	count := func(data []byte) int {
		f, _ := NewAvro(AvroConfig{})
		rr, err := f.NewReader(bytes.NewReader(data))
		if err != nil {
			t.Fatal(err)
		}
		for {
			if _, err := rr.Read(); err != nil {
				if !errors.Is(err, io.EOF) {
					t.Fatal(err)
				}
				return rr.(*avroReader).nblocks
			}
		}
	}
	if n := count(writeAvro(t, AvroConfig{BlockRecords: 100}, recs)); n != 10 {
		t.Errorf("BlockRecords 100: %d blocks, want 10", n)
	}
	data := writeAvro(t, AvroConfig{BlockBytes: 4096}, recs)
	totalRaw := 0
	for _, r := range recs {
		totalRaw += len(r.ValueTyped.Raw)
	}
	if n := count(data); n < totalRaw/(4096+300) || n > totalRaw/4096+1 {
		t.Errorf("BlockBytes 4096: %d blocks for %d bytes", n, totalRaw)
	}
	if n, want := count(writeAvro(t, AvroConfig{}, recs)), totalRaw/DefaultAvroBlockBytes+1; n != want {
		t.Errorf("defaults: %d blocks for %d bytes, want %d", n, totalRaw, want)
	}
}

func TestAvroWriterErrors(t *testing.T) {
	s := testAvroSchema(t, 7, avroTestSchema)
	recs := avroTestRecords(t, s, 3, true, false)
	want := writeAvro(t, AvroConfig{}, recs)

	f, _ := NewAvro(AvroConfig{})
	var buf bytes.Buffer
	w, _ := f.NewWriter(&buf)
	write := func(r *Record) error { return w.Write(r) }
	if err := write(recs[0]); err != nil {
		t.Fatal(err)
	}
	other := testAvroSchema(t, 9, `{"type":"record","name":"R","fields":[{"name":"f1","type":"string"}]}`)
	bad := []struct {
		name string
		rec  *Record
		want error
	}{
		{"other schema", &Record{Topic: "orders", Offset: 50, Value: []byte{1}, ValueTyped: &Typed{Schema: other, Raw: []byte{2, 'a'}}}, ErrSchemaChanged},
		{"no schema", &Record{Topic: "orders", Offset: 51, Value: []byte(`{}`)}, ErrNoSchema},
		{"null value", &Record{Topic: "orders", Offset: 52}, ErrNullValue},
		{"truncated raw", &Record{Topic: "orders", Offset: 53, Value: []byte{1}, ValueTyped: &Typed{Schema: s, Raw: recs[1].ValueTyped.Raw[:10]}}, ErrBadAvro},
		{"trailing bytes", &Record{Topic: "orders", Offset: 54, Value: []byte{1}, ValueTyped: &Typed{Schema: s, Raw: append(bytes.Clone(recs[1].ValueTyped.Raw), 0)}}, ErrBadAvro},
		{"bad native", &Record{Topic: "orders", Offset: 55, Value: []byte{1}, ValueTyped: &Typed{Schema: s, Native: map[string]any{"id": "not a long"}}}, ErrBadAvro},
		{"schema without Avro", &Record{Topic: "orders", Offset: 56, Value: []byte{1}, ValueTyped: &Typed{Schema: &Schema{ID: 7}}}, ErrNoSchema},
	}
	for _, b := range bad {
		err := write(b.rec)
		if !errors.Is(err, b.want) {
			t.Errorf("%s: %v, want %v", b.name, err, b.want)
		}
		if err != nil && !strings.Contains(err.Error(), fmt.Sprintf("offset %d", b.rec.Offset)) {
			t.Errorf("%s: error %q does not name the offset", b.name, err)
		}
	}
	// Same id, same schema: accepted even from another *Schema value.
	same := *recs[1]
	same.ValueTyped = &Typed{Schema: testAvroSchema(t, 7, avroTestSchema), Raw: recs[1].ValueTyped.Raw}
	if err := write(&same); err != nil {
		t.Fatal(err)
	}
	if err := write(recs[2]); err != nil {
		t.Fatal(err)
	}
	if err := w.Close(); err != nil {
		t.Fatal(err)
	}
	if !bytes.Equal(buf.Bytes(), want) {
		t.Error("rejected records changed the file")
	}
	if err := w.Write(recs[0]); !errors.Is(err, ErrClosed) {
		t.Errorf("write after close: %v", err)
	}
	if err := w.Close(); err != nil {
		t.Errorf("second close: %v", err)
	}

	// A writer that got nothing writes nothing.
	var empty bytes.Buffer
	ew, _ := f.NewWriter(&empty)
	if err := ew.Close(); err != nil || empty.Len() != 0 {
		t.Errorf("empty writer: %v, %d bytes", err, empty.Len())
	}
}

func TestAvroSameSchema(t *testing.T) {
	a := &Schema{ID: 1, Text: `"string"`}
	cases := []struct {
		a, b *Schema
		want bool
	}{
		{a, a, true},
		{a, &Schema{ID: 1, Text: `"long"`}, true}, // ids decide
		{a, &Schema{ID: 2, Text: `"string"`}, false},
		{a, &Schema{Text: `"string"`}, true}, // id 0: text decides
		{&Schema{Text: `"long"`}, &Schema{Text: `"string"`}, false},
		{nil, a, false},
	}
	for i, c := range cases {
		if got := SameAvroSchema(c.a, c.b); got != c.want {
			t.Errorf("case %d: %v, want %v", i, got, c.want)
		}
	}
}

func TestAvroConfig(t *testing.T) {
	for in, want := range map[string]AvroCodec{"": AvroCodecNull, "null": AvroCodecNull, "Deflate": AvroCodecDeflate,
		" snappy ": AvroCodecSnappy, "bzip2": AvroCodecBzip2, "zstandard": AvroCodecZstandard, "zstd": AvroCodecZstandard} {
		got, err := ParseAvroCodec(in)
		if err != nil || got != want {
			t.Errorf("ParseAvroCodec(%q) = %v, %v; want %v", in, got, err, want)
		}
	}
	if _, err := ParseAvroCodec("xz"); !errors.Is(err, ErrInvalidConfig) || !strings.Contains(err.Error(), KeyAvroCodec) {
		t.Errorf("xz: %v", err)
	}
	for _, cfg := range []AvroConfig{{Codec: AvroCodecDeflate, Level: 10}, {Codec: AvroCodecZstandard, Level: 23},
		{Codec: AvroCodec(42)}, {BlockBytes: -1}} {
		if _, err := NewAvro(cfg); !errors.Is(err, ErrInvalidConfig) {
			t.Errorf("NewAvro(%+v): %v", cfg, err)
		}
	}
	f, err := NewAvro(AvroConfig{Codec: AvroCodecDeflate, Level: 9})
	if err != nil || f.Extension() != ".avro" {
		t.Errorf("extension %q, %v", f.Extension(), err)
	}
}

// TestAvroReadsForeignFiles reads files twmb/avro's ocf writer made (random
// sync marker, its own block sizes) for each codec it has.
func TestAvroReadsForeignFiles(t *testing.T) {
	s := testAvroSchema(t, 0, avroTestSchema)
	recs := avroTestRecords(t, s, 300, true, true)
	codecs := map[string]ocf.Codec{"null": nil, "deflate": ocf.DeflateCodec(6), "snappy": ocf.SnappyCodec(),
		"zstandard": ocf.MustZstdCodec(nil, nil)}
	for name, c := range codecs {
		var buf bytes.Buffer
		opts := []ocf.WriterOpt{ocf.WithBlockCount(37), ocf.WithMetadata(map[string][]byte{"x.custom": []byte("v")})}
		if c != nil {
			opts = append(opts, ocf.WithCodec(c))
		}
		w, err := ocf.NewWriter(&buf, s.Avro, opts...)
		if err != nil {
			t.Fatal(err)
		}
		for _, r := range recs {
			if err := w.Encode(r.ValueTyped.Native); err != nil {
				t.Fatal(err)
			}
		}
		if err := w.Close(); err != nil {
			t.Fatal(err)
		}
		got := readAvroAll(t, buf.Bytes())
		if len(got) != len(recs) {
			t.Fatalf("%s: %d records, want %d", name, len(got), len(recs))
		}
		datum, err := NewAvroDatum(s.Avro)
		if err != nil {
			t.Fatal(err)
		}
		for i := range got {
			// Foreign map order is random: compare canonical encodings.
			canon, err := datum.Append(nil, got[i].ValueTyped.Native)
			if err != nil || !bytes.Equal(canon, recs[i].ValueTyped.Raw) || !bytes.Equal(got[i].Value, got[i].ValueTyped.Raw) {
				t.Fatalf("%s: record %d differs", name, i)
			}
		}
	}
}

func TestAvroReaderRejectsBadFiles(t *testing.T) {
	s := testAvroSchema(t, 7, avroTestSchema)
	good := writeAvro(t, AvroConfig{Codec: AvroCodecSnappy, BlockRecords: 10}, avroTestRecords(t, s, 30, true, false))
	f, _ := NewAvro(AvroConfig{})
	readAll := func(data []byte) (int, error) {
		rr, err := f.NewReader(bytes.NewReader(data))
		if err != nil {
			return 0, err
		}
		n := 0
		for {
			_, err := rr.Read()
			if errors.Is(err, io.EOF) {
				return n, nil
			}
			if err != nil {
				return n, err
			}
			n++
		}
	}
	if n, err := readAll(good); n != 30 || err != nil {
		t.Fatalf("good file: %d, %v", n, err)
	}
	// Every strict prefix fails, except those ending on a block boundary,
	// which read fewer records cleanly; never a panic.
	clean := 0
	for i := range len(good) {
		n, err := readAll(good[:i])
		if err == nil {
			clean++
			if n%10 != 0 || n == 30 {
				t.Fatalf("prefix %d read %d records cleanly", i, n)
			}
		} else if !errors.Is(err, ErrBadAvro) {
			t.Fatalf("prefix %d: error %v does not wrap ErrBadAvro", i, err)
		}
	}
	if clean != 3 { // after the header and after blocks 1 and 2
		t.Errorf("%d clean prefixes, want 3", clean)
	}
	// A flipped byte in the last block's data or sync is caught.
	for _, off := range []int{len(good) - 1, len(good) - 20} {
		bad := bytes.Clone(good)
		bad[off] ^= 0xff
		if _, err := readAll(bad); !errors.Is(err, ErrBadAvro) {
			t.Errorf("flipped byte at %d: %v", off, err)
		}
	}
	for name, data := range map[string][]byte{
		"empty":     nil,
		"magic":     []byte("Obj\x02"),
		"no schema": append(append([]byte("Obj\x01"), 0), make([]byte, 16)...),
	} {
		if _, err := readAll(data); !errors.Is(err, ErrBadAvro) {
			t.Errorf("%s: %v", name, err)
		}
	}
}

func TestAvroRecursiveSchemaSkip(t *testing.T) {
	text := `{"type":"record","name":"Node","fields":[{"name":"v","type":"int"},{"name":"next","type":["null","Node"]}]}`
	s := testAvroSchema(t, 3, text)
	var list any
	for i := range 5 {
		list = map[string]any{"v": int32(i), "next": list}
	}
	raw, err := s.Avro.Encode(list)
	if err != nil {
		t.Fatal(err)
	}
	data := writeAvro(t, AvroConfig{}, []*Record{{Value: raw, ValueTyped: &Typed{Schema: s, Raw: raw}}})
	got := readAvroAll(t, data)
	if len(got) != 1 || !bytes.Equal(got[0].Value, raw) {
		t.Fatal("recursive record did not round-trip")
	}
	d, err := NewAvroDatum(s.Avro)
	if err != nil {
		t.Fatal(err)
	}
	if err := d.Check(raw[:len(raw)-1]); !errors.Is(err, ErrBadAvro) {
		t.Errorf("truncated recursive datum: %v", err)
	}
	if err := d.Check(raw); err != nil {
		t.Error(err)
	}
}

// TestAvroDatumDeterministicMaps: Go maps iterate in random order, yet
// Append writes map entries sorted, in one block, every time; Check accepts
// the multi-block form (negative counts with byte sizes) other writers use.
func TestAvroDatumDeterministicMaps(t *testing.T) {
	s := testAvroSchema(t, 1, `{"type":"record","name":"R","fields":[{"name":"m","type":{"type":"map","values":{"type":"array","items":{"type":"map","values":"long"}}}}]}`)
	d, err := NewAvroDatum(s.Avro)
	if err != nil {
		t.Fatal(err)
	}
	inner := map[string]any{}
	outer := map[string]any{}
	for i := range 30 {
		inner[fmt.Sprintf("i%02d", i)] = int64(i)
	}
	for i := range 30 {
		outer[fmt.Sprintf("o%02d", 29-i)] = []any{inner, map[string]any{}}
	}
	v := map[string]any{"m": outer}
	first, err := d.Append(nil, v)
	if err != nil {
		t.Fatal(err)
	}
	for range 20 {
		again, err := d.Append(nil, v)
		if err != nil || !bytes.Equal(again, first) {
			t.Fatalf("Append is not deterministic (%v)", err)
		}
	}
	var back map[string]any
	if _, err := s.Avro.Decode(first, &back); err != nil {
		t.Fatal(err)
	}
	if !reflect.DeepEqual(back, map[string]any{"m": outer}) {
		t.Fatal("canonical bytes decode to another value")
	}
	// Keys come out sorted: "o00" is the first key after the map's count.
	if i := bytes.Index(first, []byte("o00")); i < 0 || i > 4 {
		t.Errorf("first key at %d, want sorted", i)
	}
	// A two-block map with negative counts and byte sizes, as Java may write.
	ms := testAvroSchema(t, 2, `{"type":"map","values":"int"}`)
	md, _ := NewAvroDatum(ms.Avro)
	// count -1 (zigzag 1), byte size 2 (zigzag 4), "b":1; count 1, "a":2; end.
	multi := []byte{1, 4, 2, 'b', 2, 2, 2, 'a', 4, 0}
	if err := md.Check(multi); err != nil {
		t.Fatalf("multi-block map: %v", err)
	}
	var mv any
	if _, err := ms.Avro.Decode(multi, &mv); err != nil {
		t.Fatal(err)
	}
	canon, err := md.Append(nil, mv)
	if err != nil || !bytes.Equal(canon, []byte{4, 2, 'a', 4, 2, 'b', 2, 0}) {
		t.Errorf("canonical multi-block map = %v, %v", canon, err)
	}
	if err := md.Check([]byte{1, 4, 2, 'b'}); !errors.Is(err, ErrBadAvro) {
		t.Errorf("truncated map: %v", err)
	}
}

func TestAvroNative(t *testing.T) {
	s := testAvroSchema(t, 7, avroTestSchema)
	recs := avroTestRecords(t, s, 2, true, true)
	typed := &Typed{Schema: s, Raw: recs[0].ValueTyped.Raw}
	v, err := AvroNative(typed)
	if err != nil {
		t.Fatal(err)
	}
	d, _ := NewAvroDatum(s.Avro)
	again, err := d.Append(nil, v)
	if err != nil || !bytes.Equal(again, typed.Raw) || typed.Native == nil {
		t.Fatalf("AvroNative: %v", err)
	}
	if _, err := AvroNative(&Typed{Schema: s, Raw: append(bytes.Clone(typed.Raw), 1)}); !errors.Is(err, ErrBadAvro) {
		t.Errorf("trailing byte: %v", err)
	}
	if v, err := AvroNative(nil); v != nil || err != nil {
		t.Errorf("nil: %v %v", v, err)
	}
}

// TestAvroWriteSample writes a sample .avro (deflate) and a .jsonl of the
// expected values (Avro JSON encoding) for the integration checks that
// read it with other Avro libraries. With KAFKAS3_AVRO_SAMPLE set, the
// files go to that path (and path+".jsonl"); otherwise to a temp dir. It
// checks the written file reads back either way.
func TestAvroWriteSample(t *testing.T) {
	path := os.Getenv("KAFKAS3_AVRO_SAMPLE")
	if path == "" {
		path = filepath.Join(t.TempDir(), "sample.avro")
	}
	s := testAvroSchema(t, 1, avroTestSchema)
	recs := avroTestRecords(t, s, 50, true, true)
	data := writeAvro(t, AvroConfig{Codec: AvroCodecDeflate, Level: -1}, recs)
	if err := os.WriteFile(path, data, 0o644); err != nil {
		t.Fatal(err)
	}
	var jl bytes.Buffer
	for _, r := range recs {
		j, err := s.Avro.EncodeJSON(r.ValueTyped.Native)
		if err != nil {
			t.Fatal(err)
		}
		jl.Write(j)
		jl.WriteByte('\n')
	}
	if err := os.WriteFile(path+".jsonl", jl.Bytes(), 0o644); err != nil {
		t.Fatal(err)
	}
	back, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	if got := readAvroAll(t, back); len(got) != len(recs) {
		t.Fatalf("sample holds %d records, want %d", len(got), len(recs))
	}
}

func FuzzAvroReader(f *testing.F) {
	s := testAvroSchema(f, 7, avroTestSchema)
	recs := avroTestRecords(f, s, 20, true, false)
	for _, codec := range allAvroCodecs {
		f.Add(writeAvro(f, AvroConfig{Codec: codec, BlockRecords: 7}, recs))
	}
	small := testAvroSchema(f, 1, `{"type":"record","name":"R","fields":[{"name":"a","type":{"type":"array","items":["null","long"]}},{"name":"m","type":{"type":"map","values":"string"}}]}`)
	raw, _ := small.Avro.Encode(map[string]any{"a": []any{nil, int64(3)}, "m": map[string]any{"k": "v"}})
	f.Add(writeAvro(f, AvroConfig{}, []*Record{{Value: raw, ValueTyped: &Typed{Schema: small, Raw: raw}}}))
	f.Add([]byte("Obj\x01"))
	format, _ := NewAvro(AvroConfig{})
	f.Fuzz(func(t *testing.T, data []byte) {
		rr, err := format.NewReader(bytes.NewReader(data))
		if err != nil {
			return
		}
		for range 100_000 {
			r, err := rr.Read()
			if err != nil {
				return
			}
			if r.ValueTyped == nil || !bytes.Equal(r.Value, r.ValueTyped.Raw) {
				t.Fatal("record without matching typed value")
			}
		}
	})
}

func TestAvroDatumHostileCounts(t *testing.T) {
	s := testAvroSchema(t, 1, `{"type":"array","items":{"type":"array","items":"null"}}`)
	d, err := NewAvroDatum(s.Avro)
	if err != nil {
		t.Fatal(err)
	}
	// Outer count 60000, each inner count 60000 of zero-byte nulls: 3.6e9
	// items in a few hundred kilobytes unless the item budget stops it.
	var raw []byte
	raw = appendAvroLong(raw, 60000)
	for range 60000 {
		raw = appendAvroLong(raw, 60000)
		raw = appendAvroLong(raw, 0)
	}
	raw = appendAvroLong(raw, 0)
	start := time.Now()
	if err := d.Check(raw); !errors.Is(err, ErrBadAvro) {
		t.Errorf("hostile counts: %v", err)
	}
	if el := time.Since(start); el > 5*time.Second {
		t.Errorf("check took %v", el)
	}
}

// FuzzAvroDatumCheck: Check never panics, and what it accepts the Avro
// library decodes completely.
func FuzzAvroDatumCheck(f *testing.F) {
	s := testAvroSchema(f, 7, avroTestSchema)
	d, err := NewAvroDatum(s.Avro)
	if err != nil {
		f.Fatal(err)
	}
	for _, r := range avroTestRecords(f, s, 10, true, false) {
		f.Add(r.ValueTyped.Raw)
	}
	f.Fuzz(func(t *testing.T, raw []byte) {
		if d.Check(raw) != nil {
			return
		}
		var v any
		rest, err := s.Avro.Decode(raw, &v)
		if err != nil || len(rest) != 0 {
			t.Fatalf("Check accepted what Decode refuses: %v, %d left", err, len(rest))
		}
	})
}

func benchmarkAvroWrite(b *testing.B, withRaw bool) {
	s := testAvroSchema(b, 7, avroTestSchema)
	recs := avroTestRecords(b, s, 1000, withRaw, !withRaw)
	f, _ := NewAvro(AvroConfig{})
	size := 0
	for _, r := range recs {
		size += len(r.Value)
	}
	b.SetBytes(int64(size))
	b.ReportAllocs()
	for b.Loop() {
		w, _ := f.NewWriter(io.Discard)
		for _, r := range recs {
			if err := w.Write(r); err != nil {
				b.Fatal(err)
			}
		}
		if err := w.Close(); err != nil {
			b.Fatal(err)
		}
	}
}

// BenchmarkAvroWriteFast appends registry bytes (checked, not decoded);
// BenchmarkAvroWriteSlow encodes decoded values. 1000 records per op.
func BenchmarkAvroWriteFast(b *testing.B) { benchmarkAvroWrite(b, true) }
func BenchmarkAvroWriteSlow(b *testing.B) { benchmarkAvroWrite(b, false) }
