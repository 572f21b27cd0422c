package objindex

import (
	"context"
	"fmt"
	"sort"
	"strings"

	"github.com/kafkas3/kafkas3/index"
	"github.com/kafkas3/kafkas3/partition"
	"github.com/kafkas3/kafkas3/restore"
	"github.com/kafkas3/kafkas3/s3store"
)

// Reasons a listed key is not indexed (Result.Skipped).
const (
	SkipOtherExtension = "other extension"
	SkipMalformed      = "malformed object name"
	SkipHeadersOnly    = "headers object without a value or keys object"
	SkipEmpty          = "object without records"
)

// The infixes of the parallel objects' extensions (".keys.json").
const (
	keysInfix    = ".keys"
	headersInfix = ".headers"
)

// object is one value object, or a tombstone object (a .keys object
// without a value object), of a Kafka partition, with its parallel
// objects.
type object struct {
	key       string
	folder    string // its encoded partition ("partition=0")
	start     int64  // the start offset its name gives
	tombstone bool   // key is the .keys object's
	keys      *twin
	headers   *twin
}

// twin is a .keys or .headers object; ext is the format's extension after
// the infix (".json" of ".keys.json").
type twin struct {
	key, ext, folder string
	start            int64
}

// tp is a Kafka partition.
type tp struct {
	topic string
	part  int32
}

// listing is what the listing of topics.dir found.
type listing struct {
	keys    partition.KeyConfig
	ext     string
	prefix  string
	topics  map[string]bool // the chosen topics; nil for every one
	values  map[string]*object
	twins   map[string]*[2]*twin // base key → keys, headers
	parts   map[string]tp        // base key → partition
	skipped map[string]int
}

// list lists the objects of the chosen topics (opt.Topics, every topic
// folder under topics.dir when empty) and returns each Kafka partition's
// objects in offset order (then key order).
func list(ctx context.Context, st index.Store, opt Options) (map[tp][]*object, map[string]int, error) {
	l := &listing{keys: opt.Keys, ext: opt.Format.Extension(), prefix: opt.Prefix,
		values: map[string]*object{}, twins: map[string]*[2]*twin{}, parts: map[string]tp{}, skipped: map[string]int{}}
	visit := func(info s3store.ObjectInfo) error { l.visit(info.Key); return nil }
	if len(opt.Topics) > 0 {
		l.topics = map[string]bool{}
		for _, t := range opt.Topics {
			l.topics[t] = true
			if err := st.List(ctx, opt.Keys.TopicPrefix(t), visit); err != nil {
				return nil, nil, fmt.Errorf("list archive topic %q: %w", t, err)
			}
		}
	} else {
		root := strings.TrimSuffix(restore.TopicsRoot(opt.Keys), opt.Keys.DirectoryDelim)
		if err := st.List(ctx, root, visit); err != nil {
			return nil, nil, fmt.Errorf("list archive under %q: %w", root, err)
		}
	}
	return l.partitions(), l.skipped, nil
}

// visit sorts one listed key: a value object, a .keys or .headers object,
// or skipped (the index's, outside a topic folder, another extension, a
// malformed name).
func (l *listing) visit(key string) {
	if l.prefix != "" && strings.HasPrefix(key, l.prefix) {
		return
	}
	topic, skip := restore.TopicFolder(l.keys, key)
	if skip != "" {
		l.skipped[skip]++
		return
	}
	if l.topics != nil && !l.topics[topic] {
		return
	}
	name, err := l.keys.ParseObjectKey(key)
	if err != nil {
		l.skipped[SkipMalformed]++
		return
	}
	base := strings.TrimSuffix(key, name.Ext)
	p := tp{name.Topic, name.Partition}
	if name.Ext == l.ext {
		l.values[base] = &object{key: key, folder: name.Encoded, start: name.StartOffset}
		l.parts[base] = p
		return
	}
	for i, infix := range []string{keysInfix, headersInfix} {
		if rest, ok := strings.CutPrefix(name.Ext, infix); ok && strings.HasPrefix(rest, ".") {
			pair := l.twins[base]
			if pair == nil {
				pair = &[2]*twin{}
				l.twins[base] = pair
			}
			pair[i] = &twin{key: key, ext: rest, folder: name.Encoded, start: name.StartOffset}
			l.parts[base] = p
			return
		}
	}
	l.skipped[SkipOtherExtension]++
}

// partitions pairs the parallel objects with their value objects (a
// .keys object without one is a tombstone object) and returns each
// partition's objects in order.
func (l *listing) partitions() map[tp][]*object {
	for base, pair := range l.twins {
		o := l.values[base]
		switch {
		case o != nil:
		case pair[0] != nil:
			o = &object{key: pair[0].key, folder: pair[0].folder, start: pair[0].start, tombstone: true}
			l.values[base] = o
		default:
			l.skipped[SkipHeadersOnly]++
			continue
		}
		o.keys, o.headers = pair[0], pair[1]
	}
	out := map[tp][]*object{}
	for base, o := range l.values {
		p := l.parts[base]
		out[p] = append(out[p], o)
	}
	for _, os := range out {
		sort.Slice(os, func(i, j int) bool {
			if os[i].start != os[j].start {
				return os[i].start < os[j].start
			}
			return os[i].key < os[j].key
		})
	}
	return out
}
