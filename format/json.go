package format

import (
	"bufio"
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"unicode/utf16"
	"unicode/utf8"
)

// NewJSON returns the JSON format (Confluent's JsonFormat without
// schemas): one record value per line, each line one JSON value, each
// line ended by "\n". Keys, headers and timestamps are not stored.
// The extension is ".json".
//
// The writer turns a value v (never nil: see ErrNullValue) into a line:
//
//  1. If v is valid UTF-8 and valid JSON (an object, array, string,
//     number, true, false or null), v is written as is, like Confluent's
//     JsonFormat does for JsonConverter values. If v contains a newline it
//     is compacted first (json.Compact): insignificant whitespace is lost,
//     content is not.
//  2. Any other value (plain text, binary) is written as a JSON string of
//     its bytes, as Confluent does for StringConverter values:
//     valid UTF-8 as text (escaping '"', '\' and control characters),
//     and each byte of an invalid UTF-8 sequence as the escape \udcXX, a
//     lone low surrogate (U+DC80..U+DCFF, the "surrogateescape" of PEP
//     383; Python's json.loads(line).encode("utf-8", "surrogateescape")
//     gives the original bytes). Valid UTF-8 never holds a surrogate, so
//     the escape is unambiguous. Every line is valid JSON and valid UTF-8.
//
// The reader is the exact inverse: a line whose first non-whitespace byte
// is '"' must be one JSON string and is restored as its content (lone
// \udc80..\udcff escapes as the bytes 0x80..0xff, any other lone surrogate
// as U+FFFD); any other line must be valid JSON and is restored byte for
// byte. A blank or invalid line is an error. A last line without "\n" is
// accepted.
//
// So every value is restored exactly, with two exceptions inherent in
// Confluent's layout: multi-line JSON comes back compacted, and a value that
// was itself a JSON string literal (`"abc"` with its quotes) comes back as
// its content (abc), because a line cannot tell the two apart. Use the bytes
// format, or Avro and Parquet, where values must survive byte for byte.
func NewJSON() Format { return jsonFormat{} }

// NewNullableJSON is NewJSON for objects that must hold null values too:
// the .keys objects of store.kafka.keys, whose records may have null keys.
// Its writer writes a nil Value as the line null, and a non-nil Value whose
// bytes are exactly "null" as the JSON string "null"; its reader restores
// the line null (exactly those four bytes) as a nil Value and the string
// "null" as the 4-byte value null. Every other line is as in NewJSON. So a
// null and the text null stay apart, both ways.
func NewNullableJSON() Format { return jsonFormat{nulls: true} }

// jsonFormat is NewJSON; nulls makes it NewNullableJSON.
type jsonFormat struct{ nulls bool }

func (jsonFormat) Extension() string { return ".json" }

func (f jsonFormat) NewWriter(w io.Writer) (RecordWriter, error) {
	if w == nil {
		return nil, errors.New("json format: nil writer")
	}
	return &jsonWriter{w: w, nulls: f.nulls}, nil
}

func (f jsonFormat) NewReader(r io.Reader) (RecordReader, error) {
	if r == nil {
		return nil, errors.New("json format: nil reader")
	}
	return &jsonReader{br: bufio.NewReaderSize(r, 64<<10), nulls: f.nulls}, nil
}

type jsonWriter struct {
	w      io.Writer
	buf    []byte
	err    error
	closed bool
	nulls  bool // NewNullableJSON
}

// jsonNull is the JSON line of a null value (NewNullableJSON) and
// jsonNullText the line of the 4-byte value null there.
const (
	jsonNull     = "null"
	jsonNullText = `"null"`
)

func (jw *jsonWriter) Write(r *Record) error {
	if jw.closed {
		return ErrClosed
	}
	if jw.err != nil {
		return jw.err
	}
	if r == nil {
		return fmt.Errorf("json format: %w: nil record", ErrNullValue)
	}
	switch {
	case r.Value == nil && jw.nulls:
		jw.buf = append(append(jw.buf[:0], jsonNull...), '\n')
	case r.Value == nil:
		return nullValueError(r)
	case jw.nulls && string(r.Value) == jsonNull:
		jw.buf = append(append(jw.buf[:0], jsonNullText...), '\n')
	default:
		jw.buf = append(appendJSONLine(jw.buf[:0], r.Value), '\n')
	}
	if err := writeAll(jw.w, jw.buf); err != nil {
		jw.err = fmt.Errorf("json format: writing record at offset %d: %w", r.Offset, err)
	}
	return jw.err
}

func (jw *jsonWriter) Close() error {
	if jw.closed {
		return nil
	}
	jw.closed = true
	return jw.err
}

// appendJSONLine appends the JSON line for value v, without the newline,
// to dst, following the rules of NewJSON.
func appendJSONLine(dst, v []byte) []byte {
	if c := firstNonSpace(v); c != 0 && utf8.Valid(v) && validJSON(v) {
		if bytes.IndexByte(v, '\n') < 0 {
			return append(dst, v...)
		}
		buf := bytes.NewBuffer(dst)
		if err := json.Compact(buf, v); err == nil {
			return buf.Bytes()
		}
		// Unreachable for valid JSON; fall back to a lossless string.
		dst = buf.Bytes()[:len(dst)]
	}
	return appendJSONString(dst, v)
}

// firstNonSpace returns the first byte of v that is not JSON whitespace,
// or 0 if there is none.
func firstNonSpace(v []byte) byte {
	for _, c := range v {
		switch c {
		case ' ', '\t', '\r', '\n':
		default:
			return c
		}
	}
	return 0
}

const hexDigits = "0123456789abcdef"

// appendJSONString appends v as a JSON string literal, escaping each byte
// of an invalid UTF-8 sequence as \udcXX.
func appendJSONString(dst, v []byte) []byte {
	dst = append(dst, '"')
	for i := 0; i < len(v); {
		c := v[i]
		if c < utf8.RuneSelf {
			switch {
			case c == '"':
				dst = append(dst, '\\', '"')
			case c == '\\':
				dst = append(dst, '\\', '\\')
			case c == '\n':
				dst = append(dst, '\\', 'n')
			case c == '\r':
				dst = append(dst, '\\', 'r')
			case c == '\t':
				dst = append(dst, '\\', 't')
			case c < 0x20:
				dst = append(dst, '\\', 'u', '0', '0', hexDigits[c>>4], hexDigits[c&0xf])
			default:
				dst = append(dst, c)
			}
			i++
			continue
		}
		r, size := utf8.DecodeRune(v[i:])
		if r == utf8.RuneError && size == 1 {
			dst = append(dst, '\\', 'u', 'd', 'c', hexDigits[c>>4], hexDigits[c&0xf])
		} else {
			dst = append(dst, v[i:i+size]...)
		}
		i += size
	}
	return append(dst, '"')
}

type jsonReader struct {
	br    *bufio.Reader
	line  int
	err   error
	nulls bool // NewNullableJSON
	// envelopes: a line that starts as AppendEnvelopeLine writes is
	// returned as it is, unchecked and not copied (valid until the next
	// Read), once the envelope reader has found the object holds
	// envelopes (passEnvelopeLines): it decodes each at once, and checks
	// it as it does (decodeEnvelopeLine).
	envelopes bool
	long      []byte // a line longer than br's buffer
	slab      slab   // the values' bytes
}

// passEnvelopeLines lets the lines of envelopes through unchecked.
func (jr *jsonReader) passEnvelopeLines() { jr.envelopes = true }

func (jr *jsonReader) Read() (*Record, error) {
	if jr.err != nil {
		return nil, jr.err
	}
	line, err := jr.readLine()
	if err != nil && !errors.Is(err, io.EOF) {
		jr.err = fmt.Errorf("json format: reading line %d: %w", jr.line+1, err)
		return nil, jr.err
	}
	if errors.Is(err, io.EOF) {
		jr.err = io.EOF
		if len(line) == 0 {
			return nil, io.EOF
		}
	}
	jr.line++
	line = bytes.TrimSuffix(line, []byte("\n"))
	if jr.nulls && string(line) == jsonNull {
		return &Record{}, nil
	}
	if jr.envelopes && bytes.HasPrefix(line, []byte(`{"partition":`)) {
		return &Record{Value: line}, nil
	}
	v, derr := parseJSONLine(line, &jr.slab)
	if derr != nil {
		jr.err = fmt.Errorf("json format: line %d: %w", jr.line, derr)
		return nil, jr.err
	}
	return &Record{Value: v}, nil
}

// readLine returns the next line with its "\n" (without one at the end of
// the input). The line is only valid until the next call: it is in the
// reader's buffer, or in jr.long for a line longer than the buffer.
func (jr *jsonReader) readLine() ([]byte, error) {
	line, err := jr.br.ReadSlice('\n')
	if !errors.Is(err, bufio.ErrBufferFull) {
		return line, err
	}
	jr.long = append(jr.long[:0], line...)
	for errors.Is(err, bufio.ErrBufferFull) {
		line, err = jr.br.ReadSlice('\n')
		jr.long = append(jr.long, line...)
	}
	if cap(jr.long) > maxKeptLine {
		defer func() { jr.long = nil }() // a rare huge line: let it go after this record
	}
	return jr.long, err
}

// maxKeptLine bounds the buffer a jsonReader keeps for lines longer than
// its bufio buffer.
const maxKeptLine = 1 << 20

// ErrBadJSONLine is wrapped by the JSON reader for a line that is not one
// JSON value.
var ErrBadJSONLine = errors.New("not a JSON value")

// parseJSONLine restores the value of one JSON line (without its newline),
// following the rules of NewJSON; a value that is the line itself is
// copied into s. The result is never nil.
func parseJSONLine(line []byte, s *slab) ([]byte, error) {
	if !validJSON(line) {
		return nil, fmt.Errorf("%w: %s", ErrBadJSONLine, quoteSnippet(line))
	}
	if firstNonSpace(line) != '"' {
		return s.clone(line), nil
	}
	return decodeJSONString(line)
}

// decodeJSONString decodes the single JSON string literal in line, which
// validJSON has accepted, mapping lone \udc80..\udcff escapes to bytes.
func decodeJSONString(line []byte) ([]byte, error) {
	i := bytes.IndexByte(line, '"') + 1
	out := make([]byte, 0, len(line))
	for i < len(line) {
		c := line[i]
		switch {
		case c == '"':
			return out, nil
		case c != '\\':
			out = append(out, c)
			i++
			continue
		}
		if i+1 >= len(line) {
			break
		}
		e := line[i+1]
		i += 2
		switch e {
		case '"', '\\', '/':
			out = append(out, e)
		case 'b':
			out = append(out, '\b')
		case 'f':
			out = append(out, '\f')
		case 'n':
			out = append(out, '\n')
		case 'r':
			out = append(out, '\r')
		case 't':
			out = append(out, '\t')
		case 'u':
			r, ok := hex4(line, i)
			if !ok {
				return nil, fmt.Errorf("%w: bad \\u escape in %s", ErrBadJSONLine, quoteSnippet(line))
			}
			i += 4
			switch {
			case r >= 0xd800 && r < 0xdc00:
				// A high surrogate: a pair if a low one follows.
				if i+1 < len(line) && line[i] == '\\' && line[i+1] == 'u' {
					if r2, ok := hex4(line, i+2); ok && r2 >= 0xdc00 && r2 < 0xe000 {
						out = utf8.AppendRune(out, utf16.DecodeRune(r, r2))
						i += 6
						continue
					}
				}
				out = utf8.AppendRune(out, utf8.RuneError)
			case r >= 0xdc80 && r <= 0xdcff:
				out = append(out, byte(r-0xdc00))
			case r >= 0xdc00 && r < 0xe000:
				out = utf8.AppendRune(out, utf8.RuneError)
			default:
				out = utf8.AppendRune(out, r)
			}
		default:
			return nil, fmt.Errorf("%w: bad escape in %s", ErrBadJSONLine, quoteSnippet(line))
		}
	}
	return nil, fmt.Errorf("%w: unterminated string in %s", ErrBadJSONLine, quoteSnippet(line))
}

// hex4 parses four hex digits at line[i:].
func hex4(line []byte, i int) (rune, bool) {
	if i+4 > len(line) {
		return 0, false
	}
	var r rune
	for _, c := range line[i : i+4] {
		switch {
		case c >= '0' && c <= '9':
			c -= '0'
		case c >= 'a' && c <= 'f':
			c -= 'a' - 10
		case c >= 'A' && c <= 'F':
			c -= 'A' - 10
		default:
			return 0, false
		}
		r = r<<4 | rune(c)
	}
	return r, true
}

// quoteSnippet quotes at most the first 64 bytes of b for an error message.
func quoteSnippet(b []byte) string {
	if len(b) > 64 {
		return fmt.Sprintf("%q...", b[:64])
	}
	return fmt.Sprintf("%q", b)
}
