package restore

import (
	"context"
	"fmt"
	"slices"

	"github.com/kafkas3/kafkas3/index"
)

// BasisIndex: every object of the partition has an archive index entry;
// the offsets are the entries' runs.
const BasisIndex = "archive index"

// BasisMixed: the partition has index entries, and objects without one
// (for example written by Confluent's connector into the same bucket),
// whose offsets come from their names and record counts.
const BasisMixed = "archive index, and names and record counts for objects without an entry (consecutive offsets assumed)"

// archiveIndex is the part of the archive index the plan uses.
type archiveIndex struct {
	byKey map[string]*index.Entry // live entry of each object key
	parts map[topicPartition]*index.Partition
}

// loadIndex reads the archive index of the plan's topics under
// Config.IndexPrefix. It returns nil when there is no prefix or no entry.
// An index object that does not decode fails the plan: the index is what
// proves the archive, and a damaged one proves nothing.
func (r *Restorer) loadIndex(ctx context.Context, plan *Plan) (*archiveIndex, error) {
	if r.cfg.IndexPrefix == "" || len(plan.Topics) == 0 {
		return nil, nil
	}
	topics := make([]string, len(plan.Topics))
	for i, t := range plan.Topics {
		topics[i] = t.Source
	}
	ix, err := index.Load(ctx, r.store, r.cfg.IndexPrefix, topics)
	if err != nil {
		return nil, fmt.Errorf("read the archive index (kafkas3.index.prefix %q): %w", r.cfg.IndexPrefix, err)
	}
	if len(ix.Entries) == 0 {
		return nil, nil
	}
	ai := &archiveIndex{byKey: map[string]*index.Entry{}, parts: map[topicPartition]*index.Partition{}}
	for i := range ix.Entries {
		ai.byKey[ix.Entries[i].Key] = &ix.Entries[i]
	}
	for _, p := range index.Analyze(ix.Entries) {
		ai.parts[topicPartition{p.Topic, p.Partition}] = &p
	}
	return ai, nil
}

// entryFor returns the live index entry of o, or nil.
func (ai *archiveIndex) entryFor(o *Object) *index.Entry {
	if ai == nil {
		return nil
	}
	return ai.byKey[o.Key]
}

// checkListing compares o's listed objects with its index entry before
// reading them: every object of the entry must be there with the size the
// entry gives.
func checkListing(o *Object, e *index.Entry) error {
	main, mainSize := index.PartValue, o.Size
	if o.Tombstone {
		main = index.PartKeys
	}
	parts := []struct {
		part, key string
		size      int64
	}{{main, o.Key, mainSize}}
	if !o.Tombstone {
		parts = append(parts, struct {
			part, key string
			size      int64
		}{index.PartKeys, o.KeysKey, o.KeysSize})
	}
	parts = append(parts, struct {
		part, key string
		size      int64
	}{index.PartHeaders, o.HeadersKey, o.HeadersSize})
	for _, p := range parts {
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

// checkEntry compares what reading o proved with its index entry: SHA-256
// of every object, record count, and the offsets when the records carry
// them.
func checkEntry(o *Object, p objectProof, e *index.Entry) error {
	main := index.PartValue
	if o.Tombstone {
		main = index.PartKeys
	}
	for _, c := range []struct {
		part, got string
	}{{main, p.sha256}, {index.PartKeys, p.keysSHA256}, {index.PartHeaders, p.headersSHA256}} {
		want := e.Part(c.part)
		if want == nil || c.got == "" {
			continue
		}
		if want.SHA256 != c.got {
			return fmt.Errorf("%w: %q has SHA-256 %s, the archive index says %s (commit %d)", ErrDamagedObject, want.Key, c.got, want.SHA256, e.Commit)
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

// entryRuns converts an entry's runs.
func entryRuns(e *index.Entry) []offsetRun {
	out := make([]offsetRun, len(e.Runs))
	for i, r := range e.Runs {
		out[i] = offsetRun{r.First, r.Last}
	}
	return out
}

// missingEntries returns the index entries of topic/partition whose
// object is not in the plan's partition (deleted from the store).
func (ai *archiveIndex) missingEntries(topic string, pp *PartitionPlan) []*index.Entry {
	if ai == nil {
		return nil
	}
	ip := ai.parts[topicPartition{topic, pp.Partition}]
	if ip == nil {
		return nil
	}
	have := map[string]bool{}
	for _, o := range pp.Objects {
		have[o.Key] = true
	}
	var out []*index.Entry
	for i := range ip.Entries {
		if !have[ip.Entries[i].Key] {
			out = append(out, ai.byKey[ip.Entries[i].Key])
		}
	}
	return out
}

// addIndexedPartitions adds to the plan the partitions the index knows and
// the listing has no object for (every object deleted), so their gaps are
// shown.
func (ai *archiveIndex) addIndexedPartitions(plan *Plan) {
	if ai == nil {
		return
	}
	for tp, ip := range ai.parts {
		for ti := range plan.Topics {
			t := &plan.Topics[ti]
			if t.Source != tp.topic {
				continue
			}
			found := false
			for _, pp := range t.Parts {
				found = found || pp.Partition == ip.Partition
			}
			if !found {
				t.Parts = append(t.Parts, PartitionPlan{Partition: ip.Partition})
				t.Partitions = max(t.Partitions, ip.Partition+1)
				slices.SortFunc(t.Parts, func(a, b PartitionPlan) int { return int(a.Partition) - int(b.Partition) })
			}
		}
	}
}
