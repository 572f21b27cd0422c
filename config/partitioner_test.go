package config

import (
	"strings"
	"testing"
	"time"

	"github.com/kafkas3/kafkas3/format"
	"github.com/kafkas3/kafkas3/partition"
)

// loadSink types minimalYAML plus params for the sink.
func loadSink(t *testing.T, params ...string) (*SinkConfig, error) {
	t.Helper()
	st, err := Load(Input{Command: Sink, ConfigFile: writeFile(t, "c.yaml", minimalYAML), Params: params})
	if st == nil {
		return nil, err
	}
	return st.Sink(nil)
}

// TestPartitionerKeys builds each partitioner from its Confluent keys
// (class names and short names) and checks the folder it gives a record.
func TestPartitionerKeys(t *testing.T) {
	rec := &format.Record{Topic: "t", Partition: 1, Timestamp: time.UnixMilli(1785575700000), // 2026-08-01T09:15Z
		Value: []byte(`{"region":"eu","meta":{"at":"2026-12-31T23:30:00Z"},"tier":3}`)}
	hourly := "'year'=YYYY/'month'=MM/'day'=dd/'hour'=HH"
	for _, tc := range []struct {
		params []string
		want   string
	}{
		{[]string{"partitioner.class=io.confluent.connect.storage.partitioner.TimeBasedPartitioner",
			"path.format=" + hourly + "/", "partition.duration.ms=3600000", "locale=en-US", "timezone=UTC",
			"timestamp.extractor=Record"}, "year=2026/month=08/day=01/hour=09"},
		{[]string{"partitioner.class=time", "path.format='dt'=YYYY-MM-dd", "partition.duration.ms=86400000",
			"locale=en", "timezone=America/Los_Angeles", "timestamp.extractor=Record"}, "dt=2026-08-01"},
		{[]string{"partitioner.class=DailyPartitioner", "locale=en_US", "timezone=UTC",
			"timestamp.extractor=RecordField", "timestamp.field=meta.at"}, "year=2026/month=12/day=31"},
		{[]string{"partitioner.class=hourly", "locale=en", "timezone=Europe/Berlin",
			"timestamp.extractor=io.confluent.connect.storage.partitioner.TimeBasedPartitioner$RecordTimestampExtractor"},
			"year=2026/month=08/day=01/hour=11"},
		{[]string{"partitioner.class=io.confluent.connect.storage.partitioner.FieldPartitioner",
			"partition.field.name=region, tier"}, "region=eu/tier=3"},
		{[]string{"partitioner.class=field", "partition.field.name=region", "directory.delim=#"}, "region=eu"},
	} {
		c, err := loadSink(t, tc.params...)
		if err != nil {
			t.Fatalf("%v: %v", tc.params, err)
		}
		got, err := c.Archive.Partitioner.Encode(rec)
		if err != nil || got != tc.want {
			t.Errorf("%v: Encode = %q, %v; want %q", tc.params, got, err, tc.want)
		}
	}
	// The default extractor is Wallclock, and it is not deterministic.
	c, err := loadSink(t, "partitioner.class=hourly", "locale=en", "timezone=UTC")
	if err != nil {
		t.Fatal(err)
	}
	if tp, ok := c.Archive.Partitioner.(partition.Timed); !ok || tp.Deterministic() {
		t.Errorf("hourly with the default extractor: %T deterministic", c.Archive.Partitioner)
	}
}

// TestPartitionerProblemsInOnePass: every missing or bad partitioner key
// is reported in the same run, with the other problems of the config.
func TestPartitionerProblemsInOnePass(t *testing.T) {
	for _, tc := range []struct {
		name   string
		params []string
		want   []string
	}{
		{"time needs four keys", []string{"partitioner.class=time", "flush.size=0"}, []string{
			"5 configuration problems", "flush.size:",
			"path.format: required key is not set (partitioner.class is time)",
			"partition.duration.ms: required key is not set (partitioner.class is time)",
			"locale: required key is not set (partitioner.class is time)",
			"timezone: required key is not set (partitioner.class is time)"}},
		{"daily needs locale and timezone", []string{"partitioner.class=DailyPartitioner"}, []string{
			"2 configuration problems", "locale: required key is not set (partitioner.class is daily)",
			"timezone: required key is not set (partitioner.class is daily)"}},
		{"hourly", []string{"partitioner.class=HourlyPartitioner", "locale=en"}, []string{
			"timezone: required key is not set (partitioner.class is hourly)"}},
		{"field needs partition.field.name", []string{"partitioner.class=field", "partition.field.name= , "}, []string{
			"partition.field.name: required key is not set (partitioner.class is field)"}},
		{"bad values together", []string{"partitioner.class=time", "path.format=YYYY/qq", "partition.duration.ms=0",
			"locale=e", "timezone=Mars/Base", "timestamp.extractor=Clock"}, []string{
			"5 configuration problems",
			`timezone: "Mars/Base" is not a known IANA zone`,
			`locale: "e" is not a locale tag`,
			`timestamp.extractor: "Clock" is not allowed; want one of Wallclock, Record, RecordField`,
			`path.format: "YYYY/qq" is not a Joda-Time pattern`,
			`partition.duration.ms: "0" is not positive; partitioner.class time needs the width of its time buckets`}},
		{"RecordField needs timestamp.field", []string{"partitioner.class=hourly", "locale=en", "timezone=UTC",
			"timestamp.extractor=RecordField", "timestamp.field="}, []string{
			"timestamp.field: required key is not set (timestamp.extractor is RecordField)"}},
		{"a bad field path", []string{"partitioner.class=field", "partition.field.name=a..b"}, []string{
			`partitioner.class field: partition.field.name: "a..b" is not a field path`}},
		{"max open partitions", []string{"kafkas3.max.open.partitions=0"}, []string{
			`kafkas3.max.open.partitions: "0" is out of range; want an integer from 1 to 100000`}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			_, err := loadSink(t, tc.params...)
			if err == nil {
				t.Fatal("no error")
			}
			rest := err.Error()
			for _, w := range tc.want {
				i := strings.Index(rest, w)
				if i < 0 {
					t.Fatalf("error %q\ndoes not contain (in order) %q", err, w)
				}
				rest = rest[i+len(w):]
			}
		})
	}
}

func TestMaxOpenPartitionsKey(t *testing.T) {
	c, err := loadSink(t, "kafkas3.max.open.partitions=3")
	if err != nil || c.Archive.MaxOpenPartitions != 3 {
		t.Fatalf("MaxOpenPartitions = %v, %v", c, err)
	}
}
