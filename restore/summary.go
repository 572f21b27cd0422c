package restore

import (
	"fmt"
	"maps"
	"strings"
	"time"
)

// Summary is what a run did. In follow mode it covers every pass.
type Summary struct {
	Topics     int // archived topics in the plan
	Partitions int // Kafka partitions with objects
	Objects    int // objects in the plan
	Records    int64
	// Bytes is the size (as listed, compressed) of the value objects the
	// run restored or found already restored, each counted once: in
	// follow mode later passes add only new objects with records to
	// restore (an object that grew under its key is counted at its first
	// size; one with no record of its own, every offset held by others,
	// only in the first pass of its partition). The archive is read
	// more than that: once by the plan's proof, and again for the objects
	// produced.
	Bytes    int64
	Duration time.Duration
	// KeysSkipped counts listed keys that were not restored, by reason
	// (Skip* constants).
	KeysSkipped map[string]int
	// AlreadyPresent counts archived records that an earlier run had
	// already restored, found in the target at the start and skipped.
	AlreadyPresent int64
	// Duplicates counts archived records at source offsets that another
	// object already holds (overlapping objects): each offset is restored
	// once.
	Duplicates int64
	// ObjectsSkipped counts damaged objects the restore skipped
	// (behavior.on.error ignore or log, or AllowGaps); none of their
	// records is restored.
	ObjectsSkipped int
	// DamagedFound names the damaged objects found while restoring (one
	// read per object: damage the index and the listing cannot show);
	// each stopped the restore before anything of it was produced.
	DamagedFound []string
	// Gaps are the offset ranges the restore did not bring back (AllowGaps,
	// or left by skipped objects), by topic and partition; GapOffsets
	// counts their offsets where the extent is known.
	Gaps       []PartitionGap
	GapOffsets int64
	// LostOffsets counts the offsets the archive index records as lost
	// before archiving (PartitionPlan.Lost): never archived, so never
	// restored, and not gaps.
	LostOffsets int64
	// Groups counts the consumer groups whose offsets --restore-groups
	// committed; GroupOffsets is what it translated, per topic.
	Groups       int
	GroupOffsets []GroupPlan
	DryRun       bool
	// Until is Config.Until (zero without it); PastCut counts the
	// archived records past the partitions' cuts, which are not restored.
	Until   time.Time
	PastCut int64
	// Erased counts the records produced as tombstones because their key
	// is listed in Config.ExcludeKeys (--exclude-keys-file).
	Erased int64
	// SchemaIDsUnknown counts the produced keys and values that look
	// framed in Confluent's wire format with a schema id the archive does
	// not record (schemas.go): produced as archived.
	SchemaIDsUnknown int64
	// Schemas counts the archived schemas registered in (or found in) the
	// target registry, per target topic.
	Schemas int
	// Filtered counts the archived records Config.Filter left out, of
	// every stream the run read (a resumed run reads the restored part
	// again, and counts it again).
	Filtered int64
	// Expired counts, the same way, the records --skip-expired left out
	// (Config.SkipExpired).
	Expired int64
	// UnknownOrder lists the partitions ("topic/partition") whose record
	// order the plan does not know (PartitionPlan.Order is
	// OrderUnknown), restored with Config.AllowUnknownOrder object by
	// object in start-offset order.
	UnknownOrder []string
}

// PartitionGap is a Gap of one archived topic partition.
type PartitionGap struct {
	Topic     string
	Partition int32
	Gap
}

// Skipped reports whether the run left records of the archive out (damaged
// objects or gaps).
func (s Summary) Skipped() bool { return s.ObjectsSkipped > 0 || len(s.Gaps) > 0 }

// String is the one-line summary printed at the end of a run.
func (s Summary) String() string {
	verb := "restored"
	if s.DryRun {
		verb = "dry run, nothing produced:"
	}
	line := fmt.Sprintf("%s %d records (%s) from %d objects of %d topics, %d partitions in %.1fs; already present: %d records; keys skipped: %s; duplicates: %d; damaged objects skipped: %d; gaps: %d (%d offsets)",
		verb, s.Records, formatBytes(s.Bytes), s.Objects, s.Topics, s.Partitions, s.Duration.Seconds(),
		s.AlreadyPresent, formatSkipped(s.KeysSkipped), s.Duplicates, s.ObjectsSkipped, len(s.Gaps), s.GapOffsets)
	if len(s.DamagedFound) > 0 {
		line += fmt.Sprintf("; damaged objects found while restoring: %d (%s), nothing of them produced", len(s.DamagedFound), strings.Join(limitList(s.DamagedFound, 10), ", "))
	}
	if s.LostOffsets > 0 {
		line += fmt.Sprintf("; lost before archiving: %d offsets", s.LostOffsets)
	}
	if len(s.UnknownOrder) > 0 {
		line += fmt.Sprintf("; record order unknown: %d partitions (%s), restored by object start offset", len(s.UnknownOrder), strings.Join(limitList(s.UnknownOrder, 10), ", "))
	}
	if !s.Until.IsZero() {
		line += fmt.Sprintf("; --until %s: %d records past the cut left out", s.Until.UTC().Format(time.RFC3339Nano), s.PastCut)
	}
	if s.Filtered > 0 {
		line += fmt.Sprintf("; %d records left out by the filters", s.Filtered)
	}
	if s.SchemaIDsUnknown > 0 {
		line += fmt.Sprintf("; %d keys and values look framed with a schema id the archive does not record, produced as archived", s.SchemaIDsUnknown)
	}
	if s.Expired > 0 {
		line += fmt.Sprintf("; %d records older than the target's retention left out (--skip-expired)", s.Expired)
	}
	if s.Erased > 0 {
		line += fmt.Sprintf("; %d records of listed keys restored as tombstones (--exclude-keys-file)", s.Erased)
	}
	return line
}

// Seconds returns the run time in seconds.
func (s Summary) Seconds() float64 { return s.Duration.Seconds() }

// addPlan records a pass's plan in the summary: the latest plan's shape
// replaces the earlier one (the archive only grows), skipped keys too.
func (s *Summary) addPlan(p *Plan) {
	s.Topics = len(p.Topics)
	s.Partitions = p.Partitions()
	s.Objects = p.Objects()
	s.KeysSkipped = maps.Clone(p.Skipped)
	if s.KeysSkipped == nil {
		s.KeysSkipped = map[string]int{}
	}
	s.Duplicates, s.ObjectsSkipped, s.Gaps, s.GapOffsets, s.LostOffsets = 0, 0, nil, 0, 0
	s.Until, s.PastCut = p.Until, 0
	s.UnknownOrder = nil
	for _, t := range p.Topics {
		s.Duplicates += t.Duplicates
		s.LostOffsets += t.LostOffsets
		for _, pp := range t.Parts {
			if b := pp.base; b != nil { // what the plan left out (follow mode)
				s.Objects += b.objects
				s.Duplicates += b.duplicates
				s.LostOffsets += b.lost
			}
			if pp.Order == OrderUnknown {
				s.UnknownOrder = append(s.UnknownOrder, fmt.Sprintf("%s/%d", t.Source, pp.Partition))
			}
			if pp.Cut != nil {
				s.PastCut += pp.Cut.LeftOut
			}
			s.ObjectsSkipped += len(pp.Damaged)
			for _, g := range pp.Gaps {
				s.Gaps = append(s.Gaps, PartitionGap{Topic: t.Source, Partition: pp.Partition, Gap: g})
				s.GapOffsets += max(g.Count(), 0)
			}
		}
	}
}
