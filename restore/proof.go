package restore

import (
	"cmp"
	"context"
	"errors"
	"fmt"
	"slices"
	"sort"
	"strings"

	"github.com/kafkas3/kafkas3/format"
	"github.com/kafkas3/kafkas3/index"
)

// The proof: what the plan checks before anything is produced
//
// Plan reads every object completely, once (modeProve: every record
// decoded, nothing sent to a registry), with its .keys and .headers
// twins, up to Config.ReadConcurrency objects at once (large ones Config.Parallelism at a time: eachObject), unless Run reads each
// object once (Config.ReadOnce, below; kafkas3 source without
// --prove-first): always without an index, in a dry run, and with
// behavior.on.error ignore or log, AllowGaps or Until. The values are
// checked where the reader decoded them, not copied (format.Transient). An object is damaged
// (ErrDamagedObject, Object.Damage) when it cannot be opened, does not
// decode to its end (truncated, a flipped byte a checksum catches), holds
// other bytes than the listing's size, its twins hold another record count
// (a bytes value containing the separator shows up so), or its offsets do
// not increase. With the archive index (package index, loaded from
// Config.IndexPrefix for the chosen topics; the entry with the highest
// commit is live) the object's listed size, checksums (and its twins':
// the CRC32C of v2 entries, the SHA-256 of v1 entries and of v2 entries
// that give one; the SHA-256 is computed only for objects whose entries
// have one, Object.sha256), record count and carried offsets must also
// match its live entry, and an
// entry whose object is not listed is a damaged (missing) object.
//
// Each object's records then have source offsets: the index entry's runs
// (record i has the i-th offset), the offsets envelope records carry, or,
// without either, the name's start offset plus i (consecutive offsets are
// assumed; PartitionPlan.Basis says which). planPartition walks the
// objects in plan order and gives each source offset to the first object
// that holds it: PartitionPlan.segments, sorted by offset, is the
// partition's record stream, each offset once, in offset order, across
// overlapping objects and folders. Duplicates are counted.
//
// Gaps (PartitionPlan.Gaps) are, without an index, the holes between the
// offsets the readable objects hold and what a damaged object held (to the
// next readable offset, or open-ended after the last); with an index, the
// offsets no entry accounts for (index.Partition.Gaps) and the offsets
// entries hold that no readable object holds, named by the damaged or
// missing object. Offsets the sink read and Kafka no longer had
// (compaction) are not gaps, and neither are the offsets the index records
// as lost before archiving (Kafka deleted them before the sink read them):
// PartitionPlan.Lost lists them (less any offset an object holds, and below
// a --until cut), the plan prints one "lost before archiving" line per
// range, the Summary counts them (LostOffsets) and the run logs them; they
// never stop a restore, as nothing can bring them back, and group offsets
// inside them translate to the first restored record after them. A
// partition is shown complete (PartitionPlan.Complete) only with the index
// basis, no gap and no damaged object.
//
// Check (Run calls it) stops the run before anything is produced on a
// damaged object under behavior.on.error=fail, and on any gap, unless
// Config.AllowGaps. ignore and log skip damaged objects whole; their gaps
// and every gap AllowGaps lets through are logged and counted in the
// Summary. The cost: the archive is read twice (proof, then production),
// and each object's offset runs stay in memory.

// ErrGaps is wrapped when the archive does not hold every offset of a
// partition between its first and last archived offset, and
// Config.AllowGaps is off. The error lists the gaps.
var ErrGaps = errors.New("the archive has gaps")

// offsetRun is an inclusive range of source offsets.
type offsetRun struct{ First, Last int64 }

func (o offsetRun) len() int64 { return o.Last - o.First + 1 }

// offsetRuns builds runs from increasing offsets.
type offsetRuns struct{ runs []offsetRun }

func (o *offsetRuns) add(off int64) error {
	if n := len(o.runs); n > 0 {
		last := &o.runs[n-1]
		switch {
		case off <= last.Last:
			return fmt.Errorf("offset %d follows offset %d: offsets must increase", off, last.Last)
		case off == last.Last+1:
			last.Last = off
			return nil
		}
	}
	o.runs = append(o.runs, offsetRun{off, off})
	return nil
}

// Gap is a range of source offsets of a partition that the restore cannot
// bring back: no readable object holds them.
type Gap struct {
	First int64 // first missing offset
	// Last is the last missing offset, or -1 when it is not known (a
	// damaged object after the last readable one).
	Last int64
	// Object names the damaged or missing object that held the offsets,
	// when one is known.
	Object string
	// Unaccounted marks offsets the archive index does not account for
	// (no entry says the sink read them: a deleted index object, or an
	// archive resumed past offsets it never read).
	Unaccounted bool
}

// String prints the gap as "first..last (cause)".
func (g Gap) String() string {
	last := "?"
	if g.Last >= 0 {
		last = fmt.Sprint(g.Last)
	}
	cause := "no object holds them"
	switch {
	case g.Object != "":
		cause = fmt.Sprintf("object %q, damaged or missing", g.Object)
	case g.Unaccounted:
		cause = "no index entry accounts for them"
	}
	return fmt.Sprintf("%d..%s (%s)", g.First, last, cause)
}

// Count is the number of missing offsets, or -1 when not known.
func (g Gap) Count() int64 {
	if g.Last < 0 {
		return -1
	}
	return g.Last - g.First + 1
}

// DamagedObject is an object the restore cannot read as a whole.
type DamagedObject struct {
	Key string
	Err error // wraps ErrDamagedObject
}

// segment is a run of records of one object that the restore produces:
// records from..to-1 of Objects[obj], source offsets first onwards.
type segment struct {
	obj      int
	from, to int64
	first    int64
}

// Proof bases of a partition (PartitionPlan.Basis).
const (
	// BasisNames: no index; each object's offsets are its name's start
	// offset and the following ones, one per decoded record (consecutive
	// offsets are assumed, so compacted objects cannot be told apart).
	BasisNames = "names and record counts (no index; consecutive offsets assumed)"
	// BasisRecords: no index; the records carry their offsets (envelope).
	BasisRecords = "offsets carried by the records (no index)"
)

// snapshotPair is a topic's snapshots around Config.Until: the newest at
// or before it and the oldest after it (either nil).
type snapshotPair struct{ prev, next *cutSnapshot }

// untilSnapshotsOf returns, with Config.Until, each topic's snapshots
// around it (the plan marks the objects the index shows wholly past any
// cut they can get: markPastCut). Without Until it returns nil.
func (r *Restorer) untilSnapshotsOf(ctx context.Context, plan *Plan) (map[string]snapshotPair, error) {
	if r.cfg.Until.IsZero() {
		return nil, nil
	}
	snaps := map[string]snapshotPair{}
	for _, t := range plan.Topics {
		prev, next, err := r.untilSnapshots(ctx, t.Source)
		if err != nil {
			return nil, err
		}
		snaps[t.Source] = snapshotPair{prev, next}
	}
	return snaps, nil
}

// readConcurrency is Config.ReadConcurrency, index.DefaultConcurrency
// when zero.
func (r *Restorer) readConcurrency() int {
	return cmp.Or(r.cfg.ReadConcurrency, index.DefaultConcurrency)
}

// examineObject gives one object its facts: the proof reads it completely
// in modeProve (or takes this process's earlier read of it, at the same
// size) and matches it with its archive index entries (firstMatch). An
// object wholly past the cut (Object.unread), and with one read an
// object the store shows as its entry says (entryMatch.stored), takes
// its entry's word instead. A damaged object gets Object.Damage; any
// other error (the store, the context) is returned.
func (r *Restorer) examineObject(ctx context.Context, ai *archiveIndex, o *Object, etag string) error {
	// The listing's ETags (etag, the twins') serve only the one-read
	// check (stored): the plan does not keep them.
	defer func() {
		if o.twins != nil {
			o.twins.keys.etag, o.twins.headers.etag = "", ""
		}
	}()
	if o.unread {
		// Wholly past the cut (markPastCut): its live entry gives its
		// facts.
		e := ai.live(o.Key)
		o.entry, o.envelope = e, envelopeMode(e)
		o.facts = &objectFacts{records: e.Records, offsets: entryRuns(e)}
		return nil
	}
	entries, err := ai.listed(o)
	if err != nil {
		o.Damage = err
		return nil
	}
	if len(entries) > 0 && !r.oneRead && r.restoredEntry(o, entries[0]) {
		// Proved by an earlier pass, whose proof was let go
		// (rememberStreams).
		trustEntry(o, entries)
		return nil
	}
	if len(entries) > 0 && r.oneRead {
		same, err := entryMatch{o, entries[0]}.stored(ctx, r.store, etag)
		if err != nil {
			return err
		}
		if same {
			trustEntry(o, entries)
			return nil
		}
		// The store says o is not what its entry describes: it is read
		// now, as without one read, and refused if damaged.
	}
	if len(entries) > 0 {
		o.envelope = envelopeMode(entries[0])
	}
	o.sha256 = anySHA256(entries)
	p, err := r.proofRead(ctx, o)
	if err == nil && len(entries) > 0 {
		if o.entry, err = firstMatch(o, p, entries); err == nil {
			p.offsets = entryRuns(o.entry)
		}
	}
	switch {
	case err == nil:
		o.facts = &p
		if r.cfg.Follow {
			// The next pass takes it, unless it matched an entry
			// (rememberStreams lets those go).
			r.mu.Lock()
			r.proved[o.Key] = provedObject{size: o.Size, facts: p}
			r.mu.Unlock()
		}
	case isDamage(err):
		o.Damage = err
	default:
		return err
	}
	return nil
}

// anySHA256 reports whether an object of one of entries has a SHA-256.
func anySHA256(entries []*index.Entry) bool {
	for _, e := range entries {
		for _, ob := range e.Objects {
			if ob.SHA256 != "" {
				return true
			}
		}
	}
	return false
}

// proofRead returns o's facts from the proof's read: this process's
// earlier read of it when its size is the same, else a full read in
// modeProve.
func (r *Restorer) proofRead(ctx context.Context, o *Object) (objectFacts, error) {
	r.mu.Lock()
	known, ok := r.proved[o.Key]
	r.mu.Unlock()
	if ok && known.size == o.Size && (!o.sha256 || known.facts.digests().value.sha256 != "") {
		return known.facts, nil
	}
	target := "" // modeProve frames nothing
	r.planReads.Add(1)
	return r.readObject(ctx, *o, target, modeProve, func(*format.Record) error { return nil }, nil)
}

// addUp adds pp's counts to its topic's.
func addUp(t *TopicPlan, pp *PartitionPlan) {
	t.Records += pp.Records
	t.Duplicates += pp.Duplicates
	t.Gaps += len(pp.Gaps)
	t.Damaged += len(pp.Damaged)
	t.LostOffsets += pp.LostOffsets
}

// planPartition works out pp's segments, duplicates and gaps from its
// objects' facts. Objects are taken in plan order (start offset, then
// key); an offset held by several objects is restored from the first.
//
// Without an index (ip nil), a gap is a hole between the offsets the
// objects hold, or offsets of a damaged object no other object holds.
// With one, a gap is a run of offsets the index does not account for
// (ip.Gaps), or offsets the index says an object holds that no readable
// object holds (a damaged object, or one of missing, deleted from the
// store); offsets the sink read and the index says are absent
// (compaction, transaction markers) are not gaps, nor are the offsets it
// records as lost before archiving (pp.Lost).
func (r *Restorer) planPartition(pp *PartitionPlan, ip *index.Partition, missing []*index.Entry) {
	pp.Basis = BasisNames
	pp.FirstOffset, pp.LastOffset = -1, -1
	commit := int64(-1)
	if ip != nil {
		commit = ip.Commit
	}
	pp.judgeOrder(commit)
	claimed, assumed, damaged, unindexed := pp.claim()
	// What the partition's records cover, for First/LastOffset.
	span := mergeRuns(append(slices.Clone(claimed), assumed...))
	for _, e := range missing {
		pp.Damaged = append(pp.Damaged, DamagedObject{Key: e.Key,
			Err: fmt.Errorf("%w: %q is in the archive index (commit %d) but not in the store", ErrDamagedObject, e.Key, e.Commit)})
	}
	// Duplicates: records of the partition minus the records restored.
	var total int64
	for _, o := range pp.Objects {
		if o.Damage == nil {
			total += o.facts.records
			pp.Filtered += o.facts.filtered
		}
	}
	pp.Duplicates = total - pp.Records
	sort.SliceStable(pp.segments, func(a, b int) bool { return pp.segments[a].first < pp.segments[b].first })
	if len(span) > 0 {
		pp.FirstOffset, pp.LastOffset = span[0].First, span[len(span)-1].Last
	}
	if ip != nil {
		pp.Basis = BasisIndex
		if unindexed > 0 {
			pp.Basis = BasisMixed
		}
		pp.Lost, pp.LostOffsets = slices.Clone(ip.Lost), ip.LostCount
		r.indexGaps(pp, ip, claimed, damaged, missing)
		return
	}
	pp.holeGaps(claimed, damaged)
}

// claim cuts pp's readable objects, in plan order, into segments: the
// records at offsets no earlier object holds. It sets each object's
// Records and Offsets, pp.Records and, for objects whose records carry
// their offsets, pp.Basis; the damaged objects go to pp.Damaged. It
// returns the offsets claimed (sorted, disjoint, merged), the indexes of
// the damaged objects and how many readable objects have no index entry.
//
// With OrderUnknown (judgeOrder), objects without known offsets are not
// cut: each is one segment, whole, at its start offset, and its assumed
// offsets (start offset onwards, one per record) are returned in assumed,
// not claimed, so no other object's records are dropped for them, and no
// hole between them is taken for a gap: interleaved objects' assumed
// offsets leave holes that hold records.
//
// Each offset goes to the first run, in plan order, that holds it
// (firstClaims): one sort and one sweep, O(n log n) in the runs, so a
// compacted partition (one run per record) plans in time.
func (pp *PartitionPlan) claim() (claimed, assumed []offsetRun, damaged []int, unindexed int) {
	n := 0
	for i := range pp.Objects {
		if o := &pp.Objects[i]; o.Damage == nil {
			n += max(1, len(o.facts.offsets))
		}
	}
	// Every readable object's runs, in plan order, and the runs claimed:
	// allocated once (a compacted partition has one run per record).
	all, claimed := make([]claimRun, 0, n), make([]offsetRun, 0, n)
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
				all = append(all, claimRun{run: runs[0], obj: i, whole: true})
				assumed = append(assumed, runs[0])
			}
			continue
		}
		// The object's records (index idx at offset run.First) run by run.
		var idx int64
		for _, run := range runs {
			all = append(all, claimRun{run: run, obj: i, idx: idx})
			claimed = append(claimed, run)
			idx += run.len()
		}
	}
	// Cut what no earlier run holds into segments, in plan order.
	pieces := firstClaims(all)
	pp.segments = slices.Grow(pp.segments, len(pieces))
	for _, p := range pieces {
		c := all[p.k]
		from := c.idx + (p.run.First - c.run.First)
		pp.segments = append(pp.segments, segment{obj: c.obj, from: from, to: from + p.run.len(), first: p.run.First})
		pp.Records += p.run.len()
	}
	return mergeRuns(claimed), mergeRuns(assumed), damaged, unindexed
}

// holeGaps sets the gaps of a partition without an index: the holes
// between what is claimed, and the offsets damaged objects held that
// nothing else holds.
func (pp *PartitionPlan) holeGaps(claimed []offsetRun, damaged []int) {
	for i := 1; i < len(claimed); i++ {
		pp.Gaps = append(pp.Gaps, Gap{First: claimed[i-1].Last + 1, Last: claimed[i].First - 1})
	}
	holes := len(pp.Gaps)
	for _, di := range damaged {
		o := pp.Objects[di]
		g := Gap{First: o.StartOffset, Last: -1, Object: o.Key}
		// Attribute the hole that starts at or holds the object's start.
		// The holes (pp.Gaps[:holes]; pp.Gaps is empty before them) are
		// sorted and disjoint: at most one holds it; the gaps after them
		// name an object already.
		k := sort.Search(holes, func(k int) bool { return pp.Gaps[k].Last >= o.StartOffset })
		if k < holes && pp.Gaps[k].First <= o.StartOffset && pp.Gaps[k].Object == "" {
			pp.Gaps[k].Object = o.Key
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

// indexGaps sets the gaps of an indexed partition: what the index does not
// account for, and what its entries hold that no readable object holds,
// attributed to the damaged or missing object whose entry holds it.
func (r *Restorer) indexGaps(pp *PartitionPlan, ip *index.Partition, claimed []offsetRun, damaged []int, missing []*index.Entry) {
	for _, g := range ip.Gaps {
		pp.Gaps = append(pp.Gaps, Gap{First: g.First, Last: g.Last, Unaccounted: true})
	}
	// The entries of damaged and missing objects, to name them.
	var lost []*index.Entry
	if len(damaged) > 0 {
		entries := map[string][]int{} // ip.Entries by key
		for i := range ip.Entries {
			entries[ip.Entries[i].Key] = append(entries[ip.Entries[i].Key], i)
		}
		for _, di := range damaged {
			for _, i := range entries[pp.Objects[di].Key] {
				lost = append(lost, &ip.Entries[i])
			}
		}
	}
	lost = append(lost, missing...)
	lr := newLostRuns(lost)
	for _, h := range ip.Held {
		for _, hole := range subtract(offsetRun{h.First, h.Last}, claimed) {
			// Cut the hole along the lost entries' runs, so each gap
			// names one object.
			for at := hole.First; at <= hole.Last; {
				g := Gap{First: at, Last: hole.Last}
				key, run, next := lr.at(at)
				if g.Object = key; key != "" {
					g.Last = min(run.Last, hole.Last)
				} else {
					// Held by no lost entry: the next lost run starts later.
					g.Last = min(hole.Last, next-1)
				}
				pp.Gaps = append(pp.Gaps, g)
				at = g.Last + 1
			}
		}
	}
	// A damaged object without an entry in an indexed partition: its
	// extent is not known.
	known := map[string]bool{}
	for _, e := range lost {
		known[e.Key] = true
	}
	for _, di := range damaged {
		if o := pp.Objects[di]; !known[o.Key] {
			pp.Gaps = append(pp.Gaps, Gap{First: o.StartOffset, Last: -1, Object: o.Key})
		}
	}
	sort.SliceStable(pp.Gaps, func(a, b int) bool { return pp.Gaps[a].First < pp.Gaps[b].First })
	if len(claimed) == 0 && len(ip.Held) > 0 {
		pp.FirstOffset, pp.LastOffset = -1, -1
	}
}

// subtract returns the parts of run that no run of claimed covers, in order.
func subtract(run offsetRun, claimed []offsetRun) []offsetRun {
	var out []offsetRun
	at := run.First
	// Skip, by binary search, the runs that end before run.
	from := sort.Search(len(claimed), func(k int) bool { return claimed[k].Last >= at })
	for _, c := range claimed[from:] {
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

// addRun merges run into the sorted disjoint runs rs.
func addRun(rs []offsetRun, run offsetRun) []offsetRun {
	out := make([]offsetRun, 0, len(rs)+1)
	i := 0
	for ; i < len(rs) && rs[i].Last+1 < run.First; i++ {
		out = append(out, rs[i])
	}
	for ; i < len(rs) && rs[i].First <= run.Last+1; i++ {
		run.First = min(run.First, rs[i].First)
		run.Last = max(run.Last, rs[i].Last)
	}
	out = append(out, run)
	return append(out, rs[i:]...)
}

// blocking returns the error that stops a restore of plan before anything
// is produced: damaged objects under behavior.on.error=fail, and gaps,
// unless Config.AllowGaps. Gaps left by damaged objects that
// behavior.on.error ignore or log skips do not stop it.
func (r *Restorer) blocking(plan *Plan) error {
	var damaged, gaps []string
	var damageErrs []error
	skipDamaged := r.cfg.OnError != OnErrorFail || r.cfg.AllowGaps
	for _, t := range plan.Topics {
		for _, pp := range t.Parts {
			if !skipDamaged {
				for _, d := range pp.Damaged {
					damaged = append(damaged, fmt.Sprintf("%s/%d: %v", t.Source, pp.Partition, d.Err))
					damageErrs = append(damageErrs, d.Err)
				}
			}
			if r.cfg.AllowGaps {
				continue
			}
			for _, g := range pp.Gaps {
				if g.Object != "" && skipDamaged {
					continue
				}
				gaps = append(gaps, fmt.Sprintf("%s/%d offsets %s", t.Source, pp.Partition, g))
			}
		}
	}
	switch {
	case len(damaged) > 0:
		return &listError{
			msg: fmt.Sprintf("%d damaged archive objects (behavior.on.error=fail; nothing was produced): %s; "+
				"set behavior.on.error to log or ignore, or pass --allow-gaps, to restore the rest without these objects",
				len(damaged), strings.Join(limitList(damaged, 20), "; ")),
			errs: damageErrs,
		}
	case len(gaps) > 0:
		return fmt.Errorf("%w (nothing was produced): %s; pass --allow-gaps to restore the rest and report the gaps",
			ErrGaps, strings.Join(limitList(gaps, 20), "; "))
	}
	return nil
}

// listError carries the errors it lists, for errors.Is and errors.As.
type listError struct {
	msg  string
	errs []error
}

func (e *listError) Error() string   { return e.msg }
func (e *listError) Unwrap() []error { return e.errs }

// limitList keeps the first n entries and says how many were left out.
func limitList(l []string, n int) []string {
	if len(l) <= n {
		return l
	}
	return append(l[:n:n], fmt.Sprintf("and %d more", len(l)-n))
}

// reportSkips logs each damaged object that is skipped and each gap the
// restore leaves, before anything is produced.
func (r *Restorer) reportSkips(plan *Plan) {
	r.reportOrder(plan)
	for _, t := range plan.Topics {
		for _, u := range t.UntilUnarchived {
			r.log.Warn("the snapshot the --until cut comes from shows records of a partition the archive holds none of; nothing of it is restored",
				"topic", t.Source, "partition", u.Partition, "end_offset", u.End)
		}
		for _, pp := range t.Parts {
			for _, d := range pp.Damaged {
				r.log.Warn("skipping a damaged object: none of its records is restored",
					"topic", t.Source, "partition", pp.Partition, "key", d.Key, "behavior.on.error", string(r.cfg.OnError), "error", d.Err)
			}
			for _, g := range pp.Gaps {
				r.log.Warn("gap: these archived offsets are not restored",
					"topic", t.Source, "target", t.Target, "partition", pp.Partition,
					"first_offset", g.First, "last_offset", lastText(g.Last), "object", g.Object)
			}
			for _, l := range pp.Lost {
				r.log.Warn("lost before archiving: Kafka deleted these offsets before the sink read them; the archive does not hold them and nothing restores them",
					"topic", t.Source, "target", t.Target, "partition", pp.Partition,
					"first_offset", l.First, "last_offset", l.Last, "count", l.Len())
			}
		}
	}
}

func lastText(last int64) string {
	if last < 0 {
		return "unknown"
	}
	return fmt.Sprint(last)
}

// Check returns the error that stops a restore of plan before anything is
// produced, or nil: partitions without a --until cut, partitions whose
// record order is unknown unless Config.AllowUnknownOrder, damaged
// objects under behavior.on.error=fail, and gaps, unless Config.AllowGaps. Run calls it; a dry run prints the plan, then
// reports it.
func (r *Restorer) Check(plan *Plan) error {
	if err := refusedCuts(plan); err != nil {
		return err
	}
	if err := r.orderError(plan); err != nil {
		return err
	}
	if err := r.unstampedError(plan); err != nil {
		return err
	}
	return r.blocking(plan)
}
