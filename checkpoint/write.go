package checkpoint

import (
	"context"
	"errors"
	"fmt"
	"sort"

	"github.com/kafkas3/kafkas3/index"
	"github.com/kafkas3/kafkas3/internal/parallel"
	"github.com/kafkas3/kafkas3/s3store"
)

// Store is the part of s3store.Store that Write needs.
type Store interface {
	index.Store
	Create(ctx context.Context, key string) (s3store.ObjectWriter, error)
}

// Result is what one Write did.
type Result struct {
	// Key is the checkpoint written, "" when there was nothing new to
	// cover (the newest checkpoint covers the log up to upTo).
	Key string
	// LogObjects is the number of index objects the checkpoint covers;
	// Read the number read to write it (the tail after the previous one,
	// and the logs of Others).
	LogObjects, Read int
	// Others are the checkpoints Write wrote for other writers without
	// one (see Write).
	Others []string
}

// Partition names the checkpoints of one writer in one partition.
type Partition struct {
	Prefix    string
	Topic     string
	Partition int32
	Writer    string
}

// errStop ends a listing early.
var errStop = errors.New("stop listing")

// Write writes p.Writer's checkpoint of the partition covering its index
// objects with a commit at or below upTo (every one when upTo < 0),
// reading at most concurrency of them at a time: its live checkpoint
// (index.ReadLiveCheckpoint), streamed, merged with its index objects
// after that one. Nothing is written when no index object is new, or when
// the live checkpoint is above upTo.
//
// When p.Writer has no checkpoint at all (this is its first), Write first
// writes, for every other writer its listing of the log shows without
// any checkpoint, that writer's checkpoint up to upTo: the same bytes
// that writer would write (a checkpoint is a function of its writer's
// log), so that a writer that stopped, or never checkpoints, is read
// from a checkpoint too (Result.Others).
func Write(ctx context.Context, st Store, p Partition, upTo int64, concurrency int) (Result, error) {
	return write(ctx, st, p, upTo, concurrency, true)
}

func write(ctx context.Context, st Store, p Partition, upTo int64, concurrency int, sweep bool) (Result, error) {
	ckpts, err := index.ListCheckpoints(ctx, st, p.Prefix, p.Topic, p.Partition)
	if err != nil {
		return Result{}, fmt.Errorf("list the checkpoints of topic %s partition %d: %w", p.Topic, p.Partition, err)
	}
	return writeWith(ctx, st, p, ckpts, ckpts[p.Writer], upTo, concurrency, sweep)
}

// writeWith is write given the partition's checkpoints (ckpts) and the
// commits of p.Writer's checkpoints to start from (own: all of them, or
// those at or below the offset a run starts from, see Begin).
func writeWith(ctx context.Context, st Store, p Partition, ckpts map[string][]int64, own []int64, upTo int64, concurrency int, sweep bool) (Result, error) {
	prev, err := live(ctx, st, p, own)
	if err != nil || (upTo >= 0 && prev.Commit >= upTo) {
		return Result{}, err
	}
	keys, others, err := tailKeys(ctx, st, p, prev, upTo)
	if err != nil {
		return Result{}, err
	}
	var res Result
	if sweep && len(ckpts[p.Writer]) == 0 {
		for _, w := range others {
			if len(ckpts[w]) > 0 {
				continue
			}
			o := p
			o.Writer = w
			r, err := write(ctx, st, o, upTo, concurrency, false)
			if err != nil {
				return Result{}, fmt.Errorf("checkpoint of writer %q (no checkpoint of its own): %w", w, err)
			}
			if r.Key != "" {
				res.Others = append(res.Others, r.Key)
			}
			res.Read += r.Read
		}
	}
	if len(keys) == 0 {
		return res, nil
	}
	logs := make([][]index.Entry, len(keys))
	err = parallel.Each(ctx, max(concurrency, 1), len(keys), func(i int) error {
		es, err := readIndexObject(ctx, st, keys[i].key)
		logs[i] = es
		return err
	})
	if err != nil {
		return Result{}, err
	}
	var tail []index.Entry
	for _, es := range logs {
		tail = append(tail, es...)
	}
	commit := keys[len(keys)-1].commit
	key := index.CheckpointKey(p.Prefix, p.Topic, p.Partition, commit, p.Writer)
	n, err := store(ctx, st, key, p, commit, prev, tail, len(keys))
	if err != nil {
		return Result{}, err
	}
	res.Key, res.LogObjects, res.Read = key, n, res.Read+len(keys)
	return res, nil
}

// logKey is an index object of the tail.
type logKey struct {
	key    string
	commit int64
}

// live returns the key of p's live checkpoint among commits (its
// checkpoints' commits, in increasing order), reading only headers, or
// the zero KeyName with Commit -1.
func live(ctx context.Context, st Store, p Partition, commits []int64) (index.KeyName, error) {
	h, _, err := index.ReadLiveCheckpoint(ctx, st, p.Prefix, p.Topic, p.Partition, p.Writer, commits,
		func(index.CheckpointHeader) error { return errStop }, nil)
	switch {
	case errors.Is(err, errStop):
	case err != nil:
		return index.KeyName{Commit: -1}, err
	case h.Commit < 0:
		return index.KeyName{Commit: -1}, nil
	}
	return index.KeyName{Prefix: p.Prefix, Topic: p.Topic, Partition: p.Partition, Commit: h.Commit, Writer: p.Writer}, nil
}

// tailKeys lists p.Writer's index objects after prev up to upTo, and the
// other writers the listing shows (sorted).
func tailKeys(ctx context.Context, st Store, p Partition, prev index.KeyName, upTo int64) ([]logKey, []string, error) {
	dir := index.PartitionDir(p.Prefix, p.Topic, p.Partition)
	after := ""
	if prev.Commit >= 0 {
		// "~" sorts after every key of the checkpoint's commit.
		after = index.Key(p.Prefix, p.Topic, p.Partition, prev.Commit, "")
		after = after[:len(after)-len(".jsonl")] + "~"
	}
	var keys []logKey
	seen := map[string]bool{}
	err := s3store.ListAfter(ctx, st, dir, after, func(info s3store.ObjectInfo) error {
		kn, err := index.ParseKey(info.Key)
		if err != nil {
			return err
		}
		if upTo >= 0 && kn.Commit > upTo {
			return errStop // keys sort by commit
		}
		if kn.Writer == p.Writer {
			keys = append(keys, logKey{key: info.Key, commit: kn.Commit})
		} else {
			seen[kn.Writer] = true
		}
		return nil
	})
	if err != nil && !errors.Is(err, errStop) {
		return nil, nil, fmt.Errorf("list the archive index of topic %s partition %d: %w", p.Topic, p.Partition, err)
	}
	others := make([]string, 0, len(seen))
	for w := range seen {
		others = append(others, w)
	}
	sort.Strings(others)
	return keys, others, nil
}

// readIndexObject reads and decodes one index object.
func readIndexObject(ctx context.Context, st Store, key string) ([]index.Entry, error) {
	rc, err := st.Open(ctx, key)
	if err != nil {
		return nil, fmt.Errorf("open index object %q: %w", key, err)
	}
	defer rc.Close()
	return index.Decode(key, rc)
}

// Void makes p.Writer's checkpoints of the partition above below void
// (index.VoidCheckpoint): it overwrites each with a void checkpoint
// pointing readers at or below below. A sink calls it before it writes
// the first index object of a partition in a run that starts at below
// (its committed offset): when an operator moved the group's offset back
// under a checkpoint, the replay writes index objects at commits that
// checkpoint covers, which readers would otherwise never read. Voids
// needs no delete permission, and writing one again gives the same bytes.
// It returns the keys voided (usually none: a sink checkpoints only
// committed offsets).
func Void(ctx context.Context, st Store, p Partition, below int64) ([]string, error) {
	ckpts, err := index.ListCheckpoints(ctx, st, p.Prefix, p.Topic, p.Partition)
	if err != nil {
		return nil, fmt.Errorf("list the checkpoints of topic %s partition %d: %w", p.Topic, p.Partition, err)
	}
	return voidAbove(ctx, st, p, ckpts[p.Writer], below)
}

// voidAbove is Void given the commits of p.Writer's checkpoints.
func voidAbove(ctx context.Context, st Store, p Partition, commits []int64, below int64) ([]string, error) {
	var voided []string
	for _, c := range commits {
		if c <= below {
			continue
		}
		key := index.CheckpointKey(p.Prefix, p.Topic, p.Partition, c, p.Writer)
		data, err := index.VoidCheckpoint(p.Topic, p.Partition, p.Writer, c, below)
		if err != nil {
			return voided, fmt.Errorf("void checkpoint %q: %w", key, err)
		}
		if err := putObject(ctx, st, key, data); err != nil {
			return voided, fmt.Errorf("void checkpoint %q: %w", key, err)
		}
		voided = append(voided, key)
	}
	return voided, nil
}

// putObject stores data at key; on a WORM bucket as a new version when
// the key holds other bytes (a checkpoint voided: s3store.Replacing).
func putObject(ctx context.Context, st Store, key string, data []byte) error {
	ow, err := st.Create(s3store.Replacing(ctx), key)
	if err != nil {
		return err
	}
	if _, err := ow.Write(data); err != nil {
		_ = ow.Abort(context.WithoutCancel(ctx))
		return err
	}
	return ow.Commit(ctx)
}
