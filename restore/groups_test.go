package restore

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"math/rand/v2"
	"reflect"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/kafkas3/kafkas3/format"
	"github.com/kafkas3/kafkas3/index"
	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kgo"
)

// putGroupSnapshot writes a group offset snapshot of topic into the archive.
func (a *archive) putGroupSnapshot(topic string, timeMS int64, ends map[int32]int64, groups map[string]map[int32]int64) string {
	a.t.Helper()
	b, err := index.EncodeSnapshot(&index.Snapshot{Topic: topic, TimeMS: timeMS, EndOffsets: ends, Groups: groups})
	if err != nil {
		a.t.Fatal(err)
	}
	key := index.SnapshotKey(index.DefaultPrefix, topic, timeMS, index.WriterOf("connect-src"))
	a.putRaw(key, func(w io.Writer) { w.Write(b) })
	return key
}

// groupsArchive is src with two partitions and offset gaps: partition 0
// holds 0-2, 5, 6, 8, 9 in two objects (3, 4 and 7 are absent: transaction
// markers, compaction), partition 1 holds 0-2. Its snapshot has groups at
// 0, in the gaps, mid-way, at the end and past the end.
func groupsArchive(t *testing.T) *archive {
	a := newArchive(t, format.NewJSON())
	o1 := a.putRecs("src", 0, "partition=0", 0, 1, 2, 5)
	o2 := a.putRecs("src", 0, "partition=0", 6, 8, 9)
	a.writeIndex("src", 0, 6, indexed{key: o1, runs: []index.Run{{First: 0, Last: 2}, {First: 5, Last: 5}}})
	a.writeIndex("src", 0, 10, indexed{key: o2, runs: []index.Run{{First: 6, Last: 6}, {First: 8, Last: 9}}, from: 6})
	o3 := a.putRecs("src", 1, "partition=1", 0, 1, 2)
	a.writeIndex("src", 1, 3, indexed{key: o3, runs: []index.Run{{First: 0, Last: 2}}})
	a.putGroupSnapshot("src", 1000, map[int32]int64{0: 10, 1: 3}, map[string]map[int32]int64{
		"g-zero":   {0: 0, 1: 0},
		"g-gap":    {0: 3},
		"g-mid":    {0: 5, 1: 2},
		"g-marker": {0: 7},
		"g-end":    {0: 10, 1: 3},
		"g-past":   {0: 50},
		"other":    {1: 1},
	})
	return a
}

func groupsConfig(brokers []string, a *archive) Config {
	cfg := indexedConfig(brokers, a)
	cfg.RestoreGroups = true
	cfg.GroupRenameRegex, cfg.GroupRename = regexp.MustCompile(`g-(.*)`), "restored-$1"
	return cfg
}

// committedGroup returns the group's committed offsets on topic.
func committedGroup(t *testing.T, brokers []string, group, topic string) map[int32]int64 {
	t.Helper()
	resp, err := newAdmin(t, brokers).FetchOffsets(testContext(t), group)
	if errors.Is(err, kerr.GroupIDNotFound) {
		return map[int32]int64{}
	}
	if err != nil {
		t.Fatalf("fetch offsets of %s: %v", group, err)
	}
	out := map[int32]int64{}
	for p, o := range resp[topic] {
		if o.Err != nil {
			t.Fatalf("%s %s/%d: %v", group, topic, p, o.Err)
		}
		out[p] = o.At
	}
	return out
}

// wantGroups is the translation of groupsArchive's snapshot with E0 = e0
// on partition 0 and 0 on partition 1: partition 0's stream is source
// offsets 0 1 2 5 6 8 9 at e0+0..6.
func wantGroups(e0 int64) map[string]map[int32]int64 {
	return map[string]map[int32]int64{
		"restored-zero":   {0: e0 + 0, 1: 0},
		"restored-gap":    {0: e0 + 3}, // 3 is absent: the first record at or after it is 5
		"restored-mid":    {0: e0 + 3, 1: 2},
		"restored-marker": {0: e0 + 5}, // 7 is absent: 8
		"restored-end":    {0: e0 + 7, 1: 3},
		"restored-past":   {0: e0 + 7}, // never past the restored data
		"other":           {1: 1},      // no match: the name is kept
	}
}

func checkGroups(t *testing.T, brokers []string, want map[string]map[int32]int64) {
	t.Helper()
	for g, offs := range want {
		if got := committedGroup(t, brokers, g, "dst"); !reflect.DeepEqual(got, offs) {
			t.Errorf("group %s on dst: committed %v, want %v", g, got, offs)
		}
	}
	for _, g := range []string{"g-zero", "g-mid"} {
		if got := committedGroup(t, brokers, g, "dst"); len(got) != 0 {
			t.Errorf("the source name %s was committed too: %v", g, got)
		}
	}
}

// TestRestoreGroupsExact: into a target that already held 4 records (E0 =
// 4), each group gets the target offset of the first restored record at or
// after its source offset, across the absent offsets; a group at or past
// the end gets the end of the restored data; the record at each committed
// offset is the one the group would read next on the source. A re-run
// produces nothing and commits the same offsets.
func TestRestoreGroupsExact(t *testing.T) {
	brokers := newCluster(t, 2, "dst")
	produce(t, brokers, "dst", 0, "a", "b", "c", "d")
	a := groupsArchive(t)
	cfg := groupsConfig(brokers, a)
	sum, err := mustNew(t, cfg, a, nil).Run(testContext(t), nil)
	if err != nil {
		t.Fatal(err)
	}
	if sum.Records != 10 || sum.Groups != 7 {
		t.Fatalf("summary: %d records, %d groups; want 10 and 7", sum.Records, sum.Groups)
	}
	want := wantGroups(4)
	checkGroups(t, brokers, want)

	// The record at each committed offset is the source's next record.
	recs := readTopic(t, brokers, "dst")
	next := map[string]string{"restored-zero": "v-0", "restored-gap": "v-5", "restored-mid": "v-5", "restored-marker": "v-8"}
	for g, v := range next {
		at := want[g][0]
		if got := string(recs[0][at].Value); got != v {
			t.Errorf("group %s reads %q at dst/0 offset %d, want %q", g, got, at, v)
		}
	}
	if n := int64(len(recs[0])); n != want["restored-end"][0] {
		t.Errorf("restored-end at %d, dst/0 ends at %d", want["restored-end"][0], n)
	}

	// A re-run changes nothing.
	sum, err = mustNew(t, cfg, a, nil).Run(testContext(t), nil)
	if err != nil || sum.Records != 0 || sum.Groups != 7 {
		t.Fatalf("re-run: %+v, %v", sum, err)
	}
	checkGroups(t, brokers, want)
}

// TestRestoreGroupsAfterResume: a restore cancelled mid-way, then re-run
// with --restore-groups, commits the same offsets as a clean restore (the
// markers' E0 and the stream positions do not depend on where it stopped).
func TestRestoreGroupsAfterResume(t *testing.T) {
	held := false
	// The plan opens the 3 index objects and the 3 objects, the run the
	// snapshot, before the restore opens the objects again, one partition
	// after the other (Parallelism 1): dst/0's two objects, then dst/1's.
	// Cancel inside each of them.
	for _, at := range []int64{6 + 1 + 1, 6 + 1 + 2, 6 + 1 + 3} {
		t.Run(fmt.Sprint("cancel at open ", at), func(t *testing.T) {
			brokers := newCluster(t, 2, "dst")
			produce(t, brokers, "dst", 0, "a", "b")
			a := groupsArchive(t)
			cfg := groupsConfig(brokers, a)
			cfg.KafkaOpts = []kgo.Opt{kgo.ProducerLinger(0)}
			cfg.Parallelism = 1
			ctx, cancel := context.WithCancel(testContext(t))
			r, err := New(cfg, &cancelStore{Store: a.store, n: at, cancel: cancel}, nil)
			if err != nil {
				t.Fatal(err)
			}
			if _, err := r.Run(ctx, nil); err == nil {
				t.Fatal("the cancelled run returned no error")
			}
			cancel()
			got := readTopic(t, brokers, "dst")
			n := len(got[0]) - 2 + len(got[1])
			if n > 0 && n < 10 {
				held = true
			}
			t.Logf("cancelled run left %d records of 10 on dst", n)
			for g := range wantGroups(2) {
				if got := committedGroup(t, brokers, g, "dst"); len(got) != 0 {
					t.Fatalf("the cancelled run committed group %s: %v", g, got)
				}
			}
			if _, err := mustNew(t, cfg, a, nil).Run(testContext(t), nil); err != nil {
				t.Fatal(err)
			}
			checkGroups(t, brokers, wantGroups(2))
		})
	}
	if !held {
		t.Fatal("no cancelled run left part of the records: the test showed nothing about resuming")
	}
}

// TestRestoreGroupsRefusesActiveGroup: a target group with a member is
// refused by name before anything is produced or committed.
func TestRestoreGroupsRefusesActiveGroup(t *testing.T) {
	brokers := newCluster(t, 2, "dst")
	member, err := kgo.NewClient(kgo.SeedBrokers(brokers...), kgo.ConsumerGroup("restored-mid"), kgo.ConsumeTopics("dst"))
	if err != nil {
		t.Fatal(err)
	}
	defer member.Close()
	adm := newAdmin(t, brokers)
	deadline := time.Now().Add(20 * time.Second)
	for {
		ctx, cancel := context.WithTimeout(testContext(t), 200*time.Millisecond)
		member.PollFetches(ctx)
		cancel()
		d, err := adm.DescribeGroups(testContext(t), "restored-mid")
		if err == nil && len(d["restored-mid"].Members) > 0 {
			break
		}
		if time.Now().After(deadline) {
			t.Fatal("the member never joined")
		}
	}
	a := groupsArchive(t)
	_, err = mustNew(t, groupsConfig(brokers, a), a, nil).Run(testContext(t), nil)
	if !errors.Is(err, ErrGroupActive) || !strings.Contains(err.Error(), `"restored-mid"`) {
		t.Fatalf("err = %v, want ErrGroupActive naming restored-mid", err)
	}
	if n := len(readTopic(t, brokers, "dst")[0]); n != 0 {
		t.Fatalf("%d records produced before the refusal", n)
	}
	for g := range wantGroups(0) {
		if g == "restored-mid" {
			continue
		}
		if got := committedGroup(t, brokers, g, "dst"); len(got) != 0 {
			t.Fatalf("group %s committed despite the refusal: %v", g, got)
		}
	}
}

// TestRestoreGroupsNeedsSnapshot: without a snapshot the run stops before
// producing, naming the topic and the folder.
func TestRestoreGroupsNeedsSnapshot(t *testing.T) {
	brokers := newCluster(t, 1, "dst")
	a := newArchive(t, format.NewJSON())
	k := a.putRecs("src", 0, "partition=0", 0, 1)
	a.writeIndex("src", 0, 2, indexed{key: k, runs: []index.Run{{First: 0, Last: 1}}})
	_, err := mustNew(t, groupsConfig(brokers, a), a, nil).Run(testContext(t), nil)
	if !errors.Is(err, ErrNoSnapshot) || !strings.Contains(err.Error(), `"src"`) || !strings.Contains(err.Error(), "_kafkas3/snapshots/src/") {
		t.Fatalf("err = %v, want ErrNoSnapshot naming src and its folder", err)
	}
	if n := len(readTopic(t, brokers, "dst")[0]); n != 0 {
		t.Fatalf("%d records produced without a snapshot", n)
	}
}

// TestRestoreGroupsNewestSnapshot: the newest snapshot is the one restored.
func TestRestoreGroupsNewestSnapshot(t *testing.T) {
	brokers := newCluster(t, 2, "dst")
	a := groupsArchive(t)
	a.putGroupSnapshot("src", 999, map[int32]int64{0: 10, 1: 3}, map[string]map[int32]int64{"g-old": {0: 1}})
	key := a.putGroupSnapshot("src", 2000, map[int32]int64{0: 10, 1: 3}, map[string]map[int32]int64{"g-new": {0: 6}})
	sum, err := mustNew(t, groupsConfig(brokers, a), a, nil).Run(testContext(t), nil)
	if err != nil {
		t.Fatal(err)
	}
	if sum.Groups != 1 || sum.GroupOffsets[0].SnapshotKey != key {
		t.Fatalf("restored %d groups from %+v", sum.Groups, sum.GroupOffsets)
	}
	if got := committedGroup(t, brokers, "restored-new", "dst"); !reflect.DeepEqual(got, map[int32]int64{0: 4}) {
		t.Fatalf("restored-new: %v", got)
	}
	if got := committedGroup(t, brokers, "restored-old", "dst"); len(got) != 0 {
		t.Fatalf("an older snapshot's group was restored: %v", got)
	}
}

// TestRestoreGroupsDryRun: the dry run prints, per group and partition,
// "source offset -> target offset": relative to the restore's start
// without the target, absolute from the markers with it.
func TestRestoreGroupsDryRun(t *testing.T) {
	a := groupsArchive(t)
	cfg := groupsConfig(nil, a)
	cfg.DryRun = true
	r := mustNew(t, cfg, a, nil)
	plan, err := r.Plan(testContext(t))
	if err != nil {
		t.Fatal(err)
	}
	gps, err := r.DryRunGroups(testContext(t), nil, plan)
	if err != nil {
		t.Fatal(err)
	}
	var out bytes.Buffer
	if err := WriteGroupsText(&out, gps); err != nil {
		t.Fatal(err)
	}
	for _, line := range []string{
		"groups of src -> dst from snapshot _kafkas3/snapshots/src/00000000000000001000-",
		"g-gap     restored-gap     0          3 -> start+3",
		"g-marker  restored-marker  0          7 -> start+5",
		"g-past    restored-past    0          50 -> start+7",
		"other     other            1          1 -> start+1",
	} {
		if !strings.Contains(out.String(), line) {
			t.Errorf("dry run output lacks %q:\n%s", line, out.String())
		}
	}

	// With the target: a restored dst (E0 = 4 on partition 0) gives
	// absolute offsets.
	brokers := newCluster(t, 2, "dst")
	produce(t, brokers, "dst", 0, "a", "b", "c", "d")
	run := indexedConfig(brokers, a)
	if _, err := mustNew(t, run, a, nil).Run(testContext(t), nil); err != nil {
		t.Fatal(err)
	}
	gps, err = r.DryRunGroups(testContext(t), newAdmin(t, brokers), plan)
	if err != nil {
		t.Fatal(err)
	}
	out.Reset()
	WriteGroupsText(&out, gps)
	for _, line := range []string{"0          3 -> 7", "0          7 -> 9", "0          50 -> 11", "1          1 -> 1"} {
		if !strings.Contains(out.String(), line) {
			t.Errorf("dry run output with the target lacks %q:\n%s", line, out.String())
		}
	}
	if got := committedGroup(t, brokers, "restored-mid", "dst"); len(got) != 0 {
		t.Fatalf("the dry run committed: %v", got)
	}
}

// TestRecordsBefore: the count of restored records below a source offset,
// over segments with holes between them and a cut stream.
func TestRecordsBefore(t *testing.T) {
	pp := &PartitionPlan{segments: []segment{
		{obj: 0, from: 0, to: 3, first: 10}, // 10 11 12
		{obj: 1, from: 2, to: 4, first: 20}, // 20 21 (records 2, 3 of object 1)
		{obj: 0, from: 3, to: 4, first: 25}, // 25
	}}
	for o, want := range map[int64]int64{0: 0, 10: 0, 11: 1, 13: 3, 19: 3, 20: 3, 21: 4, 22: 5, 25: 5, 26: 6, 1 << 40: 6} {
		if got := recordsBefore(pp, o); got != want {
			t.Errorf("recordsBefore(%d) = %d, want %d", o, got, want)
		}
	}
	if got := recordsBefore(&PartitionPlan{}, 5); got != 0 {
		t.Errorf("empty stream: %d", got)
	}
}

// TestGroupRename: whole-name matches are renamed ($0, $1 expand), others
// kept; an empty result and two groups merged into one are refused.
func TestGroupRename(t *testing.T) {
	g, err := newGroupRenamer(regexp.MustCompile(`app-(.*)`), "dr-$1-$0")
	if err != nil {
		t.Fatal(err)
	}
	for in, want := range map[string]string{"app-billing": "dr-billing-app-billing", "xapp-billing": "xapp-billing", "app-": "dr--app-"} {
		if got, err := g.Target(in); err != nil || got != want {
			t.Errorf("Target(%q) = %q, %v; want %q", in, got, err, want)
		}
	}
	empty, _ := newGroupRenamer(regexp.MustCompile(`x`), "")
	if _, err := empty.Target("x"); !errors.Is(err, ErrInvalidConfig) {
		t.Errorf("empty name: %v", err)
	}
	if _, err := newGroupRenamer(regexp.MustCompile(`a`), "$2"); !errors.Is(err, ErrInvalidConfig) {
		t.Errorf("bad reference: %v", err)
	}
	err = checkGroupTargets([]GroupPlan{{Offsets: []GroupOffset{
		{Group: "a", TargetGroup: "z", Target: "dst", Partition: 0},
		{Group: "b", TargetGroup: "z", Target: "dst", Partition: 0},
	}}})
	if !errors.Is(err, ErrInvalidConfig) || !strings.Contains(err.Error(), `"a" and "b"`) {
		t.Errorf("merged groups: %v", err)
	}
}

// TestRestoreGroupsUntil: with --until the groups come from the snapshot
// the cuts come from (the newest at or before it), not the newest one, and
// a group at or past the cut gets the end of the restored prefix, never an
// offset past it.
func TestRestoreGroupsUntil(t *testing.T) {
	brokers := newCluster(t, 2, "dst")
	a := groupsArchive(t) // its snapshot at 1000 holds other groups
	a.putGroupSnapshot("src", 500, map[int32]int64{0: 6, 1: 2}, map[string]map[int32]int64{
		"g-early": {0: 5, 1: 1},
		"g-cut":   {0: 6, 1: 2},
	})
	cfg := groupsConfig(brokers, a)
	cfg.Until = time.UnixMilli(700)
	sum, err := mustNew(t, cfg, a, nil).Run(testContext(t), nil)
	if err != nil {
		t.Fatal(err)
	}
	// dst/0 gets source offsets 0 1 2 5 (below the cut 6), dst/1 0 1.
	if sum.Records != 6 || sum.Groups != 2 {
		t.Fatalf("%d records, %d groups; want 6 and 2", sum.Records, sum.Groups)
	}
	for g, want := range map[string]map[int32]int64{
		"restored-early": {0: 3, 1: 1},
		"restored-cut":   {0: 4, 1: 2},
		"restored-zero":  {},
	} {
		if got := committedGroup(t, brokers, g, "dst"); !reflect.DeepEqual(got, want) {
			t.Errorf("group %s: %v, want %v", g, got, want)
		}
	}
}

// TestRecordsBeforeMatchesBruteForce: the binary search over segments
// counts what walking every offset of the stream counts.
func TestRecordsBeforeMatchesBruteForce(t *testing.T) {
	rng := rand.New(rand.NewPCG(1, 2))
	for round := range 200 {
		var segs []segment
		var offsets []int64
		next := int64(rng.IntN(5))
		for range rng.IntN(8) {
			n := int64(1 + rng.IntN(4))
			segs = append(segs, segment{obj: 0, from: 0, to: n, first: next})
			for i := range n {
				offsets = append(offsets, next+i)
			}
			next += n + int64(rng.IntN(3))
		}
		pp := &PartitionPlan{segments: segs}
		for o := int64(0); o <= next+2; o++ {
			var want int64
			for _, x := range offsets {
				if x < o {
					want++
				}
			}
			if got := recordsBefore(pp, o); got != want {
				t.Fatalf("round %d: segments %+v: recordsBefore(%d) = %d, want %d", round, segs, o, got, want)
			}
		}
	}
}

// TestRestoreGroupsPartitionsWithoutRecords: a partition the archive holds
// no record of (its records all went elsewhere, or it stayed empty) gets the
// target's end offset; a partition the archive does not have at all is
// reported and not committed.
func TestRestoreGroupsPartitionsWithoutRecords(t *testing.T) {
	brokers := newCluster(t, 3, "dst")
	produce(t, brokers, "dst", 1, "x", "y") // dst/1 holds 2 records before the restore
	a := newArchive(t, format.NewJSON())
	k0 := a.putRecs("src", 0, "partition=0", 0, 1, 2)
	a.writeIndex("src", 0, 3, indexed{key: k0, runs: []index.Run{{First: 0, Last: 2}}})
	k2 := a.putRecs("src", 2, "partition=2", 0)
	a.writeIndex("src", 2, 1, indexed{key: k2, runs: []index.Run{{First: 0, Last: 0}}})
	a.putGroupSnapshot("src", 1000, map[int32]int64{0: 3, 1: 0, 2: 1, 3: 4}, map[string]map[int32]int64{
		"g-a": {0: 2, 1: 0, 2: 1, 3: 4},
	})
	cfg := groupsConfig(brokers, a)
	var logs logBuffer
	sum, err := mustNew(t, cfg, a, &logs).Run(testContext(t), nil)
	if err != nil {
		t.Fatal(err)
	}
	if got := committedGroup(t, brokers, "restored-a", "dst"); !reflect.DeepEqual(got, map[int32]int64{0: 2, 1: 2, 2: 1}) {
		t.Fatalf("restored-a: %v, want dst/0 at 2, dst/1 at its end 2, dst/2 at 1, nothing on the partition the archive lacks", got)
	}
	var out bytes.Buffer
	WriteGroupsText(&out, sum.GroupOffsets)
	if !strings.Contains(out.String(), "4 -> not restored: the archive has no partition 3 (it has 3)") ||
		!strings.Contains(logs.String(), "group offset not restored") {
		t.Fatalf("the skipped partition is not reported:\n%s\n%s", out.String(), logs.String())
	}
}
