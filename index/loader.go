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
// (discover), list what to read of each (plan), read it (read) and merge
// the entries (mergeResults).

// loader is one LoadWith.
type loader struct {
	st     Store
	prefix string
	n      int
}

// logPartition is one partition of the log, and the folder whose load it
// belongs to (for errors).
type logPartition struct {
	topic string
	part  int32
	dir   string
}

// readJob is one object to read: an index object or a checkpoint.
type readJob struct {
	key, dir    string
	checkpoint  bool
	topic       string
	part        int32
	writer      string
	checkpointC int64
}

// readResult is what one readJob gave.
type readResult struct {
	entries    []sourced
	logObjects int
	dropped    int
	checkpoint bool
}

// sourced is an entry and the key of the index object it was written in.
type sourced struct {
	e   Entry
	src string
}

// errStop ends a listing early.
var errStop = errors.New("stop listing")

// listAfter is s3store.ListAfter for the Store of this package.
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

// firstAfter returns the first key under prefix after after, "" when
// there is none: one listing request.
func firstAfter(ctx context.Context, st Store, prefix, after string) (string, error) {
	var key string
	err := listAfter(ctx, st, prefix, after, func(info s3store.ObjectInfo) error {
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

// plan lists what to read of one partition: each writer's newest
// checkpoint, and the index objects after it (after the lowest of them,
// with one listing); every index object when the partition has no
// checkpoint, or when the listing finds a writer without one.
func (l *loader) plan(ctx context.Context, p logPartition) ([]readJob, error) {
	ckpts, err := l.checkpoints(ctx, p)
	if err != nil {
		return nil, err
	}
	var jobs []readJob
	low := int64(-1)
	for w, kn := range ckpts {
		jobs = append(jobs, readJob{key: CheckpointKey(l.prefix, p.topic, p.part, kn.Commit, w), dir: p.dir, checkpoint: true,
			topic: p.topic, part: p.part, writer: w, checkpointC: kn.Commit})
		if low < 0 || kn.Commit < low {
			low = kn.Commit
		}
	}
	sort.Slice(jobs, func(i, j int) bool { return jobs[i].key < jobs[j].key })
	pdir := PartitionDir(l.prefix, p.topic, p.part)
	after := ""
	if low >= 0 {
		after = pdir + stamp(low, "")
	}
	logJobs, unknown, err := l.tail(ctx, p, ckpts, after)
	if err == nil && unknown && after != "" {
		logJobs, _, err = l.tail(ctx, p, ckpts, "")
	}
	return append(jobs, logJobs...), err
}

// tail lists the partition's index objects after after that no
// checkpoint covers; unknown tells whether a writer without a checkpoint
// wrote one of them.
func (l *loader) tail(ctx context.Context, p logPartition, ckpts map[string]KeyName, after string) ([]readJob, bool, error) {
	var jobs []readJob
	unknown := false
	err := listAfter(ctx, l.st, PartitionDir(l.prefix, p.topic, p.part), after, func(info s3store.ObjectInfo) error {
		kn, err := ParseKey(info.Key)
		if err != nil {
			return err
		}
		c, ok := ckpts[kn.Writer]
		if !ok {
			unknown = true
		}
		if !ok || kn.Commit > c.Commit {
			jobs = append(jobs, readJob{key: info.Key, dir: p.dir, topic: p.topic, part: p.part, writer: kn.Writer})
		}
		return nil
	})
	return jobs, unknown, err
}

// checkpoints lists the partition's checkpoints and returns each writer's
// newest.
func (l *loader) checkpoints(ctx context.Context, p logPartition) (map[string]KeyName, error) {
	newest := map[string]KeyName{}
	err := l.st.List(ctx, CheckpointPartitionDir(l.prefix, p.topic, p.part), func(info s3store.ObjectInfo) error {
		kn, err := ParseCheckpointKey(info.Key)
		if err != nil {
			return err
		}
		if kn.Topic != p.topic || kn.Partition != p.part {
			return fmt.Errorf("%w: checkpoint %q is not of topic %q partition %d", ErrMalformed, info.Key, p.topic, p.part)
		}
		if old, ok := newest[kn.Writer]; !ok || kn.Commit > old.Commit {
			newest[kn.Writer] = kn
		}
		return nil
	})
	return newest, err
}

// read reads one index object or checkpoint.
func (l *loader) read(ctx context.Context, j readJob) (readResult, error) {
	rc, err := l.st.Open(ctx, j.key)
	if err != nil {
		what := "index object"
		if j.checkpoint {
			what = "checkpoint"
		}
		return readResult{}, fmt.Errorf("open %s %q: %w", what, j.key, err)
	}
	defer rc.Close()
	if !j.checkpoint {
		entries, err := Decode(j.key, rc)
		if err != nil {
			return readResult{}, err
		}
		r := readResult{logObjects: 1, entries: make([]sourced, len(entries))}
		for i := range entries {
			r.entries[i] = sourced{e: entries[i], src: j.key}
		}
		return r, nil
	}
	r := readResult{checkpoint: true}
	h, dropped, err := ReadCheckpoint(j.key, rc, nil, func(e *Entry) error {
		r.entries = append(r.entries, sourced{e: *e, src: Key(l.prefix, j.topic, j.part, e.Commit, j.writer)})
		return nil
	})
	if err != nil {
		return readResult{}, err
	}
	r.logObjects, r.dropped = h.LogObjects, dropped
	return r, nil
}

// mergeResults builds the Index of what the reads gave.
func mergeResults(res []readResult) *Index {
	ix := &Index{}
	var all []sourced
	total := 0
	for _, r := range res {
		ix.IndexObjects += r.logObjects
		if r.checkpoint {
			ix.Checkpoints++
		}
		total += len(r.entries) + r.dropped
		all = append(all, r.entries...)
	}
	sortSourced(all)
	live := map[string]*sourced{}
	kept := all[:0]
	group := 0 // start in kept of the entries of the current topic, partition, first offset and key
	for i := range all {
		s := all[i]
		if len(kept) > 0 && !sameGroup(&kept[len(kept)-1].e, &s.e) {
			group = len(kept)
		}
		if restampsKept(kept[group:], &s.e) {
			continue
		}
		kept = append(kept, s)
	}
	for i := range kept {
		s := &kept[i]
		if old, ok := live[s.e.Key]; !ok || outranks(s, old) {
			live[s.e.Key] = s
		}
	}
	ix.Superseded = total - len(live)
	ix.All = make([]Entry, len(kept))
	for i := range kept {
		ix.All[i] = kept[i].e
	}
	ix.Entries = make([]Entry, 0, len(live))
	for _, s := range live {
		ix.Entries = append(ix.Entries, s.e)
	}
	sortAll(ix.Entries)
	return ix
}

// restampsKept tells whether e restamps one of group, the entries kept so
// far of its topic, partition, first offset and key (each outranks e).
func restampsKept(group []sourced, e *Entry) bool {
	for i := range group {
		if Restamped(e, &group[i].e) {
			return true
		}
	}
	return false
}

func sameGroup(a, b *Entry) bool {
	return a.Topic == b.Topic && a.Partition == b.Partition && a.First() == b.First() && a.Key == b.Key
}

// outranks tells whether a is newer than b, an entry of the same object
// key: a higher commit or, for the same commit, an index object whose key
// sorts first (the one a listing reads first).
func outranks(a, b *sourced) bool {
	if a.e.Commit != b.e.Commit {
		return a.e.Commit > b.e.Commit
	}
	return a.src < b.src
}

// sortSourced sorts by topic, partition, first offset, key, then newest
// first (outranks).
func sortSourced(ss []sourced) {
	sort.Slice(ss, func(i, j int) bool {
		a, b := &ss[i], &ss[j]
		if !sameGroup(&a.e, &b.e) {
			if a.e.Topic != b.e.Topic {
				return a.e.Topic < b.e.Topic
			}
			if a.e.Partition != b.e.Partition {
				return a.e.Partition < b.e.Partition
			}
			if a.e.First() != b.e.First() {
				return a.e.First() < b.e.First()
			}
			return a.e.Key < b.e.Key
		}
		return outranks(a, b)
	})
}
