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
	// All holds every entry of the log, superseded ones included, sorted
	// like Entries and, for the same key, by decreasing commit, but for
	// entries that only restamp a newer one (Restamped). An object may
	// match an older entry than the live one: a later sink run with a
	// smaller flush.size rewrites a key with fewer records and a lower
	// commit.
	All []Entry
}

// Load is LoadWith with the default options.
func Load(ctx context.Context, st Store, prefix string, topics []string) (*Index, error) {
	return LoadWith(ctx, st, prefix, topics, LoadOptions{})
}

// LoadWith reads the archive index under prefix (of topics, when given):
// for each partition, each writer's newest checkpoint and the index
// objects of the log that no checkpoint covers (see the package doc), at
// most opt.Concurrency requests at a time. It keeps, for each object key,
// the entry with the highest commit. An object under the index folder
// that is not an index object, or an index object or checkpoint that does
// not decode, fails the load (the error names its key and line, the first
// such in key order); so does a store failure. The result is the one a
// read of every index object of the log gives.
func LoadWith(ctx context.Context, st Store, prefix string, topics []string, opt LoadOptions) (*Index, error) {
	n := opt.Concurrency
	if n <= 0 {
		n = DefaultConcurrency
	}
	l := &loader{st: st, prefix: prefix, n: n}
	parts, err := l.discover(ctx, topics)
	if err != nil {
		return nil, err
	}
	plans := make([]*partPlan, len(parts))
	err = parallel.Each(ctx, n, len(parts), func(i int) error {
		pp, err := l.plan(ctx, parts[i])
		plans[i] = pp
		return wrapDir(parts[i].dir, err)
	})
	if err != nil {
		return nil, err
	}
	var wps []writerPart
	for _, pp := range plans {
		for _, w := range pp.writer {
			wps = append(wps, writerPart{pp: pp, w: w})
		}
	}
	// Each writer's live checkpoint, then the index objects above it.
	ckpts := make([]readResult, len(wps))
	tails := make([][]readJob, len(wps))
	err = parallel.Each(ctx, n, len(wps), func(i int) error {
		r, commit, err := l.readCheckpoint(ctx, wps[i])
		ckpts[i], tails[i] = r, wps[i].tail(commit)
		return wrapDir(wps[i].pp.p.dir, err)
	})
	if err != nil {
		return nil, err
	}
	var jobs []readJob
	for _, t := range tails {
		jobs = append(jobs, t...)
	}
	res := make([]readResult, len(jobs))
	err = parallel.Each(ctx, n, len(jobs), func(i int) error {
		r, err := l.read(ctx, jobs[i])
		res[i] = r
		return wrapDir(jobs[i].dir, err)
	})
	if err != nil {
		return nil, err
	}
	res = append(res, ckpts...)
	return mergeResults(res), nil
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
	l := &loader{st: st, prefix: prefix, n: max(opt.Concurrency, 1)}
	if opt.Concurrency <= 0 {
		l.n = DefaultConcurrency
	}
	ps, err := l.discover(ctx, topics)
	out := make([]LogPartition, len(ps))
	for i, p := range ps {
		out[i] = LogPartition{Topic: p.topic, Partition: p.part}
	}
	return out, err
}
