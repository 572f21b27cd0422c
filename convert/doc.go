// Package convert decodes Kafka keys and values the way Kafka Connect's
// converters do, so typed formats (Avro, Parquet) can write them:
//
//   - AvroConverter (io.confluent.connect.avro.AvroConverter): Confluent's
//     wire format (magic byte 0, 4-byte big-endian schema id, Avro
//     binary), with schemas fetched from a Schema Registry by id and
//     cached. The result keeps the Avro bytes (format.Typed.Raw) so the
//     Avro writer appends them without re-encoding; Native is left for
//     format.AvroNative to decode when something needs it.
//   - JSONConverter (org.apache.kafka.connect.json.JsonConverter): with
//     schemas.enable, the {"schema": ..., "payload": ...} envelope becomes
//     an Avro schema (as Confluent's AvroData maps Connect schemas) and a
//     value; without, the value is schemaless (nil Typed).
//   - Raw: StringConverter and ByteArrayConverter, schemaless.
//
// AvroConverter.Encode is the other direction, for restores: it registers
// a schema in the target registry under a subject (TopicNameStrategy,
// SubjectName) and frames a value in the wire format.
//
// Converters returns the registry of converters (key.converter,
// value.converter): each Kind with its short name, other names and
// Connect class name, and its Spec (whether it can give values a schema,
// and its constructor, which New uses). The mechanism is
// internal/registry, shared with format.Formats and partition.Partitioners.
//
// Errors caused by a record's bytes wrap ErrBadData (dead letter queue
// material) and name the topic, key or value, and schema id.
package convert
