package partition

import (
	"errors"
	"strings"
	"testing"

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
		"field": KindField, "timebased": KindTimeBased, "time": KindTimeBased, "daily": KindDaily, "hourly": KindHourly,
	} {
		k, err := Lookup(name)
		if k != want {
			t.Errorf("Lookup(%q) kind = %v, want %v", name, k, want)
		}
		if !errors.Is(err, ErrNotSupported) || !strings.Contains(err.Error(), KeyPartitionerClass) {
			t.Errorf("Lookup(%q) error = %v, want not-supported naming %s", name, err, KeyPartitionerClass)
		}
		if _, err := New(k); !errors.Is(err, ErrNotSupported) {
			t.Errorf("New(%v) error = %v, want ErrNotSupported", k, err)
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
	if p, err := New(KindDefault); err != nil || p == nil {
		t.Errorf("New(KindDefault) = %v, %v", p, err)
	}
	if KindDefault.ClassName() != "io.confluent.connect.storage.partitioner.DefaultPartitioner" {
		t.Errorf("ClassName = %q", KindDefault.ClassName())
	}
}
