package checkpoint

import (
	"context"
	"fmt"

	"github.com/kafkas3/kafkas3/index"
)

// BeginResult is what one Begin did.
type BeginResult struct {
	// Start is the start checkpoint written, "" when p.Writer already had
	// a live checkpoint at or below the offset the run starts from.
	Start string
	// Others are the checkpoints written for other writers without one
	// (Write's sweep, when Start is p.Writer's first checkpoint).
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
// p.Writer that no checkpoint covers has a commit at or above the commit
// of p.Writer's live checkpoint.
//
//  1. Unless p.Writer has a live checkpoint at or below from (counting
//     only its checkpoints at or below from, the ones step 2 leaves
//     live), it writes one, its start checkpoint: p.Writer's checkpoint
//     of its log up to from, at the commit of its last index object at
//     or below from (Write's), or, when it has none there (a new writer),
//     a checkpoint with no entry at commit from. Both are functions of
//     p.Writer's log up to from, so writing one again, or another writer
//     writing it, gives the same bytes.
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
func start(ctx context.Context, st Store, p Partition, ckpts map[string][]int64, from int64, concurrency int) (BeginResult, error) {
	r, err := writeWith(ctx, st, p, ckpts, nil, from, concurrency, true)
	res := BeginResult{Start: r.Key, Others: r.Others, Read: r.Read}
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
