package inspect

import (
	"context"
	"errors"
	"slices"
	"strings"
	"time"

	"github.com/kafkas3/kafkas3/restore"
	"github.com/kafkas3/kafkas3/s3store"
)

// MaxBuckets bounds a partition's timeline: with records spread over more
// hours or days than this, the newest MaxBuckets are kept.
const MaxBuckets = 5000

// timeline counts records and bytes per bucket of one partition.
type timeline struct {
	size int64 // bucket size in ms; 0: off
	m    map[int64]*Bucket
}

func newTimeline(bucket time.Duration) *timeline {
	return &timeline{size: bucket.Milliseconds(), m: map[int64]*Bucket{}}
}

// add spreads records and bytes of an entry stamped from minTS to maxTS
// (ms) evenly over the buckets that range meets, the remainders to the
// first ones.
func (t *timeline) add(minTS, maxTS, records, bytes int64) {
	if t.size <= 0 {
		return
	}
	first, last := floorDiv(minTS, t.size), floorDiv(maxTS, t.size)
	if last-first >= MaxBuckets {
		first = last - MaxBuckets + 1
	}
	n := last - first + 1
	for i := int64(0); i < n; i++ {
		b := t.m[first+i]
		if b == nil {
			b = &Bucket{Start: time.UnixMilli((first + i) * t.size).UTC()}
			t.m[first+i] = b
		}
		b.Records += records / n
		b.Bytes += bytes / n
		if i < records%n {
			b.Records++
		}
		if i < bytes%n {
			b.Bytes++
		}
	}
	if len(t.m) > 2*MaxBuckets {
		t.trim()
	}
}

// trim keeps the newest MaxBuckets bucket numbers' range.
func (t *timeline) trim() {
	newest := int64(0)
	for k := range t.m {
		newest = max(newest, k)
	}
	for k := range t.m {
		if k <= newest-MaxBuckets {
			delete(t.m, k)
		}
	}
}

// buckets returns the buckets from the first to the last, empty ones
// included, at most the newest MaxBuckets.
func (t *timeline) buckets() []Bucket {
	if len(t.m) == 0 {
		return nil
	}
	t.trim()
	keys := make([]int64, 0, len(t.m))
	for k := range t.m {
		keys = append(keys, k)
	}
	slices.Sort(keys)
	out := make([]Bucket, 0, keys[len(keys)-1]-keys[0]+1)
	for k := keys[0]; k <= keys[len(keys)-1]; k++ {
		if b := t.m[k]; b != nil {
			out = append(out, *b)
		} else {
			out = append(out, Bucket{Start: time.UnixMilli(k * t.size).UTC()})
		}
	}
	return out
}

func floorDiv(a, b int64) int64 {
	q := a / b
	if (a%b != 0) && (a < 0) {
		q--
	}
	return q
}

// unindexedTopics returns the topics to list without an index: of
// Config.Topics those the index does not hold; without Config.Topics the
// topic folders under topics.dir the index does not hold (one delimiter
// listing with a FolderLister, else a listing of topics.dir).
func unindexedTopics(ctx context.Context, cfg Config, st s3store.Store, indexed map[string]bool) ([]string, error) {
	if len(cfg.Topics) > 0 {
		var out []string
		for _, t := range cfg.Topics {
			if !indexed[t] {
				out = append(out, t)
			}
		}
		return out, nil
	}
	found := map[string]bool{}
	root := restore.TopicsRoot(cfg.Keys)
	note := func(key string) {
		if cfg.IndexPrefix != "" && strings.HasPrefix(key, cfg.IndexPrefix) {
			return
		}
		if t, skip := restore.TopicFolder(cfg.Keys, key); skip == "" && !indexed[t] {
			found[t] = true
		}
	}
	err := s3store.ErrNoFolders
	if fl, ok := st.(s3store.FolderLister); ok {
		err = fl.ListFolders(ctx, root, cfg.Keys.DirectoryDelim, func(f string) error {
			note(f)
			return nil
		}, func(s3store.ObjectInfo) error { return nil })
	}
	if errors.Is(err, s3store.ErrNoFolders) {
		err = st.List(ctx, root, func(info s3store.ObjectInfo) error {
			note(info.Key)
			return nil
		})
	}
	if err != nil {
		return nil, err
	}
	return sortedKeys(found), nil
}

// scanTopic summarises a topic without index from a listing of its
// folder: per partition its objects, bytes, formats, lowest start offset
// and newest modification time.
func scanTopic(ctx context.Context, cfg Config, st s3store.Store, topic string) ([]Partition, error) {
	parts := map[int32]*Partition{}
	formats := map[int32]map[string]bool{}
	err := st.List(ctx, cfg.Keys.TopicPrefix(topic), func(info s3store.ObjectInfo) error {
		name, err := cfg.Keys.ParseObjectKey(info.Key)
		if err != nil || name.Topic != topic {
			return nil // not an object of the layout: ls shows what it can name
		}
		p := parts[name.Partition]
		if p == nil {
			p = &Partition{Topic: topic, Partition: name.Partition, FirstOffset: name.StartOffset, LastOffset: -1, Commit: -1, Problems: []string{}}
			parts[name.Partition] = p
			formats[name.Partition] = map[string]bool{}
		}
		p.Objects++
		p.Bytes += info.Size
		p.FirstOffset = min(p.FirstOffset, name.StartOffset)
		formats[name.Partition][strings.TrimPrefix(name.Ext, ".")] = true
		if m := info.ModTime.UTC(); !info.ModTime.IsZero() && (p.Written == nil || m.After(*p.Written)) {
			p.Written = &m
		}
		return nil
	})
	if err != nil {
		return nil, err
	}
	out := make([]Partition, 0, len(parts))
	for k, p := range parts {
		p.Formats = sortedKeys(formats[k])
		p.Parts = []string{}
		out = append(out, *p)
	}
	return out, nil
}
