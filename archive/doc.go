// Package archive is the sink pipeline: consume from Kafka, route records to
// one writer per assigned partition, rotate files, upload them, and commit a
// partition's offset only after every file holding its records is complete.
//
// With Config.IndexPrefix set, each rotation of a partition also writes one
// archive index object (package index) after its objects and before its
// offset becomes committable: the objects' keys, sizes and SHA-256 (hashed
// while writing), their offsets as runs, record counts, min/max timestamps,
// and the span [from, commit) of offsets the sink read. Every offset the
// sink commits then has an index object with that commit; offsets that are
// only skipped (control records, ignored nulls, bad records) after the last
// rotation are committed by an index object that restamps the last
// rotation's entries with the new commit (at flush, and every flush.size
// such offsets). Rotation depends only on the records, so a replay after a
// crash rewrites identical index bytes. A store failure writing the index
// is handled like any store failure: nothing past the previous commit is
// committed and the sink resumes from there.
//
// With Config.Envelope (store.envelope) the format writes each record whole
// (format.NewEnvelope); the partition writer then treats null values as
// ordinary records (behavior.on.null.values is not consulted), lets a null
// value join any open file, rotates on a switch between values with and
// without a schema, and marks the index entries envelope=true (envelope.go).
package archive
