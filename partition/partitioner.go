package partition

import (
	"errors"
	"fmt"
	"strconv"

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

// The partitioners Confluent ships. Only KindDefault can be selected yet;
// the field and time-based ones have constructors (NewField,
// NewTimeBased, ...) that the registry does not offer until the sink
// wires their settings (see Partitioners).
const (
	KindDefault Kind = iota + 1
	KindField
	KindTimeBased
	KindDaily
	KindHourly
)

const confluentPartitionerPrefix = "io.confluent.connect.storage.partitioner."

// Spec is what the partitioner registry declares about a partitioner
// beyond its names: its constructor (nil while unsupported).
type Spec struct {
	New func() Partitioner
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
			{Kind: KindDefault, Name: "default", Class: confluentPartitionerPrefix + "DefaultPartitioner", Spec: Spec{New: NewDefault}},
			{Kind: KindField, Name: "field", Class: confluentPartitionerPrefix + "FieldPartitioner", Unsupported: true},
			{Kind: KindTimeBased, Name: "time", Short: []string{"timebased"}, Class: confluentPartitionerPrefix + "TimeBasedPartitioner", Unsupported: true},
			{Kind: KindDaily, Name: "daily", Class: confluentPartitionerPrefix + "DailyPartitioner", Unsupported: true},
			{Kind: KindHourly, Name: "hourly", Class: confluentPartitionerPrefix + "HourlyPartitioner", Unsupported: true},
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

// New returns the partitioner of kind k. Kinds that cannot be selected yet
// give an error wrapping ErrNotSupported.
func New(k Kind) (Partitioner, error) {
	e, ok := Partitioners().Get(k)
	switch {
	case !ok:
		return nil, fmt.Errorf("%w: %s", ErrUnknownPartitioner, k)
	case e.Spec.New == nil:
		return nil, fmt.Errorf("%s %s: %w", KeyPartitionerClass, k.ClassName(), ErrNotSupported)
	}
	return e.Spec.New(), nil
}

// DefaultPartitioner keeps Kafka's partitioning: the encoded partition of a
// record is "partition=<kafka partition>", as Confluent's
// DefaultPartitioner writes it.
type DefaultPartitioner struct{}

// NewDefault returns the default partitioner.
func NewDefault() Partitioner { return DefaultPartitioner{} }

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
