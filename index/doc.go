// Package index is the archive index: the record of what every committed
// object holds, written by the sink next to the archive and read by
// `kafkas3 verify` and the source's planner. It is pure (types, encoding,
// decoding, coverage analysis); the only I/O is Load (and Tail, a Load
// brought up to date), through the two-method Store (which every s3store.Store satisfies).
//
// # Layout
//
// The sink writes one index object per partition rotation: all objects
// completed together, before the partition's offset is committed to
// them. Its key is
//
//	<prefix>index/<topic>/<partition>/<commit, 20 digits zero padded>-<writer>.jsonl
//
// (Key, ParseKey). The writer (WriterOf) is the first 12 hex digits of
// the SHA-256 of the sink's consumer group id: two sinks of different
// groups writing one topic into one bucket never overwrite each other's
// index objects, while a replay of one group rewrites its own. Keys
// without "-<writer>" are accepted too. The prefix (kafkas3.index.prefix, DefaultPrefix
// "_kafkas3/", checked by ValidatePrefix) lies outside topics.dir, so
// query engines scanning topics.dir never see the index, and the source's
// planner skips it when topics.dir is empty.
//
// # Entries
//
// An index object holds one JSON line per value object (or tombstone
// object), in the order Encode gives (first offset, then key), each line
// ending in "\n". Field order is fixed, so the same entries always give
// the same bytes:
//
//	{"v":2,"topic":"orders","partition":0,"key":"topics/orders/partition=0/orders+0+0000000100.json",
//	 "objects":[{"key":"topics/orders/partition=0/orders+0+0000000100.json","part":"","size":812,"crc32c":"4waSgw=="},
//	            {"key":"topics/orders/partition=0/orders+0+0000000100.keys.json","part":"keys","size":40,"crc32c":"yZRlqg=="}],
//	 "runs":[[100,101],[103,103]],"records":3,"from":60,"commit":104,
//	 "min_ts":1700000000000,"max_ts":1700000000500,"envelope":false,"tombstone":false,
//	 "topic_id":"Xx8j3oKnRKmqfMBhpbXWSg","lost":[[60,99]]}
//
// The fields:
//
//   - v: the entry's version: Version2 (what the sink writes, Version) or
//     Version1 (entries written before checksums the store keeps). A
//     reader refuses another version. The versions differ only in the
//     objects' checksums.
//   - topic, partition: the Kafka topic and partition.
//   - key: the value object's key; for a tombstone object
//     (behavior.on.null.values=write, "tombstone":true) the key of its
//     keys-only object.
//   - objects: every object of the entry: the value object (part ""), and
//     the parallel "keys" and "headers" objects of store.kafka.keys and
//     store.kafka.headers, each with its size in bytes and checksums of
//     its bytes: "crc32c", the CRC32C (Castagnoli) of the whole object as
//     S3 prints it (FormatCRC32C: base64 of the 4 big-endian bytes;
//     ParseCRC32C refuses any other spelling), required in v2 and absent
//     in v1: the checksum the sink sends with the object (S3 FULL_OBJECT
//     for multipart uploads), which the store checks on receipt and
//     keeps; and "sha256", the SHA-256 (lower case hex), required in v1
//     and in v2 present only with kafkas3.index.digest=sha256 (or when the
//     object replaced one that a v1 entry describes by its SHA-256 alone).
//     Encode omits an empty one. A tombstone entry has no "" object.
//     Optional "etag": the ETag the store answered when the sink
//     committed the object (quotes stripped), which plain verify compares
//     with the listing's; absent from older entries and local stores.
//   - runs: the Kafka offsets the objects hold, as inclusive [first,last]
//     runs in increasing order, disjoint and not touching: record i of
//     each object has the i-th offset of the runs (Entry.Offset). Offsets
//     skip where Kafka has none (compaction, transaction markers), where
//     the sink skipped a record (an ignored null, a bad record) and where
//     a partitioner put records of the partition into another folder.
//   - records: the number of offsets in runs, the record count of each
//     object.
//   - from, commit: the sink read every offset in [from, commit-1] of the
//     partition for this rotation, or found it lost (lost), and committed
//     commit (the next offset to consume) once the objects were stored.
//     An offset in that range that no entry holds and no lost run names
//     was absent or skipped.
//   - min_ts, max_ts: the smallest and largest record timestamp, in Unix
//     milliseconds.
//   - envelope: the objects use the lossless envelope (store.envelope).
//   - tombstone: a keys-only tombstone object (see key).
//   - topic_id: the topic's Kafka id (KIP-516) when the sink knew it, as
//     Kafka's tools print it: URL-safe base64 without padding, 22
//     characters (FormatTopicID, ParseTopicID); omitted when unknown (a
//     broker without topic ids, entries written before ids were
//     recorded).
//   - lost: offsets in [from, commit-1] that Kafka deleted before the sink
//     could read them (the committed offset or the sink's position fell
//     below the partition's log start: retention or DeleteRecords passed
//     the sink), as runs like runs: increasing, disjoint, not touching,
//     none held by runs; omitted when none. The sink puts a loss on every
//     entry of the first index object written after it, clipped to each
//     entry's span (a restamped entry keeps its own lost runs and adds the
//     new ones). A lost offset is neither held nor absent: Analyze counts
//     it in LostCount. The index cannot record a loss that no entry can
//     carry (no index object at the committed offset the sink resumed
//     from, and no record after the loss); the sink then only logs and
//     counts it.
//   - max_record_bytes: the size of the largest record as a restore
//     produces it, RecordSize of what the objects keep of it (the key
//     only with a keys object or the envelope, the headers only with a
//     headers object or the envelope, a typed value as its Avro bytes plus
//     the 5-byte wire-format frame), so a restore checks it against the
//     target's max.message.bytes without reading the object; omitted in
//     entries written before it was recorded.
//   - null_keys: the records a restore produces without a key (all of
//     them when no keys object or envelope keeps the keys), which a
//     compacted target refuses; omitted when none. Known only with
//     max_record_bytes (Entry.RecordsKnown): an entry without it says
//     nothing about keys. Both are optional in v2: a reader older than
//     them refuses an entry that has them (unknown fields), so archives
//     written since need this reader or a later one.
//
// Decode reads one index object and refuses anything else: unknown fields,
// a line that breaks a rule above (Entry.Validate), an entry of another
// topic, partition or commit than the key says, a repeated entry key, an
// empty object or a missing final newline. Its errors wrap ErrMalformed and
// name the index key and line; it never panics (FuzzDecode).
//
// # Checkpoints
//
// The index objects are the commit log. Checkpoints make it cheap to read,
// as Delta Lake's _delta_log checkpoints do: writer W's checkpoint of a
// partition at commit C holds the entries of every index object of W in
// the partition with a commit at or below C, at
//
//	<prefix>checkpoints/<topic>/<partition>/<commit C, 20 digits>-<writer>.jsonl.gz
//
// (CheckpointKey, ParseCheckpointKey; "<commit>.jsonl.gz" for the log of
// an older kafkas3 without writers). A checkpoint of W at C is a function
// of W's log up to C, so anyone may write it: W's sink, `kafkas3 index
// rebuild`, and another writer's first checkpoint of the partition, which
// also writes the checkpoint of every writer its listing of the log shows
// without any (checkpoint.Write, checkpoint.Begin): two sinks (two
// groups) never write different bytes under one key. C is the commit of
// W's last index object it covers, or, for a start checkpoint (below),
// the offset a sink's run starts from. It is gzip'd JSON lines (the same
// entries give the same bytes; a checkpoint may hold no entry):
//
//	{"checkpoint":1,"topic":"orders","partition":0,"writer":"<12 hex>","commit":1200,"log_objects":240}
//	<one entry per line, as in an index object, by first offset, key, then commit descending>
//	{"entries":230,"dropped":10}
//
// log_objects counts the index objects covered; the trailer counts the
// entries and those left out: an entry that only restamps a newer entry of
// the same key (Restamped: same objects, runs and records, another from,
// commit or lost) is never needed by a reader and is dropped. Every other
// entry, superseded or not, is kept (Index.All). ReadCheckpoint refuses
// anything else, naming the key and line (FuzzReadCheckpoint).
//
// A void checkpoint ({"checkpoint":1,...,"log_objects":0,"void":B}, no
// entry; VoidCheckpoint) says that W's log above B is being written
// again: W's group offset was moved back to B, under its checkpoints, and
// the replay writes index objects at commits they cover. W's live
// checkpoint (ReadLiveCheckpoint) is its newest, or, when that is void,
// its newest at or below B, and so on. A checkpoint that is not void was
// written after every move back below its commit, so it is a function of
// W's log.
//
// Before its first index object of a partition in a run that starts at
// offset S (its group's committed offset, or the first offset it reads
// when the group has none), a sink (checkpoint.Begin), whether it writes
// checkpoints or not (kafkas3.index.checkpoint.interval 0):
//
//  1. writes its start checkpoint unless W has a live checkpoint at or
//     below S (counting its checkpoints at or below S only): W's
//     checkpoint of its log up to S, at the commit of its last index
//     object at or below S, or, for a writer with none there (a new
//     group), a checkpoint with no entry at S. Both are functions of W's
//     log up to S. Before it, every other writer of the log without any
//     checkpoint (an older kafkas3's) gets its checkpoint over its whole
//     log, as a writer's first checkpoint does in checkpoint.Write;
//  2. overwrites each of W's checkpoints above S with a void one
//     (checkpoint.Void; no delete permission needed).
//
// So every index object of W that no checkpoint covers has a commit above
// W's live checkpoint's, at all times: the run's index objects have
// commits above S, and a crash between the steps, or before the first
// index object, leaves a checkpoint more (an empty one at worst), never a
// writer without one. Readers rely on it ("Reading an archive").
//
// The sink writes its checkpoint of a partition (package checkpoint) every
// kafkas3.index.checkpoint.interval index objects and at the end of
// --once, once the offsets it covers are committed, so a replay never
// rewrites an index object a checkpoint covers. It is derived data: a
// failure, or a crash before it, leaves the previous checkpoint and a
// longer tail. `kafkas3 index rebuild` writes the checkpoints of an archive
// from its log (checkpoint.Rebuild).
//
// # Reading an archive
//
// Load (LoadWith: at most LoadOptions.Concurrency requests at a time)
// finds the partitions of the log by a skip scan (one listing request per
// partition: the first key after each partition's folder), then per
// partition lists its checkpoints (keys only, one per writer per
// kafkas3.index.checkpoint.interval index objects), reads each writer's
// live checkpoint, and lists the log with StartAfter set below the lowest
// live checkpoint's commit (S3 ListObjectsV2 StartAfter; keys sort by the
// 20-digit commit): one listing request per 1,000 index objects of the
// tail, none for the history the checkpoints cover. Of the tail it reads
// each writer's index objects above its own live checkpoint's commit, and
// every index object of a writer without any checkpoint. The cost is
// O(checkpoints + tail), not O(index objects): for a partition of 1,000
// index objects and a checkpoint at the last, 6 keys listed instead of
// 1,005 (Index.Listed).
//
// This is a read of the whole log because of the invariant the sink keeps
// (see Checkpoints: every index object of a writer that no checkpoint
// covers lies above its live checkpoint's commit). It holds for every
// archive written by this version of kafkas3, and for archives written by
// older ones once `kafkas3 index rebuild` has checkpointed every writer
// (or once a sink of this version ran on the partition: its start
// checkpoint checkpoints the writers without one). The load falls back to
// a listing of the partition's whole log, and counts it in
// Index.FullListings, where it cannot rely on it:
//
//   - a partition without any checkpoint (an archive of an older kafkas3;
//     `kafkas3 index rebuild` makes its reads cheap);
//   - a writer with checkpoints but none live (an older kafkas3 voided
//     them without a start checkpoint);
//   - a writer without any checkpoint in the listed tail (a sink of an
//     older kafkas3 writing after the others checkpointed): its index
//     objects may lie below too.
//
// What it cannot see: the index objects of a sink of an older kafkas3
// (without start checkpoints) that writes into the same bucket after a
// rebuild or after a sink of this version checkpointed the partition,
// when they all lie below the lowest live checkpoint (its group far
// behind the others, or moved back). Those are not listed; `kafkas3 index
// rebuild` again checkpoints them and makes the load whole. Nor can a
// checkpoint show what such a sink rewrites below it (a kafkas3 without
// checkpoints writes no void checkpoint when its group is moved back):
// deleting that writer's checkpoints and running `kafkas3 index rebuild`
// makes them its log's again.
//
// EachPartition reads the same, one partition of the log at a time (a few
// at once, sharing LoadOptions.Concurrency), and hands each partition's
// Index to its caller: a reader that keeps only what it needs of each
// partition (kafkas3 verify) holds a few partitions of the index, not
// every entry of a million objects. LoadPartition reads one partition
// the same way (kafkas3 cat). Each load notes the newest modification
// time its listings gave of the index objects and checkpoints
// (Index.Written, kafkas3 ls's last archived time), with no request of its
// own.
//
// A follower (`kafkas3 source --follow`) keeps a Tail instead of loading
// again: its Refresh gives what a load gives then, reading only the index
// objects new or rewritten since (and, of each new checkpoint, the first
// line). Its listing of each partition's log starts, as the load's, at the
// lowest live checkpoint's commit, not after the last key read: a replay
// (a crash before the commit, a group moved back) writes index objects at
// commits already read, under the same keys (another size or ETag: read
// again) or lower ones (new keys), always above the writer's live
// checkpoint. What lies below the listing's start is kept, not listed
// again. A partition whose checkpoints changed otherwise than by new ones
// (voided, a new writer) is loaded again whole.
//
// An index rebuilt from the objects of an archive without one (`kafkas3
// index rebuild --from-objects`, package objindex) is written under the
// writer FromObjectsWriter; its entries of objects without envelopes hold
// offsets assumed from the objects' names, and Load counts the live ones
// in Index.Assumed (kafkas3 verify warns of them).
//
// Load keeps, for every object key, the entry with the highest commit
// (of two with the same commit, the one of the index object whose key
// sorts first): a replay after a crash rewrites an object under the same
// key, as a superset, with a higher commit, and that entry supersedes the
// older one. Index.All keeps every entry read but restamps, for readers
// that match an object to an older entry (a later sink run with a smaller
// flush.size rewrites a key with fewer records under a lower commit).
//
// Analyze then gives per topic and partition (Partition): the offsets held
// (Held, Records), the offsets the sink read or found lost (Consumed), the
// offsets read but absent (Absent), the offsets lost before archiving
// (Lost, LostCount: the entries' lost runs less any offset held), the
// Gaps and the Overlaps. "Complete" means: every
// offset from the lowest from of the partition's entries to its highest
// commit minus one was read by the sink for some live entry. A gap is a run
// of offsets in that range no entry accounts for (a deleted index object,
// or a consumer group moved past offsets it never archived). Offsets below
// the first from are not judged: the index cannot know whether the topic
// held older records that were never archived (retention, a sink started
// at latest). An overlap is a run of offsets held by two or more live
// entries (for example two sink runs with different flush.size into one
// bucket).
//
// # Pruned archives
//
// `kafkas3 prune` records a partition's low watermark next to its
// checkpoints (PrunedKey); every load then leaves out the entries below
// it (pruned.go says how, and Index.Pruned names it).
//
// # Schemas
//
// The schemas that archived keys and values name in Confluent's wire
// format (package archive records them, package schemas fetches and
// registers them) are kept per topic, one object per schema:
//
//	<prefix>schemas/<topic>/<schema id, 10 digits>-<first 16 hex digits of the SHA-256 of the object>.json
//
// (SchemaKey, ParseSchemaKey), one JSON line (Schema; EncodeSchema writes
// the fields in this order and the subjects sorted):
//
//	{"v":1,"id":7,"type":"AVRO","subjects":[{"subject":"orders-value","version":2}],
//	 "references":[{"name":"com.acme.Address","subject":"com.acme.Address","version":1,"id":6}],
//	 "schema":"..."}
//
// The key names the bytes, so a replay writes the same object and a
// schema recorded differently (the registry listed one more subject since)
// goes beside it, never over it. DecodeSchema refuses unknown fields,
// another version, a type other than AVRO, JSON or PROTOBUF, and bytes
// whose id or digest is not the key's (errors wrap ErrMalformed and name
// the key). LoadSchemas reads a topic's schemas (one listing, one read
// each), merging the subjects of objects of one id and refusing two
// different schemas under one id (ErrSchemaConflict, naming both keys).
//
// # Group offset snapshots
//
// The sink also records, per archived topic, snapshots of the consumer
// groups' committed offsets (Snapshot), every offsets.snapshot.interval.ms
// and at the end of --once, at
//
//	<prefix>snapshots/<topic>/<wall time ms, 20 digits>-<writer>.json
//
// (SnapshotKey, ParseSnapshotKey; keys without "-<writer>" are accepted
// too). Each is one JSON object on one line (EncodeSnapshot: fields in
// this order, partitions in numeric order, groups sorted by name, so the
// same snapshot gives the same bytes):
//
//	{"v":1,"topic":"orders","time_ms":1700000000123,
//	 "end_offsets":{"0":120,"1":97},
//	 "groups":{"billing":{"0":120,"1":40},"reports":{"0":0}}}
//
// end_offsets holds every partition's end offset and groups each group's
// committed offset (the next offset it reads) where it has one, taken
// together at time_ms. DecodeSnapshot refuses anything else: another
// version, unknown, missing or repeated fields, repeated partitions or
// groups, non-integer or negative offsets, a partition not written in
// canonical decimal, a group partition missing from end_offsets, a topic
// or time other than the key's. Its errors wrap ErrMalformed and name the
// key and line; it never panics (FuzzDecodeSnapshot).
//
// ListSnapshots lists one topic's snapshots newest first without reading
// them; LoadSnapshot reads the newest one taken at or before a time (or
// the newest of all).
//
// # Topic descriptions
//
// Next to the index the sink records each archived topic's partition
// count, replication factor and the configs set on the topic itself
// (DescribeConfigs source DYNAMIC_TOPIC_CONFIG; broker defaults and broker
// configs are left out), at start and whenever they change:
//
//	<prefix>topics/<topic>/<wall time ms, 20 digits>-<writer>.json
//
// (TopicKey, ParseTopicKey), one JSON object (Topic) and "\n":
//
//	{"v":1,"topic":"orders","time_ms":1700000000123,"partitions":3,"replication_factor":2,
//	 "configs":{"cleanup.policy":"compact","retention.ms":"86400000"}}
//
// topic_id (omitted when unknown) is the topic's Kafka id, as Kafka's
// tools print it (FormatTopicID: URL-safe base64 without padding, 22
// characters); "generation":n (omitted for 1) numbers the topics of one
// name the archive holds: a topic deleted and created again is archived as
// generation n >= 2 under its own roots (GenerationTopicsDir:
// "<topics.dir>/generation=n"; GenerationPrefix: "<prefix>generation=n/",
// which holds its index, snapshots and own descriptions). Folders named
// "generation=n" under topics.dir are never topics (IsGenerationDir).
//
// EncodeTopic writes the fields in this order and the configs sorted by
// key, so the same description gives the same bytes; DecodeTopic refuses
// unknown fields, a description of another topic or time than its key, and
// anything Topic.Validate refuses (errors wrap ErrMalformed, never a panic:
// FuzzDecodeTopic). LatestTopic returns the description with the highest
// time, or nil for an archive without one (older kafkas3, Confluent's);
// TopicAt the one in force at a time (the latest at or before it).
//
// # Use
//
//	ix, err := index.Load(ctx, store, index.DefaultPrefix, nil)
//	for _, p := range index.Analyze(ix.Entries) {
//		fmt.Println(p.Topic, p.Partition, p.Records, p.Gaps, p.Overlaps)
//	}
package index
