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
}
