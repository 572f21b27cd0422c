package restore

import (
	"fmt"
	"math/rand/v2"
	"reflect"
	"slices"
	"testing"

	"github.com/kafkas3/kafkas3/index"
)

// randomRuns returns up to n increasing, disjoint runs from about at,
// small enough to overlap other objects' runs often.
func randomRuns(rng *rand.Rand, at int64, n int) []offsetRun {
	var rs []offsetRun
	for range rng.IntN(n + 1) {
		at += int64(rng.IntN(4)) // 0: adjacent to the previous run
		if len(rs) > 0 && at == rs[len(rs)-1].Last+1 {
			at++ // runs of one object are not adjacent (offsetRuns.add)
		}
		last := at + int64(rng.IntN(5))
		rs = append(rs, offsetRun{at, last})
		at = last + 1
	}
	return rs
}

// randomPlan returns a partition plan of random objects: damaged ones,
// indexed ones, ones whose records carry their offsets and named ones,
// overlapping and out of order, in one of the orders judgeOrder sets.
func randomPlan(rng *rand.Rand) *PartitionPlan {
	pp := &PartitionPlan{Order: []string{OrderOffsets, OrderOneFolder, OrderUnknown}[rng.IntN(3)]}
	for i := range rng.IntN(12) {
		o := Object{Key: fmt.Sprintf("o%d", i), StartOffset: int64(rng.IntN(60)), facts: &objectFacts{}}
		switch rng.IntN(6) {
		case 0:
			o.Damage = fmt.Errorf("%w: object %d", ErrDamagedObject, i)
		case 1, 2:
			o.entry = &index.Entry{Key: o.Key}
			o.facts.offsets = randomRuns(rng, o.StartOffset, 6)
		case 3:
			o.facts.offsets = randomRuns(rng, o.StartOffset, 6)
		default:
			o.facts.records = int64(rng.IntN(8))
		}
		for _, r := range o.facts.offsets {
			o.facts.records += r.len()
		}
		if len(o.facts.offsets) > 0 {
			o.StartOffset = o.facts.offsets[0].First
		}
		pp.Objects = append(pp.Objects, o)
	}
	return pp
}

// clonePlan copies what claim and holeGaps change.
func clonePlan(pp *PartitionPlan) *PartitionPlan {
	c := *pp
	c.Objects = slices.Clone(pp.Objects)
	return &c
}

type claimResult struct {
	Claimed, Assumed []offsetRun
	Damaged          []int
	Unindexed        int
	Segments         []segment
	Records          int64
	Basis            string
	DamagedObjects   []DamagedObject
	Objects          []Object
	Gaps             []Gap
}

func claimWith(pp *PartitionPlan, reference bool) claimResult {
	var r claimResult
	if reference {
		r.Claimed, r.Assumed, r.Damaged, r.Unindexed = pp.claimReference()
		pp.holeGapsReference(r.Claimed, r.Damaged)
	} else {
		r.Claimed, r.Assumed, r.Damaged, r.Unindexed = pp.claim()
		pp.holeGaps(r.Claimed, r.Damaged)
	}
	r.Segments, r.Records, r.Basis, r.DamagedObjects, r.Objects, r.Gaps = pp.segments, pp.Records, pp.Basis, pp.Damaged, pp.Objects, pp.Gaps
	return r
}

// TestClaimMatchesReference compares claim and holeGaps with the quadratic
// algorithms they replaced (claim_reference_test.go) on random partitions:
// the same segments in the same order, runs claimed and assumed, records,
// damaged objects and gaps.
func TestClaimMatchesReference(t *testing.T) {
	rng := rand.New(rand.NewPCG(19, 5))
	for n := range 20000 {
		pp := randomPlan(rng)
		got, want := claimWith(clonePlan(pp), false), claimWith(clonePlan(pp), true)
		if !reflect.DeepEqual(got, want) {
			t.Fatalf("plan %d (order %s):\ngot  %+v\nwant %+v", n, pp.Order, got, want)
		}
		span, spanRef := mergeRuns(append(slices.Clone(got.Claimed), got.Assumed...)), got.Claimed
		for _, r := range got.Assumed {
			spanRef = addRun(spanRef, r)
		}
		if !slices.Equal(span, spanRef) {
			t.Fatalf("plan %d: span %v, want %v", n, span, spanRef)
		}
	}
}

// TestSubtractMatchesReference compares subtract (binary search) with the
// scan it replaced.
func TestSubtractMatchesReference(t *testing.T) {
	rng := rand.New(rand.NewPCG(19, 7))
	for n := range 20000 {
		claimed := randomRuns(rng, int64(rng.IntN(10)), 8)
		first := int64(rng.IntN(50))
		run := offsetRun{first, first + int64(rng.IntN(30))}
		if got, want := subtract(run, claimed), subtractReference(run, claimed); !slices.Equal(got, want) {
			t.Fatalf("case %d: subtract(%v, %v) = %v, want %v", n, run, claimed, got, want)
		}
	}
}

// TestMergeRunsMatchesAddRun compares mergeRuns with adding each run by
// addRun, for runs in any order, overlapping or adjacent.
func TestMergeRunsMatchesAddRun(t *testing.T) {
	rng := rand.New(rand.NewPCG(19, 9))
	for n := range 20000 {
		var rs, want []offsetRun
		for range rng.IntN(10) {
			first := int64(rng.IntN(40))
			r := offsetRun{first, first + int64(rng.IntN(6))}
			rs = append(rs, r)
			want = addRun(want, r)
		}
		if got := mergeRuns(rs); !slices.Equal(got, want) {
			t.Fatalf("case %d: mergeRuns(%v) = %v, want %v", n, rs, got, want)
		}
	}
}

// randomIndexed returns an indexed partition's plan and index: entries of
// random runs, some of them of damaged objects (by key, several entries
// per key at times), a claimed part of what they hold, and missing entries.
func randomIndexed(rng *rand.Rand) (pp *PartitionPlan, ip *index.Partition, claimed []offsetRun, damaged []int, missing []*index.Entry) {
	pp, ip = &PartitionPlan{}, &index.Partition{}
	keys := []string{"a", "b", "c", "d", "e", ""}
	var held []offsetRun
	entry := func() index.Entry {
		e := index.Entry{Key: keys[rng.IntN(len(keys))]}
		for _, r := range randomRuns(rng, int64(rng.IntN(60)), 5) {
			e.Runs = append(e.Runs, index.Run{First: r.First, Last: r.Last})
			held = append(held, r)
		}
		return e
	}
	for range rng.IntN(8) {
		ip.Entries = append(ip.Entries, entry())
	}
	for range rng.IntN(3) {
		e := entry()
		missing = append(missing, &e)
	}
	for i := range rng.IntN(4) {
		pp.Objects = append(pp.Objects, Object{Key: keys[rng.IntN(len(keys))], StartOffset: int64(rng.IntN(70))})
		damaged = append(damaged, i)
	}
	for _, r := range mergeRuns(held) {
		ip.Held = append(ip.Held, index.Run{First: r.First, Last: r.Last})
	}
	for range rng.IntN(12) {
		first := int64(rng.IntN(70))
		claimed = append(claimed, offsetRun{first, first + int64(rng.IntN(6))})
	}
	if rng.IntN(3) == 0 {
		ip.Gaps = []index.Run{{First: 70, Last: 75}}
	}
	return pp, ip, mergeRuns(claimed), damaged, missing
}

// TestIndexGapsMatchesReference compares indexGaps with the scans it
// replaced (claim_reference_test.go) on random indexed partitions.
func TestIndexGapsMatchesReference(t *testing.T) {
	rng := rand.New(rand.NewPCG(19, 11))
	r := &Restorer{}
	for n := range 20000 {
		pp, ip, claimed, damaged, missing := randomIndexed(rng)
		got, want := clonePlan(pp), clonePlan(pp)
		r.indexGaps(got, ip, claimed, damaged, missing)
		r.indexGapsReference(want, ip, claimed, damaged, missing)
		if !reflect.DeepEqual(got, want) {
			t.Fatalf("case %d: gaps\n%v, want\n%v", n, got.Gaps, want.Gaps)
		}
	}
}
