package restore

import (
	"context"
	"fmt"
	"io"
	"sort"
	"strings"
	"text/tabwriter"
	"time"

	"github.com/kafkas3/kafkas3/format"
	"github.com/kafkas3/kafkas3/index"
	"github.com/kafkas3/kafkas3/partition"
	"github.com/kafkas3/kafkas3/s3store"
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
)

// Object is one archive object of one Kafka partition.
type Object struct {
	Key         string
	Size        int64
	StartOffset int64 // parsed from the key

	// KeysKey and HeadersKey name the parallel objects Confluent's
	// store.kafka.keys and store.kafka.headers write next to the value
	// object ("<base>.keys<ext>", "<base>.headers<ext>", ext possibly
	// another format's), or are empty. Record i of each is the key or the
	// headers of record i of the value object.
	KeysKey, HeadersKey   string
	keysExt, headersExt   string // their extensions after the infix
	KeysSize, HeadersSize int64

	// Tombstone marks a tombstone object: Key is a keys-only object in the
	// tombstone folder (behavior.on.null.values=write), each record of
	// which is restored as that key with a nil value, and the headers of
	// the same record of HeadersKey when it is set. KeysKey is empty.
	Tombstone bool

	// envelope is what the object's archive index entry says about
	// store.envelope (format.EnvelopeDetect without an entry).
	envelope format.EnvelopeMode

	// Set by the plan's proof (every object is read once while planning):
	// Records is the decoded record count, Offsets the source offsets the
	// records hold (runs of consecutive offsets), Damage why the object
	// cannot be restored (wraps ErrDamagedObject; then Records is 0).
	Records int64
	Offsets []offsetRun
	Damage  error
	proof   *objectProof
	entry   *index.Entry // the index entry the object matched, or nil
	// pastCut: every record of the object is past the --until cut, so it
	// is neither read nor counted as restored. unread: the archive index
	// showed that before the plan's proof, which did not read it either.
	pastCut, unread bool
}

// knownProof is an object's proof, valid while its size is the same.
type knownProof struct {
	size  int64
	proof objectProof
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
	// Basis says what the offsets are proved from (Basis* constants).
	Basis string
	// Cut is where a point-in-time restore (Config.Until) stops in the
	// partition; nil without Until. Records, FirstOffset, LastOffset,
	// Gaps and Damaged are then what lies before the cut.
	Cut *Cut

	segments []segment // in source offset order
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
	// Records, Duplicates, Gaps and Damaged add up the partitions'.
	Records, Duplicates int64
	Gaps, Damaged       int
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
	var records, dups int64
	var gaps, damaged int
	for _, t := range p.Topics {
		records, dups, gaps, damaged = records+t.Records, dups+t.Duplicates, gaps+t.Gaps, damaged+t.Damaged
	}
	if _, err := fmt.Fprintf(w, "total: %d topics, %d partitions, %d objects%s, %s; keys skipped: %s; records: %d to restore, %d duplicates, %d gaps, %d damaged objects\n",
		len(p.Topics), p.Partitions(), p.Objects(), parallel, formatBytes(p.Bytes()), formatSkipped(p.Skipped),
		records, dups, gaps, damaged); err != nil {
		return err
	}
	return p.writePartitions(w)
}

// writePartitions prints one line per partition (objects, records to
// restore, source offsets, duplicates, gaps, what the offsets are proved
// from), then one line per gap and per damaged object.
func (p *Plan) writePartitions(w io.Writer) error {
	if p.Partitions() == 0 {
		return nil
	}
	tw := tabwriter.NewWriter(w, 0, 4, 2, ' ', 0)
	fmt.Fprintln(tw, "PARTITION\tOBJECTS\tRECORDS\tOFFSETS\tDUPLICATES\tGAPS\tPROOF")
	for _, t := range p.Topics {
		for _, pp := range t.Parts {
			offsets := "-"
			if pp.FirstOffset >= 0 {
				offsets = fmt.Sprintf("%d..%d", pp.FirstOffset, pp.LastOffset)
			}
			fmt.Fprintf(tw, "%s/%d\t%d\t%d\t%s\t%d\t%d\t%s\n", t.Source, pp.Partition, len(pp.Objects), pp.Records,
				offsets, pp.Duplicates, len(pp.Gaps), pp.ProofText())
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
	for _, t := range p.Topics {
		for _, pp := range t.Parts {
			for _, g := range pp.Gaps {
				fmt.Fprintf(w, "gap: %s/%d offsets %s\n", t.Source, pp.Partition, g)
			}
			for _, d := range pp.Damaged {
				fmt.Fprintf(w, "damaged: %s/%d object %q: %v\n", t.Source, pp.Partition, d.Key, d.Err)
			}
		}
	}
	return nil
}

// Proven reports whether the partition's offsets are proved complete: no
// gap, no damaged object, and offsets known from an index. Without an
// index nothing is proved: a partition can only be found consistent.
func (pp *PartitionPlan) Proven() bool {
	return len(pp.Gaps) == 0 && len(pp.Damaged) == 0 && pp.Basis == BasisIndex
}

// ProofText says what the plan could prove about the partition.
func (pp *PartitionPlan) ProofText() string {
	switch {
	case len(pp.Damaged) > 0 || len(pp.Gaps) > 0:
		return "NOT PROVEN: gaps or damaged objects (listed below)"
	case pp.Proven():
		return "proven: " + pp.Basis
	default:
		return "not proven: " + pp.Basis
	}
}

// Plan lists the archive and builds the restore plan. It reads only the
// store. A malformed key inside a topic folder fails the plan under
// behavior.on.error=fail (the error quotes the key) and is skipped and
// counted otherwise.
func (r *Restorer) Plan(ctx context.Context) (*Plan, error) {
	type partKey struct {
		topic string
		part  int32
	}
	objects := map[partKey][]Object{}
	type parallelInfo struct {
		key, ext string
		size     int64
		name     partition.ObjectName
	}
	type parallelPair struct{ keys, headers *parallelInfo }
	parallel := map[string]*parallelPair{} // base key -> its .keys / .headers objects
	topics := map[string]bool{}
	skipped := map[string]int{}
	ext := r.cfg.Format.Extension()
	dd := r.cfg.Keys.DirectoryDelim
	topicsPrefix := TopicsRoot(r.cfg.Keys)

	visit := func(info s3store.ObjectInfo) error {
		if r.cfg.IndexPrefix != "" && strings.HasPrefix(info.Key, r.cfg.IndexPrefix) {
			skipped[SkipIndex]++
			return nil
		}
		topic, skip := TopicFolder(r.cfg.Keys, info.Key)
		if skip != "" {
			skipped[skip]++
			return nil
		}
		if !r.selected(topic) {
			return nil
		}
		topics[topic] = true
		name, err := r.cfg.Keys.ParseObjectKey(info.Key)
		if err == nil && name.Ext != ext {
			if infix, pext, ok := parallelExt(name.Ext); ok {
				base := strings.TrimSuffix(info.Key, name.Ext)
				pp := parallel[base]
				if pp == nil {
					pp = &parallelPair{}
					parallel[base] = pp
				}
				pi := &parallelInfo{key: info.Key, ext: pext, size: info.Size, name: name}
				if infix == keysInfix {
					pp.keys = pi
				} else {
					pp.headers = pi
				}
				return nil
			}
		}
		if !strings.HasSuffix(info.Key, ext) {
			skipped[SkipOtherExtension]++
			return nil
		}
		if err == nil && name.Ext != ext {
			// e.g. a ".keys.json" file next to ".json" files.
			skipped[SkipOtherExtension]++
			return nil
		}
		if err != nil {
			switch r.cfg.OnError {
			case OnErrorIgnore:
			case OnErrorLog:
				r.log.Warn("skipping malformed object key", "key", info.Key, "error", err)
			default:
				return fmt.Errorf("%w (behavior.on.error=fail; set it to ignore or log to skip such keys)", err)
			}
			skipped[SkipMalformed]++
			return nil
		}
		k := partKey{name.Topic, name.Partition}
		objects[k] = append(objects[k], Object{Key: info.Key, Size: info.Size, StartOffset: name.StartOffset})
		return nil
	}

	if len(r.cfg.Topics) > 0 {
		for _, t := range r.cfg.Topics {
			topics[t] = true
			if err := r.store.List(ctx, r.cfg.Keys.TopicPrefix(t), visit); err != nil {
				return nil, fmt.Errorf("list archive topic %q: %w", t, err)
			}
		}
	} else {
		// List under topics.dir without its delimiter, so sibling
		// prefixes ("topics-old/...") are seen and counted as outside.
		prefix := strings.TrimSuffix(topicsPrefix, dd)
		if err := r.store.List(ctx, prefix, visit); err != nil {
			return nil, fmt.Errorf("list archive under %q: %w", prefix, err)
		}
	}

	plan := &Plan{Skipped: skipped}
	byTarget := map[string]string{}
	for topic := range topics {
		target, err := r.rename.Target(topic)
		if err != nil {
			return nil, err
		}
		if other, dup := byTarget[target]; dup {
			a, b := min(other, topic), max(other, topic)
			return nil, fmt.Errorf("%w: archived topics %q and %q would both be restored into %q", ErrInvalidConfig, a, b, target)
		}
		byTarget[target] = topic
		plan.Topics = append(plan.Topics, TopicPlan{Source: topic, Target: target, FirstOffset: -1, LastOffset: -1})
	}
	sort.Slice(plan.Topics, func(i, j int) bool { return plan.Topics[i].Source < plan.Topics[j].Source })
	index := map[string]int{}
	for i, t := range plan.Topics {
		index[t.Source] = i
	}
	// Pair each value object with its .keys and .headers objects.
	for k, objs := range objects {
		t := &plan.Topics[index[k.topic]]
		for i := range objs {
			base := strings.TrimSuffix(objs[i].Key, ext)
			pp := parallel[base]
			if pp == nil {
				continue
			}
			if pp.keys != nil {
				objs[i].KeysKey, objs[i].keysExt, objs[i].KeysSize = pp.keys.key, pp.keys.ext, pp.keys.size
				t.KeysObjects++
			}
			if pp.headers != nil {
				objs[i].HeadersKey, objs[i].headersExt, objs[i].HeadersSize = pp.headers.key, pp.headers.ext, pp.headers.size
				t.HeadersObjects++
			}
			delete(parallel, base)
		}
	}
	// What is left: keys-only objects in the tombstone folder are
	// tombstone objects of their Kafka partition (with their .headers
	// object); everything else is an orphan.
	tombDir := r.cfg.TombstonePartition
	if tombDir == "" {
		tombDir = DefaultTombstonePartition
	}
	bases := make([]string, 0, len(parallel))
	for base := range parallel {
		bases = append(bases, base)
	}
	sort.Strings(bases)
	for _, base := range bases {
		pp := parallel[base]
		if pp.keys != nil && pp.keys.name.Encoded == tombDir {
			n := pp.keys.name
			o := Object{Key: pp.keys.key, Size: pp.keys.size, StartOffset: n.StartOffset, Tombstone: true, keysExt: pp.keys.ext}
			if pp.headers != nil {
				o.HeadersKey, o.headersExt, o.HeadersSize = pp.headers.key, pp.headers.ext, pp.headers.size
			}
			k := partKey{n.Topic, n.Partition}
			objects[k] = append(objects[k], o)
			plan.Topics[index[n.Topic]].TombstoneObjects++
			continue
		}
		for _, pi := range []*parallelInfo{pp.keys, pp.headers} {
			if pi != nil {
				skipped[SkipParallelOrphan]++
				r.log.Warn("skipping a keys or headers object without a value object, outside the tombstone folder",
					"key", pi.key, "tombstone.encoded.partition", tombDir)
			}
		}
	}
	for k, objs := range objects {
		t := &plan.Topics[index[k.topic]]
		sort.SliceStable(objs, func(i, j int) bool {
			if objs[i].StartOffset != objs[j].StartOffset {
				return objs[i].StartOffset < objs[j].StartOffset
			}
			return objs[i].Key < objs[j].Key
		})
		pp := PartitionPlan{Partition: k.part, Objects: objs}
		for _, o := range objs {
			pp.Bytes += o.Size
		}
		t.Parts = append(t.Parts, pp)
		t.Objects += len(objs)
		t.Bytes += pp.Bytes
		t.Partitions = max(t.Partitions, k.part+1)
		if t.FirstOffset < 0 || objs[0].StartOffset < t.FirstOffset {
			t.FirstOffset = objs[0].StartOffset
		}
		t.LastOffset = max(t.LastOffset, objs[len(objs)-1].StartOffset)
	}
	for i := range plan.Topics {
		parts := plan.Topics[i].Parts
		sort.Slice(parts, func(a, b int) bool { return parts[a].Partition < parts[b].Partition })
	}
	if err := r.prove(ctx, plan); err != nil {
		return nil, err
	}
	if err := r.describeArchived(ctx, plan); err != nil {
		return nil, err
	}
	return plan, nil
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
