// Package restore is the source pipeline: list an archive, plan per
// partition, read objects in offset order and produce them to Kafka with the
// idempotent producer, resuming after a crash without duplicates.
//
// # Use
//
//	r, err := restore.New(cfg, store, log)
//	plan, err := r.Plan(ctx)          // store only; plan.WriteText for --dry-run
//	sum, err := r.Run(ctx, progress)  // progress: restore.NewRenderer(w, isTTY, 10*time.Second) or nil
//	fmt.Println(sum)                  // one line
//
// # Plan
//
// Plan lists <topics.dir><dd><topic><dd> for each chosen topic (with
// topics.regex: everything under topics.dir, matching topic folders with a
// full match), parses every key, and groups the objects by Kafka partition,
// sorted by the numeric start offset in the key. Keys outside topics.dir,
// keys of another format's extension and (unless behavior.on.error=fail)
// malformed names are skipped and counted by reason. A topic's partition
// count is the highest partition seen plus one.
//
// # Typed archives, keys and headers
//
// Avro and Parquet objects hold typed values. Each is produced in
// Confluent's wire format for the target cluster's Schema Registry
// (Config.ValueEncoder, convert.AvroConverter): the schema from the object
// is registered under "<target topic>-value" (TopicNameStrategy) when
// absent, and the value is framed with the target's schema id.
//
// Confluent's store.kafka.keys and store.kafka.headers write parallel
// objects "<base>.keys<ext>" and "<base>.headers<ext>" next to "<base><ext>"
// (ext may be another format's: keys.format.class). Plan pairs them with
// their value object; record i of each is the key or the headers of record
// i of the value object, and a count mismatch stops the restore
// (ErrParallelMismatch). Typed keys are framed under "<target topic>-key"
// with Config.KeyEncoder, or restored as their bytes when they are strings
// or bytes. Headers are Confluent's array of {key, value} strings.
//
// A JSON keys object (keys.format.class=json) holds one JSON value per
// line, read as format.NewNullableJSON reads them: the line null is a null
// key, the JSON string "null" the 4-byte key null (the sink writes them
// so), and any other line that is a JSON string is restored as its content.
// A record without headers has an empty list in its .headers object and is
// restored with none. So a key whose
// text was itself a JSON string literal (`"q"` with its quotes) comes back
// as q: the line cannot tell the two apart. Use Avro keys where keys must
// survive byte for byte.
//
// # Tombstones
//
// Under behavior.on.null.values=write the sink archives a tombstone (a
// record with a null value) as a record of a keys-only object
// "<topic>+<partition>+<start>.keys<ext>" (and of its .headers object)
// under the encoded partition tombstone.encoded.partition
// (Config.TombstonePartition, "tombstone" by default), and a switch between
// tombstones and other records always rotates. So each object holds a run
// of one kind, and the value objects and tombstone objects of a Kafka
// partition, sorted together by start offset, are the partition's records
// in order. Plan makes each keys-only object of the tombstone folder a
// tombstone object (Object.Tombstone) of its Kafka partition; its records
// are produced with their key, their headers and a nil value, in their
// place. They count like other records for resuming and are compared like
// them (a nil value differs from an empty one). A .keys object without a
// value object outside the tombstone folder, and a .headers object with
// neither a value nor a keys object, are skipped, counted and logged.
//
// # Exactly once without a local state file
//
// The restore keeps its state on the target cluster. For each target
// partition, the consumer group "kafkas3-restore-<target topic>" (never
// joined by any member) holds a committed offset E0: the partition's end
// offset just before this restore first produced to it, committed before the
// first record is produced. The commit metadata names the archive
// (Config.Identity) and the source topic.
//
// Records are produced with franz-go's idempotent producer (acks=all), one
// ordered stream per partition, so what lands in a partition is always a
// prefix of that partition's archived records, even after a crash. A re-run
// reads E0 and the current end offset E: E-E0 archived records are already
// there. It reads and discards them, compares the last few of them
// (Config.VerifyRecords) with the records at E-n..E-1 of the target (key,
// value, headers), and produces the rest. Every acknowledged record must
// land at offset E0 + its index; a different offset means another writer
// and stops the restore. A target that holds more records than the archive,
// or other records, is refused with an error that names the topic,
// partition, offsets and the marker group. A run after completion produces
// nothing.
//
// Known limits of this protocol:
//
//   - Two restores into the same target at the same moment both see no
//     marker and both produce; the per-record offset check stops at least
//     one of them, but only after some records are duplicated.
//   - A killed process's produce requests that reach the broker after the
//     re-run has read E (or, with replication, records above the high
//     watermark) are detected by the offset check, not prevented.
//   - Committed offsets of an empty group expire after the broker's
//     offsets.retention.minutes (7 days by default). Each run re-commits its
//     markers, but a re-run after they expired appends the archive again.
//   - Re-running after a crash reads the already-restored objects again
//     (JSON and bytes objects do not say how many records they hold).
//
// # Follow mode
//
// With Config.Follow, Run re-plans every PollInterval and restores what is
// new. Within one process it remembers object record counts and where each
// partition ended, so later passes neither re-read old objects nor re-verify
// the target.
package restore
