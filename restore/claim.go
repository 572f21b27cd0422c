package restore

import (
	"cmp"
	"math"
	"slices"

	"github.com/kafkas3/kafkas3/index"
)

// claimRun is a run of an object's offsets to cut into segments (claim):
// the records of Objects[obj] from index idx onwards hold its offsets.
// A whole run is an object's assumed offsets (OrderUnknown): it is one
// segment, not cut, and claims nothing.
type claimRun struct {
	run   offsetRun
	obj   int
	idx   int64
	whole bool
}

// claimPiece is a part of runs[k] (firstClaims) that no earlier run holds.
type claimPiece struct {
	k   int
	run offsetRun
}

// firstClaims returns, for runs in plan order, the parts of each run that
// no earlier run holds (a whole run: all of it), in the order of runs and
// each run's in offset order: the pieces of runs[k] are the maximal runs of
// its offsets outside the union of runs[:k].
//
// It sorts the runs by first offset once and sweeps the offsets, with the
// runs that hold the current offset in a heap by their order, the earliest
// on top: O(n log n) for n runs, however they overlap.
func firstClaims(runs []claimRun) []claimPiece {
	ord := make([]int, 0, len(runs))
	out := make([]claimPiece, 0, len(runs))
	for k, r := range runs {
		switch {
		case r.whole:
			out = append(out, claimPiece{k, r.run})
		case r.run.First <= r.run.Last:
			ord = append(ord, k)
		}
	}
	slices.SortFunc(ord, func(a, b int) int {
		return cmp.Or(cmp.Compare(runs[a].run.First, runs[b].run.First), cmp.Compare(a, b))
	})
	var h minHeap
	pos := int64(math.MinInt64)
	for i := 0; i < len(ord) || len(h) > 0; {
		if len(h) == 0 {
			pos = max(pos, runs[ord[i]].run.First)
		}
		for ; i < len(ord) && runs[ord[i]].run.First <= pos; i++ {
			if runs[ord[i]].run.Last >= pos {
				h.push(ord[i])
			}
		}
		for len(h) > 0 && runs[h[0]].run.Last < pos {
			h.pop()
		}
		if len(h) == 0 {
			continue
		}
		// The earliest run holding pos claims up to its end or the next
		// run's start, whichever comes first.
		k := h[0]
		end := runs[k].run.Last
		if i < len(ord) {
			end = min(end, runs[ord[i]].run.First-1)
		}
		if n := len(out); n > 0 && out[n-1].k == k && out[n-1].run.Last+1 == pos {
			out[n-1].run.Last = end
		} else {
			out = append(out, claimPiece{k, offsetRun{pos, end}})
		}
		pos = end + 1
	}
	return byRun(out, len(runs))
}

// byRun sorts pieces by run (k < n), keeping their order within a run.
func byRun(pieces []claimPiece, n int) []claimPiece {
	at := make([]int, n+1)
	for _, p := range pieces {
		at[p.k+1]++
	}
	for k := 1; k <= n; k++ {
		at[k] += at[k-1]
	}
	out := make([]claimPiece, len(pieces))
	for _, p := range pieces {
		out[at[p.k]] = p
		at[p.k]++
	}
	return out
}

// mergeRuns returns the union of rs as sorted, disjoint runs, adjacent ones
// merged (what adding each of rs with addRun gives), in O(n log n).
func mergeRuns(rs []offsetRun) []offsetRun {
	if len(rs) == 0 {
		return nil
	}
	s := slices.Clone(rs)
	slices.SortFunc(s, func(a, b offsetRun) int { return cmp.Compare(a.First, b.First) })
	out := s[:1]
	for _, r := range s[1:] {
		last := &out[len(out)-1]
		if r.First <= last.Last+1 {
			last.Last = max(last.Last, r.Last)
			continue
		}
		out = append(out, r)
	}
	return out
}

// minHeap is a binary min-heap of ints.
type minHeap []int

func (h *minHeap) push(x int) {
	*h = append(*h, x)
	s := *h
	for i := len(s) - 1; i > 0; {
		p := (i - 1) / 2
		if s[p] <= s[i] {
			break
		}
		s[p], s[i] = s[i], s[p]
		i = p
	}
}

func (h *minHeap) pop() {
	s := *h
	n := len(s) - 1
	s[0] = s[n]
	s = s[:n]
	for i := 0; ; {
		c := 2*i + 1
		if c >= n {
			break
		}
		if c+1 < n && s[c+1] < s[c] {
			c++
		}
		if s[i] <= s[c] {
			break
		}
		s[i], s[c] = s[c], s[i]
		i = c
	}
	*h = s
}

// lostRuns answers, for offsets that do not decrease from one question to
// the next, which run of the lost entries (damaged or missing objects')
// holds an offset, and where the next one starts (indexGaps). The runs are
// sorted by first offset once, and the ones started are kept in a heap by
// their order in lost, the latest on top: O((n + q) log n) for n runs and
// q questions.
type lostRuns struct {
	runs []lostRun // in the order of lost and each entry's runs
	ord  []int     // runs by first offset
	next int       // ord[next:] start after the last offset asked about
	h    minHeap   // -k of the runs started: the latest run on top
}

type lostRun struct {
	key string
	run offsetRun
}

func newLostRuns(lost []*index.Entry) *lostRuns {
	l := &lostRuns{}
	for _, e := range lost {
		for _, r := range e.Runs {
			l.runs = append(l.runs, lostRun{e.Key, offsetRun{r.First, r.Last}})
		}
	}
	l.ord = make([]int, len(l.runs))
	for k := range l.ord {
		l.ord[k] = k
	}
	slices.SortStableFunc(l.ord, func(a, b int) int { return cmp.Compare(l.runs[a].run.First, l.runs[b].run.First) })
	return l
}

// at returns the key and run of the lost entry that holds off (the last
// in the order of lost and their runs, when several do), key "" when none
// does or its key is empty; and the first offset after off at which a
// lost run starts (math.MaxInt64 when none does).
func (l *lostRuns) at(off int64) (key string, run offsetRun, next int64) {
	for ; l.next < len(l.ord) && l.runs[l.ord[l.next]].run.First <= off; l.next++ {
		l.h.push(-l.ord[l.next])
	}
	for len(l.h) > 0 && l.runs[-l.h[0]].run.Last < off {
		l.h.pop()
	}
	next = math.MaxInt64
	if l.next < len(l.ord) {
		next = l.runs[l.ord[l.next]].run.First
	}
	if len(l.h) > 0 {
		r := l.runs[-l.h[0]]
		return r.key, r.run, next
	}
	return "", offsetRun{}, next
}
