package partition

import (
	"encoding/json"
	"errors"
	"fmt"
	"strconv"
	"strings"

	"github.com/kafkas3/kafkas3/format"
)

// FieldPartitioner is Confluent's FieldPartitioner: the encoded partition
// of a record is "<field>=<value>" for each of partition.field.name, joined
// by directory.delim ("region=eu/tier=3"). Fields may be nested (dotted
// paths, the path is the folder's name); their values must be integers,
// strings or booleans, and a null is written as "null". A record without a
// field, or with a field of another type, is a bad record (ErrBadRecord):
// errors.tolerance decides.
//
// Values come from a typed value (AvroConverter, JsonConverter with
// schemas), as Confluent's; kafkas3 also reads the fields of schemaless
// JSON objects, where Confluent's connector fails.
type FieldPartitioner struct {
	fields []string
	delim  string
}

// NewField returns the partitioner of partition.field.name fields, joined
// by delim (directory.delim).
func NewField(fields []string, delim string) (*FieldPartitioner, error) {
	var clean []string
	for _, f := range fields {
		f = strings.TrimSpace(f)
		if f == "" {
			continue
		}
		if strings.Contains(f, "..") || strings.HasPrefix(f, ".") || strings.HasSuffix(f, ".") {
			return nil, fmt.Errorf("partition.field.name: %q is not a field path (names joined by \".\")", f)
		}
		clean = append(clean, f)
	}
	if len(clean) == 0 {
		return nil, errors.New("partition.field.name: required by the field partitioner (a comma-separated list of fields)")
	}
	if delim == "" {
		return nil, errors.New("partition: field partitioner needs directory.delim")
	}
	return &FieldPartitioner{fields: clean, delim: delim}, nil
}

// Fields returns partition.field.name.
func (p *FieldPartitioner) Fields() []string { return append([]string(nil), p.fields...) }

// Encode returns "<field>=<value>" for each field, joined by the delimiter.
func (p *FieldPartitioner) Encode(r *format.Record) (string, error) {
	if r == nil {
		return "", errors.New("partition: nil record")
	}
	v, err := recordValue(r)
	if err != nil {
		return "", badRecord(r, "partition.field.name", err)
	}
	var b strings.Builder
	for i, name := range p.fields {
		f, err := nestedField(v, name)
		if err != nil && !errors.Is(err, errNullField) {
			return "", badRecord(r, "partition.field.name", err)
		}
		s, err := fieldText(f)
		if err != nil {
			return "", badRecord(r, "partition.field.name "+name, err)
		}
		if strings.Contains(s, p.delim) {
			return "", badRecord(r, "partition.field.name "+name, fmt.Errorf("value %q holds directory.delim %q", s, p.delim))
		}
		if i > 0 {
			b.WriteString(p.delim)
		}
		b.WriteString(name)
		b.WriteByte('=')
		b.WriteString(s)
	}
	return b.String(), nil
}

// fieldText prints a partition field as Confluent does: integers in
// decimal, strings as they are, booleans as true/false, null as "null".
func fieldText(v any) (string, error) {
	switch t := v.(type) {
	case nil:
		return "null", nil
	case string:
		return t, nil
	case bool:
		return strconv.FormatBool(t), nil
	case int32:
		return strconv.FormatInt(int64(t), 10), nil
	case int64:
		return strconv.FormatInt(t, 10), nil
	case int:
		return strconv.Itoa(t), nil
	case json.Number:
		if n, err := t.Int64(); err == nil {
			return strconv.FormatInt(n, 10), nil
		}
		return "", fmt.Errorf("unsupported value %s (only integers, strings and booleans can name a folder)", t)
	}
	return "", fmt.Errorf("unsupported type %T (only integers, strings and booleans can name a folder)", v)
}
