package format

import (
	"errors"
	"fmt"
	"io"
	"strings"
	"time"
	"unicode/utf8"

	"github.com/twmb/avro"
)

// EnvelopeSchemaName is the full name of the Avro record of envelope
// objects (store.envelope=true with Avro or Parquet). Readers recognise
// envelope files by it (and by the whole schema text, see
// EnvelopeSchemaText).
const EnvelopeSchemaName = "kafkas3.Envelope"

// The envelope schema is envelopeSchemaHead + <value schema> +
// envelopeSchemaTail, where the value schema is "bytes" for values without
// a schema, or the value's own schema text, verbatim.
const (
	envelopeSchemaHead = `{"type":"record","name":"Envelope","namespace":"kafkas3",` +
		`"doc":"One Kafka record archived by kafkas3 with store.envelope=true.","fields":[` +
		`{"name":"partition","type":"int"},` +
		`{"name":"offset","type":"long"},` +
		`{"name":"timestamp","type":{"type":"long","logicalType":"timestamp-millis"}},` +
		`{"name":"timestamp_type","type":"string"},` +
		`{"name":"key","type":["null","bytes"]},` +
		`{"name":"value","type":["null",`
	envelopeSchemaTail = `]},` +
		`{"name":"headers","type":{"type":"array","items":{"type":"record","name":"EnvelopeHeader","fields":[` +
		`{"name":"key","type":"string"},{"name":"value","type":["null","bytes"]}]}}}]}`
	envelopeBytesValue = `"bytes"`
)

// EnvelopeSchemaText returns the Avro schema of envelope files whose
// values have the schema valueSchema (Avro JSON); "" gives the schema of
// files whose values are bytes.
func EnvelopeSchemaText(valueSchema string) string {
	if valueSchema == "" {
		valueSchema = envelopeBytesValue
	}
	return envelopeSchemaHead + valueSchema + envelopeSchemaTail
}

// maxEnvelopeSchemas bounds the envelope schemas one writer caches; the
// cache is cleared when full.
const maxEnvelopeSchemas = 64

// envSchema is one envelope schema: the file's, and for typed values the
// value's.
type envSchema struct {
	schema *Schema    // the envelope record's
	value  *Schema    // the value's; nil when values are bytes
	datum  *AvroDatum // checks and encodes values of value
	root   *avroNode  // compiled value schema (typed only)
	bytes  bool       // values are bytes
}

// envelopeSchemas builds the envelope schema of each value schema once, so
// that records of one value schema share one *Schema (the typed writers
// compare schemas by pointer first).
type envelopeSchemas struct {
	bytes  *envSchema
	byPtr  map[*Schema]*envSchema
	byText map[string]*envSchema
	// holds, when set, tells whether the file format can hold a typed
	// envelope schema (Parquet cannot hold every Avro schema); one it
	// cannot hold gets the bytes envelope.
	holds func(*avro.Schema) bool
}

func newEnvelopeSchemas() (*envelopeSchemas, error) {
	text := EnvelopeSchemaText("")
	s, err := avro.Parse(text)
	if err != nil {
		return nil, fmt.Errorf("envelope schema: %w", err)
	}
	return &envelopeSchemas{
		bytes:  &envSchema{schema: &Schema{Avro: s, Text: text}, bytes: true},
		byPtr:  map[*Schema]*envSchema{},
		byText: map[string]*envSchema{},
	}, nil
}

// envelopeValueFits reports whether values of s can be a typed envelope
// field: any schema but a union (Avro unions cannot nest) or null.
func envelopeValueFits(s *Schema) bool {
	if s == nil || s.Avro == nil {
		return false
	}
	t := s.Avro.Root().Type
	return t != "union" && t != "null"
}

// forValue returns the envelope schema for values of s: typed when s fits
// (see envelopeValueFits) and the envelope schema with s inside parses,
// else the bytes envelope (the value's bytes are then stored as they came).
func (c *envelopeSchemas) forValue(s *Schema) *envSchema {
	if !envelopeValueFits(s) {
		return c.bytes
	}
	if es, ok := c.byPtr[s]; ok {
		return es
	}
	text := avroSchemaText(s)
	es, ok := c.byText[text]
	if !ok {
		var err error
		if es, err = typedEnvSchema(text, s); err != nil || (c.holds != nil && !c.holds(es.schema.Avro)) {
			// A value schema that defines kafkas3.Envelope or
			// kafkas3.EnvelopeHeader itself cannot be nested, and
			// Parquet cannot hold some schemas: keep the bytes, which
			// lose nothing.
			es = c.bytes
		}
		if len(c.byText) >= maxEnvelopeSchemas {
			clear(c.byText)
			clear(c.byPtr)
		}
		c.byText[text] = es
	}
	c.byPtr[s] = es
	return es
}

// typedEnvSchema builds the envelope schema around the value schema text.
func typedEnvSchema(text string, value *Schema) (*envSchema, error) {
	full := EnvelopeSchemaText(text)
	s, err := avro.Parse(full)
	if err != nil {
		return nil, err
	}
	if value == nil {
		vs, err := avro.Parse(text)
		if err != nil {
			return nil, err
		}
		value = &Schema{Avro: vs, Text: text}
	}
	d, err := NewAvroDatum(value.Avro)
	if err != nil {
		return nil, err
	}
	return &envSchema{schema: &Schema{Avro: s, Text: full}, value: value, datum: d, root: d.root}, nil
}

// parseEnvelopeSchema tells whether s (a file's schema) is an envelope
// schema. A schema named kafkas3.Envelope that is not exactly the
// documented layout is an error.
func parseEnvelopeSchema(s *Schema) (*envSchema, bool, error) {
	if s.Avro == nil {
		return nil, false, nil
	}
	root := s.Avro.Root()
	if avroFullName(root.Name, root.Namespace) != EnvelopeSchemaName {
		return nil, false, nil
	}
	text := avroSchemaText(s)
	if !strings.HasPrefix(text, envelopeSchemaHead) || !strings.HasSuffix(text, envelopeSchemaTail) ||
		len(text) < len(envelopeSchemaHead)+len(envelopeSchemaTail) {
		return nil, false, fmt.Errorf("%w: the schema is named %s but is not the envelope layout kafkas3 writes", ErrBadEnvelope, EnvelopeSchemaName)
	}
	inner := text[len(envelopeSchemaHead) : len(text)-len(envelopeSchemaTail)]
	if inner == envelopeBytesValue {
		return &envSchema{schema: s, bytes: true}, true, nil
	}
	es, err := typedEnvSchema(inner, nil)
	if err != nil {
		return nil, false, fmt.Errorf("%w: the envelope's value schema: %w", ErrBadEnvelope, err)
	}
	if !envelopeValueFits(es.value) {
		return nil, false, fmt.Errorf("%w: the envelope's value schema is a %s", ErrBadEnvelope, es.value.Avro.Root().Type)
	}
	es.schema = s
	return es, true, nil
}

// appendDatum appends the Avro encoding of r's envelope under e to dst.
// On error dst is returned unchanged.
func (e *envSchema) appendDatum(dst []byte, r *Record) ([]byte, error) {
	if !validTimestampType(r.TimestampType) {
		return dst, fmt.Errorf("%w: timestamp type %d", ErrBadEnvelope, r.TimestampType)
	}
	out := appendAvroLong(dst, int64(r.Partition))
	out = appendAvroLong(out, r.Offset)
	out = appendAvroLong(out, r.Timestamp.UnixMilli())
	out = appendAvroBytes(out, []byte(r.TimestampType.String()))
	out = appendAvroOptBytes(out, r.Key)
	switch {
	case r.Value == nil && r.ValueTyped == nil:
		out = appendAvroLong(out, 0)
	case e.bytes:
		if r.Value == nil {
			return dst, fmt.Errorf("%w: a typed value without its bytes", ErrBadEnvelope)
		}
		out = appendAvroOptBytes(out, r.Value)
	default:
		t := r.ValueTyped
		if t == nil {
			return dst, fmt.Errorf("%w: a value without a schema in a file of typed values", ErrSchemaChanged)
		}
		out = appendAvroLong(out, 1)
		if t.Raw != nil {
			if err := e.datum.Check(t.Raw); err != nil {
				return dst, fmt.Errorf("the value is not one datum of its schema: %w", err)
			}
			out = append(out, t.Raw...)
		} else {
			var err error
			if out, err = e.datum.Append(out, t.Native); err != nil {
				return dst, fmt.Errorf("encoding the value: %w", err)
			}
		}
	}
	if n := len(r.Headers); n > 0 {
		out = appendAvroLong(out, int64(n))
		for _, h := range r.Headers {
			if !utf8.ValidString(h.Key) {
				return dst, fmt.Errorf("%w: header key %q is not UTF-8 (an Avro string); use the JSON envelope", ErrBadEnvelope, h.Key)
			}
			out = appendAvroBytes(out, []byte(h.Key))
			out = appendAvroOptBytes(out, h.Value)
		}
	}
	return appendAvroLong(out, 0), nil
}

func appendAvroOptBytes(b, p []byte) []byte {
	if p == nil {
		return appendAvroLong(b, 0)
	}
	return appendAvroBytes(appendAvroLong(b, 1), p)
}

// envelope datum decoding, from the Avro binary encoding of one envelope.

type envDecoder struct {
	src []byte
	err error
}

func (d *envDecoder) fail(what string, err error) {
	if d.err == nil {
		d.err = fmt.Errorf("%w: %s: %w", ErrBadEnvelope, what, err)
	}
}

func (d *envDecoder) long(what string) int64 {
	if d.err != nil {
		return 0
	}
	v, rest, err := avroReadLong(d.src)
	if err != nil {
		d.fail(what, err)
		return 0
	}
	d.src = rest
	return v
}

func (d *envDecoder) bytes(what string) []byte {
	n := d.long(what + " length")
	if d.err != nil {
		return nil
	}
	if n < 0 || n > int64(len(d.src)) {
		d.fail(what, fmt.Errorf("length %d out of range (%d bytes left)", n, len(d.src)))
		return nil
	}
	b := make([]byte, n)
	copy(b, d.src)
	d.src = d.src[n:]
	return b
}

// optBytes reads a ["null","bytes"] union: nil for null, non-nil otherwise.
func (d *envDecoder) optBytes(what string) []byte {
	switch i := d.long(what + " union branch"); {
	case d.err != nil:
		return nil
	case i == 0:
		return nil
	case i == 1:
		return d.bytes(what)
	default:
		d.fail(what, fmt.Errorf("union branch %d out of range", i))
		return nil
	}
}

// decode decodes the Avro encoding of one envelope of e.
func (e *envSchema) decode(raw []byte) (*Record, error) {
	r, rest, err := e.decodeNext(raw)
	if err == nil && len(rest) != 0 {
		err = fmt.Errorf("%w: datum: %d bytes left after the envelope", ErrBadEnvelope, len(rest))
	}
	if err != nil {
		return nil, err
	}
	return r, nil
}

// decodeNext decodes the envelope at the start of src (a block of an
// Avro file) and returns the bytes after it.
func (e *envSchema) decodeNext(src []byte) (*Record, []byte, error) {
	d := &envDecoder{src: src}
	r := &Record{}
	p := d.long("partition")
	if d.err == nil && (p < 0 || p > 1<<31-1) {
		d.fail("partition", fmt.Errorf("%d out of range", p))
	}
	r.Partition = int32(p)
	r.Offset = d.long("offset")
	r.Timestamp = time.UnixMilli(d.long("timestamp"))
	tt := d.bytes("timestamp_type")
	if d.err == nil {
		var err error
		if r.TimestampType, err = ParseTimestampType(string(tt)); err != nil {
			return nil, nil, err
		}
	}
	r.Key = d.optBytes("key")
	if e.bytes {
		r.Value = d.optBytes("value")
	} else {
		switch i := d.long("value union branch"); {
		case d.err != nil:
		case i == 0:
		case i == 1:
			// The canonical form (map entries sorted, one block per
			// array), so that a Parquet file, whose reader re-encodes
			// maps in Go's random order, restores the same bytes each time.
			budget := avroItemBudget(len(d.src))
			v, rest, err := avroCanon(e.root, []byte{}, d.src, 0, &budget)
			if err != nil {
				d.fail("value", fmt.Errorf("%w: %w", ErrBadAvro, err))
				break
			}
			d.src = rest
			r.Value = v
			r.ValueTyped = &Typed{Schema: e.value, Raw: v}
		default:
			d.fail("value", fmt.Errorf("union branch %d out of range", i))
		}
	}
	for d.err == nil {
		n := d.long("headers block count")
		if d.err != nil || n == 0 {
			break
		}
		if n < 0 { // a block with its byte size
			n = -n
			d.long("headers block size")
		}
		// Every header takes at least two bytes: bound hostile counts.
		if n < 0 || n > int64(len(d.src))/2+1 {
			d.fail("headers", fmt.Errorf("block count %d exceeds the data", n))
			break
		}
		for i := int64(0); i < n && d.err == nil; i++ {
			k := d.bytes("header key")
			if d.err == nil && !utf8.Valid(k) {
				d.fail("header key", errors.New("not UTF-8"))
			}
			v := d.optBytes("header value")
			if d.err == nil {
				r.Headers = append(r.Headers, Header{Key: string(k), Value: v})
			}
		}
	}
	if d.err != nil {
		return nil, nil, d.err
	}
	return r, d.src, nil
}

// typedEnvelopeFormat is the Avro or Parquet format holding envelopes: its
// writer turns each record into the Avro datum of its envelope and hands it
// to the inner format's writer, which does the codecs and the file layout.
type typedEnvelopeFormat struct {
	inner   Format
	parquet bool
}

func (f *typedEnvelopeFormat) Extension() string { return f.inner.Extension() }

func (f *typedEnvelopeFormat) NewWriter(w io.Writer) (RecordWriter, error) {
	rw, err := f.inner.NewWriter(w)
	if err != nil {
		return nil, err
	}
	schemas, err := newEnvelopeSchemas()
	if err != nil {
		return nil, err
	}
	if f.parquet {
		schemas.holds = func(s *avro.Schema) bool { _, _, err := parquetTree(s); return err == nil }
	}
	return &typedEnvelopeWriter{inner: rw, schemas: schemas}, nil
}

func (f *typedEnvelopeFormat) NewReader(r io.Reader) (RecordReader, error) {
	rd, err := f.inner.NewReader(r)
	if err != nil {
		return nil, err
	}
	return ReadEnvelopes(rd, EnvelopeRequired), nil
}

type typedEnvelopeWriter struct {
	inner   RecordWriter
	schemas *envelopeSchemas
	cur     *envSchema // the open file's; nil before its first record
	buf     []byte
	closed  bool
}

// pick returns the envelope schema for r: a null value fits the open
// file's, a value of the file's value schema the file's.
func (w *typedEnvelopeWriter) pick(r *Record) *envSchema {
	if r.Value == nil && r.ValueTyped == nil && w.cur != nil {
		return w.cur
	}
	var vs *Schema
	if r.ValueTyped != nil {
		vs = r.ValueTyped.Schema
	}
	if w.cur != nil && w.cur.value != nil && vs != nil && SameAvroSchema(w.cur.value, vs) {
		return w.cur
	}
	return w.schemas.forValue(vs)
}

func (w *typedEnvelopeWriter) Write(r *Record) error {
	if w.closed {
		return ErrClosed
	}
	if r == nil {
		return errors.New("envelope: nil record")
	}
	es := w.pick(r)
	if w.cur != nil && es != w.cur {
		return fmt.Errorf("envelope: %s: %w", avroWhere(r), ErrSchemaChanged)
	}
	buf, err := es.appendDatum(w.buf[:0], r)
	if err != nil {
		return fmt.Errorf("envelope: %s: %w", avroWhere(r), err)
	}
	w.buf = buf
	env := Record{
		Topic: r.Topic, Partition: r.Partition, Offset: r.Offset, Timestamp: r.Timestamp, TimestampType: r.TimestampType,
		Value: buf, ValueTyped: &Typed{Schema: es.schema, Raw: buf},
	}
	if err := w.inner.Write(&env); err != nil {
		return err
	}
	w.cur = es
	return nil
}

func (w *typedEnvelopeWriter) Close() error {
	if w.closed {
		return nil
	}
	w.closed = true
	return w.inner.Close()
}
