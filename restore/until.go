package restore

import (
	"context"
	"errors"
	"fmt"
	"sort"
	"strings"
	"time"

	"github.com/kafkas3/kafkas3/format"
	"github.com/kafkas3/kafkas3/index"
)

// Point in time (Config.Until)
//
// With Until, each partition's record stream is cut at an offset C
// (PartitionPlan.Cut): only source offsets below C are restored. The
// stream stays in offset order, so the cut stream is a prefix of the full
// one, and the resume protocol below holds unchanged. C is chosen per
// partition (cutPartition):
//
//   - From the snapshots (index.Snapshot under IndexPrefix, written by the
//     sink): the newest snapshot of the topic at or before Until gives
//     C = its end offset of the partition (0 for a partition it does not
//     name). Every partition of a topic uses the same snapshot, so the cut
//     is consistent across partitions; each topic takes its own.
//     TopicPlan.UntilSnapshot returns it, for the group offsets of that
//     moment. Precision: the snapshot interval.
//   - Refined by timestamps where that is exact: when every record of the
//     partition carries its timestamp (envelope objects) and all are
//     LogAppendTime and never decrease (checked: a record after the first
//     one stamped past Until that is stamped at or before it makes the cut
//     not exact), C is the first offset stamped after Until, but never
//     below the snapshot's end offset (its records were in the cluster at
//     the snapshot's time; the sink's clock and the broker's may differ)
//     and never above the end offset of the first snapshot after Until.
//     CreateTime stamps never refine a snapshot's cut.
//   - Without a snapshot at or before Until: the timestamps alone, the
//     same way. Exact for LogAppendTime; best effort for CreateTime (the
//     producers' clocks: records after C stamped at or before Until are
//     left out and counted, Cut.Late). The index entries of damaged or
//     missing objects bound the cut by their min_ts. Objects without
//     record timestamps take their index entry's min_ts/max_ts: wholly
//     before or after Until is enough (best effort), an object around
//     Until without record timestamps refuses the partition
//     (ErrNoPointInTime), as does an archive without index and without
//     envelopes (Confluent's layout).
//
// Gaps and damaged objects at or past C do not matter and are dropped; a C
// beyond what the archive index accounts for (a snapshot past the archive's
// end) is a gap. Objects wholly past C are not read to produce, and
// objects the index shows wholly past any cut the partition can get
// (min_ts after Until, starting at or after the bound markPastCut
// computes) are not read by the proof either (Cut.Unread). Check
// refuses partitions without a cut, and Run refuses, before producing
// anything, a target partition that already holds more records of this
// restore than C lets through (ErrPastCut: an earlier restore with a later
// --until, or without one; records cannot be taken back). A re-run of the
// same Until produces nothing; a later Until or a full restore continues
// where it stopped. Not with Follow.

// ErrNoPointInTime is wrapped when Config.Until is set and the archive
// cannot tell what a partition held at that time: no snapshot at or
// before it, and records without timestamps (Confluent's layout). Nothing
// is produced.
var ErrNoPointInTime = errors.New("the archive cannot tell what the cluster held at --until")

// ErrPastCut is wrapped when Config.Until is set and a target partition
// already holds more records of this restore than the cut lets through:
// an earlier restore with a later --until (or none) went past it. Records
// cannot be taken back; nothing is produced.
var ErrPastCut = errors.New("the target already holds records past the --until cut")

// How a partition's cut was chosen (Cut.Basis).
const (
	// CutSnapshot: the end offset the snapshot at or before Until
	// recorded (precision: the snapshot interval).
	CutSnapshot = "snapshot"
	// CutSnapshotTimestamps: the snapshot's end offset, then the records
	// after it stamped at or before Until (LogAppendTime: exact).
	CutSnapshotTimestamps = "snapshot, then LogAppendTime timestamps"
	// CutTimestamps: the first record stamped after Until, without a
	// snapshot at or before it. Exact for LogAppendTime records; best
	// effort for CreateTime (Cut.Exact says which).
	CutTimestamps = "timestamps"
)

// Cut is where a point-in-time restore (Config.Until) stops in one
// partition: only source offsets below Offset are restored, a prefix of
// the partition's full record stream.
type Cut struct {
	// Offset is the first source offset not restored (-1 when Refused).
	Offset int64
	// Basis is how Offset was chosen (Cut* constants).
	Basis string
	// Exact reports that Offset is exactly the partition's end at Until
	// as far as the archive can tell: timestamps of LogAppendTime records
	// that never decrease. A snapshot cut without it is exact only at the
	// snapshot's time.
	Exact bool
	// SnapshotKey and SnapshotTimeMS name the snapshot at or before Until
	// the cut starts from ("" and 0 without one); SnapshotEnd is the end
	// offset it recorded for the partition (-1 without one).
	SnapshotKey    string
	SnapshotTimeMS int64
	SnapshotEnd    int64
	// NextEnd is the end offset the first snapshot after Until recorded,
	// an upper bound of any timestamp cut (-1 without one).
	NextEnd int64
	// Late counts, for a best-effort timestamp cut, the records at or
	// after Offset stamped at or before Until (CreateTime stamps that are
	// not in offset order): they are left out.
	Late int64
	// LeftOut counts the records of the archive at or after Offset that
	// are not restored; Full is the partition's record count without a
	// cut.
	LeftOut, Full int64
	// Unread counts the objects wholly past the cut that the archive
	// index let the plan leave unread (markPastCut).
	Unread int
	// Note says something the operator should know about the cut.
	Note string
	// Refused says why no cut can be chosen (then the restore stops with
	// ErrNoPointInTime before anything is produced).
	Refused string

	// stamps names the timestamps a best-effort timestamp cut rests on.
	stamps string
}

// String prints the cut for the plan.
func (c *Cut) String() string {
	if c.Refused != "" {
		return "REFUSED: " + c.Refused
	}
	var b strings.Builder
	switch c.Basis {
	case CutSnapshot:
		fmt.Fprintf(&b, "snapshot at %s (%s)", msText(c.SnapshotTimeMS), c.SnapshotKey)
	case CutSnapshotTimestamps:
		fmt.Fprintf(&b, "snapshot at %s (%s, end offset %d), then LogAppendTime timestamps", msText(c.SnapshotTimeMS), c.SnapshotKey, c.SnapshotEnd)
	case CutTimestamps:
		b.WriteString("record timestamps")
	}
	switch {
	case c.Exact:
		b.WriteString(", exact")
	case c.Basis == CutTimestamps:
		fmt.Fprintf(&b, ", best effort (%s: %d later records stamped at or before --until left out)", c.stamps, c.Late)
	default:
		b.WriteString(", precision: the snapshot interval")
	}
	if c.Note != "" {
		b.WriteString("; " + c.Note)
	}
	if c.Unread > 0 {
		fmt.Fprintf(&b, "; %d objects wholly past the cut not read (archive index)", c.Unread)
	}
	return b.String()
}

func msText(ms int64) string { return time.UnixMilli(ms).UTC().Format(time.RFC3339Nano) }

// untilFacts is what an object's records say about Config.Until (its
// facts; set by a read).
type untilFacts struct {
	// stamped: every record carries its own timestamp (an envelope
	// record with a timestamp type); logAppend: every one is
	// LogAppendTime.
	stamped, logAppend bool
	// after is the offset of the first record stamped after Until, -1
	// when none is.
	after int64
	// atOrBefore holds the offsets of the records stamped at or before
	// Until.
	atOrBefore offsetRuns
}

func newUntilFacts() untilFacts { return untilFacts{stamped: true, logAppend: true, after: -1} }

// add accounts for one record at offset off; stamped says whether it
// carries its own timestamp.
func (u *untilFacts) add(rec *format.Record, ts time.Time, stamped bool, off, untilMS int64) {
	if !stamped || rec.TimestampType < format.TimestampCreate {
		u.stamped, u.logAppend = false, false
		return
	}
	if rec.TimestampType != format.TimestampLogAppendTime {
		u.logAppend = false
	}
	if ts.UnixMilli() > untilMS {
		if u.after < 0 {
			u.after = off
		}
		return
	}
	_ = u.atOrBefore.add(off) // offsets increase: readObject checked them
}

// cutSnapshot is one snapshot's end offsets, as the cut uses them.
type cutSnapshot struct {
	key    string
	timeMS int64
	ends   map[int32]int64
	snap   *index.Snapshot
}

// untilMS is Config.Until in Unix milliseconds (the resolution of Kafka
// timestamps and snapshot times).
func (r *Restorer) untilMS() int64 { return r.cfg.Until.UnixMilli() }

// cutPartition chooses pp's cut from the topic's snapshots around Until
// (prev at or before it, next after it; either may be nil) and the
// records' timestamps, then trims pp's record stream to it.
func (r *Restorer) cutPartition(pp *PartitionPlan, ip *index.Partition, prev, next *cutSnapshot) {
	c := newCut(pp, prev, next)
	pp.Cut = c
	ts := timestampCut(pp, ip, r.untilMS())
	if !r.chooseCut(c, ts, pp, prev != nil) {
		return
	}
	pp.applyCut(c.Offset)
	c.LeftOut = c.Full - pp.Records
	for _, o := range pp.Objects {
		if o.unread {
			c.Unread++
		}
	}
	// A cut past what the archive accounts for: the offsets between are
	// not archived (the sink stopped before it archived the snapshot's
	// end offsets).
	switch {
	case ip != nil && c.Offset > ip.Commit:
		pp.Gaps = append(pp.Gaps, Gap{First: ip.Commit, Last: c.Offset - 1, Unaccounted: true})
	case ip == nil && c.Offset > pp.LastOffset+1:
		c.Note = strings.TrimPrefix(c.Note+fmt.Sprintf("; the archive ends at offset %d, before the cut: whether it holds every offset up to the cut is unknown", pp.LastOffset), "; ")
	}
}

// newCut starts pp's cut: no offset yet, what the snapshots around Until
// recorded for the partition, and pp's full record count.
func newCut(pp *PartitionPlan, prev, next *cutSnapshot) *Cut {
	c := &Cut{Offset: -1, SnapshotEnd: -1, NextEnd: -1, Full: pp.Records}
	if prev != nil {
		c.SnapshotKey, c.SnapshotTimeMS = prev.key, prev.timeMS
		c.SnapshotEnd = prev.ends[pp.Partition] // absent: the partition did not exist yet
	}
	if next != nil {
		if e, ok := next.ends[pp.Partition]; ok {
			c.NextEnd = e
		}
	}
	return c
}

// tsCut is the timestamp cut of a partition: the first offset stamped
// after Until, as far as its objects and index entries tell.
type tsCut struct {
	offset int64
	// ok: every object's records around Until carry their own timestamps
	// or the index's time range places them (why says which object does
	// not, when !ok).
	ok  bool
	why string
	// anyStamped: some object's records carry their own timestamps;
	// logAppend: all of those are LogAppendTime.
	anyStamped, logAppend bool
	// late counts the records at or after offset stamped at or before
	// Until.
	late int64
}

// exact reports whether the timestamp cut is exactly the partition's end
// at Until: LogAppendTime stamps in offset order.
func (ts tsCut) exact() bool { return ts.ok && ts.anyStamped && ts.logAppend && ts.late == 0 }

// timestampCut works out pp's timestamp cut from its objects' facts and
// index entries (untilMS is Until in Unix milliseconds).
func timestampCut(pp *PartitionPlan, ip *index.Partition, untilMS int64) tsCut {
	ts := tsCut{offset: -1, ok: true, logAppend: true}
	var atOrBefore []offsetRun
	earlier := func(off int64) {
		if ts.offset < 0 || off < ts.offset {
			ts.offset = off
		}
	}
	for _, o := range pp.Objects {
		if o.Damage != nil || o.facts == nil || o.facts.records == 0 {
			continue
		}
		u := o.facts.untilOf()
		switch {
		case u.stamped:
			ts.anyStamped = true
			ts.logAppend = ts.logAppend && u.logAppend
			if u.after >= 0 {
				earlier(u.after)
			}
			for _, run := range u.atOrBefore.runs {
				atOrBefore = addRun(atOrBefore, run)
			}
		case o.entry != nil && o.entry.MaxTS <= untilMS:
			// The index's time range: every record at or before Until.
			for _, run := range o.Offsets {
				atOrBefore = addRun(atOrBefore, run)
			}
		case o.entry != nil && o.entry.MinTS > untilMS:
			earlier(o.Offsets[0].First)
		default:
			if ts.ok {
				ts.why = fmt.Sprintf("object %q holds records without their own timestamps (no store.envelope) around --until", o.Key)
			}
			ts.ok = false
		}
	}
	// Entries of damaged or missing objects still tell, by min_ts, that
	// their records come after Until.
	if ip != nil {
		for i := range ip.Entries {
			if e := &ip.Entries[i]; e.MinTS > untilMS {
				earlier(e.First())
			}
		}
	}
	if ts.offset < 0 {
		ts.offset = pp.LastOffset + 1 // every record is at or before Until
		if pp.LastOffset < 0 {
			ts.offset = 0
		}
	}
	for _, run := range atOrBefore {
		if run.Last >= ts.offset {
			ts.late += run.Last - max(run.First, ts.offset) + 1
		}
	}
	return ts
}

// chooseCut sets c's offset and basis from the timestamp cut and the
// snapshot at or before Until (haveSnapshot; its end offset is in c): the
// timestamp cut without a snapshot or when it is exact (raised to the
// snapshot's end, lowered to the next snapshot's), else the snapshot's
// end. Without either it sets c.Refused and returns false.
func (r *Restorer) chooseCut(c *Cut, ts tsCut, pp *PartitionPlan, haveSnapshot bool) bool {
	exact := ts.exact()
	switch {
	case ts.ok && (!haveSnapshot || exact):
		c.Offset, c.Basis, c.Exact, c.Late = ts.offset, CutTimestamps, exact, ts.late
		switch {
		case !ts.anyStamped:
			c.stamps = "no record timestamps"
		case ts.logAppend:
			c.stamps = "LogAppendTime out of offset order"
		default:
			c.stamps = "CreateTime"
		}
		if !ts.anyStamped && pp.Records > 0 {
			c.Note = "from the archive index's time range of each object (min_ts, max_ts)"
		}
		if haveSnapshot {
			c.Basis = CutSnapshotTimestamps
			if c.Offset < c.SnapshotEnd {
				c.Offset = c.SnapshotEnd // the snapshot saw them in the cluster at its time
				c.Note = "raised to the snapshot's end offset (the broker's clock is behind the sink's)"
			}
		}
		if c.NextEnd >= 0 && c.Offset > c.NextEnd {
			c.Offset = c.NextEnd
			c.Note = "lowered to the end offset of the first snapshot after --until"
		}
	case haveSnapshot:
		c.Offset, c.Basis = c.SnapshotEnd, CutSnapshot
	default:
		why := ts.why
		if why == "" {
			why = "no record carries a timestamp"
		}
		c.Refused = fmt.Sprintf("no snapshot at or before %s and %s: restore without --until, or pick a time after the first snapshot",
			r.cfg.Until.UTC().Format(time.RFC3339Nano), why)
		return false
	}
	if c.Offset == pp.LastOffset+1 && !c.Exact && c.Basis == CutTimestamps && pp.Records > 0 {
		c.Note = strings.TrimPrefix(c.Note+"; every archived record is at or before --until: the archive may end before it", "; ")
	}
	return true
}

// applyCut trims pp to the source offsets below cut: segments, record
// count, offsets, gaps, damaged objects and lost offsets past it.
func (pp *PartitionPlan) applyCut(cut int64) {
	var segs []segment
	pp.Records = 0
	pp.FirstOffset, pp.LastOffset = -1, -1
	below := make([]bool, len(pp.Objects))
	for _, s := range pp.segments {
		if s.first >= cut {
			continue
		}
		if end := s.first + (s.to - s.from); end > cut {
			s.to = s.from + (cut - s.first)
		}
		segs = append(segs, s)
		below[s.obj] = true
		n := s.to - s.from
		pp.Records += n
		if pp.FirstOffset < 0 {
			pp.FirstOffset = s.first
		}
		pp.LastOffset = max(pp.LastOffset, s.first+n-1)
	}
	pp.segments = segs
	for i := range pp.Objects {
		o := &pp.Objects[i]
		o.pastCut = !below[i] && o.Damage == nil && len(o.Offsets) > 0 && o.Offsets[0].First >= cut
	}
	lost := pp.Lost[:0:0]
	pp.LostOffsets = 0
	for _, r := range pp.Lost {
		if r.First < cut {
			r.Last = min(r.Last, cut-1)
			lost = append(lost, r)
			pp.LostOffsets += r.Len()
		}
	}
	pp.Lost = lost
	var gaps []Gap
	for _, g := range pp.Gaps {
		if g.First >= cut {
			continue
		}
		if g.Last >= cut {
			g.Last = cut - 1
		}
		gaps = append(gaps, g)
	}
	pp.Gaps = gaps
	starts := map[string]int64{}
	for _, o := range pp.Objects {
		starts[o.Key] = o.StartOffset
	}
	var damaged []DamagedObject
	for _, d := range pp.Damaged {
		if start, ok := starts[d.Key]; ok && start >= cut {
			continue
		}
		damaged = append(damaged, d)
	}
	pp.Damaged = damaged
}

// pastCutError refuses jobs whose target already holds more records of
// this restore than the cut lets through.
func pastCutError(jobs []job) error {
	var bad []string
	for _, j := range jobs {
		c := j.part.Cut
		if c == nil {
			continue
		}
		if already := j.end - j.start; already > j.part.Records {
			bad = append(bad, fmt.Sprintf("%s/%d holds %d records of this restore (from offset %d, marker group %q), the cut at source offset %d lets %d through",
				j.topic.Target, j.part.Partition, already, j.start, MarkerGroup(j.topic.Target), c.Offset, j.part.Records))
		}
	}
	if len(bad) == 0 {
		return nil
	}
	return fmt.Errorf("%w (nothing was produced): %s; an earlier restore with a later --until (or none) went past this cut, "+
		"or another producer wrote there, and records cannot be taken back: "+
		"restore into another topic (--topic-rename), or delete and recreate the target and its marker group",
		ErrPastCut, strings.Join(limitList(bad, 20), "; "))
}

// refusedCuts returns ErrNoPointInTime for the partitions without a cut.
func refusedCuts(plan *Plan) error {
	var bad []string
	for _, t := range plan.Topics {
		for _, pp := range t.Parts {
			if pp.Cut != nil && pp.Cut.Refused != "" {
				bad = append(bad, fmt.Sprintf("%s/%d: %s", t.Source, pp.Partition, pp.Cut.Refused))
			}
		}
	}
	if len(bad) == 0 {
		return nil
	}
	return fmt.Errorf("%w (nothing was produced): %s", ErrNoPointInTime, strings.Join(limitList(bad, 20), "; "))
}

// untilSnapshots returns the topic's newest snapshot at or before Until
// and its oldest one after it (either nil).
// Only those two are read. Without Config.IndexPrefix there are none.
func (r *Restorer) untilSnapshots(ctx context.Context, topic string) (prev, next *cutSnapshot, err error) {
	if r.cfg.IndexPrefix == "" {
		return nil, nil, nil
	}
	names, err := index.ListSnapshots(ctx, r.store, r.cfg.IndexPrefix, topic)
	if err != nil {
		return nil, nil, fmt.Errorf("--until: %w", err)
	}
	until := r.untilMS()
	var prevName, nextName *index.SnapshotName
	for i := range names { // newest first
		if names[i].TimeMS <= until {
			prevName = &names[i]
			break
		}
		nextName = &names[i]
	}
	read := func(n *index.SnapshotName) (*cutSnapshot, error) {
		if n == nil {
			return nil, nil
		}
		s, err := index.ReadSnapshot(ctx, r.store, n.Key)
		if err != nil {
			return nil, fmt.Errorf("--until: %w", err)
		}
		if s.Topic != topic || s.TimeMS != n.TimeMS {
			return nil, fmt.Errorf("--until: %w: snapshot %q says topic %q at %d ms, its key says topic %q at %d ms",
				index.ErrMalformed, n.Key, s.Topic, s.TimeMS, topic, n.TimeMS)
		}
		return &cutSnapshot{key: n.Key, timeMS: s.TimeMS, ends: s.EndOffsets, snap: s}, nil
	}
	if prev, err = read(prevName); err != nil {
		return nil, nil, err
	}
	if next, err = read(nextName); err != nil {
		return nil, nil, err
	}
	return prev, next, nil
}

// UntilSnapshot returns the snapshot the topic's cuts start from (the
// newest at or before Config.Until) and its key, or nil and "" without
// Until or without such a snapshot. Its group offsets were taken at the
// same moment as the end offsets the cuts use: --restore-groups restores
// those.
func (t *TopicPlan) UntilSnapshot() (*index.Snapshot, string) {
	if t.cutSnapshot == nil {
		return nil, ""
	}
	return t.cutSnapshot.snap, t.cutSnapshot.key
}

// markPastCut marks the objects of pp that the archive index shows wholly
// past any cut the partition can get, so the plan's proof does not read
// them (Object.unread): objects whose live entry matches the listing,
// holds only records stamped after Until (min_ts), and starts at or after
// U = max(snapshot end, min(next snapshot's end, the first offset of such
// objects)). The cut is at most U: each marked object's first offset
// bounds the timestamp cut (cutPartition counts it, stamped after Until),
// the next snapshot's end bounds it too, and a snapshot cut is the
// snapshot's end. Nothing else is skipped: objects before the cut are
// read for the proof and to be produced.
func (r *Restorer) markPastCut(pp *PartitionPlan, ai *archiveIndex, prev, next *cutSnapshot) {
	if ai == nil {
		return
	}
	until := r.untilMS()
	var cand []int
	minFirst := int64(-1)
	for i := range pp.Objects {
		o := &pp.Objects[i]
		e := ai.live(o.Key)
		if e == nil || e.MinTS <= until || (entryMatch{o, e}).listing() != nil {
			continue
		}
		cand = append(cand, i)
		if minFirst < 0 || e.First() < minFirst {
			minFirst = e.First()
		}
	}
	if len(cand) == 0 {
		return
	}
	bound := minFirst
	if next != nil {
		if e, ok := next.ends[pp.Partition]; ok {
			bound = min(bound, e)
		}
	}
	if prev != nil {
		bound = max(bound, prev.ends[pp.Partition])
	}
	for _, i := range cand {
		if ai.live(pp.Objects[i].Key).First() >= bound {
			pp.Objects[i].unread = true
		}
	}
}

// PartitionEnd is a partition and an end offset.
type PartitionEnd struct {
	Partition int32
	End       int64
}

// unarchived returns the partitions of shard snap shows with records (end
// offset above 0) that t has no partition plan for, by partition; other
// shards' partitions are theirs to report.
func unarchived(t *TopicPlan, snap *cutSnapshot, shard Shard) []PartitionEnd {
	have := map[int32]bool{}
	for _, pp := range t.Parts {
		have[pp.Partition] = true
	}
	var out []PartitionEnd
	for p, e := range snap.ends {
		if e > 0 && !have[p] && shard.Owns(t.Source, p) {
			out = append(out, PartitionEnd{Partition: p, End: e})
		}
	}
	sort.Slice(out, func(a, b int) bool { return out[a].Partition < out[b].Partition })
	return out
}
