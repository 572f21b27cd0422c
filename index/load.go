package index

import (
	"context"
	"fmt"
	"io"
	"sort"

	"github.com/kafkas3/kafkas3/internal/parallel"
	"github.com/kafkas3/kafkas3/s3store"
)

// Store is the part of s3store.Store that Load needs.
type Store interface {
	List(ctx context.Context, prefix string, fn func(s3store.ObjectInfo) error) error
	Open(ctx context.Context, key string) (io.ReadCloser, error)
}

// DefaultConcurrency is the number of store requests Load keeps in flight
// when LoadOptions.Concurrency is 0.
const DefaultConcurrency = 32

// LoadOptions tunes LoadWith.
type LoadOptions struct {
	// Concurrency bounds the store requests (listings and reads) in
	// flight; 0 means DefaultConcurrency.
	Concurrency int
	// PartitionsAtOnce bounds the partitions EachPartition loads at a
	// time; 0 means DefaultPartitionsAtOnce. LoadWith loads them all
	// together.
	PartitionsAtOnce int
	// KeepPruned keeps the entries below the partitions' watermarks
	// (pruned.go) in Entries and All, for `kafkas3 prune`, which deletes
	// what an interrupted prune left; Index.Pruned still names the
	// watermarks.
	KeepPruned bool
}

// Index is the archive index as read from the store.
type Index struct {
	// Entries holds the live entries: for each object key, the entry with
	// the highest commit (of two with the same commit, the one of the
	// index object whose key sorts first). Sorted by topic, partition,
	// first offset, key.
	Entries []Entry
	// Superseded counts the entries replaced by one with a higher commit
	// for the same object key (a replay after a crash, or a later run
	// writing the same key): every entry of the log but the live ones,
	// those a checkpoint left out included.
	Superseded int
	// IndexObjects counts the index objects of the log: those read, and
	// those the checkpoints read stand for.
	IndexObjects int
	// Checkpoints counts the checkpoints read.
	Checkpoints int
	// Listed counts the keys of the log listed (the tail after the lowest
	// live checkpoint of each partition, or its whole log).
	Listed int
	// Assumed counts the live entries whose offsets were assumed: written
	// by `kafkas3 index rebuild --from-objects` (FromObjectsWriter) for
	// objects without envelopes, whose records are taken to hold
	// consecutive offsets from the start offset of their names.
	Assumed int
	// FullListings counts the partitions whose whole log was listed: no
	// checkpoint (an archive of an older kafkas3: `kafkas3 index rebuild`
	// makes its reads cheap), or a writer with checkpoints but none live.
	FullListings int
	// Pruned names the partitions' watermarks (pruned.go): their entries
	// below it are left out of Entries and All, PrunedEntries of them
	// live.
	Pruned        []Pruned
	PrunedEntries int
	// All holds every entry of the log, superseded ones included, sorted
	// like Entries and, for the same key, by decreasing commit, but for
	// entries that only restamp a newer one (Restamped). An object may
	// match an older entry than the live one: a later sink run with a
	// smaller flush.size rewrites a key with fewer records and a lower
	// commit.
	All []Entry
}

// FromObjectsGroup is the group name whose writer (FromObjectsWriter)
// names the index objects and checkpoints that `kafkas3 index rebuild
// --from-objects` writes (package objindex). Its entries without envelope
// have assumed offsets (Index.Assumed).
const FromObjectsGroup = "kafkas3 index rebuild --from-objects"

// FromObjectsWriter is WriterOf(FromObjectsGroup).
func FromObjectsWriter() string { return WriterOf(FromObjectsGroup) }

// Load is LoadWith with the default options.
func Load(ctx context.Context, st Store, prefix string, topics []string) (*Index, error) {
	return LoadWith(ctx, st, prefix, topics, LoadOptions{})
}

// LoadWith reads the archive index under prefix (of topics, when given):
// for each partition, each writer's live checkpoint and the index
// objects of the log that no checkpoint covers, listed from the lowest
// live checkpoint on (the whole log of a partition without checkpoints;
// see the package doc, "Reading an archive"), at most opt.Concurrency
// requests at a time. It keeps, for each object key, the entry with the
// highest commit. An object under the index folder that is not an index
// object, or an index object or checkpoint that does not decode, fails
// the load (the error names its key and line, the first such in key
// order); so does a store failure. The result is the one a read of every
// index object of the log gives.
func LoadWith(ctx context.Context, st Store, prefix string, topics []string, opt LoadOptions) (*Index, error) {
	l := newLoader(st, prefix, opt)
	parts, err := l.discover(ctx, topics)
	if err != nil {
		return nil, err
	}
	return l.load(ctx, parts)
}

// newLoader is a loader of opt's concurrency.
func newLoader(st Store, prefix string, opt LoadOptions) *loader {
	n := opt.Concurrency
	if n <= 0 {
		n = DefaultConcurrency
	}
	return &loader{st: st, prefix: prefix, n: n, keepPruned: opt.KeepPruned}
}

// DefaultPartitionsAtOnce is how many partitions EachPartition loads at a
// time when LoadOptions.PartitionsAtOnce is 0.
const DefaultPartitionsAtOnce = 4

// EachPartition reads the archive index under prefix (of topics, when
// given) as LoadWith does, one partition of the log at a time, and calls
// fn with each partition's Index (its Entries and All hold that
// partition's entries only), in no particular order, for up to
// opt.PartitionsAtOnce partitions at once (fn must be safe for that: a
// reader that does requests of its own for a partition does them beside
// the others'). At most opt.PartitionsAtOnce partitions are loaded together,
// and their requests share opt.Concurrency, so memory follows the largest
// partitions, not the archive: a reader that keeps only what it needs of
// each partition reads an archive of millions of objects in the memory of
// a few partitions. The first error (of a load, or of fn) ends it.
func EachPartition(ctx context.Context, st Store, prefix string, topics []string, opt LoadOptions, fn func(*Index) error) error {
	l := newLoader(st, prefix, opt)
	parts, err := l.discover(ctx, topics)
	if err != nil {
		return err
	}
	l.st = newLimited(st, l.n)
	at := opt.PartitionsAtOnce
	if at <= 0 {
		at = DefaultPartitionsAtOnce
	}
	return parallel.Each(ctx, at, len(parts), func(i int) error {
		ix, err := l.load(ctx, parts[i:i+1])
		if err != nil {
			return err
		}
		return fn(ix)
	})
}

// load reads the index of parts (found by discover) into one Index.
func (l *loader) load(ctx context.Context, parts []logPartition) (*Index, error) {
	plans, err := l.loadParts(ctx, parts)
	if err != nil {
		return nil, err
	}
	var res []readResult
	for _, pp := range plans {
		res = append(res, pp.results()...)
	}
	ix := mergeResults(res)
	ix.applyPruned(prunedBelow(plans), l.keepPruned)
	for _, pp := range plans {
		ix.Listed += pp.listed
		if pp.after == "" {
			ix.FullListings++
		}
	}
	return ix, nil
}

// loadParts loads the index of parts, each as LoadWith does: its
// checkpoints listed, each writer's live checkpoint read, the log listed
// from the lowest on and the index objects above each writer's read. The
// plans hold what was read (partPlan.results).
func (l *loader) loadParts(ctx context.Context, parts []logPartition) ([]*partPlan, error) {
	plans := make([]*partPlan, len(parts))
	err := parallel.Each(ctx, l.n, len(parts), func(i int) error {
		pp, err := l.planCheckpoints(ctx, parts[i])
		plans[i] = pp
		return wrapDir(parts[i].dir, err)
	})
	if err != nil {
		return nil, err
	}
	if err := l.readCheckpoints(ctx, plans); err != nil {
		return nil, err
	}
	err = parallel.Each(ctx, l.n, len(plans), func(i int) error {
		return wrapDir(plans[i].p.dir, l.listLog(ctx, plans[i]))
	})
	if err != nil {
		return nil, err
	}
	return plans, l.readTails(ctx, plans)
}

// readCheckpoints reads the live checkpoint of every writer with
// checkpoints of every partition, and notes it and its commit in the plan.
func (l *loader) readCheckpoints(ctx context.Context, plans []*partPlan) error {
	var wps []writerPart
	for _, pp := range plans {
		for w := range pp.ckpts {
			wps = append(wps, writerPart{pp: pp, w: w})
		}
	}
	res := make([]readResult, len(wps))
	commits := make([]int64, len(wps))
	err := parallel.Each(ctx, l.n, len(wps), func(i int) error {
		r, commit, err := l.readCheckpoint(ctx, wps[i])
		res[i], commits[i] = r, commit
		return wrapDir(wps[i].pp.p.dir, err)
	})
	for i, wp := range wps {
		wp.pp.lives[wp.w] = commits[i]
		if commits[i] >= 0 {
			wp.pp.ckptRes[wp.w] = res[i]
		}
	}
	return err
}

// readTails reads every writer's listed index objects above its live
// checkpoint, into each plan's tailRes.
func (l *loader) readTails(ctx context.Context, plans []*partPlan) error {
	var jobs []readJob
	for _, pp := range plans {
		for _, w := range pp.writer {
			jobs = append(jobs, writerPart{pp: pp, w: w}.tail()...)
		}
	}
	res := make([]readResult, len(jobs))
	err := parallel.Each(ctx, l.n, len(jobs), func(i int) error {
		r, err := l.read(ctx, jobs[i])
		res[i] = r
		return wrapDir(jobs[i].dir, err)
	})
	if err != nil {
		return err
	}
	for i, j := range jobs {
		j.pp.tailRes[j.key] = res[i]
	}
	return nil
}

// wrapDir names the folder a load failed under.
func wrapDir(dir string, err error) error {
	if err == nil {
		return nil
	}
	return fmt.Errorf("load the archive index under %q: %w", dir, err)
}

// sortAll sorts entries by topic, partition, first offset and key (then
// by decreasing commit).
func sortAll(es []Entry) {
	sort.Slice(es, func(i, j int) bool { return entryLess(&es[i], &es[j]) })
}

// entryLess is sortAll's order.
func entryLess(a, b *Entry) bool {
	if !sameGroup(a, b) {
		return groupLess(a, b)
	}
	return a.Commit > b.Commit
}

// LogPartition names one partition of the archive index's log.
type LogPartition struct {
	Topic     string
	Partition int32
}

// LogPartitions returns the partitions of the log under prefix (of topics,
// when given) in key order, found as LoadWith finds them: one listing
// request per partition, not a listing of the log.
func LogPartitions(ctx context.Context, st Store, prefix string, topics []string, opt LoadOptions) ([]LogPartition, error) {
	l := newLoader(st, prefix, opt)
	ps, err := l.discover(ctx, topics)
	out := make([]LogPartition, len(ps))
	for i, p := range ps {
		out[i] = LogPartition{Topic: p.topic, Partition: p.part}
	}
	return out, err
}
