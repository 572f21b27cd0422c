//go:build integration

package e2e

import (
	"bytes"
	"context"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/twmb/franz-go/pkg/kgo"
)

// TestIntegrationSourceSkipExpired (issue 21, item 5, on the test bed):
// an envelope archive of 2 partitions whose first 200 records of each are
// stamped 30 days ago and the other 200 an hour ago, restored into targets
// created with retention.ms of a week. (1) The dry run counts the 400
// records older than it. (2) A restore without --skip-expired restores
// all 800 and warns. (3) With --skip-expired the 400 are left out,
// counted (expired=400), and the others come back in order with key,
// value and timestamp; a re-run produces nothing.
func TestIntegrationSourceSkipExpired(t *testing.T) {
	b := newBed(t)
	const old, recent = 200, 200
	topic := srcUnique("src-expired")
	b.k.CreateTopic(t, topic, 2)
	now := time.Now()
	stamp := func(i int) time.Time {
		if i < old {
			return now.Add(-30*24*time.Hour + time.Duration(i)*time.Millisecond)
		}
		return now.Add(-time.Hour + time.Duration(i)*time.Millisecond)
	}
	produceStamped(t, b, topic, 2, old+recent, stamp)
	bucket := b.s.CreateBucket(t)
	cfg := b.sinkConf(topic, topic, bucket).with("flush.size", "100", "store.envelope", "true").write(t)
	runOnce(t, "sink --once", cfg)
	week := fmt.Sprint(int64(7 * 24 * time.Hour / time.Millisecond))

	// 1. The dry run counts them.
	p, code := srcRun(t, "dry run", cfg, 3*time.Minute, "--dry-run", "--topic-rename", "kept_$0", "--create-topics", "--topic-config", "retention.ms="+week)
	if code != 0 || !strings.Contains(p.stdout(), fmt.Sprintf("expired: kept_%s: %d records stamped before ", topic, 2*old)) ||
		!strings.Contains(p.stdout(), "older than retention.ms="+week) {
		t.Fatalf("dry run: exit %d, want 0 and the expired records counted:\n%s", code, p.logs())
	}

	// 2. Without --skip-expired: everything, and a warning.
	sum, p := srcRunOK(t, "warn", cfg, "--topic-rename", "all_$0", "--create-topics", "--topic-config", "retention.ms="+week)
	if sum.records != 2*(old+recent) || !strings.Contains(p.stderr(), "records older than the target's retention") {
		t.Fatalf("without --skip-expired: %d records (want %d) and the warning:\n%s", sum.records, 2*(old+recent), p.logs())
	}

	// 3. With it: the recent ones only, counted.
	args := []string{"--topic-rename", "kept_$0", "--create-topics", "--topic-config", "retention.ms=" + week, "--skip-expired"}
	sum, p = srcRunOK(t, "skip", cfg, args...)
	if sum.records != 2*recent || !strings.Contains(p.stdout(), fmt.Sprintf(" expired=%d", 2*old)) {
		t.Fatalf("with --skip-expired: %d records, want %d, and expired=%d:\n%s", sum.records, 2*recent, 2*old, p.stdout())
	}
	for part := range int32(2) {
		got := b.readKeyed(t, "kept_"+topic, part)
		if len(got) != recent {
			t.Fatalf("kept_%s/%d holds %d records, want %d", topic, part, len(got), recent)
		}
		for n, r := range got {
			i := old + n
			if !bytes.Equal(r.Key, key(part, i)) || !bytes.Equal(r.Value, value(part, i)) || !r.Timestamp.Equal(stamp(i).Truncate(time.Millisecond)) {
				t.Fatalf("kept_%s/%d record %d: key %q ts %v, want %q %v", topic, part, n, r.Key, r.Timestamp, key(part, i), stamp(i))
			}
		}
	}
	sum, _ = srcRunOK(t, "again", cfg, args...)
	if sum.records != 0 || sum.present != 2*recent {
		t.Fatalf("re-run: %d records produced, %d already present; want 0, %d", sum.records, sum.present, 2*recent)
	}
}

// produceStamped produces n records to each of partitions partitions of
// topic: record i has key(p, i), value(p, i) and timestamp stamp(i).
func produceStamped(t *testing.T, b *bed, topic string, partitions int32, n int, stamp func(int) time.Time) {
	t.Helper()
	cl, err := b.k.NewClient(kgo.RecordPartitioner(kgo.ManualPartitioner()))
	if err != nil {
		t.Fatal(err)
	}
	defer cl.Close()
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	var recs []*kgo.Record
	for i := range n {
		for p := range partitions {
			recs = append(recs, &kgo.Record{Topic: topic, Partition: p, Key: key(p, i), Value: value(p, i), Timestamp: stamp(i)})
		}
	}
	if err := cl.ProduceSync(ctx, recs...).FirstErr(); err != nil {
		t.Fatal(err)
	}
}
