package restore

import (
	"context"
	"crypto/sha256"
	"errors"
	"fmt"
	"sort"

	"github.com/kafkas3/kafkas3/index"
	"github.com/kafkas3/kafkas3/s3store"
)

// Follow mode
//
// With Config.Follow, Run re-plans every PollInterval and restores what is
// new: new objects, and new folders (time periods, field values) the same
// way, since every pass lists the whole topic folder. Each plan reads the
// archive index through an index.Tail per topic (Restorer.tails), which
// reads only the index objects added or rewritten since the last plan,
// and leaves out what earlier passes restored below each partition's
// mark (prune.go).
// Within one process it remembers, per partition, a summary of the stream
// the last pass restored (streamSummary: segment count, a digest, the last
// segment, the highest index commit its objects matched) and where each
// target partition ended, so later passes neither re-read old objects nor
// re-verify the target. An object whose newest index entry that summary
// covers takes its entry's word (restoredEntry, trustEntry); what the
// proof read is kept only of objects without an entry (nothing else says
// what they hold).
// None of this grows with the objects restored.
//
// Each pass's stream must be a prefix of the next one's. A sink commits a
// rotation as: upload every open folder's object, write their index
// entries, commit the offset; a pass can fall in between (inflight.go).
// An object the index names that the listing missed (uploaded while
// listing, the index read after) is looked up (completeListing), not taken
// for missing. In follow mode, objects of indexed topics that have no
// entry and start at or after their partition's last indexed commit are
// a rotation under way: deferInFlight leaves them for a later pass
// (Plan.Deferred), when their entries say where their records go. Without
// an index, follow mode restores what each pass lists; with several
// folders their order is unknown (see above). Whatever the archive,
// each pass checks that every partition's stream starts with what the
// previous pass restored (checkStreams; the last object may have grown);
// when it does not (an object appeared that belongs before records
// already produced, as a half-uploaded rotation without index can cause),
// the run stops with ErrStreamChanged before producing anything of that
// pass, instead of resuming by count into skipped and repeated records.

// The sink commits a rotation in three steps: it uploads every object of
// the rotation (one per open folder of the Kafka partition: time periods,
// field values), then writes their index entries in one index object,
// then commits the consumer offset. A plan made meanwhile can see some of
// a rotation's objects and not others. With one folder that is harmless
// (the objects not seen yet come after those seen); with several, an
// object not seen yet can hold offsets between those of objects seen, and
// a pass that restored the ones it saw would have produced records out of
// order. Two rules keep every pass's stream a prefix of the next one's:
// completeListing and deferInFlight.

// topicNames returns the chosen topics the listing saw (or named), sorted.
func (l *listing) topicNames() []string {
	out := make([]string, 0, len(l.topics))
	for t := range l.topics {
		out = append(out, t)
	}
	sort.Strings(out)
	return out
}

// completeListing adds to l the objects of ai's live entries (one
// partition's) that the listing did not see. The index is read after the
// listing, and the sink writes an entry only after its objects are
// complete, so such an object was uploaded while the archive was being
// listed: it is there (Stat), and counting it missing would make a
// damaged object of it. An object the store does not hold stays missing;
// the plan reports it.
func (r *Restorer) completeListing(ctx context.Context, l *listing, ai *archiveIndex) error {
	if ai == nil {
		return nil
	}
	tp := topicPartition{ai.topic, ai.part}
	listed := l.listedKeys(tp)
	for _, key := range ai.keys {
		for _, ob := range ai.live(key).Objects {
			if listed[ob.Key] {
				continue
			}
			if name, err := r.cfg.Keys.ParseObjectKey(ob.Key); err != nil || (topicPartition{name.Topic, name.Partition}) != tp {
				continue // not this partition's name: stays missing
			}
			info, err := r.store.Stat(ctx, ob.Key)
			switch {
			case errors.Is(err, s3store.ErrNotExist):
				continue
			case err != nil:
				return fmt.Errorf("look up %q, which the archive index names and the listing did not show: %w", ob.Key, err)
			}
			l.mu.Lock()
			err = r.visit(l, info)
			l.mu.Unlock()
			if err != nil {
				return err
			}
			listed[ob.Key] = true
		}
	}
	return nil
}

// deferInFlight takes out of objs (one partition's), in follow mode, the
// objects of a topic with archive index entries (indexed) that have no
// entry and start at or after the last commit the index shows for their
// partition (ai; 0 without entries): a rotation whose entries are not
// written yet. The next pass takes them with their entries. It returns
// the objects kept, their ETags (etags holds objs') and how many it
// deferred.
//
// Without follow nothing is deferred: such objects are restored as
// objects without an entry (BasisMixed), as left by a sink that stopped
// between upload and index; in several folders their order is unknown
// (OrderUnknown) and the plan says so.
func (r *Restorer) deferInFlight(tp topicPartition, objs []Object, etags []string, ai *archiveIndex, indexed bool) ([]Object, []string, int) {
	if !r.cfg.Follow || !indexed {
		return objs, etags, 0
	}
	commit := int64(0)
	if ai != nil {
		commit = ai.commit
	}
	kept, keptTags := objs[:0], etags[:0]
	for i, o := range objs {
		if (ai == nil || len(ai.byKey[o.Key]) == 0) && o.StartOffset >= commit {
			r.log.Debug("object not in the archive index yet (a sink commit under way): left for the next pass",
				"key", o.Key, "index_commit", commit)
			continue
		}
		kept, keptTags = append(kept, o), append(keptTags, etags[i])
	}
	d := len(objs) - len(kept)
	if d > 0 {
		r.log.Info("objects without an archive index entry after the partition's last indexed commit (a sink commit under way) are left for the next pass; "+
			"objects that never get an entry (written by Confluent's connector) are restored by a run without --follow",
			"topic", tp.topic, "partition", tp.part, "objects", d, "index_commit", commit)
	}
	return kept, keptTags, d
}

// ErrStreamChanged is wrapped when, in follow mode, a pass finds that a
// partition's record stream no longer starts with what earlier passes
// restored: an object appeared (or changed) whose records belong before
// records already produced. Resuming by count would then skip and repeat
// records, so the run stops before producing anything of that pass.
var ErrStreamChanged = errors.New("the archive's record stream changed under records already restored")

// streamPart is one segment of a partition's stream as a later pass
// compares it: the object's key and the records of it the segment takes.
type streamPart struct {
	key      string
	from, to int64
	first    int64
}

// streamSummary is what follow mode keeps of a partition's stream as the
// last pass restored it, for checkStreams: its segment count, a SHA-256 of
// every segment but the last from the plan's first (base segments precede
// it: its mark's, prune.go), and the last (which may grow). It does not
// grow with the stream: a pass compares the first segments of its plan
// with the digest, not with a kept copy of them. objects and bytes are
// the plan's partition's above the partition's mark (listedNew); commit
// is the highest commit of the index entries its objects matched
// (restoredEntry), -1 without one; mark is the partition's mark, nil
// without one.
type streamSummary struct {
	base     int
	segments int
	prefix   [sha256.Size]byte
	last     streamPart
	objects  int
	bytes    int64
	commit   int64
	mark     *pruneMark
}

// partOf is segment s of pp as streamSummary keeps it.
func partOf(pp *PartitionPlan, s segment) streamPart {
	return streamPart{key: pp.Objects[s.obj].Key, from: s.from, to: s.to, first: s.first}
}

// digestSegments is the SHA-256 of pp's segments [from, to).
func digestSegments(pp *PartitionPlan, from, to int) [sha256.Size]byte {
	h := sha256.New()
	writeSegments(h, pp, from, to)
	var out [sha256.Size]byte
	h.Sum(out[:0])
	return out
}

// rememberStreams keeps a summary of each partition's stream of plan
// (follow mode), for checkStreams on the next pass, and gives each
// partition whose plan is eligible its next mark (prune.go), letting go
// of the index entries below it (index.Tail.Prune). The objects the pass
// counted (Restorer.covered) are now earlier ones (stream.earlier): their
// keys are let go; so are the proofs of the objects that matched an index
// entry (restoredEntry stands in for them).
func (r *Restorer) rememberStreams(plan *Plan) {
	if !r.cfg.Follow {
		return
	}
	if plan.whole {
		r.dropMarksOutside(plan)
	}
	for _, t := range plan.Topics {
		for i := range t.Parts {
			pp := &t.Parts[i]
			tp := topicPartition{t.Source, pp.Partition}
			base := pp.baseSegments()
			sum := streamSummary{base: base, segments: base + len(pp.segments), objects: len(pp.Objects), bytes: pp.Bytes, commit: -1, mark: pp.base}
			if n := len(pp.segments); n > 0 {
				sum.prefix = digestSegments(pp, 0, n-1)
				sum.last = partOf(pp, pp.segments[n-1])
			}
			if m := pp.next; m != nil && !r.whole {
				// Nothing restored lies after the new mark.
				sum.mark, sum.base, sum.segments, sum.objects, sum.bytes = m, m.segments, m.segments, 0, 0
				sum.prefix, sum.last = [sha256.Size]byte{}, streamPart{}
				r.pruneTail(tp, m)
			}
			r.mu.Lock()
			for _, o := range pp.Objects {
				switch {
				case o.Damage != nil:
					r.damaged[o.Key] = true // skipped (behavior.on.error): read again, not taken at its entry's word
				case o.checks != nil:
					sum.commit = max(sum.commit, o.checks.commit)
					delete(r.proved, o.Key)
					delete(r.damaged, o.Key)
				}
			}
			r.streams[tp] = sum
			delete(r.covered, tp)
			r.mu.Unlock()
		}
	}
}

// dropMarksOutside lets go of the marks of the partitions a whole plan
// does not hold (their objects and entries are gone): a later plan would
// find their fingerprint changed every time and plan the whole archive.
func (r *Restorer) dropMarksOutside(plan *Plan) {
	in := map[topicPartition]bool{}
	for _, t := range plan.Topics {
		for _, pp := range t.Parts {
			in[topicPartition{t.Source, pp.Partition}] = true
		}
	}
	r.mu.Lock()
	defer r.mu.Unlock()
	for tp, sum := range r.streams {
		if sum.mark != nil && !in[tp] {
			sum.mark = nil
			r.streams[tp] = sum
		}
	}
}

// restoredEntry tells whether o, listed as e (its newest index entry
// that the listing matches), was restored by an earlier pass (follow
// mode): e's commit is at most the highest one that the last completed
// pass's objects matched in e's partition, and o was not found damaged
// then (Restorer.damaged). Each completed pass restored every object of
// its plan but the damaged ones it skipped, and the plan held every
// object the index named then (checkStreams: the stream has only grown
// since), so such an object was proved then, and its entry, which it
// matched, stands in for that proof (its records and offsets) without
// reading it again. Its listing still has to match the entry
// (archiveIndex.listed), and the read that produces it, if any, is
// checked against the entry (oneread.go).
func (r *Restorer) restoredEntry(o *Object, e *index.Entry) bool {
	if !r.cfg.Follow {
		return false
	}
	r.mu.Lock()
	defer r.mu.Unlock()
	sum, ok := r.streams[topicPartition{e.Topic, e.Partition}]
	return ok && e.Commit <= sum.commit && !r.damaged[o.Key]
}

// restoredSegments is how many segments of the source partition's stream
// earlier passes restored (0 without follow mode, or before a pass).
func (r *Restorer) restoredSegments(topic string, p int32) int {
	r.mu.Lock()
	defer r.mu.Unlock()
	return r.streams[topicPartition{topic, p}].segments
}

// marks returns the partitions' marks (follow mode, prune.go) for a
// plan that leaves out what lies below them: none when the archive is to
// be planned whole (Restorer.whole).
func (r *Restorer) marks() map[topicPartition]*pruneMark {
	r.mu.Lock()
	defer r.mu.Unlock()
	out := map[topicPartition]*pruneMark{}
	if r.whole {
		return out
	}
	for tp, sum := range r.streams {
		if sum.mark != nil {
			out[tp] = sum.mark
		}
	}
	return out
}

// pruneTail lets the Tail of tp's topic go of the entries below mark m.
func (r *Restorer) pruneTail(tp topicPartition, m *pruneMark) {
	if t := r.tails[tp.topic]; t != nil {
		t.Prune(index.LogPartition{Topic: tp.topic, Partition: tp.part}, func(e *index.Entry) bool {
			return e.First() < m.end && e.Commit <= m.commit
		})
	}
}

// checkStreams refuses a plan (follow mode) in which a partition's stream
// does not start with the stream the previous pass restored
// (ErrStreamChanged). With the archive index, deferInFlight keeps streams
// growing at their end; without it, the order of objects of several
// folders is unknown (OrderUnknown), and a pass that listed a rotation half
// uploaded can see, on the next, an object that belongs before records it
// produced: this check stops the run then, instead of resuming by count
// into skipped and repeated records. The last segment restored may have
// grown: a partial object the sink uploaded and rewrote as a superset
// under the same key.
func (r *Restorer) checkStreams(plan *Plan) error {
	for _, t := range plan.Topics {
		for i := range t.Parts {
			pp := &t.Parts[i]
			r.mu.Lock()
			old, ok := r.streams[topicPartition{t.Source, pp.Partition}]
			r.mu.Unlock()
			if !ok || old.segments <= pp.baseSegments() {
				continue // nothing restored after the plan's mark
			}
			if !sameStream(pp, old) {
				n, o := old.segments, old.lastPart()
				return fmt.Errorf("%w: %s/%d: the %d segments of the stream restored by earlier passes (the last: records %d..%d of %q, source offsets from %d) are no longer the stream's first "+
					"(an object appeared or changed that belongs before them; its order is %s): nothing more is produced; "+
					"what the target holds is the earlier order, restore again into a new topic to get the archive's current order",
					ErrStreamChanged, t.Source, pp.Partition, n, o.from, o.to-1, o.key, o.first, pp.OrderText())
			}
		}
	}
	return nil
}

// sameStream tells whether pp's stream starts with old's, the stream
// restored, counting segments from the stream's first: pp starts at a
// mark (prune.go) that old's plan started at, or, planned whole, before
// it. The segments below old's mark are compared with the mark's digest
// and last segment, the others with old's; the last segment restored may
// have grown.
func sameStream(pp *PartitionPlan, old streamSummary) bool {
	at := old.base - pp.baseSegments() // old's plan's first segment in pp
	n := old.segments - pp.baseSegments()
	if at < 0 || len(pp.segments) < n {
		return false
	}
	if at > 0 {
		m := old.mark
		if m == nil || m.segments != old.base || digestSegments(pp, 0, at-1) != m.sum() ||
			!grownFrom(partOf(pp, pp.segments[at-1]), m.last, at == n) {
			return false
		}
	}
	if n == at {
		return true
	}
	return digestSegments(pp, at, n-1) == old.prefix && grownFrom(partOf(pp, pp.segments[n-1]), old.last, true)
}

// lastPart is the last segment restored.
func (s streamSummary) lastPart() streamPart {
	if s.segments == s.base && s.mark != nil {
		return s.mark.last
	}
	return s.last
}

// grownFrom tells whether segment now is segment was, or (mayGrow) was
// grown: the same object's records from the same one on, more of them.
func grownFrom(now, was streamPart, mayGrow bool) bool {
	return now == was || mayGrow && now.key == was.key && now.from == was.from && now.first == was.first && now.to >= was.to
}

// retained counts what the Restorer keeps across passes that could grow
// with what it restored: the proofs kept (objects read by a plan's
// proof), the objects counted since the last completed pass
// (Restorer.covered), the stream summaries, the target partitions'
// memos and the index entries the Tails hold. In follow mode with the
// archive index, only the summaries and memos remain after a pass, one
// per partition, once each partition has a mark (prune.go).
func (r *Restorer) retained() int {
	r.mu.Lock()
	defer r.mu.Unlock()
	n := len(r.proved) + len(r.streams) + len(r.memo) + len(r.damaged)
	for _, m := range r.covered {
		n += len(m)
	}
	for _, t := range r.tails {
		n += t.Held()
	}
	return n
}
