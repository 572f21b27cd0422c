package format

import "github.com/twmb/avro"

// Schema is the Avro schema a converter attached to a key or value.
type Schema struct {
	// ID is the Schema Registry id; 0 when the value did not come from a registry.
	ID int
	// Version is the subject version in the registry, when known (schema
	// evolution compares versions); 0 when unknown.
	Version int
	// Avro is the parsed schema.
	Avro *avro.Schema
	// Text is the schema's JSON as the registry (or the converter) gave it.
	Text string
}

// Typed is a key or value decoded by a converter (Connect's AvroConverter,
// JsonConverter with schemas, ...). Typed formats (Avro, Parquet, typed
// JSON) write it; the bytes and schemaless JSON formats use Record.Value.
type Typed struct {
	Schema *Schema
	// Raw, when non-nil, is the Avro binary encoding of the value under
	// Schema (the Confluent wire format without its 5-byte header). A writer
	// whose open file has the same schema appends it as is (the fast path).
	Raw []byte
	// Native is the decoded value in twmb/avro's Go representation
	// (map[string]any for records, []any for arrays, ...). It may be nil
	// when only Raw is known; decode it with Schema.Avro.Decode when needed.
	Native any
}
