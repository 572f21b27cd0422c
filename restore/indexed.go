package restore

import (
	"cmp"
	"context"
	"errors"
	"fmt"
	"slices"
	"sort"

	"github.com/kafkas3/kafkas3/index"
)

// BasisIndex: every object of the partition has an archive index entry;
// the offsets are the entries' runs.
const BasisIndex = "archive index"

// BasisMixed: the partition has index entries, and objects without one
// (for example written by Confluent's connector into the same bucket),
// whose offsets come from their names and record counts.
const BasisMixed = "archive index, and names and record counts for objects without an entry (consecutive offsets assumed)"

// archiveIndex is the archive index of one Kafka partition, as the plan
// uses it (planner: one partition at a time).
type archiveIndex struct {
	topic string
	part  int32
	// byKey holds every entry of each object key, highest commit first.
	// The highest commit is the live entry (index.Load's rule), but an
	// object may match an older one: a later sink run with a smaller
	// flush.size rewrites a key with fewer records and a lower commit.
	byKey map[string][]*index.Entry
	// keys holds the partition's object keys, sorted; commit is the
	// highest commit of its entries.
	keys   []string
	commit int64
	// below is the partition's prune watermark (index.Watermark; 0:
	// none): its entries below it are gone with their objects.
	below int64
}

// withPruned gives ai (nil: a partition whose entries were all pruned)
// the partition's watermark from ix, if it has one.
func withPruned(ai *archiveIndex, ix *index.Index) *archiveIndex {
	for _, p := range ix.Pruned {
		if ai == nil {
			ai = &archiveIndex{topic: p.Topic, part: p.Partition, byKey: map[string][]*index.Entry{}}
		}
		ai.below = p.Below
	}
	return ai
}

// dropPruned leaves out of objs (and etags) the objects below ai's
// watermark that no entry names, counting them in the listing's skipped
// keys (SkipPruned).
func dropPruned(l *listing, ai *archiveIndex, objs []Object, etags []string) ([]Object, []string) {
	if ai == nil || ai.below <= 0 {
		return objs, etags
	}
	kept, n := 0, 0
	for i := range objs {
		if objs[i].StartOffset < ai.below && len(ai.byKey[objs[i].Key]) == 0 {
			n++
			continue
		}
		objs[kept], etags[kept] = objs[i], etags[i]
		kept++
	}
	if n > 0 {
		l.mu.Lock()
		l.skipped[SkipPruned] += n
		l.mu.Unlock()
	}
	return objs[:kept], etags[:kept]
}

// newArchiveIndex returns the index of one partition from its entries
// (index.Index.All of one partition: each key's live entry and the ones
// it superseded), or nil without any.
func newArchiveIndex(all []index.Entry) *archiveIndex {
	if len(all) == 0 {
		return nil
	}
	ai := &archiveIndex{topic: all[0].Topic, part: all[0].Partition, byKey: map[string][]*index.Entry{}}
	for i := range all {
		e := &all[i]
		if len(ai.byKey[e.Key]) == 0 {
			ai.keys = append(ai.keys, e.Key)
		}
		ai.byKey[e.Key] = append(ai.byKey[e.Key], e)
		ai.commit = max(ai.commit, e.Commit)
	}
	for _, es := range ai.byKey {
		slices.SortStableFunc(es, func(a, b *index.Entry) int { return cmp.Compare(b.Commit, a.Commit) })
	}
	sort.Strings(ai.keys)
	return ai
}

// eachIndexedPartition calls fn with the archive index of each partition
// of topics under Config.IndexPrefix that the shard owns (nil prefix or
// topics: never), a few partitions at once (fn locks what it shares). An
// index object or checkpoint that does not decode fails it, naming it:
// the plan checks the archive against the index, and a damaged one
// checks nothing.
//
// Outside follow mode it reads each partition's checkpoints and the log
// after them (index.EachPartition), so only a few partitions' entries
// are in memory at once. In follow mode each topic's index.Tail, kept
// across passes, reads only the index objects added or rewritten since
// the last plan (a topic's first plan loads it).
func (r *Restorer) eachIndexedPartition(ctx context.Context, topics []string, fn func(context.Context, *archiveIndex) error) error {
	if r.cfg.IndexPrefix == "" || len(topics) == 0 {
		return nil
	}
	opt := index.LoadOptions{Concurrency: r.cfg.ReadConcurrency, PartitionsAtOnce: r.partitionsAtOnce}
	each := func(ix *index.Index) error {
		ai := withPruned(newArchiveIndex(ix.All), ix)
		if ai == nil || !r.cfg.Shard.Owns(ai.topic, ai.part) {
			return nil
		}
		if err := fn(ctx, ai); err != nil {
			return &planError{err}
		}
		return nil
	}
	var err error
	if !r.cfg.Follow {
		err = index.EachPartition(ctx, r.store, r.cfg.IndexPrefix, topics, opt, each)
	} else {
		err = r.eachTailPartition(ctx, topics, opt, each)
	}
	var pe *planError
	switch {
	case errors.As(err, &pe):
		return pe.err // the plan's, not the index's
	case err != nil:
		return fmt.Errorf("read the archive index (kafkas3.index.prefix %q): %w", r.cfg.IndexPrefix, err)
	}
	return nil
}

// planError carries an error of planning a partition through the index's
// reading, which does not wrap it as its own.
type planError struct{ err error }

func (e *planError) Error() string { return e.err.Error() }
func (e *planError) Unwrap() error { return e.err }

// eachTailPartition is eachIndexedPartition in follow mode: each topic's
// Tail is brought up to date and gives its index one partition at a
// time (index.Tail.RefreshEach).
func (r *Restorer) eachTailPartition(ctx context.Context, topics []string, opt index.LoadOptions, fn func(*index.Index) error) error {
	for _, t := range topics {
		if r.tails[t] == nil {
			r.tails[t] = index.NewTail(r.store, r.cfg.IndexPrefix, []string{t}, opt)
		}
		// Each Tail keeps at most ReadConcurrency requests in flight.
		if err := r.tails[t].RefreshEach(ctx, r.partitionsAtOnce, fn); err != nil {
			return err
		}
	}
	return nil
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

// coverage computes the coverage of the entries that hold the records
// of pp, the partition of ai: the entry each readable object matched, and
// the live entry of every other key of the partition (damaged objects,
// objects missing from the store). It returns nil without an index.
func (ai *archiveIndex) coverage(pp *PartitionPlan) *index.Partition {
	if ai == nil || len(ai.keys) == 0 {
		return nil
	}
	keys := ai.keys
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
