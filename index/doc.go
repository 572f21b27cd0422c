// Package index is the archive index: the record of what every committed
// object holds, written by the sink next to the archive and read by
// `kafkas3 verify` and the source's planner. It is pure (types, encoding,
// decoding, coverage analysis); the only I/O is Load, through the
// two-method Store (which every s3store.Store satisfies).
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
//	{"v":1,"topic":"orders","partition":0,"key":"topics/orders/partition=0/orders+0+0000000100.json",
//	 "objects":[{"key":"topics/orders/partition=0/orders+0+0000000100.json","part":"","size":812,"sha256":"<64 hex>"},
//	            {"key":"topics/orders/partition=0/orders+0+0000000100.keys.json","part":"keys","size":40,"sha256":"<64 hex>"}],
//	 "runs":[[100,101],[103,103]],"records":3,"from":100,"commit":104,
//	 "min_ts":1700000000000,"max_ts":1700000000500,"envelope":false,"tombstone":false}
//
// The fields:
//
//   - v: Version (1). A reader refuses another version.
//   - topic, partition: the Kafka topic and partition.
//   - key: the value object's key; for a tombstone object
//     (behavior.on.null.values=write, "tombstone":true) the key of its
//     keys-only object.
//   - objects: every object of the entry: the value object (part ""), and
//     the parallel "keys" and "headers" objects of store.kafka.keys and
//     store.kafka.headers, each with its size in bytes and the SHA-256 of
//     its bytes (lower case hex). A tombstone entry has no "" object.
//   - runs: the Kafka offsets the objects hold, as inclusive [first,last]
//     runs in increasing order, disjoint and not touching: record i of
//     each object has the i-th offset of the runs (Entry.Offset). Offsets
//     skip where Kafka has none (compaction, transaction markers), where
//     the sink skipped a record (an ignored null, a bad record) and where
//     a partitioner put records of the partition into another folder.
//   - records: the number of offsets in runs, the record count of each
//     object.
//   - from, commit: the sink read every offset in [from, commit-1] of the
//     partition for this rotation, and committed commit (the next offset
//     to consume) once the objects were stored. An offset in that range
//     that no entry holds was absent or skipped, not lost.
//   - min_ts, max_ts: the smallest and largest record timestamp, in Unix
//     milliseconds.
//   - envelope: the objects use the lossless envelope (store.envelope).
//
// Decode reads one index object and refuses anything else: unknown fields,
// a line that breaks a rule above (Entry.Validate), an entry of another
// topic, partition or commit than the key says, a repeated entry key, an
// empty object or a missing final newline. Its errors wrap ErrMalformed and
// name the index key and line; it never panics (FuzzDecode).
//
// # Reading an archive
//
// Load lists the index folder (optionally per topic) and keeps, for every
// object key, the entry with the highest commit: a replay after a crash
// rewrites an object under the same key, as a superset, with a higher
// commit, and that entry supersedes the older one.
// Index.All keeps every entry read, for readers that match an object to
// an older entry (a later sink run with a smaller flush.size rewrites a
// key with fewer records under a lower commit).
//
// Analyze then gives per topic and partition (Partition): the offsets held
// (Held, Records), the offsets the sink read (Consumed), the offsets read
// but absent (Absent), the Gaps and the Overlaps. "Complete" means: every
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
