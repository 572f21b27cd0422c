package format

import (
	"errors"
	"strings"
	"testing"
)

// TestForParallel: the format of a .keys/.headers object comes from its
// extension, the value format's own when it matches (bytes with its
// separator), and JSON keys objects read the line null as a null key.
func TestForParallel(t *testing.T) {
	bin, err := NewBytes(BytesConfig{Separator: []byte("|"), Extension: ".bin"})
	if err != nil {
		t.Fatal(err)
	}
	if f, err := ForParallel(".bin", bin, true); err != nil || f != bin {
		t.Fatalf(".bin: %v, %v; want the value format", f, err)
	}
	for ext, want := range map[string]string{".avro": ".avro", ".json": ".json", ".json.gz": ".json.gz", ".json.zst": ".json.zst", ".snappy.parquet": ".parquet"} {
		f, err := ForParallel(ext, bin, false)
		if err != nil || f.Extension() != want {
			t.Errorf("%s: %v, %v", ext, f, err)
		}
	}
	read := func(keys bool) []byte {
		f, err := ForParallel(".json", NewJSON(), keys)
		if err != nil {
			t.Fatal(err)
		}
		rd, err := f.NewReader(strings.NewReader("null\n"))
		if err != nil {
			t.Fatal(err)
		}
		rec, err := rd.Read()
		if err != nil {
			t.Fatal(err)
		}
		return rec.Value
	}
	if read(true) != nil || string(read(false)) != "null" {
		t.Fatalf("keys read %q, headers read %q; want nil and the text null", read(true), read(false))
	}
	for _, ext := range []string{".xml", ".avro.zst", ".avro.gz", ".zst"} {
		if _, err := ForParallel(ext, bin, false); !errors.Is(err, ErrUnknownFormat) || !strings.Contains(err.Error(), ext) {
			t.Fatalf("unknown extension %s: %v", ext, err)
		}
	}
	// A .keys.json.zst object reads null keys as the .keys.json one does.
	z, err := WithZstd(NewNullableJSON(), -1)
	if err != nil {
		t.Fatal(err)
	}
	obj := writeAllRecords(t, z, []byte("k1"))
	f, err := ForParallel(".json.zst", NewJSON(), true)
	if err != nil {
		t.Fatal(err)
	}
	if got, err := readAllValues(f, obj); err != nil || !equalValues(got, bs("k1")) {
		t.Fatalf(".json.zst keys: %q, %v", got, err)
	}
}
