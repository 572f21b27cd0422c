//go:build integration

package e2e

import (
	"context"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/twmb/franz-go/pkg/kadm"
)

// TestIntegrationSinkOnce: --once archives up to the end offsets, prints the
// summary, commits in group connect-<name>, and a second run writes nothing.
func TestIntegrationSinkOnce(t *testing.T) {
	b := newBed(t)
	const topic, parts, perPart, flush = "e2e-once", 3, 2_500, 1000
	b.k.CreateTopic(t, topic, parts)
	b.produce(t, topic, parts, 0, perPart, value)
	bucket := b.s.CreateBucket(t)
	cfg := b.sinkConf("e2e-once", topic, bucket).write(t)

	sum, p := runOnce(t, "once #1", cfg)
	objs, idx := splitIndex(b.snapshot(t, bucket))
	// One index object per partition rotation.
	if int64(len(idx)) != sum.indexObjects || len(idx) != parts*((perPart+flush-1)/flush) {
		t.Fatalf("%d index objects, summary index_objects=%d, want one per rotation", len(idx), sum.indexObjects)
	}
	var bytes int64
	for _, o := range objs {
		bytes += o.size
	}
	wantObjects := parts * ((perPart + flush - 1) / flush)
	if sum.topics != topic || sum.partitions != parts || sum.records != parts*perPart ||
		sum.objects != int64(wantObjects) || sum.bytes != bytes || len(objs) != wantObjects {
		t.Fatalf("summary %q; want topics=%s partitions=%d records=%d objects=%d bytes=%d (bucket holds %d objects)",
			sum.line, topic, parts, parts*perPart, wantObjects, bytes, len(objs))
	}
	if sum.seconds <= 0 || sum.seconds > p.ended.Sub(p.started).Seconds()+0.1 {
		t.Fatalf("summary seconds=%v, process ran %v", sum.seconds, p.ended.Sub(p.started))
	}
	if n := checkJSONArchive(t, objs, topic, perPartition(parts, 0), b.endOffsets(t, topic), flush); n != parts*perPart {
		t.Fatalf("archive holds %d records, want %d", n, parts*perPart)
	}
	// The final partial files were completed: 2,500 = 1000 + 1000 + 500.
	for pt := range int32(parts) {
		k := fmt.Sprintf("topics/%s/partition=%d/%s+%d+%010d.json", topic, pt, topic, pt, 2000)
		if _, ok := objs[k]; !ok {
			t.Fatalf("final partial object %s missing", k)
		}
	}

	// The group Kafka Connect would use holds the end offsets.
	group := "connect-e2e-once"
	ends := b.endOffsets(t, topic)
	if got := b.committed(t, group, topic); fmt.Sprint(got) != fmt.Sprint(ends) {
		t.Fatalf("group %s committed %v, end offsets %v", group, got, ends)
	}
	// And it has no members left: the process left the group.
	adm := kadm.NewClient(b.k.Client(t))
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	dg, err := adm.DescribeGroups(ctx, group)
	if err != nil {
		t.Fatal(err)
	}
	if g := dg[group]; len(g.Members) != 0 {
		t.Fatalf("group %s still has %d members after --once exited", group, len(g.Members))
	}

	before := b.list(t, bucket)
	time.Sleep(1100 * time.Millisecond) // a rewrite would show a newer LastModified
	sum2, _ := runOnce(t, "once #2", cfg)
	if sum2.records != 0 || sum2.objects != 0 || sum2.bytes != 0 {
		t.Fatalf("second --once with no new records: %q, want records=0 objects=0 bytes=0", sum2.line)
	}
	after := b.list(t, bucket)
	if fmt.Sprint(before) != fmt.Sprint(after) {
		t.Fatalf("second --once changed the bucket:\nbefore %v\nafter  %v", before, after)
	}
	if got := b.committed(t, group, topic); fmt.Sprint(got) != fmt.Sprint(ends) {
		t.Fatalf("after the second run group %s committed %v, end offsets %v", group, got, ends)
	}

	// New records: the next run starts at the committed offset, so its first
	// key is that offset, and nothing before it is rewritten.
	b.produce(t, topic, parts, perPart, 700, value)
	sum3, _ := runOnce(t, "once #3", cfg)
	if sum3.records != parts*700 || sum3.objects != parts {
		t.Fatalf("third --once after 700 new records per partition: %q, want records=%d objects=%d", sum3.line, parts*700, parts)
	}
	objs3, _ := splitIndex(b.snapshot(t, bucket))
	for k, o := range objs {
		if objs3[k].sum != o.sum {
			t.Fatalf("third run rewrote %s with different bytes", k)
		}
	}
	for pt := range int32(parts) {
		k := fmt.Sprintf("topics/%s/partition=%d/%s+%d+%010d.json", topic, pt, topic, pt, perPart)
		if _, ok := objs3[k]; !ok {
			t.Fatalf("third run: object %s missing; keys: %s", k, strings.Join(keysOf(objs3), " "))
		}
	}
	checkJSONArchive(t, objs3, topic, perPartition(parts, 0), b.endOffsets(t, topic), flush)
}

func keysOf(m map[string]object) []string {
	var out []string
	for k := range m {
		out = append(out, k)
	}
	return out
}
