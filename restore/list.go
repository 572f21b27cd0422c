package restore

import (
	"cmp"
	"context"
	"fmt"
	"slices"
	"sort"
	"strings"
	"sync"

	"github.com/kafkas3/kafkas3/partition"
	"github.com/kafkas3/kafkas3/s3store"
)

// Tombstones
//
// Under behavior.on.null.values=write the sink archives a tombstone (a
// record with a null value) as a record of a keys-only object
// "<topic>+<partition>+<start>.keys<ext>" (and of its .headers object)
// under the encoded partition tombstone.encoded.partition
// (Config.TombstonePartition, "tombstone" by default), and a switch between
// tombstones and other records always rotates. So each object holds a run
// of one kind, and the value objects and tombstone objects of a Kafka
// partition, sorted together by start offset, are the partition's records
// in order. Plan makes each keys-only object of the tombstone folder a
// tombstone object (Object.Tombstone) of its Kafka partition; its records
// are produced with their key, their headers and a nil value, in their
// place. They count like other records for resuming and are compared like
// them (a nil value differs from an empty one). A .keys object without a
// value object outside the tombstone folder, and a .headers object with
// neither a value nor a keys object, are skipped, counted and logged.

// Plan
//
// Plan lists <topics.dir><dd><topic><dd> for each chosen topic (with
// topics.regex: everything under topics.dir, matching topic folders with a
// full match), parses every key, and groups the objects by Kafka partition,
// sorted by the numeric start offset in the key (TopicFolder says which
// topic folder a key is in, for callers that look at the archive
// themselves). Keys outside topics.dir,
// keys of another format's extension and (unless behavior.on.error=fail)
// malformed names are skipped and counted by reason, and so are the
// archive index's own objects (Config.IndexPrefix). A topic's partition
// count is the highest partition seen plus one (or a partition only the
// index knows).
//
// Every layout is read the same way: the default (partition=<n>), the
// time-based, daily and hourly ones (year=2026/month=12/day=31/hour=23)
// and the field one (region=eu/tier=3). A key's folder (Object.Folder) is
// everything between its topic folder and its file name, at any depth,
// joined by directory.delim; the Kafka partition and start offset come
// from the file name. So a partition's objects are gathered from every
// folder and ordered by offset, never by folder name: folders need not
// sort like time (a path.format starting with the day, a span of years,
// late records written back into an earlier period's folder).
//
// Plan also loads each topic's latest description the sink recorded
// (index.LatestTopic; TopicPlan.Described, nil for archives without one).

// listing is what the plan's listing of the archive found for the chosen
// topics.
type listing struct {
	ext string // the value format's extension
	// objects holds the value objects of each Kafka partition, in listing
	// order.
	objects map[topicPartition][]listedObject
	// parallel holds the .keys and .headers objects of each Kafka
	// partition by the key of the value object they belong to without its
	// extension ("<base>").
	parallel map[topicPartition]map[string]*parallelPair
	topics   map[string]bool // chosen topics seen (or named)
	skipped  map[string]int  // keys not restored, by reason (Skip*)
	// partitions is each topic's partition count in the whole archive
	// (the highest partition named plus one), other shards' included;
	// otherShards counts the keys left to other shards (Config.Shard).
	partitions  map[string]int32
	otherShards int
	// marks are, in follow mode, the marks of the partitions whose
	// restored objects the listing leaves out (prune.go); below is the
	// fingerprint of those it left out.
	marks map[topicPartition]*pruneMark
	below map[topicPartition]listPrint
	// tier notes the listed objects of an archive storage class, which
	// the plan checks before it reads anything (s3store.ArchiveTierCheck).
	tier s3store.ArchiveTierCheck
	// mu guards the listing once the plan's partitions are planned, a few
	// at once (completeListing, take).
	mu sync.Mutex
}

// listedObject is one listed value object: what the plan makes an Object
// of (take), without the fields the plan fills in.
type listedObject struct {
	key, etag, folder string
	size, start       int64
}

// parallelPair is the .keys and .headers objects of one base key (either
// may be nil).
type parallelPair struct{ keys, headers *parallelObject }

// parallelObject is one listed .keys or .headers object.
type parallelObject struct {
	key, ext string // ext: the format's extension after the infix
	size     int64
	etag     string
	name     partition.ObjectName
}

// twin is po as the twin of a value object.
func (po *parallelObject) twin() twinObject {
	return twinObject{key: po.key, ext: po.ext, etag: po.etag, size: po.size}
}

// list lists the chosen topics' folders (Config.Topics), or everything
// under topics.dir (Config.TopicsRegex), and sorts each key (visit).
func (r *Restorer) list(ctx context.Context) (*listing, error) {
	l := &listing{
		ext:      r.cfg.Format.Extension(),
		objects:  map[topicPartition][]listedObject{},
		parallel: map[topicPartition]map[string]*parallelPair{},
		topics:   map[string]bool{},
		skipped:  map[string]int{},

		partitions: map[string]int32{},
		marks:      r.marks(),
		below:      map[topicPartition]listPrint{},
	}
	visit := func(info s3store.ObjectInfo) error { return r.visit(l, info) }
	n, dd := r.readConcurrency(), r.cfg.Keys.DirectoryDelim
	if len(r.cfg.Topics) > 0 {
		for _, t := range r.cfg.Topics {
			l.topics[t] = true
			// The topic's folders (partition=<n>, or a layout's first
			// level) are listed n at a time (s3store.ListParallel).
			if err := s3store.ListParallel(ctx, r.store, r.cfg.Keys.TopicPrefix(t), dd, 1, n, visit); err != nil {
				return nil, fmt.Errorf("list archive topic %q: %w", t, err)
			}
		}
		return l, nil
	}
	// List under topics.dir without its delimiter, so sibling prefixes
	// ("topics-old/...") are seen and counted as outside: topics.dir, its
	// topic folders and theirs, n at a time.
	prefix := strings.TrimSuffix(TopicsRoot(r.cfg.Keys), r.cfg.Keys.DirectoryDelim)
	if err := s3store.ListParallel(ctx, r.store, prefix, dd, 3, n, visit); err != nil {
		return nil, fmt.Errorf("list archive under %q: %w", prefix, err)
	}
	return l, nil
}

// visit sorts one listed key: the archive index's objects and keys in no
// topic folder are skipped, keys of topics not chosen ignored; in a chosen
// topic's folder a key is a value object, a .keys or .headers object, or
// skipped (another extension, a malformed name).
func (r *Restorer) visit(l *listing, info s3store.ObjectInfo) error {
	if r.cfg.IndexPrefix != "" && strings.HasPrefix(info.Key, r.cfg.IndexPrefix) {
		l.skipped[SkipIndex]++
		return nil
	}
	topic, skip := TopicFolder(r.cfg.Keys, info.Key)
	if skip != "" {
		l.skipped[skip]++
		return nil
	}
	if !r.selected(topic) {
		return nil
	}
	l.topics[topic] = true
	name, err := r.cfg.Keys.ParseObjectKey(info.Key)
	if err == nil {
		l.partitions[name.Topic] = max(l.partitions[name.Topic], name.Partition+1)
		if !r.cfg.Shard.Owns(name.Topic, name.Partition) {
			l.otherShards++
			return nil
		}
	}
	switch {
	case err == nil && name.Ext != l.ext:
		if infix, ext, ok := parallelExt(name.Ext); ok {
			if !l.prunedOut(topicPartition{name.Topic, name.Partition}, name.StartOffset, info.Key, info.ETag, info.Size) {
				l.tier.Add(info)
				l.addParallel(info, name, infix, ext)
			}
			return nil
		}
		// e.g. a ".keys.json" file next to ".json" files.
		l.skipped[SkipOtherExtension]++
		return nil
	case !strings.HasSuffix(info.Key, l.ext):
		l.skipped[SkipOtherExtension]++
		return nil
	case err != nil:
		return r.skipMalformed(l, info.Key, err)
	}
	k := topicPartition{name.Topic, name.Partition}
	if l.prunedOut(k, name.StartOffset, info.Key, info.ETag, info.Size) {
		return nil
	}
	l.tier.Add(info)
	l.objects[k] = append(l.objects[k], listedObject{key: info.Key, etag: info.ETag, folder: name.Encoded, size: info.Size, start: name.StartOffset})
	return nil
}

// addParallel records a .keys or .headers object (infix) under its base
// key.
func (l *listing) addParallel(info s3store.ObjectInfo, name partition.ObjectName, infix, ext string) {
	base := strings.TrimSuffix(info.Key, name.Ext)
	tp := topicPartition{name.Topic, name.Partition}
	if l.parallel[tp] == nil {
		l.parallel[tp] = map[string]*parallelPair{}
	}
	pp := l.parallel[tp][base]
	if pp == nil {
		pp = &parallelPair{}
		l.parallel[tp][base] = pp
	}
	po := &parallelObject{key: info.Key, ext: ext, size: info.Size, etag: info.ETag, name: name}
	if infix == keysInfix {
		pp.keys = po
	} else {
		pp.headers = po
	}
}

// skipMalformed fails on a malformed key in a topic folder under
// behavior.on.error=fail, and counts it (logging it with log) otherwise.
func (r *Restorer) skipMalformed(l *listing, key string, err error) error {
	switch r.cfg.OnError {
	case OnErrorIgnore:
	case OnErrorLog:
		r.log.Warn("skipping malformed object key", "key", key, "error", err)
	default:
		return fmt.Errorf("%w (behavior.on.error=fail; set it to ignore or log to skip such keys)", err)
	}
	l.skipped[SkipMalformed]++
	return nil
}

// planTopics starts the plan: one TopicPlan per topic seen, sorted by
// source topic, each with its target after renaming. It returns the plans
// by source topic too. Two topics renamed into one target are refused.
func (r *Restorer) planTopics(l *listing) (*Plan, map[string]*TopicPlan, error) {
	plan := &Plan{Skipped: l.skipped}
	byTarget := map[string]string{}
	for topic := range l.topics {
		target, err := r.rename.Target(topic)
		if err != nil {
			return nil, nil, err
		}
		if other, dup := byTarget[target]; dup {
			a, b := min(other, topic), max(other, topic)
			return nil, nil, fmt.Errorf("%w: archived topics %q and %q would both be restored into %q", ErrInvalidConfig, a, b, target)
		}
		byTarget[target] = topic
		plan.Topics = append(plan.Topics, TopicPlan{Source: topic, Target: target, FirstOffset: -1, LastOffset: -1})
	}
	sort.Slice(plan.Topics, func(i, j int) bool { return plan.Topics[i].Source < plan.Topics[j].Source })
	bySource := make(map[string]*TopicPlan, len(plan.Topics))
	for i := range plan.Topics {
		bySource[plan.Topics[i].Source] = &plan.Topics[i]
	}
	return plan, bySource, nil
}

// partitionsLeft returns the Kafka partitions the listing holds objects of
// (value objects, or .keys and .headers objects), sorted.
func (l *listing) partitionsLeft() []topicPartition {
	l.mu.Lock()
	defer l.mu.Unlock()
	seen := map[topicPartition]bool{}
	for tp := range l.objects {
		seen[tp] = true
	}
	for tp := range l.parallel {
		seen[tp] = true
	}
	out := make([]topicPartition, 0, len(seen))
	for tp := range seen {
		out = append(out, tp)
	}
	sortPartitions(out)
	return out
}

// sortPartitions sorts tps by topic, then partition.
func sortPartitions(tps []topicPartition) {
	slices.SortFunc(tps, func(a, b topicPartition) int {
		return cmp.Or(strings.Compare(a.topic, b.topic), cmp.Compare(a.part, b.part))
	})
}

// listedKeys returns the keys listed of Kafka partition tp, twins
// included.
func (l *listing) listedKeys(tp topicPartition) map[string]bool {
	l.mu.Lock()
	defer l.mu.Unlock()
	listed := map[string]bool{}
	for _, o := range l.objects[tp] {
		listed[o.key] = true
	}
	for _, pp := range l.parallel[tp] {
		for _, po := range []*parallelObject{pp.keys, pp.headers} {
			if po != nil {
				listed[po.key] = true
			}
		}
	}
	return listed
}

// take takes the objects of Kafka partition tp out of the listing: its
// value objects with their .keys and .headers twins (same base key), and
// its tombstone objects, sorted by start offset (numerically), then key,
// and the ETag the listing gave each (the twins' are their own). A .keys
// or .headers object no value object claims is a tombstone object when
// it is a keys-only object in the tombstone folder (with its .headers
// object), and an orphan otherwise: skipped, counted and logged; take
// returns how many.
func (r *Restorer) take(l *listing, tp topicPartition) (objs []Object, etags []string, orphans int) {
	l.mu.Lock()
	listed, twins := l.objects[tp], l.parallel[tp]
	delete(l.objects, tp)
	delete(l.parallel, tp)
	l.mu.Unlock()
	tombDir := cmp.Or(r.cfg.TombstonePartition, DefaultTombstonePartition)
	// Each value object with its twins (pair), then each tombstone object
	// with its keys object and .headers object (pair).
	type item struct {
		lo        listedObject
		pair      *parallelPair
		tombstone bool
	}
	items := make([]item, 0, len(listed))
	for _, lo := range listed {
		base := strings.TrimSuffix(lo.key, l.ext)
		items = append(items, item{lo: lo, pair: twins[base]})
		delete(twins, base) // claimed
	}
	bases := make([]string, 0, len(twins))
	for base := range twins {
		bases = append(bases, base)
	}
	sort.Strings(bases)
	for _, base := range bases {
		pp := twins[base]
		if pp.keys != nil && pp.keys.name.Encoded == tombDir {
			n := pp.keys.name
			items = append(items, item{lo: listedObject{key: pp.keys.key, etag: pp.keys.etag, folder: n.Encoded, size: pp.keys.size, start: n.StartOffset},
				pair: pp, tombstone: true})
			continue
		}
		for _, po := range []*parallelObject{pp.keys, pp.headers} {
			if po != nil {
				orphans++
				r.log.Warn("skipping a keys or headers object without a value object, outside the tombstone folder",
					"key", po.key, "tombstone.encoded.partition", tombDir)
			}
		}
	}
	if orphans > 0 {
		l.mu.Lock()
		l.skipped[SkipParallelOrphan] += orphans
		l.mu.Unlock()
	}
	slices.SortStableFunc(items, func(a, b item) int {
		return cmp.Or(cmp.Compare(a.lo.start, b.lo.start), strings.Compare(a.lo.key, b.lo.key))
	})
	objs, etags = make([]Object, len(items)), make([]string, len(items))
	for i, it := range items {
		o := &objs[i]
		*o = Object{Key: it.lo.key, Size: it.lo.size, StartOffset: it.lo.start, Folder: it.lo.folder}
		etags[i] = it.lo.etag
		pp := it.pair
		switch {
		case it.tombstone:
			o.Tombstone = true
			o.twin().keys.ext = pp.keys.ext // its own: it is the keys object
		case pp != nil && pp.keys != nil:
			o.twin().keys = pp.keys.twin()
		}
		if pp != nil && pp.headers != nil {
			o.twin().headers = pp.headers.twin()
		}
	}
	return objs, etags, orphans
}

// archivePartitions gives each topic the archive's partition count, which
// with Config.Shard counts the partitions of every shard.
func (l *listing) archivePartitions(topics map[string]*TopicPlan) {
	for name, t := range topics {
		t.Partitions = max(t.Partitions, l.partitions[name])
	}
}

// parallelExt splits a .keys or .headers extension (".keys.avro") into its
// infix and the format's extension (".avro").
func parallelExt(e string) (infix, ext string, ok bool) {
	for _, in := range []string{keysInfix, headersInfix} {
		if rest, found := strings.CutPrefix(e, in); found && strings.HasPrefix(rest, ".") {
			return in, rest, true
		}
	}
	return "", "", false
}

// selected reports whether an archived topic folder is to be restored.
func (r *Restorer) selected(topic string) bool {
	if len(r.cfg.Topics) > 0 {
		for _, t := range r.cfg.Topics {
			if t == topic {
				return true
			}
		}
		return false
	}
	return r.topicsRe.MatchString(topic)
}
