package restore

import (
	"context"
	"errors"
	"fmt"
	"io"
	"regexp"
	"sort"
	"strings"
	"text/tabwriter"

	"github.com/kafkas3/kafkas3/index"
	"github.com/twmb/franz-go/pkg/kadm"
	"github.com/twmb/franz-go/pkg/kerr"
)

// Consumer groups (Config.RestoreGroups)
//
// The sink snapshots the committed offsets of the consumer groups on each
// archived topic (index.Snapshot under Config.IndexPrefix). With
// RestoreGroups, Run picks each topic's snapshot before producing anything
// (chooseSnapshot: the newest, or with Until the one the cuts come from,
// TopicPlan.UntilSnapshot; none is ErrNoSnapshot), renames the groups
// (GroupRenameRegex, GroupRename: whole-name match, Java replacement), and
// translates every group offset through the plan's record stream: a group
// at source offset O on partition p gets E0 + the number of restored
// records of p whose source offset is below O (recordsBefore, counted over
// PartitionPlan.segments, the runs of the deduplicated stream; no list of
// offsets is kept). By the resume protocol that is the target offset of the
// first restored record whose source offset is >= O, or, when there is
// none, the end of the restored data: exact across offsets the archive
// does not hold (transaction markers, compaction, a --until cut), into a
// target that held records before (E0 > 0), and after a resumed restore
// (E0 is the marker's). A partition the archive holds no record of gets
// the target's end offset. Groups with members on the target (DescribeGroups,
// and ConsumerGroupDescribe for KIP-848 groups) are refused by name
// (ErrGroupActive) before anything is produced and again before the first
// commit; the commits come after the pass, each group in one OffsetCommit,
// with metadata naming the snapshot; a translated offset past the target's
// end offset is refused. A re-run produces nothing and commits the same
// offsets. Not with Follow. DryRunGroups and WriteGroupsText give the dry
// run's "source offset -> target offset" per group and partition.

// Errors of --restore-groups.
var (
	// ErrNoSnapshot: a topic has no group offset snapshot to restore the
	// groups from (none at all, or none at or before --until).
	ErrNoSnapshot = errors.New("no group offset snapshot")
	// ErrGroupActive: a group to restore has members on the target
	// cluster; committing under it would move live consumers.
	ErrGroupActive = errors.New("consumer group has members on the target")
)

// groupRenamer maps an archived group name to its target name: when the
// regex matches the whole name, the name becomes the replacement (Java
// syntax, $0, $1, ${name}, as --topic-rename); otherwise it is kept.
type groupRenamer struct {
	re       *regexp.Regexp
	template string
}

func newGroupRenamer(re *regexp.Regexp, replacement string) (*groupRenamer, error) {
	if re == nil {
		return &groupRenamer{}, nil
	}
	full, err := fullMatch(re)
	if err != nil {
		return nil, err
	}
	tmpl, err := javaReplacement(replacement, full)
	if err != nil {
		return nil, fmt.Errorf("--group-rename: %w", err)
	}
	return &groupRenamer{re: full, template: tmpl}, nil
}

// Target returns the target group of source; an empty result is an error.
func (g *groupRenamer) Target(source string) (string, error) {
	if g.re == nil {
		return source, nil
	}
	m := g.re.FindStringSubmatchIndex(source)
	if m == nil {
		return source, nil
	}
	out := string(g.re.ExpandString(nil, g.template, source, m))
	if out == "" {
		return "", fmt.Errorf("%w: --group-rename of group %q gives an empty name", ErrInvalidConfig, source)
	}
	return out, nil
}

// GroupOffset is one group's position on one partition, translated.
type GroupOffset struct {
	Group       string // the group in the snapshot (source cluster)
	TargetGroup string // after --group-rename
	Source      string // archived topic
	Target      string // target topic
	Partition   int32
	// SourceOffset is the group's committed offset in the snapshot.
	SourceOffset int64
	// Before is how many restored records of the partition have a source
	// offset below SourceOffset. The first restored record at or after
	// SourceOffset lands at Start+Before, and when there is none,
	// Start+Before is the end of the restored data.
	Before int64
	// Start is the target partition's restore start offset E0 (its
	// marker; for a partition the archive has no record of, its end
	// offset), or -1 when unknown (a dry run without the target).
	Start int64
	// Skip, when not empty, says why the offset is not committed.
	Skip string
}

// TargetOffset is Start+Before, or -1 when Start is unknown.
func (g GroupOffset) TargetOffset() int64 {
	if g.Start < 0 {
		return -1
	}
	return g.Start + g.Before
}

// GroupPlan is what --restore-groups commits for one topic.
type GroupPlan struct {
	Source, Target string
	// SnapshotKey names the snapshot the offsets come from; SnapshotTime
	// is its time_ms.
	SnapshotKey  string
	SnapshotTime int64
	Offsets      []GroupOffset // by target group, then partition
}

// chooseSnapshot is the seam that picks the snapshot a topic's groups are
// restored from: with Config.Until the snapshot of that moment (the one
// the topic's cuts start from), else the newest one.
func (r *Restorer) chooseSnapshot(ctx context.Context, t *TopicPlan) (*index.Snapshot, string, error) {
	if !r.cfg.Until.IsZero() {
		s, key := t.UntilSnapshot()
		if s == nil {
			return nil, "", fmt.Errorf("%w of topic %q at or before --until %s under %q; without one the groups of that moment are unknown",
				ErrNoSnapshot, t.Source, r.cfg.Until.UTC().Format("2006-01-02T15:04:05.000Z07:00"), index.SnapshotTopicDir(r.cfg.IndexPrefix, t.Source))
		}
		return s, key, nil
	}
	s, key, err := index.LoadSnapshot(ctx, r.store, r.cfg.IndexPrefix, t.Source, -1)
	if err != nil {
		return nil, "", err
	}
	if s == nil {
		return nil, "", fmt.Errorf("%w of topic %q under %q: the sink writes them with offsets.snapshot.interval.ms (kafkas3.index.enabled)",
			ErrNoSnapshot, t.Source, index.SnapshotTopicDir(r.cfg.IndexPrefix, t.Source))
	}
	return s, key, nil
}

// recordsBefore returns how many records of pp's restored stream have a
// source offset below o. The stream is pp.segments, each a run of
// consecutive source offsets, in offset order, each offset once: so the
// count needs no list of offsets, and is exact across offsets the archive
// does not hold (compaction, transaction markers, a --until cut).
func recordsBefore(pp *PartitionPlan, o int64) int64 { return newStreamCounter(pp).before(o) }

// streamCounter answers recordsBefore for many offsets of one partition in
// O(log segments) each: the segments' starts and the records before each.
type streamCounter struct {
	segs  []segment
	ahead []int64 // ahead[i]: records of the stream before segs[i]
}

func newStreamCounter(pp *PartitionPlan) *streamCounter {
	c := &streamCounter{segs: pp.segments, ahead: make([]int64, len(pp.segments)+1)}
	for i, s := range pp.segments {
		c.ahead[i+1] = c.ahead[i] + (s.to - s.from)
	}
	return c
}

func (c *streamCounter) before(o int64) int64 {
	// The first segment starting at or after o; everything before it
	// counts, and of the one before that, the offsets below o.
	i := sort.Search(len(c.segs), func(i int) bool { return c.segs[i].first >= o })
	if i == 0 {
		return 0
	}
	s := c.segs[i-1]
	return c.ahead[i-1] + min(s.to-s.from, o-s.first)
}

// PlanGroups translates the group offsets of each topic's snapshot
// (chooseSnapshot) through the plan's record streams. Start is left -1;
// the run (or a dry run that reaches the target) fills it in.
func (r *Restorer) PlanGroups(ctx context.Context, plan *Plan) ([]GroupPlan, error) {
	if r.cfg.IndexPrefix == "" {
		return nil, fmt.Errorf("%w: --restore-groups needs the archive index prefix (kafkas3.index.prefix)", ErrInvalidConfig)
	}
	var out []GroupPlan
	for i := range plan.Topics {
		t := &plan.Topics[i]
		if t.Objects == 0 {
			continue // nothing restored (the run warns), nothing to translate into
		}
		snap, key, err := r.chooseSnapshot(ctx, t)
		if err != nil {
			return nil, err
		}
		gp := GroupPlan{Source: t.Source, Target: t.Target, SnapshotKey: key, SnapshotTime: snap.TimeMS}
		parts := map[int32]*streamCounter{}
		for j := range t.Parts {
			if pp := &t.Parts[j]; pp.Order == OrderUnknown {
				// Its stream is whole objects at assumed offsets: a group
				// offset cannot be placed in it exactly.
				return nil, fmt.Errorf("%w: --restore-groups cannot translate group offsets into %s/%d, whose record order is unknown (%s)",
					ErrOrderUnknown, t.Source, pp.Partition, pp.orderReason())
			}
			parts[t.Parts[j].Partition] = newStreamCounter(&t.Parts[j])
		}
		for _, g := range snap.GroupNames() {
			tg, err := r.groupRename.Target(g)
			if err != nil {
				return nil, err
			}
			offs := snap.Groups[g]
			ps := make([]int32, 0, len(offs))
			for p := range offs {
				ps = append(ps, p)
			}
			sort.Slice(ps, func(a, b int) bool { return ps[a] < ps[b] })
			for _, p := range ps {
				if !r.cfg.Shard.Owns(t.Source, p) {
					continue // another shard commits it
				}
				o := GroupOffset{Group: g, TargetGroup: tg, Source: t.Source, Target: t.Target, Partition: p, SourceOffset: offs[p], Start: -1}
				if c := parts[p]; c != nil {
					o.Before = c.before(offs[p])
				} else if p >= t.Partitions {
					o.Skip = fmt.Sprintf("the archive has no partition %d (it has %d)", p, t.Partitions)
				}
				gp.Offsets = append(gp.Offsets, o)
			}
		}
		sort.SliceStable(gp.Offsets, func(a, b int) bool {
			x, y := gp.Offsets[a], gp.Offsets[b]
			if x.TargetGroup != y.TargetGroup {
				return x.TargetGroup < y.TargetGroup
			}
			return x.Partition < y.Partition
		})
		out = append(out, gp)
	}
	if err := checkGroupTargets(out); err != nil {
		return nil, err
	}
	return out, nil
}

// checkGroupTargets refuses two source groups renamed to one target group
// on the same target partition: one commit would overwrite the other.
func checkGroupTargets(gps []GroupPlan) error {
	seen := map[string]string{}
	for _, gp := range gps {
		for _, o := range gp.Offsets {
			k := fmt.Sprintf("%s\x00%s\x00%d", o.TargetGroup, o.Target, o.Partition)
			if prev, ok := seen[k]; ok && prev != o.Group {
				return fmt.Errorf("%w: groups %q and %q both become group %q on %s/%d (--group-rename); rename them apart",
					ErrInvalidConfig, prev, o.Group, o.TargetGroup, o.Target, o.Partition)
			}
			seen[k] = o.Group
		}
	}
	return nil
}

// targetGroups returns the target group names of gps, sorted, once each.
func targetGroups(gps []GroupPlan) []string {
	set := map[string]bool{}
	for _, gp := range gps {
		for _, o := range gp.Offsets {
			set[o.TargetGroup] = true
		}
	}
	out := make([]string, 0, len(set))
	for g := range set {
		out = append(out, g)
	}
	sort.Strings(out)
	return out
}

// checkGroupsIdle refuses, by name, the target groups that have members
// (classic groups through DescribeGroups, KIP-848 consumer groups through
// ConsumerGroupDescribe where the cluster has it).
func (r *Restorer) checkGroupsIdle(ctx context.Context, adm *kadm.Client, gps []GroupPlan) error {
	names := targetGroups(gps)
	if len(names) == 0 {
		return nil
	}
	var described kadm.DescribedGroups
	err := r.retry(ctx, "describe target groups", nil, func(ctx context.Context) error {
		var err error
		described, err = adm.DescribeGroups(ctx, names...)
		return err
	})
	if err != nil {
		return fmt.Errorf("describe the target groups %s before committing their offsets: %w", quoteList(names), err)
	}
	var active []string
	for _, g := range names {
		d, ok := described[g]
		if !ok {
			continue
		}
		if d.Err != nil && !errors.Is(d.Err, kerr.GroupIDNotFound) {
			return fmt.Errorf("describe target group %q before committing its offsets: %w", g, d.Err)
		}
		if d.Err == nil && len(d.Members) > 0 {
			active = append(active, fmt.Sprintf("%q (%d members, %s)", g, len(d.Members), d.State))
		}
	}
	if cg, err := adm.DescribeConsumerGroups(ctx, names...); err == nil {
		for _, g := range names {
			if d, ok := cg[g]; ok && d.Err == nil && len(d.Members) > 0 {
				active = append(active, fmt.Sprintf("%q (%d members, %s)", g, len(d.Members), d.State))
			}
		}
	}
	if len(active) > 0 {
		sort.Strings(active)
		return fmt.Errorf("%w: %s; stop their consumers (or restore under other names with --group-rename) first, nothing was committed",
			ErrGroupActive, strings.Join(dedupeStrings(active), ", "))
	}
	return nil
}

func dedupeStrings(ss []string) []string {
	out := ss[:0]
	for i, s := range ss {
		if i == 0 || s != ss[i-1] {
			out = append(out, s)
		}
	}
	return out
}

// fillStarts sets each offset's Start from starts (target partition ->
// E0) or, for a partition without one (the archive holds none of its
// records), from the target's end offset ends.
func fillStarts(gps []GroupPlan, starts map[topicPartition]int64, ends map[topicPartition]int64) {
	for i := range gps {
		for j := range gps[i].Offsets {
			o := &gps[i].Offsets[j]
			if o.Skip != "" {
				continue
			}
			k := topicPartition{o.Target, o.Partition}
			if e0, ok := starts[k]; ok {
				o.Start = e0
			} else if end, ok := ends[k]; ok {
				o.Start = end
			} else {
				o.Skip = fmt.Sprintf("target partition %s/%d does not exist", o.Target, o.Partition)
			}
		}
	}
}

// targetStarts reads, for gps' target topics, each partition's marker (E0)
// and end offset: what the translated offsets start from. It only reads.
// With missingOK, a target topic that does not exist yet is left out (a
// dry run: the restore creates it, so it starts at 0).
func (r *Restorer) targetStarts(ctx context.Context, adm *kadm.Client, gps []GroupPlan, missingOK bool) (starts, ends map[topicPartition]int64, err error) {
	starts, ends = map[topicPartition]int64{}, map[topicPartition]int64{}
	for _, gp := range gps {
		if missingOK {
			td, err := adm.ListTopics(ctx, gp.Target)
			if err != nil {
				return nil, nil, fmt.Errorf("describe target topic %q: %w", gp.Target, err)
			}
			if d, ok := td[gp.Target]; !ok || errors.Is(d.Err, kerr.UnknownTopicOrPartition) {
				continue
			}
		}
		markers, err := r.readMarkers(ctx, adm, gp.Target)
		if err != nil {
			return nil, nil, err
		}
		if err := refuseRepartitioned(gp.Target, markers); err != nil {
			return nil, nil, err // no group offset maps into it
		}
		for p, m := range markers {
			if m.Archive != r.cfg.Identity || m.Source != gp.Source {
				return nil, nil, fmt.Errorf("%w: %s/%d was restored from topic %q of archive %q (marker group %q), not topic %q of archive %q; its group offsets cannot be translated",
					ErrMarkerMismatch, gp.Target, p, m.Source, m.Archive, MarkerGroup(gp.Target), gp.Source, r.cfg.Identity)
			}
			starts[topicPartition{gp.Target, p}] = m.Start
		}
		var listed kadm.ListedOffsets
		err = r.retry(ctx, fmt.Sprintf("list end offsets of %q", gp.Target), nil, func(ctx context.Context) error {
			var err error
			if listed, err = adm.ListEndOffsets(ctx, gp.Target); err == nil {
				err = listed.Error()
			}
			return err
		})
		if err != nil {
			return nil, nil, fmt.Errorf("list end offsets of %q: %w", gp.Target, err)
		}
		listed.Each(func(o kadm.ListedOffset) { ends[topicPartition{gp.Target, o.Partition}] = o.Offset })
	}
	return starts, ends, nil
}

// targetListed tells whether ends holds any partition of topic.
func targetListed(ends map[topicPartition]int64, topic string) bool {
	for k := range ends {
		if k.topic == topic {
			return true
		}
	}
	return false
}

// commitGroups checks that no target group has members, then commits
// every translated offset, group by group. A translated offset is never
// past the restored data: Start+Before is at most Start plus the records
// restored, and the end offset is checked against it.
func (r *Restorer) commitGroups(ctx context.Context, adm *kadm.Client, gps []GroupPlan) (int, error) {
	if err := r.checkGroupsIdle(ctx, adm, gps); err != nil {
		return 0, err
	}
	starts, ends, err := r.targetStarts(ctx, adm, gps, false)
	if err != nil {
		return 0, err
	}
	fillStarts(gps, starts, ends)
	byGroup := map[string]kadm.Offsets{}
	for _, gp := range gps {
		for _, o := range gp.Offsets {
			if o.Skip != "" {
				r.log.Warn("group offset not restored", "group", o.Group, "target_group", o.TargetGroup,
					"topic", o.Target, "partition", o.Partition, "source_offset", o.SourceOffset, "why", o.Skip)
				continue
			}
			to := o.TargetOffset()
			if end := ends[topicPartition{o.Target, o.Partition}]; to > end {
				return 0, fmt.Errorf("group %q %s/%d: translated offset %d is past the target's end offset %d: the records are not all restored; nothing of this group was committed",
					o.TargetGroup, o.Target, o.Partition, to, end)
			}
			os := byGroup[o.TargetGroup]
			if os == nil {
				os = kadm.Offsets{}
				byGroup[o.TargetGroup] = os
			}
			os.Add(kadm.Offset{Topic: o.Target, Partition: o.Partition, At: to, LeaderEpoch: -1,
				Metadata: "kafkas3 restore-groups from " + gp.SnapshotKey})
		}
	}
	names := make([]string, 0, len(byGroup))
	for g := range byGroup {
		names = append(names, g)
	}
	sort.Strings(names)
	for _, g := range names {
		os := byGroup[g]
		err := r.retry(ctx, fmt.Sprintf("commit offsets of group %q", g), nil, func(ctx context.Context) error {
			return adm.CommitAllOffsets(ctx, g, os)
		})
		if err != nil {
			return 0, fmt.Errorf("commit the restored offsets of group %q: %w", g, err)
		}
		r.log.Info("group offsets restored", "group", g, "partitions", len(os.Sorted()))
	}
	return len(names), nil
}

// WriteGroupsText prints, per topic, group and partition, "source offset
// -> target offset" (for --dry-run). A target offset not known yet (no
// marker, the target not reachable) is shown as "start+N": N records after
// where the restore of the partition starts.
func WriteGroupsText(w io.Writer, gps []GroupPlan) error {
	tw := tabwriter.NewWriter(w, 0, 4, 2, ' ', 0)
	for _, gp := range gps {
		fmt.Fprintf(tw, "groups of %s -> %s from snapshot %s:\n", gp.Source, gp.Target, gp.SnapshotKey)
		if len(gp.Offsets) == 0 {
			fmt.Fprintln(tw, "  (no group has offsets on the topic)")
			continue
		}
		fmt.Fprintln(tw, "  GROUP\tTARGET GROUP\tPARTITION\tSOURCE OFFSET -> TARGET OFFSET")
		for _, o := range gp.Offsets {
			to := fmt.Sprintf("start+%d", o.Before)
			if o.Start >= 0 {
				to = fmt.Sprint(o.TargetOffset())
			}
			if o.Skip != "" {
				to = "not restored: " + o.Skip
			}
			fmt.Fprintf(tw, "  %s\t%s\t%d\t%d -> %s\n", o.Group, o.TargetGroup, o.Partition, o.SourceOffset, to)
		}
	}
	return tw.Flush()
}

// DryRunGroups is PlanGroups for --dry-run: with adm (the target reachable)
// each target offset is resolved from the markers and end offsets, read
// only; without, offsets are relative to each partition's restore start.
func (r *Restorer) DryRunGroups(ctx context.Context, adm *kadm.Client, plan *Plan) ([]GroupPlan, error) {
	gps, err := r.PlanGroups(ctx, plan)
	if err != nil || adm == nil {
		return gps, err
	}
	starts, ends, err := r.targetStarts(ctx, adm, gps, true)
	if err != nil {
		return gps, err
	}
	// A partition without a marker starts where the target ends now; a
	// target that does not exist yet is created empty.
	for k, end := range ends {
		if _, ok := starts[k]; !ok {
			starts[k] = end
		}
	}
	for _, gp := range gps {
		if targetListed(ends, gp.Target) {
			continue
		}
		for _, o := range gp.Offsets {
			k := topicPartition{o.Target, o.Partition}
			starts[k], ends[k] = 0, 0
		}
	}
	fillStarts(gps, starts, ends)
	return gps, nil
}
