package format

import (
	"bytes"
	"errors"
	"fmt"
	"io"
	"strings"
	"testing"
	"time"
)

// envelopeTestRecords are hostile records: nil and empty keys, values and
// header values, duplicate headers, a tombstone, every byte value, CR/LF and
// quotes, a 300 KB value, old and negative timestamps, every timestamp type.
func envelopeTestRecords() []*Record {
	ts := time.UnixMilli(1700000000123)
	all := make([]byte, 256)
	for i := range all {
		all[i] = byte(i)
	}
	big := bytes.Repeat([]byte("0123456789\n"), 300_000/11)
	return []*Record{
		{Partition: 2, Offset: 10, Timestamp: ts, Key: []byte("k"), Value: []byte(`{"a":1}`),
			Headers: []Header{{"h", []byte("v")}, {"h", nil}, {"h", []byte{}}, {"ü", []byte{0xff}}}},
		{Partition: 2, Offset: 11, Timestamp: time.UnixMilli(0), TimestampType: TimestampLogAppendTime},
		{Partition: 2, Offset: 13, Timestamp: time.UnixMilli(-1), TimestampType: -1, Key: []byte{}, Value: []byte{},
			Headers: []Header{{"", nil}}},
		{Partition: 2, Offset: 14, Timestamp: ts, Key: []byte("line\r\n\"q\""), Value: all},
		{Partition: 2, Offset: 15, Timestamp: time.UnixMilli(86_400_000), Key: []byte("ключ ✓"), Value: big,
			Headers: []Header{{"b", []byte("2")}, {"a", []byte("1")}}},
	}
}

// sameEnvelope compares every property an envelope holds.
func sameEnvelope(t *testing.T, i int, got, want *Record) {
	t.Helper()
	optEq := func(a, b []byte) bool { return bytes.Equal(a, b) && (a == nil) == (b == nil) }
	switch {
	case got.Partition != want.Partition, got.Offset != want.Offset:
		t.Errorf("record %d: partition/offset %d/%d, want %d/%d", i, got.Partition, got.Offset, want.Partition, want.Offset)
	case got.Timestamp.UnixMilli() != want.Timestamp.UnixMilli(), got.TimestampType != want.TimestampType:
		t.Errorf("record %d: timestamp %d %v, want %d %v", i, got.Timestamp.UnixMilli(), got.TimestampType, want.Timestamp.UnixMilli(), want.TimestampType)
	case !optEq(got.Key, want.Key):
		t.Errorf("record %d: key %q (nil %v), want %q (nil %v)", i, got.Key, got.Key == nil, want.Key, want.Key == nil)
	case !optEq(got.Value, want.Value):
		t.Errorf("record %d: value (%d bytes, nil %v), want (%d bytes, nil %v)", i, len(got.Value), got.Value == nil, len(want.Value), want.Value == nil)
	case len(got.Headers) != len(want.Headers):
		t.Errorf("record %d: %d headers, want %d", i, len(got.Headers), len(want.Headers))
	default:
		for j, h := range want.Headers {
			if g := got.Headers[j]; g.Key != h.Key || !optEq(g.Value, h.Value) {
				t.Errorf("record %d header %d: %q=%q (nil %v), want %q=%q (nil %v)", i, j, g.Key, g.Value, g.Value == nil, h.Key, h.Value, h.Value == nil)
			}
		}
	}
}

func writeRecords(t testing.TB, f Format, recs []*Record) []byte {
	t.Helper()
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

func readAll(t testing.TB, rd RecordReader) []*Record {
	t.Helper()
	var out []*Record
	for {
		r, err := rd.Read()
		if errors.Is(err, io.EOF) {
			return out
		}
		if err != nil {
			t.Fatalf("read record %d: %v", len(out), err)
		}
		out = append(out, r)
	}
}

func mustFormat(t testing.TB, cfg Config) Format {
	t.Helper()
	f, err := New(cfg)
	if err != nil {
		t.Fatal(err)
	}
	return f
}

// TestJSONEnvelopeGolden pins the JSON envelope's bytes (checked against
// Python's json.dumps and base64) and reads them back exactly.
func TestJSONEnvelopeGolden(t *testing.T) {
	recs := envelopeTestRecords()[:4]
	recs[2].Headers = []Header{{"\xff\"\n", nil}}
	golden := `{"partition":2,"offset":10,"timestamp":1700000000123,"timestamp_type":"CreateTime","key":"aw==","value":"eyJhIjoxfQ==","headers":[{"key":"h","value":"dg=="},{"key":"h","value":null},{"key":"h","value":""},{"key":"ü","value":"/w=="}]}
{"partition":2,"offset":11,"timestamp":0,"timestamp_type":"LogAppendTime","key":null,"value":null,"headers":[]}
{"partition":2,"offset":13,"timestamp":-1,"timestamp_type":"NoTimestampType","key":"","value":"","headers":[{"key":"\udcff\"\n","value":null}]}
{"partition":2,"offset":14,"timestamp":1700000000123,"timestamp_type":"CreateTime","key":"bGluZQ0KInEi","value":"AAECAwQFBgcICQoLDA0ODxAREhMUFRYXGBkaGxwdHh8gISIjJCUmJygpKissLS4vMDEyMzQ1Njc4OTo7PD0+P0BBQkNERUZHSElKS0xNTk9QUVJTVFVWV1hZWltcXV5fYGFiY2RlZmdoaWprbG1ub3BxcnN0dXZ3eHl6e3x9fn+AgYKDhIWGh4iJiouMjY6PkJGSk5SVlpeYmZqbnJ2en6ChoqOkpaanqKmqq6ytrq+wsbKztLW2t7i5uru8vb6/wMHCw8TFxsfIycrLzM3Oz9DR0tPU1dbX2Nna29zd3t/g4eLj5OXm5+jp6uvs7e7v8PHy8/T19vf4+fr7/P3+/w==","headers":[]}
`
	f := mustFormat(t, Config{Kind: KindJSON, Envelope: true})
	if f.Extension() != ".json" {
		t.Errorf("extension %q", f.Extension())
	}
	got := writeRecords(t, f, recs)
	if string(got) != golden {
		t.Fatalf("JSON envelope bytes:\n%s\nwant:\n%s", got, golden)
	}
	rd, err := f.NewReader(bytes.NewReader(got))
	if err != nil {
		t.Fatal(err)
	}
	back := readAll(t, rd)
	if len(back) != len(recs) {
		t.Fatalf("read %d records, want %d", len(back), len(recs))
	}
	for i := range recs {
		sameEnvelope(t, i, back[i], recs[i])
	}
}

// TestEnvelopeRoundTripEveryFormat writes the hostile records with the
// JSON (plain, gzip and zstd), Avro (every codec) and Parquet envelopes, checks
// that writing twice gives the same bytes, and reads every property back,
// through the envelope format's reader and through detection on the plain
// format's reader.
func TestEnvelopeRoundTripEveryFormat(t *testing.T) {
	cfgs := map[string]Config{
		"json":         {Kind: KindJSON},
		"json.gz":      {Kind: KindJSON, Compression: CompressionGzip, CompressionLevel: -1},
		"json.zst":     {Kind: KindJSON, Compression: CompressionZstd, CompressionLevel: -1},
		"parquet":      {Kind: KindParquet},
		"parquet.zstd": {Kind: KindParquet, Parquet: ParquetConfig{Codec: "zstd", RowGroupRecords: 2}},
	}
	for _, c := range allAvroCodecs {
		cfgs["avro."+c.String()] = Config{Kind: KindAvro, Avro: AvroConfig{Codec: c, Level: -1, BlockRecords: 2}}
	}
	for name, cfg := range cfgs {
		t.Run(name, func(t *testing.T) {
			recs := envelopeTestRecords()
			plain := mustFormat(t, cfg)
			cfg.Envelope = true
			f := mustFormat(t, cfg)
			if f.Extension() != plain.Extension() {
				t.Errorf("extension %q, plain %q", f.Extension(), plain.Extension())
			}
			data := writeRecords(t, f, recs)
			if again := writeRecords(t, f, envelopeTestRecords()); !bytes.Equal(data, again) {
				t.Fatal("writing the same records twice gave different bytes")
			}
			rd, err := f.NewReader(bytes.NewReader(data))
			if err != nil {
				t.Fatal(err)
			}
			back := readAll(t, rd)
			prd, err := plain.NewReader(bytes.NewReader(data))
			if err != nil {
				t.Fatal(err)
			}
			detected := readAll(t, ReadEnvelopes(prd, EnvelopeDetect))
			if len(back) != len(recs) || len(detected) != len(recs) {
				t.Fatalf("read %d and %d records, want %d", len(back), len(detected), len(recs))
			}
			for i := range recs {
				sameEnvelope(t, i, back[i], recs[i])
				sameEnvelope(t, i, detected[i], recs[i])
				if back[i].ValueTyped != nil {
					t.Errorf("record %d: bytes value came back typed", i)
				}
			}
		})
	}
}

// TestEnvelopeTypedValues: values with a schema become a typed nested
// field; the file's schema is the documented envelope around the value's
// schema text, verbatim; the value comes back with its schema and Avro
// bytes (Raw and Native inputs alike); a tombstone fits the typed file.
func TestEnvelopeTypedValues(t *testing.T) {
	for _, kind := range []Kind{KindAvro, KindParquet} {
		t.Run(kind.String(), func(t *testing.T) {
			var s *Schema
			var natives []any
			if kind == KindAvro {
				s = testAvroSchema(t, 7, avroTestSchema)
				for _, r := range avroTestRecords(t, s, 3, false, true) {
					natives = append(natives, r.ValueTyped.Native)
				}
			} else {
				s = mustRichSchema(t)
				for _, v := range richValues(t, s) {
					natives = append(natives, v)
				}
			}
			d, err := NewAvroDatum(s.Avro)
			if err != nil {
				t.Fatal(err)
			}
			var recs []*Record
			var raws [][]byte
			for i, n := range natives {
				raw, err := d.Append(nil, n)
				if err != nil {
					t.Fatal(err)
				}
				raws = append(raws, raw)
				typed := &Typed{Schema: s, Native: n}
				if i%2 == 1 {
					typed = &Typed{Schema: s, Raw: raw}
				}
				recs = append(recs, &Record{Partition: 1, Offset: int64(i), Timestamp: time.UnixMilli(int64(i)), Key: []byte{byte(i)},
					Value: append([]byte{0, 0, 0, 0, 7}, raw...), ValueTyped: typed, Headers: []Header{{"h", nil}}})
			}
			recs = append(recs, &Record{Partition: 1, Offset: 99, Timestamp: time.UnixMilli(5), Key: []byte("gone")})
			raws = append(raws, nil)
			f := mustFormat(t, Config{Kind: kind, Envelope: true})
			data := writeRecords(t, f, recs)
			if again := writeRecords(t, f, recs); !bytes.Equal(data, again) {
				t.Fatal("not deterministic")
			}
			rd, err := f.NewReader(bytes.NewReader(data))
			if err != nil {
				t.Fatal(err)
			}
			back := readAll(t, rd)
			if len(back) != len(recs) {
				t.Fatalf("read %d records, want %d", len(back), len(recs))
			}
			for i, r := range back {
				want := *recs[i]
				want.Value = raws[i]
				sameEnvelope(t, i, r, &want)
				if raws[i] == nil {
					if r.ValueTyped != nil {
						t.Errorf("record %d: tombstone came back typed", i)
					}
					continue
				}
				if r.ValueTyped == nil || r.ValueTyped.Schema.Text != s.Text || !bytes.Equal(r.ValueTyped.Raw, raws[i]) {
					t.Fatalf("record %d: typed value %+v, want schema text and raw of the input", i, r.ValueTyped)
				}
				if canonRaw(t, s, r.ValueTyped.Raw) != canonRaw(t, s, raws[i]) {
					t.Errorf("record %d: value differs", i)
				}
			}
			// The file's schema is the documented text.
			prd, err := mustFormat(t, Config{Kind: kind}).NewReader(bytes.NewReader(data))
			if err != nil {
				t.Fatal(err)
			}
			first, err := prd.Read()
			if err != nil {
				t.Fatal(err)
			}
			if got, want := first.ValueTyped.Schema.Text, EnvelopeSchemaText(s.Text); got != want {
				t.Errorf("file schema:\n%s\nwant:\n%s", got, want)
			}
		})
	}
}

// TestEnvelopeSchemaRules: a different value schema in an open file is
// ErrSchemaChanged, so the sink rotates; a union value schema, a schema
// that defines the envelope's own names and (in Parquet) a schema Parquet
// cannot hold are stored as bytes; header keys that are not UTF-8 cannot
// be Avro strings.
func TestEnvelopeSchemaRules(t *testing.T) {
	f := mustFormat(t, Config{Kind: KindAvro, Envelope: true})
	s1 := testAvroSchema(t, 1, `{"type":"record","name":"A","fields":[{"name":"x","type":"long"}]}`)
	s2 := testAvroSchema(t, 2, `{"type":"record","name":"A","fields":[{"name":"x","type":"long"},{"name":"y","type":"long","default":0}]}`)
	w, err := f.NewWriter(io.Discard)
	if err != nil {
		t.Fatal(err)
	}
	if err := w.Write(&Record{Value: []byte{2}, ValueTyped: &Typed{Schema: s1, Raw: []byte{2}}}); err != nil {
		t.Fatal(err)
	}
	if err := w.Write(&Record{Value: []byte{2, 4}, ValueTyped: &Typed{Schema: s2, Raw: []byte{2, 4}}}); !errors.Is(err, ErrSchemaChanged) {
		t.Errorf("new schema: %v, want ErrSchemaChanged", err)
	}
	if err := w.Write(&Record{Value: []byte("x")}); !errors.Is(err, ErrSchemaChanged) {
		t.Errorf("bytes value in a typed file: %v, want ErrSchemaChanged", err)
	}
	if err := w.Write(&Record{Value: []byte{3}, ValueTyped: &Typed{Schema: s1, Raw: []byte{3, 3}}}); !errors.Is(err, ErrBadAvro) {
		t.Errorf("bad datum: %v, want ErrBadAvro", err)
	}
	if err := w.Write(&Record{Key: []byte("k")}); err != nil {
		t.Errorf("tombstone in a typed file: %v", err)
	}
	if err := w.Write(&Record{Value: []byte{2}, ValueTyped: &Typed{Schema: s1, Raw: []byte{2}}, Headers: []Header{{"\xff", nil}}}); !errors.Is(err, ErrBadEnvelope) {
		t.Errorf("non-UTF-8 header key: %v, want ErrBadEnvelope", err)
	}
	_ = w.Close()

	pf := mustFormat(t, Config{Kind: KindParquet, Envelope: true})
	for name, text := range map[string]string{
		"union":         `["null",{"type":"record","name":"A","fields":[{"name":"x","type":"long"}]}]`,
		"clash":         `{"type":"record","name":"EnvelopeHeader","fields":[{"name":"x","type":"long"}]}`,
		"parquet union": `{"type":"record","name":"A","fields":[{"name":"x","type":["long","string"]}]}`,
	} {
		f := f
		if name == "parquet union" {
			f = pf
		}
		us := testAvroSchema(t, 3, text)
		raw := []byte{2, 2}
		if name == "clash" {
			raw = []byte{2}
		}
		if name == "parquet union" {
			raw = []byte{0, 2} // branch long, 1
		}
		rec := &Record{Offset: 4, Value: []byte{0, 0, 0, 0, 3, 2, 2}, ValueTyped: &Typed{Schema: us, Raw: raw}}
		data := writeRecords(t, f, []*Record{rec})
		rd, _ := f.NewReader(bytes.NewReader(data))
		back := readAll(t, rd)
		if len(back) != 1 || back[0].ValueTyped != nil || !bytes.Equal(back[0].Value, rec.Value) {
			t.Errorf("%s: got %+v, want the value's bytes", name, back)
		}
	}
}

// TestReadEnvelopesDetection: plain objects pass unchanged (including JSON
// objects that merely resemble envelopes), EnvelopeRequired refuses them,
// and an envelope object with a line that is not an envelope is an error.
func TestReadEnvelopesDetection(t *testing.T) {
	plainJSON := "{\"partition\":1,\"offset\":2}\n{\"a\":1}\n\"text\"\n"
	rd, _ := NewJSON().NewReader(strings.NewReader(plainJSON))
	got := readAll(t, ReadEnvelopes(rd, EnvelopeDetect))
	if len(got) != 3 || string(got[0].Value) != `{"partition":1,"offset":2}` || string(got[2].Value) != "text" {
		t.Errorf("plain JSON: %d records", len(got))
	}
	rd, _ = NewJSON().NewReader(strings.NewReader(plainJSON))
	if _, err := ReadEnvelopes(rd, EnvelopeRequired).Read(); !errors.Is(err, ErrBadEnvelope) {
		t.Errorf("required on plain JSON: %v", err)
	}
	s := testAvroSchema(t, 7, avroTestSchema)
	avroData := writeAvro(t, AvroConfig{}, avroTestRecords(t, s, 2, true, false))
	ard, _ := mustFormat(t, Config{Kind: KindAvro}).NewReader(bytes.NewReader(avroData))
	if got := readAll(t, ReadEnvelopes(ard, EnvelopeDetect)); len(got) != 2 || got[0].ValueTyped.Schema.Text != s.Text {
		t.Errorf("plain Avro: %d records", len(got))
	}
	ard, _ = mustFormat(t, Config{Kind: KindAvro}).NewReader(bytes.NewReader(avroData))
	if _, err := ReadEnvelopes(ard, EnvelopeRequired).Read(); !errors.Is(err, ErrBadEnvelope) {
		t.Errorf("required on plain Avro: %v", err)
	}

	line := string(AppendEnvelopeLine(nil, envelopeTestRecords()[0]))
	for name, body := range map[string]string{
		"plain second line":   line + "\n{\"a\":1}\n",
		"bad base64":          line + "\n" + strings.Replace(line, `"aw=="`, `"aw="`, 1) + "\n",
		"number partition":    strings.Replace(line, `"partition":2`, `"partition":2.5`, 1) + "\n",
		"negative partition":  strings.Replace(line, `"partition":2`, `"partition":-2`, 1) + "\n",
		"bad timestamp type":  strings.Replace(line, `CreateTime`, `Create`, 1) + "\n",
		"string offset":       strings.Replace(line, `"offset":10`, `"offset":"10"`, 1) + "\n",
		"header extra member": strings.Replace(line, `"value":null}`, `"value":null,"x":1}`, 1) + "\n",
		"headers null":        strings.Replace(line, `"headers":[{"key":"h","value":"dg=="},{"key":"h","value":null},{"key":"h","value":""},{"key":"ü","value":"/w=="}]`, `"headers":null`, 1) + "\n",
		"header key number":   strings.Replace(line, `{"key":"h","value":"dg=="}`, `{"key":1,"value":"dg=="}`, 1) + "\n",
	} {
		rd, _ := NewJSON().NewReader(strings.NewReader(body))
		er := ReadEnvelopes(rd, EnvelopeDetect)
		var err error
		for err == nil {
			_, err = er.Read()
		}
		if !errors.Is(err, ErrBadEnvelope) {
			t.Errorf("%s: %v, want ErrBadEnvelope", name, err)
		}
	}
}

// TestAvroEnvelopeDecodeRejects: truncated and hostile envelope datums are
// errors.
func TestAvroEnvelopeDecodeRejects(t *testing.T) {
	c, err := newEnvelopeSchemas()
	if err != nil {
		t.Fatal(err)
	}
	good, err := c.bytes.appendDatum(nil, envelopeTestRecords()[0])
	if err != nil {
		t.Fatal(err)
	}
	if _, err := c.bytes.decode(good); err != nil {
		t.Fatal(err)
	}
	for i := range good {
		if _, err := c.bytes.decode(good[:i]); !errors.Is(err, ErrBadEnvelope) {
			t.Fatalf("truncated to %d bytes: %v", i, err)
		}
	}
	if _, err := c.bytes.decode(append(good, 0)); !errors.Is(err, ErrBadEnvelope) {
		t.Errorf("trailing byte: %v", err)
	}
	hostile := appendAvroLong(nil, 1)                        // partition
	hostile = appendAvroLong(appendAvroLong(hostile, 0), 0)  // offset, timestamp
	hostile = appendAvroBytes(hostile, []byte("CreateTime")) // type
	hostile = appendAvroLong(appendAvroLong(hostile, 0), 0)  // key, value null
	hostile = appendAvroLong(hostile, 1<<40)                 // headers count
	if _, err := c.bytes.decode(hostile); !errors.Is(err, ErrBadEnvelope) {
		t.Errorf("hostile header count: %v", err)
	}
}

func FuzzJSONEnvelopeReader(f *testing.F) {
	f.Add(writeRecords(f, jsonEnvelopeFormat{}, envelopeTestRecords()[:4]))
	f.Add([]byte(`{"partition":0,"offset":0,"timestamp":0,"timestamp_type":"CreateTime","key":null,"value":"","headers":[{"key":"\udc80","value":null}]}`))
	f.Add([]byte("{\"partition\":1}\n"))
	f.Fuzz(func(t *testing.T, data []byte) {
		rd, err := jsonEnvelopeFormat{}.NewReader(bytes.NewReader(data))
		if err != nil {
			t.Fatal(err)
		}
		for range 10_000 {
			r, err := rd.Read()
			if err != nil {
				return
			}
			// What the reader accepts, the writer writes back and the
			// reader restores identically.
			line := AppendEnvelopeLine(nil, r)
			again, err := decodeEnvelopeLine(line)
			if err != nil {
				t.Fatalf("re-reading %s: %v", line, err)
			}
			if !bytes.Equal(AppendEnvelopeLine(nil, again), line) {
				t.Fatalf("round trip changed %s", line)
			}
		}
	})
}

// FuzzAvroEnvelopeDecode: the Avro envelope decoder (bytes and typed
// values) never panics, and what it accepts encodes back to a datum that
// decodes to the same record.
func FuzzAvroEnvelopeDecode(f *testing.F) {
	c, err := newEnvelopeSchemas()
	if err != nil {
		f.Fatal(err)
	}
	s := testAvroSchema(f, 7, avroTestSchema)
	typed := c.forValue(s)
	if typed == c.bytes {
		f.Fatal("typed schema fell back to bytes")
	}
	for _, r := range envelopeTestRecords() {
		raw, err := c.bytes.appendDatum(nil, r)
		if err != nil {
			f.Fatal(err)
		}
		f.Add(false, raw)
	}
	for _, r := range avroTestRecords(f, s, 3, true, false) {
		raw, err := typed.appendDatum(nil, r)
		if err != nil {
			f.Fatal(err)
		}
		f.Add(true, raw)
	}
	f.Fuzz(func(t *testing.T, isTyped bool, raw []byte) {
		es := c.bytes
		if isTyped {
			es = typed
		}
		r, err := es.decode(raw)
		if err != nil {
			if !errors.Is(err, ErrBadEnvelope) {
				t.Fatalf("error %v does not wrap ErrBadEnvelope", err)
			}
			return
		}
		again, err := es.appendDatum(nil, r)
		if err != nil {
			t.Fatalf("re-encoding: %v", err)
		}
		r2, err := es.decode(again)
		if err != nil {
			t.Fatal(err)
		}
		if a, b := fmt.Sprint(r.Partition, r.Offset, r.Timestamp.UnixMilli(), r.TimestampType, r.Key, r.Value, r.Headers),
			fmt.Sprint(r2.Partition, r2.Offset, r2.Timestamp.UnixMilli(), r2.TimestampType, r2.Key, r2.Value, r2.Headers); a != b {
			t.Fatalf("round trip: %s != %s", a, b)
		}
	})
}

// FuzzAvroEnvelopeReader: reading an Avro container file as envelopes
// (header, blocks, detection, envelope decoding) never panics, and every
// error of a file that parsed is an error, not a partial record.
func FuzzAvroEnvelopeReader(f *testing.F) {
	env := mustFormat(f, Config{Kind: KindAvro, Envelope: true, Avro: AvroConfig{BlockRecords: 2}})
	f.Add(writeRecords(f, env, envelopeTestRecords()[:4]))
	s := testAvroSchema(f, 7, avroTestSchema)
	f.Add(writeRecords(f, env, avroTestRecords(f, s, 3, true, false)))
	f.Add(writeAvro(f, AvroConfig{}, avroTestRecords(f, s, 2, true, false)))
	plain := mustFormat(f, Config{Kind: KindAvro})
	f.Fuzz(func(t *testing.T, data []byte) {
		rd, err := plain.NewReader(bytes.NewReader(data))
		if err != nil {
			return
		}
		er := ReadEnvelopes(rd, EnvelopeDetect)
		for range 100_000 {
			r, err := er.Read()
			if err != nil {
				return
			}
			if r == nil {
				t.Fatal("nil record without an error")
			}
		}
	})
}
