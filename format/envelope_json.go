package format

import (
	"bufio"
	"bytes"
	"encoding/base64"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"strconv"
	"time"
)

// envelopeFields are the JSON envelope's keys, in the order written and
// required.
func envelopeFields() [7]string {
	return [...]string{"partition", "offset", "timestamp", "timestamp_type", "key", "value", "headers"}
}

// JSON envelopes hold bytes as base64 of the standard alphabet, padded;
// the reader is strict (base64.Encoding.Strict).

// jsonEnvelopeFormat is the JSON format with store.envelope=true.
type jsonEnvelopeFormat struct{}

func (jsonEnvelopeFormat) Extension() string { return ".json" }

func (jsonEnvelopeFormat) NewWriter(w io.Writer) (RecordWriter, error) {
	if w == nil {
		return nil, errors.New("json envelope: nil writer")
	}
	return &jsonEnvelopeWriter{w: w}, nil
}

func (jsonEnvelopeFormat) NewReader(r io.Reader) (RecordReader, error) {
	if r == nil {
		return nil, errors.New("json envelope: nil reader")
	}
	return ReadEnvelopes(&jsonReader{br: bufio.NewReaderSize(r, 64<<10)}, EnvelopeRequired), nil
}

type jsonEnvelopeWriter struct {
	w      io.Writer
	buf    []byte
	err    error
	closed bool
}

func (jw *jsonEnvelopeWriter) Write(r *Record) error {
	if jw.closed {
		return ErrClosed
	}
	if jw.err != nil {
		return jw.err
	}
	if r == nil {
		return errors.New("json envelope: nil record")
	}
	if !validTimestampType(r.TimestampType) {
		return fmt.Errorf("json envelope: offset %d: %w: timestamp type %d", r.Offset, ErrBadEnvelope, r.TimestampType)
	}
	jw.buf = append(AppendEnvelopeLine(jw.buf[:0], r), '\n')
	if err := writeAll(jw.w, jw.buf); err != nil {
		jw.err = fmt.Errorf("json envelope: writing record at offset %d: %w", r.Offset, err)
	}
	return jw.err
}

func (jw *jsonEnvelopeWriter) Close() error {
	if jw.closed {
		return nil
	}
	jw.closed = true
	return jw.err
}

// AppendEnvelopeLine appends the JSON envelope of r, without a newline, to
// dst:
//
//	{"partition":0,"offset":42,"timestamp":1700000000000,"timestamp_type":"CreateTime",
//	 "key":"azE=","value":null,"headers":[{"key":"h","value":""},{"key":"h","value":null}]}
//
// (on one line). Key, value and header values are base64 (standard
// alphabet, padded) or null; header keys are JSON strings (bytes that are
// not UTF-8 as \udcXX escapes, as NewJSON writes values).
func AppendEnvelopeLine(dst []byte, r *Record) []byte {
	dst = append(dst, `{"partition":`...)
	dst = strconv.AppendInt(dst, int64(r.Partition), 10)
	dst = append(dst, `,"offset":`...)
	dst = strconv.AppendInt(dst, r.Offset, 10)
	dst = append(dst, `,"timestamp":`...)
	dst = strconv.AppendInt(dst, r.Timestamp.UnixMilli(), 10)
	dst = append(dst, `,"timestamp_type":"`...)
	dst = append(dst, r.TimestampType.String()...)
	dst = append(dst, `","key":`...)
	dst = appendB64(dst, r.Key)
	dst = append(dst, `,"value":`...)
	dst = appendB64(dst, r.Value)
	dst = append(dst, `,"headers":[`...)
	for i, h := range r.Headers {
		if i > 0 {
			dst = append(dst, ',')
		}
		dst = append(dst, `{"key":`...)
		dst = appendJSONString(dst, []byte(h.Key))
		dst = append(dst, `,"value":`...)
		dst = appendB64(dst, h.Value)
		dst = append(dst, '}')
	}
	return append(dst, "]}"...)
}

func appendB64(dst, p []byte) []byte {
	if p == nil {
		return append(dst, "null"...)
	}
	dst = append(dst, '"')
	dst = base64.StdEncoding.AppendEncode(dst, p)
	return append(dst, '"')
}

// jsonFields reads the members of the JSON object in raw, in order.
func jsonFields(raw []byte) ([]string, []json.RawMessage, error) {
	dec := json.NewDecoder(bytes.NewReader(raw))
	tok, err := dec.Token()
	if err != nil {
		return nil, nil, err
	}
	if d, ok := tok.(json.Delim); !ok || d != '{' {
		return nil, nil, errors.New("not an object")
	}
	var keys []string
	var vals []json.RawMessage
	for dec.More() {
		tok, err := dec.Token()
		if err != nil {
			return nil, nil, err
		}
		k, ok := tok.(string)
		if !ok {
			return nil, nil, errors.New("bad object key")
		}
		var v json.RawMessage
		if err := dec.Decode(&v); err != nil {
			return nil, nil, err
		}
		keys = append(keys, k)
		vals = append(vals, v)
	}
	if _, err := dec.Token(); err != nil { // the closing brace
		return nil, nil, err
	}
	if _, err := dec.Token(); !errors.Is(err, io.EOF) {
		return nil, nil, errors.New("data after the object")
	}
	return keys, vals, nil
}

// envelopeShape returns the envelope members of line when it is a JSON
// object whose keys are exactly the envelope's, in order; else nil.
func envelopeShape(line []byte) []json.RawMessage {
	if firstNonSpace(line) != '{' {
		return nil
	}
	keys, vals, err := jsonFields(line)
	fields := envelopeFields()
	if err != nil || len(keys) != len(fields) {
		return nil
	}
	for i, k := range keys {
		if k != fields[i] {
			return nil
		}
	}
	return vals
}

// isEnvelopeLine reports whether line has the JSON envelope's shape (see
// envelopeShape); its values may still be bad.
func isEnvelopeLine(line []byte) bool { return envelopeShape(line) != nil }

// decodeEnvelopeLine decodes one JSON envelope line (without its newline).
// The line must have the envelope's keys in order, integers where numbers
// are, base64 or null for bytes. Lines in the form AppendEnvelopeLine
// writes take the fast reader (decodeEnvelopeFast).
func decodeEnvelopeLine(line []byte) (*Record, error) {
	if r, ok := decodeEnvelopeFast(line); ok {
		return r, nil
	}
	vals := envelopeShape(line)
	if vals == nil {
		return nil, fmt.Errorf("%w: not a JSON envelope line (want the keys %q in this order): %s", ErrBadEnvelope, envelopeFields(), quoteSnippet(line))
	}
	return decodeEnvelopeMembers(vals)
}

// decodeEnvelopeMembers decodes the members of an envelope line, in the
// envelope's order (envelopeShape).
func decodeEnvelopeMembers(vals []json.RawMessage) (*Record, error) {
	var err error
	bad := func(field string, err error) error {
		return fmt.Errorf("%w: %s: %w", ErrBadEnvelope, field, err)
	}
	r := &Record{}
	p, err := strconv.ParseInt(string(vals[0]), 10, 32)
	if err != nil || p < 0 {
		return nil, bad("partition", fmt.Errorf("%s is not a partition number", quoteSnippet(vals[0])))
	}
	r.Partition = int32(p)
	if r.Offset, err = strconv.ParseInt(string(vals[1]), 10, 64); err != nil {
		return nil, bad("offset", fmt.Errorf("%s is not an integer", quoteSnippet(vals[1])))
	}
	ts, err := strconv.ParseInt(string(vals[2]), 10, 64)
	if err != nil {
		return nil, bad("timestamp", fmt.Errorf("%s is not an integer", quoteSnippet(vals[2])))
	}
	r.Timestamp = time.UnixMilli(ts)
	var tt string
	if err := json.Unmarshal(vals[3], &tt); err != nil {
		return nil, bad("timestamp_type", err)
	}
	if r.TimestampType, err = ParseTimestampType(tt); err != nil {
		return nil, err
	}
	if r.Key, err = decodeB64(vals[4]); err != nil {
		return nil, bad("key", err)
	}
	if r.Value, err = decodeB64(vals[5]); err != nil {
		return nil, bad("value", err)
	}
	if r.Headers, err = decodeEnvelopeHeaders(vals[6]); err != nil {
		return nil, bad("headers", err)
	}
	return r, nil
}

// decodeB64 decodes null (nil) or a base64 JSON string (non-nil).
func decodeB64(raw json.RawMessage) ([]byte, error) {
	if string(raw) == "null" {
		return nil, nil
	}
	var s string
	if err := json.Unmarshal(raw, &s); err != nil {
		return nil, fmt.Errorf("want null or a base64 string: %w", err)
	}
	b, err := base64.StdEncoding.Strict().DecodeString(s)
	if err != nil {
		return nil, err
	}
	if b == nil {
		b = []byte{}
	}
	return b, nil
}

func decodeEnvelopeHeaders(raw json.RawMessage) ([]Header, error) {
	var items []json.RawMessage
	if err := json.Unmarshal(raw, &items); err != nil || items == nil {
		return nil, fmt.Errorf("want an array of {\"key\", \"value\"}: %s", quoteSnippet(raw))
	}
	if len(items) == 0 {
		return nil, nil
	}
	out := make([]Header, 0, len(items))
	for i, it := range items {
		keys, vals, err := jsonFields(it)
		if err != nil || len(keys) != 2 || keys[0] != "key" || keys[1] != "value" {
			return nil, fmt.Errorf("entry %d: want {\"key\": string, \"value\": base64 or null}: %s", i, quoteSnippet(it))
		}
		if firstNonSpace(vals[0]) != '"' {
			return nil, fmt.Errorf("entry %d: key %s is not a string", i, quoteSnippet(vals[0]))
		}
		k, err := decodeJSONString(vals[0])
		if err != nil {
			return nil, fmt.Errorf("entry %d: key: %w", i, err)
		}
		v, err := decodeB64(vals[1])
		if err != nil {
			return nil, fmt.Errorf("entry %d (%q): value: %w", i, k, err)
		}
		out = append(out, Header{Key: string(k), Value: v})
	}
	return out, nil
}
