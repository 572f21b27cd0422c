package format

import (
	"bufio"
	"bytes"
	stdgzip "compress/gzip"
	"errors"
	"io"
	"strings"
	"testing"
)

func mustGzip(t testing.TB, f Format, level int) Format {
	t.Helper()
	g, err := WithGzip(f, level)
	if err != nil {
		t.Fatalf("WithGzip(level %d): %v", level, err)
	}
	return g
}

func gunzipStd(t *testing.T, data []byte) []byte {
	t.Helper()
	zr, err := stdgzip.NewReader(bytes.NewReader(data))
	if err != nil {
		t.Fatalf("compress/gzip: %v", err)
	}
	out, err := io.ReadAll(zr)
	if err != nil {
		t.Fatalf("compress/gzip: %v", err)
	}
	return out
}

func TestGzipExtension(t *testing.T) {
	if ext := mustGzip(t, NewJSON(), -1).Extension(); ext != ".json.gz" {
		t.Errorf("json+gzip extension = %q", ext)
	}
	if ext := mustGzip(t, mustBytes(t, "\n", ".bin"), -1).Extension(); ext != ".bin.gz" {
		t.Errorf("bytes+gzip extension = %q", ext)
	}
}

func TestGzipLevels(t *testing.T) {
	values := bs(`{"f1":"value1"}`, `{"f1":"value2"}`, `{"f1":"value3"}`, "text", "")
	plain := writeAllRecords(t, NewJSON(), values...)
	for level := -1; level <= 9; level++ {
		g := mustGzip(t, NewJSON(), level)
		data := writeAllRecords(t, g, values...)
		if got := gunzipStd(t, data); !bytes.Equal(got, plain) {
			t.Errorf("level %d: compress/gzip read %q, want %q", level, got, plain)
		}
		if got, err := readAllValues(g, data); err != nil || !equalValues(got, values) {
			t.Errorf("level %d: round trip %q, %v", level, got, err)
		}
		// Deterministic: the same records give the same bytes.
		if again := writeAllRecords(t, g, values...); !bytes.Equal(again, data) {
			t.Errorf("level %d: output differs between runs", level)
		}
	}
	for _, level := range []int{-2, -3, 10, 100} {
		_, err := WithGzip(NewJSON(), level)
		if !errors.Is(err, ErrInvalidConfig) || !strings.Contains(err.Error(), KeyCompressionLevel) {
			t.Errorf("WithGzip(level %d) = %v, want error naming %s", level, err, KeyCompressionLevel)
		}
	}
}

func TestGzipBytesStdlib(t *testing.T) {
	g := mustGzip(t, mustBytes(t, "\n", ".bin"), 6)
	data := writeAllRecords(t, g, bs("a", "", "b")...)
	if got := gunzipStd(t, data); string(got) != "a\n\nb\n" {
		t.Errorf("compress/gzip read %q", got)
	}
}

func TestGzipEmptyObject(t *testing.T) {
	g := mustGzip(t, NewJSON(), -1)
	data := writeAllRecords(t, g) // no records: still a valid gzip stream
	if got := gunzipStd(t, data); len(got) != 0 {
		t.Errorf("empty object holds %q", got)
	}
	if got, err := readAllValues(g, data); err != nil || len(got) != 0 {
		t.Errorf("reading empty object: %q, %v", got, err)
	}
	if _, err := readAllValues(g, nil); err == nil {
		t.Error("a zero-byte object read as gzip without error")
	}
}

func TestGzipMultistream(t *testing.T) {
	g := mustGzip(t, NewJSON(), -1)
	a := writeAllRecords(t, g, bs("one", "two")...)
	b := writeAllRecords(t, g, bs(`{"n":3}`)...)
	var std bytes.Buffer // a member written by the standard library
	zw := stdgzip.NewWriter(&std)
	zw.Write([]byte("\"four\"\n"))
	zw.Close()
	data := append(append(append([]byte{}, a...), b...), std.Bytes()...)
	got, err := readAllValues(g, data)
	if err != nil || !equalValues(got, bs("one", "two", `{"n":3}`, "four")) {
		t.Errorf("multistream read %q, %v", got, err)
	}
}

func TestGzipCorrupt(t *testing.T) {
	g := mustGzip(t, NewJSON(), -1)
	values := make([][]byte, 200)
	for i := range values {
		values[i] = []byte(strings.Repeat("abcdefgh", i))
	}
	data := writeAllRecords(t, g, values...)

	cases := map[string][]byte{
		"not gzip":      []byte("{\"f1\":\"value1\"}\n"),
		"truncated":     data[:len(data)/2],
		"no trailer":    data[:len(data)-8],
		"bad crc":       flip(data, len(data)-6),
		"bad size":      flip(data, len(data)-2),
		"bad body":      flip(data, len(data)/2),
		"trailing junk": append(bytes.Clone(data), "junk"...),
	}
	for name, bad := range cases {
		_, err := readAllValues(g, bad)
		if err == nil {
			t.Errorf("%s: read without error", name)
		}
	}
}

func flip(b []byte, i int) []byte {
	c := bytes.Clone(b)
	c[i] ^= 0x55
	return c
}

func FuzzGzipJSONReader(f *testing.F) {
	g, err := WithGzip(NewJSON(), -1)
	if err != nil {
		f.Fatal(err)
	}
	f.Add(writeAllRecords(f, g, bs(`{"f1":"value1"}`, "text", "\xff")...))
	f.Add(writeAllRecords(f, g))
	f.Add([]byte{0x1f, 0x8b, 8, 0, 0, 0, 0, 0, 0, 0xff})
	f.Add([]byte("plain"))
	f.Fuzz(func(t *testing.T, data []byte) {
		got, err := readAllValues(g, data)
		if err != nil {
			return // errors are fine; panics and hangs are not
		}
		// What was read writes and reads back to itself.
		back, err := readAllValues(g, writeAllRecords(t, g, got...))
		if err != nil || !equalValues(back, got) {
			t.Fatalf("values %q rewrite and read as %q, %v", got, back, err)
		}
	})
}

// TestGzipOneStream checks that a large object, whatever its length
// against the chunk size, is one gzip member (one deflate stream across the
// chunks) that the standard library reads back whole.
func TestGzipOneStream(t *testing.T) {
	f := mustGzip(t, mustBytes(t, "\n", ".bin"), -1)
	for _, n := range []int{1, gzipChunk - 1, gzipChunk, 3 * gzipChunk, 3*gzipChunk + 77, 2*gzipChunk + gzipWindow} {
		// Values of n-1 bytes plus the separator: the object holds exactly n
		// bytes when written as one value.
		value := bytes.Repeat([]byte("abcdefghij"), n/10+1)[:n-1]
		data := writeAllRecords(t, f, value)
		br := bufio.NewReader(bytes.NewReader(data))
		zr, err := stdgzip.NewReader(br)
		if err != nil {
			t.Fatal(err)
		}
		zr.Multistream(false)
		got, err := io.ReadAll(zr)
		if err != nil {
			t.Fatalf("%d bytes: %v", n, err)
		}
		if want := append(bytes.Clone(value), '\n'); !bytes.Equal(got, want) {
			t.Fatalf("%d bytes: the first member holds %d bytes, want all %d", n, len(got), len(want))
		}
		if err := zr.Reset(br); err != io.EOF {
			t.Fatalf("%d bytes: a second member follows the first (%v)", n, err)
		}
	}
}
