package checkpoint

import (
	"context"
	"errors"
	"fmt"

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
	// Read the number read to write it (the tail after the previous one).
	LogObjects, Read int
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
// reading at most concurrency of them at a time: its newest checkpoint at
// or below upTo, streamed, merged with its index objects after that one.
// Nothing is written when no index object is new.
func Write(ctx context.Context, st Store, p Partition, upTo int64, concurrency int) (Result, error) {
	prev, err := newest(ctx, st, p, upTo)
	if err != nil {
		return Result{}, err
	}
	keys, err := tailKeys(ctx, st, p, prev, upTo)
	if err != nil || len(keys) == 0 {
		return Result{}, err
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
	return Result{Key: key, LogObjects: n, Read: len(keys)}, nil
}

// logKey is an index object of the tail.
type logKey struct {
	key    string
	commit int64
}

// newest returns the key of p's newest checkpoint at or below upTo, or
// the zero KeyName with Commit -1.
func newest(ctx context.Context, st Store, p Partition, upTo int64) (index.KeyName, error) {
	best := index.KeyName{Commit: -1}
	err := st.List(ctx, index.CheckpointPartitionDir(p.Prefix, p.Topic, p.Partition), func(info s3store.ObjectInfo) error {
		kn, err := index.ParseCheckpointKey(info.Key)
		if err != nil {
			return err
		}
		if kn.Writer == p.Writer && (upTo < 0 || kn.Commit <= upTo) && kn.Commit > best.Commit {
			best = kn
		}
		return nil
	})
	if err != nil {
		return best, fmt.Errorf("list the checkpoints of topic %s partition %d: %w", p.Topic, p.Partition, err)
	}
	return best, nil
}

// tailKeys lists p.Writer's index objects after prev up to upTo.
func tailKeys(ctx context.Context, st Store, p Partition, prev index.KeyName, upTo int64) ([]logKey, error) {
	dir := index.PartitionDir(p.Prefix, p.Topic, p.Partition)
	after := ""
	if prev.Commit >= 0 {
		// "~" sorts after every key of the checkpoint's commit.
		after = index.Key(p.Prefix, p.Topic, p.Partition, prev.Commit, "")
		after = after[:len(after)-len(".jsonl")] + "~"
	}
	var keys []logKey
	err := listAfter(ctx, st, dir, after, func(info s3store.ObjectInfo) error {
		kn, err := index.ParseKey(info.Key)
		if err != nil {
			return err
		}
		if upTo >= 0 && kn.Commit > upTo {
			return errStop // keys sort by commit
		}
		if kn.Writer == p.Writer {
			keys = append(keys, logKey{key: info.Key, commit: kn.Commit})
		}
		return nil
	})
	if err != nil && !errors.Is(err, errStop) {
		return nil, fmt.Errorf("list the archive index of topic %s partition %d: %w", p.Topic, p.Partition, err)
	}
	return keys, nil
}

// listAfter is s3store.ListAfter for a Store of this package.
func listAfter(ctx context.Context, st Store, prefix, after string, fn func(s3store.ObjectInfo) error) error {
	if al, ok := st.(s3store.AfterLister); ok {
		return al.ListAfter(ctx, prefix, after, fn)
	}
	return st.List(ctx, prefix, func(info s3store.ObjectInfo) error {
		if info.Key <= after {
			return nil
		}
		return fn(info)
	})
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
