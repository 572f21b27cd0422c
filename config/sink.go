package config

import (
	"fmt"
	"log/slog"
	"time"

	"github.com/kafkas3/kafkas3/archive"
	"github.com/kafkas3/kafkas3/format"
	"github.com/kafkas3/kafkas3/schemas"
	"github.com/twmb/franz-go/pkg/kgo"
)

// SinkConfig is what `kafkas3 sink` runs with, typed and validated: the
// archive's config (everything but Once, a flag) and the store's.
type SinkConfig struct {
	Archive archive.Config
	Store   StoreConfig
	// FormatName is format.class's short name, for the start log line.
	FormatName string
	// LogInterval is kafkas3.log.interval.ms: how often the sink logs its
	// progress line.
	LogInterval time.Duration
}

// Sink types and validates the settings for `kafkas3 sink` and builds the
// archive's format, partitioner, converters and client options. It
// reports every problem of the configuration at once, the load's
// included; each wraps ErrConfig and names the key, the value (unless it
// is a secret) and what is allowed. log is given to the converters.
func (s *Settings) Sink(log *slog.Logger) (*SinkConfig, error) {
	if s.command != Sink {
		return nil, fmt.Errorf("Settings.Sink: settings were loaded for %s", s.command)
	}
	p := newParser(s)
	c := &SinkConfig{}
	a := &c.Archive
	p.connectorClass([]string{"io.confluent.connect.s3.S3SinkConnector", "S3SinkConnector"},
		"is not the S3 sink connector; want io.confluent.connect.s3.S3SinkConnector (kafkas3 sink replaces it)")
	p.sinkKafka(a)
	a.Topics, a.TopicsRegex = p.topics(p.k.Topics), p.regex(p.k.TopicsRegex)
	a.FlushSize = int(p.int(p.k.FlushSize))
	p.need(p.k.FlushSize, "")
	a.RotateInterval = p.millis(p.k.RotateIntervalMs)
	a.RotateScheduleInterval = p.millis(p.k.RotateScheduleIntervalMs)
	a.MaxOpenPartitions = int(p.int(p.k.Kafkas3MaxOpenPartitions))
	c.LogInterval = p.millis(p.k.Kafkas3LogIntervalMs)
	a.Timezone = p.timezone()
	p.locale()
	c.Store = p.store()
	a.Tagging = p.tagging()
	c.FormatName = p.sinkFormats(a)
	p.sinkIndex(a)
	vc, kc := p.k.Converter(false), p.k.Converter(true)
	a.ValueConverter, a.ValueConverterClass = p.sinkConverter(vc, log)
	a.KeyConverter, a.KeyConverterClass = p.sinkConverter(kc, log)
	if cl := p.schemaRegistry(log); cl != nil {
		a.Schemas = schemas.NewFetcher(cl)
	}
	a.Compatibility = archive.Compatibility(p.choice(p.k.SchemaCompatibility))
	a.Errors = archive.ErrorsConfig{
		Tolerance:            archive.Tolerance(p.choice(p.k.ErrorsTolerance)),
		DLQTopic:             p.str(p.k.ErrorsDeadletterqueueTopicName),
		DLQReplicationFactor: int16(p.int(p.k.ErrorsDeadletterqueueTopicReplicationFactor)),
		DLQContextHeaders:    p.bool(p.k.ErrorsDeadletterqueueContextHeadersEnable),
		Log:                  p.bool(p.k.ErrorsLogEnable),
	}
	p.checkRules()
	return c, p.problems()
}

// sinkKafka reads the sink's identity and Kafka client keys. The default
// consumer group, connect-<name>, is Kafka Connect's for a sink of that
// name.
func (p *valueParser) sinkKafka(a *archive.Config) {
	a.Name = p.requiredString(p.k.Name)
	a.Brokers = p.brokers()
	if a.GroupID = p.str(p.k.GroupID); a.GroupID == "" && a.Name != "" {
		a.GroupID = archive.DefaultGroupID(a.Name)
	}
	a.KafkaOpts = p.kafkaOpts()
	if t := p.millis(p.k.SessionTimeoutMs); t > 0 {
		a.KafkaOpts = append(a.KafkaOpts, kgo.SessionTimeout(t))
	}
	if id := p.str(p.k.GroupInstanceID); id != "" {
		a.KafkaOpts = append(a.KafkaOpts, kgo.InstanceID(id))
	}
	level := p.choice(p.k.IsolationLevel)
	if v := p.choice(p.k.ConsumerOverrideIsolationLevel); v != "" {
		level = v
	}
	a.ReadUncommitted = level == "read_uncommitted"
}

// sinkFormats reads the value format, the .keys and .headers formats, the
// envelope and null handling; it returns format.class's short name.
func (p *valueParser) sinkFormats(a *archive.Config) string {
	name := p.choice(p.k.FormatClass)
	p.need(p.k.FormatClass, "")
	a.Partitioner = p.partitioner()
	a.Keys = p.keyLayout()
	a.Envelope = p.bool(p.k.StoreEnvelope)
	a.NullValues = archive.NullBehavior(p.choice(p.k.BehaviorOnNullValues))
	a.TombstonePartition = p.tombstonePartition()
	keysName := p.choice(p.k.KeysFormatClass)
	headersName := p.headersFormat()
	cfg, ok := p.formatConfig()
	if !ok {
		return name
	}
	vcfg := cfg
	spec, _ := formatSpec(name)
	vcfg.Envelope = a.Envelope && spec.HoldsEnvelope() // the envelope rule reports the others
	a.Format = p.newFormat(p.k.FormatClass.Name, vcfg)
	if p.bool(p.k.StoreKafkaKeys) && keysName != "" {
		a.KeysFormat = p.partFormat(p.k.KeysFormatClass.Name, keysName, cfg, true)
	}
	if p.bool(p.k.StoreKafkaHeaders) && headersName != "" {
		a.HeadersFormat = p.partFormat(p.k.HeadersFormatClass.Name, headersName, cfg, false)
	}
	return name
}

// headersFormat reads headers.format.class; bytes (a value format) cannot
// hold headers.
func (p *valueParser) headersFormat() string {
	h := p.k.HeadersFormatClass
	if v := p.text(h); v != "" {
		if e, err := format.Formats().Lookup(v); err == nil && !e.Spec.HoldsHeaders() {
			p.fail(h, v, "cannot hold headers (an array of {key, value}); want "+format.HeadersFormats().OneOf())
			return ""
		}
	}
	return p.choice(h)
}

// partFormat builds the format name of .keys (keys) or .headers objects,
// set by key, with the value format's codecs, bytes and compression
// settings; nil after a problem.
func (p *valueParser) partFormat(key, name string, value format.Config, keys bool) *archive.PartFormat {
	kind, err := format.Lookup(name)
	if err != nil {
		p.add(fmt.Errorf("%w: %s: %w", ErrConfig, key, err))
		return nil
	}
	cfg := value
	cfg.Kind, cfg.Envelope, cfg.JSONNulls = kind, false, keys
	f := p.newFormat(key, cfg)
	if f == nil {
		return nil
	}
	return &archive.PartFormat{Format: f, Kind: kind}
}

// sinkIndex reads the archive index keys: with kafkas3.index.enabled the
// index prefix, the checkpoint, topic check and snapshot intervals and
// groups.regex.
func (p *valueParser) sinkIndex(a *archive.Config) {
	prefix := p.indexPrefix()
	check := p.millis(p.k.Kafkas3TopicsCheckIntervalMs)
	snapshots := p.millis(p.k.OffsetsSnapshotIntervalMs)
	groups := p.regex(p.k.GroupsRegex)
	recreated := p.choice(p.k.Kafkas3TopicRecreated)
	digest := p.choice(p.k.Kafkas3IndexDigest)
	checkpoints := int(p.int(p.k.Kafkas3IndexCheckpointInterval))
	if p.bool(p.k.Kafkas3IndexEnabled) {
		a.IndexSHA256 = digest == "sha256"
		a.IndexPrefix, a.TopicCheckInterval = prefix, check
		a.CheckpointInterval = checkpoints
		a.NewGeneration = recreated == "new-generation"
		a.SnapshotInterval, a.GroupsRegex = snapshots, groups
	}
}
