package inspect

import (
	"cmp"
	"context"
	"slices"
	"sort"
	"strings"
	"sync"
	"time"

	"github.com/kafkas3/kafkas3/index"
	"github.com/kafkas3/kafkas3/partition"
	"github.com/kafkas3/kafkas3/s3store"
)

// Problem words of Partition.Problems.
const (
	ProblemGaps     = "gaps"     // offsets in [From, Commit-1] no index entry accounts for
	ProblemLost     = "lost"     // offsets Kafka deleted before the sink read them
	ProblemOverlaps = "overlaps" // offsets held by two or more objects
	ProblemPruned   = "pruned"   // offsets below the partition's prune watermark were deleted on purpose (kafkas3 prune)
)

// Config says which archive List summarises and how.
type Config struct {
	Keys partition.KeyConfig
	// IndexPrefix is kafkas3.index.prefix ("" when the index is off).
	IndexPrefix string
	// Topics limits the summary to these topics; empty: every topic of
	// the index and of topics.dir.
	Topics []string
	// Bucket is the timeline's bucket (time.Hour, 24*time.Hour); 0: no
	// timeline.
	Bucket time.Duration
	// Concurrency bounds the index load's requests in flight; 0: the
	// index's default.
	Concurrency int
}

// Partition is the summary of one topic partition.
type Partition struct {
	Topic     string `json:"topic"`
	Partition int32  `json:"partition"`
	// Indexed: the summary comes from the archive index. Without it only
	// Objects, Bytes, Formats, FirstOffset (the lowest start offset of
	// the objects' names), LastOffset (-1) and Written are known.
	Indexed bool `json:"indexed"`
	// FirstOffset and LastOffset are the lowest and highest offsets the
	// objects hold; Records counts the offsets held, each once.
	FirstOffset int64 `json:"first_offset"`
	LastOffset  int64 `json:"last_offset"`
	Records     int64 `json:"records"`
	// From and Commit bound the offsets the index accounts for: [From,
	// Commit-1] (index.Partition).
	From   int64 `json:"from"`
	Commit int64 `json:"commit"`
	// FirstTime and LastTime are the first and last record timestamps
	// (the entries' min_ts and max_ts); nil when unknown.
	FirstTime *time.Time `json:"first_timestamp"`
	LastTime  *time.Time `json:"last_timestamp"`
	// Untimed counts records of entries that carry no times.
	Untimed int64 `json:"untimed,omitempty"`
	Objects int   `json:"objects"`
	Bytes   int64 `json:"bytes"`
	// Formats are the value objects' extensions ("json.gz", "avro"),
	// sorted; Parts the parallel parts their entries hold ("keys",
	// "headers").
	Formats []string `json:"formats"`
	Parts   []string `json:"parts"`
	// Envelope is "yes" when every entry holds envelopes, "no" when none,
	// "mixed" otherwise, "" without an index.
	Envelope string `json:"envelope"`
	// Written is when the partition was last archived: the newest index
	// object or checkpoint (without an index, the newest object).
	Written *time.Time `json:"last_archived"`
	// Gaps, Lost and Absent count offsets (index.Partition): no entry
	// accounts for them, Kafka deleted them before the sink read them,
	// the sink read them but none was there (compaction, markers).
	Gaps     int64    `json:"gaps"`
	Lost     int64    `json:"lost"`
	Absent   int64    `json:"absent"`
	Problems []string `json:"problems"`
	// PrunedBelow is the partition's prune watermark (0: none): kafkas3
	// prune deleted its offsets below it.
	PrunedBelow int64 `json:"pruned_below,omitempty"`
	// Timeline holds the buckets from the first to the last with records,
	// empty ones included (Config.Bucket).
	Timeline []Bucket `json:"timeline,omitempty"`
}

// Bucket is one hour or day of a partition's timeline.
type Bucket struct {
	Start   time.Time `json:"start"`
	Records int64     `json:"records"`
	Bytes   int64     `json:"bytes"`
}

// List summarises the archive in st, sorted by topic and partition. Its
// errors are the store's and a malformed index's.
func List(ctx context.Context, cfg Config, st s3store.Store) ([]Partition, error) {
	var mu sync.Mutex
	var out []Partition
	indexed := map[string]bool{}
	if cfg.IndexPrefix != "" {
		err := index.EachPartition(ctx, st, cfg.IndexPrefix, cfg.Topics, index.LoadOptions{Concurrency: cfg.Concurrency}, func(ix *index.Index) error {
			if len(ix.Entries) == 0 && len(ix.Pruned) == 0 {
				return nil
			}
			p := summarise(cfg, ix)
			mu.Lock()
			defer mu.Unlock()
			out = append(out, p)
			indexed[p.Topic] = true
			return nil
		})
		if err != nil {
			return nil, err
		}
	}
	rest, err := unindexedTopics(ctx, cfg, st, indexed)
	if err != nil {
		return nil, err
	}
	for _, t := range rest {
		ps, err := scanTopic(ctx, cfg, st, t)
		if err != nil {
			return nil, err
		}
		out = append(out, ps...)
	}
	slices.SortFunc(out, func(a, b Partition) int {
		return cmp.Or(strings.Compare(a.Topic, b.Topic), cmp.Compare(a.Partition, b.Partition))
	})
	return out, nil
}

// summarise is one partition's summary from its index.
func summarise(cfg Config, ix *index.Index) Partition {
	if len(ix.Entries) == 0 { // every object pruned (kafkas3 prune)
		w := ix.Pruned[0]
		return Partition{Topic: w.Topic, Partition: w.Partition, Indexed: true, FirstOffset: -1, LastOffset: -1,
			From: w.Below, Commit: w.Below, PrunedBelow: w.Below, Problems: []string{ProblemPruned}}
	}
	ap := index.Analyze(ix.Entries)[0]
	p := Partition{Topic: ap.Topic, Partition: ap.Partition, Indexed: true, FirstOffset: -1, LastOffset: -1,
		Records: ap.Records, From: ap.From, Commit: ap.Commit, Lost: ap.LostCount, Absent: ap.Absent, Problems: []string{}}
	if len(ap.Held) > 0 {
		p.FirstOffset, p.LastOffset = ap.Held[0].First, ap.Held[len(ap.Held)-1].Last
	}
	for _, g := range ap.Gaps {
		p.Gaps += g.Len()
	}
	if !ix.Written.IsZero() {
		w := ix.Written
		p.Written = &w
	}
	formats, parts := map[string]bool{}, map[string]bool{}
	var envelopes, minTS, maxTS int64
	timed := false
	tl := newTimeline(cfg.Bucket)
	for i := range ix.Entries {
		e := &ix.Entries[i]
		var bytes int64
		for _, o := range e.Objects {
			bytes += o.Size
			if o.Part != index.PartValue {
				parts[o.Part] = true
			}
		}
		p.Objects += len(e.Objects)
		p.Bytes += bytes
		if e.Envelope {
			envelopes++
		}
		formats[formatOf(cfg.Keys, e.Key, e.Tombstone)] = true
		if !e.Timed() {
			p.Untimed += e.Records
			continue
		}
		if !timed || e.MinTS < minTS {
			minTS = e.MinTS
		}
		if !timed || e.MaxTS > maxTS {
			maxTS = e.MaxTS
		}
		timed = true
		tl.add(e.MinTS, e.MaxTS, e.Records, bytes)
	}
	if timed {
		first, last := time.UnixMilli(minTS).UTC(), time.UnixMilli(maxTS).UTC()
		p.FirstTime, p.LastTime = &first, &last
	}
	p.Formats, p.Parts = sortedKeys(formats), sortedKeys(parts)
	p.Envelope = "mixed"
	switch envelopes {
	case 0:
		p.Envelope = "no"
	case int64(len(ix.Entries)):
		p.Envelope = "yes"
	}
	p.Timeline = tl.buckets()
	if p.Gaps > 0 {
		p.Problems = append(p.Problems, ProblemGaps)
	}
	if p.Lost > 0 {
		p.Problems = append(p.Problems, ProblemLost)
	}
	if len(ap.Overlaps) > 0 {
		p.Problems = append(p.Problems, ProblemOverlaps)
	}
	for _, w := range ix.Pruned {
		p.PrunedBelow = w.Below
		p.Problems = append(p.Problems, ProblemPruned)
	}
	return p
}

// formatOf is the format extension of a value object's key ("json.gz"),
// or of a tombstone object's keys object ("tombstone keys.json" is
// reported as its own format: "keys.json").
func formatOf(keys partition.KeyConfig, key string, tombstone bool) string {
	name, err := keys.ParseObjectKey(key)
	if err != nil {
		return "?"
	}
	ext := strings.TrimPrefix(name.Ext, ".")
	if tombstone {
		return "tombstones:" + ext
	}
	return ext
}

func sortedKeys(m map[string]bool) []string {
	out := make([]string, 0, len(m))
	for k := range m {
		out = append(out, k)
	}
	sort.Strings(out)
	return out
}
