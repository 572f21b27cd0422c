package objindex

import (
	"context"
	"errors"
	"fmt"
	"sort"
	"sync"

	"github.com/kafkas3/kafkas3/checkpoint"
	"github.com/kafkas3/kafkas3/format"
	"github.com/kafkas3/kafkas3/index"
	"github.com/kafkas3/kafkas3/internal/parallel"
	"github.com/kafkas3/kafkas3/partition"
)

// Options are Build's.
type Options struct {
	Prefix string              // kafkas3.index.prefix
	Keys   partition.KeyConfig // topics.dir and the layout
	Format format.Format       // format.class, with its compression
	Topics []string            // the topics to index; every topic folder when empty
	// SHA256 adds each object's SHA-256 (kafkas3.index.digest=sha256).
	SHA256 bool
	// Concurrency bounds the store requests in flight; 0 means
	// index.DefaultConcurrency.
	Concurrency int
	// DryRun lists the partitions that would be indexed and reads nothing.
	DryRun bool
	// Progress, when set, is called after each object read (objects read,
	// objects to read).
	Progress func(done, total int)
}

// Result is what Build did (or, with DryRun, would do).
type Result struct {
	// Partitions are the partitions indexed, as "<topic>/<partition>", in
	// order; Indexed the partitions that already had an index (left
	// alone).
	Partitions []string
	Indexed    int
	// Objects counts the value and tombstone objects indexed,
	// IndexObjects the index objects written, Checkpoints the checkpoints.
	Objects, IndexObjects int
	Checkpoints           []string
	// Skipped counts the keys under topics.dir not indexed, by reason
	// (Skip*, and restore's Skip* for keys in no topic folder).
	Skipped map[string]int
	// Underivable are the partitions left without an index because the
	// offsets of their objects cannot be derived (see the package doc),
	// as "<topic>/<partition>: <why>"; they are in Partitions too.
	Underivable []string
}

// Build writes the archive index of every Kafka partition of the chosen
// topics that has objects under topics.dir but no index object under
// opt.Prefix: its entries, as index objects of the writer Writer(), and
// a checkpoint (see the package doc). Partitions are done one after
// another, each one's objects read opt.Concurrency at a time. An object
// that cannot be read or decoded fails it, naming the object; so does a
// store failure.
func Build(ctx context.Context, st checkpoint.Store, opt Options) (Result, error) {
	if opt.Concurrency <= 0 {
		opt.Concurrency = index.DefaultConcurrency
	}
	objs, skipped, err := list(ctx, st, opt)
	if err != nil {
		return Result{}, err
	}
	res := Result{Skipped: skipped}
	todo, err := unindexed(ctx, st, opt, objs, &res)
	if err != nil || opt.DryRun {
		return res, err
	}
	total := 0
	for _, p := range todo {
		total += len(objs[p])
	}
	prog := &progress{fn: opt.Progress, total: total}
	for _, p := range todo {
		if err := buildPartition(ctx, st, opt, p, objs[p], prog, &res); err != nil {
			return res, err
		}
	}
	return res, nil
}

// unindexed returns the partitions of objs without an index object, in
// order, and notes them in res.
func unindexed(ctx context.Context, st checkpoint.Store, opt Options, objs map[tp][]*object, res *Result) ([]tp, error) {
	topics := map[string]bool{}
	for p := range objs {
		topics[p.topic] = true
	}
	names := make([]string, 0, len(topics))
	for t := range topics {
		names = append(names, t)
	}
	sort.Strings(names)
	logged, err := index.LogPartitions(ctx, st, opt.Prefix, names, index.LoadOptions{Concurrency: opt.Concurrency})
	if err != nil {
		return nil, err
	}
	has := map[tp]bool{}
	for _, lp := range logged {
		has[tp{lp.Topic, lp.Partition}] = true
	}
	var todo []tp
	for p := range objs {
		if has[p] {
			res.Indexed++
			continue
		}
		todo = append(todo, p)
	}
	sort.Slice(todo, func(i, j int) bool {
		if todo[i].topic != todo[j].topic {
			return todo[i].topic < todo[j].topic
		}
		return todo[i].part < todo[j].part
	})
	for _, p := range todo {
		res.Partitions = append(res.Partitions, fmt.Sprintf("%s/%d", p.topic, p.part))
	}
	return todo, nil
}

// progress counts the objects read across partitions.
type progress struct {
	mu          sync.Mutex
	fn          func(done, total int)
	done, total int
}

func (p *progress) add() {
	if p.fn == nil {
		return
	}
	p.mu.Lock()
	defer p.mu.Unlock()
	p.done++
	p.fn(p.done, p.total)
}

// buildPartition reads the objects of one partition, writes its index
// objects (one per commit) and then its checkpoint.
func buildPartition(ctx context.Context, st checkpoint.Store, opt Options, p tp, objs []*object, prog *progress, res *Result) error {
	entries := make([]index.Entry, len(objs))
	empty := make([]bool, len(objs))
	err := parallel.Each(ctx, opt.Concurrency, len(objs), func(i int) error {
		e, err := entry(ctx, st, opt, p, objs[i])
		prog.add()
		if errors.Is(err, errEmpty) {
			empty[i] = true
			return nil
		}
		entries[i] = e
		return err
	})
	if err != nil {
		return fmt.Errorf("index topic %s partition %d from its objects: %w", p.topic, p.part, err)
	}
	if why := underivable(entries, empty, objs); why != "" {
		res.Underivable = append(res.Underivable, fmt.Sprintf("%s/%d: %s", p.topic, p.part, why))
		return nil
	}
	byCommit := map[int64][]index.Entry{}
	for i, e := range entries {
		if empty[i] {
			res.Skipped[SkipEmpty]++
			continue
		}
		byCommit[e.Commit] = append(byCommit[e.Commit], e)
		res.Objects++
	}
	commits := make([]int64, 0, len(byCommit))
	for c := range byCommit {
		commits = append(commits, c)
	}
	sort.Slice(commits, func(i, j int) bool { return commits[i] < commits[j] })
	err = parallel.Each(ctx, opt.Concurrency, len(commits), func(i int) error {
		return putIndex(ctx, st, opt.Prefix, p, commits[i], byCommit[commits[i]])
	})
	if err != nil {
		return err
	}
	res.IndexObjects += len(commits)
	if len(commits) == 0 {
		return nil
	}
	r, err := checkpoint.Write(ctx, st, checkpoint.Partition{Prefix: opt.Prefix, Topic: p.topic, Partition: p.part, Writer: Writer()}, -1, opt.Concurrency)
	if err != nil {
		return fmt.Errorf("checkpoint of topic %s partition %d: %w", p.topic, p.part, err)
	}
	if r.Key != "" {
		res.Checkpoints = append(res.Checkpoints, r.Key)
	}
	return nil
}

// putIndex writes the index object of entries at commit.
func putIndex(ctx context.Context, st checkpoint.Store, prefix string, p tp, commit int64, entries []index.Entry) error {
	key := index.Key(prefix, p.topic, p.part, commit, Writer())
	data, err := index.Encode(entries)
	if err != nil {
		return fmt.Errorf("index object %q: %w", key, err)
	}
	ow, err := st.Create(ctx, key)
	if err != nil {
		return fmt.Errorf("create index object %q: %w", key, err)
	}
	if _, err := ow.Write(data); err != nil {
		_ = ow.Abort(context.WithoutCancel(ctx))
		return fmt.Errorf("write index object %q: %w", key, err)
	}
	if err := ow.Commit(ctx); err != nil {
		return fmt.Errorf("store index object %q: %w", key, err)
	}
	return nil
}

// underivable tells why the offsets of a partition's objects cannot be
// derived, "" when they can: every object is an envelope object (its
// records carry their offsets), or all lie in one folder and none is a
// tombstone object. Otherwise an object's records need not be
// consecutive offsets (a field or time partitioner spreads a partition's
// records over folders, tombstone objects hold the null values between
// the others), and assumed runs could overlap where the records do not:
// a reader would drop records as duplicates.
func underivable(entries []index.Entry, empty []bool, objs []*object) string {
	folders := map[string]bool{}
	plain, tombstones := 0, 0
	for i, e := range entries {
		if empty[i] {
			continue
		}
		folders[objs[i].folder] = true
		if e.Tombstone {
			tombstones++
		}
		if !e.Envelope {
			plain++
		}
	}
	switch {
	case plain == 0:
		return ""
	case len(folders) > 1:
		return fmt.Sprintf("%d objects without envelopes in %d folders: their records' offsets are unknown", plain, len(folders))
	case tombstones > 0:
		return fmt.Sprintf("%d tombstone objects: their records' offsets are unknown", tombstones)
	}
	return ""
}
