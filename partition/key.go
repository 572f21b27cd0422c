package partition

import "github.com/kafkas3/kafkas3/format"

// KeyConfig holds the settings that shape object keys.
type KeyConfig struct {
	TopicsDir      string // topics.dir, default "topics"; empty means no prefix
	DirectoryDelim string // directory.delim, default "/"
	FileDelim      string // file.delim, default "+"
	OffsetPadWidth int    // filename.offset.zero.pad.width, default 10
}

// ObjectName is the parsed form of an object key:
// <TopicsDir><dd><Topic><dd><Encoded><dd><Topic><fd><Partition><fd><StartOffset><Ext>
type ObjectName struct {
	Topic       string
	Encoded     string // encoded partition path, e.g. "partition=0" or "year=2024/month=01"
	Partition   int32
	StartOffset int64
	Ext         string // everything after the offset digits, e.g. ".json.gz", ".keys.avro"
}

// Partitioner encodes the partition path of a record, the part of the key
// between the topic and the file name ("partition=0" for the default).
type Partitioner interface {
	Encode(r *format.Record) (string, error)
}
