package cmd

import (
	"bytes"
	"context"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/twmb/franz-go/pkg/kgo"
)

// This file proves the sink's partitioners and the source together: for
// each of Confluent's layouts, records with keys, headers and timestamps
// (across the new year, some late, several field values interleaved) go
// through `kafkas3 sink --once` into a local directory and come back
// through `kafkas3 source` in exact offset order with every property.

// layoutTime is the timestamp of record i: every 20 minutes from
// 2026-12-31T22:10Z, across the new year, except the late records 7 and 9,
// stamped back in 2026's last hour.
func layoutTime(i int) time.Time {
	t0 := time.Date(2026, 12, 31, 22, 10, 0, 0, time.UTC)
	if i == 7 || i == 9 {
		return t0.Add(65 * time.Minute)
	}
	return t0.Add(time.Duration(i) * 20 * time.Minute)
}

// produceLayoutRecords produces records from..from+n-1 to each of topic's
// two partitions: keys (record 6's nil), rtHeaders, layoutTime timestamps
// and JSON values with a region (three values, interleaved) and a tier.
func produceLayoutRecords(t *testing.T, ctx context.Context, brokers, topic string, from, n int) map[int32][]*kgo.Record {
	t.Helper()
	cl, err := kgo.NewClient(kgo.SeedBrokers(strings.Split(brokers, ",")...), kgo.RecordPartitioner(kgo.ManualPartitioner()))
	if err != nil {
		t.Fatal(err)
	}
	defer cl.Close()
	out := map[int32][]*kgo.Record{}
	var recs []*kgo.Record
	for p := range int32(2) {
		for i := from; i < from+n; i++ {
			r := &kgo.Record{Topic: topic, Partition: p, Key: fmt.Appendf(nil, "key-%d-%d", p, i), Headers: rtHeaders(p, i),
				Timestamp: layoutTime(i).Add(time.Duration(p) * time.Second),
				Value:     fmt.Appendf(nil, `{"i":%d,"p":%d,"region":%q,"tier":%d}`, i, p, []string{"eu", "us", "ap"}[i%3], i%2)}
			if i == 6 {
				r.Key = nil
			}
			out[p] = append(out[p], r)
			recs = append(recs, r)
		}
	}
	if err := cl.ProduceSync(ctx, recs...).FirstErr(); err != nil {
		t.Fatal(err)
	}
	return out
}

// TestRoundTripLayouts: Default, TimeBased (a day-first path.format, whose
// folders do not sort like time), Daily (in Berlin), Hourly and Field
// (two fields) archives written by the sink with store.envelope and the
// archive index, flush.size 4 (rotations commit several folders' objects
// whose offsets interleave: late records; the field layout's objects hold
// every sixth offset), and a field archive in Confluent's layout (.keys and
// .headers objects, no timestamps) with the index; the default and that
// field layout again with s3.compression.type zstd (.json.zst objects and
// twins). verify finds each archive clean; the source's
// dry run shows every partition complete and ordered by offset across its
// folders; the restore brings back every record in offset order with its
// key (nil kept), value, headers (order, duplicates, nil versus empty) and
// timestamp.
func TestRoundTripLayouts(t *testing.T) {
	const n = 12 // records per partition
	const fieldKeys = "partitioner.class: io.confluent.connect.storage.partitioner.FieldPartitioner\npartition.field.name: region,tier\nflush.size: 12\n"
	for _, tc := range []struct {
		name, extra string
		folders     []string // some of the folders the sink must write
		// plain: Confluent's layout (.keys and .headers objects, no
		// timestamps) instead of the envelope.
		plain bool
	}{
		{"default", "", []string{"partition=0/", "partition=1/"}, false},
		{"time", "partitioner.class: io.confluent.connect.storage.partitioner.TimeBasedPartitioner\n" +
			"path.format: \"'day'=dd/'month'=MM/'year'=YYYY\"\npartition.duration.ms: 3600000\nlocale: en-US\ntimezone: UTC\ntimestamp.extractor: Record\n",
			[]string{"day=31/month=12/year=2026/", "day=01/month=01/year=2027/"}, false},
		{"daily", "partitioner.class: io.confluent.connect.storage.partitioner.DailyPartitioner\nlocale: en-US\ntimezone: Europe/Berlin\ntimestamp.extractor: Record\n",
			[]string{"year=2026/month=12/day=31/", "year=2027/month=01/day=01/"}, false},
		{"hourly", "partitioner.class: hourly\nlocale: en-US\ntimezone: UTC\ntimestamp.extractor: Record\n",
			[]string{"year=2026/month=12/day=31/hour=23/", "year=2027/month=01/day=01/hour=00/"}, false},
		{"field", fieldKeys, []string{"region=eu/tier=0/", "region=us/tier=1/", "region=ap/tier=0/"}, false},
		{"field, keys and headers objects", fieldKeys + "store.kafka.keys: true\nstore.kafka.headers: true\nkeys.format.class: json\nheaders.format.class: json\n",
			[]string{"region=eu/tier=0/", "region=us/tier=1/", "region=ap/tier=0/"}, true},
		{"default, zstd", "s3.compression.type: zstd\n", []string{"partition=0/", "partition=1/"}, false},
		{"field, keys and headers objects, zstd", fieldKeys + "store.kafka.keys: true\nstore.kafka.headers: true\nkeys.format.class: json\nheaders.format.class: json\n" +
			"s3.compression.type: zstd\ns3.compression.level: 1\n",
			[]string{"region=eu/tier=0/", "region=us/tier=1/", "region=ap/tier=0/"}, true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			ctx := cliContext(t)
			brokers := startKafka(t, 2, "orders")
			produced := produceLayoutRecords(t, ctx, brokers, "orders", 0, n)
			dir := t.TempDir()
			y := sinkYAML(brokers, dir, "orders", 4)
			if strings.Contains(tc.extra, "flush.size") {
				y = strings.Replace(y, "flush.size: 4\n", "", 1)
			}
			if !tc.plain {
				y += "store.envelope: true\n"
			}
			cfg := writeFile(t, "sink.yaml", y+tc.extra)
			r := mustRun(t, ctx, ExitOK, "sink", "-c", cfg, "--once", "--log-level", "warn")
			if !strings.Contains(r.out, fmt.Sprintf(" records=%d ", 2*n)) {
				t.Fatalf("sink summary: %q", r.out)
			}
			keys := strings.Join(objectKeys(t, dir), "\n")
			for _, f := range tc.folders {
				if !strings.Contains(keys, "topics/orders/"+f+"orders+") {
					t.Fatalf("no object in folder %s:\n%s", f, keys)
				}
			}
			if strings.HasSuffix(tc.name, "zstd") {
				for _, k := range objectKeys(t, dir) {
					if strings.Contains(k, "topics/") && !strings.HasSuffix(k, ".json.zst") {
						t.Fatalf("object %s is not .json.zst", k)
					}
				}
				if tc.plain && (!strings.Contains(keys, ".keys.json.zst") || !strings.Contains(keys, ".headers.json.zst")) {
					t.Fatalf("no .keys.json.zst and .headers.json.zst objects:\n%s", keys)
				}
			}
			if strings.HasPrefix(tc.name, "field") && strings.Contains(keys, "orders+0+0000000006") {
				// Offsets 0 and 6 share region=eu/tier=0: one object, interleaved with five others.
				t.Fatalf("the field archive's objects do not interleave:\n%s", keys)
			}
			mustRun(t, ctx, ExitOK, "verify", "-c", cfg, "--deep", "--log-level", "warn")
			r = mustRun(t, ctx, ExitOK, "source", "-c", cfg, "--topic-rename", "copy_of_$0", "--dry-run")
			for p := range 2 {
				if !strings.Contains(r.out, fmt.Sprintf("orders/%d ", p)) || strings.Count(r.out, "yes: archive index") != 2 || strings.Contains(r.out, "UNKNOWN") {
					t.Fatalf("dry run:\n%s", r.out)
				}
			}
			if !strings.HasPrefix(tc.name, "default") && !strings.Contains(r.out, " folders  yes") {
				t.Fatalf("dry run does not show the folders:\n%s", r.out)
			}
			r = mustRun(t, ctx, ExitOK, "source", "-c", cfg, "--topic-rename", "copy_of_$0", "--create-topics", "--log-level", "warn")
			if !strings.Contains(r.out, fmt.Sprintf(" records=%d ", 2*n)) || !strings.Contains(r.out, " duplicates=0 ") || !strings.Contains(r.out, " gaps=0 ") {
				t.Fatalf("source summary: %q", r.out)
			}
			got := byPartition(consumeAll(t, ctx, brokers, "copy_of_orders", 2*n))
			for p := range int32(2) {
				checkLayoutRecords(t, p, got[p], produced[p], !tc.plain)
			}
		})
	}
}

// checkLayoutRecords compares one restored partition with what was
// produced, record by record in offset order: key (nil apart), value,
// headers and, with timestamps (envelopes), the timestamp; Confluent's
// layout holds none, so the target stamps the restore's time.
func checkLayoutRecords(t *testing.T, p int32, got, want []*kgo.Record, timestamps bool) {
	t.Helper()
	if len(got) != len(want) {
		t.Fatalf("partition %d: %d records restored, want %d", p, len(got), len(want))
	}
	for i, g := range got {
		w := want[i]
		switch {
		case !bytes.Equal(g.Key, w.Key) || (g.Key == nil) != (w.Key == nil):
			t.Errorf("partition %d record %d: key %q, want %q", p, i, g.Key, w.Key)
		case !bytes.Equal(g.Value, w.Value):
			t.Errorf("partition %d record %d: value %s, want %s", p, i, g.Value, w.Value)
		case showHeaders(g.Headers) != showHeaders(w.Headers):
			t.Errorf("partition %d record %d: headers %s, want %s", p, i, showHeaders(g.Headers), showHeaders(w.Headers))
		case timestamps != g.Timestamp.Equal(w.Timestamp):
			t.Errorf("partition %d record %d: timestamp %v, want %v", p, i, g.Timestamp, w.Timestamp)
		}
	}
}

// TestRoundTripFollowNewPeriodsAndFolders: `kafkas3 source --follow` runs
// while `kafkas3 sink --once` archives more records into new folders:
// hours of 2027 after 2026's (late records back into 2026's last hour),
// and new field values. The running restore picks them up and the target
// holds every record once, in offset order, with every property.
func TestRoundTripFollowNewPeriodsAndFolders(t *testing.T) {
	for _, tc := range []struct{ name, extra string }{
		{"hourly", "partitioner.class: hourly\nlocale: en-US\ntimezone: UTC\ntimestamp.extractor: Record\n"},
		{"field", "partitioner.class: field\npartition.field.name: i\n"}, // every record a new folder
	} {
		t.Run(tc.name, func(t *testing.T) {
			ctx := cliContext(t)
			brokers := startKafka(t, 2, "orders")
			produced := produceLayoutRecords(t, ctx, brokers, "orders", 0, 4)
			dir := t.TempDir()
			cfg := writeFile(t, "sink.yaml", sinkYAML(brokers, dir, "orders", 3)+"store.envelope: true\n"+tc.extra)
			mustRun(t, ctx, ExitOK, "sink", "-c", cfg, "--once", "--log-level", "warn")

			runCtx, stop := context.WithCancel(ctx)
			defer stop()
			done := make(chan cliResult, 1)
			go func() {
				done <- runCLI(runCtx, "source", "-c", cfg, "--topic-rename", "copy_of_$0", "--create-topics", "--follow",
					"-p", "s3.poll.interval.ms=50", "--log-level", "warn")
			}()
			wait := func(n int64) {
				t.Helper()
				for deadline := time.Now().Add(20 * time.Second); time.Now().Before(deadline); time.Sleep(20 * time.Millisecond) {
					if endOffsetSum(ctx, brokers, "copy_of_orders") >= n {
						return
					}
				}
				t.Fatalf("copy_of_orders did not reach %d records", n)
			}
			wait(8)
			more := produceLayoutRecords(t, ctx, brokers, "orders", 4, 8)
			mustRun(t, ctx, ExitOK, "sink", "-c", cfg, "--once", "--log-level", "warn")
			wait(24)
			time.Sleep(200 * time.Millisecond) // more passes: nothing may be duplicated
			stop()
			r := <-done
			if r.code != ExitOK || !strings.Contains(r.out, " records=24 ") {
				t.Fatalf("follow: exit %d\nstdout %s\nstderr %s", r.code, r.out, r.err)
			}
			if n := endOffsetSum(ctx, brokers, "copy_of_orders"); n != 24 {
				t.Fatalf("copy_of_orders holds %d records, want 24", n)
			}
			got := byPartition(consumeAll(t, ctx, brokers, "copy_of_orders", 24))
			for p := range int32(2) {
				checkLayoutRecords(t, p, got[p], append(produced[p], more[p]...), true)
			}
		})
	}
}
