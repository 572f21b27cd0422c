package restore

import (
	"cmp"
	"context"
	"fmt"
	"slices"

	"github.com/kafkas3/kafkas3/index"
	"github.com/kafkas3/kafkas3/internal/parallel"
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
	// byKey holds every entry of each object key, highest commit first.
	// The highest commit is the live entry (index.Load's rule), but an
	// object may match an older one: a later sink run with a smaller
	// flush.size rewrites a key with fewer records and a lower commit.
	byKey map[string][]*index.Entry
	// parts is the coverage of the entries the objects matched (the live
	// entry for damaged and missing objects), set by finish.
	parts map[topicPartition]*index.Partition
}

// loadIndex reads the archive index of topics under Config.IndexPrefix
// (readIndex: index.LoadWith, each partition's checkpoints and the log
// after them, in parallel; in follow mode an index.Tail per topic). It returns nil when there is no prefix or no entry. An index
// object or checkpoint that does not decode fails the plan, naming it:
// the index is what proves the archive, and a damaged one proves nothing.
func (r *Restorer) loadIndex(ctx context.Context, topics []string) (*archiveIndex, error) {
	if r.cfg.IndexPrefix == "" || len(topics) == 0 {
		return nil, nil
	}
	all, err := r.readIndex(ctx, topics)
	if err != nil {
		return nil, fmt.Errorf("read the archive index (kafkas3.index.prefix %q): %w", r.cfg.IndexPrefix, err)
	}
	ai := &archiveIndex{byKey: map[string][]*index.Entry{}}
	for _, es := range all {
		for i := range es {
			e := &es[i] // for one key, highest commit first
			if r.cfg.Shard.Owns(e.Topic, e.Partition) {
				ai.byKey[e.Key] = append(ai.byKey[e.Key], e)
			}
		}
	}
	if len(ai.byKey) == 0 {
		return nil, nil
	}
	for _, es := range ai.byKey {
		slices.SortStableFunc(es, func(a, b *index.Entry) int { return cmp.Compare(b.Commit, a.Commit) })
	}
	return ai, nil
}

// readIndex returns every entry of the archive index of topics
// (index.Index.All), one slice per read. Outside follow mode it loads the
// index (index.LoadWith); in follow mode each topic's index.Tail, kept
// across passes, reads only the index objects added or rewritten since
// the last plan (a topic's first plan loads it).
func (r *Restorer) readIndex(ctx context.Context, topics []string) ([][]index.Entry, error) {
	opt := index.LoadOptions{Concurrency: r.cfg.ReadConcurrency}
	if !r.cfg.Follow {
		ix, err := index.LoadWith(ctx, r.store, r.cfg.IndexPrefix, topics, opt)
		if err != nil {
			return nil, err
		}
		return [][]index.Entry{ix.All}, nil
	}
	tails := make([]*index.Tail, len(topics))
	for i, t := range topics {
		if r.tails[t] == nil {
			r.tails[t] = index.NewTail(r.store, r.cfg.IndexPrefix, []string{t}, opt)
		}
		tails[i] = r.tails[t]
	}
	all := make([][]index.Entry, len(topics))
	err := parallel.Each(ctx, min(len(topics), r.readConcurrency()), len(topics), func(i int) error {
		ix, err := tails[i].Refresh(ctx)
		if err == nil {
			all[i] = ix.All
		}
		return err
	})
	return all, err
}

// live returns the live entry of key (highest commit), or nil.
func (ai *archiveIndex) live(key string) *index.Entry {
	if ai == nil || len(ai.byKey[key]) == 0 {
		return nil
	}
	return ai.byKey[key][0]
}

// listed returns the entries of o whose objects the listing matches
// (checkListing), highest commit first, or the live entry's error when
// none does. It returns nil, nil for an object without entries.
func (ai *archiveIndex) listed(o *Object) ([]*index.Entry, error) {
	if ai == nil {
		return nil, nil
	}
	all := ai.byKey[o.Key]
	var ok []*index.Entry
	for _, e := range all {
		if checkListing(o, e) == nil {
			ok = append(ok, e)
		}
	}
	if len(all) > 0 && len(ok) == 0 {
		return nil, checkListing(o, all[0])
	}
	return ok, nil
}

// match returns the first of es that what reading o proved matches
// (checkEntry), or the first one's error.
func match(o *Object, p objectProof, es []*index.Entry) (*index.Entry, error) {
	for _, e := range es {
		if checkEntry(o, p, e) == nil {
			return e, nil
		}
	}
	return nil, checkEntry(o, p, es[0])
}

// finish computes the coverage of the entries that hold the plan's
// records: the entry each readable object matched, and the live entry of
// every other key (damaged objects, objects missing from the store).
func (ai *archiveIndex) finish(plan *Plan) {
	if ai == nil {
		return
	}
	chosen := map[string]*index.Entry{}
	for _, t := range plan.Topics {
		for _, pp := range t.Parts {
			for _, o := range pp.Objects {
				if o.entry != nil {
					chosen[o.Key] = o.entry
				}
			}
		}
	}
	var effective []index.Entry
	for key := range ai.byKey {
		e := chosen[key]
		if e == nil {
			e = ai.live(key)
		}
		effective = append(effective, *e)
	}
	ai.parts = map[topicPartition]*index.Partition{}
	for _, p := range index.Analyze(effective) {
		ai.parts[topicPartition{p.Topic, p.Partition}] = &p
	}
}

// checkListing compares o's listed objects with its index entry before
// reading them: every object of the entry must be there with the size the
// entry gives.
func checkListing(o *Object, e *index.Entry) error {
	for _, p := range listedParts(o) {
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

// checkEntry compares what reading o proved with its index entry: the
// checksums of every object (CRC32C and SHA-256, each the entry gives),
// record count, and the offsets when the records carry them.
func checkEntry(o *Object, p objectProof, e *index.Entry) error {
	main := index.PartValue
	if o.Tombstone {
		main = index.PartKeys
	}
	for _, c := range []struct {
		part string
		got  digest
	}{{main, p.sums}, {index.PartKeys, p.keysSums}, {index.PartHeaders, p.headersSums}} {
		want := e.Part(c.part)
		if want == nil || c.got == (digest{}) {
			continue
		}
		if want.CRC32C != "" && want.CRC32C != c.got.crc32c {
			return fmt.Errorf("%w: %q has CRC32C %s, the archive index says %s (commit %d)", ErrDamagedObject, want.Key, c.got.crc32c, want.CRC32C, e.Commit)
		}
		if want.SHA256 != "" && want.SHA256 != c.got.sha256 {
			return fmt.Errorf("%w: %q has SHA-256 %s, the archive index says %s (commit %d)", ErrDamagedObject, want.Key, c.got.sha256, want.SHA256, e.Commit)
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
			out = append(out, &ip.Entries[i])
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
	seen := map[topicPartition]bool{}
	for key := range ai.byKey {
		e := ai.live(key)
		seen[topicPartition{e.Topic, e.Partition}] = true
	}
	for tp := range seen {
		for ti := range plan.Topics {
			t := &plan.Topics[ti]
			if t.Source != tp.topic {
				continue
			}
			found := false
			for _, pp := range t.Parts {
				found = found || pp.Partition == tp.part
			}
			if !found {
				t.Parts = append(t.Parts, PartitionPlan{Partition: tp.part})
				t.Partitions = max(t.Partitions, tp.part+1)
				slices.SortFunc(t.Parts, func(a, b PartitionPlan) int { return int(a.Partition) - int(b.Partition) })
			}
		}
	}
}
