package index

import (
	"cmp"
	"slices"
	"sort"
)

// Partition is the coverage of one topic partition by the live entries.
type Partition struct {
	Topic     string
	Partition int32
	// Entries are the partition's live entries by first offset, then key.
	Entries []Entry
	// From is the lowest entry From and Commit the highest entry Commit:
	// the partition is complete when every offset in [From, Commit-1] was
	// read by the sink (Consumed), with no Gaps.
	From, Commit int64
	// Held are the offsets at least one entry holds, merged into runs;
	// Records counts them (each offset once).
	Held    []Run
	Records int64
	// Consumed are the offsets the sink read for the entries, merged: the
	// union of each entry's [From, Commit-1]. An offset in Consumed but
	// not in Held is absent from Kafka (compaction, a transaction marker,
	// an aborted record) or was skipped by the sink's own rules (an
	// ignored null, a bad record sent to the DLQ); Absent counts them.
	Consumed []Run
	Absent   int64
	// Lost are the offsets in Consumed the sink found deleted before it
	// could read them (below the log start: retention or DeleteRecords
	// passed the sink), as the entries' lost runs say, less any offset an
	// entry holds; LostCount counts them. Absent does not count them.
	Lost      []Run
	LostCount int64
	// Gaps are the runs of offsets in [From, Commit-1] outside Consumed:
	// no index entry says what they held. A deleted index object, or an
	// archive resumed past offsets it never read, leaves one.
	Gaps []Run
	// Overlaps are the runs of offsets held by more than one entry.
	Overlaps []Overlap
}

// Overlap is a run of offsets held by every one of Keys (sorted entry
// keys, at least two).
type Overlap struct {
	Run  Run
	Keys []string
}

// Clean reports whether the partition has no gap and no overlap.
func (p *Partition) Clean() bool { return len(p.Gaps) == 0 && len(p.Overlaps) == 0 }

// Analyze groups entries by topic and partition and computes each
// partition's coverage, gaps and overlaps. Entries must be valid and have
// distinct keys (as Load returns them). The result is sorted by topic and
// partition; entries is not modified. When entries is sorted already (as
// Load's Index.Entries are), each Partition's Entries is a part of it,
// not a copy.
func Analyze(entries []Entry) []Partition {
	es := entries
	if !sort.SliceIsSorted(es, func(i, j int) bool { return entryLess(&es[i], &es[j]) }) {
		es = slices.Clone(entries)
		sortAll(es)
	}
	var out []Partition
	for i := 0; i < len(es); {
		j := i
		for j < len(es) && es[j].Topic == es[i].Topic && es[j].Partition == es[i].Partition {
			j++
		}
		out = append(out, analyzePartition(es[i:j]))
		i = j
	}
	return out
}

func analyzePartition(es []Entry) Partition {
	p := Partition{Topic: es[0].Topic, Partition: es[0].Partition, Entries: es, From: es[0].From, Commit: es[0].Commit}
	var held, consumed, lost []Run
	for _, e := range es {
		p.From = min(p.From, e.From)
		p.Commit = max(p.Commit, e.Commit)
		held = append(held, e.Runs...)
		consumed = append(consumed, Run{e.From, e.Commit - 1})
		lost = append(lost, e.Lost...)
	}
	p.Held = merge(held)
	p.Consumed = merge(consumed)
	for _, r := range p.Held {
		p.Records += r.Len()
	}
	p.Lost = Subtract(merge(lost), p.Held)
	for _, r := range p.Lost {
		p.LostCount += r.Len()
	}
	var total int64
	for _, r := range p.Consumed {
		total += r.Len()
	}
	p.Absent = total - p.Records - p.LostCount
	next := p.From
	for _, r := range p.Consumed {
		if r.First > next {
			p.Gaps = append(p.Gaps, Run{next, r.First - 1})
		}
		next = r.Last + 1
	}
	p.Overlaps = overlaps(es)
	return p
}

// Subtract returns the offsets of runs that are not in minus; both must be
// sorted, disjoint runs (as merge returns them).
func Subtract(runs, minus []Run) []Run {
	var out []Run
	j := 0
	for _, r := range runs {
		first := r.First
		for j < len(minus) && minus[j].Last < first {
			j++
		}
		for k := j; k < len(minus) && minus[k].First <= r.Last; k++ {
			if minus[k].First > first {
				out = append(out, Run{first, minus[k].First - 1})
			}
			first = max(first, minus[k].Last+1)
		}
		if first <= r.Last {
			out = append(out, Run{first, r.Last})
		}
	}
	return out
}

// merge sorts runs and joins the ones that overlap or touch.
func merge(runs []Run) []Run {
	if len(runs) == 0 {
		return nil
	}
	sort.Slice(runs, func(i, j int) bool { return runs[i].First < runs[j].First })
	out := []Run{runs[0]}
	for _, r := range runs[1:] {
		last := &out[len(out)-1]
		if r.First <= last.Last+1 {
			last.Last = max(last.Last, r.Last)
			continue
		}
		out = append(out, r)
	}
	return out
}

// overlaps sweeps the entries' runs and returns the runs of offsets held by
// two or more entries, adjacent runs with the same entries joined.
//
// An event names its entry by index, so the events hold no pointer (a
// compacted partition has one run per record: millions of events), and
// they are allocated once.
func overlaps(es []Entry) []Overlap {
	type event struct {
		pos   int64
		entry int32
		start bool
	}
	n := 0
	for _, e := range es {
		n += 2 * len(e.Runs)
	}
	evs := make([]event, 0, n)
	for k := range es {
		for _, r := range es[k].Runs {
			evs = append(evs, event{r.First, int32(k), true}, event{r.Last + 1, int32(k), false})
		}
	}
	slices.SortFunc(evs, func(a, b event) int { return cmp.Compare(a.pos, b.pos) })
	active := map[string]bool{}
	var out []Overlap
	for i := 0; i < len(evs); {
		pos := evs[i].pos
		for ; i < len(evs) && evs[i].pos == pos; i++ {
			if key := es[evs[i].entry].Key; evs[i].start {
				active[key] = true
			} else {
				delete(active, key)
			}
		}
		if len(active) < 2 || i == len(evs) {
			continue
		}
		keys := make([]string, 0, len(active))
		for k := range active {
			keys = append(keys, k)
		}
		sort.Strings(keys)
		run := Run{pos, evs[i].pos - 1}
		if n := len(out); n > 0 && out[n-1].Run.Last+1 == run.First && slices.Equal(out[n-1].Keys, keys) {
			out[n-1].Run.Last = run.Last
			continue
		}
		out = append(out, Overlap{Run: run, Keys: keys})
	}
	return out
}
