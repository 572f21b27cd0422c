package restore

import (
	"cmp"
	"context"
	"fmt"
	"slices"
	"sync"

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
	// keysOf holds the object keys of each partition, set by finish.
	keysOf map[topicPartition][]string
}

// loadIndex reads the archive index of topics under Config.IndexPrefix
// (readIndex: one partition at a time, each partition's checkpoints and
// the log after them; in follow mode an index.Tail per topic). It
// returns nil when there is no prefix or no entry. An index object or
// checkpoint that does not decode fails the plan, naming it: the plan
// checks the archive against the index, and a damaged one checks
// nothing.
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
// (index.Index.All), one slice per read. Outside follow mode it reads the
// index one partition at a time (index.EachPartition), keeping the
// entries of the partitions the shard owns and no second copy of the
// live ones; in follow mode each topic's index.Tail, kept across passes,
// reads only the index objects added or rewritten since the last plan (a
// topic's first plan loads it).
func (r *Restorer) readIndex(ctx context.Context, topics []string) ([][]index.Entry, error) {
	opt := index.LoadOptions{Concurrency: r.cfg.ReadConcurrency}
	if !r.cfg.Follow {
		var (
			mu  sync.Mutex
			all [][]index.Entry
		)
		err := index.EachPartition(ctx, r.store, r.cfg.IndexPrefix, topics, opt, func(ix *index.Index) error {
			if len(ix.All) > 0 && r.cfg.Shard.Owns(ix.All[0].Topic, ix.All[0].Partition) {
				mu.Lock()
				all = append(all, ix.All)
				mu.Unlock()
			}
			return nil
		})
		return all, err
	}
	tails := make([]*index.Tail, len(topics))
	for i, t := range topics {
		if r.tails[t] == nil {
			r.tails[t] = index.NewTail(r.store, r.cfg.IndexPrefix, []string{t}, opt)
		}
		tails[i] = r.tails[t]
	}
	all := make([][]index.Entry, len(topics))
	// Each Tail keeps at most ReadConcurrency requests in flight; a few
	// topics refresh at once.
	err := parallel.Each(ctx, min(len(topics), index.DefaultPartitionsAtOnce), len(topics), func(i int) error {
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

// listed returns the entries of o whose parts the listing matches
// (entryMatch.listing), highest commit first, or the live entry's error
// when none does. It returns nil, nil for an object without entries.
func (ai *archiveIndex) listed(o *Object) ([]*index.Entry, error) {
	if ai == nil {
		return nil, nil
	}
	all := ai.byKey[o.Key]
	var ok []*index.Entry
	for _, e := range all {
		if (entryMatch{o, e}).listing() == nil {
			ok = append(ok, e)
		}
	}
	if len(all) > 0 && len(ok) == 0 {
		return nil, entryMatch{o, all[0]}.listing()
	}
	return ok, nil
}

// finish groups the index's object keys by partition, for coverage.
func (ai *archiveIndex) finish() {
	if ai == nil {
		return
	}
	ai.keysOf = map[topicPartition][]string{}
	for key := range ai.byKey {
		e := ai.live(key)
		tp := topicPartition{e.Topic, e.Partition}
		ai.keysOf[tp] = append(ai.keysOf[tp], key)
	}
}

// coverage computes the coverage of the entries that hold the records
// of pp, a partition of topic: the entry each readable object matched,
// and the live entry of every other key of the partition (damaged
// objects, objects missing from the store). The plan asks for one
// partition's at a time and lets it go, so the copies index.Analyze
// takes are one partition's. It returns nil without an index or entries.
func (ai *archiveIndex) coverage(topic string, pp *PartitionPlan) *index.Partition {
	if ai == nil {
		return nil
	}
	keys := ai.keysOf[topicPartition{topic, pp.Partition}]
	if len(keys) == 0 {
		return nil
	}
	chosen := make(map[string]*index.Entry, len(pp.Objects))
	for i := range pp.Objects {
		if o := &pp.Objects[i]; o.entry != nil {
			chosen[o.Key] = o.entry
		}
	}
	effective := make([]index.Entry, len(keys))
	for i, key := range keys {
		e := chosen[key]
		if e == nil {
			e = ai.live(key)
		}
		effective[i] = *e
	}
	ps := index.Analyze(effective)
	return &ps[0]
}

// entryRuns converts an entry's runs.
func entryRuns(e *index.Entry) []offsetRun {
	out := make([]offsetRun, len(e.Runs))
	for i, r := range e.Runs {
		out[i] = offsetRun{r.First, r.Last}
	}
	return out
}

// release lets go of the entries of topic's partition p, once the plan of
// that partition is made (planInBatches): with its objects' entries
// compacted, nothing holds them then.
func (ai *archiveIndex) release(topic string, p int32) {
	tp := topicPartition{topic, p}
	for _, key := range ai.keysOf[tp] {
		delete(ai.byKey, key)
	}
	delete(ai.keysOf, tp)
}

// missingEntries returns the entries of ip, a partition's coverage,
// whose object is not in the plan's partition pp (deleted from the
// store).
func missingEntries(ip *index.Partition, pp *PartitionPlan) []*index.Entry {
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
