package partition

import (
	"errors"
	"fmt"
	"strconv"
	"strings"

	"github.com/kafkas3/kafkas3/format"
)

// KeyPartitionerClass is the Confluent config key that names the partitioner.
const KeyPartitionerClass = "partitioner.class"

// ErrNotSupported is wrapped when a partitioner is recognised but kafkas3
// does not implement it yet.
var ErrNotSupported = errors.New("not supported yet")

// ErrUnknownPartitioner is wrapped when a partitioner name is not recognised.
var ErrUnknownPartitioner = errors.New("unknown partitioner")

// Kind names a partitioner.
type Kind int

// The partitioners Confluent ships. Only KindDefault is implemented; the
// field and time-based ones come later (see New).
const (
	KindDefault Kind = iota + 1
	KindField
	KindTimeBased
	KindDaily
	KindHourly
)

const confluentPartitionerPrefix = "io.confluent.connect.storage.partitioner."

var kindNames = [...]struct{ class, short string }{
	KindDefault:   {"DefaultPartitioner", "default"},
	KindField:     {"FieldPartitioner", "field"},
	KindTimeBased: {"TimeBasedPartitioner", "timebased"},
	KindDaily:     {"DailyPartitioner", "daily"},
	KindHourly:    {"HourlyPartitioner", "hourly"},
}

// String returns the short name of k ("default", "field", ...).
func (k Kind) String() string {
	if k < KindDefault || int(k) >= len(kindNames) {
		return "Kind(" + strconv.Itoa(int(k)) + ")"
	}
	return kindNames[k].short
}

// ClassName returns Confluent's class name for k, e.g.
// "io.confluent.connect.storage.partitioner.DefaultPartitioner".
func (k Kind) ClassName() string {
	if k < KindDefault || int(k) >= len(kindNames) {
		return ""
	}
	return confluentPartitionerPrefix + kindNames[k].class
}

// Supported reports whether kafkas3 implements k.
func (k Kind) Supported() bool { return k == KindDefault }

// Lookup maps a partitioner.class value to its Kind. It accepts Confluent's
// class names (io.confluent.connect.storage.partitioner.DefaultPartitioner,
// ...) and the short names default, field, timebased (or time), daily and
// hourly, case-insensitively for the short names. For a recognised but
// unimplemented partitioner it returns the Kind together with an error
// wrapping ErrNotSupported; for an unknown name, 0 and an error wrapping
// ErrUnknownPartitioner. Errors name partitioner.class and the value.
func Lookup(name string) (Kind, error) {
	n := strings.TrimSpace(name)
	var kind Kind
	for k := KindDefault; int(k) < len(kindNames); k++ {
		if n == k.ClassName() || strings.EqualFold(n, kindNames[k].short) {
			kind = k
			break
		}
	}
	if kind == 0 && strings.EqualFold(n, "time") {
		kind = KindTimeBased
	}
	if kind == 0 {
		return 0, fmt.Errorf("%w: %s %q; allowed: %s or %s",
			ErrUnknownPartitioner, KeyPartitionerClass, name, KindDefault.ClassName(), KindDefault)
	}
	if !kind.Supported() {
		return kind, fmt.Errorf("%s %q: the %s partitioner is %w; use %s",
			KeyPartitionerClass, name, kind, ErrNotSupported, KindDefault)
	}
	return kind, nil
}

// New returns the partitioner of kind k. This is the seam where the field
// and time-based partitioners will be added (with their own config); for
// now every kind other than KindDefault gives an error wrapping
// ErrNotSupported.
func New(k Kind) (Partitioner, error) {
	switch k {
	case KindDefault:
		return NewDefault(), nil
	case KindField, KindTimeBased, KindDaily, KindHourly:
		return nil, fmt.Errorf("%s %s: %w", KeyPartitionerClass, k.ClassName(), ErrNotSupported)
	default:
		return nil, fmt.Errorf("%w: %s", ErrUnknownPartitioner, k)
	}
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
