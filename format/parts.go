package format

import (
	"encoding/json"
	"errors"
	"fmt"
	"unicode/utf8"

	"github.com/twmb/avro"
)

// This file turns a record's key and headers into the records of the
// parallel .keys and .headers objects (store.kafka.keys,
// store.kafka.headers), the way Confluent's KeyRecordView and
// HeaderRecordView do, per format (Spec's key and headers).

// ErrNullKeyBytes is wrapped by KeyPart.Record for a record with a null
// key when keys are stored in the bytes format, which has no null.
var ErrNullKeyBytes = errors.New("record has a null key, which keys.format.class=bytes cannot hold; use json, avro or parquet")

// Keys of the parallel objects' formats, named in errors.
const (
	KeyKeysFormatClass    = "keys.format.class"
	KeyHeadersFormatClass = "headers.format.class"
)

// headersSchemaText is the Avro schema of a .headers record: Connect's
// array of {key, value} structs. The value is nullable here (Confluent's is
// a plain string and fails on a null header value), so null values survive.
const headersSchemaText = `{"type":"array","items":{"type":"record","name":"ConnectDefault","namespace":"io.confluent.connect.avro",` +
	`"fields":[{"name":"key","type":"string"},{"name":"value","type":["null","string"]}]}}`

// Confluent's envelopes for Parquet .keys and .headers objects: a Parquet
// file holds records, so a key is the field "key" of a record "RecordKey"
// and the headers are the field "headers" of a record "RecordHeaders". The
// restorer unwraps both.
const (
	keyEnvelopeName     = "RecordKey"
	keyEnvelopeField    = "key"
	headersEnvelopeText = `{"type":"record","name":"RecordHeaders","fields":[{"name":"headers","type":` + headersSchemaText + `}]}`
	headersEnvelopeName = "headers"
	// maxKeyEnvelopes bounds the cache of key envelopes of one KeyPart;
	// it is cleared when full.
	maxKeyEnvelopes = 64
)

// KeyPart builds the records of .keys objects in one format. It caches
// schemas, so each partition writer has its own: it is not safe for
// concurrent use.
type KeyPart struct {
	key        func(p *partSchemas, r *Record, stringKeys bool) (*Record, error)
	stringKeys bool
	schemas    *partSchemas
}

// NewKeyPart returns the builder of .keys records in format k (see
// KeysFormats). stringKeys tells that keys come from Connect's
// StringConverter: untyped keys are then strings, not bytes, in Avro and
// Parquet. A format that cannot hold keys is an error wrapping
// ErrInvalidConfig.
func NewKeyPart(k Kind, stringKeys bool) (*KeyPart, error) {
	e, err := k.spec()
	if err != nil {
		return nil, fmt.Errorf("%s: %w", KeyKeysFormatClass, err)
	}
	if !e.Spec.HoldsKeys() {
		return nil, fmt.Errorf("%w: %s %v; want %s", ErrInvalidConfig, KeyKeysFormatClass, k, KeysFormats().OneOf())
	}
	return &KeyPart{key: e.Spec.key, stringKeys: stringKeys, schemas: newPartSchemas()}, nil
}

// Record returns the record the .keys object gets for r: r's key as the
// value, r's coordinates kept for errors. A null key is kept: JSON keys
// objects (NewNullableJSON) write it as the line null, Avro and Parquet
// ones as the null of the untyped key schema ["null","bytes"]
// (["null","string"] with string keys). Typed keys keep their schema (JSON
// renders them as JsonConverter would), so a null key among them takes the
// untyped schema, and the sink rotates on the switch like on any key
// schema change. Parquet wraps the key in Confluent's record "RecordKey".
// The bytes format has no null: ErrNullKeyBytes.
func (p *KeyPart) Record(r *Record) (*Record, error) { return p.key(p.schemas, r, p.stringKeys) }

// HeadersPart builds the records of .headers objects in one format. It
// caches schemas: it is not safe for concurrent use.
type HeadersPart struct {
	headers func(p *partSchemas, r *Record) (*Record, error)
	schemas *partSchemas
}

// NewHeadersPart returns the builder of .headers records in format k (see
// HeadersFormats). A format that cannot hold headers (bytes) is an error
// wrapping ErrInvalidConfig.
func NewHeadersPart(k Kind) (*HeadersPart, error) {
	e, err := k.spec()
	if err != nil {
		return nil, fmt.Errorf("%s: %w", KeyHeadersFormatClass, err)
	}
	if !e.Spec.HoldsHeaders() {
		return nil, fmt.Errorf("%w: %s %v; want %s", ErrInvalidConfig, KeyHeadersFormatClass, k, HeadersFormats().OneOf())
	}
	return &HeadersPart{headers: e.Spec.headers, schemas: newPartSchemas()}, nil
}

// Record returns the record the .headers object gets for r: its headers,
// in order, duplicates and null values kept. A record without headers gets
// an empty list (Confluent's connector refuses it), which the restore
// turns back into no headers. JSON writes a JSON array of {"key",
// "value"} (values must be UTF-8), Avro an array of {key, value} records,
// Parquet that array as the field "headers" of a record "RecordHeaders".
func (p *HeadersPart) Record(r *Record) (*Record, error) { return p.headers(p.schemas, r) }

// partSchemas holds the fixed schemas of untyped keys and of headers, the
// Parquet envelopes built so far and the JSON renderer of typed keys.
type partSchemas struct {
	bytes, str, headers *Schema
	// headersEnvelope is parsed on first use (Parquet headers only).
	headersEnvelope *Schema
	// keyEnvelopes maps a key schema to its RecordKey envelope, by pointer
	// and by schema text, so that records of one key schema share one
	// envelope (*Schema): the Parquet writer and the rotation on a new
	// key schema compare them by pointer first.
	keyEnvelopes       map[*Schema]*Schema
	keyEnvelopesByText map[string]*Schema
	json               *connectJSON
}

func newPartSchemas() *partSchemas {
	mk := func(text string) *Schema {
		return &Schema{Avro: avro.MustParse(text), Text: text}
	}
	// Untyped keys are optional, as Connect's ByteArrayConverter and
	// StringConverter give them (OPTIONAL_BYTES, OPTIONAL_STRING, which
	// Confluent's AvroData writes as a union with null): a null key is the
	// union's null.
	return &partSchemas{bytes: mk(`["null","bytes"]`), str: mk(`["null","string"]`), headers: mk(headersSchemaText), json: newConnectJSON()}
}

// keyEnvelope returns the schema of the record "RecordKey" whose single
// field "key" has the schema inner.
func (p *partSchemas) keyEnvelope(inner *Schema) (*Schema, error) {
	if s, ok := p.keyEnvelopes[inner]; ok {
		return s, nil
	}
	if inner == nil || inner.Avro == nil {
		return nil, errors.New("the key has no parsed Avro schema")
	}
	text := inner.Text
	if text == "" {
		text = inner.Avro.String()
	}
	s, ok := p.keyEnvelopesByText[text]
	if !ok {
		root := &avro.SchemaNode{Type: "record", Name: keyEnvelopeName,
			Fields: []avro.SchemaField{{Name: keyEnvelopeField, Type: *inner.Avro.Root()}}}
		parsed, err := root.Schema()
		if err != nil {
			return nil, fmt.Errorf("wrapping the key schema in a %s record: %w", keyEnvelopeName, err)
		}
		s = &Schema{Avro: parsed, Text: parsed.String()}
	}
	if len(p.keyEnvelopes) >= maxKeyEnvelopes || p.keyEnvelopes == nil {
		p.keyEnvelopes = make(map[*Schema]*Schema)
	}
	if len(p.keyEnvelopesByText) >= maxKeyEnvelopes || p.keyEnvelopesByText == nil {
		p.keyEnvelopesByText = make(map[string]*Schema)
	}
	p.keyEnvelopes[inner] = s
	p.keyEnvelopesByText[text] = s
	return s, nil
}

// headersEnvelopeSchema returns the schema of the record "RecordHeaders"
// whose single field "headers" is the headers array.
func (p *partSchemas) headersEnvelopeSchema() *Schema {
	if p.headersEnvelope == nil {
		p.headersEnvelope = &Schema{Avro: avro.MustParse(headersEnvelopeText), Text: headersEnvelopeText}
	}
	return p.headersEnvelope
}

// partRecord copies r's coordinates (for error messages) into a new record.
func partRecord(r *Record) *Record {
	return &Record{Topic: r.Topic, Partition: r.Partition, Offset: r.Offset, Timestamp: r.Timestamp, TimestampType: r.TimestampType}
}

// jsonKey: the key's bytes, a typed key rendered as JsonConverter would.
func jsonKey(p *partSchemas, r *Record, _ bool) (*Record, error) {
	out := partRecord(r)
	out.Value = r.Key
	if t := r.KeyTyped; t != nil {
		buf, err := p.json.appendValue(nil, t)
		if err != nil {
			return nil, fmt.Errorf("rendering the typed key as JSON: %w", err)
		}
		out.Value = buf
	}
	return out, nil
}

// bytesKey: the key's bytes; a null key is ErrNullKeyBytes.
func bytesKey(_ *partSchemas, r *Record, _ bool) (*Record, error) {
	if r.Key == nil {
		return nil, ErrNullKeyBytes
	}
	out := partRecord(r)
	out.Value = r.Key
	return out, nil
}

// avroKey: the typed key, or the key under the untyped key schema.
func avroKey(p *partSchemas, r *Record, stringKeys bool) (*Record, error) {
	out := partRecord(r)
	out.Value = r.Key
	if out.Value == nil {
		out.Value = []byte{} // not a tombstone: the writers refuse nil values
	}
	out.ValueTyped = r.KeyTyped
	if out.ValueTyped != nil {
		return out, nil
	}
	var native any // a null key
	switch {
	case stringKeys:
		if r.Key != nil {
			native = string(r.Key)
		}
		out.ValueTyped = &Typed{Schema: p.str, Native: native}
	default:
		if r.Key != nil {
			native = r.Key
		}
		out.ValueTyped = &Typed{Schema: p.bytes, Native: native}
	}
	return out, nil
}

// parquetKey: avroKey's key as the field "key" of a record "RecordKey".
func parquetKey(p *partSchemas, r *Record, stringKeys bool) (*Record, error) {
	out, err := avroKey(p, r, stringKeys)
	if err != nil {
		return nil, err
	}
	env, err := p.keyEnvelope(out.ValueTyped.Schema)
	if err != nil {
		return nil, err
	}
	native, err := AvroNative(out.ValueTyped)
	if err != nil {
		return nil, fmt.Errorf("decoding the typed key: %w", err)
	}
	out.ValueTyped = &Typed{Schema: env, Native: map[string]any{keyEnvelopeField: native}}
	return out, nil
}

// jsonHeaders: a JSON array of {"key", "value"}; values must be UTF-8.
func jsonHeaders(_ *partSchemas, r *Record) (*Record, error) {
	type header struct {
		Key   string  `json:"key"`
		Value *string `json:"value"`
	}
	hs := make([]header, len(r.Headers))
	for i, h := range r.Headers {
		hs[i].Key = h.Key
		if h.Value != nil {
			if !utf8.Valid(h.Value) {
				return nil, fmt.Errorf("header %d (%q): value is not UTF-8 text, which JSON headers files cannot hold; use headers.format.class avro", i, h.Key)
			}
			v := string(h.Value)
			hs[i].Value = &v
		}
	}
	buf, err := json.Marshal(hs)
	if err != nil {
		return nil, fmt.Errorf("rendering the headers as JSON: %w", err)
	}
	out := partRecord(r)
	out.Value = buf
	return out, nil
}

// headersList is r's headers as the Avro array of {key, value} records.
func headersList(r *Record) []any {
	list := make([]any, len(r.Headers))
	for i, h := range r.Headers {
		var v any
		if h.Value != nil {
			v = string(h.Value)
		}
		list[i] = map[string]any{"key": h.Key, "value": v}
	}
	return list
}

// avroHeaders: the Avro array of {key, value} records.
func avroHeaders(p *partSchemas, r *Record) (*Record, error) {
	out := partRecord(r)
	out.Value = []byte{} // not null: the writers check Value for tombstones
	out.ValueTyped = &Typed{Schema: p.headers, Native: headersList(r)}
	return out, nil
}

// parquetHeaders: the array as the field "headers" of a record
// "RecordHeaders".
func parquetHeaders(p *partSchemas, r *Record) (*Record, error) {
	out := partRecord(r)
	out.Value = []byte{} // not null: the writers check Value for tombstones
	out.ValueTyped = &Typed{Schema: p.headersEnvelopeSchema(), Native: map[string]any{headersEnvelopeName: headersList(r)}}
	return out, nil
}
