package archive

import (
	"cmp"
	"context"
	"errors"
	"fmt"
	"slices"
	"sort"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/kafkas3/kafkas3/index"
	"github.com/kafkas3/kafkas3/s3store"
	"github.com/twmb/franz-go/pkg/kadm"
)

// This file holds topic identity: which Kafka topic (by its id, KIP-516)
// and which generation of it each archived topic name stands for, and
// what the sink does when a topic was deleted and created again
// (kafkas3.topic.recreated). A recreated topic starts again at offset 0,
// so Confluent's object names (<topic>+<partition>+<first offset>) would
// collide with the archived ones: the sink never writes it where the old
// one lies.

// RecreatedError stops the archiving of one topic: it was deleted and
// created again (or its offsets went back under the same id), and
// kafkas3.topic.recreated=fail (or going on would overwrite archived
// objects). Its message names the topic, both ids, the archived offsets
// and what to do.
type RecreatedError struct {
	Topic string
	Msg   string
}

func (e *RecreatedError) Error() string { return e.Msg }

// errRecheck ends a session so that the next one checks the topics'
// identity again (prepare) with a fresh client: a topic id changed, a
// fetch answered UNKNOWN_TOPIC_ID, or a partition's offsets went back.
var errRecheck = errors.New("a topic changed identity: checking again")

// topicIdentity is what the sink knows of one archived topic name.
type topicIdentity struct {
	id      string // the Kafka topic id archived (index.FormatTopicID); "" unknown
	gen     int    // the generation archived: 1 for the first
	stopped *RecreatedError
}

// identities holds every archived topic's identity for the Sink's life,
// so sessions share it.
type identities struct {
	mu     sync.Mutex
	topics map[string]*topicIdentity
	// suspect holds the topics whose offsets went back in a session
	// (worker.process), with what was seen, for the next check.
	suspect map[string]string
}

// of returns the identity of topic; nil before the first check.
func (ids *identities) of(topic string) *topicIdentity {
	ids.mu.Lock()
	defer ids.mu.Unlock()
	return ids.topics[topic]
}

// prefix returns the index prefix of topic's generation under prefix.
func (ids *identities) prefix(prefix, topic string) string {
	ids.mu.Lock()
	defer ids.mu.Unlock()
	if ti := ids.topics[topic]; ti != nil {
		return index.GenerationPrefix(prefix, ti.gen)
	}
	return prefix
}

// stopped returns the topics whose archiving is stopped, sorted.
func (ids *identities) stopped() []string {
	ids.mu.Lock()
	defer ids.mu.Unlock()
	var out []string
	for t, ti := range ids.topics {
		if ti.stopped != nil {
			out = append(out, t)
		}
	}
	sort.Strings(out)
	return out
}

// without returns topics less the stopped ones, in a new slice.
func (ids *identities) without(topics []string) []string {
	stopped := ids.stopped()
	out := make([]string, 0, len(topics))
	for _, t := range topics {
		if !slices.Contains(stopped, t) {
			out = append(out, t)
		}
	}
	return out
}

// err returns the errors of the stopped topics, joined; nil when none.
func (ids *identities) err() error {
	var errs []error
	for _, t := range ids.stopped() {
		errs = append(errs, ids.of(t).stopped)
	}
	return errors.Join(errs...)
}

// onlyStopped reports whether err is only the stopped topics' errors
// (identities.err), what a run that otherwise ended cleanly returns.
func onlyStopped(err error) bool {
	errs := []error{err}
	if j, ok := err.(interface{ Unwrap() []error }); ok {
		errs = j.Unwrap()
	}
	for _, e := range errs {
		if _, ok := e.(*RecreatedError); !ok {
			return false
		}
	}
	return err != nil
}

// markSuspect notes that topic's offsets went back (what says how).
func (ids *identities) markSuspect(topic, what string) {
	ids.mu.Lock()
	defer ids.mu.Unlock()
	if ids.suspect == nil {
		ids.suspect = map[string]string{}
	}
	ids.suspect[topic] = what
}

// anySuspect reports whether a topic is suspect.
func (ids *identities) anySuspect() bool {
	ids.mu.Lock()
	defer ids.mu.Unlock()
	return len(ids.suspect) > 0
}

// wentBackError is a worker's: its partition's offsets went back
// (a record below the committed offset it started from, or not after the
// last one), which a recreated topic or a truncated log does. The session
// ends and the next one checks the topic's identity.
type wentBackError struct {
	topic     string
	partition int32
	expected  int64 // the offset the worker expected at least
	got       int64
}

func (e *wentBackError) Error() string {
	return fmt.Sprintf("topic %s partition %d: offsets went back: offset %d came where offset %d or later was expected",
		e.topic, e.partition, e.got, e.expected)
}

// Is makes a wentBackError an errRecheck.
func (e *wentBackError) Is(target error) bool { return target == errRecheck }

// topicFacts is what the brokers say of one topic at a check.
type topicFacts struct {
	id        string
	committed map[int32]int64 // the group's committed offsets
	ends      map[int32]int64 // the high watermarks
	starts    map[int32]int64 // the log start offsets
	// startEpochs are the leader epochs ListOffsets gave with starts
	// (-1 unknown).
	startEpochs map[int32]int32
}

// checkIdentity compares each archived topic's Kafka id with the one the
// archive holds (the latest topic description) and the group's committed
// offsets with the topics' end offsets, at the start of every session.
// A topic recreated (another id; or, in an archive written before ids
// were recorded, a committed offset above the end offset) is stopped,
// or, with NewGeneration, archived as its next generation. Offsets that
// went back under the same id stop the topic in either mode.
func (ss *session) checkIdentity(ctx context.Context, adm *kadm.Client) error {
	s := ss.s
	if s.cfg.IndexPrefix == "" {
		return nil
	}
	topics, err := s.archivedTopics(ctx, adm)
	if err != nil || len(topics) == 0 {
		return kafkaError(err)
	}
	facts, err := s.topicFacts(ctx, adm, topics)
	if err != nil {
		return kafkaError(err)
	}
	for _, t := range topics {
		f, ok := facts[t]
		if !ok {
			continue // deleted since: the consumer finds nothing to fetch
		}
		if err := s.checkTopic(ctx, adm, t, f); err != nil {
			return err
		}
	}
	return nil
}

// topicFacts asks the brokers for the topics' ids, end and start offsets,
// and the group's committed offsets.
func (s *Sink) topicFacts(ctx context.Context, adm *kadm.Client, topics []string) (map[string]*topicFacts, error) {
	md, err := adm.Metadata(ctx, topics...)
	if err != nil {
		return nil, fmt.Errorf("kafka metadata: %w", err)
	}
	ends, err := adm.ListEndOffsets(ctx, topics...)
	if err != nil {
		return nil, fmt.Errorf("list end offsets: %w", err)
	}
	starts, err := adm.ListStartOffsets(ctx, topics...)
	if err != nil {
		return nil, fmt.Errorf("list start offsets: %w", err)
	}
	committed, err := fetchCommitted(ctx, adm, s.cfg.GroupID)
	if err != nil {
		return nil, fmt.Errorf("fetch committed offsets of group %s: %w", s.cfg.GroupID, err)
	}
	out := map[string]*topicFacts{}
	for _, t := range topics {
		d, ok := md.Topics[t]
		if !ok || d.Err != nil {
			continue
		}
		f := &topicFacts{id: index.FormatTopicID(d.ID), committed: map[int32]int64{}, ends: map[int32]int64{}, starts: map[int32]int64{}, startEpochs: map[int32]int32{}}
		for p := range d.Partitions {
			if o, ok := ends.Lookup(t, p); ok && o.Err == nil {
				f.ends[p] = o.Offset
			}
			if o, ok := starts.Lookup(t, p); ok && o.Err == nil {
				f.starts[p], f.startEpochs[p] = o.Offset, o.LeaderEpoch
			}
			if c, ok := committed.Lookup(t, p); ok && c.Err == nil && c.At >= 0 {
				f.committed[p] = c.At
			}
		}
		out[t] = f
	}
	return out, nil
}

// archivedIdentity returns the identity the archive records for topic
// (its latest description), loading it on first use.
func (s *Sink) archivedIdentity(ctx context.Context, topic string) (*topicIdentity, error) {
	if ti := s.ids.of(topic); ti != nil {
		return ti, nil
	}
	d, err := s.topicRec.stored(ctx, s.store, s.cfg.IndexPrefix, topic)
	if err != nil {
		return nil, storeError(err)
	}
	ti := &topicIdentity{gen: 1}
	if d != nil {
		ti.id, ti.gen = d.TopicID, d.Gen()
	}
	s.ids.mu.Lock()
	defer s.ids.mu.Unlock()
	if s.ids.topics == nil {
		s.ids.topics = map[string]*topicIdentity{}
	}
	s.ids.topics[topic] = ti
	return ti, nil
}

// checkTopic decides about one topic (checkIdentity).
func (s *Sink) checkTopic(ctx context.Context, adm *kadm.Client, topic string, f *topicFacts) error {
	ti, err := s.archivedIdentity(ctx, topic)
	if err != nil || ti.stopped != nil {
		return err
	}
	s.ids.mu.Lock()
	suspect := s.ids.suspect[topic]
	delete(s.ids.suspect, topic)
	s.ids.mu.Unlock()
	back := wentBack(f)
	switch {
	case ti.id != "" && f.id != "" && ti.id != f.id:
		return s.recreated(ctx, adm, topic, ti, f, fmt.Sprintf("the archive holds topic id %s (generation %d), Kafka now has topic id %s", ti.id, ti.gen, f.id))
	case back != "" && ti.id == "":
		return s.recreated(ctx, adm, topic, ti, f, back+
			"; the archive was written before kafkas3 recorded topic ids, so this is all it can tell: the topic is taken as created again (now topic id "+orUnknown(f.id)+")")
	case back != "" || suspect != "":
		why := cmp.Or(back, suspect)
		s.stop(topic, ti, fmt.Sprintf("topic %s: %s, under the same topic id %s: the log was truncated (an unclean leader election) or the group's offsets were moved back; "+
			"archiving it would overwrite archived objects, so archiving of %s is stopped (archived: %s). "+
			"Check the topic, then move group %s's offsets to where archiving should go on (kafka-consumer-groups --reset-offsets) or archive into another topics.dir",
			topic, why, orUnknown(f.id), topic, s.archivedRange(ctx, topic, ti.gen, f), s.cfg.GroupID))
	case ti.id == "" && f.id != "":
		// The first run that knows the id records it (recordTopics
		// writes the description, which now differs).
		s.ids.mu.Lock()
		ti.id = f.id
		s.ids.mu.Unlock()
	}
	return nil
}

// wentBack says how the group's committed offsets lie beyond the topic's
// end offsets ("" when none does): what a recreated topic or a truncated
// log shows without ids.
func wentBack(f *topicFacts) string {
	for _, p := range partitionsOf(f.committed) {
		if e, ok := f.ends[p]; ok && f.committed[p] > e {
			return fmt.Sprintf("the sink's group committed offset %d for partition %d, above the topic's end offset %d", f.committed[p], p, e)
		}
	}
	return ""
}

// archivedRange names the offsets the archive's index holds for topic:
// per partition, the offsets below the highest commit of its index
// objects (from their keys alone: one listing, no object read), or what
// the group committed when the index has nothing.
func (s *Sink) archivedRange(ctx context.Context, topic string, gen int, f *topicFacts) string {
	high := map[int32]int64{}
	err := s.store.List(ctx, index.TopicDir(index.GenerationPrefix(s.cfg.IndexPrefix, gen), topic), func(info s3store.ObjectInfo) error {
		if k, err := index.ParseKey(info.Key); err == nil && k.Topic == topic {
			high[k.Partition] = max(high[k.Partition], k.Commit)
		}
		return nil
	})
	if err != nil || len(high) == 0 {
		high = f.committed
	}
	if len(high) == 0 {
		return "nothing yet"
	}
	var parts []string
	for _, p := range partitionsOf(high) {
		parts = append(parts, fmt.Sprintf("partition %d up to offset %d", p, high[p]-1))
	}
	return strings.Join(parts, ", ")
}

// genFlag is the source's flag that addresses generation gen ("" for 1).
func genFlag(gen int) string {
	if gen <= 1 {
		return ""
	}
	return " --generation " + strconv.Itoa(gen)
}

func orUnknown(id string) string {
	if id == "" {
		return "unknown"
	}
	return id
}

// stop stops the archiving of topic with msg, logged as an error.
func (s *Sink) stop(topic string, ti *topicIdentity, msg string) {
	s.ids.mu.Lock()
	ti.stopped = &RecreatedError{Topic: topic, Msg: msg}
	s.ids.mu.Unlock()
	s.log.Error("archiving of a topic stopped", "topic", topic, "err", msg)
}

// recreated handles a topic deleted and created again: stopped
// (kafkas3.topic.recreated=fail), or archived as the next generation.
func (s *Sink) recreated(ctx context.Context, adm *kadm.Client, topic string, ti *topicIdentity, f *topicFacts, why string) error {
	if !s.cfg.NewGeneration {
		s.stop(topic, ti, fmt.Sprintf("topic %s was deleted and created again: %s. Archiving of %s is stopped so that the new topic, whose offsets start again, "+
			"never overwrites the archived objects (archived, generation %d: %s). The archive stays restorable (kafkas3 source --topics %s%s). "+
			"To archive the new topic beside the old one, set kafkas3.topic.recreated=new-generation; or archive it into another topics.dir",
			topic, why, topic, ti.gen, s.archivedRange(ctx, topic, ti.gen, f), topic, genFlag(ti.gen)))
		return nil
	}
	return s.newGeneration(ctx, adm, topic, ti, f, why)
}

// newGeneration starts generation ti.gen+1 of topic: it moves the group's
// committed offsets of the topic to the new topic's start offsets (the
// old ones count offsets of the old topic), then records the new
// generation's description, at the archive's prefix and at the
// generation's own. A crash between the two steps repeats them at the
// next start (nothing was archived in between).
func (s *Sink) newGeneration(ctx context.Context, adm *kadm.Client, topic string, ti *topicIdentity, f *topicFacts, why string) error {
	gen := ti.gen + 1
	os := kadm.Offsets{}
	for p, at := range f.starts {
		// With the start offset's leader epoch, as the consumer's own
		// commits: franz-go starts a partition committed with epoch -1
		// at once but validates the others first (KIP-320), and a fetch
		// sent with the first alone holds the others back for up to
		// fetch.max.wait (5 s) while it waits for records.
		os.Add(kadm.Offset{Topic: topic, Partition: p, At: at, LeaderEpoch: f.startEpochs[p]})
	}
	resp, err := adm.CommitOffsets(ctx, s.cfg.GroupID, os)
	if err == nil {
		err = resp.Error()
	}
	if err != nil {
		return fmt.Errorf("topic %s was deleted and created again (%s); to archive it as generation %d, the sink moves group %s's offsets of it to the new topic's start, which failed "+
			"(stop every other sink of the group first): %w", topic, why, gen, s.cfg.GroupID, err)
	}
	descs, err := describeTopics(ctx, adm, []string{topic}, time.Now().UnixMilli())
	if err == nil && (len(descs) != 1 || descs[0].TopicID != f.id) {
		err = fmt.Errorf("topic %s changed again while it was described", topic)
	}
	if err != nil {
		return kafkaError(fmt.Errorf("describe topic %s for its generation %d: %w", topic, gen, err))
	}
	desc := descs[0]
	desc.Generation = gen
	if err := s.putGeneration(ctx, desc); err != nil {
		return storeError(err)
	}
	s.ids.mu.Lock()
	ti.id, ti.gen = f.id, gen
	s.ids.mu.Unlock()
	s.log.Warn("topic was deleted and created again: archiving the new topic as a new generation beside the old one",
		"topic", topic, "why", why, "generation", gen,
		"topics_dir", index.GenerationTopicsDir(s.cfg.Keys.TopicsDir, gen), "index_prefix", index.GenerationPrefix(s.cfg.IndexPrefix, gen),
		"start_offsets", startsString(f.starts))
	return nil
}

func startsString(m map[int32]int64) string {
	var parts []string
	for _, p := range partitionsOf(m) {
		parts = append(parts, strconv.Itoa(int(p))+":"+strconv.FormatInt(m[p], 10))
	}
	return strings.Join(parts, ",")
}

// putGeneration stores desc at the archive's prefix (where the sink finds
// the current generation) and, for a generation of 2 or more, at the
// generation's own prefix (where its readers find it).
func (s *Sink) putGeneration(ctx context.Context, desc *index.Topic) error {
	writer := index.WriterOf(s.cfg.GroupID)
	if desc.Gen() > 1 {
		if err := s.putTopicAt(ctx, index.GenerationPrefix(s.cfg.IndexPrefix, desc.Gen()), desc, writer); err != nil {
			return err
		}
	}
	if err := s.putTopicAt(ctx, s.cfg.IndexPrefix, desc, writer); err != nil {
		return err
	}
	s.topicRec.mu.Lock()
	if s.topicRec.latest == nil {
		s.topicRec.latest = map[string]*index.Topic{}
	}
	s.topicRec.latest[desc.Topic] = desc
	s.topicRec.mu.Unlock()
	return nil
}

// storeError makes err, a store failure, a *StoreError (retried when
// transient) unless it is one.
func storeError(err error) error {
	var se *StoreError
	if err == nil || errors.As(err, &se) {
		return err
	}
	return &StoreError{Err: err}
}

// genConfig returns the config the workers of topic use: the sink's for
// generation 1, else a copy whose topics.dir and index prefix are the
// generation's.
func (s *Sink) genConfig(topic string) (*Config, string) {
	ti := s.ids.of(topic)
	if ti == nil {
		return &s.cfg, ""
	}
	s.ids.mu.Lock()
	gen, id := ti.gen, ti.id
	s.ids.mu.Unlock()
	if gen <= 1 {
		return &s.cfg, id
	}
	c := s.cfg
	c.Keys.TopicsDir = index.GenerationTopicsDir(s.cfg.Keys.TopicsDir, gen)
	c.IndexPrefix = index.GenerationPrefix(s.cfg.IndexPrefix, gen)
	return &c, id
}

// describes reports whether the description d, just taken, is one to
// record, and gives it the topic's generation: not when the topic's
// archiving is stopped, nor when d's topic id is not the one archived (a
// topic recreated since the last check: the next check decides; topicLoop
// ends the session for it). Before the first check every description is.
func (ids *identities) describes(d *index.Topic) bool {
	ids.mu.Lock()
	defer ids.mu.Unlock()
	ti := ids.topics[d.Topic]
	if ti == nil {
		return true
	}
	if ti.stopped != nil || (ti.id != "" && d.TopicID != "" && d.TopicID != ti.id) {
		return false
	}
	if ti.gen > 1 {
		d.Generation = ti.gen
	}
	return true
}

// changed reports whether d's topic id differs from the one archived for
// its topic (a topic recreated while the sink runs).
func (ids *identities) changed(d *index.Topic) bool {
	ids.mu.Lock()
	defer ids.mu.Unlock()
	ti := ids.topics[d.Topic]
	return ti != nil && ti.stopped == nil && ti.id != "" && d.TopicID != "" && d.TopicID != ti.id
}

// partitionsOf returns the partitions of m, in increasing order.
func partitionsOf(m map[int32]int64) []int32 {
	ps := make([]int32, 0, len(m))
	for p := range m {
		ps = append(ps, p)
	}
	slices.Sort(ps)
	return ps
}
