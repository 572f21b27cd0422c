package restore

import (
	"context"
	"errors"
	"fmt"
	"strconv"
	"strings"

	"github.com/twmb/franz-go/pkg/kadm"
)

// Record sizes and transient errors
//
// Before producing, the targets' max.message.bytes are read
// (DescribeConfigs) and the producer's batches follow them
// (kgo.ProducerBatchMaxBytesFn). A record larger than its target accepts
// (ErrRecordTooLarge) is reported by topic, partition and offset before
// anything is produced: the largest record of each object as the proof's
// read measured it (typed values with their 5-byte frame), or, read once, as
// its index entry records it (max_record_bytes, measured by the sink on
// the record it received, as the archive keeps it: index.RecordSize; an
// estimate where the format rewrites values, as JSON does; entries of an
// older sink have none), and again exactly for each object after it is loaded and before
// any of it is produced (then the run stops at that object's boundary). A
// compacting target's null keys are checked the same way (null_keys, and
// checkNullKeysLoaded).
//
// Admin steps (marker fetch and commit, topic creation and its metadata,
// offsets, config description) retry transient cluster states (transient:
// outage.Transient, that is kerr.IsRetriable, NOT_CONTROLLER, refused or
// broken connections, but not an expired deadline) for
// Config.RetryTimeout (DefaultRetryTimeout, 60 s) each, with a growing
// pause.

// ErrRecordTooLarge is wrapped when an archived record is larger than its
// target topic accepts (max.message.bytes). It is reported, naming the
// topic, partition and offset, before anything is produced.
var ErrRecordTooLarge = errors.New("archived record larger than the target topic accepts")

// defaultMaxMessageBytes is Kafka's max.message.bytes default, used for a
// target whose configs cannot be described.
const defaultMaxMessageBytes = 1048588

// maxBatchBytes is the largest batch the producer builds (franz-go's
// bound).
const maxBatchBytes = 1 << 30

// batchBytes is the producer's per-topic batch limit
// (kgo.ProducerBatchMaxBytesFn): the target's max.message.bytes as
// describeLimits read it, Kafka's default for topics it did not read.
func (r *Restorer) batchBytes(topic string) int32 {
	r.mu.Lock()
	defer r.mu.Unlock()
	if v, ok := r.limits[topic]; ok {
		return v
	}
	return defaultMaxMessageBytes
}

// describeLimits reads the max.message.bytes of the target topics
// (DescribeConfigs: the topic's value, or the broker default it inherits),
// so the producer's batches follow it, whether they compact, and their
// retention by time (expired.go).
func (r *Restorer) describeLimits(ctx context.Context, adm *kadm.Client, topics []*TopicPlan) error {
	names := make([]string, len(topics))
	for i, t := range topics {
		names[i] = t.Target
	}
	var rcs kadm.ResourceConfigs
	err := r.retry(ctx, "describe configs of "+quoteList(names), nil, func(ctx context.Context) error {
		var err error
		rcs, err = adm.DescribeTopicConfigs(ctx, names...)
		if err != nil {
			return err
		}
		for _, rc := range rcs {
			if rc.Err != nil {
				return fmt.Errorf("topic %q: %w", rc.Name, rc.Err)
			}
		}
		return nil
	})
	if err != nil {
		return fmt.Errorf("read max.message.bytes of target topics %s: %w", quoteList(names), err)
	}
	r.mu.Lock()
	defer r.mu.Unlock()
	for _, rc := range rcs {
		r.retention[rc.Name] = retentionOf(rc)
		for _, c := range rc.Configs {
			if c.Key == "cleanup.policy" && c.Value != nil {
				r.compacted[rc.Name] = compacts(*c.Value)
			}
			if c.Key != "max.message.bytes" || c.Value == nil {
				continue
			}
			v, err := strconv.ParseInt(*c.Value, 10, 64)
			if err != nil || v <= 0 {
				return fmt.Errorf("target topic %q: max.message.bytes is %q, want a positive number", rc.Name, *c.Value)
			}
			r.limits[rc.Name] = int32(min(v, maxBatchBytes))
		}
	}
	return nil
}

// checkRecordSizes refuses, before anything is produced, a plan whose
// largest record of an object (as its facts give it) exceeds the
// target's max.message.bytes. It names every such record it knows of:
// the largest of each object.
func (r *Restorer) checkRecordSizes(topics []*TopicPlan) error {
	var bad []string
	for _, t := range topics {
		limit := int64(r.batchBytes(t.Target))
		for _, pp := range t.Parts {
			for _, o := range pp.Objects {
				idx, size := o.largestRecord()
				if size <= limit {
					continue
				}
				bad = append(bad, fmt.Sprintf("%s/%d %s (%d bytes, object %q)", t.Source, pp.Partition,
					recordAt(o, idx), size, o.Key))
			}
		}
		if len(bad) > 0 {
			return fmt.Errorf("%w: target %q has max.message.bytes=%d, and records of the archive are larger (nothing was produced): %s; "+
				"raise max.message.bytes of the target (kafka-configs --alter --add-config max.message.bytes=N) and the brokers' message.max.bytes if needed",
				ErrRecordTooLarge, t.Target, limit, strings.Join(limitList(bad, 20), "; "))
		}
	}
	return nil
}

// ErrCompactedNullKey: an archived record without a key would go to a
// compacted target, which refuses it. It is reported, naming the topic,
// partition, offset and object, before anything is produced.
var ErrCompactedNullKey = errors.New("archived records without a key, and the target topic is compacted")

// compacts reports whether a cleanup.policy value compacts ("compact",
// "compact,delete").
func compacts(policy string) bool {
	for _, p := range strings.Split(policy, ",") {
		if strings.TrimSpace(p) == "compact" {
			return true
		}
	}
	return false
}

// checkNullKeys refuses, before anything is produced (and, for targets
// about to be created, before they are), records without a key bound for
// a target that compacts (compacted): the broker refuses them
// (INVALID_RECORD). It names the first such record of each object.
func (r *Restorer) checkNullKeys(topics []*TopicPlan, compacted func(target string) bool) error {
	for _, t := range topics {
		if !compacted(t.Target) {
			continue
		}
		var bad []string
		var n int64
		for _, pp := range t.Parts {
			for _, o := range pp.Objects {
				keyless, idx := o.keyless()
				if keyless == 0 {
					continue
				}
				n += keyless
				bad = append(bad, fmt.Sprintf("%s/%d %s (object %q)", t.Source, pp.Partition, recordAt(o, idx), o.Key))
			}
		}
		if len(bad) > 0 {
			return fmt.Errorf("%w: target %q compacts (cleanup.policy), and %d archived records have no key (nothing was produced): %s; "+
				"restore from an archive that kept the keys (store.envelope=true or store.kafka.keys=true), or into a topic with cleanup.policy=delete (--topic-config cleanup.policy=delete with --create-topics)",
				ErrCompactedNullKey, t.Target, n, strings.Join(limitList(bad, 20), "; "))
		}
	}
	return nil
}

// checkSize checks a loaded object against its target's limit, with the
// exact sizes of the records as they will be produced, before the first
// of them is.
func (r *Restorer) checkSize(j job, obj Object, facts objectFacts) error {
	limit := int64(r.batchBytes(j.topic.Target))
	if facts.largestSize <= limit {
		return nil
	}
	return fmt.Errorf("%w: %s/%d offset %d is %d bytes (object %q), target %q has max.message.bytes=%d; nothing of the object was produced",
		ErrRecordTooLarge, j.topic.Source, j.part.Partition, offsetAt(obj.Offsets, facts.largestIdx), facts.largestSize, obj.Key, j.topic.Target, limit)
}

// offsetAt returns the source offset of record i of an object whose
// records hold the offsets runs (-1 when out of range).
func offsetAt(runs []offsetRun, i int64) int64 {
	for _, r := range runs {
		if i < r.len() {
			return r.First + i
		}
		i -= r.len()
	}
	return -1
}
