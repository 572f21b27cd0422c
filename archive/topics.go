package archive

import (
	"context"
	"errors"
	"fmt"
	"regexp"
	"sort"
	"strings"
	"sync"
	"time"

	"github.com/kafkas3/kafkas3/index"
	"github.com/twmb/franz-go/pkg/kadm"
	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kmsg"
)

// DefaultTopicCheckInterval is how often a sink that runs until stopped
// describes the archived topics again (Config.TopicCheckInterval zero).
const DefaultTopicCheckInterval = 5 * time.Minute

// topicRecorder records each archived topic's description (index.Topic)
// in the index prefix when it differs from the latest one in the store.
// It lives as long as the Sink, so sessions share what it last saw.
type topicRecorder struct {
	mu     sync.Mutex
	latest map[string]*index.Topic // per topic: the latest description known to be stored
	warned bool                    // the missing-ACL warning was given
}

// recordTopics describes the archived topics and stores every description
// that differs from the latest one stored. It never stops archiving: a
// broker that refuses DescribeConfigs or Describe (missing ACLs) gives one
// warning per sink, any other failure a warning per check; the next check
// tries again. When only some topics are refused, the others are still
// recorded (the refused ones are named in the warning).
func (ss *session) recordTopics(ctx context.Context, adm *kadm.Client) {
	s := ss.s
	if s.cfg.IndexPrefix == "" {
		return
	}
	n, err := s.recordTopics(ctx, adm)
	if n > 0 {
		s.log.Info("recorded topic descriptions", "topics", n)
	}
	if err == nil || ctx.Err() != nil {
		return
	}
	if isDenied(err) {
		s.topicRec.mu.Lock()
		warned := s.topicRec.warned
		s.topicRec.warned = true
		s.topicRec.mu.Unlock()
		if !warned {
			s.log.Warn("cannot record the archived topics' partition counts and configs (grant DescribeConfigs and Describe on the topics); archiving goes on, but a restore cannot recreate the topics' configs from this archive",
				"err", err)
		}
		return
	}
	if !s.outageOf("record the topic descriptions", err) {
		s.log.Warn("cannot record the archived topics' partition counts and configs; will try again", "err", err)
	}
}

// topicLoop records the topic descriptions every interval until ctx ends.
func (ss *session) topicLoop(ctx context.Context, adm *kadm.Client) {
	every := ss.s.cfg.TopicCheckInterval
	if every <= 0 {
		every = DefaultTopicCheckInterval
	}
	t := time.NewTicker(every)
	defer t.Stop()
	for {
		select {
		case <-ctx.Done():
			return
		case <-t.C:
			ss.recordTopics(ctx, adm)
			if ss.s.ids.anySuspect() {
				ss.fail(errRecheck) // a topic id changed: the next session checks
				return
			}
		}
	}
}

// recordTopics returns how many descriptions it stored.
func (s *Sink) recordTopics(ctx context.Context, adm *kadm.Client) (int, error) {
	topics, err := s.archivedTopics(ctx, adm)
	if err != nil || len(topics) == 0 {
		return 0, err
	}
	now := time.Now().UnixMilli()
	descs, err := describeTopics(ctx, adm, topics, now)
	var denied error
	if isDenied(err) && len(topics) > 1 {
		// One topic refused fails the whole request: describe the
		// topics one by one, record those allowed, report the others.
		descs, err = nil, nil
		var refused []string
		for _, t := range topics {
			d, derr := describeTopics(ctx, adm, []string{t}, now)
			switch {
			case isDenied(derr):
				refused = append(refused, t)
				denied = derr
			case derr != nil:
				return 0, derr
			default:
				descs = append(descs, d...)
			}
		}
		if denied != nil {
			denied = fmt.Errorf("topics %s: %w", strings.Join(refused, ", "), denied)
		}
	}
	if err != nil {
		return 0, err
	}
	n := 0
	for _, d := range descs {
		if s.ids.changed(d) {
			s.ids.markSuspect(d.Topic, "its topic id changed to "+d.TopicID)
		}
		if !s.ids.describes(d) {
			continue // stopped, or another topic than the one archived
		}
		prev, err := s.topicRec.stored(ctx, s.store, s.cfg.IndexPrefix, d.Topic)
		if err != nil {
			return n, err
		}
		if prev != nil && prev.Same(d) {
			continue
		}
		if err := s.putGeneration(ctx, d); err != nil {
			return n, err
		}
		n++
	}
	return n, denied
}

// stored returns the latest description of topic stored, from the store
// on first use.
func (r *topicRecorder) stored(ctx context.Context, st index.Store, prefix, topic string) (*index.Topic, error) {
	r.mu.Lock()
	prev, ok := r.latest[topic]
	r.mu.Unlock()
	if ok {
		return prev, nil
	}
	prev, err := index.LatestTopic(ctx, st, prefix, topic)
	if err != nil {
		return nil, err
	}
	r.mu.Lock()
	defer r.mu.Unlock()
	if r.latest == nil {
		r.latest = map[string]*index.Topic{}
	}
	r.latest[topic] = prev
	return prev, nil
}

// isDenied tells a refusal for missing ACLs.
func isDenied(err error) bool {
	var ae *kadm.AuthError
	return errors.As(err, &ae) || errors.Is(err, kerr.TopicAuthorizationFailed) || errors.Is(err, kerr.ClusterAuthorizationFailed)
}

// putTopicAt stores the description d under prefix.
func (s *Sink) putTopicAt(ctx context.Context, prefix string, d *index.Topic, writer string) error {
	data, err := index.EncodeTopic(d)
	if err != nil {
		return err
	}
	key := index.TopicKey(prefix, d.Topic, d.TimeMs, writer)
	if err := putObject(ctx, s.store, key, data); err != nil {
		return err
	}
	s.log.Debug("topic description stored", "key", key, "partitions", d.Partitions, "replication_factor", d.ReplicationFactor, "configs", len(d.Configs))
	return nil
}

// archivedTopics returns the topics the sink archives, sorted: the topics
// setting, or the existing topics matching topics.regex.
func (s *Sink) archivedTopics(ctx context.Context, adm *kadm.Client) ([]string, error) {
	if s.cfg.TopicsRegex == "" {
		ts := append([]string(nil), s.cfg.Topics...)
		sort.Strings(ts)
		return ts, nil
	}
	re, err := regexp.Compile("^(?:" + s.cfg.TopicsRegex + ")$")
	if err != nil {
		return nil, fmt.Errorf("topics.regex: %w", err)
	}
	all, err := adm.ListTopics(ctx)
	if err != nil {
		return nil, fmt.Errorf("list topics: %w", err)
	}
	var ts []string
	for _, t := range all.Names() {
		if re.MatchString(t) {
			ts = append(ts, t)
		}
	}
	return ts, nil
}

// describeTopics returns the description of each topic that exists, at
// timeMs: its partition count, its replication factor (the most replicas
// of any partition) and the configs whose source is the topic itself
// (DYNAMIC_TOPIC_CONFIG). Broker defaults (DEFAULT_CONFIG), broker configs
// (STATIC_BROKER_CONFIG, DYNAMIC_BROKER_CONFIG,
// DYNAMIC_DEFAULT_BROKER_CONFIG) and sensitive values are left out.
func describeTopics(ctx context.Context, adm *kadm.Client, topics []string, timeMs int64) ([]*index.Topic, error) {
	md, err := adm.Metadata(ctx, topics...)
	if err != nil {
		return nil, fmt.Errorf("describe topics: %w", err)
	}
	rcs, err := adm.DescribeTopicConfigs(ctx, topics...)
	if err != nil {
		return nil, fmt.Errorf("describe topic configs: %w", err)
	}
	var out []*index.Topic
	for _, t := range topics {
		d, ok := md.Topics[t]
		if !ok || errors.Is(d.Err, kerr.UnknownTopicOrPartition) {
			continue // deleted since: nothing to record
		}
		if d.Err != nil {
			return nil, fmt.Errorf("describe topic %s: %w", t, d.Err)
		}
		rc, err := rcs.On(t, nil)
		if err != nil {
			return nil, fmt.Errorf("describe configs of topic %s: no answer", t)
		}
		if errors.Is(rc.Err, kerr.UnknownTopicOrPartition) {
			continue
		}
		if rc.Err != nil {
			return nil, fmt.Errorf("describe configs of topic %s: %w", t, rc.Err)
		}
		desc := &index.Topic{V: index.TopicVersion, Topic: t, TimeMs: timeMs, Partitions: int32(len(d.Partitions)), Configs: map[string]string{},
			TopicID: index.FormatTopicID(d.ID)}
		for _, p := range d.Partitions {
			desc.ReplicationFactor = max(desc.ReplicationFactor, int16(len(p.Replicas)))
		}
		for _, c := range rc.Configs {
			if c.Source == kmsg.ConfigSourceDynamicTopicConfig && c.Value != nil && !c.Sensitive {
				desc.Configs[c.Key] = *c.Value
			}
		}
		if desc.Partitions == 0 || desc.ReplicationFactor == 0 {
			continue // metadata not complete yet; the next check records it
		}
		out = append(out, desc)
	}
	return out, nil
}
