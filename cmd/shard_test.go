package cmd

import (
	"bytes"
	"context"
	"fmt"
	"reflect"
	"regexp"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/kafkas3/kafkas3/restore"
	"github.com/twmb/franz-go/pkg/kadm"
	"github.com/twmb/franz-go/pkg/kgo"
)

// shardTopics are the archived topics of the shard test and their
// partition counts.
var shardTopics = map[string]int32{"orders": 5, "payments": 3}

// produceShardRecords produces n records to each partition of the shard
// test's topics: keys (every fifth nil), values (every ninth a
// tombstone), headers (duplicates, nil and empty values) and timestamps.
func produceShardRecords(t *testing.T, ctx context.Context, brokers string, n int) {
	t.Helper()
	cl, err := kgo.NewClient(kgo.SeedBrokers(strings.Split(brokers, ",")...), kgo.RecordPartitioner(kgo.ManualPartitioner()))
	if err != nil {
		t.Fatal(err)
	}
	defer cl.Close()
	base := time.Date(2024, 2, 29, 23, 59, 0, 0, time.UTC)
	var recs []*kgo.Record
	for topic, parts := range shardTopics {
		for p := range parts {
			for i := range n {
				r := &kgo.Record{Topic: topic, Partition: p, Timestamp: base.Add(time.Duration(i) * time.Second),
					Key:     fmt.Appendf(nil, "k-%d-%d", p, i),
					Value:   fmt.Appendf(nil, `{"topic":%q,"p":%d,"i":%d}`, topic, p, i),
					Headers: []kgo.RecordHeader{{Key: "h", Value: fmt.Appendf(nil, "%d", i)}, {Key: "h", Value: nil}, {Key: "e", Value: []byte{}}}}
				if i%5 == 0 {
					r.Key = nil
				}
				if i%9 == 4 {
					r.Value = nil
				}
				recs = append(recs, r)
			}
		}
	}
	if err := cl.ProduceSync(ctx, recs...).FirstErr(); err != nil {
		t.Fatal(err)
	}
}

// readRecords reads every record of topic, by partition in offset order.
func readRecords(t *testing.T, ctx context.Context, brokers, topic string) map[int32][]*kgo.Record {
	t.Helper()
	seeds := strings.Split(brokers, ",")
	adm, err := kgo.NewClient(kgo.SeedBrokers(seeds...))
	if err != nil {
		t.Fatal(err)
	}
	defer adm.Close()
	ends, err := kadm.NewClient(adm).ListEndOffsets(ctx, topic)
	if err == nil {
		err = ends.Error()
	}
	if err != nil {
		t.Fatalf("end offsets of %s: %v", topic, err)
	}
	total := int64(0)
	ends.Each(func(o kadm.ListedOffset) { total += o.Offset })
	cl, err := kgo.NewClient(kgo.SeedBrokers(seeds...), kgo.ConsumeTopics(topic), kgo.ConsumeResetOffset(kgo.NewOffset().AtStart()))
	if err != nil {
		t.Fatal(err)
	}
	defer cl.Close()
	got := map[int32][]*kgo.Record{}
	for n := int64(0); n < total; {
		fs := cl.PollFetches(ctx)
		if err := fs.Err(); err != nil {
			t.Fatalf("read %s: %d of %d records: %v", topic, n, total, err)
		}
		fs.EachRecord(func(r *kgo.Record) {
			got[r.Partition] = append(got[r.Partition], r)
			n++
		})
	}
	return got
}

// sameRecords compares every property of two partitions' records: offset,
// key and value (nil apart from empty), headers in order, timestamp.
func sameRecords(t *testing.T, what string, got, want []*kgo.Record) {
	t.Helper()
	if len(got) != len(want) {
		t.Fatalf("%s: %d records, want %d", what, len(got), len(want))
	}
	for i, g := range got {
		w := want[i]
		same := g.Offset == w.Offset && bytes.Equal(g.Key, w.Key) && (g.Key == nil) == (w.Key == nil) &&
			bytes.Equal(g.Value, w.Value) && (g.Value == nil) == (w.Value == nil) &&
			g.Timestamp.Equal(w.Timestamp) && len(g.Headers) == len(w.Headers)
		for j := 0; same && j < len(g.Headers); j++ {
			gh, wh := g.Headers[j], w.Headers[j]
			same = gh.Key == wh.Key && bytes.Equal(gh.Value, wh.Value) && (gh.Value == nil) == (wh.Value == nil)
		}
		if !same {
			t.Fatalf("%s record %d differs:\n got %+v\nwant %+v", what, i, g, w)
		}
	}
}

// TestSourceCmdShards: two `kafkas3 source --shard I/2` processes run at
// the same time against one archive (envelope JSON, two topics of 5 and 3
// partitions, with --create-topics and --restore-groups) and give what one
// unsharded run gives: every record with its partition, offset, key,
// value, headers and timestamp, the same topics (both shards create the
// missing targets, with the archive's partition count) and the same
// group offsets. Each shard restores exactly the partitions ShardOf
// gives it; a re-run of both produces nothing.
func TestSourceCmdShards(t *testing.T) {
	ctx := cliContext(t)
	brokers := startKafka(t, 5, "orders")
	cl, err := kgo.NewClient(kgo.SeedBrokers(strings.Split(brokers, ",")...))
	if err != nil {
		t.Fatal(err)
	}
	defer cl.Close()
	adm := kadm.NewClient(cl)
	if _, err := adm.CreateTopics(ctx, 3, 1, nil, "payments"); err != nil {
		t.Fatal(err)
	}
	produceShardRecords(t, ctx, brokers, 25)
	var commit kadm.Offsets
	for topic, parts := range shardTopics {
		for p := range parts {
			commit.Add(kadm.Offset{Topic: topic, Partition: p, At: int64(3 + 4*p), LeaderEpoch: -1})
		}
	}
	if err := adm.CommitAllOffsets(ctx, "app", commit); err != nil {
		t.Fatal(err)
	}
	dir := t.TempDir()
	cfg := writeFile(t, "sink.yaml", sinkYAML(brokers, dir, "orders,payments", 7)+"store.envelope: true\n")
	mustRun(t, ctx, ExitOK, "sink", "-c", cfg, "--once", "--log-level", "warn")

	source := func(prefix string, extra ...string) []string {
		return append([]string{"source", "-c", cfg, "--topic-rename", prefix + "_$0", "--create-topics",
			"--restore-groups", "--group-rename", "app=" + prefix + "-app", "--log-level", "warn"}, extra...)
	}
	r := mustRun(t, ctx, ExitOK, "source", "-c", cfg, "--shard", "1/2", "--dry-run", "--topic-rename", "dry_$0")
	if !regexp.MustCompile(`shard 1/2: \d partitions of this shard; \d+ keys of other shards' partitions left to them`).MatchString(r.out) {
		t.Errorf("dry run of shard 1/2 lacks the shard line:\n%s", r.out)
	}
	// A point in time: each shard cuts its own partitions and does not
	// report the others' as never archived.
	until := time.Now().Add(3 * time.Second).UTC().Format(time.RFC3339) // after the sink's last snapshot
	r = mustRun(t, ctx, ExitOK, "source", "-c", cfg, "--shard", "0/2", "--dry-run", "--topic-rename", "dry_$0", "--until", until)
	if !strings.Contains(r.out, "point in time: --until") || strings.Contains(r.out, "not archived:") {
		t.Errorf("dry run of shard 0/2 with --until:\n%s", r.out)
	}
	r = mustRun(t, ctx, ExitConfig, "source", "-c", cfg, "--shard", "2/2")
	if !strings.Contains(r.err, "--shard") || !strings.Contains(r.err, "JOB_COMPLETION_INDEX") {
		t.Errorf("--shard 2/2: %s", r.err)
	}
	mustRun(t, ctx, ExitOK, source("single")...)
	var wg sync.WaitGroup
	results := make([]cliResult, 2)
	for i := range results {
		wg.Go(func() { results[i] = runCLI(ctx, source("sharded", "--shard", fmt.Sprintf("%d/2", i))...) })
	}
	wg.Wait()
	partsRe := regexp.MustCompile(` partitions=(\d+) `)
	total := 0
	for i, r := range results {
		if r.code != ExitOK {
			t.Fatalf("shard %d/2: exit %d\n%s\n%s", i, r.code, r.out, r.err)
		}
		want := 0
		for topic, parts := range shardTopics {
			for p := range parts {
				if restore.ShardOf(topic, p, 2) == i {
					want++
				}
			}
		}
		m := partsRe.FindStringSubmatch(r.out)
		if m == nil || m[1] != fmt.Sprint(want) {
			t.Errorf("shard %d/2 restored %v partitions, ShardOf gives it %d:\n%s", i, m, want, r.out)
		}
		total += want
	}
	if total != 8 || !strings.Contains(results[0].out, "restored the offsets of 1 consumer groups") {
		t.Errorf("shards own %d of 8 partitions; shard 0 output:\n%s", total, results[0].out)
	}
	for topic, parts := range shardTopics {
		single, sharded := readRecords(t, ctx, brokers, "single_"+topic), readRecords(t, ctx, brokers, "sharded_"+topic)
		if len(single) != int(parts) {
			t.Fatalf("single_%s has records in %d partitions, want %d", topic, len(single), parts)
		}
		for p := range parts {
			sameRecords(t, fmt.Sprintf("sharded_%s/%d", topic, p), sharded[p], single[p])
		}
		td, err := adm.ListTopics(ctx, "sharded_"+topic)
		if err != nil || len(td["sharded_"+topic].Partitions) != int(parts) {
			t.Errorf("sharded_%s: %v partitions (%v), want %d", topic, len(td["sharded_"+topic].Partitions), err, parts)
		}
	}
	groups := map[string]map[string]map[int32]int64{}
	for _, g := range []string{"single-app", "sharded-app"} {
		resp, err := adm.FetchOffsets(ctx, g)
		if err != nil {
			t.Fatal(err)
		}
		groups[g] = map[string]map[int32]int64{}
		resp.Each(func(o kadm.OffsetResponse) {
			name := strings.TrimPrefix(strings.TrimPrefix(o.Topic, "single_"), "sharded_")
			if groups[g][name] == nil {
				groups[g][name] = map[int32]int64{}
			}
			groups[g][name][o.Partition] = o.At
		})
	}
	if !reflect.DeepEqual(groups["sharded-app"], groups["single-app"]) || len(groups["single-app"]["orders"]) != 5 {
		t.Errorf("group offsets: sharded %v, single %v", groups["sharded-app"], groups["single-app"])
	}
	for i := range 2 {
		r := mustRun(t, ctx, ExitOK, source("sharded", "--shard", fmt.Sprintf("%d/2", i))...)
		if !strings.Contains(r.out, " records=0 ") {
			t.Errorf("re-run of shard %d/2 produced records:\n%s", i, r.out)
		}
	}
}
