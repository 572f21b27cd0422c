package restore

import (
	"fmt"
	"testing"

	"github.com/kafkas3/kafkas3/index"
)

// compactedPartition builds, in memory, the plan of one indexed partition
// of a compacted topic: objects of perObject records each, every record a
// single-offset run with a hole after it (offsets 0, 2, 4, ...), n runs in
// all, and the index's view of it.
func compactedPartition(n, perObject int) (*PartitionPlan, *index.Partition) {
	var entries []index.Entry
	for first := 0; first < n; first += perObject {
		e := index.Entry{Topic: "t", Key: fmt.Sprintf("t/0/%020d", 2*first), From: int64(2 * first)}
		for k := first; k < min(first+perObject, n); k++ {
			e.Runs = append(e.Runs, index.Run{First: int64(2 * k), Last: int64(2 * k)})
		}
		e.Records = int64(len(e.Runs))
		e.Commit = e.Last() + 2
		entries = append(entries, e)
	}
	ip := index.Analyze(entries)[0]
	pp := &PartitionPlan{}
	for i := range ip.Entries {
		e := &ip.Entries[i]
		o := Object{Key: e.Key, StartOffset: e.First(), entry: e, facts: &objectFacts{}}
		o.facts.records = e.Records
		for _, r := range e.Runs {
			o.facts.offsets = append(o.facts.offsets, offsetRun{r.First, r.Last})
		}
		pp.Objects = append(pp.Objects, o)
	}
	return pp, &ip
}

// BenchmarkPlanCompactedDamaged is BenchmarkPlanCompacted with one object
// in ten damaged: its records are gaps, cut along its entry's runs.
func BenchmarkPlanCompactedDamaged(b *testing.B) {
	for _, n := range []int{20_000, 200_000, 1_000_000} {
		if testing.Short() && n > 20_000 {
			continue
		}
		b.Run(fmt.Sprintf("n=%d", n), func(b *testing.B) {
			pp, ip := compactedPartition(n, 100)
			for i := 0; i < len(pp.Objects); i += 10 {
				pp.Objects[i].Damage = ErrDamagedObject
			}
			r := &Restorer{}
			b.ReportAllocs()
			b.ResetTimer()
			for range b.N {
				pp.resetPlan()
				r.planPartition(pp, ip, nil)
			}
			b.StopTimer()
			if lost := (n + 9) / 10; len(pp.Gaps) < lost/100 || pp.Records+int64(lost) < int64(n) {
				b.Fatalf("records %d, gaps %d", pp.Records, len(pp.Gaps))
			}
		})
	}
}

// resetPlan clears what planPartition sets, so a plan can be made again.
func (pp *PartitionPlan) resetPlan() {
	pp.segments, pp.Gaps, pp.Damaged, pp.Lost = nil, nil, nil, nil
	pp.Records, pp.Duplicates = 0, 0
}

// BenchmarkPlanCompacted plans a compacted partition of n single-offset
// runs (planPartition: claim, the index gaps). The 1,000,000 case runs
// with -bench 'PlanCompacted/n=1000000'; -short keeps to 20,000.
func BenchmarkPlanCompacted(b *testing.B) {
	for _, n := range []int{20_000, 200_000, 1_000_000} {
		if testing.Short() && n > 20_000 {
			continue
		}
		b.Run(fmt.Sprintf("n=%d", n), func(b *testing.B) {
			pp, ip := compactedPartition(n, 100)
			r := &Restorer{}
			b.ReportAllocs()
			b.ResetTimer()
			for range b.N {
				pp.resetPlan()
				r.planPartition(pp, ip, nil)
			}
			b.StopTimer()
			if pp.Records != int64(n) || len(pp.segments) != n || len(pp.Gaps) != 0 {
				b.Fatalf("records %d, segments %d, gaps %d; want %d, %d, 0", pp.Records, len(pp.segments), len(pp.Gaps), n, n)
			}
		})
	}
}
