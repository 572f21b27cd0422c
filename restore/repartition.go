package restore

import (
	"context"
	"fmt"
	"slices"
	"strings"

	"github.com/kafkas3/kafkas3/format"
	"github.com/twmb/franz-go/pkg/kadm"
)

// Repartitioning: restoring into another partition count
//
// Without Config.Repartition a source partition is restored into the
// target partition of the same number (exactly once by the prefix rule,
// partition.go). With it, each source partition's record stream fans out
// over the target's N partitions:
//
//   - RepartitionMurmur2 puts a record with a key where Kafka's Java
//     producer (its default partitioner) would put it on N partitions:
//     toPositive(murmur2(key)) % N (Murmur2, pinned against Kafka's own
//     Utils.murmur2). A record without a key goes round robin, like
//     RepartitionRoundRobin.
//   - RepartitionRoundRobin ignores keys: the record of index i (in the
//     source partition's stream) goes to (source partition + i) % N.
//
// Both are a function of the archive and N only, so a re-run places every
// record where the first run did. Records of one source partition with the
// same key land in one target partition in their source order; records of
// several source partitions are interleaved as they come.
//
// Exactly once cannot rest on the prefix rule any more (one stream writes
// to several partitions, so no partition's end offset says how far the
// stream got). Each stream is produced instead by a transactional producer
// of its own (txn.go), whose transactional.id is derived from the target
// topic and the source partition, the same on every run. Each transaction
// carries a bounded batch of the stream's records and commits, in the same
// transaction, the stream's position (how many of its records are done)
// into the stream's position group (PositionGroup). Either both land or
// neither: a re-run's producer fences the crashed one, whose open
// transaction the broker aborts, reads the committed positions and goes on
// from there. Consumers of the target must read with
// isolation.level=read_committed to see each record once: a
// read_uncommitted consumer also sees the records of aborted transactions.

// Repartition is Config.Repartition: how records are placed on a target
// whose partition count may differ from the archive's.
type Repartition string

// The placements of --repartition.
const (
	// RepartitionNone keeps each record in its source partition.
	RepartitionNone Repartition = ""
	// RepartitionMurmur2 places keyed records as Kafka's default
	// partitioner does, records without a key round robin.
	RepartitionMurmur2 Repartition = "murmur2"
	// RepartitionRoundRobin places every record round robin.
	RepartitionRoundRobin Repartition = "roundrobin"
)

// ParseRepartition parses --repartition.
func ParseRepartition(s string) (Repartition, error) {
	switch r := Repartition(strings.ToLower(strings.TrimSpace(s))); r {
	case RepartitionNone, RepartitionMurmur2, RepartitionRoundRobin:
		return r, nil
	}
	return "", fmt.Errorf("%q is not a placement: want %s or %s", s, RepartitionMurmur2, RepartitionRoundRobin)
}

// Place returns the target partition, of n, of the record of index idx in
// source partition src's stream.
func (m Repartition) Place(key []byte, src int32, idx int64, n int32) int32 {
	if m == RepartitionMurmur2 && key != nil {
		return int32(Murmur2(key)&0x7fffffff) % n
	}
	return int32((int64(src) + idx) % int64(n))
}

// Murmur2 is Kafka's org.apache.kafka.common.utils.Utils.murmur2 (seed
// 0x9747b28c), the hash of its default partitioner, as an unsigned 32-bit
// value (Java's int, bit for bit).
func Murmur2(data []byte) uint32 {
	const (
		seed = 0x9747b28c
		m    = 0x5bd1e995
		r    = 24
	)
	n := len(data)
	h := uint32(seed) ^ uint32(n)
	for i := 0; i+4 <= n; i += 4 {
		k := uint32(data[i]) | uint32(data[i+1])<<8 | uint32(data[i+2])<<16 | uint32(data[i+3])<<24
		k *= m
		k ^= k >> r
		k *= m
		h *= m
		h ^= k
	}
	tail := data[n&^3:]
	switch len(tail) {
	case 3:
		h ^= uint32(tail[2]) << 16
		fallthrough
	case 2:
		h ^= uint32(tail[1]) << 8
		fallthrough
	case 1:
		h ^= uint32(tail[0])
		h *= m
	}
	h ^= h >> 13
	h *= m
	h ^= h >> 15
	return h
}

// place returns the target partition of rec, the stream's record of index
// idx (the stream's own partition without repartitioning).
func (s *stream) place(rec *format.Record, idx int64) int32 {
	if s.tx == nil {
		return s.p
	}
	return s.r.cfg.Repartition.Place(rec.Key, s.p, idx, s.tx.partitions)
}

// checkRepartition refuses what repartitioning cannot do.
func checkRepartition(cfg *Config) error {
	if cfg.Repartition == RepartitionNone {
		if cfg.Partitions != 0 {
			return fmt.Errorf("%w: --partitions %d sets the partition count of a target restored with --repartition; "+
				"without it each record goes to its archived partition", ErrInvalidConfig, cfg.Partitions)
		}
		return nil
	}
	switch {
	case cfg.Partitions < 0:
		return fmt.Errorf("%w: --partitions %d: want a positive count", ErrInvalidConfig, cfg.Partitions)
	case cfg.Partitions > 0 && !cfg.CreateTopics:
		return fmt.Errorf("%w: --partitions sets the count of targets --create-topics creates; pass --create-topics", ErrInvalidConfig)
	case cfg.RestoreGroups:
		return fmt.Errorf("%w: --restore-groups with --repartition: a group's offsets count records of one source partition, "+
			"and repartitioned records of several source partitions interleave in each target partition, so no target offset "+
			"means \"every record before this one was consumed\"; restore the groups' offsets by hand (e.g. by timestamp)", ErrInvalidConfig)
	case cfg.Follow:
		return fmt.Errorf("%w: --follow with --repartition is not supported yet: a repartitioning restore runs once "+
			"(re-run it to restore what is new, exactly once)", ErrInvalidConfig)
	}
	return nil
}

// repartTarget is what a repartitioning stream knows of its target.
type repartTarget struct {
	partitions int32
	topicID    [16]byte
}

// prepareRepartition checks t's target marker (markers, from the marker
// group) and commits it, then returns a job per source partition; each
// stream reads its own position when it starts (openTxn). A target
// restored without --repartition (the prefix rule's markers), or with
// another placement, partition count, archive or source, is refused.
func (r *Restorer) prepareRepartition(ctx context.Context, adm *kadm.Client, t *TopicPlan, markers map[int32]marker) ([]job, error) {
	var details kadm.TopicDetails
	err := r.retry(ctx, fmt.Sprintf("describe target topic %q", t.Target), nil, func(ctx context.Context) error {
		var err error
		if details, err = adm.ListTopics(ctx, t.Target); err == nil {
			err = details.Error()
		}
		return err
	})
	if err != nil {
		return nil, fmt.Errorf("describe target topic %q: %w", t.Target, err)
	}
	rt := &repartTarget{partitions: int32(len(details[t.Target].Partitions)), topicID: details[t.Target].ID}
	cutoff := r.expiryCutoff(t.Target, markers)
	if err := r.checkRepartitionMarker(t, markers, rt.partitions, cutoff); err != nil {
		return nil, err
	}
	group := MarkerGroup(t.Target)
	var os kadm.Offsets
	os.Add(kadm.Offset{Topic: t.Target, Partition: 0, At: 0, LeaderEpoch: -1,
		Metadata: encodeMarkerMeta(marker{Archive: r.cfg.Identity, Source: t.Source, ExpiredBefore: cutoff,
			Placement: r.cfg.Repartition, Partitions: rt.partitions})})
	if err := r.retry(ctx, fmt.Sprintf("write the restore marker to group %q", group), nil, func(ctx context.Context) error {
		return adm.CommitAllOffsets(ctx, group, os)
	}); err != nil {
		return nil, fmt.Errorf("write the restore marker of %q to group %q: %w", t.Target, group, err)
	}
	jobs := make([]job, 0, len(t.Parts))
	for _, pp := range t.Parts {
		jobs = append(jobs, job{topic: t, part: pp, trust: true, filtered: r.cfg.Filter.Active() || cutoff > 0,
			expiredBefore: cutoff, repart: rt})
	}
	return jobs, nil
}

// checkRepartitionMarker refuses a target whose marker group shows
// another restore than this repartitioning one, or one that began with
// another --skip-expired choice (cutoff: this run's, the marker's when it
// has one): the streams, and so the positions, would shift.
func (r *Restorer) checkRepartitionMarker(t *TopicPlan, markers map[int32]marker, partitions int32, cutoff int64) error {
	group := MarkerGroup(t.Target)
	for p, m := range markers {
		if m.Placement == RepartitionNone {
			return fmt.Errorf("%w: %s/%d holds a restore of topic %q without --repartition (marker group %q, from offset %d); "+
				"a repartitioning restore into it would add every record again: run it without --repartition, "+
				"or restore into another topic", ErrMarkerMismatch, t.Target, p, m.Source, group, m.Start)
		}
		if m.Archive != r.cfg.Identity || m.Source != t.Source || m.Placement != r.cfg.Repartition || m.Partitions != partitions {
			return fmt.Errorf("%w: %q holds a restore of topic %q of archive %q placed by %s on %d partitions (marker group %q), "+
				"this run restores topic %q of archive %q placed by %s on %d partitions; run it as before, or restore into another topic",
				ErrMarkerMismatch, t.Target, m.Source, m.Archive, m.Placement, m.Partitions, group,
				t.Source, r.cfg.Identity, r.cfg.Repartition, partitions)
		}
		if (m.ExpiredBefore > 0) != (cutoff > 0) {
			return fmt.Errorf("%w: the restore into %q began %s --skip-expired (marker group %q); "+
				"re-run it as it began, or restore into another topic", ErrInvalidConfig, t.Target, withOrWithout(m.ExpiredBefore > 0), group)
		}
	}
	return nil
}

func withOrWithout(with bool) string {
	if with {
		return "with"
	}
	return "without"
}

// refuseRepartitioned refuses, without --repartition, a target a
// repartitioning restore wrote (its marker says so).
func refuseRepartitioned(target string, markers map[int32]marker) error {
	for _, m := range markers {
		if m.Placement != RepartitionNone {
			return fmt.Errorf("%w: %q holds a restore of topic %q placed by --repartition %s on %d partitions (marker group %q); "+
				"run it with --repartition %s again, or restore into another topic",
				ErrMarkerMismatch, target, m.Source, m.Placement, m.Partitions, MarkerGroup(target), m.Placement)
		}
	}
	return nil
}

// checkPartitionsFlag refuses an existing target whose partition count is
// not Config.Partitions (--partitions), naming both.
func (r *Restorer) checkPartitionsFlag(names, missing []string, details kadm.TopicDetails) error {
	if r.cfg.Partitions <= 0 {
		return nil
	}
	for _, name := range names {
		if slices.Contains(missing, name) {
			continue
		}
		if have := int32(len(details[name].Partitions)); have != r.cfg.Partitions {
			return fmt.Errorf("%w: --partitions %d, but the target %q exists with %d partitions; "+
				"leave out --partitions to restore into its %d partitions, or restore into another topic",
				ErrInvalidConfig, r.cfg.Partitions, name, have, have)
		}
	}
	return nil
}

// repartitionText is the plan's line on repartitioning.
func (p *Plan) repartitionText() string {
	how := "murmur2: a record with a key goes where Kafka's producer puts it, one without a key round robin"
	if p.Repartition == RepartitionRoundRobin {
		how = "roundrobin: keys ignored"
	}
	onto := "each target's partitions (a target --create-topics creates gets the archive's count)"
	if p.RepartitionPartitions > 0 {
		onto = fmt.Sprintf("%d partitions (--partitions; an existing target with another count stops the restore)", p.RepartitionPartitions)
	}
	return fmt.Sprintf("repartition: %s, onto %s; each source partition exactly once by a transactional producer: read the targets with isolation.level=read_committed", how, onto)
}
