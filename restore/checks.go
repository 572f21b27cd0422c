package restore

import (
	"github.com/kafkas3/kafkas3/index"
)

// What production keeps of the index. The plan holds the archive index
// while it is made (every entry of every partition the restore reads);
// once made, each object keeps only what the read that produces it is
// checked against (entryMatch.read): its entry's commit and each part's
// CRC32C and SHA-256, about 48 bytes instead of the entry's several
// hundred, so the index is let go and a restore of a million objects does
// not hold a million entries while it produces. The rest of what the
// check compares is the object's already: the entry's record count and
// runs are its Records and Offsets (the plan took them from the entry,
// or a read that matched it), its parts' keys and sizes its listed parts
// (the plan matched them, entryMatch.listing). An object that took its
// entry's word (fromIndex) lets its facts go too: checks keeps the two
// that Check needs (the largest record's size, the records without a
// key).

// entryChecks is what production checks an object against of the index
// entry it matched.
type entryChecks struct {
	commit int64
	// crc holds each part's CRC32C (by partSlot) where has says the entry
	// gives one.
	crc [3]uint32
	has [3]bool
	// sha256 holds each part's SHA-256 (hex), nil when the entry gives
	// none (v2 entries without kafkas3.index.digest).
	sha256 *[3]string
	// largest, nullKeys and stamps are the facts' of an object that took
	// its entry's word, once its facts are let go.
	largest, nullKeys int64
	stamps            stampRange
}

// partSlot is the position of an index part in entryChecks.
func partSlot(part string) int {
	switch part {
	case index.PartKeys:
		return 1
	case index.PartHeaders:
		return 2
	}
	return 0
}

// newEntryChecks keeps what production checks of e.
func newEntryChecks(e *index.Entry) *entryChecks {
	c := &entryChecks{commit: e.Commit}
	for _, ob := range e.Objects {
		i := partSlot(ob.Part)
		if crc, err := index.ParseCRC32C(ob.CRC32C); err == nil {
			c.crc[i], c.has[i] = crc, true
		}
		if ob.SHA256 != "" {
			if c.sha256 == nil {
				c.sha256 = &[3]string{}
			}
			c.sha256[i] = ob.SHA256
		}
	}
	return c
}

// entry is the index entry c was kept of, as far as entryMatch.read
// looks: o's key, the commit, o's record count and runs, and o's listed
// parts with their checksums.
func (c *entryChecks) entry(o *Object) *index.Entry {
	e := &index.Entry{Key: o.Key, Commit: c.commit, Records: o.Records}
	for _, r := range o.Offsets {
		e.Runs = append(e.Runs, index.Run{First: r.First, Last: r.Last})
	}
	for _, lp := range listedParts(o) {
		if lp.key == "" {
			continue
		}
		ob := index.Object{Key: lp.key, Part: lp.part, Size: lp.size}
		i := partSlot(lp.part)
		if c.has[i] {
			ob.CRC32C = index.FormatCRC32C(c.crc[i])
		}
		if c.sha256 != nil {
			ob.SHA256 = c.sha256[i]
		}
		e.Objects = append(e.Objects, ob)
	}
	return e
}

// compactObjects lets objs (a partition's, planned) go of their index
// entries, keeping their checks, and of their facts where they were the
// entry's word.
func compactObjects(objs []Object) {
	for i := range objs {
		o := &objs[i]
		if o.entry == nil {
			continue
		}
		o.checks = newEntryChecks(o.entry)
		o.entry = nil
		if o.fromIndex && o.facts != nil && o.Damage == nil {
			o.checks.largest, o.checks.nullKeys, o.checks.stamps = o.facts.largestSize, o.facts.nullKeys, o.facts.stamps
			o.facts = nil
		}
	}
}

// largestRecord returns the index (-1: not known) and size of o's largest
// record, as the plan knows them.
func (o *Object) largestRecord() (idx, size int64) {
	switch {
	case o.facts != nil:
		return o.facts.largestIdx, o.facts.largestSize
	case o.checks != nil:
		return -1, o.checks.largest
	}
	return -1, 0
}

// timestamps returns the range of o's record timestamps (Unix ms), as the
// plan knows it; !ok when its records carry none (not envelopes) or it
// is not known.
func (o *Object) timestamps() (lo, hi int64, ok bool) {
	var s stampRange
	switch {
	case o.facts != nil:
		s = o.facts.stamps
	case o.checks != nil:
		s = o.checks.stamps
	}
	return s.lo, s.hi, s.ok
}

// keyless returns how many of o's records have no key and the index of
// the first (-1: not known), as the plan knows them.
func (o *Object) keyless() (n, idx int64) {
	switch {
	case o.facts != nil:
		return o.facts.nullKeys, o.facts.nullKeyIdx
	case o.checks != nil:
		return o.checks.nullKeys, -1
	}
	return 0, -1
}
