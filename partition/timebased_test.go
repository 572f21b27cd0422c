package partition

import (
	"errors"
	"strings"
	"testing"
	"time"

	"github.com/kafkas3/kafkas3/format"
	"github.com/twmb/avro"
)

// typedRecord is a record whose value has the Avro schema schema and the
// decoded value native.
func typedRecord(t *testing.T, schema string, native map[string]any) *format.Record {
	t.Helper()
	s, err := avro.Parse(schema)
	if err != nil {
		t.Fatal(err)
	}
	raw, err := s.Encode(native)
	if err != nil {
		t.Fatal(err)
	}
	// Only Raw, as a converter gives it: the partitioner decodes it.
	return &format.Record{Topic: "orders", Partition: 3, Offset: 42, Timestamp: time.UnixMilli(1),
		Value: raw, ValueTyped: &format.Typed{Schema: &format.Schema{Avro: s, Text: schema}, Raw: raw}}
}

const orderSchema = `{"type":"record","name":"order","fields":[
 {"name":"id","type":"long"},
 {"name":"region","type":"string"},
 {"name":"vip","type":"boolean"},
 {"name":"tier","type":"int"},
 {"name":"note","type":["null","string"]},
 {"name":"price","type":"double"},
 {"name":"at","type":{"type":"long","logicalType":"timestamp-millis"}},
 {"name":"atMicros","type":{"type":"long","logicalType":"timestamp-micros"}},
 {"name":"atMs","type":"long"},
 {"name":"atText","type":"string"},
 {"name":"customer","type":{"type":"record","name":"customer","fields":[
   {"name":"country","type":"string"},
   {"name":"since","type":{"type":"int","logicalType":"date"}}]}}]}`

func order(t *testing.T) *format.Record {
	return typedRecord(t, orderSchema, map[string]any{
		"id": int64(7), "region": "eu", "vip": true, "tier": int32(3), "note": nil, "price": 1.5,
		"at":       int64(1798761599000), // 2026-12-31T23:59:59Z
		"atMicros": int64(1798765200000000),
		"atMs":     int64(1785575700000), // 2026-08-01T09:15:00Z
		"atText":   "2027-03-14T03:10:00-07:00",
		"customer": map[string]any{"country": "de", "since": int32(20000)},
	})
}

func TestTimeBasedPartitioner(t *testing.T) {
	la, _ := time.LoadLocation("America/Los_Angeles")
	base := TimeConfig{PathFormat: hourlyPathFormat + "/", Duration: time.Hour, Locale: "en-US",
		Location: time.UTC, DirectoryDelim: "/"}
	for _, tc := range []struct {
		name  string
		cfg   func(c *TimeConfig)
		rec   func(t *testing.T) *format.Record
		want  string
		build func(TimeConfig) (*TimeBased, error)
	}{
		{"record timestamp, trailing delimiter stripped", func(c *TimeConfig) { c.Extractor = ExtractRecord },
			func(t *testing.T) *format.Record {
				return &format.Record{Timestamp: time.UnixMilli(1785575700000)}
			}, "year=2026/month=08/day=01/hour=09", NewTimeBased},
		{"field: timestamp-millis", func(c *TimeConfig) { c.Extractor, c.Field = ExtractRecordField, "at" },
			order, "year=2026/month=12/day=31/hour=23", NewTimeBased},
		{"field: timestamp-micros", func(c *TimeConfig) { c.Extractor, c.Field = ExtractRecordField, "atMicros" },
			order, "year=2027/month=01/day=01/hour=01", NewTimeBased},
		{"field: epoch millis", func(c *TimeConfig) { c.Extractor, c.Field = ExtractRecordField, "atMs" },
			order, "year=2026/month=08/day=01/hour=09", NewTimeBased},
		{"field: ISO-8601 with offset, in Los Angeles", func(c *TimeConfig) {
			c.Extractor, c.Field, c.Location = ExtractRecordField, "atText", la
		}, order, "year=2027/month=03/day=14/hour=03", NewTimeBased},
		{"field: nested date", func(c *TimeConfig) { c.Extractor, c.Field = ExtractRecordField, "customer.since" },
			order, "year=2024/month=10/day=04", NewDaily},
		{"field: schemaless JSON", func(c *TimeConfig) { c.Extractor, c.Field = ExtractRecordField, "meta.ts" },
			func(t *testing.T) *format.Record {
				return &format.Record{Value: []byte(`{"meta":{"ts":1785575700000}}`)}
			}, "year=2026/month=08/day=01/hour=09", NewHourly},
		{"wall clock", func(c *TimeConfig) {
			c.Extractor = ExtractWallclock
			c.Now = func() time.Time { return time.Date(2027, 1, 1, 0, 30, 0, 0, time.UTC) }
		}, func(t *testing.T) *format.Record { return &format.Record{} }, "year=2027/month=01/day=01/hour=00", NewHourly},
	} {
		t.Run(tc.name, func(t *testing.T) {
			cfg := base
			tc.cfg(&cfg)
			p, err := tc.build(cfg)
			if err != nil {
				t.Fatal(err)
			}
			got, err := p.Encode(tc.rec(t))
			if err != nil || got != tc.want {
				t.Errorf("Encode = %q, %v; want %q", got, err, tc.want)
			}
			if p.Deterministic() != (cfg.Extractor != ExtractWallclock) {
				t.Errorf("Deterministic() = %v with extractor %d", p.Deterministic(), cfg.Extractor)
			}
		})
	}
}

func TestTimeBasedBadRecords(t *testing.T) {
	cfg := TimeConfig{PathFormat: hourlyPathFormat, Duration: time.Hour, Locale: "en", Location: time.UTC,
		Extractor: ExtractRecordField}
	for _, tc := range []struct {
		field string
		rec   func(t *testing.T) *format.Record
		want  string
	}{
		{"missing", order, `value has no field "missing"`},
		{"customer.missing", order, `field "customer.missing": "customer" has no field "missing"`},
		{"price", order, "unsupported type float64"},
		{"note", order, "the timestamp field is null"},
		{"region", order, `"eu" is not an ISO-8601 date-time`},
		{"ts", func(t *testing.T) *format.Record { return &format.Record{Value: []byte(`[1]`)} }, "the value is a JSON array"},
		{"ts", func(t *testing.T) *format.Record { return &format.Record{Value: []byte(`{"ts":1.5}`)} }, "1.5 is not a whole number"},
	} {
		p, err := NewTimeBased(TimeConfig{PathFormat: cfg.PathFormat, Duration: cfg.Duration, Locale: cfg.Locale,
			Location: cfg.Location, Extractor: cfg.Extractor, Field: tc.field})
		if err != nil {
			t.Fatal(err)
		}
		wantBadRecord(t, p, tc.rec(t), tc.field, tc.want)
	}
	p, _ := NewTimeBased(TimeConfig{PathFormat: "HH", Duration: time.Hour, Locale: "en", Location: time.UTC, Extractor: ExtractRecord})
	if _, err := p.Encode(&format.Record{Topic: "t", Timestamp: time.UnixMilli(-1)}); !errors.Is(err, ErrBadRecord) {
		t.Errorf("record without a timestamp: %v", err)
	}
}

func TestNewTimeBasedReportsEveryProblem(t *testing.T) {
	_, err := NewTimeBased(TimeConfig{Extractor: ExtractRecordField})
	for _, want := range []string{"path.format: required", "partition.duration.ms: required", "locale: required",
		"timezone: required", "timestamp.field: required"} {
		if err == nil || !strings.Contains(err.Error(), want) {
			t.Errorf("error %v lacks %q", err, want)
		}
	}
	_, err = NewTimeBased(TimeConfig{PathFormat: "YYYY/qq", Duration: time.Hour, Locale: "en", Location: time.UTC, Extractor: ExtractRecord})
	if !errors.Is(err, ErrBadPathFormat) {
		t.Errorf("bad pattern: %v", err)
	}
}

func TestParseExtractor(t *testing.T) {
	for in, want := range map[string]Extractor{
		"Wallclock": ExtractWallclock, "Record": ExtractRecord, "RecordField": ExtractRecordField,
		"io.confluent.connect.storage.partitioner.TimeBasedPartitioner$RecordFieldTimestampExtractor": ExtractRecordField,
		"recordfield": ExtractRecordField,
	} {
		if got, err := ParseExtractor(in); err != nil || got != want {
			t.Errorf("ParseExtractor(%q) = %v, %v; want %v", in, got, err, want)
		}
	}
	if _, err := ParseExtractor("Clock"); err == nil {
		t.Error("ParseExtractor(Clock) accepted")
	}
}

func TestParseISOTime(t *testing.T) {
	for in, want := range map[string]string{
		"2026-08-01":                     "2026-08-01T00:00:00Z",
		"2026-08-01T09":                  "2026-08-01T09:00:00Z",
		"2026-08-01T09:15":               "2026-08-01T09:15:00Z",
		"2026-08-01T09:15:30Z":           "2026-08-01T09:15:30Z",
		"2026-08-01T09:15:30.1234+02:00": "2026-08-01T07:15:30.123Z",
		"2026-08-01T09:15:30,5-0130":     "2026-08-01T10:45:30.5Z",
		"2026-08-01T09:15:30+05":         "2026-08-01T04:15:30Z",
	} {
		ms, err := parseISOTime(in)
		if err != nil || time.UnixMilli(ms).UTC().Format(time.RFC3339Nano) != want {
			t.Errorf("parseISOTime(%q) = %s, %v; want %s", in, time.UnixMilli(ms).UTC().Format(time.RFC3339Nano), err, want)
		}
	}
	for _, in := range []string{"", "2026-13-01", "2026-08-01T25", "2026-08-01T09:15:30.", "2026-08-01T09:1", "2026-08-01T09:15+2", "yesterday"} {
		if _, err := parseISOTime(in); err == nil {
			t.Errorf("parseISOTime(%q) accepted", in)
		}
	}
}

func FuzzParseISOTime(f *testing.F) {
	f.Add("2026-08-01T09:15:30.123+02:00")
	f.Add("2026-08-01T09")
	f.Fuzz(func(t *testing.T, s string) { _, _ = parseISOTime(s) })
}
