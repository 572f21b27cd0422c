package format

import (
	"bytes"
	"fmt"
	"io"
	"runtime"
	"testing"
)

// transientObject writes records of the values vals in format f and
// returns the object's bytes.
func transientObject(t *testing.T, f Format, vals [][]byte) []byte {
	t.Helper()
	var buf bytes.Buffer
	w, err := f.NewWriter(&buf)
	if err != nil {
		t.Fatal(err)
	}
	for _, v := range vals {
		if err := w.Write(&Record{Value: v}); err != nil {
			t.Fatal(err)
		}
	}
	if err := w.Close(); err != nil {
		t.Fatal(err)
	}
	return buf.Bytes()
}

// readAllocs reads every record of obj with f's reader (wrapped in
// ReadEnvelopes when env), transient or not, checks each value against
// vals before the next Read, and returns the bytes allocated meanwhile.
func readAllocs(t *testing.T, f Format, obj []byte, vals [][]byte, env, transient bool) uint64 {
	t.Helper()
	rd, err := f.NewReader(bytes.NewReader(obj))
	if err != nil {
		t.Fatal(err)
	}
	if env {
		rd = ReadEnvelopes(rd, EnvelopeDetect)
	}
	tr, ok := rd.(Transient)
	if !ok {
		t.Fatalf("%T is not Transient", rd)
	}
	tr.SetTransient(transient)
	var before, after runtime.MemStats
	runtime.GC()
	runtime.ReadMemStats(&before)
	for i := 0; ; i++ {
		rec, err := rd.Read()
		if err == io.EOF {
			if i != len(vals) {
				t.Fatalf("%d records, want %d", i, len(vals))
			}
			break
		}
		if err != nil {
			t.Fatal(err)
		}
		if !bytes.Equal(rec.Value, vals[i]) || rec.Value == nil {
			t.Fatalf("record %d: value %.20q, want %.20q", i, rec.Value, vals[i])
		}
	}
	runtime.ReadMemStats(&after)
	return after.TotalAlloc - before.TotalAlloc
}

// TestTransientReaders: after SetTransient(true) the JSON (also gzip or zstd,
// also under ReadEnvelopes) and bytes readers return the same values
// without copying them: reading 2,000 values of 1 KiB allocates less than
// a quarter of their 2 MB, where the copying read allocates at least all
// of them. Empty values stay empty, not nil.
func TestTransientReaders(t *testing.T) {
	vals := make([][]byte, 2000)
	for i := range vals {
		vals[i] = fmt.Appendf(nil, `{"i":%d,"pad":"%s"}`, i, bytes.Repeat([]byte("p"), 1000))
	}
	vals[7] = []byte{} // the bytes format's empty value
	bytesF, err := NewBytes(BytesConfig{Separator: []byte("\n"), Extension: ".bin"})
	if err != nil {
		t.Fatal(err)
	}
	gz, err := WithGzip(NewJSON(), 1)
	if err != nil {
		t.Fatal(err)
	}
	zs, err := WithZstd(NewJSON(), -1)
	if err != nil {
		t.Fatal(err)
	}
	jsonVals := append([][]byte(nil), vals...)
	jsonVals[7] = []byte(`{}`)
	for _, c := range []struct {
		name string
		f    Format
		vals [][]byte
		env  bool
	}{
		{"json", NewJSON(), jsonVals, false},
		{"json+gzip", gz, jsonVals, false},
		{"json+zstd", zs, jsonVals, false},
		{"json under ReadEnvelopes", NewJSON(), jsonVals, true},
		{"bytes", bytesF, vals, false},
	} {
		t.Run(c.name, func(t *testing.T) {
			obj := transientObject(t, c.f, c.vals)
			copied := readAllocs(t, c.f, obj, c.vals, c.env, false)
			transient := readAllocs(t, c.f, obj, c.vals, c.env, true)
			if copied < 2_000_000 || transient > 500_000 {
				t.Fatalf("allocated %d bytes copying, %d transient; want ≥ 2,000,000 and ≤ 500,000", copied, transient)
			}
		})
	}
}
