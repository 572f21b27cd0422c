package restore

// The algorithms claim, holeGaps and subtract replaced (quadratic in the
// runs of a partition), kept as the reference the new ones are compared
// with on random inputs (claim_test.go).

import (
	"sort"

	"github.com/kafkas3/kafkas3/index"
)

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
		runs := o.facts.offsets
		switch {
		case o.entry != nil:
			// runs are the entry's (entryMatch.read)
		case runs != nil:
			pp.Basis = BasisRecords
			unindexed++
		default:
			unindexed++
			if o.facts.records > 0 {
				runs = []offsetRun{{o.StartOffset, o.StartOffset + o.facts.records - 1}}
			}
		}
		o.Records = o.facts.records
		o.Offsets = runs
		if pp.Order == OrderUnknown && o.entry == nil && o.facts.offsets == nil {
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

// indexGapsReference is indexGaps with a scan of every lost entry's runs
// per gap.
func (r *Restorer) indexGapsReference(pp *PartitionPlan, ip *index.Partition, claimed []offsetRun, damaged []int, missing []*index.Entry) {
	for _, g := range ip.Gaps {
		pp.Gaps = append(pp.Gaps, Gap{First: g.First, Last: g.Last, Unaccounted: true})
	}
	// The entries of damaged and missing objects, to name them.
	var lost []*index.Entry
	for _, di := range damaged {
		for i := range ip.Entries {
			if ip.Entries[i].Key == pp.Objects[di].Key {
				lost = append(lost, &ip.Entries[i])
			}
		}
	}
	lost = append(lost, missing...)
	for _, h := range ip.Held {
		for _, hole := range subtract(offsetRun{h.First, h.Last}, claimed) {
			// Cut the hole along the lost entries' runs, so each gap
			// names one object.
			at := hole.First
			for at <= hole.Last {
				g := Gap{First: at, Last: hole.Last}
				for _, e := range lost {
					for _, er := range e.Runs {
						if er.First <= at && at <= er.Last {
							g.Object, g.Last = e.Key, min(er.Last, hole.Last)
						}
					}
				}
				if g.Object == "" {
					// Held by no lost entry: the next lost run starts later.
					next := hole.Last
					for _, e := range lost {
						for _, er := range e.Runs {
							if er.First > at && er.First-1 < next {
								next = er.First - 1
							}
						}
					}
					g.Last = next
				}
				pp.Gaps = append(pp.Gaps, g)
				at = g.Last + 1
			}
		}
	}
	// A damaged object without an entry in an indexed partition: its
	// extent is not known.
	for _, di := range damaged {
		o := pp.Objects[di]
		known := false
		for _, e := range lost {
			known = known || e.Key == o.Key
		}
		if !known {
			pp.Gaps = append(pp.Gaps, Gap{First: o.StartOffset, Last: -1, Object: o.Key})
		}
	}
	sort.SliceStable(pp.Gaps, func(a, b int) bool { return pp.Gaps[a].First < pp.Gaps[b].First })
	if len(claimed) == 0 && len(ip.Held) > 0 {
		pp.FirstOffset, pp.LastOffset = -1, -1
	}
}
