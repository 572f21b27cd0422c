package partition

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"strings"
	"time"

	"github.com/kafkas3/kafkas3/format"
)

// ErrBadRecord is wrapped by Encode errors that the record itself causes (a
// field it lacks, a field of a type the partitioner cannot encode, a time
// it has not): the sink treats the record as a bad record, which
// errors.tolerance decides about. Other Encode errors stop the sink.
var ErrBadRecord = errors.New("record cannot be partitioned")

// errNoField and errNullField tell a missing field from a null one.
var (
	errNoField   = errors.New("has no field")
	errNullField = errors.New("is null")
)

// recordValue returns the value of r as Go values to look fields up in: a
// typed value (AvroConverter, JsonConverter with schemas) decoded to
// twmb/avro's representation (records are map[string]any, unions their
// branch's value, timestamp logical types time.Time), else a schemaless
// JSON object (JsonConverter without schemas), numbers as json.Number.
func recordValue(r *format.Record) (any, error) {
	if r.ValueTyped != nil {
		v, err := format.AvroNative(r.ValueTyped)
		if err != nil {
			return nil, err
		}
		return v, nil
	}
	if r.Value == nil {
		return nil, errors.New("the value is null (a tombstone)")
	}
	d := json.NewDecoder(bytes.NewReader(r.Value))
	d.UseNumber()
	var v any
	if err := d.Decode(&v); err != nil {
		return nil, errors.New("the value has no schema and is not a JSON object; set value.converter to AvroConverter or JsonConverter")
	}
	if _, ok := v.(map[string]any); !ok {
		return nil, fmt.Errorf("the value is a JSON %s, not an object", jsonKind(v))
	}
	return v, nil
}

func jsonKind(v any) string {
	switch v.(type) {
	case []any:
		return "array"
	case string:
		return "string"
	case json.Number:
		return "number"
	case bool:
		return "boolean"
	case nil:
		return "null"
	}
	return fmt.Sprintf("%T", v)
}

// nestedField follows a dotted path ("customer.address.city") through
// records, as Confluent's DataUtils.getNestedFieldValue does.
func nestedField(v any, path string) (any, error) {
	cur := v
	walked := ""
	for _, name := range strings.Split(path, ".") {
		m, ok := cur.(map[string]any)
		if !ok {
			if cur == nil && walked != "" {
				return nil, fmt.Errorf("field %q: %q %w", path, walked, errNullField)
			}
			return nil, fmt.Errorf("field %q: %q is not a record", path, walked)
		}
		next, ok := m[name]
		if !ok {
			if walked == "" {
				return nil, fmt.Errorf("value %w %q", errNoField, path)
			}
			return nil, fmt.Errorf("field %q: %q %w %q", path, walked, errNoField, name)
		}
		cur = next
		if walked != "" {
			walked += "."
		}
		walked += name
	}
	return cur, nil
}

// badRecord wraps err with where the record is and ErrBadRecord.
func badRecord(r *format.Record, what string, err error) error {
	return fmt.Errorf("%w: topic %s partition %d offset %d: %s: %w", ErrBadRecord, r.Topic, r.Partition, r.Offset, what, err)
}

// parseISOTime parses the ISO-8601 forms Joda-Time's
// ISODateTimeFormat.dateTimeParser reads for timestamps: a date (2026-08-01),
// optionally followed by T and a time (09, 09:15, 09:15:30, 09:15:30.123456
// with "." or ","), optionally followed by Z or an offset (+02, +0200,
// +02:00). A time without an offset is UTC. Fractions beyond milliseconds
// are dropped, as Joda-Time keeps milliseconds only.
func parseISOTime(s string) (int64, error) {
	date, rest, hasTime := strings.Cut(s, "T")
	d, err := time.Parse("2006-01-02", date)
	if err != nil {
		return 0, fmt.Errorf("%q is not an ISO-8601 date-time (want 2026-08-01T09:15:00Z)", s)
	}
	if !hasTime {
		return d.UnixMilli(), nil
	}
	clock, zone := splitZone(rest)
	ms, err := parseClock(clock)
	if err != nil {
		return 0, fmt.Errorf("%q: %w", s, err)
	}
	off, err := parseOffset(zone)
	if err != nil {
		return 0, fmt.Errorf("%q: %w", s, err)
	}
	return d.UnixMilli() + ms - off, nil
}

// splitZone cuts a trailing Z or +/- offset from an ISO time.
func splitZone(s string) (clock, zone string) {
	if i := strings.IndexAny(s, "Z+-"); i >= 0 {
		return s[:i], s[i:]
	}
	return s, ""
}

// parseClock parses HH[:mm[:ss[.fff]]] into milliseconds of the day.
func parseClock(s string) (int64, error) {
	bad := fmt.Errorf("bad time of day %q (want HH:mm:ss.SSS)", s)
	main, frac, hasFrac := strings.Cut(strings.ReplaceAll(s, ",", "."), ".")
	parts := strings.Split(main, ":")
	limits := []int64{24, 60, 60}
	units := []int64{3600000, 60000, 1000}
	if len(parts) == 0 || len(parts) > 3 || hasFrac && len(parts) != 3 {
		return 0, bad
	}
	var ms int64
	for i, p := range parts {
		n, ok := digits(p, 2)
		if !ok || n >= limits[i] {
			return 0, bad
		}
		ms += n * units[i]
	}
	if hasFrac {
		if frac == "" || strings.Trim(frac, "0123456789") != "" {
			return 0, bad
		}
		f := (frac + "00")[:3]
		n, _ := digits(f, 3)
		ms += n
	}
	return ms, nil
}

// parseOffset parses "", Z, +HH, +HHmm or +HH:mm into milliseconds.
func parseOffset(s string) (int64, error) {
	if s == "" || s == "Z" {
		return 0, nil
	}
	sign := int64(1)
	if s[0] == '-' {
		sign = -1
	}
	body := strings.ReplaceAll(s[1:], ":", "")
	h, okH := digits(body[:min(2, len(body))], 2)
	m := int64(0)
	okM := true
	if len(body) > 2 {
		m, okM = digits(body[2:], 2)
	}
	if !okH || !okM || h > 23 || m > 59 || (len(body) != 2 && len(body) != 4) {
		return 0, fmt.Errorf("bad zone offset %q (want Z, +02, +0200 or +02:00)", s)
	}
	return sign * (h*3600000 + m*60000), nil
}

// digits parses exactly n decimal digits.
func digits(s string, n int) (int64, bool) {
	if len(s) != n {
		return 0, false
	}
	var v int64
	for i := 0; i < n; i++ {
		c := s[i]
		if c < '0' || c > '9' {
			return 0, false
		}
		v = v*10 + int64(c-'0')
	}
	return v, true
}
