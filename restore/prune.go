package restore

import (
	"crypto/sha256"
	"encoding"
	"errors"
	"fmt"
	"hash"

	"github.com/kafkas3/kafkas3/index"
)

// Follow mode lets go of what it restored
//
// A follower's passes would otherwise plan the whole archive each time:
// every object listed, every index entry held (index.Tail), every object
// in the plan, growing with the archive however little is new. So once a
// pass completes, each partition whose plan was whole (every object
// matched its index entry, no gap, no damage, no orphan twin: eligible)
// gets a mark (pruneMark) at the end of its restored stream: the source
// offset after the last record restored (end), the highest index commit
// then (commit), the records and segments restored, and a fingerprint of
// every object listed below end (a count, bytes and a sum of a hash of
// key, ETag and size: listPrint). Later plans of the partition leave out
// what lies below the mark:
//
//   - the listing counts the objects below end into a fingerprint and
//     keeps none of them (listing.below);
//   - the Tail lets go of the entries below end at or below commit
//     (index.Tail.Prune), and the plan drops those it is given again
//     (pruneIndex);
//   - the plan's stream starts after the restored records
//     (PartitionPlan.base), its production at the marker's start plus
//     their count (job.start).
//
// A partition's objects and entries all lie below the mark or above it
// (an entry's records end before the commit it was written at), so the
// stream of the objects above it is the rest of the whole archive's
// stream, segment for segment. Whatever would make it otherwise stops
// the pruned plan before anything is produced (errPruneStale) and the
// whole archive is planned again, as before any mark, with the Tail
// loaded again: the fingerprint below the mark changed (an object
// appeared, went or was rewritten there), a live entry below the mark
// was written after it (a sink's replay restamped it), the entries above
// it do not start at its commit (a gap) or record offsets below it as
// lost (a second writer, a group moved back: only the whole index counts
// those right), or an object above it has no entry. That plan is then
// checked against the stream already restored (checkStreams, with the
// mark's digest of the segments below it) and restored as any plan is;
// it lets go of the marks of partitions it does not hold.
//
// A topic whose plan holds nothing new still has its pass (it starts at
// marks: Restorer.topicsWithObjects), so its resume markers are committed
// again each pass and do not expire under offsets.retention.minutes; a
// marker that is gone all the same is this process's start again
// (partitionMarker, from Restorer.memo), never a fresh start.
//
// So what a follower keeps across passes is, per partition, its mark and
// its stream summary, and each plan holds the objects and entries added
// since the last mark: none of it grows with the archive. The listing
// still lists the whole topic folder each pass (1,000 keys a request).

// errPruneStale is wrapped when a pruned plan cannot be made (see above):
// the archive is planned again whole.
var errPruneStale = errors.New("the archive changed below what earlier passes restored")

// pruneMark is where a partition's restored stream ends, for a follower's
// later plans to leave out what lies before it.
type pruneMark struct {
	end     int64 // source offset after the last record restored
	commit  int64 // the partition's highest index commit then
	records int64 // records of the stream before end
	// segments counts the stream's segments before end; digest is the
	// state of a SHA-256 of all of them but the last (digestSegments's
	// encoding), last the last.
	segments int
	digest   []byte
	last     streamPart
	below    listPrint // the objects listed below end
	// objects, lost and duplicates add up what the plans left out: value
	// and tombstone objects, offsets lost before archiving, duplicate
	// records (for the summary).
	objects          int
	lost, duplicates int64
}

// listPrint is a fingerprint of a set of listed objects: their count,
// bytes and the sum of a hash of each one's key, ETag and size, which
// does not depend on the listing's order.
type listPrint struct {
	n     int
	bytes int64
	sum   uint64
}

// add adds one listed object: FNV-1a of its key, a zero byte, its ETag
// and its size (8 bytes, little-endian), computed in place (the listing
// adds every object below a mark, each pass).
func (p *listPrint) add(key, etag string, size int64) {
	const offset, prime = 14695981039346656037, 1099511628211
	h := uint64(offset)
	for i := 0; i < len(key); i++ {
		h = (h ^ uint64(key[i])) * prime
	}
	h *= prime // the zero byte
	for i := 0; i < len(etag); i++ {
		h = (h ^ uint64(etag[i])) * prime
	}
	for i := range 8 {
		h = (h ^ uint64(byte(size>>(8*i)))) * prime
	}
	p.n++
	p.bytes += size
	p.sum += h
}

// merge adds q to p.
func (p *listPrint) merge(q listPrint) {
	p.n, p.bytes, p.sum = p.n+q.n, p.bytes+q.bytes, p.sum+q.sum
}

// printed is one object a plan kept, with its start offset, for the next
// mark's fingerprint.
type printed struct {
	start int64
	print listPrint
}

// prints returns the fingerprints of objs (one partition's, as take
// returned them with their ETags): each value or tombstone object with
// its twins.
func prints(objs []Object, etags []string) []printed {
	out := make([]printed, len(objs))
	for i := range objs {
		o := &objs[i]
		p := printed{start: o.StartOffset}
		p.print.add(o.Key, etags[i], o.Size)
		if o.twins != nil {
			for _, tw := range []twinObject{o.twins.keys, o.twins.headers} {
				if tw.key != "" && tw.key != o.Key {
					p.print.add(tw.key, tw.etag, tw.size)
				}
			}
		}
		out[i] = p
	}
	return out
}

// prunedOut tells whether a listed object of Kafka partition tp starting
// at start lies below the partition's mark; it is then added to the
// partition's fingerprint below the mark, not kept.
func (l *listing) prunedOut(tp topicPartition, start int64, key, etag string, size int64) bool {
	m, ok := l.marks[tp]
	if !ok || start >= m.end {
		return false
	}
	p := l.below[tp]
	p.add(key, etag, size)
	l.below[tp] = p
	return true
}

// checkBelow refuses (errPruneStale) a pruned plan of tp whose objects
// below the mark are not those the mark listed.
func checkBelow(tp topicPartition, m *pruneMark, now listPrint) error {
	if now == m.below {
		return nil
	}
	return fmt.Errorf("%w: %s/%d: below source offset %d the listing shows %d objects (%d bytes), %d were restored (%d bytes), or they were rewritten",
		errPruneStale, tp.topic, tp.part, m.end, now.n, now.bytes, m.below.n, m.below.bytes)
}

// pruneIndex drops from ai (a marked partition's index) the keys whose
// live entry lies below the mark, written at or before its commit: their
// objects were restored. A live entry below the mark written after it,
// or entries above it that do not start at its commit, make the pruned
// plan stale. It returns the index of what is left, commit at least the
// mark's (never nil).
func pruneIndex(tp topicPartition, ai *archiveIndex, m *pruneMark) (*archiveIndex, error) {
	out := &archiveIndex{topic: tp.topic, part: tp.part, byKey: map[string][]*index.Entry{}, commit: m.commit}
	if ai == nil {
		return out, nil
	}
	out.commit = max(out.commit, ai.commit)
	from := int64(-1)
	for _, key := range ai.keys {
		e := ai.live(key)
		if e.First() < m.end {
			if e.Commit > m.commit {
				return nil, fmt.Errorf("%w: %s/%d: the archive index entry of %q (source offsets from %d) was written at commit %d, after the restored stream's last commit %d",
					errPruneStale, tp.topic, tp.part, key, e.First(), e.Commit, m.commit)
			}
			continue
		}
		for _, e := range ai.byKey[key] {
			for _, l := range e.Lost {
				if l.First < m.commit {
					// Lost offsets below the mark: entries left out below
					// it may hold them (a second writer, a group moved
					// back); only the whole index counts them right.
					return nil, fmt.Errorf("%w: %s/%d: the archive index entry of %q records offsets from %d lost, below the restored stream's last commit %d",
						errPruneStale, tp.topic, tp.part, key, l.First, m.commit)
				}
			}
		}
		out.keys = append(out.keys, key)
		out.byKey[key] = ai.byKey[key]
		if from < 0 || e.From < from {
			from = e.From
		}
	}
	if from > m.commit {
		return nil, fmt.Errorf("%w: %s/%d: the archive index's entries after the restored stream start at source offset %d, its last commit was %d",
			errPruneStale, tp.topic, tp.part, from, m.commit)
	}
	return out, nil
}

// checkEntries refuses (errPruneStale) a pruned plan in which an object
// above the mark has no index entry (ai: the pruned index): the whole
// plan places it.
func checkEntries(tp topicPartition, objs []Object, ai *archiveIndex) error {
	for i := range objs {
		if len(ai.byKey[objs[i].Key]) == 0 {
			return fmt.Errorf("%w: %s/%d: %q has no archive index entry", errPruneStale, tp.topic, tp.part, objs[i].Key)
		}
	}
	return nil
}

// nextMark is the mark pp (planned from base, nil for a whole plan) gives
// its partition once its pass completes, or nil when pp is not eligible
// (see above): below is the fingerprint of what the listing left out,
// kept of what it kept, commit the index's highest commit.
func nextMark(pp *PartitionPlan, base *pruneMark, below listPrint, kept []printed, commit int64, orphans int) *pruneMark {
	if orphans > 0 || len(pp.Gaps) > 0 || len(pp.Damaged) > 0 || pp.Order == OrderUnknown || pp.Cut != nil {
		return nil
	}
	if len(pp.Objects) > 0 && pp.Basis != BasisIndex {
		return nil
	}
	for i := range pp.Objects {
		if pp.Objects[i].Damage != nil {
			return nil
		}
	}
	m := &pruneMark{commit: commit, below: below}
	h := sha256.New()
	if base != nil {
		m.end, m.records, m.segments, m.last = base.end, base.records, base.segments, base.last
		m.objects, m.lost, m.duplicates = base.objects, base.lost, base.duplicates
		m.commit = max(m.commit, base.commit)
		if err := h.(encoding.BinaryUnmarshaler).UnmarshalBinary(base.digest); err != nil {
			return nil
		}
	}
	if pp.LastOffset >= 0 {
		m.end = max(m.end, pp.LastOffset+1)
	}
	for _, p := range kept {
		if p.start < m.end {
			m.below.merge(p.print)
		}
	}
	for i, s := range pp.segments {
		if i > 0 || m.segments > 0 {
			writePart(h, m.last)
		}
		m.last = partOf(pp, s)
	}
	state, err := h.(encoding.BinaryMarshaler).MarshalBinary()
	if err != nil {
		return nil
	}
	m.digest = state
	m.records += pp.Records
	m.segments += len(pp.segments)
	m.objects += len(pp.Objects)
	m.lost += pp.LostOffsets
	m.duplicates += pp.Duplicates
	return m
}

// sum is the SHA-256 of the segments below the mark.
func (m *pruneMark) sum() [sha256.Size]byte {
	var out [sha256.Size]byte
	h := sha256.New()
	if err := h.(encoding.BinaryUnmarshaler).UnmarshalBinary(m.digest); err != nil {
		return out
	}
	h.Sum(out[:0])
	return out
}

// writeSegments writes pp's segments [from, to) to h (writePart).
func writeSegments(h hash.Hash, pp *PartitionPlan, from, to int) {
	for _, s := range pp.segments[from:to] {
		writePart(h, partOf(pp, s))
	}
}

// writePart writes one segment to h: its object's key (with its length),
// its records and its first source offset.
func writePart(h hash.Hash, s streamPart) {
	var b [24]byte
	putUint64(b[:8], uint64(len(s.key)))
	h.Write(b[:8])
	h.Write([]byte(s.key))
	putUint64(b[:8], uint64(s.from))
	putUint64(b[8:16], uint64(s.to))
	putUint64(b[16:], uint64(s.first))
	h.Write(b[:])
}

// putUint64 puts v into b big-endian.
func putUint64(b []byte, v uint64) {
	for i := range 8 {
		b[i] = byte(v >> (56 - 8*i))
	}
}
