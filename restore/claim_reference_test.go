package restore

// The algorithms claim, holeGaps and subtract replaced (quadratic in the
// runs of a partition), kept as the reference the new ones are compared
// with on random inputs (claim_test.go).

import "sort"

// claimReference is claim before firstClaims: each run subtracted from,
// then added to, every run claimed so far.
func (pp *PartitionPlan) claimReference() (claimed, assumed []offsetRun, damaged []int, unindexed int) {
	for i := range pp.Objects {
		o := &pp.Objects[i]
		if o.Damage != nil {
			damaged = append(damaged, i)
			pp.Damaged = append(pp.Damaged, DamagedObject{Key: o.Key, Err: o.Damage})
			continue
		}
		runs := o.proof.offsets
		switch {
		case o.entry != nil:
			// runs are the entry's (checkEntry)
		case runs != nil:
			pp.Basis = BasisRecords
			unindexed++
		default:
			unindexed++
			if o.proof.records > 0 {
				runs = []offsetRun{{o.StartOffset, o.StartOffset + o.proof.records - 1}}
			}
		}
		o.Records = o.proof.records
		o.Offsets = runs
		if pp.Order == OrderUnproven && o.entry == nil && o.proof.offsets == nil {
			if o.Records > 0 {
				pp.segments = append(pp.segments, segment{obj: i, from: 0, to: o.Records, first: o.StartOffset})
				pp.Records += o.Records
				assumed = addRun(assumed, runs[0])
			}
			continue
		}
		// Walk the object's records (index idx at offset off) run by
		// run, cutting what is not claimed yet into segments.
		var idx int64
		for _, run := range runs {
			for _, free := range subtractReference(run, claimed) {
				from := idx + (free.First - run.First)
				pp.segments = append(pp.segments, segment{obj: i, from: from, to: from + free.len(), first: free.First})
				pp.Records += free.len()
			}
			idx += run.len()
			claimed = addRun(claimed, run)
		}
	}
	return claimed, assumed, damaged, unindexed
}

// holeGapsReference is holeGaps with a scan of every gap per damaged object.
func (pp *PartitionPlan) holeGapsReference(claimed []offsetRun, damaged []int) {
	for i := 1; i < len(claimed); i++ {
		pp.Gaps = append(pp.Gaps, Gap{First: claimed[i-1].Last + 1, Last: claimed[i].First - 1})
	}
	for _, di := range damaged {
		o := pp.Objects[di]
		g := Gap{First: o.StartOffset, Last: -1, Object: o.Key}
		// Attribute the hole that starts at or holds the object's start.
		found := false
		for k := range pp.Gaps {
			if pp.Gaps[k].First <= o.StartOffset && o.StartOffset <= pp.Gaps[k].Last && pp.Gaps[k].Object == "" {
				pp.Gaps[k].Object = o.Key
				found = true
				break
			}
		}
		if found {
			continue
		}
		switch {
		case len(claimed) == 0:
			pp.Gaps = append(pp.Gaps, g) // nothing readable: extent unknown
		case o.StartOffset < claimed[0].First:
			g.Last = claimed[0].First - 1
			pp.Gaps = append(pp.Gaps, g)
		case o.StartOffset > claimed[len(claimed)-1].Last:
			pp.Gaps = append(pp.Gaps, g) // after the last readable record
		}
		// Otherwise other objects hold the damaged object's start: what
		// it held beyond them, if anything, is in a hole found above.
	}
	sort.SliceStable(pp.Gaps, func(a, b int) bool { return pp.Gaps[a].First < pp.Gaps[b].First })
}

// subtractReference is subtract without the binary search.
func subtractReference(run offsetRun, claimed []offsetRun) []offsetRun {
	var out []offsetRun
	at := run.First
	for _, c := range claimed {
		if c.Last < at {
			continue
		}
		if c.First > run.Last {
			break
		}
		if c.First > at {
			out = append(out, offsetRun{at, c.First - 1})
		}
		at = c.Last + 1
		if at > run.Last {
			return out
		}
	}
	if at <= run.Last {
		out = append(out, offsetRun{at, run.Last})
	}
	return out
}
