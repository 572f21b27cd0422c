package restore

import (
	"context"
	"errors"
	"fmt"
	"io"
	"sort"
	"strings"
	"text/tabwriter"
	"time"

	"github.com/kafkas3/kafkas3/format"
	"github.com/kafkas3/kafkas3/index"
)

// Reasons a listed key is not restored, as counted in Plan.Skipped and
// Summary.KeysSkipped.
const (
	SkipOutsideTopicsDir = "outside topics.dir"
	SkipNoTopicFolder    = "not in a topic folder"
	SkipOtherExtension   = "other extension"
	SkipMalformed        = "malformed name"
	// SkipParallelOrphan counts .keys and .headers objects without a value
	// object of the same base name that are not a tombstone object either:
	// a keys-only object outside the tombstone folder
	// (Config.TombstonePartition), or a headers object without a value or
	// keys object.
	SkipParallelOrphan = "keys or headers without a value object"
	// SkipIndex counts the archive index's own objects (Config.IndexPrefix)
	// listed with the topic folders, as happens when topics.dir is empty.
	SkipIndex = "archive index"
	// SkipGeneration counts the objects of another generation of a
	// recreated topic (a "generation=n" folder under topics.dir, see
	// index.GenerationTopicsDir): Config.Keys addresses one generation.
	SkipGeneration = "another generation"
	// SkipPruned counts the objects below a partition's prune watermark
	// (index.Watermark) that no index entry above it names: `kafkas3
	// prune` deleted their records on purpose (an object it could not
	// delete, under Object Lock, or left by a crashed sink).
	SkipPruned = "pruned"
)

// Object is one archive object of one Kafka partition.
type Object struct {
	Key         string
	Size        int64
	StartOffset int64 // parsed from the key
	// Folder is the encoded partition the object is in: the key's path
	// between the topic folder and the file name ("partition=0",
	// "year=2026/month=12/day=31/hour=23", "region=eu/tier=3", the
	// tombstone folder), any depth, joined by directory.delim.
	Folder string

	// twins are the parallel objects Confluent's store.kafka.keys and
	// store.kafka.headers write next to the value object (KeysKey,
	// HeadersKey); nil without any, so an object without them costs a
	// pointer, not their fields.
	twins *twinObjects

	// Set by the plan from the object's facts (facts holds them: the
	// proof's read, or its entry's word with one read): Records is the
	// decoded record count, Offsets the source offsets the records hold
	// (runs of consecutive offsets), Damage why the object cannot be
	// restored (wraps ErrDamagedObject; then Records is 0).
	Records int64
	Offsets []offsetRun
	Damage  error
	facts   *objectFacts
	// entry is the index entry the object matched, or nil, while the
	// plan is made; checks is what production checks against of it once
	// the plan is made (compactObjects), when entry is let go with the
	// rest of the index, and with it facts when they were the entry's
	// word (fromIndex).
	entry  *index.Entry
	checks *entryChecks
	// pastCut: every record of the object is past the --until cut, so it
	// is neither read nor counted as restored. unread: the archive index
	// showed that before the plan's proof, which did not read it either.
	pastCut, unread bool
	// fromIndex: the plan took the archive index entry's word for the
	// object without reading it (one read per object, oneread.go); the
	// read that produces it is checked against its entry (checks).
	fromIndex bool
	// Tombstone marks a tombstone object: Key is a keys-only object in the
	// tombstone folder (behavior.on.null.values=write), each record of
	// which is restored as that key with a nil value, and the headers of
	// the same record of HeadersKey when it is set. KeysKey is empty.
	Tombstone bool

	// envelope is what the object's archive index entry says about
	// store.envelope (format.EnvelopeDetect without an entry).
	envelope format.EnvelopeMode
	// sha256: an index entry of the object gives a SHA-256 (v1, or v2
	// with kafkas3.index.digest=sha256), so reading it computes one too;
	// the CRC32C is always computed.
	sha256 bool
}

// provedObject is what the proof read of an object (its facts), valid while
// its size is the same.
type provedObject struct {
	size  int64
	facts objectFacts
}

// twinObjects are an Object's .keys and .headers objects: each named
// "<base>.keys<ext>" or "<base>.headers<ext>" next to the value object,
// ext possibly another format's. Record i of each is the key or the
// headers of record i of the value object. A tombstone object has no
// .keys twin (it is one): keys.key is empty and keys.ext is its own
// extension.
type twinObjects struct {
	keys, headers twinObject
}

// twinObject is one parallel object as the listing gave it: key, its
// extension after the infix, size and ETag.
type twinObject struct {
	key, ext, etag string
	size           int64
}

// twin returns o's twins, making them if it has none.
func (o *Object) twin() *twinObjects {
	if o.twins == nil {
		o.twins = &twinObjects{}
	}
	return o.twins
}

// KeysKey names o's .keys object, "" without one.
func (o *Object) KeysKey() string { return o.twinPart(index.PartKeys).key }

// HeadersKey names o's .headers object, "" without one.
func (o *Object) HeadersKey() string { return o.twinPart(index.PartHeaders).key }

// twinBytes is the size of o's twins together.
func (o *Object) twinBytes() int64 {
	return o.twinPart(index.PartKeys).size + o.twinPart(index.PartHeaders).size
}

// twinPart returns o's twin of the given index part (PartKeys,
// PartHeaders), zero without it.
func (o *Object) twinPart(part string) twinObject {
	switch {
	case o.twins == nil:
		return twinObject{}
	case part == index.PartKeys:
		return o.twins.keys
	}
	return o.twins.headers
}

// PartitionPlan is the objects of one Kafka partition, sorted by start
// offset (numerically, not by key).
type PartitionPlan struct {
	Partition int32
	Objects   []Object
	Bytes     int64

	// Records is how many records the restore produces: each source
	// offset once. Duplicates counts the archived records at offsets that
	// an earlier object (in plan order) already holds.
	Records, Duplicates int64
	// FirstOffset and LastOffset are the first and last source offsets
	// restored (-1 without records).
	FirstOffset, LastOffset int64
	// Gaps are the offsets between FirstOffset and LastOffset that no
	// readable object holds, and the offsets of damaged objects that no
	// other object holds.
	Gaps []Gap
	// Damaged are the objects that cannot be read as a whole.
	Damaged []DamagedObject
	// Lost are the offsets the archive index records as lost before
	// archiving (Kafka deleted them before the sink read them), less any
	// offset an object holds; LostOffsets counts them. They are not gaps:
	// nothing can restore them, and they never stop a restore.
	Lost        []index.Run
	LostOffsets int64
	// Basis says what the offsets come from (Basis* constants).
	Basis string
	// Order says how the record order is known (Order* constants; see
	// OrderText). Folders counts the folders (encoded partitions) holding
	// the partition's value objects, the tombstone folder not counted.
	// Overlapping counts, with OrderUnknown, the objects that start
	// inside the offsets of an object of another folder.
	Order                string
	Folders, Overlapping int
	pastIndex            int // named objects after the index's last commit
	// Cut is where a point-in-time restore (Config.Until) stops in the
	// partition; nil without Until. Records, FirstOffset, LastOffset,
	// Gaps and Damaged are then what lies before the cut.
	Cut *Cut

	// Filtered counts the archived records Config.Filter leaves out, of
	// the objects the plan read (all of them when Plan.FilterCounted).
	Filtered int64

	segments []segment // in source offset order
	// base is, in follow mode, the mark the plan starts at: the stream
	// restored before its first segment (prune.go), nil for a whole
	// plan. next is the mark the partition gets once the pass restoring
	// the plan completes, nil when the plan is not eligible.
	base, next *pruneMark
}

// baseRecords is how many records of the stream precede pp's first
// segment (earlier passes restored them: follow mode).
func (pp *PartitionPlan) baseRecords() int64 {
	if pp.base == nil {
		return 0
	}
	return pp.base.records
}

// baseSegments is how many segments of the stream precede pp's first.
func (pp *PartitionPlan) baseSegments() int {
	if pp.base == nil {
		return 0
	}
	return pp.base.segments
}

// TopicPlan is what will be restored from one archived topic.
type TopicPlan struct {
	Source string // archived topic
	Target string // topic to produce to, after renaming
	// Partitions is the archive's partition count: the highest partition
	// number seen plus one.
	Partitions int32
	Objects    int
	Bytes      int64
	// KeysObjects and HeadersObjects count the value objects that have a
	// parallel .keys or .headers object.
	KeysObjects, HeadersObjects int
	// TombstoneObjects counts the tombstone objects (Object.Tombstone),
	// which Objects includes.
	TombstoneObjects int
	// FirstOffset and LastOffset are the smallest and largest object start
	// offsets over all partitions (-1 when there are no objects).
	FirstOffset, LastOffset int64
	// Records, Duplicates, Gaps, Damaged and LostOffsets add up the
	// partitions'.
	Records, Duplicates int64
	Gaps, Damaged       int
	LostOffsets         int64
	// Parts holds the partitions that have objects, by partition number.
	Parts []PartitionPlan

	// Described is the latest topic description the sink recorded
	// (partition count, replication factor, configs); nil for an archive
	// without one (older kafkas3, Confluent's connector).
	Described *index.Topic

	// cutSnapshot is the snapshot at or before Config.Until the topic's
	// cuts start from (nil without one, or without Until).
	cutSnapshot *cutSnapshot
	// UntilUnarchived lists, with Until, the partitions that snapshot
	// shows holding records (end offset above 0) of which the archive
	// holds nothing: never archived, or gone before the sink read them.
	// Nothing of them can be restored; the plan says so.
	UntilUnarchived []PartitionEnd
}

// Plan is the restore plan: what the archive holds for the chosen topics.
type Plan struct {
	Topics []TopicPlan // sorted by source topic
	// Skipped counts keys that are not restored, by reason (Skip*).
	Skipped map[string]int
	// Until is Config.Until (zero without it); each partition's Cut says
	// where its restore stops.
	Until time.Time
	// Deferred counts, in follow mode, the objects left for a later pass:
	// listed without an archive index entry at or after the last commit
	// the index shows for their partition (a sink commit under way).
	Deferred int
	// RateLimit describes the run's rate limit (Config.MaxBytesPerSec,
	// MaxRecordsPerSec), "" without one.
	RateLimit string
	// Erasing counts the keys of Config.ExcludeKeys; Filter describes
	// Config.Filter ("" without one).
	Erasing int
	Filter  string
	// whole: the plan left nothing out below the marks (Restorer.whole):
	// a partition it does not hold has no mark any more.
	whole bool
	// FilterCounted: the plan read every object (the whole-archive
	// proof: --dry-run, --prove-first), so the partitions' Filtered are
	// the records the filter leaves out.
	FilterCounted bool
	// Shard is Config.Shard; with it, OtherShards counts the listed keys
	// of the partitions left to other shards, and each TopicPlan holds
	// only the shard's partitions (its Partitions stays the archive's).
	Shard       Shard
	OtherShards int
}

// Objects returns the number of objects over all topics.
func (p *Plan) Objects() int {
	n := 0
	for _, t := range p.Topics {
		n += t.Objects
	}
	return n
}

// Bytes returns the object bytes over all topics.
func (p *Plan) Bytes() int64 {
	var n int64
	for _, t := range p.Topics {
		n += t.Bytes
	}
	return n
}

// Partitions returns the number of Kafka partitions with objects, over all
// topics.
func (p *Plan) Partitions() int {
	n := 0
	for _, t := range p.Topics {
		n += len(t.Parts)
	}
	return n
}

// WriteText prints the plan for --dry-run: one line per topic with its
// target, partitions, objects, bytes and start-offset range, then the
// skipped keys.
func (p *Plan) WriteText(w io.Writer) error {
	tw := tabwriter.NewWriter(w, 0, 4, 2, ' ', 0)
	fmt.Fprintln(tw, "TOPIC\tTARGET\tPARTITIONS\tOBJECTS\tBYTES\tSTART OFFSETS")
	for _, t := range p.Topics {
		offsets := "-"
		if t.Objects > 0 {
			offsets = fmt.Sprintf("%d..%d", t.FirstOffset, t.LastOffset)
		}
		fmt.Fprintf(tw, "%s\t%s\t%d\t%d\t%s\t%s\n", t.Source, t.Target, t.Partitions, t.Objects, formatBytes(t.Bytes), offsets)
	}
	if err := tw.Flush(); err != nil {
		return err
	}
	var withKeys, withHeaders, tombstones int
	for _, t := range p.Topics {
		withKeys += t.KeysObjects
		withHeaders += t.HeadersObjects
		tombstones += t.TombstoneObjects
	}
	var notes []string
	if tombstones > 0 {
		notes = append(notes, fmt.Sprintf("%d tombstone", tombstones))
	}
	if withKeys+withHeaders > 0 {
		notes = append(notes, fmt.Sprintf("%d with .keys, %d with .headers objects", withKeys, withHeaders))
	}
	parallel := ""
	if len(notes) > 0 {
		parallel = " (" + strings.Join(notes, "; ") + ")"
	}
	var records, dups, lost int64
	var gaps, damaged int
	for _, t := range p.Topics {
		records, dups, gaps, damaged = records+t.Records, dups+t.Duplicates, gaps+t.Gaps, damaged+t.Damaged
		lost += t.LostOffsets
	}
	lostNote := ""
	if lost > 0 {
		lostNote = fmt.Sprintf("; %d offsets lost before archiving (listed below)", lost)
	}
	if _, err := fmt.Fprintf(w, "total: %d topics, %d partitions, %d objects%s, %s; keys skipped: %s; records: %d to restore, %d duplicates, %d gaps, %d damaged objects%s\n",
		len(p.Topics), p.Partitions(), p.Objects(), parallel, formatBytes(p.Bytes()), formatSkipped(p.Skipped),
		records, dups, gaps, damaged, lostNote); err != nil {
		return err
	}
	if p.Shard.Sharded() {
		fmt.Fprintf(w, "shard %s: %d partitions of this shard; %d keys of other shards' partitions left to them (shard = (FNV-1a of the topic + partition) mod %d)\n",
			p.Shard, p.Partitions(), p.OtherShards, p.Shard.Count)
	}
	if p.Erasing > 0 && !strings.Contains(p.Filter, "erasure list") {
		fmt.Fprintf(w, "erasure list: %d keys (--exclude-keys-file); each record with one is restored as a tombstone (null value, no headers), counted as it is produced\n", p.Erasing)
	}
	if p.Filter != "" {
		left := "the others are counted as they are read (the summary's filtered=N)"
		if p.FilterCounted {
			var n int64
			for _, t := range p.Topics {
				for _, pp := range t.Parts {
					n += pp.Filtered
				}
			}
			left = fmt.Sprintf("it leaves out %d archived records", n)
		}
		fmt.Fprintf(w, "filter: only records with %s are restored; %s; every object is read\n", p.Filter, left)
	}
	if p.RateLimit != "" {
		fmt.Fprintf(w, "rate limit: %s (--max-bytes-per-sec, --max-records-per-sec), across every partition\n", p.RateLimit)
	}
	if p.Deferred > 0 {
		fmt.Fprintf(w, "deferred: %d objects without an archive index entry after their partition's last indexed commit (a sink commit under way); the next pass takes them\n", p.Deferred)
	}
	return p.writePartitions(w)
}

// writePartitions prints one line per partition (objects, records to
// restore, source offsets, duplicates, gaps, what the offsets come
// from), then one line per gap and per damaged object.
func (p *Plan) writePartitions(w io.Writer) error {
	if p.Partitions() == 0 {
		return nil
	}
	tw := tabwriter.NewWriter(w, 0, 4, 2, ' ', 0)
	fmt.Fprintln(tw, "PARTITION\tOBJECTS\tRECORDS\tOFFSETS\tDUPLICATES\tGAPS\tORDER\tCOMPLETE")
	for _, t := range p.Topics {
		for _, pp := range t.Parts {
			offsets := "-"
			if pp.FirstOffset >= 0 {
				offsets = fmt.Sprintf("%d..%d", pp.FirstOffset, pp.LastOffset)
			}
			fmt.Fprintf(tw, "%s/%d\t%d\t%d\t%s\t%d\t%d\t%s\t%s\n", t.Source, pp.Partition, len(pp.Objects), pp.Records,
				offsets, pp.Duplicates, len(pp.Gaps), pp.OrderText(), pp.CompletenessText())
		}
	}
	if err := tw.Flush(); err != nil {
		return err
	}
	if !p.Until.IsZero() {
		fmt.Fprintf(w, "point in time: --until %s; only source offsets below each partition's cut are restored\n", p.Until.UTC().Format(time.RFC3339Nano))
		tw := tabwriter.NewWriter(w, 0, 4, 2, ' ', 0)
		fmt.Fprintln(tw, "PARTITION\tCUT\tRESTORED\tLEFT OUT\tCHOSEN BY")
		for _, t := range p.Topics {
			for _, pp := range t.Parts {
				if c := pp.Cut; c != nil {
					cut, restored, left := "-", "-", "-"
					if c.Refused == "" {
						cut, restored, left = fmt.Sprint(c.Offset), fmt.Sprint(pp.Records), fmt.Sprint(c.LeftOut)
					}
					fmt.Fprintf(tw, "%s/%d\t%s\t%s\t%s\t%s\n", t.Source, pp.Partition, cut, restored, left, c)
				}
			}
		}
		if err := tw.Flush(); err != nil {
			return err
		}
		for _, t := range p.Topics {
			for _, u := range t.UntilUnarchived {
				fmt.Fprintf(w, "not archived: %s/%d ended at offset %d in the snapshot the cuts come from; the archive holds none of its records (never archived, or gone before the sink read them)\n",
					t.Source, u.Partition, u.End)
			}
		}
	}
	for _, u := range unknownOrder(p) {
		fmt.Fprintf(w, "order unknown: %s; restored only with --allow-unknown-order, object by object in start-offset order\n", u)
	}
	for _, t := range p.Topics {
		for _, pp := range t.Parts {
			for _, g := range pp.Gaps {
				fmt.Fprintf(w, "gap: %s/%d offsets %s\n", t.Source, pp.Partition, g)
			}
			for _, d := range pp.Damaged {
				fmt.Fprintf(w, "damaged: %s/%d object %q: %v\n", t.Source, pp.Partition, d.Key, d.Err)
			}
			for _, r := range pp.Lost {
				fmt.Fprintf(w, "lost before archiving: %s/%d offsets %d-%d (%d): Kafka deleted them before the sink read them; not in the archive, not a gap\n",
					t.Source, pp.Partition, r.First, r.Last, r.Len())
			}
		}
	}
	return nil
}

// Complete reports whether the plan shows the partition's offsets
// complete: no gap, no damaged object, and offsets known from an index.
// Without an index a partition can only be found consistent: whether it
// is complete is unknown.
func (pp *PartitionPlan) Complete() bool {
	return len(pp.Gaps) == 0 && len(pp.Damaged) == 0 && pp.Basis == BasisIndex
}

// CompletenessText says, for the plan's COMPLETE column, whether the plan
// shows the partition's offsets complete ("yes"), incomplete ("NO": gaps
// or damaged objects) or neither ("unknown"), and what the offsets come
// from.
func (pp *PartitionPlan) CompletenessText() string {
	switch {
	case len(pp.Damaged) > 0 || len(pp.Gaps) > 0:
		return "NO: gaps or damaged objects (listed below)"
	case pp.Complete():
		return "yes: " + pp.Basis
	default:
		return "unknown: " + pp.Basis
	}
}

// Plan lists the archive and builds the restore plan, one partition at a
// time (planParts). It reads only the store: with Config.ReadOnce (and an
// index, outside a dry run, see readsOnce) the index and what the store
// says of each object without a download, else every object as well (the
// proof). A malformed key inside a topic folder fails the plan under
// behavior.on.error=fail (the error quotes the key) and is skipped and
// counted otherwise.
func (r *Restorer) Plan(ctx context.Context) (*Plan, error) {
	plan, err := r.plan(ctx)
	if !errors.Is(err, errPruneStale) {
		return plan, err
	}
	// Follow mode: a plan from the marks could not be made (prune.go).
	r.log.Info("planning the whole archive again", "reason", err.Error())
	r.mu.Lock()
	r.whole = true
	r.mu.Unlock()
	defer func() {
		r.mu.Lock()
		r.whole = false
		r.mu.Unlock()
	}()
	clear(r.tails)
	plan, err = r.plan(ctx)
	if plan != nil {
		plan.whole = true
	}
	return plan, err
}

// plan is Plan, once.
func (r *Restorer) plan(ctx context.Context) (*Plan, error) {
	r.oneRead = r.readsOnce()
	l, err := r.list(ctx)
	if err != nil {
		return nil, err
	}
	plan, topics, err := r.planTopics(l)
	if err != nil {
		return nil, err
	}
	snaps, err := r.untilSnapshotsOf(ctx, plan)
	if err != nil {
		return nil, err
	}
	if err := r.planParts(ctx, l, plan, snaps); err != nil {
		return nil, err
	}
	l.archivePartitions(topics)
	plan.Shard, plan.OtherShards = r.cfg.Shard, l.otherShards
	plan.RateLimit = r.limit.String()
	plan.Erasing = len(r.cfg.ExcludeKeys)
	plan.Filter = r.cfg.Filter.String()
	plan.FilterCounted = !r.oneRead
	if err := r.describeArchived(ctx, plan); err != nil {
		return nil, err
	}
	return plan, nil
}

// formatBytes prints n in binary units.
func formatBytes(n int64) string {
	const unit = 1024
	if n < unit {
		return fmt.Sprintf("%d B", n)
	}
	div, exp := int64(unit), 0
	for m := n / unit; m >= unit; m /= unit {
		div *= unit
		exp++
	}
	return fmt.Sprintf("%.1f %ciB", float64(n)/float64(div), "KMGTPE"[exp])
}

// formatSkipped prints skip counts in a stable order.
func formatSkipped(m map[string]int) string {
	if len(m) == 0 {
		return "none"
	}
	reasons := make([]string, 0, len(m))
	for k := range m {
		reasons = append(reasons, k)
	}
	sort.Strings(reasons)
	parts := make([]string, len(reasons))
	for i, k := range reasons {
		parts[i] = fmt.Sprintf("%d %s", m[k], k)
	}
	return strings.Join(parts, ", ")
}
