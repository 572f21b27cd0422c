package restore

import (
	"context"
	"errors"
	"fmt"
	"io"
	"testing"
	"time"

	"github.com/kafkas3/kafkas3/format"
	"github.com/kafkas3/kafkas3/index"
	"github.com/kafkas3/kafkas3/s3store"
	"github.com/twmb/franz-go/pkg/kfake"
)

// TestFollowQuietTopicKeepsItsMarkers: a follower whose topic is
// quiet keeps polling. Before the marks, every pass's plan held the
// topic's objects, so every pass re-committed the target's resume
// markers (prepareTopic: "Existing markers are committed again so they
// do not expire under offsets.retention.minutes"). A pruned plan holds no
// object when nothing is new, topicsWithObjects skips the topic, and the
// markers are never committed again: after offsets.retention.minutes
// (here 300 ms) they expire. The sink then restamps the last entry (a
// routine flush past a transaction marker): the pruned plan is stale,
// the archive is planned whole, the missing marker is taken for a fresh
// target, and the whole archive is produced a second time. Or new
// records arrive: the pruned plan's start (a new marker at the end plus
// the records restored) lies past the end, and the follower stops with
// ErrForeignWrite ("the topic was deleted, recreated or truncated").
func TestFollowQuietTopicKeepsItsMarkers(t *testing.T) {
	t.Run("a restamp, then a whole plan", func(t *testing.T) { followQuiet(t, false, false) })
	t.Run("a new object", func(t *testing.T) { followQuiet(t, true, false) })
	// The marker group deleted between passes (by hand): the follower
	// commits its own start again (partitionMarker, from its memo), never a
	// fresh start at the end.
	t.Run("marker group deleted, a new object", func(t *testing.T) { followQuiet(t, true, true) })
}

func followQuiet(t *testing.T, newObject, deleteGroup bool) {
	c, err := kfake.NewCluster(kfake.NumBrokers(1), kfake.SeedTopics(1, "dst"),
		kfake.BrokerConfigs(map[string]string{
			"offset.retention.ms":                 "300",
			"offsets.retention.check.interval.ms": "50",
		}))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(c.Close)
	brokers := c.ListenAddrs()

	a := newArchive(t, format.NewJSON())
	recs := values("p0", 0, 4)
	key := a.put("src", 0, 0, recs)
	a.writeIndex("src", 0, 4, indexed{key: key, runs: []index.Run{{First: 0, Last: 3}}, from: 0})

	r, log := newFollower(t, a, brokers, true)
	ctx, cancel := context.WithCancel(testContext(t))
	done := make(chan error, 1)
	go func() {
		_, err := r.Run(ctx, log)
		done <- err
	}()
	waitRecords(t, brokers, "dst", 4)
	time.Sleep(1500 * time.Millisecond) // quiet: passes with nothing new
	if deleteGroup {
		adm := newAdmin(t, brokers)
		for deadline := time.Now().Add(5 * time.Second); ; time.Sleep(10 * time.Millisecond) {
			res, err := adm.DeleteGroups(testContext(t), MarkerGroup("dst"))
			if err == nil && res.Error() == nil || time.Now().After(deadline) {
				break // deleted, or expired already (the retention above)
			}
		}
	}
	if newObject {
		more := values("p0", 4, 4)
		k := a.put("src", 0, 4, more)
		a.writeIndex("src", 0, 8, indexed{key: k, runs: []index.Run{{First: 4, Last: 7}}, from: 4})
		recs = append(recs, more...)
	} else {
		// The sink restamps the entry (same object and runs, a later commit).
		a.writeIndex("src", 0, 5, indexed{key: key, runs: []index.Run{{First: 0, Last: 3}}, from: 0})
	}
	at := log.passes()
	err = nil
	stopped := false
wait:
	for deadline := time.Now().Add(10 * time.Second); log.passes() < at+3 && time.Now().Before(deadline); {
		select {
		case err = <-done:
			stopped = true
			break wait
		case <-time.After(5 * time.Millisecond):
		}
	}
	if !stopped {
		time.Sleep(200 * time.Millisecond)
		cancel()
		err = <-done
	}
	cancel()
	if err != nil && !errors.Is(err, context.Canceled) {
		t.Fatalf("the follower stopped: %v", err)
	}
	checkValues(t, "dst/0", readTopic(t, brokers, "dst")[0], recs)
}

// planSummary plans with r (follow mode, no pass run) and returns the
// summary of that plan.
func planSummary(t *testing.T, r *Restorer) (*Plan, Summary) {
	t.Helper()
	plan, err := r.Plan(testContext(t))
	if err != nil {
		t.Fatal(err)
	}
	var sum Summary
	sum.addPlan(plan)
	return plan, sum
}

// TestPrunedPlanCountsLostOffsetsOthersHold: two sinks (two groups,
// two folders) archive one partition. Sink A holds offsets 0..9; sink B,
// whose group fell behind the log start, records 0..9 as lost on its
// first entry (from 0, commit 20) and holds 10..19. Planned whole, no
// offset is lost: A holds 0..9 (index.Partition.Lost subtracts what any
// entry holds). Planned from a mark at 10 (A's entry let go), B's entry
// would start at the mark and be kept, its lost runs no longer matched
// against A's entry, and the plan and the summary would say 10 offsets
// were lost before archiving, offsets the run restored: so an entry with
// lost offsets below the mark makes the plan whole (errPruneStale).
func TestPrunedPlanCountsLostOffsetsOthersHold(t *testing.T) {
	a := newArchive(t, format.NewJSON())
	ka := a.putRecs("src", 0, "partition=0", 0, 1, 2, 3, 4, 5, 6, 7, 8, 9)
	a.writeIndex("src", 0, 10, indexed{key: ka, runs: []index.Run{{First: 0, Last: 9}}, from: 0})
	cfg := indexedConfig([]string{"127.0.0.1:1"}, a)
	cfg.Follow, cfg.ReadOnce = true, true
	r := mustNew(t, cfg, a, nil)
	plan, _ := planSummary(t, r)
	r.rememberStreams(plan) // as after a completed pass: the mark at 10

	kb := a.putRecs("src", 0, "b=1", 10, 11, 12, 13, 14, 15, 16, 17, 18, 19)
	e := index.Entry{V: a.version(), Topic: "src", Partition: 0, Key: kb, Objects: []index.Object{a.describe(kb)},
		Runs: []index.Run{{First: 10, Last: 19}}, Records: 10, From: 0, Commit: 20, Lost: []index.Run{{First: 0, Last: 9}}}
	b, err := index.Encode([]index.Entry{e})
	if err != nil {
		t.Fatal(err)
	}
	a.putRaw(index.Key(index.DefaultPrefix, "src", 0, 20, index.WriterOf("group-b")), func(w io.Writer) { w.Write(b) })

	_, whole := planSummary(t, mustNew(t, cfg, a, nil))
	again, got := planSummary(t, r)
	// The entry's lost runs reach below the mark: the plan is made whole
	// (pruneIndex), which counts them against every entry.
	if pp := again.Topics[0].Parts[0]; pp.base != nil {
		t.Fatalf("the second plan starts at the mark, with lost offsets below it")
	}
	if got.LostOffsets != whole.LostOffsets {
		t.Fatalf("planned from the mark the summary counts %d offsets lost before archiving, planned whole %d", got.LostOffsets, whole.LostOffsets)
	}
}

// TestMarksOfVanishedPartitionsGo: a partition whose objects and index
// entries are all deleted after a pass makes the next plan whole (its
// fingerprint below the mark changed); that plan does not hold the
// partition, so its mark goes, and the plan after it starts at the other
// partition's mark again instead of being whole on every pass.
func TestMarksOfVanishedPartitionsGo(t *testing.T) {
	a := newArchive(t, format.NewJSON())
	var p1 []string
	for p := range int32(2) {
		key := a.put("src", p, 0, values(fmt.Sprintf("p%d", p), 0, 4))
		a.writeIndex("src", p, 4, indexed{key: key, runs: []index.Run{{First: 0, Last: 3}}, from: 0})
		if p == 1 {
			p1 = append(p1, key, index.Key(index.DefaultPrefix, "src", 1, 4, ""))
		}
	}
	cfg := indexedConfig([]string{"127.0.0.1:1"}, a)
	cfg.Follow, cfg.ReadOnce = true, true
	st := &swappedStore{a.store}
	r, err := New(cfg, st, nil)
	if err != nil {
		t.Fatal(err)
	}
	plan, _ := planSummary(t, r)
	r.rememberStreams(plan)
	if n := len(r.marks()); n != 2 {
		t.Fatalf("%d marks after the first pass, want 2", n)
	}
	for _, k := range p1 {
		a.delete(k)
	}
	st.Store = a.store // delete copies the archive into a new store
	plan, _ = planSummary(t, r)
	if !plan.whole {
		t.Fatal("the plan after partition 1 vanished is not whole")
	}
	r.rememberStreams(plan)
	if m := r.marks(); len(m) != 1 || m[topicPartition{"src", 0}] == nil {
		t.Fatalf("marks after the whole plan: %v, want partition 0's only", m)
	}
	plan, _ = planSummary(t, r)
	if plan.whole || plan.Topics[0].Parts[0].base == nil {
		t.Fatal("the next plan is whole again, or does not start at partition 0's mark")
	}
}

// swappedStore is a store the test can replace under a Restorer.
type swappedStore struct{ s3store.Store }
