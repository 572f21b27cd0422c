package restore

import (
	"errors"
	"fmt"
	"hash/fnv"
	"strconv"
	"strings"
)

// Shard is --shard I/N: the restore takes only the Kafka partitions of
// shard Index of Count, so that N processes (a Kubernetes Indexed Job,
// JOB_COMPLETION_INDEX as I) restore one archive together, each its own
// partitions, at the same time or one after another.
//
// A partition's shard is ShardOf(archived topic, partition, Count): a
// function of those three alone, never of what a process lists, so every
// shard computes the same assignment and each partition belongs to
// exactly one shard. Within one topic consecutive partitions go to
// consecutive shards (counts differ by at most one); where each topic
// starts comes from a hash of its name, so many small topics spread too.
//
// Only planning knows shards: the listing and the archive index keep the
// shard's partitions (each shard reads and checks only its own objects),
// while a topic's partition count stays the archive's, so every shard
// creates a missing target with the same partition count (a creation
// that another shard made first is fine: TopicAlreadyExists counts as
// created). Resume markers and --restore-groups offsets are per
// partition, so each shard writes its own partitions' only; no shard
// waits for another.
type Shard struct {
	Index int // 0 .. Count-1
	Count int // 0 or 1: no sharding
}

// Sharded reports whether s splits the restore.
func (s Shard) Sharded() bool { return s.Count > 1 }

// Owns reports whether partition p of the archived topic is s's.
func (s Shard) Owns(topic string, p int32) bool {
	return !s.Sharded() || ShardOf(topic, p, s.Count) == s.Index
}

func (s Shard) String() string { return fmt.Sprintf("%d/%d", s.Index, s.Count) }

// ShardOf returns the shard of partition p of the archived topic among
// count shards: (FNV-1a 32-bit hash of the topic name + p) mod count.
func ShardOf(topic string, p int32, count int) int {
	if count <= 1 {
		return 0
	}
	h := fnv.New32a()
	_, _ = h.Write([]byte(topic)) // a hash.Hash never fails
	return int((uint64(h.Sum32()) + uint64(uint32(p))) % uint64(count))
}

// ErrBadShard is the error of a --shard value that is not I/N.
var ErrBadShard = errors.New("want I/N with 0 <= I < N, e.g. 0/4 (a Kubernetes Indexed Job: $(JOB_COMPLETION_INDEX)/<completions>)")

// ParseShard parses "I/N".
func ParseShard(v string) (Shard, error) {
	is, ns, ok := strings.Cut(strings.TrimSpace(v), "/")
	i, errI := strconv.Atoi(strings.TrimSpace(is))
	n, errN := strconv.Atoi(strings.TrimSpace(ns))
	if !ok || errI != nil || errN != nil || n < 1 || i < 0 || i >= n || n > 1<<16 {
		return Shard{}, fmt.Errorf("%q: %w", v, ErrBadShard)
	}
	return Shard{Index: i, Count: n}, nil
}

// check validates a Shard set in Config.
func (s Shard) check() error {
	if s.Count == 0 && s.Index == 0 {
		return nil
	}
	if s.Count < 1 || s.Index < 0 || s.Index >= s.Count {
		return fmt.Errorf("%w: shard %s: %w", ErrInvalidConfig, s, ErrBadShard)
	}
	return nil
}
