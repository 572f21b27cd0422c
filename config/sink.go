package config

import (
	"fmt"
	"slices"
	"strings"
	"time"

	"github.com/kafkas3/kafkas3/partition"
)

// Canonical values of the choice keys, as SinkOptions reports them.
const (
	FormatJSON    = "json"
	FormatBytes   = "bytes"
	FormatAvro    = "avro"
	FormatParquet = "parquet"

	StoreS3    = "s3"
	StoreLocal = "local"

	PartitionerDefault = "default"

	CompressionNone = "none"
	CompressionGzip = "gzip"

	NullValuesFail   = "fail"
	NullValuesIgnore = "ignore"
	NullValuesWrite  = "write"

	IsolationReadCommitted   = "read_committed"
	IsolationReadUncommitted = "read_uncommitted"
)

// SinkOptions is the sink's configuration, typed and fully validated. It
// holds primitives only; cmd builds formats, stores and clients from it.
// The embedded groups are shared with SourceOptions.
type SinkOptions struct {
	Name    string
	GroupID string
	// GroupInstanceID is group.instance.id (static membership); "" for none.
	GroupInstanceID string
	// SessionTimeout is session.timeout.ms.
	SessionTimeout time.Duration
	// IsolationLevel is IsolationReadCommitted or IsolationReadUncommitted:
	// consumer.override.isolation.level when set, else isolation.level.
	IsolationLevel string
	KafkaSettings

	// What to read: exactly one of Topics and TopicsRegex is set.
	// TopicsRegex must match a whole topic name, as in Kafka Connect; it
	// compiles as `^(?:` + TopicsRegex + `)$`.
	Topics      []string
	TopicsRegex string

	LayoutSettings

	// Rotation. A zero duration means disabled. Location is nil when
	// timezone is unset.
	FlushSize              int64
	RotateInterval         time.Duration
	RotateScheduleInterval time.Duration
	Timezone               string
	Location               *time.Location
	Locale                 string

	StoreSettings
	FormatSettings
	IndexSettings
	// SnapshotInterval is offsets.snapshot.interval.ms (0: no snapshots);
	// GroupsRegex is groups.regex ("" for every group).
	SnapshotInterval time.Duration
	GroupsRegex      string

	NullValues string // NullValuesFail, NullValuesIgnore or NullValuesWrite

	// StoreKeys and StoreHeaders write parallel .keys and .headers
	// objects, in KeysFormat and HeadersFormat (FormatJSON, FormatBytes
	// (keys only), FormatAvro or FormatParquet).
	StoreKeys     bool
	StoreHeaders  bool
	KeysFormat    string
	HeadersFormat string
	// TombstonePartition is tombstone.encoded.partition.
	TombstonePartition  string
	SchemaCompatibility string // NONE, BACKWARD, FORWARD or FULL

	// ValueConverter and KeyConverter decode values and keys; a Class of ""
	// means the raw bytes. Avro and Parquet need a schema-aware value
	// converter.
	ValueConverter ConverterSettings
	KeyConverter   ConverterSettings

	// Connect's error handling.
	ErrorsTolerance      string // none or all
	DLQTopic             string // errors.deadletterqueue.topic.name
	DLQReplicationFactor int16  // errors.deadletterqueue.topic.replication.factor
	DLQContextHeaders    bool   // errors.deadletterqueue.context.headers.enable
	ErrorsLog            bool   // errors.log.enable
}

// Sink types and validates the settings for `kafkas3 sink`. It reports
// every problem it finds at once; each wraps ErrConfig and names the key,
// the value and what is allowed.
func (s *Settings) Sink() (*SinkOptions, error) {
	if s.command != Sink {
		return nil, fmt.Errorf("Settings.Sink: settings were loaded for %s", s.command)
	}
	p := newParser(s)
	o := &SinkOptions{}

	p.connectorClass([]string{"io.confluent.connect.s3.S3SinkConnector", "S3SinkConnector"},
		"is not the S3 sink connector; want io.confluent.connect.s3.S3SinkConnector (kafkas3 sink replaces it)")

	o.Name = p.requiredString(p.k.Name)
	o.KafkaSettings = p.kafka()
	o.GroupID = p.str(p.k.GroupID)
	if o.GroupID == "" && o.Name != "" {
		o.GroupID = "connect-" + o.Name
	}
	o.GroupInstanceID = p.str(p.k.GroupInstanceID)
	o.SessionTimeout = p.millis(p.k.SessionTimeoutMs)
	o.IsolationLevel = p.choice(p.k.IsolationLevel)
	if v := p.choice(p.k.ConsumerOverrideIsolationLevel); v != "" {
		o.IsolationLevel = v
	}
	o.Topics, o.TopicsRegex = p.topicSelection(true)
	o.LayoutSettings = p.layout()

	o.FlushSize = p.int(p.k.FlushSize)
	p.need(p.k.FlushSize, "")
	o.RotateInterval = p.millis(p.k.RotateIntervalMs)
	o.RotateScheduleInterval = p.millis(p.k.RotateScheduleIntervalMs)
	o.Timezone, o.Location = p.timezone()
	if o.RotateScheduleInterval > 0 && o.Timezone == "" {
		p.missing(p.k.Timezone, "rotate.schedule.interval.ms is set")
	}
	o.Locale = p.locale()

	o.StoreSettings = p.store()
	o.FormatSettings = p.format("")
	o.IndexSettings = p.index(o.LayoutSettings)
	o.SnapshotInterval = p.millis(p.k.OffsetsSnapshotIntervalMs)
	o.GroupsRegex = p.regex(p.k.GroupsRegex)
	o.NullValues = p.choice(p.k.BehaviorOnNullValues)
	o.StoreKeys = p.bool(p.k.StoreKafkaKeys)
	o.StoreHeaders = p.bool(p.k.StoreKafkaHeaders)
	o.KeysFormat = p.choice(p.k.KeysFormatClass)
	if o.KeysFormat == "" {
		o.KeysFormat = FormatAvro
	}
	if v := p.text(p.k.HeadersFormatClass); v != "" && p.k.FormatClass.Is(v, FormatBytes) {
		p.fail(p.k.HeadersFormatClass, v, "cannot hold headers (an array of {key, value}); want avro, parquet or json")
	} else if o.HeadersFormat = p.choice(p.k.HeadersFormatClass); o.HeadersFormat == "" {
		o.HeadersFormat = FormatAvro
	}
	o.TombstonePartition = p.tombstonePartition(o.DirectoryDelim)
	if o.NullValues == NullValuesWrite && !o.StoreKeys && p.ok(p.k.StoreKafkaKeys) {
		p.fail(p.k.BehaviorOnNullValues, "write", "needs store.kafka.keys=true (a tombstone is archived as its key)")
	}
	o.Envelope = p.envelope(o)
	o.SchemaCompatibility = p.choice(p.k.SchemaCompatibility)
	o.ValueConverter = p.converter(p.k.Converter(false))
	o.KeyConverter = p.converter(p.k.Converter(true))
	const schemaful = "io.confluent.connect.avro.AvroConverter, or org.apache.kafka.connect.json.JsonConverter with value.converter.schemas.enable=true"
	if (o.Format == FormatAvro || o.Format == FormatParquet) && !o.Envelope && !o.ValueConverter.Schemaful() && p.ok(p.k.ValueConverter) {
		if o.ValueConverter.Class == "" {
			p.missing(p.k.ValueConverter, "format.class "+o.Format+" needs values with a schema: set "+schemaful)
		} else {
			p.fail(p.k.ValueConverter, p.text(p.k.ValueConverter), "gives values without a schema, but format.class "+o.Format+" needs one; want "+schemaful)
		}
	}
	o.ErrorsTolerance = p.choice(p.k.ErrorsTolerance)
	o.DLQTopic = p.str(p.k.ErrorsDeadletterqueueTopicName)
	if o.DLQTopic != "" {
		switch {
		case partition.ValidateTopic(o.DLQTopic) != nil:
			p.fail(p.k.ErrorsDeadletterqueueTopicName, o.DLQTopic, "is not a Kafka topic name; "+topicNameRule)
		case o.ErrorsTolerance != "all" && p.ok(p.k.ErrorsTolerance):
			p.fail(p.k.ErrorsDeadletterqueueTopicName, o.DLQTopic, "needs errors.tolerance=all (with none the sink stops at the first bad record)")
		case slices.Contains(o.Topics, o.DLQTopic):
			p.fail(p.k.ErrorsDeadletterqueueTopicName, o.DLQTopic, "is one of the archived topics (topics)")
		}
	}
	o.DLQReplicationFactor = int16(p.int(p.k.ErrorsDeadletterqueueTopicReplicationFactor))
	o.DLQContextHeaders = p.bool(p.k.ErrorsDeadletterqueueContextHeadersEnable)
	o.ErrorsLog = p.bool(p.k.ErrorsLogEnable)

	if err := problems(append(append([]error(nil), s.problems...), p.errs...)); err != nil {
		return nil, err
	}
	return o, nil
}

// validLocale accepts Java-style locale tags: en, en_US, de-CH, sr_Latn_RS:
// a language of 2 to 8 letters, then parts of 1 to 8 letters or digits
// joined by '_' or '-'.
func validLocale(s string) bool {
	parts := strings.FieldsFunc(s, func(r rune) bool { return r == '_' || r == '-' })
	if len(parts) == 0 || strings.Count(s, "_")+strings.Count(s, "-") != len(parts)-1 {
		return false
	}
	for i, part := range parts {
		if len(part) < 1 || len(part) > 8 || (i == 0 && len(part) < 2) {
			return false
		}
		for _, r := range part {
			letter := (r >= 'a' && r <= 'z') || (r >= 'A' && r <= 'Z')
			if !letter && (i == 0 || r < '0' || r > '9') {
				return false
			}
		}
	}
	return true
}
