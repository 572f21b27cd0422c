package restore

import (
	"errors"
	"fmt"
	"strings"
)

// Record order across folders
//
// With a field partitioner, and with a time-based one that gets late
// records, the sink keeps several objects of one Kafka partition open at
// once, in different folders, so their offsets interleave (even offsets
// in region=eu, odd ones in region=us). The plan's segments put such
// records back in offset order whenever each record's offset is known:
// from the archive index's runs, or from envelopes (PartitionPlan.Order
// OrderOffsets). Without either, a name gives only an object's first
// offset: objects of one folder are still in order (OrderOneFolder: the
// sink writes a folder's records to one object at a time), but objects of
// several folders are in an unknown order (OrderUnknown; Overlapping
// counts the objects that start inside another folder's object, a sign
// that they interleave). Check refuses such partitions before anything is
// produced (ErrOrderUnknown) unless Config.AllowUnknownOrder; then each
// of their objects is produced whole in start-offset order, none of its
// records dropped as a duplicate (it cannot be told from an interleaved
// one), and the log, the plan and the Summary (UnknownOrder) name the
// partitions. --restore-groups refuses such partitions even then: a group
// offset cannot be placed exactly in their stream.

// ErrOrderUnknown is wrapped when partitions of the plan hold objects in
// several folders (encoded partitions: time periods, field values) whose
// records carry no offsets (no archive index entry, no envelope), and
// Config.AllowUnknownOrder is off. Nothing is produced then.
var ErrOrderUnknown = errors.New("the record order of partitions is unknown")

// Record order of a partition (PartitionPlan.Order): how the restore knows
// it produces the partition's records in their source order.
const (
	// OrderOffsets: every record's source offset is known (archive index
	// entries, or offsets the records carry in envelopes), so the stream
	// is the records merged by offset, across objects and folders, each
	// offset once. Records of objects of different folders may interleave
	// (a field partitioner, late records of a time-based one); they come
	// out in offset order.
	OrderOffsets = "by offset"
	// OrderOneFolder: some objects' records carry no offsets, but every
	// value object of the partition is in one folder (Confluent's default
	// layout, or a single time period or field value). The sink writes one
	// folder's records to one object at a time, so objects sorted by start
	// offset hold the records in order; overlaps are records archived
	// twice.
	OrderOneFolder = "one folder"
	// OrderUnknown: objects without record offsets, and value objects in
	// several folders. Objects of different folders may hold interleaved
	// offsets (a field partitioner writes them side by side; a time-based
	// one with late records too), and an object's name gives only its
	// first offset, so whether sorting objects by start offset gives the
	// record order is unknown. Check refuses such partitions unless
	// Config.AllowUnknownOrder; then each of these objects is restored
	// whole, in start-offset order (then key), none of its records dropped
	// as a duplicate (without offsets a duplicate cannot be told from an
	// interleaved record): records may come out of order, and records
	// archived twice are restored twice. Holes between such objects'
	// assumed offsets are not reported as gaps either (interleaved objects
	// leave holes that other objects' records fill), so an object deleted
	// from such a partition goes unnoticed; damaged objects are still
	// found. The plan and the log say so.
	OrderUnknown = "UNKNOWN"
)

// named reports whether o's records have no known offsets: readable, with
// neither an index entry nor offsets carried by its records.
func (o *Object) named() bool {
	return o.Damage == nil && o.facts != nil && o.entry == nil && o.checks == nil && o.facts.offsets == nil
}

// judgeOrder sets pp.Order, pp.Folders and pp.Overlapping from its
// objects (sorted by start offset) and their facts, before claim. The
// tombstone folder is not counted: a switch between tombstones and other
// records rotates every open object, so tombstone objects never interleave
// with value objects.
//
// indexCommit is the last commit the archive index shows for the
// partition (-1 without entries): named objects starting at or after it
// are counted in pp.pastIndex, for the reason the plan gives.
func (pp *PartitionPlan) judgeOrder(indexCommit int64) {
	folders := map[string]bool{}
	named := 0
	pp.pastIndex = 0
	for i := range pp.Objects {
		o := &pp.Objects[i]
		if !o.Tombstone {
			folders[o.Folder] = true
		}
		if o.named() {
			named++
			if indexCommit >= 0 && o.StartOffset >= indexCommit {
				pp.pastIndex++
			}
		}
	}
	pp.Folders = len(folders)
	pp.Overlapping = 0
	switch {
	case named == 0:
		pp.Order = OrderOffsets
	case len(folders) <= 1:
		pp.Order = OrderOneFolder
	default:
		pp.Order = OrderUnknown
		pp.Overlapping = pp.overlappingFolders()
	}
}

// overlappingFolders counts the readable value objects whose offsets (for
// named objects: the start offset and one per record, as if consecutive)
// begin inside those of an earlier object of another folder: evidence that
// the folders' records interleave (or were archived twice).
func (pp *PartitionPlan) overlappingFolders() int {
	n := 0
	reach, reachFolder := int64(-1), ""
	for i := range pp.Objects {
		o := &pp.Objects[i]
		if o.Tombstone || o.Damage != nil || o.facts == nil || o.facts.records == 0 {
			continue
		}
		first, last := o.StartOffset, o.StartOffset+o.facts.records-1
		if !o.named() && len(o.facts.offsets) > 0 {
			first, last = o.facts.offsets[0].First, o.facts.offsets[len(o.facts.offsets)-1].Last
		}
		if first <= reach && o.Folder != reachFolder {
			n++
		}
		if last > reach {
			reach, reachFolder = last, o.Folder
		}
	}
	return n
}

// OrderText says how the partition's record order is known, for the plan.
func (pp *PartitionPlan) OrderText() string {
	switch {
	case len(pp.Objects) == 0:
		return "-"
	case pp.Order == OrderUnknown:
		return fmt.Sprintf("%s: %d folders", OrderUnknown, pp.Folders)
	case pp.Order == OrderOffsets && pp.Folders > 1:
		return fmt.Sprintf("%s, %d folders", OrderOffsets, pp.Folders)
	}
	return pp.Order
}

// orderReason says why pp's order is unknown, for the plan, the log
// and the error.
func (pp *PartitionPlan) orderReason() string {
	s := fmt.Sprintf("objects in %d folders and records without offsets (no archive index entry, no envelope)", pp.Folders)
	if pp.Overlapping > 0 {
		s += fmt.Sprintf("; %d objects start inside the offsets of an object of another folder: their records interleave, or were archived twice", pp.Overlapping)
	} else {
		s += "; no object starts inside another folder's object, so start-offset order is the records' order if the partition's offsets are consecutive (compaction or transaction markers could hide interleaving)"
	}
	if pp.pastIndex > 0 {
		s += fmt.Sprintf("; %d objects without an index entry start after the archive index's last commit of the partition: "+
			"a sink commit under way (try again in a moment), or a sink stopped between upload and index", pp.pastIndex)
	}
	return s
}

// unknownOrder returns the "topic/partition: reason" of each partition of
// plan whose order is unknown.
func unknownOrder(plan *Plan) []string {
	var out []string
	for _, t := range plan.Topics {
		for _, pp := range t.Parts {
			if pp.Order == OrderUnknown {
				out = append(out, fmt.Sprintf("%s/%d: %s", t.Source, pp.Partition, pp.orderReason()))
			}
		}
	}
	return out
}

// orderError refuses, before anything is produced, a plan with partitions
// whose order is unknown, unless Config.AllowUnknownOrder.
func (r *Restorer) orderError(plan *Plan) error {
	bad := unknownOrder(plan)
	if len(bad) == 0 || r.cfg.AllowUnknownOrder {
		return nil
	}
	return fmt.Errorf("%w (nothing was produced): %s; restore from an archive with the archive index or envelopes "+
		"(kafkas3 sink), or pass --allow-unknown-order to restore each such partition object by object in start-offset order "+
		"(records of different folders may then come out of order, and records archived twice are restored twice)",
		ErrOrderUnknown, strings.Join(limitList(bad, 20), "; "))
}

// reportOrder logs each partition restored in an unknown order
// (Config.AllowUnknownOrder), before anything is produced.
func (r *Restorer) reportOrder(plan *Plan) {
	for _, t := range plan.Topics {
		for _, pp := range t.Parts {
			if pp.Order == OrderUnknown {
				r.log.Warn("restoring a partition whose record order is unknown: objects whole, in start-offset order (--allow-unknown-order)",
					"topic", t.Source, "target", t.Target, "partition", pp.Partition, "folders", pp.Folders,
					"overlapping_objects", pp.Overlapping, "reason", pp.orderReason())
			}
		}
	}
}
