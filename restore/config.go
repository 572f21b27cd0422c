package restore

import (
	"github.com/kafkas3/kafkas3/outage"
	"regexp"
	"time"

	"github.com/kafkas3/kafkas3/format"
	"github.com/kafkas3/kafkas3/partition"
	"github.com/twmb/franz-go/pkg/kgo"
)

// OnError is behavior.on.error for malformed keys inside a topic folder.
type OnError string

// Error behaviours, as the Confluent source names them.
const (
	OnErrorFail   OnError = "fail"
	OnErrorIgnore OnError = "ignore"
	OnErrorLog    OnError = "log"
)

// Config is the source's typed configuration, built and validated by cmd.
type Config struct {
	Brokers []string // bootstrap.servers of the target cluster

	// Which archived topics to restore: exactly one of Topics and TopicsRegex.
	Topics      []string
	TopicsRegex *regexp.Regexp

	// Rename maps an archived topic name to the target topic name, like
	// Connect's RegexRouter: RenameRegex must match the whole name, and
	// Rename is the replacement ($0, $1, ... expand). Empty Rename keeps names.
	RenameRegex *regexp.Regexp
	Rename      string

	Keys    partition.KeyConfig
	Format  format.Format // with compression, as the sink wrote it
	OnError OnError

	// TombstonePartition is the sink's tombstone.encoded.partition: the
	// folder of the keys-only objects (with their .headers objects) that
	// behavior.on.null.values=write makes of tombstones. Those objects are
	// restored as records with a nil value. Empty means
	// DefaultTombstonePartition.
	TombstonePartition string

	// IndexPrefix is kafkas3.index.prefix: keys under it are the archive
	// index (package index), never a topic folder, even when topics.dir is
	// empty. Empty means no index prefix is skipped.
	IndexPrefix string

	// Timestamps is --timestamps: envelope records (store.envelope) are
	// produced with their archived timestamp (TimestampsOriginal, also for
	// "") or the producer's time (TimestampsNow). Records of other objects
	// never carry a timestamp.
	Timestamps Timestamps

	// Until is --until: restore each partition as the cluster held it at
	// this time, a prefix of the archive's record stream cut where
	// PartitionPlan.Cut says (from the snapshots under IndexPrefix and the
	// records' timestamps). Zero restores everything. Not with Follow.
	Until time.Time

	// Shard is --shard I/N: restore only the partitions of one shard (see
	// Shard). The zero value restores every partition.
	Shard Shard

	// RestoreGroups is --restore-groups: once the records are restored
	// (also on a re-run that produces nothing), commit on the target the
	// consumer group offsets of each topic's snapshot (the newest, or
	// with Until the one of that moment), each translated to the target
	// offset of the first restored record at or after it. Not with Follow.
	RestoreGroups bool
	// GroupRenameRegex and GroupRename are --group-rename REGEX=REPLACEMENT:
	// a group whose whole name matches is restored under the replacement
	// ($0, $1, ${name} expand, as Rename); others keep their name. Nil
	// keeps every name.
	GroupRenameRegex *regexp.Regexp
	GroupRename      string

	// ValueEncoder frames typed values (Avro and Parquet archives) in
	// Confluent's wire format for the target's Schema Registry, registering
	// each schema under "<target topic>-value" when absent. It is required
	// when the archive holds typed values; JSON and bytes values are
	// produced as read.
	ValueEncoder Encoder
	// KeyEncoder does the same for typed keys read from .keys objects,
	// under "<target topic>-key". Nil restores string and bytes keys as
	// their bytes (StringConverter, ByteArrayConverter) and refuses other
	// key types.
	KeyEncoder Encoder
	// Schemas registers the schemas the archive records (schemas.go) in
	// the target registry; nil produces wire-format ids as archived.
	Schemas SchemaRegistrar

	// ArchiveTopics is what the same config would archive (sink's topics /
	// topics.regex); restoring into one of them is refused unless
	// AllowSameTopic (feedback-loop guard).
	ArchiveTopics      []string
	ArchiveTopicsRegex *regexp.Regexp
	AllowSameTopic     bool

	// AllowGaps restores what the archive holds when it has gaps (offsets
	// no readable object holds) or damaged objects, instead of stopping
	// before producing anything; every gap is logged and counted.
	AllowGaps bool

	// ReadOnce checks an indexed archive from its index and the listing
	// before anything is produced, and reads each object once, when it is
	// restored (oneread.go; doc.go, "One read per object"): damage only a
	// read finds then stops the restore at that object's boundary. It
	// applies with behavior.on.error=fail, without AllowGaps and Until,
	// and not to a dry run. The zero value keeps the whole-archive proof
	// (every object read before anything is produced, nothing produced
	// unless every byte is proven), as an archive without index always
	// gets. kafkas3 source sets it unless --prove-first.
	ReadOnce bool
	// PrefetchBytes is how many stored bytes of objects (with their
	// twins) a partition stream may load ahead of production at once
	// (prefetch.go): at least the next object, and more, at most
	// prefetchMax, while they hold less than PrefetchBytes. Zero loads one
	// object ahead. kafkas3 source sets DefaultPrefetchBytes.
	PrefetchBytes int64

	// AllowUnknownOrder restores partitions whose record order is unknown
	// (PartitionPlan.Order is OrderUnknown: objects in several
	// folders whose records carry no offsets) object by object in
	// start-offset order, instead of stopping before producing anything;
	// each such partition is logged and counted in the Summary.
	AllowUnknownOrder bool

	// SpillBytes is how many bytes of one object's decoded records are
	// kept in memory before the rest goes to an unlinked temporary file in
	// TempDir (empty: os.TempDir()). Zero means DefaultSpillBytes. Objects
	// of one partition whose offsets interleave (several folders) are
	// loaded together and share it: each keeps SpillBytes divided by how
	// many are loaded at most at once. Each stream also reads its next
	// object ahead while it produces one; across the restore, loaded
	// objects keep at most Parallelism × SpillBytes, and at most
	// MaxRecordMemory, of decoded records in memory, and records past
	// that go to the temporary files too. A Parquet object being loaded
	// is copied to a temporary file in TempDir as well (randomaccess.go).
	SpillBytes int64
	TempDir    string

	// RetryTimeout bounds how long transient cluster errors (coordinator
	// not available or loading, not coordinator, leader changes, a topic
	// not visible yet) are retried on each admin step. Zero means
	// DefaultRetryTimeout.
	RetryTimeout time.Duration

	// CreateTopics creates missing targets as the archive's topic
	// description says (index.Topic: partition count, replication factor,
	// configs), or, without one, with the archive's partition count and
	// the broker's defaults. Every creation is validated by the cluster
	// first (validate only), so a refused config is reported by name
	// before any topic is created or any record produced.
	CreateTopics bool
	// ReplicationFactor (--replication-factor), when positive, replaces
	// the archived replication factor of created topics. The factor is
	// capped at the number of brokers, with a warning.
	ReplicationFactor int16
	// TopicConfigs (--topic-config) are set on created topics over the
	// archived configs.
	TopicConfigs map[string]string
	DryRun       bool          // print the plan, produce nothing
	Follow       bool          // keep polling for new objects
	PollInterval time.Duration // s3.poll.interval.ms
	// Health receives the state of the target brokers, the store and the
	// registry as the restore sees them (down with the cause, up again);
	// nil: none. In follow mode an outage of one is ridden out.
	Health outage.Setter
	// BatchSize is record.batch.max.size. It is accepted for compatibility
	// with the Confluent source; the producer batches by bytes instead
	// (franz-go's ProducerBatchMaxBytes), so the engine does not use it.
	BatchSize int

	// ReadConcurrency is kafkas3.read.concurrency: the store requests
	// kept in flight while the archive index is read (index.LoadOptions)
	// and the objects the plan's proof reads at once (eachObject: objects
	// of 16 MiB or more Parallelism at a time); 0 means
	// index.DefaultConcurrency.
	ReadConcurrency int
	// Parallelism bounds how many target partitions are read and handed
	// to the producer at once (a partition whose records are all handed
	// over waits for their acknowledgements without counting), and how
	// many large objects the plan's proof reads at once (eachObject).
	// Zero means DefaultParallelism.
	Parallelism int

	// VerifyRecords is how many already-restored records at the end of a
	// target partition are compared with the archive before resuming.
	// Zero means DefaultVerifyRecords.
	VerifyRecords int

	// Identity names the archive (store URL, bucket, topics.dir) in the
	// resume marker, so a restore of another archive into the same target is
	// detected.
	Identity string

	// ExcludeKeys (--exclude-keys-file) lists record keys to erase: each
	// archived record with one of them is restored as a tombstone (its
	// key, a null value, no headers), in its place, so the record stream
	// keeps its length and order (resuming, group offsets and the
	// verification of a resumed run are unchanged). Nil: none.
	ExcludeKeys map[string]struct{}
	// Filter leaves records out of the restore (filter.go); the zero
	// Filter keeps them all. Not with Follow; with RestoreGroups the
	// group offsets count the records it keeps (filter.go).
	Filter Filter
	// SkipExpired is --skip-expired: leave out, counted, the envelope
	// records a target would delete at once, those stamped before
	// now - its retention.ms (expired.go). Not with Follow, nor with
	// Timestamps now (nothing expires).
	SkipExpired bool

	// MaxBytesPerSec and MaxRecordsPerSec (--max-bytes-per-sec,
	// --max-records-per-sec) pace production for a live target: records
	// are handed to the producer no faster, across every partition of
	// the process (package throttle); bytes are each record's key, value
	// and headers. Zero: no limit.
	MaxBytesPerSec, MaxRecordsPerSec float64

	// Repartition is --repartition (repartition.go): records are placed
	// on the target's partitions, whatever their count, by key
	// (RepartitionMurmur2) or round robin, each source partition's stream
	// produced exactly once by a transactional producer (txn.go).
	// RepartitionNone (the zero value) keeps every record in its archived
	// partition. Not with RestoreGroups or Follow.
	Repartition Repartition
	// Partitions is --partitions: with Repartition and CreateTopics, the
	// partition count of created targets (0: the archive's); an existing
	// target with another count is refused.
	Partitions int32
	// TxnRecords bounds the records of one transaction of a
	// repartitioning stream; 0 means DefaultTxnRecords.
	TxnRecords int

	// KafkaOpts are extra client options (security, client id, ...). They
	// are applied after the engine's own options.
	KafkaOpts []kgo.Opt
	// Observer, when set, is told what the restore does (metrics).
	Observer Observer
}

// MaxRecordMemory bounds the decoded records that the loaded objects of
// a restore keep in memory together (memBudget), whatever Parallelism ×
// SpillBytes: a 1 GiB restore of objects of 44 MB peaked at 1.1-1.2 GiB
// RSS with 8 × 64 MiB and at 433-472 MiB with 96 MiB, as fast. With
// 48 MiB, a 32 MiB producer buffer and kafkas3 source's memory limit it
// stays under 256 MiB (BENCHMARKS.md, "Restore memory"): at 64 MiB the
// live heap of a bytes restore was 141 MB at its peak, 67 MB of it
// decoded records. Records past it go to their objects' temporary files.
const MaxRecordMemory = 48 << 20

// Defaults for the zero values of Config.
const (
	// DefaultPrefetchBytes is what kafkas3 source sets PrefetchBytes to.
	DefaultPrefetchBytes = 4 << 20
	DefaultParallelism   = 8
	DefaultVerifyRecords = 3
	DefaultPollInterval  = time.Minute
	DefaultRetryTimeout  = 60 * time.Second
	// DefaultTombstonePartition is tombstone.encoded.partition's default.
	DefaultTombstonePartition = "tombstone"
)
