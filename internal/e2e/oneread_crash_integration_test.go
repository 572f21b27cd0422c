//go:build integration

package e2e

import (
	"context"
	"fmt"
	"math/rand/v2"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/twmb/franz-go/pkg/kadm"
	"github.com/twmb/franz-go/pkg/kgo"
)

// TestIntegrationOneReadCrashExactlyOnce (issue 19, items 4 and 9): the
// hostile envelope corpus (envRecord: nil and empty keys, tombstones,
// binary values, duplicate and nil headers, old timestamps), 3 partitions
// of 100,000 records, archived by `sink --once` with store.envelope and the
// archive index in objects of 20,000 records (flush.size), is restored by
// `source` with one read per object (the default with an index: the log
// says so). The source is SIGKILLed at random moments, most of them in the
// middle of an object's production, and re-run each time (at least three
// kills), then run to the end. The target then equals the source record by
// record: partition, offset, key, value, headers, timestamp and its type.
//
// KAFKAS3_E2E_SEED=<n> replays a run's kill schedule.
func TestIntegrationOneReadCrashExactlyOnce(t *testing.T) {
	b := newBed(t)
	const perPart, flush = 100_000, 20_000
	const total = envParts * perPart
	topic := srcUnique("oneread-crash")
	target := "copy_of_" + topic
	envCreateTopic(t, b, topic, envParts)
	// The target takes records of at most 64 KB (max.message.bytes): the
	// restore's batches follow it, so an object of 20,000 records (about
	// 5 MB) lands in about 80 produce requests, and a kill lands in the
	// middle of one.
	oneReadTarget(t, b, target)
	oneReadProduce(t, b, topic, perPart)
	bucket := b.s.CreateBucket(t)
	cfg := b.sinkConf(topic, topic, bucket).with("flush.size", strconv.Itoa(flush), "store.envelope", "true").write(t)
	if sum, _ := runOnce(t, "sink --once", cfg); sum.records != total {
		t.Fatalf("sink archived %d records, want %d", sum.records, total)
	}

	seed, rng := crashSeed(t)
	adm := kadm.NewClient(b.k.Client(t))
	landed := func() int64 {
		ends, err := srcEndsWith(adm, target)
		if err != nil {
			return 0
		}
		return srcSum(ends)
	}
	args := []string{"--topic-rename", "copy_of_$0"}
	prev, midObject := oneReadKills(t, b, cfg, target, args, rng, seed, landed, total, flush)
	if midObject == 0 {
		t.Fatalf("no kill left a partition in the middle of an object; seed %d", seed)
	}

	final, fp := srcRunOK(t, "source final run", cfg, args...)
	if final.records+final.present != total || final.present != prev {
		t.Fatalf("final run: records=%d already_present=%d; want already_present=%d (landed before it) and records=%d",
			final.records, final.present, prev, total-prev)
	}
	if !strings.Contains(fp.stderr(), "checking the archive from its index; each object is read once, when it is restored") {
		t.Fatalf("the final run does not say it reads each object once\n%s", fp.logs())
	}
	if bad := envSame(t, "restored copy", envDump(t, b, target, total), envDump(t, b, topic, total)); bad > 0 {
		t.Fatalf("%d records differ between %s and %s; seed %d", bad, target, topic, seed)
	}
	t.Logf("%s equals %s record by record (%d records: partition, offset, key, value, headers, timestamp)", target, topic, total)
	again, _ := srcRunOK(t, "source after completion", cfg, args...)
	if again.records != 0 || again.present != total {
		t.Fatalf("run after completion: records=%d already_present=%d, want 0 and %d", again.records, again.present, total)
	}
}

// oneReadTarget creates target with retention.ms=-1 (the corpus's old
// timestamps stay) and max.message.bytes=65536.
func oneReadTarget(t *testing.T, b *bed, target string) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	adm := kadm.NewClient(b.k.Client(t))
	resp, err := adm.CreateTopic(ctx, envParts, 1, map[string]*string{"retention.ms": ptr("-1"), "max.message.bytes": ptr("65536")}, target)
	if err == nil {
		err = resp.Err
	}
	if err != nil {
		t.Fatalf("create %s: %v", target, err)
	}
	if !waitFor(30*time.Second, 100*time.Millisecond, func() bool {
		td, err := adm.ListTopics(ctx, target)
		return err == nil && td[target].Err == nil && len(td[target].Partitions) == envParts && allLeaders(td[target].Partitions)
	}) {
		t.Fatalf("topic %s has no leaders", target)
	}
}

// oneReadProduce produces perPart records of the envelope corpus to each
// partition of topic, in batches; its three 300 KB values are cut to
// 1,000 bytes (the target takes 64 KB records).
func oneReadProduce(t *testing.T, b *bed, topic string, perPart int) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Minute)
	defer cancel()
	cl := b.k.Client(t, kgo.RecordPartitioner(kgo.ManualPartitioner()), kgo.ProducerBatchMaxBytes(8_000_000))
	for from := 0; from < perPart; from += 10_000 {
		var recs []*kgo.Record
		for p := range int32(envParts) {
			for i := from; i < min(from+10_000, perPart); i++ {
				r := envRecord(topic, p, i)
				if len(r.Value) > 1000 {
					r.Value = r.Value[:1000]
				}
				recs = append(recs, r)
			}
		}
		if err := cl.ProduceSync(ctx, recs...).FirstErr(); err != nil {
			t.Fatal(err)
		}
	}
}

// oneReadKills is sourceKills, counting the kills that left a partition
// in the middle of an object (its end offset not a multiple of flush). It
// returns what landed before the final run and that count.
func oneReadKills(t *testing.T, b *bed, cfg, target string, args []string, rng *rand.Rand, seed uint64, landed func() int64, total, flush int64) (prev int64, midObject int) {
	t.Helper()
	prev = sourceKills(t, b, cfg, target, args, rng, seed, landed, total, func(k int, p *proc, after int64) string {
		mid := false
		for _, e := range b.srcEnds(t, target) {
			mid = mid || e%flush != 0
		}
		if mid {
			midObject++
		}
		return fmt.Sprintf("mid-object %v", mid)
	})
	return prev, midObject
}
