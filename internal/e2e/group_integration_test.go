//go:build integration

package e2e

import (
	"context"
	"fmt"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/twmb/franz-go/pkg/kadm"
)

// TestIntegrationSinkTwoProcesses (issue 3 item 2): two sink processes with
// the same config share the group's partitions and together archive every
// record exactly once; SIGTERM stops both within 30 s with exit code 0.
func TestIntegrationSinkTwoProcesses(t *testing.T) {
	b := newBed(t)
	const topic, parts, perPart, flush = "e2e-two", 6, 10_000, 1000
	b.k.CreateTopic(t, topic, parts)
	b.produce(t, topic, parts, 0, perPart/2, value)
	bucket, bucketClean := b.s.CreateBucket(t), b.s.CreateBucket(t)
	base := b.sinkConf("", topic, "").with("flush.size", fmt.Sprint(flush))
	cfg := base.with("name", "e2e-two", "s3.bucket.name", bucket).write(t)
	group := "connect-e2e-two"

	p1 := startSink(t, "process 1", cfg)
	p2 := startSink(t, "process 2", cfg)
	// The second half arrives while both run.
	time.Sleep(2 * time.Second)
	b.produce(t, topic, parts, perPart/2, perPart/2, value)
	ends := b.endOffsets(t, topic)

	// In continuous mode every file is complete once each partition's
	// committed offset reaches its end (10,000 is a multiple of flush.size).
	start := time.Now()
	if !waitFor(90*time.Second, 200*time.Millisecond, func() bool {
		c, err := b.committedErr(group, topic)
		return err == nil && fmt.Sprint(c) == fmt.Sprint(ends)
	}) {
		t.Fatalf("group %s committed %v, end offsets %v after 90 s\n%s\n%s", group, b.committed(t, group, topic), ends, p1.logs(), p2.logs())
	}
	t.Logf("all %d records committed %v after the last produce", parts*perPart, time.Since(start).Round(time.Millisecond))

	// Both processes are members and own partitions.
	adm := kadm.NewClient(b.k.Client(t))
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	dg, err := adm.DescribeGroups(ctx, group)
	if err != nil {
		t.Fatal(err)
	}
	g := dg[group]
	var owned []string
	for _, m := range g.Members {
		ca, _ := m.Assigned.AsConsumer()
		n := 0
		for _, tp := range ca.Topics {
			n += len(tp.Partitions)
		}
		owned = append(owned, fmt.Sprintf("%s:%d", m.ClientHost, n))
		if n == 0 {
			t.Fatalf("member %s owns no partition; assignment %v", m.MemberID, owned)
		}
	}
	if len(g.Members) != 2 {
		t.Fatalf("group %s has %d members, want 2", group, len(g.Members))
	}
	t.Logf("group %s: protocol %s, members (host:partitions) %s", group, g.Protocol, strings.Join(owned, " "))

	for _, p := range []*proc{p1, p2} {
		p.signal(syscall.SIGTERM)
	}
	var records int64
	for _, p := range []*proc{p1, p2} {
		sent := time.Now()
		code := p.wait(30 * time.Second)
		if code != 0 {
			t.Fatalf("%s exited with code %d after SIGTERM\n%s", p.name, code, p.logs())
		}
		sum, err := parseSummary(p.stdout())
		if err != nil {
			t.Fatalf("%s: %v\n%s", p.name, err, p.logs())
		}
		if sum.partitions == 0 || sum.records == 0 {
			t.Fatalf("%s archived nothing: %s", p.name, sum.line)
		}
		records += sum.records
		t.Logf("%s: exit 0 %v after SIGTERM: %s", p.name, time.Since(sent).Round(time.Millisecond), sum.line)
	}
	// A partition that moved in a rebalance may have been archived twice
	// up to its last commit; the objects must still be identical.
	t.Logf("the two summaries add up to %d records (produced %d)", records, parts*perPart)

	runOnce(t, "clean --once", base.with("name", "e2e-two-clean", "s3.bucket.name", bucketClean).write(t))
	got, want := b.snapshot(t, bucket), b.snapshot(t, bucketClean)
	if n := checkJSONArchive(t, got, topic, perPartition(parts, 0), ends, flush); n != parts*perPart {
		t.Fatalf("archive holds %d records, want %d", n, parts*perPart)
	}
	sameObjects(t, "two-process archive", got, want)
	t.Logf("%d records in %d objects, identical to a single clean run", parts*perPart, len(got))
}

// TestIntegrationSinkConfluentGroupPickup (issue 3 item 2): offsets committed
// in connect-<name>, as Kafka Connect's S3 sink would have left them, are
// where kafkas3 starts.
func TestIntegrationSinkConfluentGroupPickup(t *testing.T) {
	b := newBed(t)
	const topic, parts, perPart, flush = "e2e-pickup", 3, 3_000, 1000
	b.k.CreateTopic(t, topic, parts)
	b.produce(t, topic, parts, 0, perPart, value)
	bucket := b.s.CreateBucket(t)
	const name = "e2e-pickup"
	group := "connect-" + name

	// The connector's commits: partition 0 at 1234, partition 1 at 3000
	// (all archived), partition 2 never committed.
	committed := map[int32]int64{0: 1234, 1: 3000}
	b.commitGroup(t, group, topic, committed)

	sum, _ := runOnce(t, "--once", b.sinkConf(name, topic, bucket).with("flush.size", fmt.Sprint(flush)).write(t))
	wantRecords := int64(perPart-1234) + 0 + perPart
	if sum.records != wantRecords || sum.partitions != 2 {
		t.Fatalf("summary %s: want records=%d from partitions 0 and 2", sum.line, wantRecords)
	}
	objs, _ := splitIndex(b.snapshot(t, bucket))
	from := map[int32]int64{0: 1234, 1: 3000, 2: 0}
	checkJSONArchive(t, objs, topic, from, b.endOffsets(t, topic), flush)
	first := fmt.Sprintf("topics/%s/partition=0/%s+0+0000001234.json", topic, topic)
	if _, ok := objs[first]; !ok {
		t.Fatalf("no object %s; keys %v", first, keysOf(objs))
	}
	for k := range objs {
		if strings.Contains(k, "partition=1/") {
			t.Fatalf("partition 1 was fully committed, yet %s was written", k)
		}
	}
	t.Logf("first key %s; %d objects; partition 2 (no commit) from offset 0", first, len(objs))
	if got := b.committed(t, group, topic); fmt.Sprint(got) != fmt.Sprint(b.endOffsets(t, topic)) {
		t.Fatalf("group %s committed %v after the run", group, got)
	}
}

// waitForErr retries fn every 250 ms until it succeeds or timeout passes.
func waitForErr(timeout time.Duration, fn func() error) error {
	deadline := time.Now().Add(timeout)
	for {
		err := fn()
		if err == nil || time.Now().After(deadline) {
			return err
		}
		time.Sleep(250 * time.Millisecond)
	}
}
