package restore

import (
	"bytes"
	"errors"
	"fmt"
	"regexp"
	"slices"
	"strings"
	"time"

	"github.com/kafkas3/kafkas3/format"
)

// Filters
//
// A restore can leave records out (Config.Filter: --key-regex, --header,
// --from, and --exclude-action drop with --exclude-keys-file). The record
// stream is then the archive's stream less the records the filter leaves
// out, still a function of the archive and the flags, so what landed is
// a prefix of it and a re-run with the same flags resumes exactly. But an
// object's share of the stream is no longer its record count: a
// filtering run reads every object, the ones the target already holds
// included (no skipping whole objects by their planned counts,
// job.skipUnread), and counts the records the filter keeps (stream.take).
// The records left out are counted in the summary (Summary.Filtered).
// Group offsets are translated by counting the kept records (below).
// Follow mode refuses a filter for now: its marks count the archive's
// records, not the kept ones.

// Filter selects the records a restore produces; the zero Filter keeps
// every record.
type Filter struct {
	// KeyRegex keeps the records whose whole key matches (a null key
	// never does).
	KeyRegex *regexp.Regexp
	// Header keeps the records with a header of this name, whose value
	// is HeaderValue when HeaderHasValue.
	Header         string
	HeaderValue    []byte
	HeaderHasValue bool
	// From keeps the records whose timestamp is at or after it.
	From time.Time
	// DropKeys leaves out the records whose key is one of
	// Config.ExcludeKeys (--exclude-action drop) instead of restoring
	// them as tombstones.
	DropKeys bool
}

// Active tells whether f leaves any record out.
func (f Filter) Active() bool {
	return f.KeyRegex != nil || f.Header != "" || !f.From.IsZero() || f.DropKeys
}

// String describes f for the plan ("" when inactive).
func (f Filter) String() string {
	var parts []string
	if f.KeyRegex != nil {
		parts = append(parts, fmt.Sprintf("key matches %q", f.KeyRegex.String()))
	}
	if f.Header != "" {
		h := fmt.Sprintf("header %q", f.Header)
		if f.HeaderHasValue {
			h += fmt.Sprintf(" = %q", f.HeaderValue)
		}
		parts = append(parts, h)
	}
	if !f.From.IsZero() {
		parts = append(parts, "timestamp at or after "+f.From.UTC().Format(time.RFC3339Nano))
	}
	if f.DropKeys {
		parts = append(parts, "key not in the erasure list")
	}
	return strings.Join(parts, ", ")
}

// ErrNoTimestamps is wrapped when Filter.From is set and the plan holds
// records without a timestamp (objects that are not envelopes): --from
// would leave every one of them out. Nothing is produced.
var ErrNoTimestamps = errors.New("--from needs the records' timestamps")

// unstampedError refuses, before anything is produced, a plan with
// Filter.From whose objects hold records without a timestamp, naming the
// first such object.
func (r *Restorer) unstampedError(plan *Plan) error {
	if r.cfg.Filter.From.IsZero() {
		return nil
	}
	for _, t := range plan.Topics {
		for _, pp := range t.Parts {
			for i := range pp.Objects {
				o := &pp.Objects[i]
				if _, _, ok := o.timestamps(); !ok && o.Records > 0 && o.Damage == nil && !o.pastCut {
					return fmt.Errorf("%w: object %q (%s/%d) holds records without one (only envelope archives, store.envelope=true, keep them); "+
						"nothing was produced: restore without --from, or narrow with --until or the other filters",
						ErrNoTimestamps, o.Key, t.Source, pp.Partition)
				}
			}
		}
	}
	return nil
}

// keeps tells whether the restore produces rec (Config.Filter; the
// erasure list with DropKeys).
func (r *Restorer) keeps(rec *format.Record) bool {
	f := &r.cfg.Filter
	switch {
	case f.DropKeys && r.listed(rec.Key):
		return false
	case f.KeyRegex != nil && (rec.Key == nil || !f.KeyRegex.Match(rec.Key)):
		return false
	case !f.From.IsZero() && rec.Timestamp.Before(f.From):
		return false
	case f.Header != "" && !hasHeader(rec.Headers, f.Header, f.HeaderValue, f.HeaderHasValue):
		return false
	}
	return true
}

// hasHeader tells whether hs holds a header name (with value, when
// withValue).
func hasHeader(hs []format.Header, name string, value []byte, withValue bool) bool {
	for _, h := range hs {
		if h.Key == name && (!withValue || bytes.Equal(h.Value, value) && (h.Value == nil) == (value == nil)) {
			return true
		}
	}
	return false
}

// Group offsets under a filter
//
// --restore-groups translates a group's source offset O into the target
// offset of the first restored record at or after O: the restore's start
// plus the records restored before O. Without a filter the plan's
// streams give that count (recordsBefore); with one, only the records
// the filter keeps count, and they are known only by reading. So a
// filtering run notes, as each stream goes through its records in offset
// order (stream.take; a filtering run reads the already restored part
// too), how many it kept before each group offset of the partition
// (keptCounter), and the groups are committed with those counts once
// every stream is done (keptBefore).

// keptCounter counts a stream's kept records before each of a sorted set
// of source offsets (the partition's group offsets).
type keptCounter struct {
	offsets []int64         // sorted, distinct
	at      int             // offsets[:at] are answered
	kept    int64           // kept records so far
	before  map[int64]int64 // answers
}

// newKeptCounter counts before offsets (nil without any).
func newKeptCounter(offsets []int64) *keptCounter {
	if len(offsets) == 0 {
		return nil
	}
	return &keptCounter{offsets: offsets, before: make(map[int64]int64, len(offsets))}
}

// record notes a record of the stream at source offset off, kept or not.
func (c *keptCounter) record(off int64, kept bool) {
	if c == nil {
		return
	}
	for c.at < len(c.offsets) && c.offsets[c.at] <= off {
		c.before[c.offsets[c.at]] = c.kept
		c.at++
	}
	if kept {
		c.kept++
	}
}

// end answers the offsets past the stream's last record.
func (c *keptCounter) end() map[int64]int64 {
	if c == nil {
		return nil
	}
	for ; c.at < len(c.offsets); c.at++ {
		c.before[c.offsets[c.at]] = c.kept
	}
	return c.before
}

// groupOffsets returns the sorted, distinct group offsets of each source
// partition of gps, for keptCounters.
func groupOffsets(gps []GroupPlan) map[topicPartition][]int64 {
	seen := map[topicPartition]map[int64]bool{}
	for _, gp := range gps {
		for _, o := range gp.Offsets {
			tp := topicPartition{o.Source, o.Partition}
			if seen[tp] == nil {
				seen[tp] = map[int64]bool{}
			}
			seen[tp][o.SourceOffset] = true
		}
	}
	out := map[topicPartition][]int64{}
	for tp, m := range seen {
		for off := range m {
			out[tp] = append(out[tp], off)
		}
		slices.Sort(out[tp])
	}
	return out
}

// keptBefore sets each group offset's Before to the kept records the
// streams counted before it (a filtering run), and returns an error
// naming an offset no stream counted (its partition was not restored).
func (r *Restorer) keptBefore(gps []GroupPlan) error {
	r.mu.Lock()
	defer r.mu.Unlock()
	for i := range gps {
		for j := range gps[i].Offsets {
			o := &gps[i].Offsets[j]
			if o.Skip != "" {
				continue
			}
			counts, ok := r.keptCounts[topicPartition{o.Source, o.Partition}]
			if !ok {
				continue // a partition without records: Before stays 0
			}
			n, ok := counts[o.SourceOffset]
			if !ok {
				return fmt.Errorf("internal error: no count of the records kept before offset %d of %s/%d", o.SourceOffset, o.Source, o.Partition)
			}
			o.Before = n
		}
	}
	return nil
}
