package restore

import (
	"bytes"
	"errors"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/kafkas3/kafkas3/format"
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
	if c := plan.Topics[0].Parts[0].Cut; c.Offset != 1 || c.Exact || c.Late != 1 {
		t.Fatalf("cut %+v", c)
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
