// Package checkpoint writes the checkpoints of the archive index (the
// format and the readers are index's: index.CheckpointWriter,
// index.ReadCheckpoint, index.LoadWith): the sink's, every
// kafkas3.index.checkpoint.interval index objects of a partition and at
// the end of --once (Write), its start checkpoints (Begin), and those of
// `kafkas3 index rebuild`, from the log of every writer (Rebuild).
//
// A checkpoint is derived data. Write builds writer W's checkpoint of a
// partition from W's newest checkpoint (streamed, never held) and W's
// index objects after it, up to a commit the caller knows is committed,
// and stores it under the highest commit it covers. A failure, or a crash
// before it, leaves the previous checkpoint and a longer tail of the log,
// which readers read: the index stays correct, only slower to read.
// Writing it again gives the same bytes.
//
// Begin is not derived data: a sink writes its start checkpoint (and the
// voids) before its first index object of a partition in a run, so that
// every index object no checkpoint covers lies above its writer's live
// checkpoint, the invariant readers rely on to list only the log after
// the lowest live checkpoint (the index package doc, "Reading an
// archive"). A failure to write it fails the index object.
//
// Checkpoints are written with s3store.Replacing: on a bucket with Object
// Lock a checkpoint voided or written again with other bytes becomes a
// new version instead of a refusal (the same bytes are not written again).
package checkpoint
