package checkpoint

import (
	"context"
	"fmt"
	"sort"

	"github.com/kafkas3/kafkas3/index"
	"github.com/kafkas3/kafkas3/s3store"
)

// BeginResult is what one Begin did.
type BeginResult struct {
	// Start is the start checkpoint written, "" when p.Writer already had
	// a live checkpoint at or below the offset the run starts from.
	Start string
	// Others are the checkpoints written, with Start, for the other
	// writers of the log without any checkpoint (see start).
	Others []string
	// Voided are p.Writer's checkpoints above that offset, made void.
	Voided []string
	// Read counts the index objects read.
	Read int
}

// Begin runs before a sink's first index object of a partition in a run
// that starts at offset from (the group's committed offset, or the first
// offset read when it has none). It establishes the invariant readers
// rely on to list only the log after the lowest live checkpoint (see the
// index package doc, "Reading an archive"): every index object of
// p.Writer that no checkpoint covers has a commit above the commit of
// p.Writer's live checkpoint.
//
//  1. Unless p.Writer has a live checkpoint at or below from (counting
//     only its checkpoints at or below from, the ones step 2 leaves
//     live), it writes one, its start checkpoint: p.Writer's checkpoint
//     of its log up to from, at the commit of its last index object at
//     or below from (Write's), or, when it has none there (a new writer),
//     a checkpoint with no entry at commit from. Both are functions of
//     p.Writer's log up to from, so writing one again, or another writer
//     writing it, gives the same bytes. Before it, every other writer of
//     the log without any checkpoint (an older kafkas3's) gets its
//     checkpoint over its whole log (start).
//  2. It voids p.Writer's checkpoints above from (Void): the run writes
//     index objects at commits above from, which they would cover.
//
// The order makes a crash at any point harmless: after step 1 alone the
// newest checkpoint is still the live one; after step 2, and before the
// run's first index object, readers read the start checkpoint and a
// tail. Writing a checkpoint again gives the same bytes; voiding again
// the same voids.
func Begin(ctx context.Context, st Store, p Partition, from int64, concurrency int) (BeginResult, error) {
	if from < 0 {
		return BeginResult{}, fmt.Errorf("checkpoints of topic %s partition %d: a run starting at offset %d", p.Topic, p.Partition, from)
	}
	ckpts, err := index.ListCheckpoints(ctx, st, p.Prefix, p.Topic, p.Partition)
	if err != nil {
		return BeginResult{}, fmt.Errorf("list the checkpoints of topic %s partition %d: %w", p.Topic, p.Partition, err)
	}
	var below []int64
	for _, c := range ckpts[p.Writer] {
		if c <= from {
			below = append(below, c)
		}
	}
	prev, err := live(ctx, st, p, below)
	if err != nil {
		return BeginResult{}, err
	}
	var res BeginResult
	if prev.Commit < 0 {
		if res, err = start(ctx, st, p, ckpts, from, concurrency); err != nil {
			return res, err
		}
	}
	res.Voided, err = voidAbove(ctx, st, p, ckpts[p.Writer], from)
	return res, err
}

// start writes p.Writer's start checkpoint at from (see Begin), given the
// partition's checkpoints, none of p.Writer's at or below from live.
// First, as Write does for a writer's first checkpoint, it checkpoints
// every other writer of the log without any checkpoint (an older
// kafkas3's), over its whole log: its index objects may lie below
// p.Writer's, where readers no longer list.
func start(ctx context.Context, st Store, p Partition, ckpts map[string][]int64, from int64, concurrency int) (BeginResult, error) {
	var res BeginResult
	others, err := writersWithout(ctx, st, p, ckpts)
	if err != nil {
		return res, err
	}
	for _, w := range others {
		o := p
		o.Writer = w
		r, err := write(ctx, st, o, -1, concurrency, false)
		if err != nil {
			return res, fmt.Errorf("checkpoint of writer %q (no checkpoint of its own): %w", w, err)
		}
		if r.Key != "" {
			res.Others = append(res.Others, r.Key)
		}
		res.Read += r.Read
	}
	r, err := writeWith(ctx, st, p, ckpts, nil, from, concurrency, false)
	res.Start, res.Read = r.Key, res.Read+r.Read
	if err != nil || r.Key != "" {
		return res, err
	}
	key := index.CheckpointKey(p.Prefix, p.Topic, p.Partition, from, p.Writer)
	if _, err := store(ctx, st, key, p, from, index.KeyName{Commit: -1}, nil, 0); err != nil {
		return res, err
	}
	res.Start = key
	return res, nil
}

// writersWithout lists the partition's whole log (keys only) and returns
// its writers, p.Writer aside, without any checkpoint in ckpts, sorted.
func writersWithout(ctx context.Context, st Store, p Partition, ckpts map[string][]int64) ([]string, error) {
	seen := map[string]bool{}
	err := st.List(ctx, index.PartitionDir(p.Prefix, p.Topic, p.Partition), func(info s3store.ObjectInfo) error {
		kn, err := index.ParseKey(info.Key)
		if err != nil {
			return err
		}
		if kn.Writer != p.Writer && len(ckpts[kn.Writer]) == 0 {
			seen[kn.Writer] = true
		}
		return nil
	})
	if err != nil {
		return nil, fmt.Errorf("list the archive index of topic %s partition %d: %w", p.Topic, p.Partition, err)
	}
	out := make([]string, 0, len(seen))
	for w := range seen {
		out = append(out, w)
	}
	sort.Strings(out)
	return out, nil
}
