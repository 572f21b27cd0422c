//go:build integration

package e2e

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"regexp"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/twmb/franz-go/pkg/kgo"
)

// partitionedCase is one layout of TestIntegrationSinkCrashExactlyOncePartitioned.
type partitionedCase struct {
	name string
	// keys are the sink's partitioner keys.
	keys []string
	// record is record i of partition p.
	record func(p int32, i int) *kgo.Record
	// folder is the encoded partition the record with value v belongs in.
	folder func(v map[string]any) string
}

// TestIntegrationSinkCrashExactlyOncePartitioned (issue 11 item 2): the
// SIGKILL test of TestIntegrationSinkCrashExactlyOnce with a time-based
// layout (HourlyPartitioner, timestamp.extractor Record, rotate.interval.ms
// one hour, records spanning nine hours, some of them late by one to three
// hours) and a field layout (FieldPartitioner on a field with seven values,
// kafkas3.max.open.partitions 3). Killed continuous runs then --once give
// the same keys and byte-identical objects as a clean --once run; every
// record is archived once, in its folder.
func TestIntegrationSinkCrashExactlyOncePartitioned(t *testing.T) {
	base := time.Now().UTC().Truncate(time.Hour).Add(-10 * time.Hour)
	const perPart = 20_000
	hourly := partitionedCase{
		name: "hourly",
		keys: []string{"partitioner.class", "io.confluent.connect.storage.partitioner.HourlyPartitioner",
			"locale", "en-US", "timezone", "UTC", "timestamp.extractor", "Record", "rotate.interval.ms", "3600000"},
		record: func(p int32, i int) *kgo.Record {
			// Nine hours over the partition, in order, except every 97th
			// record (90 minutes late) and every 389th (three hours late).
			ts := base.Add(time.Duration(i) * 9 * time.Hour / perPart)
			switch {
			case i%389 == 5:
				ts = ts.Add(-3 * time.Hour)
			case i%97 == 3:
				ts = ts.Add(-90 * time.Minute)
			}
			ms := ts.UnixMilli()
			return &kgo.Record{Partition: p, Key: key(p, i), Timestamp: ts.Truncate(time.Millisecond),
				Value: fmt.Appendf(nil, `{"p":%d,"i":%d,"ts":%d,"pad":"%s"}`, p, i, ms, strings.Repeat("x", 30+i%13))}
		},
		folder: func(v map[string]any) string {
			ms, _ := v["ts"].(json.Number).Int64()
			return time.UnixMilli(ms).UTC().Format("year=2006/month=01/day=02/hour=15")
		},
	}
	field := partitionedCase{
		name: "field",
		keys: []string{"partitioner.class", "FieldPartitioner", "partition.field.name", "region",
			"kafkas3.max.open.partitions", "3"},
		record: func(p int32, i int) *kgo.Record {
			region := fmt.Sprintf("r%d", (i*7+int(p)*3+i/50)%7)
			return &kgo.Record{Partition: p, Key: key(p, i),
				Value: fmt.Appendf(nil, `{"p":%d,"i":%d,"region":%q,"pad":"%s"}`, p, i, region, strings.Repeat("y", 20+i%11))}
		},
		folder: func(v map[string]any) string { return "region=" + v["region"].(string) },
	}
	for _, tc := range []partitionedCase{hourly, field} {
		t.Run(tc.name, func(t *testing.T) { crashPartitioned(t, tc, perPart) })
	}
}

// crashPartitioned runs one case of TestIntegrationSinkCrashExactlyOncePartitioned.
func crashPartitioned(t *testing.T, tc partitionedCase, perPart int) {
	b := newBed(t)
	const parts, flush, kills = 2, 500, 4
	topic := "e2e-crash-" + tc.name
	_, rng := crashSeed(t)
	b.k.CreateTopic(t, topic, parts)
	bucketClean, bucketCrash := b.s.CreateBucket(t), b.s.CreateBucket(t)
	base := b.sinkConf("", topic, "").with("flush.size", strconv.Itoa(flush)).with(tc.keys...)
	cfgClean := base.with("name", topic+"-clean", "s3.bucket.name", bucketClean).write(t)
	group := "connect-" + topic
	cfgCrash := base.with("name", topic, "s3.bucket.name", bucketCrash).write(t)

	var prodWG sync.WaitGroup
	prodWG.Add(1)
	go func() {
		defer prodWG.Done()
		for from := 0; from < perPart; from += 250 {
			if err := b.produceRecords(topic, parts, from, 250, tc.record); err != nil {
				t.Error(err)
				return
			}
			time.Sleep(75 * time.Millisecond)
		}
	}()
	leftSpool := b.crashRuns(t, rng, cfgCrash, group, topic, kills, parts*int64(perPart))
	prodWG.Wait()
	if t.Failed() {
		t.FailNow()
	}
	b.evictMembers(t, group)
	final, _ := runOnce(t, "final --once", cfgCrash)
	clean, _ := runOnce(t, "clean --once", cfgClean)
	if clean.records != int64(parts*perPart) {
		t.Fatalf("clean run archived %d records, want %d", clean.records, parts*perPart)
	}
	ends := b.endOffsets(t, topic)
	want := b.snapshot(t, bucketClean)
	got := b.snapshot(t, bucketCrash)
	folders := checkPartitionedArchive(t, want, topic, ends, flush, tc.folder)
	checkPartitionedArchive(t, got, topic, ends, flush, tc.folder)
	sameObjects(t, "crash archive", got, want)
	b.checkCommittedToEnd(t, group, topic, parts, ends)
	t.Logf("%d records in %d objects (the index's included) over %d folders: crash archive equals clean archive byte for byte; final run %s; spool files left by killed processes: %d",
		parts*perPart, len(got), folders, final.line, leftSpool)
}

// produceRecords writes records from..from+n-1 of every partition of
// topic, as rec makes them, and flushes.
func (b *bed) produceRecords(topic string, partitions int32, from, n int, rec func(p int32, i int) *kgo.Record) error {
	cl, err := b.k.NewClient(kgo.RecordPartitioner(kgo.ManualPartitioner()), kgo.ProducerLinger(5*time.Millisecond))
	if err != nil {
		return err
	}
	defer cl.Close()
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	var recs []*kgo.Record
	for i := from; i < from+n; i++ {
		for p := range partitions {
			r := rec(p, i)
			r.Topic = topic
			recs = append(recs, r)
		}
	}
	if err := cl.ProduceSync(ctx, recs...).FirstErr(); err != nil {
		return fmt.Errorf("produce to %s: %w", topic, err)
	}
	return nil
}

// partitionedKeyRE parses topics/<t>/<folder>/<t>+<p>+<offset>.json.
var partitionedKeyRE = regexp.MustCompile(`^topics/([^/]+)/(.+)/([^/+]+)\+(\d+)\+(\d{10})\.json$`)

// checkPartitionedArchive checks that objs (JSON values {"p","i",...},
// where i is the offset) hold every offset below ends[p] of every
// partition exactly once, each in the folder folder names, each object's
// records in rising offsets from its start offset, at most flush records
// per object. It returns the number of folders.
func checkPartitionedArchive(t *testing.T, objs map[string]object, topic string, ends map[int32]int64, flush int,
	folder func(map[string]any) string) int {
	t.Helper()
	seen := map[int32]map[int64]bool{}
	folders := map[string]bool{}
	for k, o := range objs {
		if isIndexKey(k) {
			continue
		}
		m := partitionedKeyRE.FindStringSubmatch(k)
		if m == nil || m[1] != topic || m[3] != topic {
			t.Fatalf("unexpected key %q (topic %s)", k, topic)
		}
		p64, _ := strconv.ParseInt(m[4], 10, 32)
		p, start := int32(p64), mustInt(m[5])
		folders[m[2]] = true
		if seen[p] == nil {
			seen[p] = map[int64]bool{}
		}
		sc := bufio.NewScanner(bytes.NewReader(o.data))
		last, n := start-1, 0
		for sc.Scan() {
			d := json.NewDecoder(bytes.NewReader(sc.Bytes()))
			d.UseNumber()
			var v map[string]any
			if err := d.Decode(&v); err != nil {
				t.Fatalf("%s line %d: %v", k, n+1, err)
			}
			vp, _ := v["p"].(json.Number).Int64()
			off, _ := v["i"].(json.Number).Int64()
			switch {
			case int32(vp) != p:
				t.Fatalf("%s holds a record of partition %d", k, vp)
			case n == 0 && off != start, off <= last:
				t.Fatalf("%s line %d: offset %d after %d (start %d)", k, n+1, off, last, start)
			case folder(v) != m[2]:
				t.Fatalf("%s: record %d belongs in %s", k, off, folder(v))
			case seen[p][off]:
				t.Fatalf("%s: offset %d of partition %d archived twice", k, off, p)
			}
			seen[p][off], last = true, off
			n++
		}
		if n == 0 || n > flush {
			t.Fatalf("%s holds %d records, want 1..%d", k, n, flush)
		}
	}
	for p, end := range ends {
		if int64(len(seen[p])) != end {
			t.Fatalf("partition %d: %d offsets archived, want %d", p, len(seen[p]), end)
		}
	}
	return len(folders)
}

func mustInt(s string) int64 {
	n, _ := strconv.ParseInt(s, 10, 64)
	return n
}
