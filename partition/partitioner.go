package partition

import (
	"errors"
	"fmt"
	"strconv"
	"time"

	"github.com/kafkas3/kafkas3/format"
	"github.com/kafkas3/kafkas3/internal/registry"
)

// KeyPartitionerClass is the Confluent config key that names the partitioner.
const KeyPartitionerClass = "partitioner.class"

// ErrNotSupported is wrapped when a partitioner is recognised but kafkas3
// does not implement it yet.
var ErrNotSupported = errors.New("not supported yet")

// ErrUnknownPartitioner is wrapped when a partitioner name is not recognised.
var ErrUnknownPartitioner = errors.New("unknown partitioner")

// Kind names a partitioner. The partitioners and their names are declared
// once, in Partitioners.
type Kind int

// The partitioners Confluent ships, all offered by Partitioners.
const (
	KindDefault Kind = iota + 1
	KindField
	KindTimeBased
	KindDaily
	KindHourly
)

const confluentPartitionerPrefix = "io.confluent.connect.storage.partitioner."

// Spec is what the partitioner registry declares about a partitioner
// beyond its names: its constructor, which checks the settings the
// partitioner reads as Confluent's does, and the keys it requires.
type Spec struct {
	New func(Config) (Partitioner, error)
	// Requires lists the config keys the partitioner needs set (Confluent
	// refuses to start without them); the config layer reports each
	// missing one, with every other problem.
	Requires []string
}

// Config keys of the partitioners (Confluent's PartitionerConfig).
const (
	KeyPathFormat          = "path.format"
	KeyPartitionDurationMs = "partition.duration.ms"
	KeyLocale              = "locale"
	KeyTimezone            = "timezone"
	KeyTimestampExtractor  = "timestamp.extractor"
	KeyTimestampField      = "timestamp.field"
	KeyPartitionFieldName  = "partition.field.name"
)

// Config holds every partitioner setting; each partitioner reads the ones
// it uses (Spec.Requires lists those it needs) and ignores the others, as
// Confluent's do.
type Config struct {
	PathFormat     string         // path.format (TimeBasedPartitioner)
	Duration       time.Duration  // partition.duration.ms (TimeBasedPartitioner)
	Locale         string         // locale (time-based)
	Location       *time.Location // timezone (time-based)
	Extractor      Extractor      // timestamp.extractor (time-based); 0 means Wallclock
	TimestampField string         // timestamp.field, for ExtractRecordField
	Fields         []string       // partition.field.name (FieldPartitioner)
	DirectoryDelim string         // directory.delim; "" means "/"
	// Now is the clock of ExtractWallclock; nil means time.Now.
	Now func() time.Time
}

// timeConfig is the TimeConfig of c.
func (c Config) timeConfig() TimeConfig {
	ex := c.Extractor
	if ex == 0 {
		ex = ExtractWallclock
	}
	return TimeConfig{PathFormat: c.PathFormat, Duration: c.Duration, Locale: c.Locale, Location: c.Location,
		Extractor: ex, Field: c.TimestampField, DirectoryDelim: c.delim(), Now: c.Now}
}

func (c Config) delim() string {
	if c.DirectoryDelim == "" {
		return "/"
	}
	return c.DirectoryDelim
}

// Entry is one partitioner of the registry.
type Entry = registry.Entry[Kind, Spec]

// Registry is the table of partitioners.
type Registry = registry.Registry[Kind, Spec]

// Partitioners returns the partitioner registry (partitioner.class), in
// the order docs list them. It is built on each call (no package state).
func Partitioners() Registry {
	return Registry{
		Key: KeyPartitionerClass, What: "partitioner", Unknown: ErrUnknownPartitioner, NotSupported: ErrNotSupported,
		Entries: []Entry{
			{Kind: KindDefault, Name: "default", Class: confluentPartitionerPrefix + "DefaultPartitioner",
				Spec: Spec{New: func(Config) (Partitioner, error) { return NewDefault(), nil }}},
			{Kind: KindField, Name: "field", Class: confluentPartitionerPrefix + "FieldPartitioner",
				Spec: Spec{New: func(c Config) (Partitioner, error) { return nonNil(NewField(c.Fields, c.delim())) },
					Requires: []string{KeyPartitionFieldName}}},
			{Kind: KindTimeBased, Name: "time", Short: []string{"timebased"}, Class: confluentPartitionerPrefix + "TimeBasedPartitioner",
				Spec: Spec{New: func(c Config) (Partitioner, error) { return nonNil(NewTimeBased(c.timeConfig())) },
					Requires: []string{KeyPathFormat, KeyPartitionDurationMs, KeyLocale, KeyTimezone}}},
			{Kind: KindDaily, Name: "daily", Class: confluentPartitionerPrefix + "DailyPartitioner",
				Spec: Spec{New: func(c Config) (Partitioner, error) { return nonNil(NewDaily(c.timeConfig())) },
					Requires: []string{KeyLocale, KeyTimezone}}},
			{Kind: KindHourly, Name: "hourly", Class: confluentPartitionerPrefix + "HourlyPartitioner",
				Spec: Spec{New: func(c Config) (Partitioner, error) { return nonNil(NewHourly(c.timeConfig())) },
					Requires: []string{KeyLocale, KeyTimezone}}},
		},
	}
}

// String returns the short name of k ("default", "field", "time", ...).
func (k Kind) String() string {
	if e, ok := Partitioners().Get(k); ok {
		return e.Name
	}
	return "Kind(" + strconv.Itoa(int(k)) + ")"
}

// ClassName returns Confluent's class name for k, e.g.
// "io.confluent.connect.storage.partitioner.DefaultPartitioner".
func (k Kind) ClassName() string {
	e, _ := Partitioners().Get(k)
	return e.Class
}

// Supported reports whether kafkas3 implements k.
func (k Kind) Supported() bool {
	e, ok := Partitioners().Get(k)
	return ok && !e.Unsupported
}

// Lookup maps a partitioner.class value to its Kind (see Partitioners):
// Confluent's class names (io.confluent.connect.storage.partitioner.DefaultPartitioner,
// ...), their last segment, and the short names default, field, time (or
// timebased), daily and hourly, case-insensitively. For a recognised but
// unimplemented partitioner it returns the Kind together with an error
// wrapping ErrNotSupported; for an unknown name, 0 and an error wrapping
// ErrUnknownPartitioner. Errors name partitioner.class and the value.
func Lookup(name string) (Kind, error) {
	e, err := Partitioners().Lookup(name)
	return e.Kind, err
}

// nonNil turns a typed nil partitioner with an error into a nil interface.
func nonNil[P Partitioner](p P, err error) (Partitioner, error) {
	if err != nil {
		return nil, err
	}
	return p, nil
}

// New returns the partitioner of kind k built from cfg. Kinds that cannot
// be selected give an error wrapping ErrNotSupported; settings the
// partitioner refuses, an error naming each key.
func New(k Kind, cfg Config) (Partitioner, error) {
	e, ok := Partitioners().Get(k)
	switch {
	case !ok:
		return nil, fmt.Errorf("%w: %s", ErrUnknownPartitioner, k)
	case e.Spec.New == nil:
		return nil, fmt.Errorf("%s %s: %w", KeyPartitionerClass, k.ClassName(), ErrNotSupported)
	}
	return e.Spec.New(cfg)
}

// Requires returns the config keys partitioner k needs set.
func (k Kind) Requires() []string {
	e, _ := Partitioners().Get(k)
	return e.Spec.Requires
}

// DefaultPartitioner keeps Kafka's partitioning: the encoded partition of a
// record is "partition=<kafka partition>", as Confluent's
// DefaultPartitioner writes it.
type DefaultPartitioner struct{}

// NewDefault returns the default partitioner.
func NewDefault() Partitioner { return DefaultPartitioner{} }

// PerPartition is implemented by a partitioner whose encoded partition
// depends on nothing but the record's Kafka partition (the default
// partitioner): a writer of one Kafka partition encodes it once instead
// of for every record.
type PerPartition interface {
	Partitioner
	// EncodePartition returns what Encode returns for every record of
	// Kafka partition p.
	EncodePartition(p int32) (string, error)
}

// EncodePartition returns "partition=<p>".
func (d DefaultPartitioner) EncodePartition(p int32) (string, error) {
	return d.Encode(&format.Record{Partition: p})
}

// Encode returns "partition=<r.Partition>".
func (DefaultPartitioner) Encode(r *format.Record) (string, error) {
	if r == nil {
		return "", errors.New("partition: nil record")
	}
	if r.Partition < 0 {
		return "", fmt.Errorf("partition: record of topic %q at offset %d has negative partition %d",
			r.Topic, r.Offset, r.Partition)
	}
	return "partition=" + strconv.FormatInt(int64(r.Partition), 10), nil
}
