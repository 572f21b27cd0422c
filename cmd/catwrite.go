package cmd

import (
	"bufio"
	"encoding/base64"
	"encoding/json"
	"errors"
	"fmt"
	"strconv"
	"strings"
	"unicode/utf8"

	"github.com/kafkas3/kafkas3/format"
)

// byteEncoding is --encoding: how JSON lines print bytes.
type byteEncoding string

const (
	encodingAuto   byteEncoding = "auto"   // text when valid UTF-8, else base64
	encodingUTF8   byteEncoding = "utf8"   // text always (invalid bytes replaced)
	encodingBase64 byteEncoding = "base64" // base64 always
)

// recordWriter prints records for `kafkas3 cat`: JSON lines, or with a
// format string (tmpl).
type recordWriter struct {
	w    *bufio.Writer
	enc  byteEncoding
	tmpl []catVerb
	buf  []byte
}

func (rw *recordWriter) write(rec *format.Record) error {
	var err error
	if rw.tmpl != nil {
		rw.buf, err = appendFormatted(rw.buf[:0], rec, rw.tmpl)
	} else {
		rw.buf, err = rw.appendJSON(rw.buf[:0], rec)
	}
	if err != nil {
		return fmt.Errorf("record at offset %d of partition %d: %w", rec.Offset, rec.Partition, err)
	}
	_, err = rw.w.Write(rw.buf)
	return err
}

// appendJSON appends rec as one JSON line.
func (rw *recordWriter) appendJSON(b []byte, rec *format.Record) ([]byte, error) {
	b = append(b, `{"topic":`...)
	b = strconv.AppendQuote(b, rec.Topic)
	b = append(b, `,"partition":`...)
	b = strconv.AppendInt(b, int64(rec.Partition), 10)
	b = append(b, `,"offset":`...)
	b = strconv.AppendInt(b, rec.Offset, 10)
	b = append(b, `,"timestamp":`...)
	if rec.Timestamp.IsZero() {
		b = append(b, "null"...)
	} else {
		b = strconv.AppendInt(b, rec.Timestamp.UnixMilli(), 10)
	}
	var err error
	if b, err = rw.appendField(b, "key", rec.Key, rec.KeyTyped); err != nil {
		return b, err
	}
	if b, err = rw.appendField(b, "value", rec.Value, rec.ValueTyped); err != nil {
		return b, err
	}
	b = append(b, `,"headers":[`...)
	for i, h := range rec.Headers {
		if i > 0 {
			b = append(b, ',')
		}
		b = append(b, `{"key":`...)
		b = appendJSONString(b, h.Key)
		b, _ = rw.appendField(b, "value", h.Value, nil)
		b = append(b, '}')
	}
	return append(b, "]}\n"...), nil
}

// appendField appends `,"name":<v>` and, when v is not printed as text,
// `,"name_encoding":"base64"` (or "json" for a typed value).
func (rw *recordWriter) appendField(b []byte, name string, v []byte, typed *format.Typed) ([]byte, error) {
	b = append(b, `,"`...)
	b = append(b, name...)
	b = append(b, `":`...)
	switch {
	case typed != nil && typed.Schema != nil:
		js, err := typedJSON(typed)
		if err != nil {
			return b, fmt.Errorf("%s: %w", name, err)
		}
		b = append(b, js...)
		return appendEncoding(b, name, "json"), nil
	case v == nil:
		return append(b, "null"...), nil
	case rw.enc == encodingBase64 || (rw.enc == encodingAuto && !utf8.Valid(v)):
		b = append(b, '"')
		b = base64.StdEncoding.AppendEncode(b, v)
		b = append(b, '"')
		return appendEncoding(b, name, "base64"), nil
	}
	return appendJSONString(b, string(v)), nil
}

func appendEncoding(b []byte, name, enc string) []byte {
	b = append(b, `,"`...)
	b = append(b, name...)
	b = append(b, `_encoding":"`...)
	b = append(b, enc...)
	return append(b, '"')
}

// appendJSONString appends s as a JSON string (invalid UTF-8 replaced).
func appendJSONString(b []byte, s string) []byte {
	js, _ := json.Marshal(strings.ToValidUTF8(s, "\uFFFD"))
	return append(b, js...)
}

// typedJSON renders a typed key or value (Avro, Parquet) as Avro's JSON
// encoding of its value (unions bare).
func typedJSON(t *format.Typed) ([]byte, error) {
	native, err := format.AvroNative(t)
	if err != nil {
		return nil, err
	}
	if t.Schema.Avro == nil {
		return nil, errors.New("typed value without an Avro schema")
	}
	return t.Schema.Avro.EncodeJSON(native)
}

// catVerb is one piece of a -f format string: literal text, or a verb.
type catVerb struct {
	lit  string
	verb byte
}

// parseCatFormat reads a kcat-like format string.
func parseCatFormat(s string) ([]catVerb, error) {
	var out []catVerb
	var lit strings.Builder
	flush := func() {
		if lit.Len() > 0 {
			out = append(out, catVerb{lit: lit.String()})
			lit.Reset()
		}
	}
	for i := 0; i < len(s); i++ {
		c := s[i]
		if (c != '%' && c != '\\') || i+1 == len(s) {
			if c == '%' || c == '\\' {
				return nil, fmt.Errorf("%q ends with a lone %q", s, c)
			}
			lit.WriteByte(c)
			continue
		}
		i++
		n := s[i]
		switch {
		case c == '\\' && strings.IndexByte(`nt\`, n) >= 0:
			lit.WriteByte(map[byte]byte{'n': '\n', 't': '\t', '\\': '\\'}[n])
		case c == '%' && n == '%':
			lit.WriteByte('%')
		case c == '%' && strings.IndexByte("tpoTkKsSh", n) >= 0:
			flush()
			out = append(out, catVerb{verb: n})
		default:
			return nil, fmt.Errorf("%q: unknown %c%c; known: %%t %%p %%o %%T %%k %%K %%s %%S %%h %%%% \\n \\t \\\\", s, c, n)
		}
	}
	flush()
	return out, nil
}

// appendFormatted appends rec as the format string tmpl says.
func appendFormatted(b []byte, rec *format.Record, tmpl []catVerb) ([]byte, error) {
	for _, v := range tmpl {
		var err error
		switch v.verb {
		case 0:
			b = append(b, v.lit...)
		case 't':
			b = append(b, rec.Topic...)
		case 'p':
			b = strconv.AppendInt(b, int64(rec.Partition), 10)
		case 'o':
			b = strconv.AppendInt(b, rec.Offset, 10)
		case 'T':
			b = appendTimestamp(b, rec)
		case 'k', 's':
			b, err = appendRaw(b, rec, v.verb == 'k')
		case 'K', 'S':
			b = appendLen(b, rec, v.verb == 'K')
		case 'h':
			b = appendHeaders(b, rec.Headers)
		}
		if err != nil {
			return b, err
		}
	}
	return b, nil
}

func appendTimestamp(b []byte, rec *format.Record) []byte {
	if rec.Timestamp.IsZero() {
		return append(b, "-1"...)
	}
	return strconv.AppendInt(b, rec.Timestamp.UnixMilli(), 10)
}

// appendRaw appends the key or value as it is, a typed one as JSON.
func appendRaw(b []byte, rec *format.Record, key bool) ([]byte, error) {
	v, t := rec.Value, rec.ValueTyped
	if key {
		v, t = rec.Key, rec.KeyTyped
	}
	if t != nil && t.Schema != nil {
		js, err := typedJSON(t)
		return append(b, js...), err
	}
	return append(b, v...), nil
}

func appendLen(b []byte, rec *format.Record, key bool) []byte {
	v := rec.Value
	if key {
		v = rec.Key
	}
	if v == nil && (key && rec.KeyTyped == nil || !key && rec.ValueTyped == nil) {
		return append(b, "-1"...)
	}
	return strconv.AppendInt(b, int64(len(v)), 10)
}

func appendHeaders(b []byte, hs []format.Header) []byte {
	for i, h := range hs {
		if i > 0 {
			b = append(b, ',')
		}
		b = append(b, h.Key...)
		b = append(b, '=')
		b = append(b, h.Value...)
	}
	return b
}
