package restore

import (
	"cmp"
	"context"
	"log/slog"
	"slices"
	"sync"
	"time"

	"github.com/kafkas3/kafkas3/index"
	"github.com/kafkas3/kafkas3/internal/parallel"
)

// One partition at a time. The plan lists the archive whole (a topic's
// folders hold every partition's objects in most layouts), then makes
// each Kafka partition's plan on its own (planner.partition): the index
// of that partition (eachIndexedPartition: its checkpoints and the log
// after them), the objects it names that the listing missed
// (completeListing), the partition's objects with their twins and its
// tombstone objects (take), in follow mode those of a commit under way
// left for the next pass (deferInFlight), each object's facts
// (examineObject), the record stream, gaps and damage (planPartition),
// the --until cut, and what production keeps of each object's entry
// (compactObjects). The partition's index entries are then let go. A few
// partitions are planned at once (index.DefaultPartitionsAtOnce), their
// reads sharing one budget (readBudget); the partitions the index does
// not know are planned after those it does. So a plan holds the listing,
// the plans made, and the index of a few partitions: never the whole
// index.

// planner makes one Plan, one partition at a time.
type planner struct {
	r      *Restorer
	l      *listing
	plan   *Plan
	snaps  map[string]snapshotPair
	reads  *readBudget
	began  time.Time
	logAt  slog.Level
	reads0 int64 // Restorer.planReads before the plan
	start  sync.Once

	mu       sync.Mutex
	parts    map[string][]PartitionPlan // by topic
	indexed  map[string]bool            // topics with index entries
	planned  map[topicPartition]bool
	deferred int
}

// planParts makes the plan of every partition of l into plan's topics.
func (r *Restorer) planParts(ctx context.Context, l *listing, plan *Plan, snaps map[string]snapshotPair) error {
	pl := &planner{r: r, l: l, plan: plan, snaps: snaps, reads: r.newReadBudget(), began: time.Now(),
		reads0: r.planReads.Load(), parts: map[string][]PartitionPlan{}, indexed: map[string]bool{},
		planned: map[topicPartition]bool{}}
	pl.logAt = slog.LevelInfo
	if r.cfg.Follow && !r.listedNew(l) {
		pl.logAt = slog.LevelDebug // follow mode: nothing new
	}
	err := r.eachIndexedPartition(ctx, l.topicNames(), func(ctx context.Context, ai *archiveIndex) error {
		pl.logStart(ctx, true)
		pl.mu.Lock()
		pl.indexed[ai.topic] = true
		pl.mu.Unlock()
		return pl.partition(ctx, topicPartition{ai.topic, ai.part}, ai)
	})
	if err != nil {
		return err
	}
	pl.logStart(ctx, false)
	left := pl.partitionsLeft()
	err = parallel.Each(ctx, cmp.Or(r.partitionsAtOnce, index.DefaultPartitionsAtOnce), len(left), func(i int) error {
		return pl.partition(ctx, left[i], nil)
	})
	if err != nil {
		return err
	}
	pl.finish()
	r.log.Log(ctx, pl.logAt, "archive checked", "objects_read", r.planReads.Load()-pl.reads0, "seconds", time.Since(pl.began).Seconds())
	return nil
}

// partitionsLeft returns the partitions still to plan once the index's
// are: those the listing holds objects of, and the marked ones (follow
// mode: their plans carry what earlier passes restored), sorted.
func (pl *planner) partitionsLeft() []topicPartition {
	left := pl.l.partitionsLeft()
	pl.mu.Lock()
	defer pl.mu.Unlock()
	seen := map[topicPartition]bool{}
	for _, tp := range left {
		seen[tp] = true
	}
	for tp := range pl.l.marks {
		if !seen[tp] && !pl.planned[tp] {
			left = append(left, tp)
		}
	}
	sortPartitions(left)
	return left
}

// logStart says how the plan checks the archive, once: from its index
// (indexed, with one read per object), or by reading every new object.
func (pl *planner) logStart(ctx context.Context, indexed bool) {
	pl.start.Do(func() {
		r := pl.r
		if r.oneRead && indexed {
			r.log.Log(ctx, pl.logAt, "checking the archive from its index; each object is read once, when it is restored",
				"topics", len(pl.plan.Topics))
			return
		}
		r.log.Log(ctx, pl.logAt, "checking the archive before restoring: reading every new object once",
			"topics", len(pl.plan.Topics), "indexed", indexed)
	})
}

// partition plans Kafka partition tp with ai, its archive index (nil
// without one), and adds it to the plan. A partition with a mark (follow
// mode, prune.go) is planned from it.
func (pl *planner) partition(ctx context.Context, tp topicPartition, ai *archiveIndex) error {
	r := pl.r
	pl.l.mu.Lock() // completeListing's visits write below
	base, below := pl.l.marks[tp], pl.l.below[tp]
	pl.l.mu.Unlock()
	pl.mu.Lock()
	pl.planned[tp] = true
	pl.mu.Unlock()
	if base != nil {
		if err := checkBelow(tp, base, below); err != nil {
			return err
		}
		var err error
		if ai, err = pruneIndex(tp, ai, base); err != nil {
			return err
		}
	}
	if err := r.completeListing(ctx, pl.l, ai); err != nil {
		return err
	}
	objs, etags, orphans := r.take(pl.l, tp)
	objs, etags = dropPruned(pl.l, ai, objs, etags)
	var kept []printed
	if r.cfg.Follow {
		kept = prints(objs, etags)
	}
	pl.mu.Lock()
	indexed := pl.indexed[tp.topic] || base != nil
	pl.mu.Unlock()
	objs, etags, deferred := r.deferInFlight(tp, objs, etags, ai, indexed)
	if base != nil {
		if err := checkEntries(tp, objs, ai); err != nil {
			return err
		}
	}
	if len(objs) == 0 && ai == nil {
		pl.add(tp.topic, nil, deferred)
		return nil
	}
	pp := &PartitionPlan{Partition: tp.part, Objects: objs, base: base}
	for _, o := range objs {
		pp.Bytes += o.Size
	}
	sp := pl.snaps[tp.topic]
	if !r.cfg.Until.IsZero() {
		r.markPastCut(pp, ai, sp.prev, sp.next)
	}
	err := eachObject(ctx, pl.reads, objs, func(ctx context.Context, i int) error { return r.examineObject(ctx, ai, &objs[i], etags[i]) })
	if err != nil {
		return err
	}
	ip := ai.coverage(pp)
	r.planPartition(pp, ip, missingEntries(ip, pp))
	if !r.cfg.Until.IsZero() {
		r.cutPartition(pp, ip, sp.prev, sp.next)
	}
	compactObjects(pp.Objects)
	if r.cfg.Follow && ai != nil {
		pp.next = nextMark(pp, base, below, kept, ai.commit, orphans)
	}
	pl.add(tp.topic, pp, deferred)
	return nil
}

// add adds pp (nil when the partition has nothing to restore) and the
// objects deferred of it to the plan.
func (pl *planner) add(topic string, pp *PartitionPlan, deferred int) {
	pl.mu.Lock()
	defer pl.mu.Unlock()
	pl.deferred += deferred
	if pp != nil {
		pl.parts[topic] = append(pl.parts[topic], *pp)
	}
}

// finish gives each topic its partitions' plans, sorted by partition,
// and adds them up.
func (pl *planner) finish() {
	plan := pl.plan
	plan.Until = pl.r.cfg.Until
	plan.Deferred = pl.deferred
	for ti := range plan.Topics {
		t := &plan.Topics[ti]
		t.Parts = pl.parts[t.Source]
		slices.SortFunc(t.Parts, func(a, b PartitionPlan) int { return cmp.Compare(a.Partition, b.Partition) })
		for pi := range t.Parts {
			pp := &t.Parts[pi]
			t.Partitions = max(t.Partitions, pp.Partition+1)
			t.Objects += len(pp.Objects)
			t.Bytes += pp.Bytes
			for _, o := range pp.Objects {
				switch {
				case o.Tombstone:
					t.TombstoneObjects++
				default:
					if o.KeysKey() != "" {
						t.KeysObjects++
					}
					if o.HeadersKey() != "" {
						t.HeadersObjects++
					}
				}
			}
			if n := len(pp.Objects); n > 0 {
				if t.FirstOffset < 0 || pp.Objects[0].StartOffset < t.FirstOffset {
					t.FirstOffset = pp.Objects[0].StartOffset
				}
				t.LastOffset = max(t.LastOffset, pp.Objects[n-1].StartOffset)
			}
			addUp(t, pp)
		}
		if sp := pl.snaps[t.Source]; sp.prev != nil {
			t.cutSnapshot = sp.prev
			t.UntilUnarchived = unarchived(t, sp.prev, pl.r.cfg.Shard)
		}
	}
}

// listedNew tells whether the listing l holds an object (value or
// tombstone object) that the last pass (follow mode) did not restore, at
// its size: a partition without a stream summary, or with more objects
// or bytes than its summary. Before the first pass, everything is new.
func (r *Restorer) listedNew(l *listing) bool {
	tombDir := cmp.Or(r.cfg.TombstonePartition, DefaultTombstonePartition)
	r.mu.Lock()
	defer r.mu.Unlock()
	for _, tp := range l.partitionsLeft() {
		old, ok := r.streams[tp]
		if !ok {
			return true
		}
		n, bytes := 0, int64(0)
		for _, o := range l.objects[tp] {
			n, bytes = n+1, bytes+o.size
		}
		for _, pp := range l.parallel[tp] {
			if pp.keys != nil && pp.keys.name.Encoded == tombDir {
				n, bytes = n+1, bytes+pp.keys.size
			}
		}
		if n != old.objects || bytes != old.bytes {
			return true
		}
	}
	return false
}
