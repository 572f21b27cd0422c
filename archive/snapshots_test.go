package archive

import (
	"context"
	"log/slog"
	"reflect"
	"strings"
	"testing"
	"time"

	"github.com/kafkas3/kafkas3/index"
	"github.com/kafkas3/kafkas3/s3store"
	"github.com/twmb/franz-go/pkg/kadm"
	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kfake"
	"github.com/twmb/franz-go/pkg/kgo"
	"github.com/twmb/franz-go/pkg/kmsg"
)

func newFakeCluster(t *testing.T, partitions int32, topics ...string) (*kfake.Cluster, []string) {
	t.Helper()
	c, err := kfake.NewCluster(kfake.NumBrokers(1), kfake.SeedTopics(partitions, topics...))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(c.Close)
	return c, c.ListenAddrs()
}

// commitGroup commits offsets (partition -> offset) of topic for group.
func commitGroup(t *testing.T, brokers []string, group, topic string, offs map[int32]int64) {
	t.Helper()
	cl, err := kgo.NewClient(kgo.SeedBrokers(brokers...))
	if err != nil {
		t.Fatal(err)
	}
	defer cl.Close()
	os := kadm.Offsets{}
	for p, o := range offs {
		os.Add(kadm.Offset{Topic: topic, Partition: p, At: o, LeaderEpoch: -1})
	}
	if err := kadm.NewClient(cl).CommitAllOffsets(context.Background(), group, os); err != nil {
		t.Fatalf("commit %s: %v", group, err)
	}
}

func snapshotConfig(brokers []string, interval time.Duration, topics ...string) Config {
	cfg := testConfig(brokers, topics...)
	cfg.IndexPrefix = index.DefaultPrefix
	cfg.SnapshotInterval = interval
	return cfg
}

// readSnapshots returns the topic's snapshots in the store, newest first.
func readSnapshots(t *testing.T, st s3store.Store, topic string) []*index.Snapshot {
	t.Helper()
	ctx := context.Background()
	names, err := index.ListSnapshots(ctx, st, index.DefaultPrefix, topic)
	if err != nil {
		t.Fatal(err)
	}
	var out []*index.Snapshot
	for _, n := range names {
		if n.Writer != index.WriterOf("connect-test") {
			t.Fatalf("snapshot %s does not name the sink's writer", n.Key)
		}
		s, err := index.ReadSnapshot(ctx, st, n.Key)
		if err != nil {
			t.Fatal(err)
		}
		out = append(out, s)
	}
	return out
}

// TestSnapshotOnceRecordsGroups: --once writes one snapshot at the end,
// after its final commit: the end offsets and the groups at 0, mid-way and
// at the end; not the sink's own group (connect-test, at the end too) nor
// a restore's marker group. A second run with nothing new writes no
// second, identical snapshot; a moved group gives a new one.
func TestSnapshotOnceRecordsGroups(t *testing.T) {
	_, brokers := newFakeCluster(t, 2, "orders", "other")
	produce(t, brokers, "orders", 2, 0, 10)
	produce(t, brokers, "other", 2, 0, 3)
	commitGroup(t, brokers, "at-zero", "orders", map[int32]int64{0: 0, 1: 0})
	commitGroup(t, brokers, "mid", "orders", map[int32]int64{0: 5})
	commitGroup(t, brokers, "end", "orders", map[int32]int64{0: 10, 1: 10})
	commitGroup(t, brokers, "kafkas3-restore-orders", "orders", map[int32]int64{0: 0, 1: 0})
	commitGroup(t, brokers, "elsewhere", "other", map[int32]int64{0: 1})

	st := s3store.NewMemory()
	before := time.Now().UnixMilli()
	sum := runSink(t, snapshotConfig(brokers, time.Hour, "orders"), st)
	after := time.Now().UnixMilli()
	if sum.Records != 20 || sum.Snapshots != 1 {
		t.Fatalf("summary %+v, want 20 records and 1 snapshot", sum)
	}
	snaps := readSnapshots(t, st, "orders")
	if len(snaps) != 1 {
		t.Fatalf("%d snapshots, want 1", len(snaps))
	}
	s := snaps[0]
	if s.TimeMS < before || s.TimeMS > after {
		t.Fatalf("snapshot time %d outside the run [%d, %d]", s.TimeMS, before, after)
	}
	want := &index.Snapshot{Topic: "orders", TimeMS: s.TimeMS,
		EndOffsets: map[int32]int64{0: 10, 1: 10},
		Groups: map[string]map[int32]int64{
			"at-zero": {0: 0, 1: 0},
			"mid":     {0: 5},
			"end":     {0: 10, 1: 10},
		}}
	if !reflect.DeepEqual(s, want) {
		t.Fatalf("snapshot %+v\nwant     %+v", s, want)
	}
	if got := readSnapshots(t, st, "other"); len(got) != 0 {
		t.Fatalf("a topic the sink does not archive has %d snapshots", len(got))
	}

	// Nothing moved: no second snapshot.
	time.Sleep(5 * time.Millisecond)
	if sum := runSink(t, snapshotConfig(brokers, time.Hour, "orders"), st); sum.Snapshots != 0 {
		t.Fatalf("second run wrote %d snapshots, want 0", sum.Snapshots)
	}
	// A group moved: a new snapshot with it, the old one stays.
	commitGroup(t, brokers, "mid", "orders", map[int32]int64{0: 7, 1: 2})
	time.Sleep(5 * time.Millisecond)
	runSink(t, snapshotConfig(brokers, time.Hour, "orders"), st)
	snaps = readSnapshots(t, st, "orders")
	if len(snaps) != 2 || !reflect.DeepEqual(snaps[0].Groups["mid"], map[int32]int64{0: 7, 1: 2}) ||
		!reflect.DeepEqual(snaps[1].Groups["mid"], map[int32]int64{0: 5}) || snaps[0].TimeMS <= snaps[1].TimeMS {
		t.Fatalf("after moving group mid: %d snapshots %+v", len(snaps), snaps)
	}
}

// TestSnapshotGroupsRegex: groups.regex matches whole names; with topics.regex
// every matching topic gets its snapshot.
func TestSnapshotGroupsRegex(t *testing.T) {
	_, brokers := newFakeCluster(t, 1, "orders", "orders2")
	produce(t, brokers, "orders", 1, 0, 4)
	produce(t, brokers, "orders2", 1, 0, 2)
	for _, g := range []string{"billing", "billing-eu", "reports"} {
		commitGroup(t, brokers, g, "orders", map[int32]int64{0: 1})
		commitGroup(t, brokers, g, "orders2", map[int32]int64{0: 2})
	}
	cfg := snapshotConfig(brokers, time.Hour)
	cfg.Topics, cfg.TopicsRegex = nil, "orders.*"
	cfg.GroupsRegex = "billing|reports-x"
	st := s3store.NewMemory()
	runSink(t, cfg, st)
	for topic, end := range map[string]int64{"orders": 4, "orders2": 2} {
		snaps := readSnapshots(t, st, topic)
		if len(snaps) != 1 {
			t.Fatalf("%s: %d snapshots", topic, len(snaps))
		}
		if got := snaps[0].GroupNames(); !reflect.DeepEqual(got, []string{"billing"}) || snaps[0].EndOffsets[0] != end {
			t.Fatalf("%s: groups %v end %v, want only billing (a whole-name match) and end %d", topic, got, snaps[0].EndOffsets, end)
		}
	}
	cfg.GroupsRegex = "("
	if _, err := New(cfg, st, nil); err == nil || !strings.Contains(err.Error(), "groups.regex") {
		t.Fatalf("a bad groups.regex: %v", err)
	}
}

// TestSnapshotOffWritesNone: an interval of 0, or no index, writes no
// snapshot.
func TestSnapshotOffWritesNone(t *testing.T) {
	_, brokers := newFakeCluster(t, 1, "orders")
	produce(t, brokers, "orders", 1, 0, 4)
	commitGroup(t, brokers, "g", "orders", map[int32]int64{0: 1})
	st := s3store.NewMemory()
	runSink(t, snapshotConfig(brokers, 0, "orders"), st)
	cfg := snapshotConfig(brokers, time.Hour, "orders")
	cfg.IndexPrefix = ""
	cfg.GroupID = "connect-other"
	runSink(t, cfg, st)
	for k := range snapshot(t, st) {
		if strings.Contains(k, "snapshots/") {
			t.Fatalf("snapshot %s written with snapshots off", k)
		}
	}
}

// TestSnapshotIntervalHonoured: a continuous sink snapshots every interval
// (a group that moves shows up within a few intervals), and not before the
// first interval has passed.
func TestSnapshotIntervalHonoured(t *testing.T) {
	_, brokers := newFakeCluster(t, 1, "orders")
	produce(t, brokers, "orders", 1, 0, 6)
	commitGroup(t, brokers, "g", "orders", map[int32]int64{0: 1})
	st := s3store.NewMemory()
	cfg := snapshotConfig(brokers, 150*time.Millisecond, "orders")
	cfg.Once = false
	s, err := New(cfg, st, nil)
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan Summary)
	go func() { sum, _ := s.Run(ctx); done <- sum }()
	defer func() { cancel(); <-done }()

	waitFor := func(what string, ok func([]*index.Snapshot) bool) {
		t.Helper()
		deadline := time.Now().Add(10 * time.Second)
		for time.Now().Before(deadline) {
			if ok(readSnapshots(t, st, "orders")) {
				return
			}
			time.Sleep(20 * time.Millisecond)
		}
		t.Fatalf("no snapshot with %s within 10 s: %+v", what, readSnapshots(t, st, "orders"))
	}
	start := time.Now().UnixMilli()
	waitFor("group g at 1", func(ss []*index.Snapshot) bool { return len(ss) > 0 && ss[0].Groups["g"][0] == 1 })
	if first := readSnapshots(t, st, "orders"); first[len(first)-1].TimeMS < start+150 {
		t.Fatalf("first snapshot at %d, before the first interval after the start %d", first[len(first)-1].TimeMS, start)
	}
	commitGroup(t, brokers, "g", "orders", map[int32]int64{0: 4})
	waitFor("group g at 4", func(ss []*index.Snapshot) bool { return len(ss) > 0 && ss[0].Groups["g"][0] == 4 })
	commitGroup(t, brokers, "h", "orders", map[int32]int64{0: 6})
	waitFor("group h at 6", func(ss []*index.Snapshot) bool { return len(ss) > 0 && ss[0].Groups["h"][0] == 6 })
	// Ticks without a change write nothing new.
	n := len(readSnapshots(t, st, "orders"))
	time.Sleep(600 * time.Millisecond)
	if m := len(readSnapshots(t, st, "orders")); m != n {
		t.Fatalf("%d snapshots after idle ticks, want still %d", m, n)
	}
}

// TestSnapshotMissingACLsWarnOnce: a group whose offsets the sink may not
// read (GROUP_AUTHORIZATION_FAILED) gives one warning for the whole run,
// is left out, and archiving goes on; a cluster that refuses the group
// listing gives one warning and snapshots of the end offsets only.
func TestSnapshotMissingACLsWarnOnce(t *testing.T) {
	for _, tc := range []struct {
		name   string
		fault  kfake.Fault
		warn   string
		groups []string
	}{
		{"offsets of one group", kfake.Fault{Keys: []kmsg.Key{kmsg.OffsetFetch}, Group: "secret", Err: kerr.GroupAuthorizationFailed, Count: -1},
			"cannot read the committed offsets of some consumer groups", []string{"open"}},
		{"group listing", kfake.Fault{Keys: []kmsg.Key{kmsg.ListGroups}, TopLevel: true, Err: kerr.ClusterAuthorizationFailed, Count: -1},
			"cannot list consumer groups", nil},
	} {
		t.Run(tc.name, func(t *testing.T) {
			c, brokers := newFakeCluster(t, 1, "orders")
			produce(t, brokers, "orders", 1, 0, 6)
			commitGroup(t, brokers, "open", "orders", map[int32]int64{0: 2})
			commitGroup(t, brokers, "secret", "orders", map[int32]int64{0: 3})
			c.Fault(tc.fault)
			var logs syncBuffer
			st := s3store.NewMemory()
			cfg := snapshotConfig(brokers, 50*time.Millisecond, "orders")
			cfg.Once = false
			s, err := New(cfg, st, slog.New(slog.NewTextHandler(&logs, nil)))
			if err != nil {
				t.Fatal(err)
			}
			ctx, cancel := context.WithCancel(context.Background())
			done := make(chan error)
			go func() { _, err := s.Run(ctx); done <- err }()
			time.Sleep(time.Second) // about 20 snapshot ticks
			produce(t, brokers, "orders", 1, 6, 3)
			commitGroup(t, brokers, "open", "orders", map[int32]int64{0: 9})
			deadline := time.Now().Add(10 * time.Second)
			for {
				snaps := readSnapshots(t, st, "orders")
				if len(snaps) > 0 && snaps[0].EndOffsets[0] == 9 && (tc.groups == nil || snaps[0].Groups["open"][0] == 9) {
					if got := snaps[0].GroupNames(); !reflect.DeepEqual(got, tc.groups) && !(len(got) == 0 && tc.groups == nil) {
						t.Fatalf("groups %v, want %v", got, tc.groups)
					}
					break
				}
				if time.Now().After(deadline) {
					t.Fatalf("no snapshot of the new offsets: %+v\n%s", snaps, logs.String())
				}
				time.Sleep(20 * time.Millisecond)
			}
			cancel()
			if err := <-done; err != nil {
				t.Fatalf("sink stopped: %v", err)
			}
			if n := strings.Count(logs.String(), tc.warn); n != 1 {
				t.Fatalf("%d warnings %q, want 1:\n%s", n, tc.warn, logs.String())
			}
			// Archiving went on: all 9 records are in the archive.
			var recs int
			for k, v := range snapshot(t, st) {
				if strings.HasPrefix(k, "topics/") {
					recs += strings.Count(v, "\n")
				}
			}
			if recs != 9 {
				t.Fatalf("%d records archived, want 9", recs)
			}
		})
	}
}
