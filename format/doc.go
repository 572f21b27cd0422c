// Package format owns the record formats of archive objects: the Record type
// shared by the sink and the source, writers and readers for each format
// (bytes, JSON, typed JSON, Avro, Parquet), the lossless envelope,
// compression wrappers, the records of the parallel .keys and .headers
// objects, and the registry that declares the formats. It does no I/O of
// its own beyond the io.Writer and io.Reader it is given.
//
// # Formats
//
// NewJSON is Confluent's JsonFormat without schemas (one value per line),
// NewTypedJSON the same behind a schema-aware converter (a value with a
// schema is written as Connect's JsonConverter renders it), NewBytes its
// ByteArrayFormat (values followed by a separator), NewAvro its AvroFormat
// and NewParquet its ParquetFormat (typed values). WithGzip adds
// s3.compression.type=gzip to JSON and bytes (".gz"), as Confluent does,
// and WithZstd s3.compression.type=zstd (".zst", one zstd frame per
// object), which Confluent does not have; WithCompression picks either.
// New builds a Format from a Config (KindJSON is typed JSON there).
//
// # The registry
//
// Formats returns the registry of formats (an internal/registry table,
// the mechanism partition.Partitioners and convert.Converters share): for
// each Kind its short name, other names and Confluent class name (the
// choices of format.class; KeysFormats and HeadersFormats are those of
// keys.format.class and headers.format.class), and its Spec: the
// extension, whether values need a schema (Spec.NeedsSchema, also
// Kind.NeedsSchema: avro and parquet need a schema-aware value converter),
// whether s3.compression.type (gzip, zstd) and store.envelope apply, and,
// unexported, its constructor, envelope, reader of parallel objects and
// the builders of .keys and .headers records. Lookup maps a format.class
// value to its Kind. Callers ask the registry and never switch on a Kind;
// a new format is one more entry there.
//
// NewKeyPart and NewHeadersPart turn a record's key and headers into the
// records of the .keys and .headers objects (store.kafka.keys,
// store.kafka.headers) in a given format, as Confluent's KeyRecordView and
// HeaderRecordView do; ForParallel picks the reader of such an object by
// its extension.
//
// These formats store the record value only. Readers leave the other Record
// fields zero; the caller fills topic and partition from the object key.
// (Offsets inside an object need not be contiguous: compaction and
// transaction markers leave gaps, so only the first is known.)
//
// # The envelope (store.envelope)
//
// Config.Envelope (NewEnvelope) makes the JSON, Avro and Parquet formats
// hold each record whole: partition, offset, timestamp (milliseconds since
// the epoch), timestamp type (Kafka's names CreateTime, LogAppendTime,
// NoTimestampType), key, value and headers, in order with duplicates, with
// nil and empty apart for the key, the value and every header value. Object
// names and extensions stay the plain format's.
//
// JSON: one object per line, keys always in this order, explicit nulls,
// bytes as standard padded base64, header keys as JSON strings (bytes that
// are not UTF-8 as \udcXX escapes, as NewJSON writes values); see
// AppendEnvelopeLine.
//
// Avro and Parquet: the record kafkas3.Envelope (EnvelopeSchemaText),
// written by the plain Avro and Parquet writers, so codecs, block and row
// group bounds and determinism are theirs. The envelope is built as an Avro
// datum (the fast path: no Go values are built for it). A value with a
// schema (Record.ValueTyped, from AvroConverter or JsonConverter with
// schemas) is the field value of type ["null", <its schema, verbatim>], a
// nested record that Parquet readers, DuckDB and Athena query as such;
// other values are ["null","bytes"]. A file holds one envelope schema:
// another value schema is ErrSchemaChanged (the sink rotates), and a null
// value fits any file. Value schemas that cannot be nested are stored as
// bytes, losing nothing but the typed column: unions (Avro unions cannot
// nest), schemas that define kafkas3.Envelope or kafkas3.EnvelopeHeader
// themselves (or those short names in no namespace), and in Parquet the
// schemas Parquet cannot hold (unions of several types, recursion). Keys
// are always bytes. Header keys must be
// UTF-8 there (Avro strings); the JSON envelope holds any bytes.
//
// Readers return the records as archived, Record.Offset included; a typed
// value comes back with its schema (ID 0, the text from the file) and its
// Avro encoding in Raw and Value, in canonical form (map entries sorted by
// key, one block per array; the Parquet reader re-encodes maps in random
// order, so only the canonical form is stable). Each record's bytes are
// its own (values are copied out of the reader's buffers), except after
// SetTransient(true) on a reader that is Transient (JSON, bytes, gzip or
// zstd of either, ReadEnvelopes over them): then a record is valid only until the
// next Read, for callers that check records and keep none.
//
// # Detection and its limits
//
// ReadEnvelopes wraps a plain reader and decides by the object's first
// record: an Avro or Parquet file whose schema's full name is
// kafkas3.Envelope is an envelope file (its text must then be exactly the
// documented layout around a value schema, else ErrBadEnvelope); a JSON
// object whose first line is a JSON object with exactly the envelope's
// seven keys in order is an envelope object. After that every record must
// agree. The JSON rule cannot tell an envelope object from a plain JSON
// archive whose values are themselves such objects, and a damaged first
// line (a key name changed) makes an envelope object look plain; the
// archive index's envelope flag (EnvelopeRequired, EnvelopeNever) settles
// both when the archive has an index. Avro and Parquet files are
// recognised by their schema and have no such ambiguity unless a user
// schema is named kafkas3.Envelope.
//
// # Null values
//
// A Record with a nil Value is a Kafka null (a tombstone); an empty,
// non-nil Value is not. The plain JSON and bytes layouts cannot hold a
// null, so their writers refuse it with ErrNullValue, write nothing, and
// stay usable. The sink applies behavior.on.null.values before writing:
// "fail" surfaces the error, "ignore" skips the record. Readers never
// return a nil Value (an empty value is restored as an empty, non-nil
// slice), except NewNullableJSON's, the JSON of .keys objects, which holds
// null keys as the line null, and the envelope readers, which return
// nulls as archived.
//
// # Exactness
//
// Writers are deterministic: the same records give the same bytes, which
// the sink's exactly-once protocol relies on. See NewJSON and NewBytes for
// which values the plain formats restore exactly; the envelope restores
// every property exactly (typed values as their canonical Avro datum).
package format
