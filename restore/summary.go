package restore

import (
	"fmt"
	"maps"
	"time"
)

// Summary is what a run did. In follow mode it covers every pass.
type Summary struct {
	Topics     int // archived topics in the plan
	Partitions int // Kafka partitions with objects
	Objects    int // objects in the plan
	Records    int64
	// Bytes counts archive bytes read (compressed, as stored). In follow
	// mode later passes read only new objects.
	Bytes    int64
	Duration time.Duration
	// KeysSkipped counts listed keys that were not restored, by reason
	// (Skip* constants).
	KeysSkipped map[string]int
	// AlreadyPresent counts archived records that an earlier run had
	// already restored, found in the target at the start and skipped.
	AlreadyPresent int64
	DryRun         bool
}

// String is the one-line summary printed at the end of a run.
func (s Summary) String() string {
	verb := "restored"
	if s.DryRun {
		verb = "dry run, nothing produced:"
	}
	return fmt.Sprintf("%s %d records (%s) from %d objects of %d topics, %d partitions in %.1fs; already present: %d records; keys skipped: %s",
		verb, s.Records, formatBytes(s.Bytes), s.Objects, s.Topics, s.Partitions, s.Duration.Seconds(),
		s.AlreadyPresent, formatSkipped(s.KeysSkipped))
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
}
