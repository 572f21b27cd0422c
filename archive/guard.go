package archive

import (
	"context"
	"fmt"
	"strings"

	"github.com/kafkas3/kafkas3/index"
	"github.com/kafkas3/kafkas3/s3store"
)

// This file holds the no-overwrite check: before the sink creates an
// object whose key the archive index says exists, the existing object
// must be the sink's own earlier write of the same records (its replay
// after a crash): the same writer (consumer group), topic id, partition
// and first offset. Anything else stops the sink with an
// *OverwriteError naming the object.
//
// The check costs no request per object. An object the writer can write
// has a first offset at or above the span's first offset (the committed
// offset it resumed from: offsets that go back stop the worker first,
// wentBackError), so only the index objects committed after that offset
// can name it. One listing from there (s3store.ListAfter: S3's
// StartAfter) finds them when the writer creates its first object; in
// the common case it finds none. Objects written without an index
// (Confluent's connector, kafkas3.index.enabled=false) are not known to
// it.

// OverwriteError refuses to replace an archived object that is not the
// sink's own earlier write of the same records.
type OverwriteError struct {
	Key   string // the object's key
	Owner string // what the index says of it
	Want  string // what the sink was about to write
}

func (e *OverwriteError) Error() string {
	return fmt.Sprintf("refusing to overwrite object %q: %s; this sink would write %s under the same key. "+
		"Two sinks (other consumer groups, or another flush.size or partitioner) write into one topics.dir, or a topic was created again: give each sink its own topics.dir "+
		"(or, for a recreated topic, see kafkas3.topic.recreated)", e.Key, e.Owner, e.Want)
}

// keyGuard is what the index says of the objects a partition writer may
// write: for each object key, the entries that hold it.
type keyGuard struct {
	owners map[string][]keyOwner
	// sameBytes holds the keys whose owner the index cannot tell apart
	// from this writer (an entry without a topic id, or an index key
	// without a writer: an older kafkas3's): the object may be replaced
	// only by the same bytes (checkBytes).
	sameBytes map[string]keyOwner
}

// keyOwner is one index entry holding an object.
type keyOwner struct {
	indexKey    string
	writer      string
	topicID     string
	first, last int64
	size        int64
	crc32c      string
	sha256      string
}

// needsSHA256 reports whether the object at key may replace only the
// same bytes (sameBytes) and its owner's entry gives only a SHA-256 (a v1
// entry): the new object's SHA-256 is then computed too, to compare them.
func (g *keyGuard) needsSHA256(key string) bool {
	if g == nil {
		return false
	}
	o, ok := g.sameBytes[key]
	return ok && o.crc32c == ""
}

// sameSums reports whether the checksums of o and ob agree, comparing
// each checksum both give; when they share none, they do not agree.
func (o keyOwner) sameSums(ob index.Object) bool {
	compared := false
	if o.crc32c != "" && ob.CRC32C != "" {
		if o.crc32c != ob.CRC32C {
			return false
		}
		compared = true
	}
	if o.sha256 != "" && ob.SHA256 != "" {
		if o.sha256 != ob.SHA256 {
			return false
		}
		compared = true
	}
	return compared
}

// sumText prints the checksums of an index object for messages.
func sumText(crc, sha string) string {
	switch {
	case crc != "" && sha != "":
		return "CRC32C " + crc + " and SHA-256 " + sha
	case crc != "":
		return "CRC32C " + crc
	}
	return "SHA-256 " + sha
}

// checkKey returns an *OverwriteError when key, the object of a file
// whose first record is at first, exists per the index and is not this
// writer's replay of it. The first call lists the index (loadGuard).
func (w *partitionWriter) checkKey(ctx context.Context, key string, first int64) error {
	if !w.indexed() {
		return nil
	}
	if w.guard == nil {
		g, err := w.loadGuard(ctx, first)
		if err != nil {
			return err
		}
		w.guard = g
	}
	for _, o := range w.guard.owners[key] {
		// The index cannot tell an older kafkas3's entry (no topic id,
		// or no writer in its key) from this writer's: only the same
		// bytes may replace it.
		unknown := o.topicID == "" || w.topicID == "" || o.writer == ""
		sameWriter := o.writer == "" || o.writer == w.indexWriter
		sameTopic := unknown || o.topicID == w.topicID
		if sameWriter && sameTopic && o.first == first {
			if unknown {
				w.guard.sameBytes[key] = o
			}
			continue // the sink's own write of the same records: a replay
		}
		owner := o.describe(w)
		switch {
		case !sameWriter:
			owner += fmt.Sprintf(", written by another sink's consumer group (index writer %s; this sink's group %s is writer %s)", o.writer, w.cfg.GroupID, w.indexWriter)
		case !sameTopic:
			owner += fmt.Sprintf(" of topic id %s (this topic's id is %s)", o.topicID, w.topicID)
		}
		return &OverwriteError{Key: key, Owner: owner, Want: fmt.Sprintf("offsets from %d", first)}
	}
	return nil
}

func (o keyOwner) describe(w *partitionWriter) string {
	return fmt.Sprintf("the archive index (%s) says it holds offsets %d-%d of topic %s partition %d", o.indexKey, o.first, o.last, w.topic, w.partition)
}

// checkBytes refuses, before any of them is committed, objects of entries
// that would replace an object the index cannot tell apart from this
// writer's (keyGuard.sameBytes) with other bytes: they are not a replay of
// the same records (a topic recreated before kafkas3 recorded topic ids,
// or a sink of the same group with another flush.size or partitioner).
func (w *partitionWriter) checkBytes(entries []index.Entry) error {
	if w.guard == nil || len(w.guard.sameBytes) == 0 {
		return nil
	}
	for _, e := range entries {
		for _, ob := range e.Objects {
			o, ok := w.guard.sameBytes[ob.Key]
			if !ok || (o.size == ob.Size && o.sameSums(ob)) {
				continue
			}
			why := "without a topic id (an archive written before kafkas3 recorded topic ids, which cannot tell a topic created again from the same one)"
			if o.topicID != "" {
				why = "of topic id " + o.topicID + " (this sink does not know the topic's id, so only the same bytes may replace it)"
			} else if o.writer == "" {
				why = "in an index object without a writer (an older kafkas3's, which cannot tell whose it is)"
			}
			return &OverwriteError{Key: ob.Key,
				Owner: o.describe(w) + fmt.Sprintf(" in %d bytes with %s, %s", o.size, sumText(o.crc32c, o.sha256), why),
				Want:  fmt.Sprintf("offsets %d-%d in %d bytes with %s, other records", e.First(), e.Last(), ob.Size, sumText(ob.CRC32C, ob.SHA256))}
		}
	}
	return nil
}

// loadGuard reads the index objects of the partition committed after the
// span's first offset (the committed offset the writer resumed from, or
// first when it has none).
func (w *partitionWriter) loadGuard(ctx context.Context, first int64) (*keyGuard, error) {
	from := w.from
	if from < 0 {
		from = first
		if w.start >= 0 && w.start <= first {
			from = w.start
		}
	}
	dir := index.PartitionDir(w.cfg.IndexPrefix, w.topic, w.partition)
	// "~" sorts after "-" and ".": every key of commit from, with or
	// without a writer, sorts before it, every later commit after.
	after := index.Key(w.cfg.IndexPrefix, w.topic, w.partition, from, "")
	after = strings.TrimSuffix(after, ".jsonl") + "~"
	g := &keyGuard{owners: map[string][]keyOwner{}, sameBytes: map[string]keyOwner{}}
	err := s3store.ListAfter(ctx, w.store, dir, after, func(info s3store.ObjectInfo) error {
		return g.add(ctx, w.store, info.Key)
	})
	if err != nil {
		return nil, storeError(fmt.Errorf("topic %s partition %d: read the archive index after offset %d: %w", w.topic, w.partition, from, err))
	}
	return g, nil
}

// add reads the index object at key into g.
func (g *keyGuard) add(ctx context.Context, st s3store.Store, key string) error {
	ik, err := index.ParseKey(key)
	if err != nil {
		return nil // not an index object: not the guard's business
	}
	rc, err := st.Open(ctx, key)
	if err != nil {
		return err
	}
	defer rc.Close()
	entries, err := index.Decode(key, rc)
	if err != nil {
		return err
	}
	for _, e := range entries {
		for _, o := range e.Objects {
			g.owners[o.Key] = append(g.owners[o.Key], keyOwner{indexKey: key, writer: ik.Writer, topicID: e.TopicID,
				first: e.First(), last: e.Last(), size: o.Size, crc32c: o.CRC32C, sha256: o.SHA256})
		}
	}
	return nil
}
