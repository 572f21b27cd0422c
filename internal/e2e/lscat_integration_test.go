//go:build integration

package e2e

import (
	"context"
	"encoding/json"
	"strings"
	"testing"
	"time"

	"github.com/kafkas3/kafkas3/inspect"
	"github.com/twmb/franz-go/pkg/kgo"
)

// TestIntegrationLsCat: after sink --once (envelopes) into versitygw,
// `kafkas3 ls --json --timeline hour` shows every partition whole (offsets,
// records, objects, times, envelope, no problem) and `kafkas3 cat` prints
// five records of one partition exactly as Kafka holds them (offset,
// timestamp, key, value), read back with franz-go; a selection that
// matches nothing exits 1.
func TestIntegrationLsCat(t *testing.T) {
	b := newBed(t)
	const topic, parts, perPart = "e2e-lscat", 3, 2_500
	b.k.CreateTopic(t, topic, parts)
	b.produce(t, topic, parts, 0, perPart, value)
	bucket := b.s.CreateBucket(t)
	cfg := b.sinkConf("e2e-lscat", topic, bucket).with("store.envelope", "true").write(t)
	runOnce(t, "sink", cfg)

	p := startKafkas3(t, "ls", "ls", cfg, "--json", "--timeline", "hour")
	if code := p.wait(2 * time.Minute); code != 0 {
		t.Fatalf("ls: exit %d\n%s", code, p.logs())
	}
	var doc struct {
		Partitions []inspect.Partition `json:"partitions"`
	}
	if err := json.Unmarshal([]byte(p.stdout()), &doc); err != nil || len(doc.Partitions) != parts {
		t.Fatalf("ls --json: %v\n%s", err, p.stdout())
	}
	for _, lp := range doc.Partitions {
		var inTimeline int64
		for _, bk := range lp.Timeline {
			inTimeline += bk.Records
		}
		if lp.Topic != topic || lp.FirstOffset != 0 || lp.LastOffset != perPart-1 || lp.Records != perPart || lp.Objects != 3 ||
			lp.Envelope != "yes" || len(lp.Problems) != 0 || lp.FirstTime == nil || lp.Written == nil || inTimeline != perPart {
			t.Errorf("ls partition %d: %+v", lp.Partition, lp)
		}
	}

	p = startKafkas3(t, "cat", "cat", cfg, "--topic", topic, "--partition", "1", "--offset", "1500:1504")
	if code := p.wait(2 * time.Minute); code != 0 {
		t.Fatalf("cat: exit %d\n%s", code, p.logs())
	}
	cl := b.k.Client(t, kgo.ConsumePartitions(map[string]map[int32]kgo.Offset{topic: {1: kgo.NewOffset().At(1500)}}))
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	var want []*kgo.Record
	for len(want) < 5 {
		fs := cl.PollFetches(ctx)
		if err := fs.Err(); err != nil {
			t.Fatal(err)
		}
		fs.EachRecord(func(r *kgo.Record) { want = append(want, r) })
	}
	lines := strings.Split(strings.TrimSpace(p.stdout()), "\n")
	if len(lines) != 5 {
		t.Fatalf("cat printed %d lines, want 5:\n%s", len(lines), p.stdout())
	}
	for i, l := range lines {
		var got struct {
			Partition int32  `json:"partition"`
			Offset    int64  `json:"offset"`
			Timestamp int64  `json:"timestamp"`
			Key       string `json:"key"`
			Value     string `json:"value"`
		}
		if err := json.Unmarshal([]byte(l), &got); err != nil {
			t.Fatalf("cat line %q: %v", l, err)
		}
		w := want[i]
		if got.Partition != 1 || got.Offset != w.Offset || got.Timestamp != w.Timestamp.UnixMilli() || got.Key != string(w.Key) || got.Value != string(w.Value) {
			t.Errorf("cat line %d: %+v, Kafka holds offset %d key %q value %q at %d", i, got, w.Offset, w.Key, w.Value, w.Timestamp.UnixMilli())
		}
	}

	p = startKafkas3(t, "cat nothing", "cat", cfg, "--topic", topic, "--key", "no-such-key", "--partition", "0")
	if code := p.wait(2 * time.Minute); code != 1 || !strings.Contains(p.stderr(), "no record matched") {
		t.Fatalf("cat of nothing: exit %d, want 1\n%s", code, p.logs())
	}
}
