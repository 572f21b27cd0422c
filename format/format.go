package format

import "io"

// Format turns records into the bytes of one archive object and back.
type Format interface {
	// Extension is the object key suffix, with its leading dot, including
	// any compression suffix (".json", ".json.gz", ".bin").
	Extension() string
	// NewWriter starts an object on w. The writer's Close writes any footer
	// and flushes, but does not close w.
	NewWriter(w io.Writer) (RecordWriter, error)
	// NewReader reads the records of one object from r.
	NewReader(r io.Reader) (RecordReader, error)
}

// RecordWriter appends records to one object.
type RecordWriter interface {
	Write(r *Record) error
	// Close finishes the object (footer, compression trailer) without
	// closing the underlying io.Writer.
	Close() error
}

// Discarder is a RecordWriter that holds something beyond its output (a
// compressor's slot, a temporary file): Discard gives it back without
// finishing the object, for an object that is aborted. Writers without
// such state need not implement it; after Close it does nothing.
type Discarder interface {
	Discard()
}

// Discard discards rw when it is a Discarder.
func Discard(rw RecordWriter) {
	if d, ok := rw.(Discarder); ok {
		d.Discard()
	}
}

// RecordReader yields the records of one object in order. Read returns
// io.EOF after the last record. Malformed input yields an error, never a
// panic. Fields the format does not hold (offset, partition, ...) are left
// zero; the caller fills them from the object key.
type RecordReader interface {
	Read() (*Record, error)
}
