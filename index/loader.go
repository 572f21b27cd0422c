package index

import (
	"context"
	"errors"
	"fmt"
	"sort"

	"github.com/kafkas3/kafkas3/internal/parallel"
	"github.com/kafkas3/kafkas3/s3store"
)

// This file holds LoadWith's steps: find the partitions of the log
// (discover), list each one's checkpoints (planCheckpoints), read each
// writer's live checkpoint (readCheckpoint), list the log from the lowest
// of them on (listLog), read the index objects above each writer's
// (tail, read) and merge the entries (mergeResults).

// loader is one LoadWith.
type loader struct {
	st     Store
	prefix string
	n      int
	// keepPruned is LoadOptions.KeepPruned.
	keepPruned bool
}

// logPartition is one partition of the log, and the folder whose load it
// belongs to (for errors).
type logPartition struct {
	topic string
	part  int32
	dir   string
}

// readJob is one index object to read, and the folder whose load it
// belongs to (for errors).
type readJob struct {
	key, dir string
	pp       *partPlan // the plan whose tailRes the result goes to
}

// readResult is what one readJob (or one writer's live checkpoint) gave:
// the entries of one writer's index object or checkpoint.
type readResult struct {
	entries    []Entry
	writer     string // the writer of the index objects the entries were written in
	logObjects int
	dropped    int
	checkpoint bool
	// checkpoints counts checkpoints beyond checkpoint's one: a Tail's
	// counts of those whose entries it let go (Tail.Prune).
	checkpoints int
}

// errStop ends a listing early.
var errStop = errors.New("stop listing")

// firstAfter returns the first key under prefix after after, "" when
// there is none: one listing request.
func firstAfter(ctx context.Context, st Store, prefix, after string) (string, error) {
	var key string
	err := s3store.ListAfter(ctx, st, prefix, after, func(info s3store.ObjectInfo) error {
		key = info.Key
		return errStop
	})
	if err != nil && !errors.Is(err, errStop) {
		return "", err
	}
	return key, nil
}

// discover finds the partitions of the log without listing it: a skip
// scan asks for the first key after each partition folder found, one
// listing request per partition (per topic in parallel when topics are
// given). A key that is not an index object's fails it, naming the key.
func (l *loader) discover(ctx context.Context, topics []string) ([]logPartition, error) {
	if len(topics) == 0 {
		return l.scan(ctx, Dir(l.prefix))
	}
	found := make([][]logPartition, len(topics))
	err := parallel.Each(ctx, l.n, len(topics), func(i int) error {
		ps, err := l.scan(ctx, TopicDir(l.prefix, topics[i]))
		found[i] = ps
		return err
	})
	var all []logPartition
	for _, ps := range found {
		all = append(all, ps...)
	}
	return all, err
}

// scan is discover's skip scan of one folder of the log.
func (l *loader) scan(ctx context.Context, d string) ([]logPartition, error) {
	var out []logPartition
	after := ""
	for {
		key, err := firstAfter(ctx, l.st, d, after)
		if err != nil {
			return nil, wrapDir(d, err)
		}
		if key == "" {
			return out, nil
		}
		kn, err := ParseKey(key)
		if err != nil {
			return nil, wrapDir(d, err)
		}
		out = append(out, logPartition{topic: kn.Topic, part: kn.Partition, dir: d})
		// "~" sorts after every index object name of the folder.
		after = PartitionDir(l.prefix, kn.Topic, kn.Partition) + "~"
	}
}

// partPlan is what LoadWith knows of one partition: every writer's
// checkpoints (commits in increasing order), the live checkpoint's commit
// of each writer that has checkpoints (-1 when none is live), and the
// index objects of the listed part of the log (in key order, so by
// commit).
type partPlan struct {
	p     logPartition
	ckpts map[string][]int64
	lives map[string]int64
	logs  map[string][]logObject
	// after is where the listing of the log started (s3store.ListAfter);
	// "" for the whole log. listed counts the keys it gave.
	after  string
	listed int
	writer []string // the writers of ckpts and logs, sorted
	// ckptStamps holds what the listing said of each checkpoint key;
	// ckptRes each writer's live checkpoint read (writers with one live),
	// tailRes each index object read, by key (Tail keeps them).
	ckptStamps map[string]objStamp
	ckptRes    map[string]readResult
	tailRes    map[string]readResult
	// below is the partition's watermark (pruned.go; 0: none).
	below int64
}

// prunedBelow maps each partition of plans with a watermark to it.
func prunedBelow(plans []*partPlan) map[LogPartition]int64 {
	var out map[LogPartition]int64
	for _, pp := range plans {
		if pp.below > 0 {
			if out == nil {
				out = map[LogPartition]int64{}
			}
			out[LogPartition{Topic: pp.p.topic, Partition: pp.p.part}] = pp.below
		}
	}
	return out
}

// objStamp is what a listing says of an object: a rewritten object lists
// with another size, ETag or modification time.
type objStamp struct {
	size int64
	etag string
	mod  int64 // Unix nanoseconds
}

// stampOf is info's objStamp.
func stampOf(info s3store.ObjectInfo) objStamp {
	return objStamp{size: info.Size, etag: info.ETag, mod: info.ModTime.UnixNano()}
}

// results returns what the load of the partition read: its live
// checkpoints and the index objects above them.
func (pp *partPlan) results() []readResult {
	out := make([]readResult, 0, len(pp.ckptRes)+len(pp.tailRes))
	for _, r := range pp.ckptRes {
		out = append(out, r)
	}
	for _, r := range pp.tailRes {
		out = append(out, r)
	}
	return out
}

// logObject is one index object of the log.
type logObject struct {
	key    string
	commit int64
	stamp  objStamp
}

// planCheckpoints lists one partition's checkpoints (keys only).
func (l *loader) planCheckpoints(ctx context.Context, p logPartition) (*partPlan, error) {
	ckpts, stamps, below, err := listCheckpoints(ctx, l.st, l.prefix, p.topic, p.part)
	return &partPlan{p: p, ckpts: ckpts, lives: map[string]int64{}, logs: map[string][]logObject{}, below: below,
		ckptStamps: stamps, ckptRes: map[string]readResult{}, tailRes: map[string]readResult{}}, err
}

// listFrom returns where the listing of a partition's log starts, given
// every checkpointed writer's live commit (pp.lives): after the keys below
// the lowest live commit, or "" (the whole log) when the partition has no
// checkpoint, or a writer with checkpoints has none live (an archive of an
// older kafkas3 voided it). See the package doc, "Reading an archive":
// by the sink's start checkpoint, a writer's index objects that no
// checkpoint covers lie above its live checkpoint.
func (pp *partPlan) listFrom(prefix string) string {
	if len(pp.lives) == 0 {
		return ""
	}
	low := int64(-1)
	for _, c := range pp.lives {
		if c < 0 {
			return ""
		}
		if low < 0 || c < low {
			low = c
		}
	}
	// "<commit, 20 digits>" sorts before every key of that commit and
	// after every key of a lower one.
	return PartitionDir(prefix, pp.p.topic, pp.p.part) + stamp(low, "")
}

// listLog lists the partition's log from pp.listFrom on (keys only, about
// 1,000 a listing request; no index object is read here). When that
// listing shows a writer without any checkpoint (a sink of an older
// kafkas3 writing after the others checkpointed), its index objects may
// lie below too: the whole log is listed.
func (l *loader) listLog(ctx context.Context, pp *partPlan) error {
	pp.after = pp.listFrom(l.prefix)
	err := l.list(ctx, pp)
	if err == nil && pp.after != "" && pp.unknownWriter() {
		pp.after, pp.logs = "", map[string][]logObject{}
		err = l.list(ctx, pp)
	}
	seen := map[string]bool{}
	for w := range pp.ckpts {
		seen[w] = true
	}
	for w := range pp.logs {
		seen[w] = true
	}
	pp.writer = pp.writer[:0]
	for w := range seen {
		pp.writer = append(pp.writer, w)
	}
	sort.Strings(pp.writer)
	return err
}

// list lists the partition's log after pp.after into pp.logs.
func (l *loader) list(ctx context.Context, pp *partPlan) error {
	return s3store.ListAfter(ctx, l.st, PartitionDir(l.prefix, pp.p.topic, pp.p.part), pp.after, func(info s3store.ObjectInfo) error {
		kn, err := ParseKey(info.Key)
		if err != nil {
			return err
		}
		pp.listed++
		pp.logs[kn.Writer] = append(pp.logs[kn.Writer], logObject{key: info.Key, commit: kn.Commit, stamp: stampOf(info)})
		return nil
	})
}

// unknownWriter tells whether the listed log holds a writer without any
// checkpoint.
func (pp *partPlan) unknownWriter() bool {
	for w := range pp.logs {
		if _, ok := pp.ckpts[w]; !ok {
			return true
		}
	}
	return false
}

// ListCheckpoints lists the checkpoints of a partition under prefix and
// returns each writer's commits in increasing order. A key in the folder
// that is not a checkpoint of the partition fails it, naming the key.
func ListCheckpoints(ctx context.Context, st Store, prefix, topic string, p int32) (map[string][]int64, error) {
	out, _, _, err := listCheckpoints(ctx, st, prefix, topic, p)
	return out, err
}

// listCheckpoints is ListCheckpoints, what the listing said of each
// checkpoint key, and the partition's watermark (pruned.go; 0: none).
func listCheckpoints(ctx context.Context, st Store, prefix, topic string, p int32) (map[string][]int64, map[string]objStamp, int64, error) {
	out := map[string][]int64{}
	stamps := map[string]objStamp{}
	var below int64
	err := st.List(ctx, CheckpointPartitionDir(prefix, topic, p), func(info s3store.ObjectInfo) error {
		if w, ok, err := parsePrunedKey(info.Key); ok || err != nil {
			below = max(below, w)
			return err
		}
		kn, err := ParseCheckpointKey(info.Key)
		if err != nil {
			return err
		}
		if kn.Topic != topic || kn.Partition != p {
			return fmt.Errorf("%w: checkpoint %q is not of topic %q partition %d", ErrMalformed, info.Key, topic, p)
		}
		out[kn.Writer] = append(out[kn.Writer], kn.Commit)
		stamps[info.Key] = stampOf(info)
		return nil
	})
	for _, cs := range out {
		sort.Slice(cs, func(i, j int) bool { return cs[i] < cs[j] })
	}
	return out, stamps, below, err
}

// ReadLiveCheckpoint reads writer's live checkpoint of a partition, given
// its checkpoints' commits in increasing order (ListCheckpoints): the
// newest, unless it is void (CheckpointHeader.Void), then the newest at
// or below the void's commit, and so on. onHeader and fn are
// ReadCheckpoint's, called for the live one only (a void one holds no
// entry). It returns the live checkpoint's header, or a header with
// Commit -1 when the writer has no live checkpoint.
func ReadLiveCheckpoint(ctx context.Context, st Store, prefix, topic string, p int32, writer string, commits []int64,
	onHeader func(CheckpointHeader) error, fn func(*Entry) error) (CheckpointHeader, int, error) {
	i := len(commits) - 1
	for i >= 0 {
		key := CheckpointKey(prefix, topic, p, commits[i], writer)
		rc, err := st.Open(ctx, key)
		if err != nil {
			return CheckpointHeader{}, 0, fmt.Errorf("open checkpoint %q: %w", key, err)
		}
		var void *int64
		h, dropped, err := ReadCheckpoint(key, rc, func(h CheckpointHeader) error {
			if void = h.Void; void != nil || onHeader == nil {
				return nil
			}
			return onHeader(h)
		}, fn)
		rc.Close()
		if err != nil || void == nil {
			return h, dropped, err
		}
		for i >= 0 && commits[i] > *void {
			i--
		}
	}
	return CheckpointHeader{Commit: -1}, 0, nil
}

// writerPart is one writer of one partition: what LoadWith reads of it.
type writerPart struct {
	pp *partPlan
	w  string
}

// readCheckpoint reads the live checkpoint of one writer of a partition
// (ReadLiveCheckpoint) and returns it with its commit, -1 when there is
// none.
func (l *loader) readCheckpoint(ctx context.Context, wp writerPart) (readResult, int64, error) {
	pp := wp.pp
	r := readResult{checkpoint: true, writer: wp.w}
	h, dropped, err := ReadLiveCheckpoint(ctx, l.st, l.prefix, pp.p.topic, pp.p.part, wp.w, pp.ckpts[wp.w], nil, func(e *Entry) error {
		r.entries = append(r.entries, *e)
		return nil
	})
	if err != nil || h.Commit < 0 {
		return readResult{}, -1, err
	}
	r.logObjects, r.dropped = h.LogObjects, dropped
	return r, h.Commit, nil
}

// tail returns the jobs that read the writer's listed index objects
// above its live checkpoint (all of them when it has none).
func (wp writerPart) tail() []readJob {
	commit, ok := wp.pp.lives[wp.w]
	if !ok {
		commit = -1
	}
	var jobs []readJob
	for _, o := range wp.pp.logs[wp.w] {
		if o.commit > commit {
			jobs = append(jobs, readJob{key: o.key, dir: wp.pp.p.dir, pp: wp.pp})
		}
	}
	return jobs
}

// read reads one index object.
func (l *loader) read(ctx context.Context, j readJob) (readResult, error) {
	rc, err := l.st.Open(ctx, j.key)
	if err != nil {
		return readResult{}, fmt.Errorf("open index object %q: %w", j.key, err)
	}
	defer rc.Close()
	kn, err := ParseKey(j.key)
	if err != nil {
		return readResult{}, err
	}
	entries, err := Decode(j.key, rc)
	if err != nil {
		return readResult{}, err
	}
	return readResult{logObjects: 1, entries: entries, writer: kn.Writer}, nil
}
