// Package prune deletes an archive's oldest objects with their index
// entries, so that the archive stays consistent at every step (kafkas3
// prune).
//
// Per partition (Run: the index read one partition at a time, a few at
// once) it works out a low watermark W (plan, watermark): the first
// offset of the first live entry holding a record stamped at or after
// Config.Before, lowered until no entry straddles it, past the last entry
// when every record is older. Every object whose entries all lie below W
// goes. Then, in this order (carry):
//
//  1. the watermark is written next to the partition's checkpoints
//     (index.PrunedKey): from then on every reader (verify, source, the
//     follower) drops the entries below W, and the objects below it are
//     neither missing nor gaps;
//  2. the objects are deleted (s3store.Deleter: S3 DeleteObjects, 1,000
//     keys a request); what the store refuses (Object Lock retention, a
//     legal hold, a missing permission) is reported and left, harmless;
//  3. the index objects of the log at or below W are deleted (their
//     entries hold only offsets below W), but the partition's newest,
//     by which readers find the partition; the checkpoints stay (derived
//     data: readers drop their entries below W);
//  4. unless the store kept an object, a done key (index.PrunedDoneKey)
//     says the objects below W are gone, so later prunes need not look at
//     them again, and the partition's older watermarks are deleted. On a
//     bucket with Object Lock (s3store.Retainer) the objects under
//     retention or a legal hold are not even asked to go (a delete would
//     hide them behind a delete marker): they are reported, and every
//     later prune asks about the objects below W again until none is
//     kept.
//
// A crash at any step leaves an archive that verify reports clean and
// that restores exactly the records at or above W; a re-run (which reads
// the index with index.LoadOptions.KeepPruned, so it sees what is left
// below W) finishes the job. Config.DryRun only reports.
package prune
