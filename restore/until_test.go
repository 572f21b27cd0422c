package restore

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/kafkas3/kafkas3/format"
	"github.com/kafkas3/kafkas3/index"
	"github.com/kafkas3/kafkas3/partition"
	"github.com/kafkas3/kafkas3/s3store"
	"github.com/twmb/franz-go/pkg/kgo"
)

// stamped makes envelope records of partition p at the given offsets with
// the given timestamps (ms) and type; values "p<p>-<offset>".
func stamped(p int32, tt format.TimestampType, offsets []int64, ts []int64) []*format.Record {
	out := make([]*format.Record, len(offsets))
	for i, off := range offsets {
		out[i] = &format.Record{Partition: p, Offset: off, Timestamp: time.UnixMilli(ts[i]), TimestampType: tt,
			Key: fmt.Appendf(nil, "k%d", off), Value: fmt.Appendf(nil, "p%d-%d", p, off)}
	}
	return out
}

func seq(from, n int64) []int64 {
	out := make([]int64, n)
	for i := range out {
		out[i] = from + int64(i)
	}
	return out
}

func checkKeyValues(t *testing.T, what string, got []*kgo.Record, want []*format.Record) {
	t.Helper()
	if len(got) != len(want) {
		t.Fatalf("%s: %d records, want %d", what, len(got), len(want))
	}
	for i := range want {
		if !bytes.Equal(got[i].Value, want[i].Value) || !bytes.Equal(got[i].Key, want[i].Key) {
			t.Fatalf("%s: record %d is %q=%q, want %q=%q", what, i, got[i].Key, got[i].Value, want[i].Key, want[i].Value)
		}
	}
}

// TestUntilLogAppendTimestamps: an envelope archive of LogAppendTime
// records without snapshots is cut exactly at the first record stamped
// after --until, per partition (also with --timestamps now, which drops
// the timestamps from the produced records but not from the cut). The dry
// run shows each cut; a re-run of the same --until produces nothing; a
// full restore then continues with exactly the rest (the cut stream is a
// prefix of the full one); and a later restore with the earlier --until
// is refused by name (ErrPastCut) before anything is produced.
func TestUntilLogAppendTimestamps(t *testing.T) {
	for _, ts := range []Timestamps{TimestampsOriginal, TimestampsNow} {
		t.Run(string(ts), func(t *testing.T) {
			f := mustFormat(t, format.Config{Kind: format.KindJSON, Envelope: true})
			a := newArchive(t, f)
			p0 := stamped(0, format.TimestampLogAppendTime, seq(0, 10), []int64{0, 1000, 2000, 3000, 4000, 5000, 6000, 7000, 8000, 9000})
			p1 := stamped(1, format.TimestampLogAppendTime, seq(0, 4), []int64{500, 2500, 4500, 6500})
			a.put("src", 0, 0, p0[:3])
			a.put("src", 0, 3, p0[3:7]) // the cut falls inside this object
			a.put("src", 0, 7, p0[7:])  // wholly past the cut
			a.put("src", 1, 0, p1)
			brokers := newCluster(t, 2)
			cfg := baseConfig(brokers, format.NewJSON(), "src")
			cfg.Rename, cfg.CreateTopics, cfg.Timestamps = "dst", true, ts
			cfg.Until = time.UnixMilli(4500)

			dry := cfg
			dry.DryRun = true
			r := mustNew(t, dry, a, nil)
			plan, err := r.Plan(testContext(t))
			if err != nil {
				t.Fatal(err)
			}
			if err := r.Check(plan); err != nil {
				t.Fatal(err)
			}
			for i, want := range []struct{ cut, records, left int64 }{{5, 5, 5}, {3, 3, 1}} {
				pp := plan.Topics[0].Parts[i]
				c := pp.Cut
				if c == nil || c.Offset != want.cut || pp.Records != want.records || c.LeftOut != want.left || !c.Exact || c.Basis != CutTimestamps {
					t.Fatalf("partition %d: cut %+v records %d", i, c, pp.Records)
				}
			}
			var text strings.Builder
			if err := plan.WriteText(&text); err != nil {
				t.Fatal(err)
			}
			for _, want := range []string{"point in time: --until 1970-01-01T00:00:04.5Z", "src/0 5 5 5 record timestamps, exact",
				"src/1 3 3 1 record timestamps, exact"} {
				if !strings.Contains(squash(text.String()), want) {
					t.Errorf("dry run lacks %q:\n%s", want, text.String())
				}
			}

			sum, err := mustNew(t, cfg, a, nil).Run(testContext(t), nil)
			if err != nil {
				t.Fatal(err)
			}
			if sum.Records != 8 || sum.PastCut != 6 || !strings.Contains(sum.String(), "--until 1970-01-01T00:00:04.5Z: 6 records past the cut left out") {
				t.Fatalf("summary %s", sum)
			}
			got := readTopic(t, brokers, "dst")
			checkKeyValues(t, "p0", got[0], p0[:5])
			checkKeyValues(t, "p1", got[1], p1[:3])
			if ts == TimestampsOriginal && got[0][4].Timestamp.UnixMilli() != 4000 {
				t.Errorf("timestamp %v", got[0][4].Timestamp)
			}

			sum, err = mustNew(t, cfg, a, nil).Run(testContext(t), nil)
			if err != nil || sum.Records != 0 || sum.AlreadyPresent != 8 {
				t.Fatalf("re-run of the same --until: %s, %v", sum, err)
			}

			full := cfg
			full.Until = time.Time{}
			sum, err = mustNew(t, full, a, nil).Run(testContext(t), nil)
			if err != nil || sum.Records != 6 || sum.AlreadyPresent != 8 {
				t.Fatalf("full restore after --until: %s, %v", sum, err)
			}
			got = readTopic(t, brokers, "dst")
			checkKeyValues(t, "p0", got[0], p0)
			checkKeyValues(t, "p1", got[1], p1)

			sum, err = mustNew(t, cfg, a, nil).Run(testContext(t), nil)
			if !errors.Is(err, ErrPastCut) || sum.Records != 0 {
				t.Fatalf("--until after a full restore: %s, %v", sum, err)
			}
			for _, want := range []string{`dst/0 holds 10 records of this restore`, "cut at source offset 5 lets 5 through", `"kafkas3-restore-dst"`} {
				if !strings.Contains(err.Error(), want) {
					t.Errorf("error lacks %q: %v", want, err)
				}
			}
			if n := len(readTopic(t, brokers, "dst")[0]); n != 10 {
				t.Fatalf("target changed: %d records", n)
			}
		})
	}
}

// TestUntilCreateTimeBestEffort: CreateTime stamps out of offset order
// give a best-effort cut at the first record stamped after --until; the
// plan says so and counts the later records stamped before it (left out).
func TestUntilCreateTimeBestEffort(t *testing.T) {
	f := mustFormat(t, format.Config{Kind: format.KindJSON, Envelope: true})
	a := newArchive(t, f)
	recs := stamped(0, format.TimestampCreate, seq(0, 5), []int64{1000, 3000, 2000, 5000, 1500})
	a.put("src", 0, 0, recs)
	brokers := newCluster(t, 1)
	cfg := baseConfig(brokers, format.NewJSON(), "src")
	cfg.Rename, cfg.CreateTopics, cfg.Until = "dst", true, time.UnixMilli(2500)
	r := mustNew(t, cfg, a, nil)
	plan, err := r.Plan(testContext(t))
	if err != nil {
		t.Fatal(err)
	}
	c := plan.Topics[0].Parts[0].Cut
	if c.Offset != 1 || c.Exact || c.Late != 2 || c.LeftOut != 4 {
		t.Fatalf("cut %+v", c)
	}
	if s := c.String(); !strings.Contains(s, "best effort (CreateTime: 2 later records stamped at or before --until left out)") {
		t.Fatalf("cut text %q", s)
	}
	sum, err := r.Run(testContext(t), nil)
	if err != nil || sum.Records != 1 {
		t.Fatalf("%s, %v", sum, err)
	}
	checkKeyValues(t, "p0", readTopic(t, brokers, "dst")[0], recs[:1])
}

// TestUntilLogAppendOutOfOrderIsNotExact: a LogAppendTime partition whose
// stamps go backwards (a broker clock step) is not called exact.
func TestUntilLogAppendOutOfOrderIsNotExact(t *testing.T) {
	a := newArchive(t, mustFormat(t, format.Config{Kind: format.KindJSON, Envelope: true}))
	a.put("src", 0, 0, stamped(0, format.TimestampLogAppendTime, seq(0, 3), []int64{1000, 3000, 2000}))
	cfg := baseConfig(nil, format.NewJSON(), "src")
	cfg.DryRun, cfg.Until = true, time.UnixMilli(2500)
	plan, err := mustNew(t, cfg, a, nil).Plan(testContext(t))
	if err != nil {
		t.Fatal(err)
	}
	if c := plan.Topics[0].Parts[0].Cut; c.Offset != 1 || c.Exact || c.Late != 1 ||
		!strings.Contains(c.String(), "best effort (LogAppendTime out of offset order: 1 later records stamped at or before --until left out)") {
		t.Fatalf("cut %+v: %s", c, c)
	}
}

// TestUntilRefusedWithoutTimestamps: an archive in Confluent's layout
// (plain values, no index, no snapshots) cannot say what the cluster held
// at a time: the plan shows the refusal and Check stops the restore with
// ErrNoPointInTime naming the partition and object, before anything is
// produced.
func TestUntilRefusedWithoutTimestamps(t *testing.T) {
	a := newArchive(t, format.NewJSON())
	a.put("src", 0, 0, values("v", 0, 3))
	brokers := newCluster(t, 1)
	cfg := baseConfig(brokers, format.NewJSON(), "src")
	cfg.Rename, cfg.CreateTopics, cfg.Until = "dst", true, time.UnixMilli(2500)
	r := mustNew(t, cfg, a, nil)
	plan, err := r.Plan(testContext(t))
	if err != nil {
		t.Fatal(err)
	}
	var text strings.Builder
	plan.WriteText(&text)
	if !strings.Contains(squash(text.String()), "src/0 - - - REFUSED: no snapshot at or before 1970-01-01T00:00:02.5Z") {
		t.Errorf("dry run:\n%s", text.String())
	}
	err = r.Check(plan)
	if !errors.Is(err, ErrNoPointInTime) || !strings.Contains(err.Error(), `src/0: no snapshot at or before`) ||
		!strings.Contains(err.Error(), `"topics/src/partition=0/src+0+0000000000.json" holds records without their own timestamps`) {
		t.Fatalf("check: %v", err)
	}
	sum, err := r.Run(testContext(t), nil)
	if !errors.Is(err, ErrNoPointInTime) || sum.Records != 0 {
		t.Fatalf("run: %s, %v", sum, err)
	}
}

// TestUntilWithFollowRefused: --until and --follow contradict each other.
func TestUntilWithFollowRefused(t *testing.T) {
	cfg := baseConfig([]string{"localhost:1"}, format.NewJSON(), "src")
	cfg.Follow, cfg.Until = true, time.UnixMilli(1)
	if _, err := New(cfg, newArchive(t, format.NewJSON()).store, nil); !errors.Is(err, ErrInvalidConfig) || !strings.Contains(err.Error(), "--until") {
		t.Fatalf("New: %v", err)
	}
}

// squash collapses runs of spaces (tabwriter columns) into one.
func squash(s string) string {
	for strings.Contains(s, "  ") {
		s = strings.ReplaceAll(s, "  ", " ")
	}
	return s
}

// putSnapshot writes the snapshot of topic at timeMS with the given end
// offsets (and a group, so the seam can be checked), as the sink does.
func (a *archive) putSnapshot(topic string, timeMS int64, ends map[int32]int64) string {
	a.t.Helper()
	groups := map[string]map[int32]int64{"app": {}}
	for p, e := range ends {
		groups["app"][p] = e / 2
	}
	b, err := index.EncodeSnapshot(&index.Snapshot{Topic: topic, TimeMS: timeMS, EndOffsets: ends, Groups: groups})
	if err != nil {
		a.t.Fatal(err)
	}
	key := index.SnapshotKey(index.DefaultPrefix, topic, timeMS, "0123456789ab")
	a.putRaw(key, func(w io.Writer) { w.Write(b) })
	return key
}

// putIndexed writes one object of topic/p with recs (their Offset and
// Timestamp set) and its index entry: runs from the offsets, min_ts and
// max_ts from the timestamps, the envelope flag from the format.
func (a *archive) putIndexed(topic string, p int32, recs []*format.Record, commit int64, envelope bool) {
	a.t.Helper()
	key := a.put(topic, p, recs[0].Offset, recs)
	e := index.Entry{V: index.Version, Topic: topic, Partition: p, Key: key, Objects: []index.Object{a.describe(key)},
		Records: int64(len(recs)), From: recs[0].Offset, Commit: commit, Envelope: envelope,
		MinTS: recs[0].Timestamp.UnixMilli(), MaxTS: recs[0].Timestamp.UnixMilli()}
	var runs offsetRuns
	for _, r := range recs {
		runs.add(r.Offset)
		e.MinTS, e.MaxTS = min(e.MinTS, r.Timestamp.UnixMilli()), max(e.MaxTS, r.Timestamp.UnixMilli())
	}
	for _, r := range runs.runs {
		e.Runs = append(e.Runs, index.Run{First: r.First, Last: r.Last})
	}
	b, err := index.Encode([]index.Entry{e})
	if err != nil {
		a.t.Fatal(err)
	}
	a.putRaw(index.Key(index.DefaultPrefix, topic, p, commit, ""), func(w io.Writer) { w.Write(b) })
}

// untilPlan plans a dry run of topic src at until.
func untilPlan(t *testing.T, a *archive, until int64) (*Plan, *Restorer) {
	t.Helper()
	cfg := baseConfig(nil, format.NewJSON(), "src")
	cfg.DryRun, cfg.IndexPrefix, cfg.Until = true, index.DefaultPrefix, time.UnixMilli(until)
	r := mustNew(t, cfg, a, nil)
	plan, err := r.Plan(testContext(t))
	if err != nil {
		t.Fatal(err)
	}
	return plan, r
}

// TestUntilSnapshotCut: an indexed archive of plain values (no record
// timestamps) is cut at the end offsets of the newest snapshot at or
// before --until, the same snapshot for every partition of the topic; the
// restore produces exactly the records below the cuts, the plan names the
// snapshot, and UntilSnapshot exposes it (with its group offsets) for
// --restore-groups. A partition the snapshot shows with records and the
// archive holds nothing of is named in the plan.
func TestUntilSnapshotCut(t *testing.T) {
	a := newArchive(t, format.NewJSON())
	p0 := stamped(0, format.TimestampCreate, seq(0, 10), seq(1000, 10))
	p1 := stamped(1, format.TimestampCreate, seq(0, 6), seq(1000, 6))
	for _, r := range append(append([]*format.Record{}, p0...), p1...) {
		r.Timestamp, r.Offset, r.Partition = time.Time{}, 0, 0 // plain values: nothing but the value
	}
	a.putIndexed("src", 0, stampedAt(p0[:5], 0, 1000), 5, false)
	a.putIndexed("src", 0, stampedAt(p0[5:], 5, 1005), 10, false)
	a.putIndexed("src", 1, stampedAt(p1, 0, 1000), 6, false)
	a.putSnapshot("src", 1000, map[int32]int64{0: 3, 1: 2})
	key2000 := a.putSnapshot("src", 2000, map[int32]int64{0: 7, 1: 6, 2: 4, 3: 0}) // nothing of 2 was archived; 3 is empty
	a.putSnapshot("src", 3000, map[int32]int64{0: 10, 1: 6})

	plan, _ := untilPlan(t, a, 2500)
	for i, want := range []int64{7, 6} {
		pp := plan.Topics[0].Parts[i]
		if c := pp.Cut; c.Offset != want || c.Basis != CutSnapshot || c.SnapshotKey != key2000 || c.Exact || pp.Records != want {
			t.Fatalf("partition %d: cut %+v, %d records", i, c, pp.Records)
		}
	}
	snap, key := plan.Topics[0].UntilSnapshot()
	if key != key2000 || snap == nil || snap.TimeMS != 2000 || snap.Groups["app"][0] != 3 {
		t.Fatalf("UntilSnapshot: %q %+v", key, snap)
	}
	if u := plan.Topics[0].UntilUnarchived; len(u) != 1 || u[0] != (PartitionEnd{Partition: 2, End: 4}) {
		t.Fatalf("unarchived: %v", u)
	}
	var text strings.Builder
	plan.WriteText(&text)
	for _, want := range []string{"src/0 7 7 3 snapshot at 1970-01-01T00:00:02Z (" + key2000 + "), precision: the snapshot interval",
		"not archived: src/2 ended at offset 4 in the snapshot the cuts come from; the archive holds none of its records"} {
		if !strings.Contains(squash(text.String()), want) {
			t.Errorf("dry run lacks %q:\n%s", want, text.String())
		}
	}

	brokers := newCluster(t, 2)
	cfg := indexedConfig(brokers, a)
	cfg.Until = time.UnixMilli(2500)
	sum, err := mustNew(t, cfg, a, nil).Run(testContext(t), nil)
	if err != nil || sum.Records != 13 || sum.PastCut != 3 {
		t.Fatalf("%s, %v", sum, err)
	}
	got := readTopic(t, brokers, "dst")
	checkValues(t, "p0", got[0], p0[:7])
	checkValues(t, "p1", got[1], p1)

	// At exactly a snapshot's time, that snapshot is taken.
	if plan, _ := untilPlan(t, a, 1000); plan.Topics[0].Parts[0].Cut.Offset != 3 {
		t.Fatalf("at 1000: %+v", plan.Topics[0].Parts[0].Cut)
	}
}

// stampedAt gives recs offsets from `from` and timestamps from ts (ms),
// one apart, as the sink's index records them; the objects stay plain.
func stampedAt(recs []*format.Record, from, ts int64) []*format.Record {
	out := make([]*format.Record, len(recs))
	for i, r := range recs {
		c := *r
		c.Offset, c.Timestamp = from+int64(i), time.UnixMilli(ts+int64(i))
		out[i] = &c
	}
	return out
}

// TestUntilSnapshotThenLogAppendTime: with LogAppendTime envelope records
// the snapshot's cut is refined by the timestamps (exact), never below the
// snapshot's end offset (it saw those records in the cluster) and never
// above the end offset of the first snapshot after --until.
func TestUntilSnapshotThenLogAppendTime(t *testing.T) {
	for _, tc := range []struct {
		name        string
		until       int64
		snaps       map[int64]int64 // time -> end offset of partition 0
		cut         int64
		basis, note string
	}{
		{"refined", 6500, map[int64]int64{4200: 4, 8000: 8}, 7, CutSnapshotTimestamps, ""},
		{"raised to the snapshot", 4500, map[int64]int64{4200: 6}, 6, CutSnapshotTimestamps, "raised to the snapshot's end offset"},
		{"lowered to the next snapshot", 6500, map[int64]int64{4200: 4, 6600: 6}, 6, CutSnapshotTimestamps, "lowered to the end offset of the first snapshot after --until"},
		{"next snapshot only", 6500, map[int64]int64{6600: 6}, 6, CutTimestamps, "lowered"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			a := newArchive(t, mustFormat(t, format.Config{Kind: format.KindJSON, Envelope: true}))
			recs := stamped(0, format.TimestampLogAppendTime, seq(0, 10), []int64{0, 1000, 2000, 3000, 4000, 5000, 6000, 7000, 8000, 9000})
			a.putIndexed("src", 0, recs[:5], 5, true)
			a.putIndexed("src", 0, recs[5:], 10, true)
			for ts, end := range tc.snaps {
				a.putSnapshot("src", ts, map[int32]int64{0: end})
			}
			plan, r := untilPlan(t, a, tc.until)
			if err := r.Check(plan); err != nil {
				t.Fatal(err)
			}
			c := plan.Topics[0].Parts[0].Cut
			if c.Offset != tc.cut || c.Basis != tc.basis || !c.Exact || !strings.Contains(c.Note, tc.note) || plan.Topics[0].Parts[0].Records != tc.cut {
				t.Fatalf("cut %+v", c)
			}
		})
	}
}

// TestUntilSnapshotCreateTimeNotRefined: CreateTime stamps do not refine
// a snapshot's cut (they need not follow offsets).
func TestUntilSnapshotCreateTimeNotRefined(t *testing.T) {
	a := newArchive(t, mustFormat(t, format.Config{Kind: format.KindJSON, Envelope: true}))
	a.putIndexed("src", 0, stamped(0, format.TimestampCreate, seq(0, 6), seq(0, 6)), 6, true)
	a.putSnapshot("src", 3, map[int32]int64{0: 2})
	plan, _ := untilPlan(t, a, 4)
	if c := plan.Topics[0].Parts[0].Cut; c.Offset != 2 || c.Basis != CutSnapshot || c.Exact {
		t.Fatalf("cut %+v", c)
	}
}

// TestUntilSnapshotPastTheArchive: a snapshot whose end offset lies past
// everything the archive index accounts for (the sink stopped before
// archiving it) leaves a gap that stops the restore, unless --allow-gaps.
func TestUntilSnapshotPastTheArchive(t *testing.T) {
	a := newArchive(t, format.NewJSON())
	a.putIndexed("src", 0, stampedAt(values("v", 0, 4), 0, 100), 4, false)
	a.putSnapshot("src", 200, map[int32]int64{0: 6})
	plan, r := untilPlan(t, a, 300)
	pp := plan.Topics[0].Parts[0]
	if pp.Cut.Offset != 6 || len(pp.Gaps) != 1 || pp.Gaps[0].First != 4 || pp.Gaps[0].Last != 5 || !pp.Gaps[0].Unaccounted {
		t.Fatalf("cut %+v gaps %v", pp.Cut, pp.Gaps)
	}
	if err := r.Check(plan); !errors.Is(err, ErrGaps) || !strings.Contains(err.Error(), "src/0 offsets 4..5") {
		t.Fatalf("check: %v", err)
	}
}

// TestUntilBeforeTheFirstSnapshot: without a snapshot at or before
// --until, plain values are refused when an object straddles --until
// (its index time range holds it), and cut by the index time ranges
// (best effort) when none does; either way the first snapshot after
// --until bounds the cut.
func TestUntilBeforeTheFirstSnapshot(t *testing.T) {
	a := newArchive(t, format.NewJSON())
	a.putIndexed("src", 0, stampedAt(values("v", 0, 4), 0, 100), 4, false) // 100..103
	a.putIndexed("src", 0, stampedAt(values("v", 4, 4), 4, 200), 8, false) // 200..203
	a.putSnapshot("src", 500, map[int32]int64{0: 8})

	plan, r := untilPlan(t, a, 102)
	if err := r.Check(plan); !errors.Is(err, ErrNoPointInTime) || !strings.Contains(err.Error(), "src+0+0000000000.json") {
		t.Fatalf("straddling object: %v", err)
	}
	plan, r = untilPlan(t, a, 150)
	if err := r.Check(plan); err != nil {
		t.Fatal(err)
	}
	if c := plan.Topics[0].Parts[0].Cut; c.Offset != 4 || c.Exact || c.Basis != CutTimestamps || !strings.Contains(c.Note, "min_ts, max_ts") ||
		!strings.Contains(c.String(), "best effort (no record timestamps: 0 later records") {
		t.Fatalf("cut %+v: %s", c, c)
	}
}

// TestUntilDamagePastTheCut: a damaged object wholly past the cut does
// not stop an --until restore (its records are not restored anyway); the
// same archive without --until is refused.
func TestUntilDamagePastTheCut(t *testing.T) {
	a := newArchive(t, format.NewJSON())
	a.putIndexed("src", 0, stampedAt(values("v", 0, 5), 0, 100), 5, false)
	a.putIndexed("src", 0, stampedAt(values("v", 5, 5), 5, 200), 10, false)
	key := a.keys.ObjectKey(partition.ObjectName{Topic: "src", Encoded: "partition=0", Partition: 0, StartOffset: 5, Ext: ".json"})
	a.putRaw(key, func(w io.Writer) { io.WriteString(w, "\"v-5\"\n\"v-6\"\n\"v-7\"\n\"v-8\"\n\"v-X\"\n") }) // same size, other bytes
	a.putSnapshot("src", 150, map[int32]int64{0: 5})
	plan, r := untilPlan(t, a, 160)
	if err := r.Check(plan); err != nil {
		t.Fatalf("--until: %v", err)
	}
	if pp := plan.Topics[0].Parts[0]; pp.Records != 5 || len(pp.Damaged) != 0 || len(pp.Gaps) != 0 {
		t.Fatalf("partition: %d records, damaged %v, gaps %v", pp.Records, pp.Damaged, pp.Gaps)
	}
	full := baseConfig(nil, format.NewJSON(), "src")
	full.DryRun, full.IndexPrefix = true, index.DefaultPrefix
	r = mustNew(t, full, a, nil)
	plan, err := r.Plan(testContext(t))
	if err != nil {
		t.Fatal(err)
	}
	if err := r.Check(plan); !errors.Is(err, ErrDamagedObject) {
		t.Fatalf("without --until: %v", err)
	}
}

// openCounter counts the opens of each key.
type openCounter struct {
	s3store.Store
	mu     sync.Mutex
	opened map[string]int
}

func (c *openCounter) Open(ctx context.Context, key string) (io.ReadCloser, error) {
	c.mu.Lock()
	c.opened[key]++
	c.mu.Unlock()
	return c.Store.Open(ctx, key)
}

// TestUntilSkipsObjectsPastTheCut: objects whose index entry shows them
// wholly past any cut (min_ts after --until, first offset at or after the
// bound) are not read at all, by the plan nor the restore; the dry run
// counts them; the records before the cut are restored exactly. An object
// whose first records are stamped after --until but that starts below the
// snapshot's end offset is read (it is restored up to the cut).
func TestUntilSkipsObjectsPastTheCut(t *testing.T) {
	a := newArchive(t, mustFormat(t, format.Config{Kind: format.KindJSON, Envelope: true}))
	recs := stamped(0, format.TimestampLogAppendTime, seq(0, 12), []int64{0, 1000, 2000, 3000, 4000, 5000, 6000, 7000, 8000, 9000, 10000, 11000})
	a.putIndexed("src", 0, recs[:4], 4, true)  // 0..3000
	a.putIndexed("src", 0, recs[4:8], 8, true) // 4000..7000: starts after --until, below the snapshot's end
	a.putIndexed("src", 0, recs[8:], 12, true) // 8000..11000: wholly past
	past := a.keys.ObjectKey(partition.ObjectName{Topic: "src", Encoded: "partition=0", Partition: 0, StartOffset: 8, Ext: ".json"})
	middle := a.keys.ObjectKey(partition.ObjectName{Topic: "src", Encoded: "partition=0", Partition: 0, StartOffset: 4, Ext: ".json"})
	a.putSnapshot("src", 3500, map[int32]int64{0: 6}) // the sink saw 4 and 5 at 3.5 s (the broker's clock is behind)

	counter := &openCounter{Store: a.store, opened: map[string]int{}}
	brokers := newCluster(t, 1)
	cfg := indexedConfig(brokers, a)
	cfg.Until, cfg.Format = time.UnixMilli(3500), format.NewJSON()
	r, err := New(cfg, counter, nil)
	if err != nil {
		t.Fatal(err)
	}
	sum, err := r.Run(testContext(t), nil)
	if err != nil || sum.Records != 6 || sum.PastCut != 6 {
		t.Fatalf("%s, %v", sum, err)
	}
	if counter.opened[past] != 0 || counter.opened[middle] != 2 {
		t.Fatalf("opens: %v", counter.opened)
	}
	checkKeyValues(t, "p0", readTopic(t, brokers, "dst")[0], recs[:6])

	plan, _ := untilPlan(t, a, 3500)
	c := plan.Topics[0].Parts[0].Cut
	if c.Offset != 6 || c.Unread != 1 || !c.Exact || !strings.Contains(c.String(), "1 objects wholly past the cut not read (archive index)") {
		t.Fatalf("cut %+v: %s", c, c)
	}
}

// TestUntilCutAcrossAbsentOffsets: offsets compaction or transaction
// markers left out do not shift the cut: a snapshot end offset inside a
// hole, or between two runs of one object, restores exactly the records
// below it.
func TestUntilCutAcrossAbsentOffsets(t *testing.T) {
	offsets := []int64{0, 1, 2, 5, 6, 7, 9}
	recs := make([]*format.Record, len(offsets))
	for i, o := range offsets {
		recs[i] = &format.Record{Offset: o, Timestamp: time.UnixMilli(100 + o), Value: fmt.Appendf(nil, "v-%d", o)}
	}
	for _, tc := range []struct {
		end  int64
		want int
	}{{4, 3}, {6, 4}, {9, 6}, {10, 7}, {0, 0}} {
		t.Run(fmt.Sprint(tc.end), func(t *testing.T) {
			a := newArchive(t, format.NewJSON())
			a.putIndexed("src", 0, recs[:5], 7, false) // runs [0,2] [5,6]
			a.putIndexed("src", 0, recs[5:], 10, false)
			a.putSnapshot("src", 500, map[int32]int64{0: tc.end})
			brokers := newCluster(t, 1)
			cfg := indexedConfig(brokers, a)
			cfg.Until = time.UnixMilli(500)
			sum, err := mustNew(t, cfg, a, nil).Run(testContext(t), nil)
			if err != nil || sum.Records != int64(tc.want) || sum.PastCut != int64(len(recs)-tc.want) {
				t.Fatalf("%s, %v", sum, err)
			}
			if tc.want > 0 {
				checkValues(t, "p0", readTopic(t, brokers, "dst")[0], recs[:tc.want])
			}
		})
	}
}

// TestUntilDamagedObjectAfterUntil: a damaged object whose index entry
// says its records come after --until still bounds the timestamp cut, so
// with --allow-gaps the restore stops before it (its gap is past the cut
// and dropped), not after it.
func TestUntilDamagedObjectAfterUntil(t *testing.T) {
	a := newArchive(t, mustFormat(t, format.Config{Kind: format.KindJSON, Envelope: true}))
	recs := stamped(0, format.TimestampLogAppendTime, seq(0, 9), []int64{0, 1000, 2000, 3000, 4000, 5000, 6000, 7000, 8000})
	a.putIndexed("src", 0, recs[:3], 3, true)
	a.putIndexed("src", 0, recs[3:6], 6, true) // 3000..5000, damaged below
	a.putIndexed("src", 0, recs[6:], 9, true)
	key := a.keys.ObjectKey(partition.ObjectName{Topic: "src", Encoded: "partition=0", Partition: 0, StartOffset: 3, Ext: ".json"})
	a.putRaw(key, func(w io.Writer) { w.Write([]byte("truncated")) }) // another size: read, and found damaged
	plan, r := untilPlan(t, a, 2500)
	pp := plan.Topics[0].Parts[0]
	if pp.Cut.Offset != 3 || pp.Records != 3 || len(pp.Gaps) != 0 || len(pp.Damaged) != 0 {
		t.Fatalf("cut %+v, %d records, gaps %v, damaged %v", pp.Cut, pp.Records, pp.Gaps, pp.Damaged)
	}
	if err := r.Check(plan); err != nil {
		t.Fatal(err)
	}
}
