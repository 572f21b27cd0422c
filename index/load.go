package index

import (
	"context"
	"fmt"
	"io"
	"sort"

	"github.com/kafkas3/kafkas3/s3store"
)

// Store is the part of s3store.Store that Load needs.
type Store interface {
	List(ctx context.Context, prefix string, fn func(s3store.ObjectInfo) error) error
	Open(ctx context.Context, key string) (io.ReadCloser, error)
}

// Index is the archive index as read from the store.
type Index struct {
	// Entries holds the live entries: for each object key, the entry with
	// the highest commit. Sorted by topic, partition, first offset, key.
	Entries []Entry
	// Superseded counts the entries replaced by one with a higher commit
	// for the same object key (a replay after a crash, or a later run
	// writing the same key).
	Superseded int
	// IndexObjects counts the index objects read.
	IndexObjects int
	// All holds every entry read, superseded ones included, sorted like
	// Entries and, for the same key, by decreasing commit. An object may
	// match an older entry than the live one: a later sink run with a
	// smaller flush.size rewrites a key with fewer records and a lower
	// commit.
	All []Entry
}

// Load lists "<prefix>index/" (or "<prefix>index/<topic>/" for each of
// topics, when given), decodes every index object and keeps, for each
// object key, the entry with the highest commit. An object under the
// folder that is not an index object, or one that does not decode, fails
// the load (the error names its key and line); so does a store failure.
func Load(ctx context.Context, st Store, prefix string, topics []string) (*Index, error) {
	dirs := []string{Dir(prefix)}
	if len(topics) > 0 {
		dirs = dirs[:0]
		for _, t := range topics {
			dirs = append(dirs, TopicDir(prefix, t))
		}
	}
	live := map[string]Entry{}
	ix := &Index{}
	for _, d := range dirs {
		err := st.List(ctx, d, func(info s3store.ObjectInfo) error {
			rc, err := st.Open(ctx, info.Key)
			if err != nil {
				return fmt.Errorf("open index object %q: %w", info.Key, err)
			}
			entries, err := Decode(info.Key, rc)
			rc.Close()
			if err != nil {
				return err
			}
			ix.IndexObjects++
			ix.All = append(ix.All, entries...)
			for _, e := range entries {
				old, ok := live[e.Key]
				switch {
				case !ok:
					live[e.Key] = e
				case e.Commit > old.Commit:
					live[e.Key] = e
					ix.Superseded++
				default:
					ix.Superseded++
				}
			}
			return nil
		})
		if err != nil {
			return nil, fmt.Errorf("load the archive index under %q: %w", d, err)
		}
	}
	ix.Entries = make([]Entry, 0, len(live))
	for _, e := range live {
		ix.Entries = append(ix.Entries, e)
	}
	sortAll(ix.Entries)
	sortAll(ix.All)
	return ix, nil
}

// sortAll sorts entries by topic, partition, first offset and key.
func sortAll(es []Entry) {
	sort.Slice(es, func(i, j int) bool {
		a, b := &es[i], &es[j]
		if a.Topic != b.Topic {
			return a.Topic < b.Topic
		}
		if a.Partition != b.Partition {
			return a.Partition < b.Partition
		}
		if a.First() != b.First() {
			return a.First() < b.First()
		}
		if a.Key != b.Key {
			return a.Key < b.Key
		}
		return a.Commit > b.Commit
	})
}
