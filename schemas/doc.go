// Package schemas carries the Schema Registry schemas that archived
// records reference from the source registry, through the archive, into a
// target registry.
//
// Records framed in Confluent's wire format (magic byte 0, then the
// schema id as 4 big-endian bytes: WireID) name a schema of the registry
// they were produced with. Restored into another cluster with another
// registry, the same id names another schema or none, and consumers fail.
//
// The sink side is Fetcher: for a schema id it asks the source registry
// for the schema (type, text, references), the subjects and versions it is
// registered under, and every schema it references, transitively,
// references first (index.Schema; package archive stores them under the
// index prefix, see index.SchemaKey, and asks once per id per process).
//
// The source side is Registrar: given the schemas an archive recorded for
// each restored topic, it registers them in the target registry, each
// schema's references before it, under the subject the source listed: the
// TopicNameStrategy subjects "<topic>-value" and "<topic>-key" of the
// archived topic become the target topic's (--topic-rename), other
// subjects (RecordNameStrategy, referenced types) are kept. It returns a
// Plan: per target topic, the map from source id to target id (Map), and
// an entry per schema for the dry run. With ModeKeep the target must give
// each schema its source id: the subject is put in IMPORT mode, the schema
// registered with its id and version, and the mode set back to READWRITE;
// a registry that refuses (the id holds another schema, the subject is not
// empty) stops the restore before anything is produced, naming the
// subject and id. A dry run (Plan with dryRun) only looks schemas up.
//
// Map.Rewrite puts the target id in a framed value or key. Bytes that look
// framed but carry an id the archive did not record (a value that merely
// starts with byte 0) are left as they are and counted by the caller.
package schemas
