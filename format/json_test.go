package format

import (
	"bytes"
	"encoding/json"
	"errors"
	"io"
	"strings"
	"testing"
	"unicode/utf8"
)

func TestJSONExtension(t *testing.T) {
	if ext := NewJSON().Extension(); ext != ".json" {
		t.Errorf("Extension() = %q", ext)
	}
}

func TestJSONGoldenQuickStart(t *testing.T) {
	got := writeAllRecords(t, NewJSON(), bs(`{"f1":"value1"}`, `{"f1":"value2"}`, `{"f1":"value3"}`)...)
	want := "{\"f1\":\"value1\"}\n{\"f1\":\"value2\"}\n{\"f1\":\"value3\"}\n"
	if string(got) != want {
		t.Errorf("wrote %q, want %q", got, want)
	}
}

func TestJSONLines(t *testing.T) {
	tests := []struct{ value, line string }{
		// Valid JSON that is not a string: as is.
		{`{"f1": "value1"}`, `{"f1": "value1"}`},
		{`[1,2,3]`, `[1,2,3]`},
		{`42`, `42`},
		{`-1.5e3`, `-1.5e3`},
		{`true`, `true`},
		{`null`, `null`},
		{` {"a":1} `, ` {"a":1} `},
		{"{\"a\":1}\r", "{\"a\":1}\r"},
		{`{"s":"\u00e9\n"}`, `{"s":"\u00e9\n"}`},
		// Multi-line JSON: compacted.
		{"{\n  \"a\": [1, 2],\n  \"b\": \"x y\"\n}\n", `{"a":[1,2],"b":"x y"}`},
		// Plain text: a JSON string.
		{`value1`, `"value1"`},
		{``, `""`},
		{` `, `" "`},
		{`hello "world"`, `"hello \"world\""`},
		{`back\slash`, `"back\\slash"`},
		{"tab\tnl\ncr\r", `"tab\tnl\ncr\r"`},
		{"ctl\x00\x01\x1f\x7f", `"ctl\u0000\u0001\u001f` + "\x7f\""},
		{"héllo wörld ✓ 😀", `"héllo wörld ✓ 😀"`},
		{"<a&b>", `"<a&b>"`},
		{"{not json", `"{not json"`},
		{"1 2", `"1 2"`},
		// JSON string literals are valid JSON: written as is.
		{`"abc"`, `"abc"`},
		{` "abc"`, ` "abc"`},
		// Invalid UTF-8: each bad byte as a lone low surrogate escape.
		{"\xff", `"\udcff"`},
		{"a\x80b\xc3", `"a\udc80b\udcc3"`},
		{"\xed\xa0\x80", `"\udced\udca0\udc80"`}, // an encoded surrogate is invalid UTF-8
		{"{\"a\":\"\xff\"}", `"{\"a\":\"\udcff\"}"`},
	}
	for _, tt := range tests {
		got := appendJSONLine(nil, []byte(tt.value))
		if string(got) != tt.line {
			t.Errorf("line for %q = %q, want %q", tt.value, got, tt.line)
			continue
		}
		if !json.Valid(got) || !utf8.Valid(got) || bytes.IndexByte(got, '\n') >= 0 {
			t.Errorf("line %q is not one line of valid UTF-8 JSON", got)
		}
		back, err := parseJSONLine(got, new(slab))
		want := tt.value
		if strings.Contains(tt.value, "\n") && tt.value[0] == '{' {
			want = tt.line // compacted
		}
		if strings.HasPrefix(strings.TrimSpace(tt.value), `"`) && json.Valid([]byte(tt.value)) {
			want = "abc" // a JSON string literal restores as its content
		}
		if err != nil || string(back) != want {
			t.Errorf("parse of %q = %q, %v; want %q", got, back, err, want)
		}
	}
}

// TestJSONStringLinesMatchStdlib checks that for valid UTF-8 text the
// string lines decode with encoding/json to the same text.
func TestJSONStringLinesMatchStdlib(t *testing.T) {
	for _, v := range []string{"", "plain", "q\"b\\s/", "\x00\x1f\x7f\t\r\n", "日本語 😀", "\u2028\u2029"} {
		line := appendJSONLine(nil, []byte(v))
		var s string
		if err := json.Unmarshal(line, &s); err != nil || s != v {
			t.Errorf("encoding/json decoded %q as %q, %v; want %q", line, s, err, v)
		}
	}
}

func TestJSONReadForeignLines(t *testing.T) {
	tests := []struct{ line, want string }{
		{`"\u00e9\/\b\f"`, "é/\b\f"},
		{`"\ud83d\ude00"`, "😀"},
		{`"\uD83D\uDE00"`, "😀"},
		{`"\ud83d"`, "\uFFFD"},                 // lone high surrogate
		{`"\ud83dx"`, "\uFFFDx"},               // high surrogate without a low one
		{`"\ud83d\u0041"`, "\uFFFDA"},          // high surrogate, then not a low one
		{`"\udc00"`, "\uFFFD"},                 // lone low surrogate outside the byte range
		{`"\udd00"`, "\uFFFD"},                 // ditto
		{`"\udcff\udc80"`, "\xff\x80"},         // our byte escapes
		{`"\ud800\udc80"`, "\U00010080"},       // a pair wins over the byte escape
		{`  "padded"  `, "padded"},             // whitespace around a string line
		{"\"crlf\"\r", "crlf"},                 // a CRLF file
		{"{\"a\":1}\r", "{\"a\":1}\r"},         // non-string lines are kept byte for byte
		{"\"raw \xff byte\"", "raw \xff byte"}, // foreign raw invalid UTF-8 is kept
	}
	for _, tt := range tests {
		got, err := parseJSONLine([]byte(tt.line), new(slab))
		if err != nil || string(got) != tt.want {
			t.Errorf("parseJSONLine(%q) = %q, %v; want %q", tt.line, got, err, tt.want)
		}
	}
}

func TestJSONReadErrors(t *testing.T) {
	for _, data := range []string{
		"{\"a\":1}\n\n{\"b\":2}\n", // blank line
		"{\"a\":1}\nnot json\n",
		"{\"a\":\n1}\n", // a value split over lines
		"\"unterminated\n",
		"\"bad \\x escape\"\n",
		"\"a\" \"b\"\n",
		"   \n",
		"{\"a\":1}{\"b\":2}\n",
	} {
		got, err := readAllValues(NewJSON(), []byte(data))
		if !errors.Is(err, ErrBadJSONLine) {
			t.Errorf("reading %q = %q, %v; want ErrBadJSONLine", data, got, err)
			continue
		}
		if !strings.Contains(err.Error(), "line ") {
			t.Errorf("error %q does not name the line", err)
		}
	}
}

func TestJSONRead(t *testing.T) {
	tests := []struct {
		data string
		want []string
	}{
		{"", nil},
		{"{\"f1\":\"value1\"}\n{\"f1\":\"value2\"}\n", []string{`{"f1":"value1"}`, `{"f1":"value2"}`}},
		{"1\n\"x\"", []string{"1", "x"}}, // no final newline
		{"\"\"\n\"\"\n", []string{"", ""}},
	}
	for _, tt := range tests {
		got, err := readAllValues(NewJSON(), []byte(tt.data))
		if err != nil || !equalValues(got, bs(tt.want...)) {
			t.Errorf("read %q = %q, %v; want %q", tt.data, got, err, tt.want)
		}
	}
}

func TestJSONRoundTrip(t *testing.T) {
	long := strings.Repeat(`{"k":"`+strings.Repeat("v", 1000)+`"},`, 200) // > 64 KiB lines
	values := bs(`{"f1":"value1"}`, "", "plain text", "\xff\xfe binary \x00", "日本",
		"["+long+"1]", strings.Repeat("x\n", 50000), `  7  `)
	got, err := readAllValues(NewJSON(), writeAllRecords(t, NewJSON(), values...))
	if err != nil || !equalValues(got, values) {
		t.Fatalf("round trip failed: %d values, %v", len(got), err)
	}
}

func FuzzJSONReader(f *testing.F) {
	f.Add([]byte("{\"f1\":\"value1\"}\n{\"f1\":\"value2\"}\n"))
	f.Add([]byte("\"a\\udcff\"\n\"\\ud83d\\ude00\"\n"))
	f.Add([]byte("1\n\"x\""))
	f.Add([]byte("\n"))
	f.Add([]byte("\"\\u12"))
	f.Add([]byte(" \"a\" \r\n[1, 2]\n"))
	f.Fuzz(func(t *testing.T, data []byte) {
		got, err := readAllValues(NewJSON(), data)
		if err != nil && !errors.Is(err, ErrBadJSONLine) {
			t.Fatalf("in-memory read failed with a non-format error: %v", err)
		}
		// What was read writes and reads back to itself (except that a
		// JSON string literal value read from a foreign file keeps its
		// quotes now, and multi-line JSON cannot come from one line).
		back, err := readAllValues(NewJSON(), writeAllRecords(t, NewJSON(), got...))
		if err != nil || !equalValues(back, got) {
			t.Fatalf("values %q rewrite and read as %q, %v", got, back, err)
		}
	})
}

func FuzzJSONValueRoundTrip(f *testing.F) {
	for _, v := range []string{`{"f1":"value1"}`, "", "plain", `"q"`, "\xff", "{\n}\n", " 1 ", "\ud7ff\xed\xb2\x80"} {
		f.Add([]byte(v))
	}
	f.Fuzz(func(t *testing.T, v []byte) {
		line := appendJSONLine(nil, v)
		if !json.Valid(line) || !utf8.Valid(line) || bytes.IndexByte(line, '\n') >= 0 {
			t.Fatalf("value %q gave line %q: not one line of valid UTF-8 JSON", v, line)
		}
		back, err := parseJSONLine(line, new(slab))
		if err != nil {
			t.Fatalf("value %q gave line %q that does not parse: %v", v, line, err)
		}
		if bytes.Equal(back, v) {
			return
		}
		// A JSON string literal value comes back as its content.
		var str string
		if json.Unmarshal(v, &str) == nil && utf8.Valid(v) {
			return
		}
		// Only multi-line JSON may differ, and then only in whitespace.
		var compact bytes.Buffer
		if bytes.IndexByte(v, '\n') < 0 || json.Compact(&compact, v) != nil || !bytes.Equal(back, compact.Bytes()) {
			t.Fatalf("value %q came back as %q (line %q)", v, back, line)
		}
	})
}

// TestNullableJSON: the .keys objects' JSON tells a null key (the line
// null) from the text null (the string "null"), both ways, and leaves every
// other value as NewJSON writes it.
func TestNullableJSON(t *testing.T) {
	// (A value that is itself a JSON string literal comes back as its
	// content, as in NewJSON; that loss is documented there.)
	vals := [][]byte{nil, []byte("null"), []byte(" null"), {}, []byte("k"), []byte(`{"a":1}`)}
	obj := transientObject(t, NewNullableJSON(), vals)
	const golden = "null\n\"null\"\n null\n\"\"\n\"k\"\n{\"a\":1}\n"
	if string(obj) != golden {
		t.Fatalf("wrote %q, want %q", obj, golden)
	}
	rd, err := NewNullableJSON().NewReader(bytes.NewReader(obj))
	if err != nil {
		t.Fatal(err)
	}
	for i, want := range vals {
		rec, err := rd.Read()
		if err != nil {
			t.Fatalf("record %d: %v", i, err)
		}
		if !bytes.Equal(rec.Value, want) || (rec.Value == nil) != (want == nil) {
			t.Errorf("record %d: %q (nil %v), want %q (nil %v)", i, rec.Value, rec.Value == nil, want, want == nil)
		}
	}
	if _, err := rd.Read(); err != io.EOF {
		t.Fatalf("want EOF, got %v", err)
	}
	// The plain JSON format still refuses a null and reads the line null
	// as the text null.
	if err := mustWriter(t, NewJSON()).Write(&Record{}); !errors.Is(err, ErrNullValue) {
		t.Fatalf("NewJSON wrote a null: %v", err)
	}
	rd, _ = NewJSON().NewReader(strings.NewReader("null\n"))
	if rec, err := rd.Read(); err != nil || string(rec.Value) != "null" {
		t.Fatalf("NewJSON read %v, %v", rec, err)
	}
}

func mustWriter(t *testing.T, f Format) RecordWriter {
	t.Helper()
	w, err := f.NewWriter(io.Discard)
	if err != nil {
		t.Fatal(err)
	}
	return w
}

// TestJSONLongLines: lines around the reader's 64 KiB buffer and past the
// 1 MiB it keeps for long lines read back exactly, and so do the short
// lines after them.
func TestJSONLongLines(t *testing.T) {
	var values [][]byte
	for _, n := range []int{64<<10 - 3, 64<<10 - 2, 64<<10 - 1, 64 << 10, 64<<10 + 1, 2 << 20, 10} {
		values = append(values, []byte(`"`+strings.Repeat("a", n)+`"`), []byte(`[`+strings.Repeat("1,", n/2)+`1]`), []byte("7"))
	}
	got, err := readAllValues(NewJSON(), writeAllRecords(t, NewJSON(), values...))
	if err != nil {
		t.Fatal(err)
	}
	// A JSON string literal value comes back as its content.
	for i := 0; i < len(values); i += 3 {
		values[i] = values[i][1 : len(values[i])-1]
	}
	if !equalValues(got, values) {
		t.Fatalf("long lines did not read back: %d values", len(got))
	}
}
