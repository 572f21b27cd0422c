// Package format owns the record formats of archive objects: the Record type
// shared by the sink and the source, writers and readers for each format
// (bytes, JSON, and later Avro and Parquet), and compression wrappers.
// It does no I/O of its own beyond the io.Writer and io.Reader it is given.
//
// # Formats
//
// NewJSON is Confluent's JsonFormat without schemas (one value per line),
// NewBytes is its ByteArrayFormat (values followed by a separator), and
// WithGzip adds s3.compression.type=gzip to either. Lookup maps a
// format.class value (class name or short name) to a Kind, and New builds
// a Format from a Config. Avro and Parquet are recognised but not
// implemented yet (ErrNotSupported); New is where they will plug in.
//
// Both formats store the record value only. Readers leave the other Record
// fields zero; the caller fills topic and partition from the object key.
// (Offsets inside an object need not be contiguous: compaction and
// transaction markers leave gaps, so only the first is known.)
//
// # Null values
//
// A Record with a nil Value is a Kafka null (a tombstone); an empty,
// non-nil Value is not. Neither the JSON nor the bytes layout can hold a
// null, so their writers refuse it with ErrNullValue, write nothing, and
// stay usable. The sink applies behavior.on.null.values before writing:
// "fail" surfaces the error, "ignore" skips the record. Readers never
// return a nil Value (an empty value is restored as an empty, non-nil
// slice), except NewNullableJSON's, the JSON of .keys objects, which holds
// null keys as the line null.
//
// # Exactness
//
// Writers are deterministic: the same records give the same bytes, which
// the sink's exactly-once protocol relies on. See NewJSON and NewBytes for
// which values are restored exactly.
package format
