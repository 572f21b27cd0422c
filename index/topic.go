package index

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"maps"
	"sort"

	"github.com/kafkas3/kafkas3/s3store"
)

// topicsDir is the folder under the prefix that holds topic descriptions.
const topicsDir = "topics/"

// TopicVersion is the version of the topic description format.
const TopicVersion = 1

// MaxTopicObjectSize bounds the bytes DecodeTopic reads from one object.
const MaxTopicObjectSize = 1 << 20

// Topic is the description of one archived topic as the sink found it at
// TimeMs: its partition count, replication factor and every config set on
// the topic itself (DescribeConfigs source DYNAMIC_TOPIC_CONFIG), not the
// broker defaults. The source creates missing targets from it.
type Topic struct {
	V                 int               `json:"v"`
	Topic             string            `json:"topic"`
	TimeMs            int64             `json:"time_ms"`
	Partitions        int32             `json:"partitions"`
	ReplicationFactor int16             `json:"replication_factor"`
	Configs           map[string]string `json:"configs"`
	// TopicID is the topic's Kafka id (FormatTopicID); omitted in
	// descriptions written before ids were recorded.
	TopicID string `json:"topic_id,omitempty"`
	// Generation counts the topics of this name the archive holds: 1
	// (omitted, as 0) for the first, n for the one archived after the
	// topic was recreated n-1 times (kafkas3.topic.recreated=new-generation).
	// Generation n >= 2 lives under its own roots (GenerationPrefix,
	// GenerationTopicsDir).
	Generation int `json:"generation,omitempty"`
}

// Validate checks the rules DecodeTopic enforces.
func (t *Topic) Validate() error {
	switch {
	case t.V != TopicVersion:
		return fmt.Errorf("version %d, want %d", t.V, TopicVersion)
	case validTopic(t.Topic) != nil:
		return fmt.Errorf("topic: %w", validTopic(t.Topic))
	case t.TimeMs < 0:
		return fmt.Errorf("time_ms %d is negative", t.TimeMs)
	case t.Partitions < 1:
		return fmt.Errorf("partitions %d, want at least 1", t.Partitions)
	case t.ReplicationFactor < 1:
		return fmt.Errorf("replication_factor %d, want at least 1", t.ReplicationFactor)
	case t.Configs == nil:
		return errors.New("configs is missing (an empty object when the topic sets none)")
	}
	for k := range t.Configs {
		if k == "" {
			return errors.New("configs has an empty key")
		}
	}
	if t.TopicID != "" {
		if _, err := ParseTopicID(t.TopicID); err != nil {
			return fmt.Errorf("topic_id: %w", err)
		}
	}
	if t.Generation < 0 || t.Generation == 1 {
		return fmt.Errorf("generation %d: omitted for the first, at least 2 after", t.Generation)
	}
	return nil
}

// Gen returns the description's generation: 1 when Generation is omitted.
func (t *Topic) Gen() int { return max(t.Generation, 1) }

// Same reports whether t and o describe the same topic state: partition
// count, replication factor and configs (the time is not compared).
func (t *Topic) Same(o *Topic) bool {
	return t.Topic == o.Topic && t.Partitions == o.Partitions && t.ReplicationFactor == o.ReplicationFactor &&
		maps.Equal(t.Configs, o.Configs) && t.TopicID == o.TopicID && t.Gen() == o.Gen()
}

// ConfigKeys returns the keys of t.Configs, sorted.
func (t *Topic) ConfigKeys() []string {
	ks := make([]string, 0, len(t.Configs))
	for k := range t.Configs {
		ks = append(ks, k)
	}
	sort.Strings(ks)
	return ks
}

// TopicsDir returns the folder of every topic description under prefix:
// "<prefix>topics/".
func TopicsDir(prefix string) string { return prefix + topicsDir }

// TopicKey returns the key of the description of topic taken at timeMs by
// writer (WriterOf of the sink's group):
// "<prefix>topics/<topic>/<time ms, 20 digits>-<writer>.json". Keys of one
// topic sort in time order.
func TopicKey(prefix, topic string, timeMs int64, writer string) string {
	return TopicsDir(prefix) + topic + "/" + stamp(timeMs, writer) + ".json"
}

// TopicKeyName is what a topic description key names.
type TopicKeyName struct {
	Topic  string
	TimeMs int64
	Writer string // "" when the key names none
}

// ParseTopicKey takes a topic description key apart (the inverse of
// TopicKey). Its error wraps ErrMalformed and quotes the key.
func ParseTopicKey(key string) (TopicKeyName, error) {
	bad := func(why string) (TopicKeyName, error) {
		return TopicKeyName{}, fmt.Errorf("%w: %q is not a topic description key (<prefix>topics/<topic>/<time ms, 20 digits>-<writer>.json): %s",
			ErrMalformed, key, why)
	}
	_, topic, ms, writer, why := parseTopicStamp(key, topicsDir, ".json")
	if why != "" {
		return bad(why)
	}
	return TopicKeyName{Topic: topic, TimeMs: ms, Writer: writer}, nil
}

// EncodeTopic returns the bytes of a topic description: one JSON object
// with the fields in a fixed order and the configs sorted by key, then
// "\n". The same description always gives the same bytes.
func EncodeTopic(t *Topic) ([]byte, error) {
	if err := t.Validate(); err != nil {
		return nil, fmt.Errorf("%w: topic description of %q: %w", ErrMalformed, t.Topic, err)
	}
	b, err := json.Marshal(t) // encoding/json sorts map keys
	if err != nil {
		return nil, fmt.Errorf("topic description of %q: %w", t.Topic, err)
	}
	return append(b, '\n'), nil
}

// DecodeTopic reads the topic description stored at key. It refuses
// unknown fields, a description that breaks a rule of Validate, one of
// another topic or time than the key names, data after the object and a
// missing final newline. Errors wrap ErrMalformed and name the key.
func DecodeTopic(key string, r io.Reader) (*Topic, error) {
	k, err := ParseTopicKey(key)
	if err != nil {
		return nil, err
	}
	data, err := io.ReadAll(io.LimitReader(r, MaxTopicObjectSize+1))
	if err != nil {
		return nil, fmt.Errorf("topic description %q: %w", key, err)
	}
	bad := func(format string, args ...any) (*Topic, error) {
		return nil, fmt.Errorf("%w: topic description %q: %s", ErrMalformed, key, fmt.Sprintf(format, args...))
	}
	if len(data) > MaxTopicObjectSize {
		return bad("larger than %d bytes", MaxTopicObjectSize)
	}
	body, ok := bytes.CutSuffix(data, []byte("\n"))
	if !ok {
		return bad("does not end in a newline")
	}
	dec := json.NewDecoder(bytes.NewReader(body))
	dec.DisallowUnknownFields()
	var t Topic
	if err := dec.Decode(&t); err != nil {
		return bad("%v", err)
	}
	if _, err := dec.Token(); !errors.Is(err, io.EOF) {
		return bad("has data after the description")
	}
	if err := t.Validate(); err != nil {
		return bad("%v", err)
	}
	if t.Topic != k.Topic || t.TimeMs != k.TimeMs {
		return bad("describes topic %q at %d, the key names topic %q at %d", t.Topic, t.TimeMs, k.Topic, k.TimeMs)
	}
	return &t, nil
}

// LatestTopic returns the latest description of topic under prefix: the
// one with the highest time (the last key, for equal times). It returns
// nil and no error when there is none (an archive written before kafkas3
// recorded topics, or by Confluent's connector). A description that does
// not decode fails, naming its key.
func LatestTopic(ctx context.Context, st Store, prefix, topic string) (*Topic, error) {
	return TopicAt(ctx, st, prefix, topic, -1)
}

// TopicAt returns the description of topic as it was at atMs (Unix ms):
// the latest one taken at or before atMs, or, when every description is
// later, the earliest one (its TimeMs tells). A negative atMs returns the
// latest of all (LatestTopic). No description gives nil and no error.
func TopicAt(ctx context.Context, st Store, prefix, topic string, atMs int64) (*Topic, error) {
	dir := TopicsDir(prefix) + topic + "/"
	type cand struct {
		key string
		ms  int64
	}
	var before, earliest *cand
	err := st.List(ctx, dir, func(info s3store.ObjectInfo) error {
		k, err := ParseTopicKey(info.Key)
		if err != nil {
			return err
		}
		if k.Topic != topic {
			return nil
		}
		c := &cand{info.Key, k.TimeMs}
		if atMs < 0 || k.TimeMs <= atMs {
			if before == nil || c.ms > before.ms || (c.ms == before.ms && c.key > before.key) {
				before = c
			}
		}
		if earliest == nil || c.ms < earliest.ms || (c.ms == earliest.ms && c.key < earliest.key) {
			earliest = c
		}
		return nil
	})
	if err != nil {
		return nil, fmt.Errorf("list topic descriptions under %q: %w", dir, err)
	}
	pick := before
	if pick == nil {
		pick = earliest
	}
	if pick == nil {
		return nil, nil
	}
	rc, err := st.Open(ctx, pick.key)
	if err != nil {
		return nil, fmt.Errorf("open topic description %q: %w", pick.key, err)
	}
	defer rc.Close()
	return DecodeTopic(pick.key, rc)
}
