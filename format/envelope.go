package format

import (
	"errors"
	"fmt"
	"io"
	"strconv"
)

// ErrBadEnvelope is wrapped by errors about envelope objects
// (store.envelope=true) that do not hold envelopes of the documented
// layout, and by the envelope writers for records an envelope cannot hold.
var ErrBadEnvelope = errors.New("bad envelope")

// Kafka's names of the timestamp types, as the envelope stores them.
const (
	TimestampTypeCreateName    = "CreateTime"
	TimestampTypeLogAppendName = "LogAppendTime"
	// TimestampTypeNoneName is Kafka's NO_TIMESTAMP_TYPE (-1), which
	// franz-go reports for records of the pre-0.10 message format.
	TimestampTypeNoneName = "NoTimestampType"
)

// String returns Kafka's name of t: CreateTime, LogAppendTime or
// NoTimestampType (for -1; any other number is "TimestampType(n)").
func (t TimestampType) String() string {
	switch t {
	case TimestampCreate:
		return TimestampTypeCreateName
	case TimestampLogAppendTime:
		return TimestampTypeLogAppendName
	case -1:
		return TimestampTypeNoneName
	}
	return "TimestampType(" + strconv.Itoa(int(t)) + ")"
}

// ParseTimestampType is the inverse of TimestampType.String for the three
// names Kafka defines.
func ParseTimestampType(s string) (TimestampType, error) {
	switch s {
	case TimestampTypeCreateName:
		return TimestampCreate, nil
	case TimestampTypeLogAppendName:
		return TimestampLogAppendTime, nil
	case TimestampTypeNoneName:
		return -1, nil
	}
	return 0, fmt.Errorf("%w: timestamp type %q; want %s, %s or %s", ErrBadEnvelope, s,
		TimestampTypeCreateName, TimestampTypeLogAppendName, TimestampTypeNoneName)
}

func validTimestampType(t TimestampType) bool { return t >= -1 && t <= 1 }

// NewEnvelope returns the envelope variant (store.envelope=true) of the
// json, avro or parquet format f, as New builds it from a Config whose
// Envelope is set. kind must be f's kind; compression (s3.compression.type
// for JSON) is applied by New around the result. See the package
// documentation for the layout.
func NewEnvelope(f Format, kind Kind) (Format, error) {
	if f == nil {
		return nil, errors.New("envelope: nil format")
	}
	e, err := kind.spec()
	if err != nil {
		return nil, err
	}
	if !e.Spec.HoldsEnvelope() {
		envelopes := Formats().Filter(func(e Entry) bool { return e.Spec.HoldsEnvelope() })
		return nil, fmt.Errorf("%w: store.envelope needs %s %s, not %s (the %s format holds values only)",
			ErrInvalidConfig, KeyFormatClass, envelopes.OneOf(), kind, kind)
	}
	return e.Spec.envelope(f), nil
}

// EnvelopeMode tells ReadEnvelopes what the objects it reads hold.
type EnvelopeMode int8

// Envelope modes.
const (
	// EnvelopeDetect decides per object, by content: an Avro or Parquet
	// file whose schema is the envelope schema, or a JSON object whose first
	// line has the envelope's shape, is an envelope object.
	EnvelopeDetect EnvelopeMode = iota
	// EnvelopeRequired expects envelope objects (an archive index said so):
	// anything else is an error wrapping ErrBadEnvelope.
	EnvelopeRequired
	// EnvelopeNever reads every object as plain values.
	EnvelopeNever
)

// ReadEnvelopes wraps the reader of one object of the plain json, avro or
// parquet format. When the object holds envelopes (see EnvelopeMode) it
// yields the records the envelopes describe: partition, offset, timestamp,
// timestamp type, key, value (nil for a tombstone) and headers as archived,
// and for a typed value (an Avro or Parquet envelope whose value field has
// the value's schema) ValueTyped with that schema and the value's Avro
// encoding in Raw and Value, ready to be framed for a registry. Otherwise
// it yields rd's records unchanged.
//
// The first record decides; after it every record must be of the same
// kind: an envelope object with a record that is not an envelope is an
// error naming the record. Bad input gives an error, never a panic.
func ReadEnvelopes(rd RecordReader, mode EnvelopeMode) *EnvelopeReader {
	return &EnvelopeReader{rd: rd, mode: mode, decided: mode == EnvelopeNever}
}

// envelopeLines is a reader of JSON lines that can hand the lines of
// envelopes over unchecked and uncopied (jsonReader): the envelope reader
// decodes each before the next Read, and checks it as it decodes it.
type envelopeLines interface{ passEnvelopeLines() }

// envelopeDatums is a reader of Avro datums that can hand each datum to
// the envelope reader to decode, undecoded itself (avroReader).
type envelopeDatums interface {
	readDatum(decode func([]byte) (*Record, []byte, error)) (*Record, error)
}

// EnvelopeReader is the RecordReader ReadEnvelopes returns.
type EnvelopeReader struct {
	rd      RecordReader
	datums  envelopeDatums // rd, once an Avro file shows envelopes
	mode    EnvelopeMode
	decided bool
	env     bool
	typed   *envSchema // the Avro/Parquet file's envelope schema
	n       int64      // records read
	err     error
}

// Envelopes reports whether the object holds envelopes; it is known once
// Read has returned the first record.
func (e *EnvelopeReader) Envelopes() bool { return e.env }

// Read returns the next record.
func (e *EnvelopeReader) Read() (*Record, error) {
	if e.err != nil {
		return nil, e.err
	}
	if e.datums != nil {
		rec, err := e.datums.readDatum(e.decodeDatum)
		if err != nil {
			if !errors.Is(err, io.EOF) {
				e.err = err
			}
			return nil, err
		}
		e.n++
		return rec, nil
	}
	rec, err := e.rd.Read()
	if err != nil {
		if !errors.Is(err, io.EOF) {
			e.err = err
		}
		return nil, err
	}
	if !e.decided {
		e.decided = true
		if e.env, err = e.detect(rec); err != nil {
			e.err = err
			return nil, err
		}
		if el, ok := e.rd.(envelopeLines); ok && e.env && e.typed == nil {
			el.passEnvelopeLines()
		}
		if ed, ok := e.rd.(envelopeDatums); ok && e.env && e.typed != nil {
			e.datums = ed // after this first record
		}
	}
	if e.env {
		out, err := e.decode(rec)
		if err != nil {
			e.err = fmt.Errorf("envelope record %d: %w", e.n, err)
			return nil, e.err
		}
		rec = out
	}
	e.n++
	return rec, nil
}

// detect tells whether the object whose first record is rec holds envelopes.
func (e *EnvelopeReader) detect(rec *Record) (bool, error) {
	if t := rec.ValueTyped; t != nil && t.Schema != nil {
		es, ok, err := parseEnvelopeSchema(t.Schema)
		if err != nil {
			return false, err
		}
		if ok {
			e.typed = es
			return true, nil
		}
	} else if isEnvelopeLine(rec.Value) {
		return true, nil
	}
	if e.mode == EnvelopeRequired {
		return false, fmt.Errorf("%w: the object should hold envelopes (store.envelope=true) but its first record is not one", ErrBadEnvelope)
	}
	return false, nil
}

// decodeDatum decodes the envelope datum at the start of src (an Avro
// file's block), for envelopeDatums.readDatum.
func (e *EnvelopeReader) decodeDatum(src []byte) (*Record, []byte, error) {
	r, rest, err := e.typed.decodeNext(src)
	if err != nil {
		return nil, nil, fmt.Errorf("envelope record %d: %w", e.n, err)
	}
	return r, rest, nil
}

func (e *EnvelopeReader) decode(rec *Record) (*Record, error) {
	if e.typed == nil {
		if rec.ValueTyped != nil {
			return nil, fmt.Errorf("%w: a typed record in a JSON envelope object", ErrBadEnvelope)
		}
		return decodeEnvelopeLine(rec.Value)
	}
	t := rec.ValueTyped
	if t == nil || t.Schema == nil || (t.Schema != e.typed.schema && avroSchemaText(t.Schema) != e.typed.schema.Text) {
		return nil, fmt.Errorf("%w: the record's schema is not the file's envelope schema", ErrBadEnvelope)
	}
	raw := t.Raw
	if raw == nil {
		raw = rec.Value
	}
	return e.typed.decode(raw)
}
