// Package restore is the source pipeline: list an archive, plan per
// partition, read objects in offset order and produce them to Kafka with the
// idempotent producer, resuming after a crash without duplicates.
//
// # Use
//
//	r, err := restore.New(cfg, store, log)
//	plan, err := r.Plan(ctx)          // store only (reads every object); plan.WriteText for --dry-run
//	err = r.Check(plan)               // what would stop the run before anything is produced
//	sum, err := r.Run(ctx, progress)  // progress: restore.NewRenderer(w, isTTY, 10*time.Second) or nil
//	fmt.Println(sum)                  // one line
//
// # Reading the code
//
// Plan (plan.go) reads top-down: list and visit (list.go) sort the listed
// keys into value objects per partition, .keys/.headers objects and
// skipped keys; planTopics, pairParallel, addTombstones and addPartitions
// build the per-partition object sets; prove (proof.go) loads the archive
// index (indexed.go), reads every object once (proveObject, readObject in
// load.go) or, in a Run with Config.ReadOnce, takes each indexed object's
// entry for it (oneread.go), and works out each partition's record stream,
// gaps and, with Until, its cut (until.go). Run (restore.go) is the restore's outline:
// plan and check, plan the groups, then per pass check the targets
// (checkPassTargets), read the markers (prepareTopic) and restore each
// partition as a stream (partition.go).
//
// # Plan
//
// Plan lists <topics.dir><dd><topic><dd> for each chosen topic (with
// topics.regex: everything under topics.dir, matching topic folders with a
// full match), parses every key, and groups the objects by Kafka partition,
// sorted by the numeric start offset in the key (TopicFolder says which
// topic folder a key is in, for callers that look at the archive
// themselves). Keys outside topics.dir,
// keys of another format's extension and (unless behavior.on.error=fail)
// malformed names are skipped and counted by reason, and so are the
// archive index's own objects (Config.IndexPrefix). A topic's partition
// count is the highest partition seen plus one (or a partition only the
// index knows).
//
// Every layout is read the same way: the default (partition=<n>), the
// time-based, daily and hourly ones (year=2026/month=12/day=31/hour=23)
// and the field one (region=eu/tier=3). A key's folder (Object.Folder) is
// everything between its topic folder and its file name, at any depth,
// joined by directory.delim; the Kafka partition and start offset come
// from the file name. So a partition's objects are gathered from every
// folder and ordered by offset, never by folder name: folders need not
// sort like time (a path.format starting with the day, a span of years,
// late records written back into an earlier period's folder).
//
// Plan also loads each topic's latest description the sink recorded
// (index.LatestTopic; TopicPlan.Described, nil for archives without one).
//
// # Target topics
//
// Before anything is produced, each pass checks the targets. Missing ones
// are refused unless Config.CreateTopics; then each is created as its
// archived description says (topics.go, Restorer.setup): the archived
// partition count (or the archive's, when higher or when there is no
// description), Config.ReplicationFactor or the archived replication
// factor, capped at the number of brokers with a warning (without either:
// the broker default), and the archived configs with Config.TopicConfigs
// over them. Every creation is first validated by the cluster
// (CreateTopics with validate only), all of them before the first is
// created; a refusal (ErrTopicConfig) names the target and each config
// the cluster refuses alone, with its origin (archived or --topic-config),
// and nothing is created or produced; so does a min.insync.replicas above
// the replication factor the topic gets (Kafka would create it and refuse
// every acks=all produce). Records without a key bound for a
// compacting target (the created topic's cleanup.policy, or an existing
// one's) are refused the same way (ErrCompactedNullKey, checkNullKeys):
// the broker would refuse them. Existing targets are never altered;
// CompareTargets and WriteTargetPlan (the dry run) list how they differ
// from the archived description: the partition count, each archived key
// whose effective value differs, and each key the target sets itself
// that the archive does not.
//
// # The proof: what the plan checks before anything is produced
//
// Plan reads every object completely, once (modeProve: every record
// decoded, nothing sent to a registry), with its .keys and .headers
// twins, up to Config.ReadConcurrency objects at once (large ones Config.Parallelism at a time: eachObject), unless Run reads each
// object once (Config.ReadOnce, below; kafkas3 source without
// --prove-first): always without an index, in a dry run, and with
// behavior.on.error ignore or log, AllowGaps or Until. The values of an object whose
// records the proof does not keep (keep.go) are checked where the reader
// decoded them, not copied (format.Transient). An object is damaged
// (ErrDamagedObject, Object.Damage) when it cannot be opened, does not
// decode to its end (truncated, a flipped byte a checksum catches), holds
// other bytes than the listing's size, its twins hold another record count
// (a bytes value containing the separator shows up so), or its offsets do
// not increase. With the archive index (package index, loaded from
// Config.IndexPrefix for the chosen topics; the entry with the highest
// commit is live) the object's listed size, checksums (and its twins':
// the CRC32C of v2 entries, the SHA-256 of v1 entries and of v2 entries
// that give one; the SHA-256 is computed only for objects whose entries
// have one, Object.sha256), record count and carried offsets must also
// match its live entry, and an
// entry whose object is not listed is a damaged (missing) object.
//
// Each object's records then have source offsets: the index entry's runs
// (record i has the i-th offset), the offsets envelope records carry, or,
// without either, the name's start offset plus i (consecutive offsets are
// assumed; PartitionPlan.Basis says which). provePartition walks the
// objects in plan order and gives each source offset to the first object
// that holds it: PartitionPlan.segments, sorted by offset, is the
// partition's record stream, each offset once, in offset order, across
// overlapping objects and folders. Duplicates are counted.
//
// Gaps (PartitionPlan.Gaps) are, without an index, the holes between the
// offsets the readable objects hold and what a damaged object held (to the
// next readable offset, or open-ended after the last); with an index, the
// offsets no entry accounts for (index.Partition.Gaps) and the offsets
// entries hold that no readable object holds, named by the damaged or
// missing object. Offsets the sink read and Kafka no longer had
// (compaction) are not gaps, and neither are the offsets the index records
// as lost before archiving (Kafka deleted them before the sink read them):
// PartitionPlan.Lost lists them (less any offset an object holds, and below
// a --until cut), the plan prints one "lost before archiving" line per
// range, the Summary counts them (LostOffsets) and the run logs them; they
// never stop a restore, as nothing can bring them back, and group offsets
// inside them translate to the first restored record after them. A
// partition is proven (PartitionPlan.Proven) only with the index basis, no
// gap and no damaged object.
//
// Check (Run calls it) stops the run before anything is produced on a
// damaged object under behavior.on.error=fail, and on any gap, unless
// Config.AllowGaps. ignore and log skip damaged objects whole; their gaps
// and every gap AllowGaps lets through are logged and counted in the
// Summary. The cost: the archive is read twice (proof, then production;
// except the objects the proof keeps, below), and each object's offset
// runs stay in memory.
//
// # One read per object (Config.ReadOnce, oneread.go)
//
// kafkas3 source's default with an archive index: Run's plan reads no
// indexed object. Each one the listing shows as its live entry says (every
// part listed, at the entry's size) takes the entry's word: its record
// count, its offsets (the runs), its largest record (max_record_bytes) and
// its records without a key (null_keys). The record stream, duplicates,
// gaps and order then come from the entries as above, and what needs no
// download is checked before anything is produced: an entry whose objects
// are not listed, or listed at another size, is a damaged (missing)
// object, offsets no entry accounts for are gaps, and records larger than
// a target accepts or without a key for a compacting target are refused
// when the entries record them. Objects without an entry are still read
// by the plan. The listing gives sizes only; checksums are checked on the
// one read. Not with behavior.on.error ignore or log, AllowGaps or Until
// (their plans read every object, as above): skipping a damaged object
// must be decided before its partition's first record is produced, as
// the stream's record numbers, and so resuming by count, depend on it;
// and a cut is refined by the records' timestamps.
//
// Each object is then read once, to be produced (loadObject): downloaded,
// its CRC32C (and SHA-256 when its entry gives one) computed, decoded in
// full into its recordBuffer, and checked against its entry (checkEntry:
// every part's checksums and size, the record count, carried offsets),
// then against the target (checkSize, checkNullKeysLoaded), before its
// first record is produced. Content damage found then (a flipped byte, a
// decode error, another count) stops the partition at that object's
// boundary, nothing of it produced, and, as any stream error, the run:
// every other stream stops handing records over (what it handed over
// lands, a prefix of its stream). Run returns ErrDamagedObject naming the
// object, the target and source partition and the object's first offset,
// and Summary.DamagedFound names it. Once the object is repaired, a
// re-run resumes exactly (below). A dry run reads every object.
//
// # No partial objects
//
// To produce an object, loadObject reads it completely (again, after a
// proof), into a recordBuffer (up to Config.SpillBytes of decoded records
// in memory, the rest in an unlinked temporary file in Config.TempDir),
// and checks that its record count and its checksums, and those of its
// .keys and .headers twins, are the proof's (sameAsProved; an error names
// the object or twin that changed), or, read once, its index entry's
// (checkEntry). Only then is its first record produced; an object that
// changed or broke in between stops the restore with nothing of it
// produced. Objects whose offsets interleave
// (folders of one partition) stay loaded together until their last
// segment.
//
// Each partition stream reads one object ahead (prefetch.go): while it
// produces an object, its prefetcher loads the next one it needs, so
// downloading and decoding overlap producing, in parallel across the
// Config.Parallelism streams. A stream that has handed all its records to
// the producer waits for their acknowledgements outside that bound, so the
// next partition starts meanwhile. The decoded records that loaded objects keep
// in memory, across the whole restore, stay within Config.Parallelism ×
// Config.SpillBytes (a record past it goes to its object's temporary
// file); the producer buffers at most 128 MiB of records until the broker
// acknowledges them.
//
// With a proof, the first object of each partition is read only once (keep.go): its
// proof keeps the decoded records when they are what the restore produces
// (no typed values, no Config.KeyEncoder) and fit in half of that memory
// bound, and its stream produces them without reading the object again;
// being the proof's own read, they are the records it checked. An object
// that does not fit is read again as any other. A partition whose stream
// produces only kept records and has nothing to verify reads nothing, so
// it starts at once without one of the Config.Parallelism places, which
// bound the streams that read objects or the target (runJobs, splitKept):
// every partition's records then reach the producer's buffer together,
// and each produce request carries batches of all of them. Run releases
// what no stream took.
//
// # Record order across folders (order.go)
//
// With a field partitioner, and with a time-based one that gets late
// records, the sink keeps several objects of one Kafka partition open at
// once, in different folders, so their offsets interleave (even offsets
// in region=eu, odd ones in region=us). The proof's segments put such
// records back in offset order whenever each record's offset is known:
// from the archive index's runs, or from envelopes (PartitionPlan.Order
// OrderOffsets). Without either, a name gives only an object's first
// offset: objects of one folder are still in order (OrderOneFolder: the
// sink writes a folder's records to one object at a time), but objects of
// several folders are not proven in order (OrderUnproven; Overlapping
// counts the objects that start inside another folder's object, proof
// that they interleave). Check refuses such partitions before anything is
// produced (ErrOrderUnproven) unless Config.AllowUnprovenOrder; then each
// of their objects is produced whole in start-offset order, none of its
// records dropped as a duplicate (it cannot be told from an interleaved
// one), and the log, the plan and the Summary (UnprovenOrder) name the
// partitions. --restore-groups refuses such partitions even then: a group
// offset cannot be placed exactly in their stream.
//
// # Record sizes and transient errors
//
// Before producing, the targets' max.message.bytes are read
// (DescribeConfigs) and the producer's batches follow them
// (kgo.ProducerBatchMaxBytesFn). A record larger than its target accepts
// (ErrRecordTooLarge) is reported by topic, partition and offset before
// anything is produced: the largest record of each object as the proof
// measured it (typed values with their 5-byte frame), or, read once, as
// its index entry records it (max_record_bytes, measured by the sink on
// the record it received, as the archive keeps it: index.RecordSize; an
// estimate where the format rewrites values, as JSON does; entries of an
// older sink have none), and again exactly for each object after it is loaded and before
// any of it is produced (then the run stops at that object's boundary). A
// compacting target's null keys are checked the same way (null_keys, and
// checkNullKeysLoaded).
//
// Admin steps (marker fetch and commit, topic creation and its metadata,
// offsets, config description) retry transient cluster states (transient:
// outage.Transient, that is kerr.IsRetriable, NOT_CONTROLLER, refused or
// broken connections, but not an expired deadline) for
// Config.RetryTimeout (DefaultRetryTimeout, 60 s) each, with a growing
// pause.
//
// # Typed archives, keys and headers
//
// Avro and Parquet objects hold typed values. Each is produced in
// Confluent's wire format for the target cluster's Schema Registry
// (Config.ValueEncoder, convert.AvroConverter): the schema from the object
// is registered under "<target topic>-value" (TopicNameStrategy) when
// absent, and the value is framed with the target's schema id. Once
// framed, a record keeps only the framed bytes, not its decoded form, so
// the memory budget counts what a loaded object holds.
//
// Confluent's store.kafka.keys and store.kafka.headers write parallel
// objects "<base>.keys<ext>" and "<base>.headers<ext>" next to "<base><ext>"
// (ext may be another format's: keys.format.class). Plan pairs them with
// their value object; record i of each is the key or the headers of record
// i of the value object, and a count mismatch makes the object damaged
// (ErrParallelMismatch and ErrDamagedObject), found before anything is
// produced. Typed keys are framed under "<target topic>-key"
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
// # Envelopes
//
// Objects the sink wrote with store.envelope are recognised per object by
// their archive index entry's envelope flag, or without an entry by their
// content (format.ReadEnvelopes), and yield every archived property: the
// records' own offsets (Record.Offset), keys, values (typed ones framed for
// the target registry as above), headers and timestamps, produced as
// archived unless Config.Timestamps is TimestampsNow. An envelope record
// of another partition than its object's is ErrEnvelopePartition. Producers
// send CreateTime timestamps only: a LogAppendTime record comes back with
// its original time as CreateTime, and a target topic with
// message.timestamp.type=LogAppendTime restamps everything.
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
// # Point in time (Config.Until)
//
// With Until, each partition's record stream is cut at an offset C
// (PartitionPlan.Cut): only source offsets below C are restored. The
// stream stays in offset order, so the cut stream is a prefix of the full
// one, and the resume protocol below holds unchanged. C is chosen per
// partition (cutPartition):
//
//   - From the snapshots (index.Snapshot under IndexPrefix, written by the
//     sink): the newest snapshot of the topic at or before Until gives
//     C = its end offset of the partition (0 for a partition it does not
//     name). Every partition of a topic uses the same snapshot, so the cut
//     is consistent across partitions; each topic takes its own.
//     TopicPlan.UntilSnapshot returns it, for the group offsets of that
//     moment. Precision: the snapshot interval.
//   - Refined by timestamps where that is exact: when every record of the
//     partition carries its timestamp (envelope objects) and all are
//     LogAppendTime and never decrease (checked: a record after the first
//     one stamped past Until that is stamped at or before it makes the cut
//     not exact), C is the first offset stamped after Until, but never
//     below the snapshot's end offset (its records were in the cluster at
//     the snapshot's time; the sink's clock and the broker's may differ)
//     and never above the end offset of the first snapshot after Until.
//     CreateTime stamps never refine a snapshot's cut.
//   - Without a snapshot at or before Until: the timestamps alone, the
//     same way. Exact for LogAppendTime; best effort for CreateTime (the
//     producers' clocks: records after C stamped at or before Until are
//     left out and counted, Cut.Late). The index entries of damaged or
//     missing objects bound the cut by their min_ts. Objects without
//     record timestamps take their index entry's min_ts/max_ts: wholly
//     before or after Until is enough (best effort), an object around
//     Until without record timestamps refuses the partition
//     (ErrNoPointInTime), as does an archive without index and without
//     envelopes (Confluent's layout).
//
// Gaps and damaged objects at or past C do not matter and are dropped; a C
// beyond what the archive index accounts for (a snapshot past the archive's
// end) is a gap. Objects wholly past C are not read to produce, and
// objects the index shows wholly past any cut the partition can get
// (min_ts after Until, starting at or after the bound markPastCut
// computes) are not read by the proof either (Cut.Unread). Check
// refuses partitions without a cut, and Run refuses, before producing
// anything, a target partition that already holds more records of this
// restore than C lets through (ErrPastCut: an earlier restore with a later
// --until, or without one; records cannot be taken back). A re-run of the
// same Until produces nothing; a later Until or a full restore continues
// where it stopped. Not with Follow.
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
// ordered stream per partition (the proof's deduplicated stream: each
// source offset once, in offset order; the same archive always gives the
// same stream), so what lands in a partition is always a prefix of that
// stream, even after a crash. A re-run reads E0 and the current end offset
// E: the first E-E0 records of the stream are already there. It skips them
// (whole objects by their proven counts, without reading them), compares the last few of them
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
//   - A run with a proof reads the whole archive once for it. Objects
//     wholly restored before (and before the verification window) are not
//     read a second time, nor, read once, at all.
//   - The record stream is deterministic for a given archive. If the
//     archive changes inside what was already restored (an object of a
//     gap a run with AllowGaps skipped comes back, a damaged object is
//     replaced), the stream shifts: only the verification of the last
//     Config.VerifyRecords records can notice it.
//
// # Consumer groups (Config.RestoreGroups)
//
// The sink snapshots the committed offsets of the consumer groups on each
// archived topic (index.Snapshot under Config.IndexPrefix). With
// RestoreGroups, Run picks each topic's snapshot before producing anything
// (chooseSnapshot: the newest, or with Until the one the cuts come from,
// TopicPlan.UntilSnapshot; none is ErrNoSnapshot), renames the groups
// (GroupRenameRegex, GroupRename: whole-name match, Java replacement), and
// translates every group offset through the plan's record stream: a group
// at source offset O on partition p gets E0 + the number of restored
// records of p whose source offset is below O (recordsBefore, counted over
// PartitionPlan.segments, the runs of the deduplicated stream; no list of
// offsets is kept). By the resume protocol that is the target offset of the
// first restored record whose source offset is >= O, or, when there is
// none, the end of the restored data: exact across offsets the archive
// does not hold (transaction markers, compaction, a --until cut), into a
// target that held records before (E0 > 0), and after a resumed restore
// (E0 is the marker's). A partition the archive holds no record of gets
// the target's end offset. Groups with members on the target (DescribeGroups,
// and ConsumerGroupDescribe for KIP-848 groups) are refused by name
// (ErrGroupActive) before anything is produced and again before the first
// commit; the commits come after the pass, each group in one OffsetCommit,
// with metadata naming the snapshot; a translated offset past the target's
// end offset is refused. A re-run produces nothing and commits the same
// offsets. Not with Follow. DryRunGroups and WriteGroupsText give the dry
// run's "source offset -> target offset" per group and partition.
//
// # Follow mode
//
// With Config.Follow, Run re-plans every PollInterval and restores what is
// new: new objects, and new folders (time periods, field values) the same
// way, since every pass lists the whole topic folder. Within one process it
// remembers each object's proof (by key and size) and where each partition
// ended, so later passes neither re-read old objects nor re-verify the
// target.
//
// Each pass's stream must be a prefix of the next one's. A sink commits a
// rotation as: upload every open folder's object, write their index
// entries, commit the offset; a pass can fall in between (inflight.go).
// An object the index names that the listing missed (uploaded while
// listing, the index read after) is looked up (completeListing), not taken
// for missing. In follow mode, objects of indexed topics that have no
// entry and start at or after their partition's last indexed commit are
// a rotation under way: deferInFlight leaves them for a later pass
// (Plan.Deferred), when their entries say where their records go. Without
// an index, follow mode restores what each pass lists; with several
// folders that is not proven in order (see above). Whatever the archive,
// each pass checks that every partition's stream starts with what the
// previous pass restored (checkStreams; the last object may have grown);
// when it does not (an object appeared that belongs before records
// already produced, as a half-uploaded rotation without index can cause),
// the run stops with ErrStreamChanged before producing anything of that
// pass, instead of resuming by count into skipped and repeated records.
//
// # Outages (outage.go)
//
// In follow mode, the first plan, a pass and each later plan that fail for
// a reason that passes on its own (failedDep: the Schema Registry
// unreachable or answering 5xx, a store request failing after its
// retries, a Kafka error outage.Transient accepts) report the dependency
// down to Config.Health, wait a backoff (1 s doubling to 30 s, with
// jitter) and are planned and run again at once. A pass run again resumes
// as a re-run of the command does: from the markers and end offsets, with
// the verification read of what landed (a partition's memo is kept only
// when its stream completed), so what landed before the outage is not
// produced again and nothing is skipped. A pass that completes reports the
// store and the brokers up; the producer's hooks report a failed broker
// connection down and a written batch up. Without Follow, a failure ends
// the run as before.
//
// Config.Observer (observer.go; package metrics implements it) is told what
// a restore does, never per record: each partition stream resolves its
// StreamObserver once (newStream) and reports the acknowledged records with
// its progress reports, each object counted in Summary.Bytes (covered) and
// each failed or misplaced record; retry reports each retry.
package restore
