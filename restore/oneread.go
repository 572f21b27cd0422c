package restore

import (
	"errors"
	"fmt"

	"github.com/kafkas3/kafkas3/index"
)

// One read per object. With the archive index, a restore's plan does not
// read the objects: each object the listing shows as its live index entry
// says (every part there, at the entry's sizes) takes the entry's word
// for its records (entryFacts): their count, their offsets (the entry's
// runs), the largest record's size and the records without a key
// (max_record_bytes and null_keys of entries that record them). The
// partition's record stream, gaps, overlaps and order then come from the
// entries alone, and an entry whose objects are not listed, or listed at
// another size, is damaged before anything is produced. What the store
// says of an object without a download is checked too (entryMatch.stored): the
// ETag the listing gives against the one the entry records, and where
// they differ or one is missing, the CRC32C the store keeps (one HEAD).
// An object the store shows was written again with other bytes (a
// repair gone wrong, a tool that rewrote it) is read by the plan, as
// without one read, and refused before anything is produced.
//
// Each such object is then read once, to produce it (loadObject):
// downloaded, checksummed and decoded in full, and checked against its
// entry (entryMatch.read: the CRC32C and SHA-256 of each part, the record
// count, carried offsets) and against the target (checkSize, and
// checkNullKeysLoaded for a compacting target) before its first record is
// produced. Damage found then stops the restore at that object's
// boundary: nothing of the object is produced, every partition stream
// stops (what each handed to the producer lands, a prefix of its
// stream), and Run returns an error that names the object, the partition
// and its first offset. A re-run resumes exactly, from the markers and
// the end offsets, once the object is repaired.
//
// Run reads once (Restorer.oneRead) with Config.ReadOnce (kafkas3
// source's default; --prove-first turns it off), except in a dry run and
// with behavior.on.error ignore or log, Config.AllowGaps or Config.Until:
// those keep the whole-archive proof, as an archive without index does.
// Skipping a damaged object (ignore, log, AllowGaps) must be decided
// before the first record of the partition is produced: the stream's
// record numbers, and so the resume by count, depend on it. And a --until
// cut is refined by the records' timestamps, which only a read gives. The
// plan still reads the objects that have no index entry.

// ReadsOnce tells whether Run reads each indexed object once, when it is
// restored, rather than first for a whole-archive proof (Config.ReadOnce,
// outside a dry run, behavior.on.error=fail, without AllowGaps and Until).
func (r *Restorer) ReadsOnce() bool { return r.readsOnce() }

// readsOnce tells whether Run's plans read each indexed object once, when
// it is restored, rather than first for a whole-archive proof.
func (r *Restorer) readsOnce() bool {
	c := &r.cfg
	return c.ReadOnce && !c.DryRun && c.OnError == OnErrorFail && !c.AllowGaps && c.Until.IsZero()
}

// entryFacts is an object's facts as its index entry gives them: its
// records (count, offsets) and, when the entry records them, its
// largest record's size and its records without a key (index of the
// first not known: -1). Its digests are zero: nothing was read.
func entryFacts(e *index.Entry) *objectFacts {
	f := &objectFacts{
		records: e.Records, offsets: entryRuns(e),
		largestIdx: -1, largestSize: e.MaxRecordBytes,
		nullKeys: e.NullKeys, nullKeyIdx: -1,
	}
	if e.Envelope && e.Records > 0 {
		f.stamps = stampRange{lo: e.MinTS, hi: e.MaxTS, ok: true}
	}
	return f
}

// trustEntry gives o, listed as entries say (ai.listed), the facts
// of its newest such entry without reading it (one read per object: it
// is read when restored, and checked then against that entry).
func trustEntry(o *Object, entries []*index.Entry) {
	e := entries[0]
	o.entry, o.envelope = e, envelopeMode(e)
	o.sha256 = anySHA256(entries[:1])
	o.facts = entryFacts(e)
	o.fromIndex = true
}

// checkLoaded checks what reading obj to produce it computed: against its
// index entry when the plan took the entry's word (Object.fromIndex),
// else against the proof's read of it (sameAsProved).
func checkLoaded(obj *Object, now objectFacts) error {
	switch {
	case obj.fromIndex && obj.checks != nil:
		return entryMatch{obj, obj.checks.entry(obj)}.read(now)
	case obj.facts == nil:
		return nil
	case obj.fromIndex:
		return entryMatch{obj, obj.entry}.read(now)
	}
	return sameAsProved(obj, now, *obj.facts)
}

// stoppedAt wraps err, the reason object i of job j cannot be produced,
// naming the object, the source and target partitions and the object's
// first offset; nothing of the object was produced.
func stoppedAt(j job, obj Object, err error) error {
	first := int64(-1)
	if len(obj.Offsets) > 0 {
		first = obj.Offsets[0].First
	} else if obj.facts == nil {
		first = obj.StartOffset
	}
	what := "the object"
	if errors.Is(err, ErrDamagedObject) {
		what = "the damaged object"
	}
	return fmt.Errorf("%s/%d stopped before object %q (source %s/%d, first offset %d): nothing of %s was produced: %w",
		j.topic.Target, j.part.Partition, obj.Key, j.topic.Source, j.part.Partition, first, what, err)
}

// checkNullKeysLoaded refuses a loaded object holding records without a
// key when its target compacts (the broker would refuse them), before
// the first of them is produced: the plan checked the objects whose
// facts count them, this checks every object again as
// it is read (entries written before null_keys was recorded say
// nothing).
func (r *Restorer) checkNullKeysLoaded(j job, obj Object, facts objectFacts) error {
	r.mu.Lock()
	compacted := r.compacted[j.topic.Target]
	r.mu.Unlock()
	if !compacted || facts.nullKeys == 0 {
		return nil
	}
	return fmt.Errorf("%w: target %q compacts (cleanup.policy), and %d records of object %q have no key, the first at %s/%d offset %d; nothing of the object was produced",
		ErrCompactedNullKey, j.topic.Target, facts.nullKeys, obj.Key, j.topic.Source, j.part.Partition, offsetAt(obj.Offsets, facts.nullKeyIdx))
}

// recordAt names record idx of o for an error: "offset N", or, when the
// index entry gave the size or count without saying which record (idx
// -1), the object's offsets: "offset F..L (the index entry does not say
// which)".
func recordAt(o Object, idx int64) string {
	if len(o.Offsets) > 0 && o.Offsets[0] == o.Offsets[len(o.Offsets)-1] && o.Offsets[0].len() == 1 {
		idx = 0 // one record: that one
	}
	if idx >= 0 || len(o.Offsets) == 0 {
		return fmt.Sprintf("offset %d", offsetAt(o.Offsets, idx))
	}
	return fmt.Sprintf("offset %d..%d (the index entry does not say which)", o.Offsets[0].First, o.Offsets[len(o.Offsets)-1].Last)
}
