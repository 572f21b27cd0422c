// Package verify checks an archive against its archive index (package
// index) without Kafka: it is what `kafkas3 verify` runs.
//
//	rep, err := verify.Run(ctx, verify.Config{Keys: keys, Format: f, IndexPrefix: index.DefaultPrefix, Deep: deep}, store, log)
//	if !rep.Clean { ... rep.Problems ... }
//
// Run lists topics.dir (each chosen topic's folder, or all of it; the
// index prefix is skipped when topics.dir is empty), keeping each
// object's size and ETag, and beside it reads the index one partition at
// a time (index.EachPartition): of a partition it keeps its coverage and
// problems, so its memory is the listing (about 150 bytes an object) and
// a few partitions of the index, not the whole index. For each object key it takes the entry the stored objects match: the one
// with the highest commit, unless the store holds what an older entry
// describes (a later sink run with a smaller flush.size rewrote the key
// with fewer records under a lower commit) by size and the CRC32C the
// store keeps (or that an entry's ETag proves), or with Deep by the
// checksums of its bytes; this is the
// source planner's rule too. It reports, per
// topic and partition, the coverage (index.Analyze) and every Problem:
//
//   - gap: offsets between the partition's first "from" and last commit
//     that no index entry accounts for;
//   - overlap: offsets held by two or more of the matched entries;
//   - missing: an indexed object that is not in the listing;
//   - size: an indexed object whose listed size differs from the index;
//   - checksum: (plain) the CRC32C the store keeps for an indexed object
//     differs from the entry's: the object was replaced or rewritten
//     since the sink wrote it;
//   - unindexed: an object under topics.dir that no live entry names
//     (written by Confluent's connector, before the index was enabled, or
//     whose index object is gone);
//   - empty: a topic of Config.Topics has neither index entries nor
//     objects (most likely a typo);
//   - lost: offsets the index records as lost before archiving (an
//     entry's lost runs, less any offset an entry holds: Kafka deleted
//     them before the sink read them), one problem per range. With
//     Config.AcceptLost they go to Report.Accepted instead: listed, but
//     the archive is clean without them. Partition.Lost counts them
//     either way (Partition.Absent does not);
//   - index: the index cannot be read (a malformed index object); nothing
//     else is checked then.
//
// Plain verification reads no object: it trusts the listing for presence
// and size, as restic's check does, and the store for what it answered
// and keeps. The listing (one request per 1,000 keys, a topic's folders
// listed Config.Concurrency at a time) gives each object's
// ETag too: an object listed with the size and ETag its entry records
// (index.Object.ETag, the store's answer when the sink committed it) is
// the object the sink wrote, whose bytes the store checked on receipt
// against the CRC32C the sink sent, the entry's: it is proven with no
// request of its own. Every other object a v2 entry describes with the
// listed size (an entry without an ETag: an older archive, a local
// directory; or with another ETag than the listing's: the same bytes
// written again under SSE-KMS or SSE-C, or with another s3.part.size)
// goes through the CRC32C the store keeps, when it keeps them
// (s3store.Checksummer: S3, memory): one HEAD per object,
// Config.Concurrency at once, compared with the entry's. An ETag that
// differs is never a problem by itself; a stored CRC32C that differs is
// (checksum). Since the sink sends the whole object's CRC32C with every
// upload (FULL_OBJECT for multipart ones), either proves each object is
// the one the sink wrote without downloading it. Report.StoreChecksums
// says whether the store keeps checksums (a local directory keeps none:
// sizes alone are then compared); Report.ETagsCompared,
// Report.ChecksumsCompared and Report.NoChecksum count the objects proven
// by their ETag, by the stored CRC32C, and those whose size alone could
// be compared (v1 entries, no full-object CRC32C in the store).
//
// Config.Deep instead reads every indexed object that passed the
// listing's checks, as restic's check --read-data does, recomputing what
// its entry gives (CRC32C for v2, SHA-256 for v1 and v2 entries that have
// one):
//
//   - checksum: its CRC32C differs from the index (a flipped byte);
//   - sha256: its SHA-256 differs from the index;
//   - decode: it does not decode with its format (Config.Format for value
//     objects; the format its extension names for .keys and .headers);
//   - records: it holds another number of records than the entry;
//   - offsets: a record of an envelope object carries another offset than
//     the entry's runs give it.
//
// Deep first waits for the listing: objects it lists in GLACIER or
// DEEP_ARCHIVE without a restored copy (one HEAD each, none for the
// others: s3store.ArchiveTierCheck) stop it before it reads anything,
// with an *s3store.ArchivedError naming them. It then reads the index
// twice: first only to count the objects and bytes its progress reports
// (Config.Progress), then to check them.
//
// Run returns an error only when it cannot do its job (the store cannot be
// listed or read); the archive's faults are in the Report.
package verify
