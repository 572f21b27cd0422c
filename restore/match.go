package restore

import (
	"context"
	"errors"
	"fmt"
	"slices"

	"github.com/kafkas3/kafkas3/index"
	"github.com/kafkas3/kafkas3/s3store"
)

// Matching an object with an index entry: the one rule.
//
// An object matches an index entry when each of its parts (the value or
// tombstone object and its .keys and .headers twins: listedParts) is the
// entry's part of that name. entryMatch pairs them and compares what is
// known of the object, and nothing else in the package compares objects
// with entries:
//
//   - listing: every part the entry names is listed under its key, at its
//     size, and no listed part is missing from the entry. The plan
//     chooses an object's entries by it (archiveIndex.listed), and so does
//     --until (markPastCut).
//   - stored: what the store says without a download (one read's plan):
//     each part's ETag from the listing against the entry's, and where
//     they differ or one is missing, the CRC32C the store keeps (one
//     HEAD). It decides whether the plan takes the entry's word or reads
//     the object first.
//   - read: what a read computed (objectFacts): each part's CRC32C and
//     SHA-256 the entry gives, the record count, and the offsets when the
//     records carry them. The proof picks the entry the read matches
//     (firstMatch); production checks an object read once against its
//     entry (checkLoaded).
//
// Every difference is an error wrapping ErrDamagedObject that names the
// part, the entry's commit and what differs; stored alone answers yes or
// no, as a difference there is a reason to read, not yet damage.

// entryMatch pairs object o's parts with entry e's.
type entryMatch struct {
	o *Object
	e *index.Entry
}

// listedPart is one object an Object may have (the value or tombstone
// object, a twin) as the listing gave it: its key ("" when not listed),
// size and ETag (the twins'; the plan gives the main object's to stored).
type listedPart struct {
	part, key, etag string
	size            int64
}

// listedParts returns the parts o may have, by index part: the main
// object (a tombstone object's is its .keys object), then its .keys twin
// (not for a tombstone object) and .headers twin, listed or not.
func listedParts(o *Object) []listedPart {
	k, h := o.twinPart(index.PartKeys), o.twinPart(index.PartHeaders)
	headers := listedPart{index.PartHeaders, h.key, h.etag, h.size}
	if o.Tombstone {
		return []listedPart{{index.PartKeys, o.Key, "", o.Size}, headers}
	}
	return []listedPart{{index.PartValue, o.Key, "", o.Size}, {index.PartKeys, k.key, k.etag, k.size}, headers}
}

// listing compares the listed parts with the entry's: every part of the
// entry listed under its key at its size, no listed part it lacks.
func (m entryMatch) listing() error {
	e := m.e
	for _, p := range listedParts(m.o) {
		want := e.Part(p.part)
		switch {
		case want == nil && p.key != "":
			return fmt.Errorf("%w: %q is not in the archive index entry of %q (commit %d)", ErrDamagedObject, p.key, e.Key, e.Commit)
		case want == nil:
		case p.key == "":
			return fmt.Errorf("%w: %q is in the archive index (entry of %q, commit %d) but not in the store", ErrDamagedObject, want.Key, e.Key, e.Commit)
		case want.Key != p.key:
			return fmt.Errorf("%w: the archive index names %q, the store holds %q", ErrDamagedObject, want.Key, p.key)
		case want.Size != p.size:
			return fmt.Errorf("%w: %q is %d bytes, the archive index says %d (commit %d)", ErrDamagedObject, p.key, p.size, want.Size, e.Commit)
		}
	}
	return nil
}

// read compares what a read computed with the entry: the checksums of
// every part (CRC32C and SHA-256, each the entry gives; a part the read
// has no digest of is not compared), the record count, and the offsets
// when the records carry them.
func (m entryMatch) read(p objectFacts) error {
	o, e := m.o, m.e
	for _, lp := range listedParts(o) {
		want, got := e.Part(lp.part), p.digestOf(o, lp.part)
		if want == nil || got == (digest{}) {
			continue
		}
		if want.CRC32C != "" && want.CRC32C != got.crc32c() {
			return fmt.Errorf("%w: %q has CRC32C %s, the archive index says %s (commit %d)", ErrDamagedObject, want.Key, got.crc32c(), want.CRC32C, e.Commit)
		}
		if want.SHA256 != "" && want.SHA256 != got.sha256 {
			return fmt.Errorf("%w: %q has SHA-256 %s, the archive index says %s (commit %d)", ErrDamagedObject, want.Key, got.sha256, want.SHA256, e.Commit)
		}
	}
	if p.records != e.Records {
		return fmt.Errorf("%w: %q holds %d records, the archive index says %d (commit %d)", ErrDamagedObject, o.Key, p.records, e.Records, e.Commit)
	}
	if p.offsets != nil && !slices.Equal(p.offsets, entryRuns(e)) {
		return fmt.Errorf("%w: the records of %q carry other offsets than the archive index gives (commit %d)", ErrDamagedObject, o.Key, e.Commit)
	}
	return nil
}

// digestOf returns the digest p has of o's part (index.PartValue,
// PartKeys, PartHeaders); a tombstone object's main part is its keys.
func (p objectFacts) digestOf(o *Object, part string) digest {
	switch {
	case part == index.PartHeaders:
		return p.digests().headers
	case part == index.PartKeys && !o.Tombstone:
		return p.digests().keys
	}
	return p.digests().value
}

// stored tells whether what the store says of the object without a
// download agrees with the entry, for an object whose listing matches
// it, etag the ETag the listing gave its main object (the value or
// tombstone object). Each part is compared by the ETag the listing gave and the one the
// entry records; a part whose ETags differ (the object was written again
// after the sink wrote the entry: other bytes, or the same bytes under
// another ETag) or that has none to compare is then compared by the
// CRC32C the store keeps (one HEAD, a store that keeps one). It is false
// when a part's ETags differ and its stored CRC32C does not clear it, or
// its stored CRC32C differs from the entry's: the plan then reads the
// object before anything is produced (a damaged object is refused then,
// as without one read). A part with nothing to compare (no ETag, no
// stored checksum: a local directory, an entry written before ETags were
// recorded) is taken at its entry's word; the read that produces it
// checks it. Only the store's own errors are returned.
func (m entryMatch) stored(ctx context.Context, store s3store.Store, etag string) (bool, error) {
	cs, _ := store.(s3store.Checksummer)
	parts := listedParts(m.o)
	parts[0].etag = etag
	for _, p := range parts {
		want := m.e.Part(p.part)
		if want == nil || p.key == "" {
			continue // listing refused it already, or no such part
		}
		if p.etag != "" && p.etag == want.ETag {
			continue
		}
		differs := p.etag != "" && want.ETag != ""
		if cs == nil || want.CRC32C == "" {
			if differs {
				return false, nil
			}
			continue
		}
		crc, has, err := cs.StoredCRC32C(ctx, p.key)
		switch {
		case errors.Is(err, s3store.ErrNotExist):
			return false, nil // gone since the listing: the read shows it
		case err != nil:
			return false, fmt.Errorf("read the stored checksum of object %q: %w", p.key, err)
		case has && crc != want.CRC32C, !has && differs:
			return false, nil
		}
	}
	return true, nil
}

// firstMatch returns the first of es (highest commit first) that what
// reading o computed matches, or the first one's error.
func firstMatch(o *Object, p objectFacts, es []*index.Entry) (*index.Entry, error) {
	for _, e := range es {
		if (entryMatch{o, e}).read(p) == nil {
			return e, nil
		}
	}
	return nil, entryMatch{o, es[0]}.read(p)
}
