// Package objindex builds the archive index of partitions that have data
// objects but no index at all (an archive written by Confluent's S3 sink
// connector, or by kafkas3 with kafkas3.index.enabled=false), from the
// objects themselves: `kafkas3 index rebuild --from-objects`.
//
// Build lists the objects under topics.dir (restore.TopicFolder and
// partition.KeyConfig.ParseObjectKey, as the source's listing), keeps the
// Kafka partitions that have no index object under the index prefix, and
// reads every value object of them (at most Options.Concurrency at a
// time): it checksums it (CRC32C, and SHA-256 with Options.SHA256) and
// decodes it with the format (format.ReadEnvelopes detects envelope
// objects). Its .keys and .headers objects are checksummed too and become
// parts of its entry; a .keys object without a value object is a
// tombstone object (behavior.on.null.values=write).
//
// Each value object gives one entry (index.Version2):
//
//   - runs: an envelope object's records carry their offsets, which give
//     the runs exactly. Any other object's records are taken to hold
//     consecutive offsets from the start offset its name gives (record i
//     at start+i). That is what Confluent's connector writes, with the
//     default partitioner, for a topic without compaction or
//     transactions; where Kafka skipped offsets the runs are wrong (too
//     short: they show gaps, never overlaps that are not there), and
//     nothing in the objects can tell. The entry format has no field to
//     say so: the writer (below) does, and index.Load counts such entries
//     (Index.Assumed). A partition whose objects without
//     envelopes lie in more than one folder (a field or time
//     partitioner), or that has tombstone objects (the null values
//     between the others' offsets), is left without an index
//     (Result.Underivable): its records need not be consecutive, assumed
//     runs could overlap where the records do not, and a reader would
//     drop records as duplicates.
//   - from: the entry's first offset, commit: its last plus one. Offsets
//     between two objects that neither holds are not claimed as read: the
//     index shows them as gaps (a deleted object, or offsets Kafka did not
//     have), never as absent.
//   - min_ts, max_ts: the records' timestamps when the format holds them
//     (envelopes); otherwise the widest range, math.MinInt64 and
//     math.MaxInt64 (any time): `kafkas3 source --until` then looks at the
//     records, which have no timestamps, and refuses to cut there, as it
//     does for an archive without an index.
//   - no topic_id, no lost runs: the objects do not say.
//
// The entries are written as index objects, one per commit (entries of
// the same commit together), under the fixed writer Writer (the writer of
// the group name WriterGroup): an entry under that writer without
// "envelope" has assumed offsets. Then each partition gets its
// checkpoint (checkpoint.Write), so readers read it at once. The same
// archive gives the same bytes; running Build again finds the partitions
// indexed and writes nothing.
package objindex

import "github.com/kafkas3/kafkas3/index"

// WriterGroup is the group name whose writer (index.WriterOf) names the
// index objects and checkpoints Build writes: index.FromObjectsGroup.
// index.Load counts the entries of that writer without envelopes in
// Index.Assumed.
const WriterGroup = index.FromObjectsGroup

// Writer is index.WriterOf(WriterGroup).
func Writer() string { return index.FromObjectsWriter() }
