package format

import "time"

// Header is one Kafka record header. A nil Value is a null header value,
// which differs from an empty one.
type Header struct {
	Key   string
	Value []byte
}

// TimestampType says where a record's timestamp came from.
type TimestampType int8

// Timestamp types, as Kafka numbers them.
const (
	TimestampCreate        TimestampType = 0
	TimestampLogAppendTime TimestampType = 1
)

// Record is one Kafka record as the archive sees it. archive and restore
// convert to and from *kgo.Record; this package never imports franz-go.
// A nil Key or Value is a Kafka null; an empty one is not.
type Record struct {
	Topic         string
	Partition     int32
	Offset        int64
	Timestamp     time.Time
	TimestampType TimestampType
	Key           []byte
	Value         []byte
	Headers       []Header // ordered; duplicates allowed

	// KeyTyped and ValueTyped are set when a converter decoded the key or
	// value against a schema; nil for raw bytes. Key and Value keep the
	// original bytes either way.
	KeyTyped   *Typed
	ValueTyped *Typed
}
