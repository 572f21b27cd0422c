package restore

import (
	"io"
	"reflect"
	"strings"
	"testing"

	"github.com/kafkas3/kafkas3/format"
	"github.com/kafkas3/kafkas3/index"
)

// lostArchive writes src/0 as the sink does when Kafka deleted offsets
// 10-39 before it read them: an object of offsets 0-9 (commit 10), then one
// of 50-59 whose entry starts its span at 10 and records 10-39 as lost
// (40-49 are absent, compacted), commit 60.
func lostArchive(t *testing.T) *archive {
	t.Helper()
	a := newArchive(t, format.NewJSON())
	k0 := a.putRecs("src", 0, "partition=0", seq(0, 10)...)
	k1 := a.putRecs("src", 0, "partition=0", seq(50, 10)...)
	for _, e := range []index.Entry{
		{Key: k0, Runs: []index.Run{{First: 0, Last: 9}}, From: 0, Commit: 10},
		{Key: k1, Runs: []index.Run{{First: 50, Last: 59}}, From: 10, Commit: 60, Lost: []index.Run{{First: 10, Last: 39}}},
	} {
		e.V, e.Topic, e.Records, e.Objects = index.Version, "src", 10, []index.Object{a.describe(e.Key)}
		b, err := index.Encode([]index.Entry{e})
		if err != nil {
			t.Fatal(err)
		}
		a.putRaw(index.Key(index.DefaultPrefix, "src", 0, e.Commit, ""), func(w io.Writer) { w.Write(b) })
	}
	return a
}

// TestPlanShowsLostNotGaps: offsets the index records as lost before
// archiving are listed by the plan, counted in its total and the run's
// summary, are not gaps, leave the partition complete and do not stop the
// restore, which produces every archived record.
func TestPlanShowsLostNotGaps(t *testing.T) {
	a := lostArchive(t)
	brokers := newCluster(t, 1)
	cfg := indexedConfig(brokers, a)
	cfg.DryRun = true
	r := mustNew(t, cfg, a, nil)
	plan, err := r.Plan(testContext(t))
	if err != nil {
		t.Fatal(err)
	}
	pp := plan.Topics[0].Parts[0]
	if !reflect.DeepEqual(pp.Lost, []index.Run{{First: 10, Last: 39}}) || pp.LostOffsets != 30 || len(pp.Gaps) != 0 ||
		!pp.Complete() || pp.Records != 20 || plan.Topics[0].LostOffsets != 30 {
		t.Fatalf("partition plan: lost %v (%d), gaps %v, complete %v, records %d", pp.Lost, pp.LostOffsets, pp.Gaps, pp.Complete(), pp.Records)
	}
	if err := r.Check(plan); err != nil {
		t.Fatalf("a loss stops the restore: %v", err)
	}
	var text strings.Builder
	if err := plan.WriteText(&text); err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{"records: 20 to restore, 0 duplicates, 0 gaps, 0 damaged objects; 30 offsets lost before archiving (listed below)",
		"lost before archiving: src/0 offsets 10-39 (30): Kafka deleted them before the sink read them; not in the archive, not a gap"} {
		if !strings.Contains(text.String(), want) {
			t.Errorf("plan lacks %q:\n%s", want, text.String())
		}
	}

	cfg.DryRun = false
	log := &logBuffer{}
	sum, err := mustNew(t, cfg, a, log).Run(testContext(t), nil)
	if err != nil || sum.Records != 20 || sum.LostOffsets != 30 || len(sum.Gaps) != 0 || sum.Skipped() ||
		!strings.Contains(sum.String(), "; lost before archiving: 30 offsets") {
		t.Fatalf("restore: %s, %v", sum, err)
	}
	if !strings.Contains(log.String(), "lost before archiving") || !strings.Contains(log.String(), "first_offset=10 last_offset=39 count=30") {
		t.Errorf("log:\n%s", log.String())
	}
	got := readTopic(t, brokers, "dst")[0]
	checkValues(t, "dst/0", got, offsetsRecords(append(seq(0, 10), seq(50, 10)...)...))
}

// TestPlanLostCutByUntil: a --until cut keeps only the lost offsets below
// it: part of the range, or none of it.
func TestPlanLostCutByUntil(t *testing.T) {
	a := lostArchive(t)
	a.putSnapshot("src", 1000, map[int32]int64{0: 20})
	plan, _ := untilPlan(t, a, 1500)
	pp := plan.Topics[0].Parts[0]
	if pp.Cut == nil || pp.Cut.Offset != 20 || !reflect.DeepEqual(pp.Lost, []index.Run{{First: 10, Last: 19}}) ||
		pp.LostOffsets != 10 || plan.Topics[0].LostOffsets != 10 {
		t.Fatalf("cut %+v, lost %v (%d), topic %d", pp.Cut, pp.Lost, pp.LostOffsets, plan.Topics[0].LostOffsets)
	}
	a.putSnapshot("src", 500, map[int32]int64{0: 5})
	plan, _ = untilPlan(t, a, 700)
	if pp := plan.Topics[0].Parts[0]; pp.Cut.Offset != 5 || len(pp.Lost) != 0 || pp.LostOffsets != 0 {
		t.Fatalf("cut %+v, lost %v (%d)", pp.Cut, pp.Lost, pp.LostOffsets)
	}
}
