//go:build integration

package e2e

import (
	"bytes"
	"context"
	"fmt"
	"testing"
	"time"

	"github.com/twmb/franz-go/pkg/kadm"
	"github.com/twmb/franz-go/pkg/kgo"
)

// TestIntegrationCompactedRoundTrip archives (with store.envelope) a topic the broker really
// compacted (holes in its offsets), with three consumer groups (at 0, on
// an offset compaction removed, at the end): verify calls the archive
// clean (compacted offsets are absent, not gaps), and the restore gives
// every surviving record in order, and groups whose next record on the
// target, read with kcat, is the record they would read next on the
// source.
func TestIntegrationCompactedRoundTrip(t *testing.T) {
	b := newBed(t)
	const parts, keys, rounds = 2, 20, 8
	topic := srcUnique("cmp")
	b.createTopicWith(t, topic, parts, map[string]string{
		"cleanup.policy": "compact", "segment.ms": "100", "min.cleanable.dirty.ratio": "0.01",
		"min.compaction.lag.ms": "0", "delete.retention.ms": "100",
	})
	cl := b.k.Client(t, kgo.RecordPartitioner(kgo.ManualPartitioner()))
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Minute)
	defer cancel()
	for r := range rounds {
		var recs []*kgo.Record
		for p := range int32(parts) {
			for k := range keys {
				recs = append(recs, &kgo.Record{Topic: topic, Partition: p, Key: fmt.Appendf(nil, "key-%d", k),
					Value: fmt.Appendf(nil, "p%d-round%d-key%d", p, r, k), Headers: []kgo.RecordHeader{{Key: "round", Value: fmt.Appendf(nil, "%d", r)}}})
			}
		}
		if err := cl.ProduceSync(ctx, recs...).FirstErr(); err != nil {
			t.Fatal(err)
		}
		time.Sleep(150 * time.Millisecond) // the next round rolls a segment
	}
	ends := b.srcEnds(t, topic)
	// Wait for the cleaner to finish: every partition holds about one
	// record per key (the keys, and the roll records of the active
	// segment), so nothing is left for it to remove. The bound is generous:
	// on a loaded machine (a load average of 30 on 2 cores) the cleaner
	// once left 24 of 222 records after 90 s.
	var src map[int32][]*kgo.Record
	if !waitFor(180*time.Second, time.Second, func() bool {
		// One more record per partition rolls the last full segment.
		var recs []*kgo.Record
		for p := range int32(parts) {
			recs = append(recs, &kgo.Record{Topic: topic, Partition: p, Key: []byte("roll"), Value: []byte("roll")})
		}
		if err := cl.ProduceSync(ctx, recs...).FirstErr(); err != nil {
			t.Fatal(err)
		}
		ends = b.srcEnds(t, topic)
		src = b.dumpTopic(t, topic)
		for p := range int32(parts) {
			if len(src[p]) > keys+2 {
				return false
			}
		}
		return true
	}) {
		t.Fatalf("the broker did not compact %s within 180 s: %d of %d records left in partition 0", topic, len(src[0]), ends[0])
	}
	// Stop the cleaner from going on while the test archives: no segment
	// counts as dirty enough any more; then wait until two dumps a second
	// apart agree.
	adm := kadm.NewClient(b.k.Client(t))
	alter := []kadm.AlterConfig{{Name: "min.cleanable.dirty.ratio", Value: kadm.StringPtr("0.99")}, {Name: "segment.ms", Value: kadm.StringPtr("604800000")}}
	if resp, err := adm.AlterTopicConfigs(ctx, alter, topic); err != nil || resp[0].Err != nil {
		t.Fatalf("alter %s: %v %v", topic, err, resp)
	}
	time.Sleep(2 * time.Second)
	if !waitFor(30*time.Second, 2*time.Second, func() bool {
		again := b.dumpTopic(t, topic)
		same := len(again[0]) == len(src[0]) && len(again[1]) == len(src[1])
		src = again
		return same
	}) {
		t.Fatalf("%s kept changing after the cleaner was stopped", topic)
	}
	ends = b.srcEnds(t, topic)
	// Groups: at 0, on an offset compaction removed, at the end.
	hole := map[int32]int64{}
	for p := range int32(parts) {
		// The last absent offset before a surviving record, so the group
		// sits inside a run the cleaner removed.
		for i := len(src[p]) - 1; i >= 0; i-- {
			prev := int64(-1)
			if i > 0 {
				prev = src[p][i-1].Offset
			}
			if src[p][i].Offset > prev+1 && src[p][i].Offset > 1 {
				hole[p] = src[p][i].Offset - 1
				break
			}
		}
		if _, ok := hole[p]; !ok {
			t.Fatalf("partition %d has no hole after compaction", p)
		}
	}
	groups := map[string]map[int32]int64{
		"zero": {0: 0, 1: 0},
		"hole": hole,
		"end":  {0: ends[0], 1: ends[1]},
	}
	for g, offs := range groups {
		var os kadm.Offsets
		for p, o := range offs {
			os.Add(kadm.Offset{Topic: topic, Partition: p, At: o, LeaderEpoch: -1})
		}
		if err := adm.CommitAllOffsets(ctx, "app-"+g+"-"+topic, os); err != nil {
			t.Fatalf("commit group %s: %v", g, err)
		}
	}
	t.Logf("compacted: partition 0 holds %d records of offsets 0..%d, partition 1 %d of 0..%d; groups %v", len(src[0]), ends[0]-1, len(src[1]), ends[1]-1, groups)

	bucket := b.s.CreateBucket(t)
	cfg := b.sinkConf("cmp-"+topic, topic, bucket).with("flush.size", "25", "store.envelope", "true").write(t)
	sum, _ := runOnce(t, "sink --once", cfg)
	if sum.records != int64(len(src[0])+len(src[1])) {
		t.Fatalf("sink archived %d records, the compacted topic holds %d", sum.records, len(src[0])+len(src[1]))
	}
	vp := startKafkas3(t, "verify --deep", "verify", cfg, "--deep")
	if code := vp.wait(2 * time.Minute); code != 0 {
		t.Fatalf("verify --deep of the compacted archive: exit %d, want 0 (compacted offsets are absent, not gaps)\n%s", code, vp.logs())
	}

	target := "copy_of_" + topic
	// The target must not compact the restore again: cleanup.policy=delete.
	ssum, _ := srcRunOK(t, "source --restore-groups", cfg, "--topic-rename", "copy_of_$0", "--create-topics",
		"--topic-config", "cleanup.policy=delete", "--restore-groups", "--group-rename", "app-(.*)=dr-$1")
	if ssum.records != sum.records || ssum.gaps != 0 {
		t.Fatalf("source: %s, want %d records and no gaps", ssum.line, sum.records)
	}
	got := b.dumpTopic(t, target)
	for p := range int32(parts) {
		if len(got[p]) != len(src[p]) {
			t.Fatalf("partition %d: %d records restored, the source holds %d", p, len(got[p]), len(src[p]))
		}
		for i, w := range src[p] {
			g := got[p][i]
			if !bytes.Equal(g.Key, w.Key) || !bytes.Equal(g.Value, w.Value) || showRecordHeaders(g.Headers) != showRecordHeaders(w.Headers) {
				t.Fatalf("partition %d record %d: got %q=%q %s, want %q=%q %s", p, i, g.Key, g.Value, showRecordHeaders(g.Headers), w.Key, w.Value, showRecordHeaders(w.Headers))
			}
		}
	}
	for g, offs := range groups {
		committed, err := adm.FetchOffsets(ctx, "dr-"+g+"-"+topic)
		if err != nil {
			t.Fatalf("fetch dr-%s: %v", g, err)
		}
		for p, o := range offs {
			c, ok := committed.Lookup(target, p)
			if !ok {
				t.Fatalf("group dr-%s has no offset for %s/%d", g, target, p)
			}
			want := b.grpKcatNext(t, topic, p, o)
			have := b.grpKcatNext(t, target, p, c.At)
			if !bytes.Equal(want, have) {
				t.Errorf("group %s partition %d: source offset %d reads next %q, target offset %d reads %q", g, p, o, want, c.At, have)
			}
		}
	}
}
