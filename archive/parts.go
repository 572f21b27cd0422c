package archive

import (
	"encoding/json"
	"errors"
	"fmt"
	"unicode/utf8"

	"github.com/kafkas3/kafkas3/format"
	"github.com/twmb/avro"
)

// This file turns a record's key and headers into the records of the
// parallel .keys and .headers objects (store.kafka.keys,
// store.kafka.headers), the way Confluent's KeyRecordView and
// HeaderRecordView do.

// ErrNullKeyBytes is wrapped by the bad-record error of a record with a
// null key when keys are stored in the bytes format, which has no null.
var ErrNullKeyBytes = errors.New("record has a null key, which keys.format.class=bytes cannot hold; use json, avro or parquet")

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
	// maxKeyEnvelopes bounds the cache of key envelopes of one partition
	// writer; it is cleared when full.
	maxKeyEnvelopes = 64
)

// Part names, as FileStats.Part reports them.
const (
	PartKeys    = "keys"
	PartHeaders = "headers"
)

// partSchemas holds the fixed schemas of untyped keys and of headers, and
// the Parquet envelopes built so far.
type partSchemas struct {
	bytes, str, headers *format.Schema
	// headersEnvelope is parsed on first use (Parquet headers only).
	headersEnvelope *format.Schema
	// keyEnvelopes maps a key schema to its RecordKey envelope, by pointer
	// and by schema text, so that records of one key schema share one
	// envelope (*format.Schema): the Parquet writer and the rotation on a
	// new key schema compare them by pointer first.
	keyEnvelopes       map[*format.Schema]*format.Schema
	keyEnvelopesByText map[string]*format.Schema
}

func newPartSchemas() *partSchemas {
	mk := func(text string) *format.Schema {
		return &format.Schema{Avro: avro.MustParse(text), Text: text}
	}
	// Untyped keys are optional, as Connect's ByteArrayConverter and
	// StringConverter give them (OPTIONAL_BYTES, OPTIONAL_STRING, which
	// Confluent's AvroData writes as a union with null): a null key is the
	// union's null.
	return &partSchemas{bytes: mk(`["null","bytes"]`), str: mk(`["null","string"]`), headers: mk(headersSchemaText)}
}

// keyEnvelope returns the schema of the record "RecordKey" whose single
// field "key" has the schema inner.
func (p *partSchemas) keyEnvelope(inner *format.Schema) (*format.Schema, error) {
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
		s = &format.Schema{Avro: parsed, Text: parsed.String()}
	}
	if len(p.keyEnvelopes) >= maxKeyEnvelopes || p.keyEnvelopes == nil {
		p.keyEnvelopes = make(map[*format.Schema]*format.Schema)
	}
	if len(p.keyEnvelopesByText) >= maxKeyEnvelopes || p.keyEnvelopesByText == nil {
		p.keyEnvelopesByText = make(map[string]*format.Schema)
	}
	p.keyEnvelopes[inner] = s
	p.keyEnvelopesByText[text] = s
	return s, nil
}

// headersEnvelopeSchema returns the schema of the record "RecordHeaders"
// whose single field "headers" is the headers array.
func (p *partSchemas) headersEnvelopeSchema() *format.Schema {
	if p.headersEnvelope == nil {
		p.headersEnvelope = &format.Schema{Avro: avro.MustParse(headersEnvelopeText), Text: headersEnvelopeText}
	}
	return p.headersEnvelope
}

// stringKeyConverter is the Connect class whose keys are strings.
const stringKeyConverter = "org.apache.kafka.connect.storage.StringConverter"

// keyRecord returns the record the .keys object gets for r: r's key as the
// value. A null key is kept: JSON keys objects (format.NewNullableJSON)
// write it as the line null, Avro and Parquet ones as the null of the
// untyped key schema ["null","bytes"] (["null","string"] with
// StringConverter keys). Typed keys keep their schema, so a null key among
// them takes the untyped schema, and the switch rotates like any key schema
// change. The bytes format has no null: ErrNullKeyBytes.
func (w *partitionWriter) keyRecord(r *format.Record) (*format.Record, error) {
	kind := w.cfg.KeysFormat.Kind
	if r.Key == nil && kind == format.KindBytes {
		return nil, ErrNullKeyBytes
	}
	out := partRecord(r)
	out.Value = r.Key
	t := r.KeyTyped
	switch kind {
	case format.KindJSON:
		if t != nil {
			buf, err := w.json.appendValue(nil, t)
			if err != nil {
				return nil, fmt.Errorf("rendering the typed key as JSON: %w", err)
			}
			out.Value = buf
		}
	case format.KindAvro, format.KindParquet:
		if t == nil {
			var native any // a null key
			if r.Key != nil {
				native = r.Key
			}
			if w.cfg.KeyConverterClass == stringKeyConverter {
				if r.Key != nil {
					native = string(r.Key)
				}
				t = &format.Typed{Schema: w.parts.str, Native: native}
			} else {
				t = &format.Typed{Schema: w.parts.bytes, Native: native}
			}
		}
		if kind == format.KindParquet {
			env, err := w.parts.keyEnvelope(t.Schema)
			if err != nil {
				return nil, err
			}
			native, err := format.AvroNative(t)
			if err != nil {
				return nil, fmt.Errorf("decoding the typed key: %w", err)
			}
			t = &format.Typed{Schema: env, Native: map[string]any{keyEnvelopeField: native}}
		}
		out.ValueTyped = t
		if out.Value == nil {
			out.Value = []byte{} // not a tombstone: the writers refuse nil values
		}
	}
	return out, nil
}

// headersRecord returns the record the .headers object gets for r: its
// headers, in order, duplicates and null values kept. A record without
// headers gets an empty list (Confluent's connector refuses it), which the
// restore turns back into no headers.
func (w *partitionWriter) headersRecord(r *format.Record) (*format.Record, error) {
	out := partRecord(r)
	switch w.cfg.HeadersFormat.Kind {
	case format.KindJSON:
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
		out.Value = buf
	default:
		list := make([]any, len(r.Headers))
		for i, h := range r.Headers {
			var v any
			if h.Value != nil {
				v = string(h.Value)
			}
			list[i] = map[string]any{"key": h.Key, "value": v}
		}
		out.Value = []byte{} // not null: the writers check Value for tombstones
		if w.cfg.HeadersFormat.Kind == format.KindParquet {
			out.ValueTyped = &format.Typed{Schema: w.parts.headersEnvelopeSchema(), Native: map[string]any{headersEnvelopeName: list}}
		} else {
			out.ValueTyped = &format.Typed{Schema: w.parts.headers, Native: list}
		}
	}
	return out, nil
}

// partRecord copies r's coordinates (for error messages) into a new record.
func partRecord(r *format.Record) *format.Record {
	return &format.Record{Topic: r.Topic, Partition: r.Partition, Offset: r.Offset, Timestamp: r.Timestamp, TimestampType: r.TimestampType}
}
