package archive

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"maps"
	"regexp"
	"sort"
	"strings"
	"time"

	"github.com/kafkas3/kafkas3/index"
	"github.com/kafkas3/kafkas3/s3store"
	"github.com/twmb/franz-go/pkg/kadm"
	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kgo"
)

// RestoreGroupPrefix starts the marker groups of the source's restores
// ("kafkas3-restore-<target topic>"); snapshots leave them out.
const RestoreGroupPrefix = "kafkas3-restore-"

// snapshotter writes the group offset snapshots (index.Snapshot) of the
// archived topics. It uses its own client, outside the sink's group.
type snapshotter struct {
	cfg      *Config
	ids      *identities // the topics' generations; stopped topics are left out
	store    s3store.Store
	log      *slog.Logger
	tally    *tally
	outageOf func(what string, err error) bool // Sink.outageOf
	adm      *kadm.Client
	groupsRE *regexp.Regexp // nil: every group
	topicsRE *regexp.Regexp // topics.regex, nil with a topic list
	writer   string
	// last is, per topic, the last snapshot written or found in the store
	// by this writer: an identical one is not written again.
	last   map[string]*index.Snapshot
	loaded map[string]bool
	// warned holds the warnings already given (missing ACLs): each once.
	warned map[string]bool
}

// snapshotsOn reports whether the sink writes snapshots.
func (s *Sink) snapshotsOn() bool { return s.cfg.IndexPrefix != "" && s.cfg.SnapshotInterval > 0 }

func (s *Sink) newSnapshotter() (*snapshotter, func(), error) {
	cl, err := kgo.NewClient(append([]kgo.Opt{kgo.SeedBrokers(s.cfg.Brokers...)}, s.cfg.KafkaOpts...)...)
	if err != nil {
		return nil, nil, fmt.Errorf("kafka client for offset snapshots: %w", err)
	}
	sn := &snapshotter{cfg: &s.cfg, ids: &s.ids, store: s.store, log: s.log, tally: &s.tally, outageOf: s.outageOf, adm: kadm.NewClient(cl), writer: index.WriterOf(s.cfg.GroupID),
		last: map[string]*index.Snapshot{}, loaded: map[string]bool{}, warned: map[string]bool{}}
	if s.cfg.GroupsRegex != "" {
		if sn.groupsRE, err = regexp.Compile("^(?:" + s.cfg.GroupsRegex + ")$"); err != nil {
			cl.Close()
			return nil, nil, fmt.Errorf("groups.regex: %w", err)
		}
	}
	if s.cfg.TopicsRegex != "" {
		if sn.topicsRE, err = regexp.Compile("^(?:" + s.cfg.TopicsRegex + ")$"); err != nil {
			cl.Close()
			return nil, nil, fmt.Errorf("topics.regex: %w", err)
		}
	}
	return sn, cl.Close, nil
}

// loop takes a snapshot every SnapshotInterval until ctx ends.
func (sn *snapshotter) loop(ctx context.Context) {
	t := time.NewTicker(sn.cfg.SnapshotInterval)
	defer t.Stop()
	for {
		select {
		case <-ctx.Done():
			return
		case <-t.C:
			sn.takeLogged(ctx)
		}
	}
}

// takeLogged takes a snapshot; a failure is a warning, never a stop.
func (sn *snapshotter) takeLogged(ctx context.Context) {
	if err := sn.take(ctx); err != nil && ctx.Err() == nil && !sn.outageOf("group offset snapshot", err) {
		sn.log.Warn("group offset snapshot failed; archiving goes on", "err", err)
	}
}

// warnOnce logs a warning the first time its key is seen.
func (sn *snapshotter) warnOnce(key, msg string, args ...any) {
	if sn.warned[key] {
		return
	}
	sn.warned[key] = true
	sn.log.Warn(msg, args...)
}

// isAuthErr tells the errors of missing ACLs.
func isAuthErr(err error) bool {
	var ae *kadm.AuthError
	return errors.As(err, &ae) || errors.Is(err, kerr.GroupAuthorizationFailed) ||
		errors.Is(err, kerr.ClusterAuthorizationFailed) || errors.Is(err, kerr.TopicAuthorizationFailed)
}

// topics returns the archived topics: Config.Topics, or those matching
// topics.regex.
// A topic whose archiving is stopped (identity.go) is left out: its
// offsets are not the archived topic's.
func (sn *snapshotter) topics(ctx context.Context) ([]string, error) {
	var out []string
	if sn.topicsRE == nil {
		out = sn.cfg.Topics // without copies it
	} else {
		all, err := sn.adm.ListTopics(ctx)
		if err != nil {
			return nil, fmt.Errorf("list topics: %w", err)
		}
		for _, t := range all.Names() {
			if sn.topicsRE.MatchString(t) {
				out = append(out, t)
			}
		}
	}
	return sn.ids.without(out), nil
}

// snapshotGroup tells a group whose offsets a snapshot records: not the
// sink's own group, not a restore's marker group, matching groups.regex,
// and a consumer group (classic or KIP-848; not share or connect groups).
func (sn *snapshotter) snapshotGroup(g kadm.ListedGroup) bool {
	if g.Group == sn.cfg.GroupID || strings.HasPrefix(g.Group, RestoreGroupPrefix) {
		return false
	}
	if g.GroupType == "share" || g.GroupType == "streams" || (g.ProtocolType != "" && g.ProtocolType != "consumer") {
		return false
	}
	return sn.groupsRE == nil || sn.groupsRE.MatchString(g.Group)
}

// take writes one snapshot per archived topic: the group offsets first,
// then the end offsets (last stable offsets, what a read_committed sink
// archives), stamped with the wall time after both were read. A snapshot
// equal to the last one this writer wrote for the topic is not written.
func (sn *snapshotter) take(ctx context.Context) error {
	topics, err := sn.topics(ctx)
	if err != nil || len(topics) == 0 {
		return err
	}
	groups, err := sn.groupOffsets(ctx, topics)
	if err != nil {
		return err
	}
	ends, err := sn.adm.ListCommittedOffsets(ctx, topics...)
	if err != nil {
		return fmt.Errorf("list end offsets: %w", err)
	}
	now := time.Now().UnixMilli()
	var errs []error
	for _, t := range topics {
		snap, err := topicSnapshot(t, now, ends, groups[t])
		if err != nil {
			errs = append(errs, err)
			continue
		}
		if snap == nil {
			continue // deleted since the listing
		}
		if err := sn.write(ctx, snap); err != nil {
			errs = append(errs, err)
		}
	}
	return errors.Join(errs...)
}

// groupOffsets returns the committed offsets on topics of the groups a
// snapshot records (snapshotGroup), by topic, group and partition. Groups
// whose offsets the ACLs hide are left out, with one warning per run.
func (sn *snapshotter) groupOffsets(ctx context.Context, topics []string) (map[string]map[string]map[int32]int64, error) {
	groups := map[string]map[string]map[int32]int64{} // topic -> group -> partition -> offset
	names, err := sn.groupNames(ctx)
	if err != nil || len(names) == 0 {
		return groups, err
	}
	want := map[string]bool{}
	for _, t := range topics {
		want[t] = true
	}
	fetched := sn.adm.FetchManyOffsets(ctx, names...)
	var denied []string
	for _, g := range names {
		r, ok := fetched[g]
		if !ok {
			continue
		}
		if r.Err != nil {
			if isAuthErr(r.Err) {
				denied = append(denied, g)
				continue
			}
			if errors.Is(r.Err, kerr.GroupIDNotFound) {
				continue // deleted since the listing
			}
			return nil, fmt.Errorf("fetch the committed offsets of group %s: %w", g, r.Err)
		}
		if addGroupOffsets(groups, g, r.Fetched, want) {
			denied = append(denied, g)
		}
	}
	if len(denied) > 0 {
		sn.warnOnce("fetch", "cannot read the committed offsets of some consumer groups (missing ACL: DESCRIBE on the group and the topic); snapshots leave them out",
			"groups", strings.Join(dedupe(denied), ","))
	}
	return groups, nil
}

// groupNames lists the consumer groups a snapshot records, sorted. When
// the ACLs refuse the listing it warns once and returns what it got.
func (sn *snapshotter) groupNames(ctx context.Context) ([]string, error) {
	listed, err := sn.adm.ListGroups(ctx)
	switch {
	case isAuthErr(err):
		sn.warnOnce("list", "cannot list consumer groups (missing ACL: DESCRIBE on the cluster or the groups); snapshots hold the end offsets only", "err", err)
	case err != nil:
		return nil, fmt.Errorf("list consumer groups: %w", err)
	}
	var names []string
	for _, g := range listed {
		if sn.snapshotGroup(g) {
			names = append(names, g.Group)
		}
	}
	sort.Strings(names)
	return names, nil
}

// addGroupOffsets adds group g's committed offsets on the wanted topics
// to groups; it reports whether the ACLs hid some of them.
func addGroupOffsets(groups map[string]map[string]map[int32]int64, g string, fetched kadm.OffsetResponses, want map[string]bool) (denied bool) {
	fetched.Each(func(o kadm.OffsetResponse) {
		if !want[o.Topic] {
			return
		}
		if o.Err != nil {
			if isAuthErr(o.Err) {
				denied = true
			}
			return
		}
		if o.At < 0 {
			return
		}
		if groups[o.Topic] == nil {
			groups[o.Topic] = map[string]map[int32]int64{}
		}
		if groups[o.Topic][g] == nil {
			groups[o.Topic][g] = map[int32]int64{}
		}
		groups[o.Topic][g][o.Partition] = o.At
	})
	return denied
}

// topicSnapshot is topic t's snapshot at now from the end offsets and the
// groups' offsets on t (those of partitions with an end offset); nil when
// ends has no partition of t (the topic was deleted).
func topicSnapshot(t string, now int64, ends kadm.ListedOffsets, groups map[string]map[int32]int64) (*index.Snapshot, error) {
	snap := &index.Snapshot{Topic: t, TimeMS: now, EndOffsets: map[int32]int64{}, Groups: map[string]map[int32]int64{}}
	var perr error
	ends.Each(func(o kadm.ListedOffset) {
		if o.Topic != t {
			return
		}
		if o.Err != nil {
			perr = fmt.Errorf("end offset of %s[%d]: %w", t, o.Partition, o.Err)
			return
		}
		snap.EndOffsets[o.Partition] = o.Offset
	})
	if perr != nil {
		return nil, perr
	}
	if len(snap.EndOffsets) == 0 {
		return nil, nil
	}
	for g, offs := range groups {
		keep := map[int32]int64{}
		for p, o := range offs {
			if _, ok := snap.EndOffsets[p]; ok {
				keep[p] = o
			}
		}
		if len(keep) > 0 {
			snap.Groups[g] = keep
		}
	}
	return snap, nil
}

func dedupe(ss []string) []string {
	sort.Strings(ss)
	out := ss[:0]
	for i, s := range ss {
		if i == 0 || s != ss[i-1] {
			out = append(out, s)
		}
	}
	return out
}

// sameOffsets tells two snapshots of a topic that record the same offsets.
func sameOffsets(a, b *index.Snapshot) bool {
	if a == nil || b == nil || !maps.Equal(a.EndOffsets, b.EndOffsets) || len(a.Groups) != len(b.Groups) {
		return false
	}
	for g, o := range a.Groups {
		if bo, ok := b.Groups[g]; !ok || !maps.Equal(o, bo) {
			return false
		}
	}
	return true
}

// write stores snap unless it records what the last snapshot of this
// writer for the topic recorded.
func (sn *snapshotter) write(ctx context.Context, snap *index.Snapshot) error {
	prefix := sn.ids.prefix(sn.cfg.IndexPrefix, snap.Topic) // the topic's generation's
	if !sn.loaded[snap.Topic] {
		names, err := index.ListSnapshots(ctx, sn.store, prefix, snap.Topic)
		if err != nil {
			return err
		}
		for _, n := range names {
			if n.Writer == sn.writer {
				prev, err := index.ReadSnapshot(ctx, sn.store, n.Key)
				if err != nil {
					return err
				}
				sn.last[snap.Topic] = prev
				break
			}
		}
		sn.loaded[snap.Topic] = true
	}
	if sameOffsets(sn.last[snap.Topic], snap) {
		return nil
	}
	b, err := index.EncodeSnapshot(snap)
	if err != nil {
		return err
	}
	key := index.SnapshotKey(prefix, snap.Topic, snap.TimeMS, sn.writer)
	if err := putObject(ctx, sn.store, key, b); err != nil {
		return fmt.Errorf("write snapshot: %w", err)
	}
	sn.last[snap.Topic] = snap
	sn.tally.snapshot()
	sn.log.Debug("group offset snapshot written", "key", key, "groups", len(snap.Groups))
	return nil
}
