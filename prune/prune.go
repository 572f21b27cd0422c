package prune

import (
	"cmp"
	"context"
	"errors"
	"fmt"
	"log/slog"
	"slices"
	"sort"
	"sync"
	"time"

	"github.com/kafkas3/kafkas3/index"
	"github.com/kafkas3/kafkas3/s3store"
)

// Config is what Run prunes.
type Config struct {
	// IndexPrefix is kafkas3.index.prefix: the archive index, without
	// which nothing is pruned.
	IndexPrefix string
	// Topics are the archived topics to prune; nil: every topic of the
	// index.
	Topics []string
	// Before is the cut: objects whose records are all stamped before it
	// go. TopicBefore overrides it per topic; a topic with neither (zero
	// Before, not in TopicBefore) is left alone.
	Before      time.Time
	TopicBefore map[string]time.Time
	// DryRun reports what would go and changes nothing.
	DryRun bool
	// Concurrency bounds the store requests in flight (0: the index's
	// default).
	Concurrency int
	// Now is the clock of the watermarks' time_ms (nil: time.Now).
	Now func() time.Time
}

// Store is what Run needs of the store: reading the index, writing the
// watermarks and deleting.
type Store interface {
	s3store.Store
	s3store.Deleter
}

// Partition is what Run pruned (or with DryRun would prune) of one
// partition.
type Partition struct {
	Topic     string `json:"topic"`
	Partition int32  `json:"partition"`
	// Before is the partition's cut (Config.Before or TopicBefore).
	Before time.Time `json:"before"`
	// Was is the watermark before (0: none), Below the one now.
	Was   int64 `json:"was"`
	Below int64 `json:"below"`
	// Objects and Bytes are the objects below the watermark (value
	// objects and their .keys and .headers objects; deleted but those in
	// Refused) and their sizes as the index gives them, Records the
	// records of their live entries (counted once), IndexObjects the index
	// objects of the log deleted.
	Objects      int   `json:"objects"`
	Bytes        int64 `json:"bytes"`
	Records      int64 `json:"records"`
	IndexObjects int   `json:"index_objects"`
	// Refused lists the objects the store would not delete (Object Lock
	// retention or a legal hold, a missing permission), with why.
	Refused []Refusal `json:"refused,omitempty"`
}

// Refusal is an object the store would not delete.
type Refusal struct {
	Key string `json:"key"`
	Why string `json:"why"`
}

// Report is what Run did.
type Report struct {
	DryRun     bool        `json:"dry_run"`
	Before     time.Time   `json:"before"`
	Partitions []Partition `json:"partitions"`
}

// Totals sums the report's partitions.
func (r *Report) Totals() (objects int, bytes, records int64, indexObjects, refused int) {
	for _, p := range r.Partitions {
		objects += p.Objects
		bytes += p.Bytes
		records += p.Records
		indexObjects += p.IndexObjects
		refused += len(p.Refused)
	}
	return
}

// ErrNoIndex is returned when the archive has no index under the prefix:
// without one, nothing says what an object holds.
var ErrNoIndex = errors.New("no archive index")

// Run prunes the archive in st, one partition at a time (a few at once),
// in the order that keeps it consistent at every step: the watermark,
// then the objects, then the index objects of the log below it, then the
// older watermarks. It returns the report of what it did (also when it
// fails midway: a re-run finishes the job).
func Run(ctx context.Context, cfg Config, st Store, log *slog.Logger) (*Report, error) {
	if cfg.IndexPrefix == "" {
		return nil, fmt.Errorf("%w: kafkas3.index.prefix is empty", ErrNoIndex)
	}
	if cfg.Now == nil {
		cfg.Now = time.Now
	}
	if log == nil {
		log = slog.New(slog.DiscardHandler)
	}
	if err := checkTopicCuts(ctx, cfg, st); err != nil {
		return nil, err
	}
	rep := &Report{DryRun: cfg.DryRun, Before: cfg.Before}
	var mu sync.Mutex
	opt := index.LoadOptions{Concurrency: cfg.Concurrency, KeepPruned: true}
	err := index.EachPartition(ctx, st, cfg.IndexPrefix, cfg.Topics, opt, func(ix *index.Index) error {
		if len(ix.All) == 0 {
			return nil
		}
		done, err := doneBelow(ctx, st, cfg.IndexPrefix, ix.All[0].Topic, ix.All[0].Partition)
		if err != nil {
			return err
		}
		cut := cfg.cut(ix.All[0].Topic)
		if cut.IsZero() {
			return nil
		}
		p, ok := plan(ix, cut, done)
		if !ok {
			return nil
		}
		err = p.carry(ctx, cfg, st, log)
		mu.Lock()
		rep.Partitions = append(rep.Partitions, p.r)
		mu.Unlock()
		return err
	})
	sort.Slice(rep.Partitions, func(i, j int) bool {
		a, b := rep.Partitions[i], rep.Partitions[j]
		return a.Topic < b.Topic || a.Topic == b.Topic && a.Partition < b.Partition
	})
	if err != nil {
		return rep, err
	}
	if len(rep.Partitions) == 0 && !hasIndex(ctx, st, cfg.IndexPrefix) {
		return rep, fmt.Errorf("%w under %q: prune needs the index the sink writes (kafkas3.index.enabled)", ErrNoIndex, cfg.IndexPrefix)
	}
	return rep, nil
}

// ErrUnknownTopic is returned, before anything is pruned, for a per-topic
// cut (Config.TopicBefore) of a topic the archive index does not hold or
// Config.Topics leaves out: a mistyped name would otherwise let its topic
// be pruned at the default cut.
var ErrUnknownTopic = errors.New("no such archived topic")

// checkTopicCuts refuses per-topic cuts of topics the index does not hold
// or Config.Topics leaves out (one listing per partition of those topics).
func checkTopicCuts(ctx context.Context, cfg Config, st Store) error {
	for topic := range cfg.TopicBefore {
		if len(cfg.Topics) > 0 && !slices.Contains(cfg.Topics, topic) {
			return fmt.Errorf("%w: a cut is set for topic %q, which --topics leaves out", ErrUnknownTopic, topic)
		}
		parts, err := index.LogPartitions(ctx, st, cfg.IndexPrefix, []string{topic}, index.LoadOptions{Concurrency: cfg.Concurrency})
		if err != nil {
			return err
		}
		if len(parts) == 0 {
			return fmt.Errorf("%w: a cut is set for topic %q, which the archive index under %q does not hold; nothing was pruned",
				ErrUnknownTopic, topic, cfg.IndexPrefix)
		}
	}
	return nil
}

// cut is topic's cut: TopicBefore's, else Before (zero: none).
func (cfg Config) cut(topic string) time.Time {
	if t, ok := cfg.TopicBefore[topic]; ok {
		return t
	}
	return cfg.Before
}

// hasIndex tells whether anything lies under the index's log folder.
func hasIndex(ctx context.Context, st Store, prefix string) bool {
	errFound := errors.New("found")
	return errors.Is(st.List(ctx, index.Dir(prefix), func(s3store.ObjectInfo) error { return errFound }), errFound)
}

// partitionPlan is what pruning one partition does.
type partitionPlan struct {
	r       Partition
	objects []string // keys to delete
}

// doneBelow is the highest watermark of a partition whose prune finished
// (index.PrunedDoneKey; 0: none): what lies below it is gone already.
func doneBelow(ctx context.Context, st Store, prefix, topic string, p int32) (int64, error) {
	var done int64
	err := st.List(ctx, index.CheckpointPartitionDir(prefix, topic, p)+"pruned-", func(info s3store.ObjectInfo) error {
		w, isDone, ok, err := index.ParsePrunedKey(info.Key)
		if ok && isDone {
			done = max(done, w)
		}
		return err
	})
	if err != nil {
		return 0, fmt.Errorf("list the prune watermarks of %s/%d: %w", topic, p, err)
	}
	return done, nil
}

// plan works out one partition's watermark and what goes below it, but
// what a finished prune removed (below done); false when the partition
// has nothing to prune.
func plan(ix *index.Index, before time.Time, done int64) (*partitionPlan, bool) {
	p := &partitionPlan{r: Partition{Topic: ix.All[0].Topic, Partition: ix.All[0].Partition, Before: before}}
	for _, w := range ix.Pruned {
		p.r.Was = w.Below
	}
	p.r.Below = max(watermark(ix.Entries, before.UnixMilli()), p.r.Was)
	if p.r.Below <= 0 {
		return nil, false
	}
	// A key goes when every entry of it lies below the watermark, and not
	// every one below done (what a finished prune deleted already): its
	// state is keyFresh alone.
	state := map[string]uint8{}
	for i := range ix.All {
		e := &ix.All[i]
		if !e.Below(p.r.Below) {
			state[e.Key] |= keyKept
		}
		if !e.Below(done) {
			state[e.Key] |= keyFresh
		}
	}
	for i := range ix.All {
		e := &ix.All[i]
		if state[e.Key]&^keyTaken != keyFresh {
			continue
		}
		for _, o := range e.Objects {
			if state[o.Key]&keyTaken == 0 {
				state[o.Key] |= keyTaken
				p.objects = append(p.objects, o.Key)
				p.r.Objects++
				p.r.Bytes += o.Size
			}
		}
	}
	for i := range ix.Entries {
		if e := &ix.Entries[i]; state[e.Key]&^keyTaken == keyFresh {
			p.r.Records += e.Records
		}
	}
	slices.Sort(p.objects)
	return p, p.r.Below > p.r.Was || len(p.objects) > 0
}

// A key's state in plan.
const (
	keyKept  uint8 = 1 << iota // an entry at or above the watermark
	keyFresh                   // an entry at or above done
	keyTaken                   // its objects are in the plan (object keys)
)

// watermark is the lowest offset to keep of a partition whose live
// entries are es, pruning before cutMS: the first offset of the first
// entry holding a record stamped at or after it, lowered until no entry
// straddles it (an entry that holds offsets on both sides keeps them
// all); past the last entry when every record is older.
func watermark(es []index.Entry, cutMS int64) int64 {
	w := int64(-1)
	var end int64
	for i := range es {
		e := &es[i]
		if n := len(e.Runs); n > 0 {
			end = max(end, e.Runs[n-1].Last+1)
		}
		// An entry without times (Timed) is kept: its age is unknown.
		if (e.MaxTS >= cutMS || !e.Timed()) && len(e.Runs) > 0 && (w < 0 || e.Runs[0].First < w) {
			w = e.Runs[0].First
		}
	}
	if w < 0 {
		w = end
	}
	// Lower w to the first offset of every entry reaching it from below,
	// in one pass from the highest first offset down: an entry that
	// starts below w and reaches w holds it down to its own first offset,
	// and entries starting lower reach that only if they reach it too.
	byFirst := make([]int, 0, len(es))
	for i := range es {
		if len(es[i].Runs) > 0 {
			byFirst = append(byFirst, i)
		}
	}
	slices.SortFunc(byFirst, func(a, b int) int { return cmp.Compare(es[b].Runs[0].First, es[a].Runs[0].First) })
	for _, i := range byFirst {
		if e := &es[i]; e.Runs[0].First < w && !e.Below(w) {
			w = e.Runs[0].First
		}
	}
	return w
}
