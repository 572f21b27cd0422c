package format

import (
	"bytes"
	"errors"
	"strings"
	"testing"
	"testing/iotest"
)

func mustBytes(t testing.TB, sep, ext string) Format {
	t.Helper()
	f, err := NewBytes(BytesConfig{Separator: []byte(sep), Extension: ext})
	if err != nil {
		t.Fatalf("NewBytes(%q, %q): %v", sep, ext, err)
	}
	return f
}

func TestBytesDefaults(t *testing.T) {
	c := DefaultBytesConfig()
	if string(c.Separator) != "\n" || c.Extension != ".bin" {
		t.Fatalf("DefaultBytesConfig() = %+v", c)
	}
	f, err := NewBytes(c)
	if err != nil {
		t.Fatal(err)
	}
	if f.Extension() != ".bin" {
		t.Errorf("Extension() = %q", f.Extension())
	}
}

func TestBytesConfigValidate(t *testing.T) {
	for _, ext := range []string{"", "bin", ".", "./x", `.a\b`} {
		_, err := NewBytes(BytesConfig{Separator: []byte("\n"), Extension: ext})
		if !errors.Is(err, ErrInvalidConfig) || !strings.Contains(err.Error(), KeyBytesExtension) {
			t.Errorf("NewBytes(extension %q) = %v, want error naming %s", ext, err, KeyBytesExtension)
		}
	}
	for _, ext := range []string{".bin", ".kafka.oss", ".customExtensionForTest"} {
		if f, err := NewBytes(BytesConfig{Separator: []byte("\n"), Extension: ext}); err != nil || f.Extension() != ext {
			t.Errorf("NewBytes(extension %q) = %v", ext, err)
		}
	}
}

func TestBytesGolden(t *testing.T) {
	tests := []struct {
		sep    string
		values []string
		want   string
	}{
		{"\n", []string{`{"f1":"value1"}`, `{"f1":"value2"}`, `{"f1":"value3"}`},
			"{\"f1\":\"value1\"}\n{\"f1\":\"value2\"}\n{\"f1\":\"value3\"}\n"},
		{"\n", []string{"a", "", "b"}, "a\n\nb\n"},
		{"\n", []string{""}, "\n"},
		{"\n", nil, ""},
		{"\r\n", []string{"x", "y"}, "x\r\ny\r\n"},
		{"SEPARATOR", []string{"raw", "\x00\xff"}, "rawSEPARATOR\x00\xffSEPARATOR"},
		{"  ", []string{"a", "b"}, "a  b  "}, // whitespace is kept
		{"", []string{"ab", "cd"}, "abcd"},
	}
	for _, tt := range tests {
		f := mustBytes(t, tt.sep, ".bin")
		got := writeAllRecords(t, f, bs(tt.values...)...)
		if string(got) != tt.want {
			t.Errorf("sep %q, values %q: wrote %q, want %q", tt.sep, tt.values, got, tt.want)
		}
	}
}

func TestBytesLargeValue(t *testing.T) {
	f := mustBytes(t, "\n", ".bin")
	big := bytes.Repeat([]byte("0123456789abcdef"), 20000) // 320 KB, beyond bufio and smallValue
	data := writeAllRecords(t, f, big, []byte("small"), big)
	if want := len(big)*2 + len("small") + 3; len(data) != want {
		t.Fatalf("wrote %d bytes, want %d", len(data), want)
	}
	got, err := readAllValues(f, data)
	if err != nil || !equalValues(got, [][]byte{big, []byte("small"), big}) {
		t.Fatalf("round trip of large values failed: %d values, %v", len(got), err)
	}
}

func TestBytesRead(t *testing.T) {
	tests := []struct {
		sep, data string
		want      []string
	}{
		{"\n", "a\nb\n", []string{"a", "b"}},
		{"\n", "a\n\nb\n", []string{"a", "", "b"}},
		{"\n", "\n", []string{""}},
		{"\n", "\n\n", []string{"", ""}},
		{"\n", "", nil},
		{"\n", "a\nb", []string{"a", "b"}}, // no final separator: last bytes are a record
		{"\r\n", "a\r\nb\rc\r\n", []string{"a", "b\rc"}},
		{"\r\n", "a\r\nb\r", []string{"a", "b\r"}},
		{"aa", "xaab", []string{"x", "b"}},
		{"aa", "aaa", []string{"", "a"}}, // leftmost match
		{"SEPARATOR", "rawSEPARATOR\x00\xffSEPARATOR", []string{"raw", "\x00\xff"}},
	}
	for _, tt := range tests {
		f := mustBytes(t, tt.sep, ".bin")
		got, err := readAllValues(f, []byte(tt.data))
		if err != nil || !equalValues(got, bs(tt.want...)) {
			t.Errorf("sep %q, read %q = %q, %v; want %q", tt.sep, tt.data, got, err, tt.want)
		}
	}
}

func TestBytesRoundTrip(t *testing.T) {
	values := bs("", "a", "", "hello world", "\x00\x01\xfe\xff", "  padded  ", "{\"f1\":\"value1\"}", "")
	for _, sep := range []string{"\n", "\r\n", "|", "SEPARATOR", "\x07"} {
		f := mustBytes(t, sep, ".bin")
		got, err := readAllValues(f, writeAllRecords(t, f, values...))
		if err != nil || !equalValues(got, values) {
			t.Errorf("sep %q: round trip gave %q, %v", sep, got, err)
		}
	}
}

func TestBytesSeparatorInValue(t *testing.T) {
	// The documented limitation: a value holding the separator is split.
	f := mustBytes(t, "\n", ".bin")
	got, err := readAllValues(f, writeAllRecords(t, f, []byte("two\nlines")))
	if err != nil || !equalValues(got, bs("two", "lines")) {
		t.Errorf("got %q, %v", got, err)
	}
}

func TestBytesEmptySeparatorReader(t *testing.T) {
	f := mustBytes(t, "", ".bin")
	if _, err := f.NewReader(strings.NewReader("abcd")); !errors.Is(err, ErrNoSeparator) {
		t.Errorf("NewReader with empty separator = %v, want ErrNoSeparator", err)
	}
}

func TestBytesReadError(t *testing.T) {
	f := mustBytes(t, "\n", ".bin")
	r, err := f.NewReader(iotest.TimeoutReader(strings.NewReader(strings.Repeat("x", 100))))
	if err != nil {
		t.Fatal(err)
	}
	// TimeoutReader fails the second read; the first yields no separator.
	if _, err := r.Read(); !errors.Is(err, iotest.ErrTimeout) {
		t.Errorf("Read = %v, want ErrTimeout", err)
	}
}

func TestBytesOneByteReader(t *testing.T) {
	f := mustBytes(t, "ab", ".bin")
	values := bs("x", "", "yy", "b", "a") // "a"+"ab" = "aab": leftmost "ab" is at 1, fine
	data := writeAllRecords(t, f, values...)
	r, err := f.NewReader(iotest.OneByteReader(bytes.NewReader(data)))
	if err != nil {
		t.Fatal(err)
	}
	for i, want := range values {
		rec, err := r.Read()
		if err != nil || !bytes.Equal(rec.Value, want) {
			t.Fatalf("record %d = %v, %v; want %q", i, rec, err, want)
		}
	}
}

func FuzzBytesReader(f *testing.F) {
	f.Add([]byte("\n"), []byte("a\nb\n"))
	f.Add([]byte("\n"), []byte("\n\n\n"))
	f.Add([]byte("\r\n"), []byte("a\r\nb\r"))
	f.Add([]byte("aa"), []byte("aaaaa"))
	f.Add([]byte("SEP"), []byte("xSEPySEPz"))
	f.Add([]byte(""), []byte("abc"))
	f.Fuzz(func(t *testing.T, sep, data []byte) {
		bf, err := NewBytes(BytesConfig{Separator: sep, Extension: ".bin"})
		if err != nil {
			t.Fatal(err)
		}
		got, err := readAllValues(bf, data)
		if len(sep) == 0 {
			if !errors.Is(err, ErrNoSeparator) {
				t.Fatalf("empty separator: %v", err)
			}
			return
		}
		if err != nil {
			t.Fatalf("in-memory read failed: %v", err)
		}
		// The records, each followed by the separator, rebuild the data,
		// except that a final record may lack its separator.
		rebuilt := writeAllRecords(t, bf, got...)
		if !bytes.Equal(rebuilt, data) && !bytes.Equal(rebuilt, append(bytes.Clone(data), sep...)) {
			t.Fatalf("records %q rebuild %q, not %q", got, rebuilt, data)
		}
		// No record holds the separator.
		for _, v := range got {
			if bytes.Contains(v, sep) {
				t.Fatalf("record %q holds separator %q", v, sep)
			}
		}
	})
}
