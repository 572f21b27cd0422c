//go:build integration

package e2e

import (
	"context"
	"fmt"
	"sort"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/kafkas3/kafkas3/internal/testbed"
	"github.com/twmb/franz-go/pkg/kgo"
)

// TestIntegrationTimeLayoutKeysMatchJodaTime archives records at the
// 2026/2027 year boundary and across the 2027 DST changes in
// America/Los_Angeles and Europe/Berlin with the hourly and daily presets
// and custom path.formats (YYYY, ww, xxxx; a 100-minute bucket that starts
// inside the hour a DST change skips), with timestamp.extractor=Record, and
// requires every object key to be the one Joda-Time computes. The expected
// keys are computed without kafkas3: Joda-Time itself (from Maven Central,
// on the test bed's JVM, testbed.JodaOracle) prints each
// record's bucket path, and the key is that path with the first offset of
// the bucket (every bucket's file stays open until --once ends).
func TestIntegrationTimeLayoutKeysMatchJodaTime(t *testing.T) {
	b := newBed(t)
	instants := timeLayoutInstants(t)
	for _, tc := range []struct {
		name, partitioner, format, zone string
		duration                        int64
	}{
		{"hourly Los Angeles", "io.confluent.connect.storage.partitioner.HourlyPartitioner", "'year'=YYYY/'month'=MM/'day'=dd/'hour'=HH", "America/Los_Angeles", 3600000},
		{"daily Berlin", "io.confluent.connect.storage.partitioner.DailyPartitioner", "'year'=YYYY/'month'=MM/'day'=dd", "Europe/Berlin", 86400000},
		{"week year Berlin", "io.confluent.connect.storage.partitioner.TimeBasedPartitioner", "'weekyear'=xxxx/'week'=ww/'year'=YYYY/HH", "Europe/Berlin", 7200000},
		{"100 minutes Los Angeles", "io.confluent.connect.storage.partitioner.TimeBasedPartitioner", "YYYY-MM-dd/HH-mm-ZZ", "America/Los_Angeles", 6000000},
	} {
		t.Run(tc.name, func(t *testing.T) {
			topic := srcUnique("e2e-time")
			b.k.CreateTopic(t, topic, 1)
			b.produceAt(t, topic, instants)
			bucket := b.s.CreateBucket(t)
			c := b.sinkConf("e2e-time-"+topic, topic, bucket).with(
				"flush.size", "100000", "partitioner.class", tc.partitioner,
				"locale", "en-US", "timezone", tc.zone, "timestamp.extractor", "Record")
			if strings.HasSuffix(tc.partitioner, "TimeBasedPartitioner") {
				c = c.with("path.format", tc.format, "partition.duration.ms", strconv.FormatInt(tc.duration, 10))
			}
			sum, _ := runOnce(t, "sink --once", c.write(t))
			if sum.records != int64(len(instants)) {
				t.Fatalf("sink summary %s, want %d records", sum.line, len(instants))
			}
			paths := jodaPaths(t, tc.format, tc.zone, tc.duration, instants)
			want := map[string][]int{} // key -> offsets
			first := map[string]int{}
			for off, p := range paths {
				if _, ok := first[p]; !ok {
					first[p] = off
				}
				key := fmt.Sprintf("topics/%s/%s/%s+0+%010d.json", topic, p, topic, first[p])
				want[key] = append(want[key], off)
			}
			data, _ := splitIndex(b.snapshot(t, bucket))
			var got []string
			for k := range data {
				got = append(got, k)
			}
			sort.Strings(got)
			var wantKeys []string
			for k := range want {
				wantKeys = append(wantKeys, k)
			}
			sort.Strings(wantKeys)
			if strings.Join(got, "\n") != strings.Join(wantKeys, "\n") {
				t.Fatalf("object keys differ from Joda-Time's\n got:\n  %s\nwant:\n  %s", strings.Join(got, "\n  "), strings.Join(wantKeys, "\n  "))
			}
			for k, offs := range want {
				lines := strings.Split(strings.TrimSuffix(string(data[k].data), "\n"), "\n")
				var wantLines []string
				for _, off := range offs {
					wantLines = append(wantLines, string(timeLayoutValue(off)))
				}
				if strings.Join(lines, "\n") != strings.Join(wantLines, "\n") {
					t.Errorf("%s holds\n%s\nwant the records at offsets %v:\n%s", k, strings.Join(lines, "\n"), offs, strings.Join(wantLines, "\n"))
				}
			}
			t.Logf("%d records in %d objects, every key equal to Joda-Time's", len(instants), len(want))
		})
	}
}

// timeLayoutInstants are the record timestamps, in offset order: three
// records (a second apart) at each instant, some of them late (earlier
// than the one before).
func timeLayoutInstants(t *testing.T) []time.Time {
	t.Helper()
	var out []time.Time
	for _, s := range []string{
		"2026-12-31T23:30:00Z", "2027-01-01T00:30:00Z", "2026-12-31T22:10:00Z", // year boundary, then a late one
		"2027-03-14T09:30:00Z", "2027-03-14T10:15:00Z", "2027-03-14T10:45:00Z", // Los Angeles springs forward at 10:00Z
		"2027-03-28T00:30:00Z", "2027-03-28T01:30:00Z", // Berlin springs forward at 01:00Z
		"2027-10-31T00:30:00Z", "2027-10-31T01:30:00Z", "2027-10-31T02:30:00Z", // Berlin falls back at 01:00Z
		"2027-11-07T08:30:00Z", "2027-11-07T09:30:00Z", "2027-11-07T10:30:00Z", // Los Angeles falls back at 09:00Z
		"2027-03-14T09:59:00Z", // late, into the Los Angeles spring day
	} {
		at, err := time.Parse(time.RFC3339, s)
		if err != nil {
			t.Fatal(err)
		}
		for i := range 3 {
			out = append(out, at.Add(time.Duration(i)*time.Second))
		}
	}
	return out
}

func timeLayoutValue(off int) []byte { return fmt.Appendf(nil, `{"offset":%d}`, off) }

// produceAt writes one record per instant to partition 0 of topic, in
// order, with the instant as its timestamp.
func (b *bed) produceAt(t *testing.T, topic string, instants []time.Time) {
	t.Helper()
	cl, err := b.k.NewClient(kgo.RecordPartitioner(kgo.ManualPartitioner()), kgo.MaxProduceRequestsInflightPerBroker(1))
	if err != nil {
		t.Fatal(err)
	}
	defer cl.Close()
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	for off, at := range instants {
		r := &kgo.Record{Topic: topic, Partition: 0, Value: timeLayoutValue(off), Timestamp: at}
		if err := cl.ProduceSync(ctx, r).FirstErr(); err != nil {
			t.Fatalf("produce %s at %s: %v", topic, at.Format(time.RFC3339), err)
		}
	}
}

// jodaPaths prints each instant's bucket path with Joda-Time itself.
func jodaPaths(t *testing.T, pattern, zone string, duration int64, instants []time.Time) []string {
	t.Helper()
	var cases []string
	for _, at := range instants {
		cases = append(cases, fmt.Sprintf("%s\t%s\ten\t%d\t%d", pattern, zone, at.UnixMilli(), duration))
	}
	var paths []string
	for _, line := range testbed.JodaOracle(t, cases) {
		_, p, _ := strings.Cut(line, "\t")
		paths = append(paths, p)
	}
	return paths
}
