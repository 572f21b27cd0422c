package partition

import (
	"errors"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/kafkas3/kafkas3/format"
)

func TestDefaultPartitioner(t *testing.T) {
	p := NewDefault()
	for _, tt := range []struct {
		partition int32
		want      string
	}{{0, "partition=0"}, {7, "partition=7"}, {2147483647, "partition=2147483647"}} {
		got, err := p.Encode(&format.Record{Topic: "t", Partition: tt.partition})
		if err != nil || got != tt.want {
			t.Errorf("Encode(partition %d) = %q, %v; want %q", tt.partition, got, err, tt.want)
		}
	}
	if _, err := p.Encode(&format.Record{Topic: "t", Partition: -1}); err == nil {
		t.Error("Encode(partition -1) succeeded")
	}
	if _, err := p.Encode(nil); err == nil {
		t.Error("Encode(nil) succeeded")
	}
}

func TestDefaultPartitionerKey(t *testing.T) {
	c := DefaultKeyConfig()
	enc, err := NewDefault().Encode(&format.Record{Topic: "s3_topic", Partition: 0, Offset: 3})
	if err != nil {
		t.Fatal(err)
	}
	key := c.ObjectKey(ObjectName{Topic: "s3_topic", Encoded: enc, Partition: 0, StartOffset: 3, Ext: ".avro"})
	if want := "topics/s3_topic/partition=0/s3_topic+0+0000000003.avro"; key != want {
		t.Errorf("key = %q, want %q", key, want)
	}
}

func TestLookup(t *testing.T) {
	for _, name := range []string{
		"io.confluent.connect.storage.partitioner.DefaultPartitioner", "default", "Default", " default ",
	} {
		k, err := Lookup(name)
		if err != nil || k != KindDefault {
			t.Errorf("Lookup(%q) = %v, %v; want default", name, k, err)
		}
	}
	for name, want := range map[string]Kind{
		"io.confluent.connect.storage.partitioner.FieldPartitioner":     KindField,
		"io.confluent.connect.storage.partitioner.TimeBasedPartitioner": KindTimeBased,
		"io.confluent.connect.storage.partitioner.DailyPartitioner":     KindDaily,
		"io.confluent.connect.storage.partitioner.HourlyPartitioner":    KindHourly,
		"FieldPartitioner": KindField, "TimeBasedPartitioner": KindTimeBased,
		"field": KindField, "timebased": KindTimeBased, "time": KindTimeBased, "daily": KindDaily, "hourly": KindHourly,
	} {
		k, err := Lookup(name)
		if k != want || err != nil {
			t.Errorf("Lookup(%q) = %v, %v; want %v", name, k, err, want)
		}
		if !k.Supported() {
			t.Errorf("%v is not supported", k)
		}
	}
	for _, name := range []string{"", "Default Partitioner", "io.confluent.connect.storage.partitioner.Nope", "com.example.DefaultPartitioner"} {
		k, err := Lookup(name)
		if !errors.Is(err, ErrUnknownPartitioner) || k != 0 {
			t.Errorf("Lookup(%q) = %v, %v; want unknown", name, k, err)
		}
		if err != nil && !strings.Contains(err.Error(), KeyPartitionerClass) {
			t.Errorf("Lookup(%q) error %q does not name %s", name, err, KeyPartitionerClass)
		}
	}
	if p, err := New(KindDefault, Config{}); err != nil || p == nil {
		t.Errorf("New(KindDefault, Config{}) = %v, %v", p, err)
	}
	if KindDefault.ClassName() != "io.confluent.connect.storage.partitioner.DefaultPartitioner" {
		t.Errorf("ClassName = %q", KindDefault.ClassName())
	}
}

// TestNewFromRegistry builds every partitioner through the registry from
// one Config and checks its encoded path, and that a Config without a
// required key is refused naming the key.
func TestNewFromRegistry(t *testing.T) {
	cfg := Config{PathFormat: "'dt'=YYYY-MM-dd/", Duration: 24 * time.Hour, Locale: "en-US", Location: time.UTC,
		Extractor: ExtractRecord, Fields: []string{"region"}, DirectoryDelim: "/"}
	rec := &format.Record{Topic: "t", Partition: 2, Timestamp: time.UnixMilli(1785575700000), // 2026-08-01T09:15Z
		Value: []byte(`{"region":"eu"}`)}
	for k, want := range map[Kind]string{
		KindDefault: "partition=2", KindField: "region=eu", KindTimeBased: "dt=2026-08-01",
		KindDaily: "year=2026/month=08/day=01", KindHourly: "year=2026/month=08/day=01/hour=09",
	} {
		p, err := New(k, cfg)
		if err != nil {
			t.Fatalf("New(%v): %v", k, err)
		}
		if got, err := p.Encode(rec); err != nil || got != want {
			t.Errorf("%v: Encode = %q, %v; want %q", k, got, err, want)
		}
		_, timed := p.(Timed)
		if timed != (k == KindTimeBased || k == KindDaily || k == KindHourly) {
			t.Errorf("%v: Timed = %v", k, timed)
		}
		for _, key := range k.Requires() {
			if _, err := New(k, Config{}); err == nil || !strings.Contains(err.Error(), key) {
				t.Errorf("New(%v, Config{}) = %v; want an error naming %s", k, err, key)
			}
		}
	}
	if got := KindTimeBased.Requires(); len(got) != 4 {
		t.Errorf("TimeBased requires %v", got)
	}
	p, _ := New(KindHourly, Config{Locale: "en", Location: time.UTC}) // Wallclock by default
	if p.(Timed).Deterministic() {
		t.Error("the default extractor (Wallclock) is deterministic")
	}
}

// TestDefaultEncodePartition: the default partitioner is a PerPartition
// whose EncodePartition is what Encode gives every record of the
// partition.
func TestDefaultEncodePartition(t *testing.T) {
	var pp PerPartition = DefaultPartitioner{}
	for _, p := range []int32{0, 7, 1234} {
		got, err := pp.EncodePartition(p)
		want, werr := pp.Encode(&format.Record{Topic: "t", Partition: p, Offset: 9})
		if err != nil || werr != nil || got != want || got != fmt.Sprintf("partition=%d", p) {
			t.Errorf("EncodePartition(%d) = %q, %v; Encode = %q, %v", p, got, err, want, werr)
		}
	}
	if _, err := pp.EncodePartition(-1); err == nil {
		t.Error("EncodePartition(-1): no error")
	}
}
