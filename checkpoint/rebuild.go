package checkpoint

import (
	"context"
	"fmt"
	"sort"
	"sync"

	"github.com/kafkas3/kafkas3/index"
	"github.com/kafkas3/kafkas3/internal/parallel"
	"github.com/kafkas3/kafkas3/s3store"
)

// RebuildOptions are Rebuild's.
type RebuildOptions struct {
	Prefix string   // kafkas3.index.prefix
	Topics []string // the topics to rebuild; all when empty
	// Concurrency bounds the store requests in flight; 0 means
	// index.DefaultConcurrency.
	Concurrency int
	// DryRun lists what would be written and writes nothing.
	DryRun bool
	// Progress, when set, is called after each partition (partitions
	// done, partitions in all, checkpoints written so far).
	Progress func(done, total, written int)
}

// RebuildResult is what Rebuild did (or, with DryRun, would do).
type RebuildResult struct {
	Partitions int
	// Written are the checkpoints written (with DryRun: the writers'
	// partitions that have index objects no checkpoint covers, as
	// "<topic>/<partition> writer <w>").
	Written []string
	// Read counts the index objects read.
	Read int
}

// Rebuild writes, for every partition of the index's log under
// opt.Prefix and every writer of it (an older kafkas3's log without
// writers included), the checkpoint covering all of its index objects:
// from the writer's newest checkpoint and the index objects after it, so
// that running it again writes nothing new. The partitions are found as
// index.LoadWith finds them; each is listed in full once to find its
// writers.
func Rebuild(ctx context.Context, st Store, opt RebuildOptions) (RebuildResult, error) {
	n := opt.Concurrency
	if n <= 0 {
		n = index.DefaultConcurrency
	}
	parts, err := index.LogPartitions(ctx, st, opt.Prefix, opt.Topics, index.LoadOptions{Concurrency: n})
	if err != nil {
		return RebuildResult{}, err
	}
	res := RebuildResult{Partitions: len(parts)}
	outer := min(n, max(len(parts), 1))
	inner := max(1, n/outer)
	var mu sync.Mutex
	done := 0
	err = parallel.Each(ctx, outer, len(parts), func(i int) error {
		written, read, err := rebuildPartition(ctx, st, opt, parts[i], inner)
		mu.Lock()
		defer mu.Unlock()
		res.Written = append(res.Written, written...)
		res.Read += read
		done++
		if opt.Progress != nil {
			opt.Progress(done, len(parts), len(res.Written))
		}
		return err
	})
	sort.Strings(res.Written)
	return res, err
}

// rebuildPartition writes the checkpoints of every writer of one
// partition.
func rebuildPartition(ctx context.Context, st Store, opt RebuildOptions, lp index.LogPartition, n int) (written []string, read int, err error) {
	last := map[string]int64{} // each writer's highest commit
	err = st.List(ctx, index.PartitionDir(opt.Prefix, lp.Topic, lp.Partition), func(info s3store.ObjectInfo) error {
		kn, err := index.ParseKey(info.Key)
		if err != nil {
			return err
		}
		last[kn.Writer] = max(last[kn.Writer], kn.Commit)
		return nil
	})
	if err != nil {
		return nil, 0, fmt.Errorf("list the archive index of topic %s partition %d: %w", lp.Topic, lp.Partition, err)
	}
	writers := make([]string, 0, len(last))
	for w := range last {
		writers = append(writers, w)
	}
	sort.Strings(writers)
	var ckpts map[string][]int64
	if opt.DryRun {
		if ckpts, err = index.ListCheckpoints(ctx, st, opt.Prefix, lp.Topic, lp.Partition); err != nil {
			return nil, 0, fmt.Errorf("list the checkpoints of topic %s partition %d: %w", lp.Topic, lp.Partition, err)
		}
	}
	for _, w := range writers {
		p := Partition{Prefix: opt.Prefix, Topic: lp.Topic, Partition: lp.Partition, Writer: w}
		if opt.DryRun {
			prev, err := live(ctx, st, p, ckpts[w])
			if err != nil {
				return written, read, err
			}
			if prev.Commit < last[w] {
				written = append(written, fmt.Sprintf("%s/%d writer %q", lp.Topic, lp.Partition, w))
			}
			continue
		}
		r, err := Write(ctx, st, p, -1, n)
		read += r.Read
		if err != nil {
			return written, read, err
		}
		written = append(written, r.Others...)
		if r.Key != "" {
			written = append(written, r.Key)
		}
	}
	return written, read, nil
}
