package restore

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"strings"

	"github.com/kafkas3/kafkas3/format"
	"github.com/twmb/avro"
)

// Typed archives, keys and headers
//
// Avro and Parquet objects hold typed values. Each is produced in
// Confluent's wire format for the target cluster's Schema Registry
// (Config.ValueEncoder, convert.AvroConverter): the schema from the object
// is registered under "<target topic>-value" (TopicNameStrategy) when
// absent, and the value is framed with the target's schema id. Once
// framed, a record keeps only the framed bytes, not its decoded form, so
// the memory budget counts what a loaded object holds.
//
// Confluent's store.kafka.keys and store.kafka.headers write parallel
// objects "<base>.keys<ext>" and "<base>.headers<ext>" next to "<base><ext>"
// (ext may be another format's: keys.format.class). Plan pairs them with
// their value object; record i of each is the key or the headers of record
// i of the value object, and a count mismatch makes the object damaged
// (ErrParallelMismatch and ErrDamagedObject), found before anything is
// produced. Typed keys are framed under "<target topic>-key"
// with Config.KeyEncoder, or restored as their bytes when they are strings
// or bytes. Headers are Confluent's array of {key, value} strings.
//
// A JSON keys object (keys.format.class=json) holds one JSON value per
// line, read as format.NewNullableJSON reads them: the line null is a null
// key, the JSON string "null" the 4-byte key null (the sink writes them
// so), and any other line that is a JSON string is restored as its content.
// A record without headers has an empty list in its .headers object and is
// restored with none. So a key whose
// text was itself a JSON string literal (`"q"` with its quotes) comes back
// as q: the line cannot tell the two apart. Use Avro keys where keys must
// survive byte for byte.

// Encoder frames an Avro datum in Confluent's wire format for the target's
// Schema Registry: it registers schema under subject when absent and
// returns magic byte, schema id and raw. convert.AvroConverter implements
// it (EncodeRaw).
type Encoder interface {
	EncodeRaw(ctx context.Context, subject string, schema *format.Schema, raw []byte) ([]byte, error)
}

// ErrNoRegistry is wrapped when an archive holds typed (Avro or Parquet)
// values or keys that must be framed for a Schema Registry, and no target
// registry is configured.
var ErrNoRegistry = errors.New("no target schema registry")

// ErrParallelMismatch is wrapped when a .keys or .headers object does not
// hold exactly one record per record of its value object.
var ErrParallelMismatch = errors.New("keys/headers object does not match its value object")

// separatorHint ends a count mismatch error: the usual cause.
const separatorHint = " (with ByteArrayFormat, a value that contains format.bytearray.separator reads as several records, so keys and headers cannot be paired with values)"

// Parallel object kinds: Confluent's store.kafka.keys and
// store.kafka.headers write "<base>.keys<ext>" and "<base>.headers<ext>"
// next to "<base><ext>", with the same records in the same order.
const (
	keysInfix    = ".keys"
	headersInfix = ".headers"
)

// subjectFor is Confluent's TopicNameStrategy (convert.SubjectName); it is
// repeated here so restore does not depend on the converters.
func subjectFor(topic string, isKey bool) string {
	if isKey {
		return topic + "-key"
	}
	return topic + "-value"
}

// parallelFormat returns the format that reads a .keys (isKey) or
// .headers object whose extension after the infix is ext
// (format.ForParallel).
func (r *Restorer) parallelFormat(ext string, isKey bool) (format.Format, error) {
	return format.ForParallel(ext, r.cfg.Format, isKey)
}

// parallelReader reads one .keys or .headers object alongside its value
// object, completely (see checkedReader).
type parallelReader struct {
	key   string
	isKey bool
	size  int64        // from the listing
	close func() error // closes the object
	cr    *checkedReader
	rd    format.RecordReader
	n     int64
}

// openParallel opens the .keys or .headers object key of size bytes.
func (r *Restorer) openParallel(ctx context.Context, key, ext string, size int64, isKey, withSHA256 bool) (*parallelReader, error) {
	f, err := r.parallelFormat(ext, isKey)
	if err != nil {
		return nil, fmt.Errorf("read object %q: %w", key, err)
	}
	closer, cr, err := r.openChecked(ctx, key, withSHA256)
	if err != nil {
		return nil, err
	}
	rd, err := f.NewReader(cr)
	if err != nil {
		_ = closer.Close()
		return nil, fmt.Errorf("%w: read object %q: %w", ErrDamagedObject, key, err)
	}
	return &parallelReader{key: key, isKey: isKey, size: size, close: closer.Close, cr: cr, rd: rd}, nil
}

// next returns the parallel object's record for value record i.
func (p *parallelReader) next(valueKey string) (*format.Record, error) {
	rec, err := p.rd.Read()
	if errors.Is(err, io.EOF) {
		return nil, fmt.Errorf("%w: %w: %q has %d records, value object %q has more%s", ErrDamagedObject, ErrParallelMismatch, p.key, p.n, valueKey, separatorHint)
	}
	if err != nil {
		return nil, fmt.Errorf("%w: read object %q: record %d: %w", ErrDamagedObject, p.key, p.n, err)
	}
	p.n++
	return rec, nil
}

// finish checks that the parallel object has no records left.
func (p *parallelReader) finish(valueKey string) error {
	_, err := p.rd.Read()
	if errors.Is(err, io.EOF) {
		return nil
	}
	if err != nil {
		return fmt.Errorf("%w: read object %q: record %d: %w", ErrDamagedObject, p.key, p.n, err)
	}
	return fmt.Errorf("%w: %w: %q has more records than the %d of value object %q%s", ErrDamagedObject, ErrParallelMismatch, p.key, p.n, valueKey, separatorHint)
}

// typedValue re-encodes a typed archived value (an Avro or Parquet record)
// in Confluent's wire format for the target registry, under the target's
// value subject.
func (r *Restorer) typedValue(ctx context.Context, rec *format.Record, target, key string, i int64) error {
	t := rec.ValueTyped
	if t == nil || t.Schema == nil {
		return nil
	}
	if r.cfg.ValueEncoder == nil {
		return fmt.Errorf("read object %q: record %d: %w: the archive holds Avro values; set value.converter.schema.registry.url to the target cluster's Schema Registry",
			key, i, ErrNoRegistry)
	}
	raw := t.Raw
	if raw == nil {
		raw = rec.Value
	}
	v, err := r.cfg.ValueEncoder.EncodeRaw(ctx, subjectFor(target, false), t.Schema, raw)
	if err != nil {
		return fmt.Errorf("object %q: record %d: value for subject %q: %w", key, i, subjectFor(target, false), err)
	}
	rec.Value = v
	return nil
}

// keyFrom turns record i of a .keys object into the Kafka key.
//
// A typed key (Avro or Parquet keys object) is framed for the target
// registry under "<target>-key" when Config.KeyEncoder is set (the
// original key.converter was the AvroConverter). Without a key encoder, a
// string key becomes its UTF-8 bytes and a bytes key its bytes (the
// StringConverter and ByteArrayConverter), a null key stays null, and any
// other type is an error that asks for key.converter.schema.registry.url.
// Confluent's enveloped keys (a record "RecordKey" with one field "key")
// are unwrapped.
//
// An untyped key (JSON keys object) is the line's value as
// format.NewNullableJSON restores it: the line null is a null key, the
// string "null" the 4-byte key null. An optional key schema (a union of
// null and one type, as the sink writes untyped keys) is unwrapped: its
// null is a null key, and the other branch is what the target registry
// gets.
func (r *Restorer) keyFrom(ctx context.Context, krec *format.Record, target, objKey string, i int64) ([]byte, error) {
	t := krec.ValueTyped
	if t == nil || t.Schema == nil || t.Schema.Avro == nil {
		return krec.Value, nil
	}
	native, schema, raw, err := typedKey(krec, objKey, i)
	if err != nil || native == nil {
		return nil, err
	}
	if r.cfg.KeyEncoder != nil {
		k, err := r.cfg.KeyEncoder.EncodeRaw(ctx, subjectFor(target, true), schema, raw)
		if err != nil {
			return nil, fmt.Errorf("object %q: record %d: key for subject %q: %w", objKey, i, subjectFor(target, true), err)
		}
		return k, nil
	}
	switch v := native.(type) {
	case string:
		return []byte(v), nil
	case []byte:
		return v, nil
	}
	return nil, fmt.Errorf("object %q: record %d: %w: the key is an Avro %T, which needs a registry; set key.converter to the AvroConverter with key.converter.schema.registry.url",
		objKey, i, ErrNoRegistry, native)
}

// typedKey decodes the typed key of krec, a record of a .keys object,
// unwrapping Confluent's enveloped keys and an optional schema (see
// keyFrom): its Go value (nil: a null key), its schema and its Avro
// bytes under that schema.
func typedKey(krec *format.Record, objKey string, i int64) (native any, schema *format.Schema, raw []byte, err error) {
	t := krec.ValueTyped
	native, err = format.AvroNative(t)
	if err != nil {
		return nil, nil, nil, fmt.Errorf("object %q: record %d: %w", objKey, i, err)
	}
	schema, raw = t.Schema, t.Raw
	if raw == nil {
		raw = krec.Value
	}
	if root := envelope(schema); root != nil {
		m, _ := native.(map[string]any)
		native = m["key"]
		inner, err := root.Fields[0].Type.Schema()
		if err != nil {
			return nil, nil, nil, fmt.Errorf("object %q: record %d: the enveloped key's schema: %w", objKey, i, err)
		}
		if raw, err = inner.Encode(native); err != nil {
			return nil, nil, nil, fmt.Errorf("object %q: record %d: the enveloped key: %w", objKey, i, err)
		}
		schema = &format.Schema{Avro: inner, Text: inner.String()}
	}
	if native == nil {
		return nil, nil, nil, nil
	}
	if root := schema.Avro.Root(); root.Type == "union" {
		// An optional key: the registry gets the non-null branch.
		inner, err := optionalBranch(root)
		if err != nil {
			return nil, nil, nil, fmt.Errorf("object %q: record %d: the key's schema: %w", objKey, i, err)
		}
		if raw, err = inner.Encode(native); err != nil {
			return nil, nil, nil, fmt.Errorf("object %q: record %d: the optional key: %w", objKey, i, err)
		}
		schema = &format.Schema{Avro: inner, Text: inner.String()}
	}
	return native, schema, raw, nil
}

// headersFrom turns record i of a .headers object into Kafka headers.
// Confluent writes a record's headers as an array of {key, value} with
// string values (Connect's Values.convertToString); an Avro or Parquet
// headers object holds that array (or an envelope record "RecordHeaders"
// with the field "headers"), a JSON one a JSON array of objects. A null
// header value stays null; a bytes value is taken as is.
func headersFrom(hrec *format.Record, objKey string, i int64) ([]format.Header, error) {
	bad := func(format string, a ...any) error {
		return fmt.Errorf("object %q: record %d: headers: "+format, append([]any{objKey, i}, a...)...)
	}
	var list []any
	if t := hrec.ValueTyped; t != nil && t.Schema != nil {
		native, err := format.AvroNative(t)
		if err != nil {
			return nil, bad("%w", err)
		}
		if m, ok := native.(map[string]any); ok {
			native = m["headers"]
		}
		if native == nil {
			return nil, nil
		}
		l, ok := native.([]any)
		if !ok {
			return nil, bad("want an array of {key, value}, got %T", native)
		}
		list = l
	} else {
		v := hrec.Value
		if string(v) == "null" {
			return nil, nil
		}
		var jl []map[string]any
		if err := json.Unmarshal(v, &jl); err != nil {
			var env struct{ Headers []map[string]any }
			if err2 := json.Unmarshal(v, &env); err2 != nil {
				return nil, bad("want a JSON array of {\"key\", \"value\"}: %w", err)
			}
			jl = env.Headers
		}
		for _, h := range jl {
			list = append(list, h)
		}
	}
	out := make([]format.Header, 0, len(list))
	for j, e := range list {
		m, ok := e.(map[string]any)
		if !ok {
			return nil, bad("entry %d is %T, want {key, value}", j, e)
		}
		k, ok := m["key"].(string)
		if !ok {
			return nil, bad("entry %d: key is %T, want a string", j, m["key"])
		}
		var val []byte
		switch v := m["value"].(type) {
		case nil:
		case string:
			val = []byte(v)
		case []byte:
			val = v
		default:
			return nil, bad("entry %d (%q): value is %T, want a string", j, k, v)
		}
		out = append(out, format.Header{Key: k, Value: val})
	}
	if len(out) == 0 {
		return nil, nil
	}
	return out, nil
}

// envelope returns the root of schema when it is Confluent's key envelope,
// a record "RecordKey" with the single field "key"; else nil. The text is
// checked first, so plain keys do not pay for building the schema tree.
func envelope(s *format.Schema) *avro.SchemaNode {
	if !strings.Contains(s.Text, "RecordKey") && (s.Text != "" || !strings.Contains(s.Avro.String(), "RecordKey")) {
		return nil
	}
	root := s.Avro.Root()
	if root.Type == "record" && root.Name == "RecordKey" && len(root.Fields) == 1 && root.Fields[0].Name == "key" {
		return root
	}
	return nil
}

// optionalBranch returns the non-null branch of a union of null and one
// other type (an optional schema); other unions are an error.
func optionalBranch(u *avro.SchemaNode) (*avro.Schema, error) {
	var other *avro.SchemaNode
	for i := range u.Branches {
		b := &u.Branches[i]
		if b.Type == "null" {
			continue
		}
		if other != nil {
			return nil, fmt.Errorf("a union of %d types is not an optional key", len(u.Branches))
		}
		other = b
	}
	if other == nil {
		return nil, errors.New("a union of null only")
	}
	return other.Schema()
}
