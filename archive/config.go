package archive

import (
	"context"
	"errors"
	"fmt"
	"regexp"
	"time"

	"github.com/kafkas3/kafkas3/format"
	"github.com/kafkas3/kafkas3/outage"
	"github.com/kafkas3/kafkas3/partition"
	"github.com/twmb/franz-go/pkg/kgo"
)

// NullBehavior is behavior.on.null.values.
type NullBehavior string

// Null value behaviours.
const (
	NullFail   NullBehavior = "fail"
	NullIgnore NullBehavior = "ignore"
	// NullWrite writes a tombstone's key (and headers, when stored) to
	// .keys (.headers) objects under Config.TombstonePartition, with no
	// value object. It needs Config.KeysFormat.
	NullWrite NullBehavior = "write"
)

// DefaultTombstonePartition is tombstone.encoded.partition's default.
const DefaultTombstonePartition = "tombstone"

// PartFormat is how the parallel .keys or .headers objects of
// store.kafka.keys and store.kafka.headers are written.
type PartFormat struct {
	// Format writes the objects; its Extension follows ".keys" or
	// ".headers" in the object key.
	Format format.Format
	// Kind is Format's kind: format.NewKeyPart and format.NewHeadersPart
	// build the records of the objects for it.
	Kind format.Kind
}

// Compatibility is schema.compatibility: what a value schema that differs
// from the open file's schema does.
type Compatibility string

// Schema compatibility modes, as Confluent's storage connectors define them.
const (
	// CompatNone rotates on any different schema.
	CompatNone Compatibility = "NONE"
	// CompatBackward rotates on a newer schema version and projects records
	// of an older version to the file's (newer) schema.
	CompatBackward Compatibility = "BACKWARD"
	// CompatForward rotates on an older schema version and projects records
	// of a newer version to the file's (older) schema.
	CompatForward Compatibility = "FORWARD"
	// CompatFull behaves as CompatBackward when writing.
	CompatFull Compatibility = "FULL"
)

// Tolerance is errors.tolerance.
type Tolerance string

// Error tolerances.
const (
	// ToleranceNone stops the sink at the first bad record.
	ToleranceNone Tolerance = "none"
	// ToleranceAll skips bad records, sending them to the dead letter
	// queue when one is configured.
	ToleranceAll Tolerance = "all"
)

// Converter decodes a record's key or value the way a Kafka Connect
// converter does. It returns nil and no error for null data and for
// schemaless converters. An error caused by the record's bytes must match
// ErrBadData (see BadData): the record is then a bad record, handled by
// ErrorsConfig. Any other error (a registry that cannot be reached) is
// transient: the sink drops its open files and resumes from the committed
// offsets after a backoff. The returned Typed may alias data.
type Converter interface {
	Convert(ctx context.Context, topic string, isKey bool, data []byte) (*format.Typed, error)
}

// ErrorsConfig is Connect's error handling: errors.tolerance,
// errors.deadletterqueue.* and errors.log.enable.
type ErrorsConfig struct {
	Tolerance Tolerance // "" means none
	// DLQTopic receives bad records when Tolerance is all; "" skips them.
	DLQTopic string
	// DLQReplicationFactor is used when the sink creates a missing DLQTopic;
	// 0 means 3 (Connect's default), capped at the number of brokers.
	DLQReplicationFactor int16
	// DLQContextHeaders adds Connect's __connect.errors.* headers.
	DLQContextHeaders bool
	// Log logs every bad record (topic, partition, offset, error).
	Log bool
}

// Config is the sink's typed configuration, built and validated by cmd.
type Config struct {
	Name        string   // connector name
	Brokers     []string // bootstrap.servers
	GroupID     string   // group.id, default connect-<name>
	Topics      []string // topics (exactly one of Topics, TopicsRegex)
	TopicsRegex string   // topics.regex

	FlushSize              int           // flush.size (>0)
	RotateInterval         time.Duration // rotate.interval.ms on record time; 0 = off
	RotateScheduleInterval time.Duration // rotate.schedule.interval.ms on the wall clock; 0 = off
	Timezone               *time.Location
	// MaxOpenPartitions is kafkas3.max.open.partitions: the most encoded
	// partitions one Kafka partition has open files in; a record for
	// another one rotates first. 0 means DefaultMaxOpenPartitions.
	MaxOpenPartitions int

	Keys        partition.KeyConfig
	Format      format.Format // already wrapped with compression
	Partitioner partition.Partitioner
	NullValues  NullBehavior

	// KeysFormat, when set (store.kafka.keys), writes each record's key to
	// a "<base>.keys<ext>" object next to its value object, record for
	// record; a null key is kept as null (see format.KeyPart), except in the
	// bytes format, where it is a bad record.
	KeysFormat *PartFormat
	// HeadersFormat, when set (store.kafka.headers), does the same with the
	// headers in "<base>.headers<ext>"; a record without headers gets an
	// empty list.
	HeadersFormat *PartFormat
	// Envelope is store.envelope: Format (built with format.Config.Envelope)
	// writes every record whole, so a null value is an ordinary record
	// (NullValues is not consulted) and KeysFormat and HeadersFormat must be
	// nil (the envelope holds the key and the headers).
	Envelope bool
	// TombstonePartition is tombstone.encoded.partition: the encoded
	// partition of tombstones with NullWrite; "" means "tombstone".
	TombstonePartition string

	// IndexPrefix, when not empty (kafkas3.index.enabled), writes the
	// archive index under it (package index): for each rotation of a
	// partition, after its objects and before its offset becomes
	// committable, one index object listing them with their offsets,
	// timestamps, sizes and checksums. It must lie outside Keys.TopicsDir
	// (cmd checks that).
	IndexPrefix string
	// IndexSHA256 is kafkas3.index.digest=sha256: each object's index
	// entry gives its SHA-256 as well as its CRC32C (always computed with
	// IndexPrefix: the checksum the store verifies and keeps). SHA-256
	// costs about 0.7 CPU s per GB written.
	IndexSHA256 bool
	// CheckpointInterval is kafkas3.index.checkpoint.interval: with
	// IndexPrefix, the sink writes a partition's checkpoint
	// (checkpoint.Write) after this many index objects, once their offsets
	// are committed, at a partition's first commit of a run when it has no
	// checkpoint, and at the end of Once. 0 writes none but the start
	// checkpoints (checkpoint.Begin), which are written whatever it is.
	CheckpointInterval int
	// TopicCheckInterval is how often a sink without Once describes the
	// archived topics again (at start always) and records, under
	// IndexPrefix, each description that changed (index.Topic); zero means
	// DefaultTopicCheckInterval. No IndexPrefix records nothing.
	TopicCheckInterval time.Duration
	// NewGeneration is kafkas3.topic.recreated=new-generation: a topic
	// deleted and created again (a new topic id) is archived as the next
	// generation (index.GenerationTopicsDir, index.GenerationPrefix)
	// instead of stopped. Needs IndexPrefix (the ids are kept there).
	NewGeneration bool

	// SnapshotInterval is offsets.snapshot.interval.ms: with IndexPrefix
	// set and SnapshotInterval > 0, the sink writes a group offset snapshot
	// (index.Snapshot) of every archived topic at this interval and, with
	// Once, at the end of the run after the final commit. 0 writes none.
	SnapshotInterval time.Duration
	// GroupsRegex is groups.regex: only the consumer groups whose whole
	// name matches are snapshotted; "" means every group. The sink's own
	// group and restore marker groups (RestoreGroupPrefix) never are.
	GroupsRegex string

	// ValueConverter and KeyConverter, when set, decode each record's value
	// and key before it is written (Record.ValueTyped, Record.KeyTyped).
	// ValueConverterClass and KeyConverterClass are their Connect class
	// names, for the dead letter queue's context headers.
	ValueConverter Converter
	// Schemas, with IndexPrefix, fetches the schemas that archived keys
	// and values name in Confluent's wire format, to record them in the
	// archive (schemarec.go); nil when no registry is configured (ids are
	// then counted, not recorded).
	Schemas             SchemaFetcher
	KeyConverter        Converter
	ValueConverterClass string
	KeyConverterClass   string
	// Compatibility is schema.compatibility; "" means NONE.
	Compatibility Compatibility
	// Errors is the bad-record handling.
	Errors ErrorsConfig

	// Once archives up to the end offsets seen at start (the last stable
	// offsets: records of a transaction still open wait for the next
	// run; the high watermarks with ReadUncommitted), completes the final
	// files, commits and returns.
	Once bool
	// OnceTimeout bounds, with Once, how long a dependency (the brokers,
	// the store, the registry) may stay down without a success before the
	// run gives up with an *outage.UnreachableError naming it;
	// 0 means DefaultOnceTimeout. Without Once the sink retries for ever.
	OnceTimeout time.Duration
	// Health receives the state of each dependency as the sink sees it
	// (down with the cause, up again); nil: none.
	Health outage.Setter

	// ReadUncommitted is isolation.level=read_uncommitted: the sink also
	// archives the records of aborted (and still open) transactions, as
	// Kafka Connect's consumer does by default. The default (false) reads
	// committed records only (read_committed).
	ReadUncommitted bool

	// Tagging is s3.object.tagging: tags on the complete objects.
	Tagging TaggingConfig

	// KafkaOpts are extra client options (security, client id, ...).
	KafkaOpts []kgo.Opt

	// Observer, when set, is told what the sink does (metrics).
	Observer Observer
}

// settle checks the invariants the sink relies on, in order, and fills
// the defaults of the fields left zero. Errors start with "archive:".
func (c *Config) settle() error {
	for _, check := range []func() error{c.settleInput, c.settleRecords, c.settleParts, c.settleModes} {
		if err := check(); err != nil {
			return err
		}
	}
	return nil
}

// settleInput checks what the sink reads and how it cuts files.
func (c *Config) settleInput() error {
	if len(c.Brokers) == 0 {
		return errors.New("archive: no brokers (bootstrap.servers)")
	}
	if (len(c.Topics) == 0) == (c.TopicsRegex == "") {
		return errors.New("archive: set exactly one of topics and topics.regex")
	}
	if c.FlushSize <= 0 {
		return errors.New("archive: flush.size must be > 0")
	}
	if c.Format == nil || c.Partitioner == nil {
		return errors.New("archive: format and partitioner are required")
	}
	if c.RotateScheduleInterval > 0 && c.Timezone == nil {
		return errors.New("archive: rotate.schedule.interval.ms requires timezone")
	}
	if c.GroupID == "" {
		c.GroupID = DefaultGroupID(c.Name)
	}
	if c.Observer == nil {
		c.Observer = nopObserver{}
	}
	if c.MaxOpenPartitions < 0 {
		return errors.New("archive: kafkas3.max.open.partitions must be > 0")
	}
	if c.MaxOpenPartitions == 0 {
		c.MaxOpenPartitions = DefaultMaxOpenPartitions
	}
	return nil
}

// DefaultMaxOpenPartitions is kafkas3.max.open.partitions' default.
const DefaultMaxOpenPartitions = 32

// DefaultGroupID is the consumer group of a sink named name when group.id
// is unset: connect-<name>, Kafka Connect's group for a sink connector of
// that name, so kafkas3 resumes where the connector stopped.
func DefaultGroupID(name string) string { return "connect-" + name }

// settleRecords checks what becomes of keys, headers and null values.
func (c *Config) settleRecords() error {
	if c.Envelope && (c.KeysFormat != nil || c.HeadersFormat != nil) {
		return errors.New("archive: store.envelope holds keys and headers itself: unset store.kafka.keys and store.kafka.headers")
	}
	switch c.NullValues {
	case "":
		c.NullValues = NullFail
	case NullFail, NullIgnore:
	case NullWrite:
		if c.KeysFormat == nil {
			return errors.New("archive: behavior.on.null.values=write needs store.kafka.keys=true")
		}
	default:
		return fmt.Errorf("archive: behavior.on.null.values %q; want fail, ignore or write", c.NullValues)
	}
	if c.TombstonePartition == "" {
		c.TombstonePartition = DefaultTombstonePartition
	}
	return nil
}

// settleParts checks that the formats of the .keys and .headers objects
// can hold keys and headers (format.NewKeyPart, format.NewHeadersPart).
func (c *Config) settleParts() error {
	if pf := c.KeysFormat; pf != nil {
		if pf.Format == nil {
			return errors.New("archive: store.kafka.keys without a keys format")
		}
		if _, err := format.NewKeyPart(pf.Kind, false); err != nil {
			return fmt.Errorf("archive: %w", err)
		}
	}
	if pf := c.HeadersFormat; pf != nil {
		if pf.Format == nil {
			return errors.New("archive: store.kafka.headers without a headers format")
		}
		if _, err := format.NewHeadersPart(pf.Kind); err != nil {
			return fmt.Errorf("archive: %w", err)
		}
	}
	return nil
}

// settleModes checks schema.compatibility, the error handling and the
// offset snapshots.
func (c *Config) settleModes() error {
	switch c.Compatibility {
	case "":
		c.Compatibility = CompatNone
	case CompatNone, CompatBackward, CompatForward, CompatFull:
	default:
		return fmt.Errorf("archive: schema.compatibility %q; want NONE, BACKWARD, FORWARD or FULL", c.Compatibility)
	}
	switch c.Errors.Tolerance {
	case "":
		c.Errors.Tolerance = ToleranceNone
	case ToleranceNone, ToleranceAll:
	default:
		return fmt.Errorf("archive: errors.tolerance %q; want none or all", c.Errors.Tolerance)
	}
	if c.GroupsRegex != "" {
		if _, err := regexp.Compile("^(?:" + c.GroupsRegex + ")$"); err != nil {
			return fmt.Errorf("archive: groups.regex: %w", err)
		}
	}
	if c.SnapshotInterval < 0 {
		return errors.New("archive: offsets.snapshot.interval.ms must be >= 0")
	}
	return nil
}
