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
// runs are its facts' (the plan took them from the entry, or a read that
// matched it), its parts' keys and sizes its listed parts (the plan
// matched them, entryMatch.listing).

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
// looks: o's key, the commit, the record count and runs of o's facts,
// and o's listed parts with their checksums.
func (c *entryChecks) entry(o *Object) *index.Entry {
	e := &index.Entry{Key: o.Key, Commit: c.commit}
	if o.facts != nil {
		e.Records = o.facts.records
		for _, r := range o.facts.offsets {
			e.Runs = append(e.Runs, index.Run{First: r.First, Last: r.Last})
		}
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

// compactEntries lets every object of the made plan go of its index
// entry, keeping its checks.
func compactEntries(plan *Plan) {
	for ti := range plan.Topics {
		for pi := range plan.Topics[ti].Parts {
			compactObjects(plan.Topics[ti].Parts[pi].Objects)
		}
	}
}

// compactObjects lets objs go of their index entries, keeping their
// checks.
func compactObjects(objs []Object) {
	for i := range objs {
		if o := &objs[i]; o.entry != nil {
			o.checks = newEntryChecks(o.entry)
			o.entry = nil
		}
	}
}
