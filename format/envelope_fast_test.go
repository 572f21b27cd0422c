package format

import (
	"bytes"
	"reflect"
	"testing"
)

// generalEnvelope decodes line with the general reader only.
func generalEnvelope(line []byte) (*Record, error) {
	vals := envelopeShape(line)
	if vals == nil {
		return nil, ErrBadEnvelope
	}
	return decodeEnvelopeMembers(vals)
}

// TestEnvelopeFastTakesWrittenLines: every line AppendEnvelopeLine
// writes takes the fast reader, which gives the record the general reader
// gives.
func TestEnvelopeFastTakesWrittenLines(t *testing.T) {
	for _, r := range envelopeTestRecords() {
		line := AppendEnvelopeLine(nil, r)
		fast, ok := decodeEnvelopeFast(line)
		if !ok && !bytes.Contains(line, []byte(`\`)) {
			t.Errorf("the fast reader leaves %s to the general one", line)
			continue
		}
		general, err := generalEnvelope(line)
		if err != nil {
			t.Fatalf("%s: %v", line, err)
		}
		if ok && !reflect.DeepEqual(fast, general) {
			t.Errorf("%s: fast %+v, general %+v", line, fast, general)
		}
	}
}

// FuzzEnvelopeFastIsGeneral: what the fast reader accepts, the general
// reader accepts too, as the same record.
func FuzzEnvelopeFastIsGeneral(f *testing.F) {
	for _, r := range envelopeTestRecords() {
		f.Add(AppendEnvelopeLine(nil, r))
	}
	f.Add([]byte(`{"partition":0,"offset":-0,"timestamp":01,"timestamp_type":"CreateTime","key":null,"value":"","headers":[]}`))
	f.Add([]byte(`{"partition":2147483648,"offset":1,"timestamp":1,"timestamp_type":"CreateTime","key":"YQ==","value":"YQ","headers":[{"key":"k","value":null}]}`))
	f.Fuzz(func(t *testing.T, line []byte) {
		fast, ok := decodeEnvelopeFast(line)
		if !ok {
			return
		}
		general, err := generalEnvelope(line)
		if err != nil {
			t.Fatalf("the fast reader accepts %q, the general one refuses it: %v", line, err)
		}
		if !reflect.DeepEqual(fast, general) {
			t.Fatalf("%q: fast %+v, general %+v", line, fast, general)
		}
	})
}

// BenchmarkEnvelopeDecode compares the fast reader with the general one
// on a written line of a 1 KiB value with a key and two headers.
func BenchmarkEnvelopeDecode(b *testing.B) {
	r := &Record{Key: []byte("key-000123"), Value: bytes.Repeat([]byte("v"), 1024),
		Headers: []Header{{Key: "trace", Value: []byte("abc")}, {Key: "n", Value: nil}}}
	line := AppendEnvelopeLine(nil, r)
	b.Run("fast", func(b *testing.B) {
		b.SetBytes(int64(len(line)))
		for b.Loop() {
			if _, ok := decodeEnvelopeFast(line); !ok {
				b.Fatal("not fast")
			}
		}
	})
	b.Run("general", func(b *testing.B) {
		b.SetBytes(int64(len(line)))
		for b.Loop() {
			if _, err := generalEnvelope(line); err != nil {
				b.Fatal(err)
			}
		}
	})
}

// BenchmarkEnvelopeReader reads an object of 1,000 records of a 1 KiB
// value as JSON envelopes, as Avro envelopes and, for comparison, the same
// values as the bytes format.
func BenchmarkEnvelopeReader(b *testing.B) {
	recs := make([]*Record, 1000)
	for i := range recs {
		recs[i] = &Record{Offset: int64(i), Key: []byte("key-000123"), Value: bytes.Repeat([]byte("v"), 1024),
			Headers: []Header{{Key: "trace", Value: []byte("abc")}}}
	}
	bf, err := NewBytes(BytesConfig{Separator: []byte("\n"), Extension: ".bin"})
	if err != nil {
		b.Fatal(err)
	}
	for _, tc := range []struct {
		name string
		f    Format
	}{{"envelope json", jsonEnvelopeFormat{}}, {"envelope avro", mustFormat(b, Config{Kind: KindAvro, Envelope: true})}, {"bytes", bf}} {
		data := writeRecords(b, tc.f, recs)
		b.Run(tc.name, func(b *testing.B) {
			b.SetBytes(int64(1000 * 1024))
			for b.Loop() {
				rd, err := tc.f.NewReader(bytes.NewReader(data))
				if err != nil {
					b.Fatal(err)
				}
				for {
					if _, err := rd.Read(); err != nil {
						break
					}
				}
			}
		})
	}
}
