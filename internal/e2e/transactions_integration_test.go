//go:build integration

package e2e

import (
	"context"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/twmb/franz-go/pkg/kgo"
)

// TestIntegrationTransactionsReadCommitted (issue 9 item 4): on real Kafka,
// a topic with committed and aborted transactions and one still open when
// the sink starts. sink --once (read_committed by default) archives the
// committed records only and stops at the last stable offset; the open
// transaction's records, committed later, come with the next run; the
// restore holds exactly what kcat (read_committed, a client this project
// did not write) reads from the source. With isolation.level=read_uncommitted
// the aborted records are archived too, as Kafka Connect's consumer would.
func TestIntegrationTransactionsReadCommitted(t *testing.T) {
	b := newBed(t)
	topic := srcUnique("e2e-txn")
	b.k.CreateTopic(t, topic, 2)
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Minute)
	defer cancel()
	pr, err := b.k.NewClient(kgo.TransactionalID(topic+"-producer"), kgo.RecordPartitioner(kgo.ManualPartitioner()))
	if err != nil {
		t.Fatal(err)
	}
	defer pr.Close()
	n := 0
	txn := func(end kgo.TransactionEndTry, per int) {
		t.Helper()
		if err := pr.BeginTransaction(); err != nil {
			t.Fatal(err)
		}
		for p := range int32(2) {
			for range per {
				n++
				if err := pr.ProduceSync(ctx, &kgo.Record{Topic: topic, Partition: p, Key: fmt.Appendf(nil, "k%d", n),
					Value: fmt.Appendf(nil, "v%d-%s", n, map[kgo.TransactionEndTry]string{kgo.TryCommit: "committed", kgo.TryAbort: "aborted"}[end])}).FirstErr(); err != nil {
					t.Fatal(err)
				}
			}
		}
		if err := pr.EndTransaction(ctx, end); err != nil {
			t.Fatal(err)
		}
	}
	txn(kgo.TryCommit, 3)
	txn(kgo.TryAbort, 2)
	txn(kgo.TryCommit, 4)
	// Open: begun and produced, not ended while the sink runs.
	if err := pr.BeginTransaction(); err != nil {
		t.Fatal(err)
	}
	for p := range int32(2) {
		if err := pr.ProduceSync(ctx, &kgo.Record{Topic: topic, Partition: p, Key: []byte("open"), Value: []byte("v-open-committed-later")}).FirstErr(); err != nil {
			t.Fatal(err)
		}
	}

	bucket := b.s.CreateBucket(t)
	cfg := b.sinkConf("e2e-txn-"+topic, topic, bucket).with("flush.size", "3").write(t)
	sum, _ := runOnce(t, "sink --once (a transaction open)", cfg)
	if sum.records != 2*(3+4) {
		t.Fatalf("first run archived %d records, want the %d committed ones (summary %s)", sum.records, 2*(3+4), sum.line)
	}
	if err := pr.EndTransaction(ctx, kgo.TryCommit); err != nil {
		t.Fatal(err)
	}
	sum, _ = runOnce(t, "sink --once (after the commit)", cfg)
	if sum.records != 2 {
		t.Fatalf("second run archived %d records, want the 2 of the transaction committed since (summary %s)", sum.records, sum.line)
	}
	// No archived object holds an aborted record.
	objs, idx := splitIndex(b.snapshot(t, bucket))
	for k, o := range objs {
		if strings.Contains(string(o.data), "aborted") {
			t.Fatalf("object %s holds an aborted record:\n%s", k, o.data)
		}
	}
	if len(idx) == 0 {
		t.Fatal("no archive index")
	}

	// The restore equals what kcat reads with read_committed from the source.
	target := topic + "-restored"
	// The index proves the archive complete across the markers and the
	// aborted offsets: no gap.
	ssum, _ := srcRunOK(t, "source", cfg, "--topic-rename", target, "--create-topics")
	if ssum.records != 2*(3+4+1) || ssum.gaps != 0 {
		t.Fatalf("source summary %s, want %d records and no gap", ssum.line, 2*(3+4+1))
	}
	for p := range int32(2) {
		want := b.srcKcat(t, topic, p)
		if len(want) != 3+4+1 {
			t.Fatalf("kcat read %d committed records from %s[%d], want 8", len(want), topic, p)
		}
		srcSameValues(t, fmt.Sprintf("%s[%d]", target, p), b.srcKcat(t, target, p), want)
	}

	// read_uncommitted archives the aborted records too.
	bucketU := b.s.CreateBucket(t)
	cfgU := b.sinkConf("e2e-txn-u-"+topic, topic, bucketU).with("flush.size", "3", "consumer.override.isolation.level", "read_uncommitted").write(t)
	sum, _ = runOnce(t, "sink --once read_uncommitted", cfgU)
	if sum.records != 2*(3+2+4+1) {
		t.Fatalf("read_uncommitted archived %d records, want %d (aborted included)", sum.records, 2*(3+2+4+1))
	}
	aborted := 0
	objsU, _ := splitIndex(b.snapshot(t, bucketU))
	for _, o := range objsU {
		aborted += strings.Count(string(o.data), "aborted")
	}
	if aborted != 2*2 {
		t.Fatalf("read_uncommitted archive holds %d aborted records, want 4", aborted)
	}
}
