package cmd

import (
	"math"
	"sort"
	"strings"
)

// Command names the kafkas3 command a configuration is loaded for. Keys in
// the key table say which commands use them; a key that belongs only to the
// other command is accepted and reported as ignored, so one file can serve
// both `sink` and `source`.
type Command uint8

// The commands that read configuration.
const (
	CommandSink Command = 1 << iota
	CommandSource
)

const cmdBoth = CommandSink | CommandSource

// String returns the command's CLI name.
func (c Command) String() string {
	switch c {
	case CommandSink:
		return "sink"
	case CommandSource:
		return "source"
	case cmdBoth:
		return "sink, source"
	default:
		return "unknown command"
	}
}

// keyStatus says what kafkas3 does with a recognised key.
type keyStatus uint8

const (
	// statusActive keys are parsed, validated and used.
	statusActive keyStatus = iota
	// statusIgnored keys only mean something inside Kafka Connect (or to the
	// other command). They are accepted and listed once in an info line.
	statusIgnored
	// statusUnsupported keys belong to Confluent features this version does
	// not have yet. They are accepted only at their Confluent default (which
	// changes nothing); any other value is an error, never silently dropped.
	statusUnsupported
	// statusRejected keys would change the data (transforms). Any non-empty
	// value is an error.
	statusRejected
)

// valueKind is how a key's string value is parsed.
type valueKind uint8

const (
	kindString valueKind = iota
	kindInt
	kindBool
	kindList
	kindChoice
)

// choice is one allowed value of a kindChoice key: a canonical short name,
// the aliases (Confluent class names) that mean the same, and whether this
// version supports it yet.
type choice struct {
	name        string
	aliases     []string
	unsupported bool
}

// keySpec is one row of the key table. The table is the single source of
// truth for names, defaults, allowed values, documentation and which
// command uses a key; parsing and the Markdown reference both read it.
type keySpec struct {
	key      string
	prefix   bool // key ends in "." and matches every key below it
	def      string
	kind     valueKind
	min, max int64 // kindInt bounds, inclusive
	choices  []choice
	// required holds the commands that need the key: "required" in their
	// reference, enforced by their typed parser (TestRequiredKeys checks
	// that the two agree).
	required Command
	allowed  string // overrides the generated "allowed" text
	secret   bool   // never echo the value in errors
	raw      bool   // keep leading/trailing whitespace of the value
	commands Command
	status   keyStatus
	doc      string
}

const (
	maxInt64 = math.MaxInt64
	maxInt32 = math.MaxInt32
)

// Class-name prefixes used by Confluent.
const (
	s3FormatPkg    = "io.confluent.connect.s3.format."
	partitionerPkg = "io.confluent.connect.storage.partitioner."
)

// configKeys returns the key table. It is built on each call (the package
// keeps no globals); callers index it once per load.
//
// Decisions worth knowing:
//   - store.local.dir is the one setting that selects the local-directory
//     store. storage.class is accepted for Connect compatibility; "local" or
//     "file" there also needs store.local.dir.
//   - errors.tolerance, the dead letter queue keys and errors.log.enable act
//     as in Kafka Connect, for the sink. errors.retry.* and
//     errors.log.include.messages are ignored.
//   - key.converter and value.converter (with their schema.registry.url,
//     basic.auth.* and schemas.enable) are active; their other settings
//     (key.converter.* and value.converter.*) are ignored.
//   - transforms change records, and an archive must hold them unchanged, so
//     transforms and transforms.* are rejected rather than ignored.
//   - Keys of the other command are ignored, so sink and source can share a file.
func configKeys() []keySpec {
	return []keySpec{
		// Identity and Kafka client.
		{key: "name", required: CommandSink, commands: CommandSink,
			doc: "Name of this archiver. It names the default consumer group, as Kafka Connect does."},
		{key: "bootstrap.servers", kind: kindList, required: CommandSink, allowed: "comma-separated host:port list", commands: cmdBoth,
			doc: "Kafka brokers to connect to first. The source needs them unless --dry-run (or takes --bootstrap-servers)."},
		{key: "group.id", commands: CommandSink, allowed: "any string; default connect-<name>",
			doc: "Consumer group. The default equals Kafka Connect's group for a sink of the same name, so kafkas3 resumes where the connector stopped."},
		{key: "group.instance.id", commands: CommandSink, allowed: "any string, unique per instance",
			doc: "Static group membership: a restarted instance with the same id takes its partitions back at once instead of waiting for session.timeout.ms. Use a stable per-host value (for example the host name) under systemd."},
		{key: "session.timeout.ms", kind: kindInt, def: "45000", min: 6000, max: 1800000, commands: CommandSink,
			doc: "How long the group waits for a silent instance (a crashed one) before giving its partitions to the others; Kafka's default."},
		{key: "security.protocol", kind: kindChoice, def: "PLAINTEXT", commands: cmdBoth,
			choices: []choice{{name: "PLAINTEXT"}, {name: "SSL"}, {name: "SASL_PLAINTEXT"}, {name: "SASL_SSL"}},
			doc:     "How to talk to the brokers: plain TCP or TLS, with or without SASL."},
		{key: "sasl.mechanism", kind: kindChoice, commands: cmdBoth,
			choices: []choice{{name: "PLAIN"}, {name: "SCRAM-SHA-256"}, {name: "SCRAM-SHA-512"},
				{name: "GSSAPI", unsupported: true}, {name: "OAUTHBEARER", unsupported: true}},
			doc: "SASL mechanism; required when security.protocol is SASL_PLAINTEXT or SASL_SSL."},
		{key: "sasl.username", commands: cmdBoth,
			doc: "SASL user name (kafkas3's simple form of sasl.jaas.config)."},
		{key: "sasl.password", secret: true, commands: cmdBoth,
			doc: "SASL password."},
		{key: "ssl.ca.location", commands: cmdBoth, allowed: "path to a PEM file",
			doc: "CA certificates to trust for TLS to the brokers; the system pool when unset."},
		{key: "ssl.certificate.location", commands: cmdBoth, allowed: "path to a PEM file",
			doc: "Client certificate for TLS client authentication; needs ssl.key.location."},
		{key: "ssl.key.location", commands: cmdBoth, allowed: "path to a PEM file",
			doc: "Private key of ssl.certificate.location."},
		{key: "isolation.level", kind: kindChoice, def: "read_committed", commands: CommandSink,
			choices: []choice{{name: "read_committed"}, {name: "read_uncommitted"}},
			doc:     "Which records the sink reads. read_committed archives committed records only: records of aborted transactions never reach the archive, and --once stops at the last stable offset. Kafka Connect's consumer defaults to read_uncommitted, which archives aborted records as if they were committed; set read_uncommitted to archive exactly what such a connector did."},
		{key: "consumer.override.isolation.level", kind: kindChoice, commands: CommandSink,
			choices: []choice{{name: "read_committed"}, {name: "read_uncommitted"}},
			allowed: "read_committed, read_uncommitted; unset means isolation.level",
			doc:     "Kafka Connect's per-connector form of isolation.level; it wins over isolation.level when set, as in Connect."},
		{key: "sasl.jaas.config", status: statusUnsupported, secret: true, commands: cmdBoth,
			doc: "The JAAS login line of Java clients; set sasl.username and sasl.password instead."},

		// What to read.
		{key: "topics", kind: kindList, commands: cmdBoth, allowed: "comma-separated topic names",
			doc: "Topics to archive. Set exactly one of topics and topics.regex. The source restores them when --topics is not given, and refuses to write into them (feedback-loop guard)."},
		{key: "topics.regex", commands: cmdBoth, allowed: "a regular expression (RE2 syntax)",
			doc: "Archive every topic whose whole name matches this expression. Set exactly one of topics and topics.regex. The source restores the matching archived topics when --topics is not given, and refuses to write into matching topics (feedback-loop guard)."},

		// Object layout.
		{key: "topics.dir", def: "topics", commands: cmdBoth,
			doc: "Key prefix above the topic folders; empty means no prefix."},
		{key: "directory.delim", def: "/", commands: cmdBoth, allowed: "non-empty string",
			doc: "Separator between the parts of an object key."},
		{key: "file.delim", def: "+", commands: cmdBoth, allowed: "non-empty string",
			doc: "Separator between topic, partition and start offset in a file name."},
		{key: "filename.offset.zero.pad.width", kind: kindInt, def: "10", min: 0, max: 19, commands: cmdBoth,
			doc: "Digits the start offset in a file name is zero-padded to."},

		// The archive index (kafkas3's own, not Confluent's).
		{key: "kafkas3.index.enabled", kind: kindBool, def: "true", commands: CommandSink,
			doc: "Write the archive index: for each partition rotation, before its offset is committed, one object <kafkas3.index.prefix>index/<topic>/<partition>/<commit offset, 20 digits>-<writer>.jsonl (writer: 12 hex digits of the SHA-256 of group.id) listing every object of the rotation with its offsets, record count, timestamps, size and SHA-256. kafkas3 verify and the source use it to prove an archive complete; false writes no index (one PUT less per rotation)."},
		{key: "kafkas3.index.prefix", def: "_kafkas3/", commands: cmdBoth, allowed: "folder names each ending in \"/\", outside topics.dir",
			doc: "Key prefix of the archive index. It must lie outside topics.dir so query engines scanning topics.dir never see it; with an empty topics.dir the source and kafkas3 verify skip it rather than take it for a topic folder (so no topic may be named like its first folder)."},

		{key: "offsets.snapshot.interval.ms", kind: kindInt, def: "60000", min: 0, max: maxInt64, commands: CommandSink,
			doc: "kafkas3 only: every this many milliseconds, and at the end of --once after its final commit, snapshot each archived topic's partition end offsets (last stable offsets) and the committed offsets of every consumer group on it (see groups.regex; never the sink's own group nor kafkas3-restore-* groups), taken together, into <kafkas3.index.prefix>snapshots/<topic>/<wall time ms, 20 digits>-<writer>.json. A snapshot equal to the previous one is not written again. kafkas3 source --restore-groups restores the groups from them. Missing ACLs (DESCRIBE on the groups or the cluster) give one warning; archiving goes on. 0 writes none; needs kafkas3.index.enabled."},
		{key: "groups.regex", commands: CommandSink, allowed: "a regular expression (RE2 syntax)",
			doc: "kafkas3 only: snapshot only the consumer groups whose whole name matches this expression (offsets.snapshot.interval.ms); empty means every group."},
		{key: "kafkas3.topics.check.interval.ms", kind: kindInt, def: "300000", min: 1000, max: maxInt32, commands: CommandSink,
			doc: "How often a sink that runs until stopped describes the archived topics again (it always does at start, --once too): partition count, replication factor and every config set on the topic (not the broker defaults). A description that differs from the latest one stored is written to <kafkas3.index.prefix>topics/<topic>/<wall time ms, 20 digits>-<writer>.json; the source creates missing targets from it (--create-topics). Needs kafkas3.index.enabled; a broker that refuses DescribeConfigs gives one warning and archiving goes on."},

		// Rotation.
		{key: "flush.size", kind: kindInt, min: 1, max: maxInt64, required: CommandSink, commands: CommandSink,
			doc: "Records per file; the count covers all open files of one Kafka partition."},
		{key: "rotate.interval.ms", kind: kindInt, def: "-1", min: -1, max: maxInt64, commands: CommandSink,
			doc: "Close a file once its records span this many milliseconds of record time; -1 disables. Deterministic."},
		{key: "rotate.schedule.interval.ms", kind: kindInt, def: "-1", min: -1, max: maxInt64, commands: CommandSink,
			doc: "Close files on a wall-clock schedule, also on idle partitions; -1 disables. Needs timezone. Not deterministic: weakens exactly-once file boundaries."},
		{key: "timezone", commands: cmdBoth, allowed: "IANA zone name, e.g. UTC or Europe/Berlin",
			doc: "Time zone for scheduled rotation and time-based partitioning."},
		{key: "locale", commands: cmdBoth, allowed: "locale tag, e.g. en or en_US",
			doc: "Locale for time-based partitioning (accepted for compatibility)."},

		// Store selection.
		{key: "storage.class", kind: kindChoice, def: "s3", commands: cmdBoth,
			choices: []choice{
				{name: "s3", aliases: []string{"io.confluent.connect.s3.storage.S3Storage", "S3Storage"}},
				{name: "local", aliases: []string{"file"}},
			},
			doc: "Object store kind. Accepted for Connect compatibility; store.local.dir is what selects the local store."},
		{key: "store.local.dir", commands: cmdBoth, allowed: "directory path",
			doc: "kafkas3 only: write objects under this local directory instead of S3. Setting it selects the local store; the S3 keys are then not needed."},

		// S3.
		{key: "s3.bucket.name", commands: cmdBoth, allowed: "bucket name; required for S3",
			doc: "Bucket that holds the archive."},
		{key: "s3.region", def: "us-west-2", commands: cmdBoth, allowed: "non-empty string",
			doc: "Region of the bucket."},
		{key: "store.url", commands: cmdBoth, allowed: "URL; https:// is added when there is no scheme",
			doc: "Endpoint of a non-AWS S3-compatible store."},
		{key: "s3.path.style.access.enabled", kind: kindBool, def: "true", commands: cmdBoth,
			doc: "Address the bucket in the URL path rather than in the host name."},
		{key: "s3.path.style.access", kind: kindBool, def: "true", commands: CommandSource,
			doc: "The source's name for s3.path.style.access.enabled; when both are set they must agree."},
		{key: "s3.part.size", kind: kindInt, def: "26214400", min: 5242880, max: maxInt32, commands: CommandSink,
			doc: "Bytes per multipart-upload part."},
		{key: "s3.part.retries", kind: kindInt, def: "3", min: 0, max: maxInt32, commands: cmdBoth,
			doc: "Retries of a failed S3 request."},
		{key: "s3.retry.backoff.ms", kind: kindInt, def: "200", min: 0, max: maxInt64, commands: cmdBoth,
			doc: "Base of the exponential, jittered wait between S3 retries, in milliseconds."},
		{key: "s3.compression.type", kind: kindChoice, def: "none", commands: cmdBoth,
			choices: []choice{{name: "none"}, {name: "gzip"}},
			doc:     "Compress json and bytes files; gzip adds .gz to the name. The source reads the objects with this extension."},
		{key: "s3.compression.level", kind: kindInt, def: "-1", min: -1, max: 9, commands: CommandSink,
			doc: "gzip level; -1 is the library default."},
		{key: "s3.ssea.name", kind: kindChoice, commands: cmdBoth,
			choices: []choice{{name: "AES256"}, {name: "aws:kms"}, {name: "aws:kms:dsse"}},
			doc:     "Server-side encryption algorithm for new objects; none when unset."},
		{key: "s3.sse.kms.key.id", commands: cmdBoth,
			doc: "KMS key for aws:kms or aws:kms:dsse encryption."},
		{key: "s3.sse.customer.key", secret: true, commands: cmdBoth, allowed: "base64 of 32 bytes",
			doc: "Customer-provided key (SSE-C); with s3.ssea.name AES256 or unset."},
		{key: "s3.acl.canned", kind: kindChoice, commands: CommandSink,
			choices: []choice{{name: "private"}, {name: "public-read"}, {name: "public-read-write"},
				{name: "authenticated-read"}, {name: "log-delivery-write"}, {name: "bucket-owner-read"},
				{name: "bucket-owner-full-control"}, {name: "aws-exec-read"}},
			doc: "Canned ACL for new objects; none when unset."},
		{key: "aws.access.key.id", commands: cmdBoth,
			doc: "Static access key; set with aws.secret.access.key, else the default credential chain is used."},
		{key: "aws.secret.access.key", secret: true, commands: cmdBoth,
			doc: "Static secret key; set with aws.access.key.id."},
		{key: "s3.credentials.provider.class", kind: kindChoice, commands: cmdBoth,
			choices: []choice{
				{name: "default", aliases: []string{
					"software.amazon.awssdk.auth.credentials.DefaultCredentialsProvider",
					"com.amazonaws.auth.DefaultAWSCredentialsProviderChain"}},
				{name: "assume-role", aliases: []string{"io.confluent.connect.s3.auth.AwsAssumeRoleCredentialsProvider"}, unsupported: true},
			},
			doc: "Where credentials come from; only the default AWS chain (plus static keys) is supported."},

		// Format.
		{key: "format.class", kind: kindChoice, required: cmdBoth, commands: cmdBoth,
			choices: []choice{
				{name: "json", aliases: []string{s3FormatPkg + "json.JsonFormat", "JsonFormat"}},
				{name: "bytes", aliases: []string{"bytearray", s3FormatPkg + "bytearray.ByteArrayFormat", "ByteArrayFormat"}},
				{name: "avro", aliases: []string{s3FormatPkg + "avro.AvroFormat", "AvroFormat"}},
				{name: "parquet", aliases: []string{s3FormatPkg + "parquet.ParquetFormat", "ParquetFormat"}},
			},
			doc: "File format. Confluent class names and short names both work. avro and parquet need a schema-aware value.converter (AvroConverter, or JsonConverter with schemas)."},
		{key: "avro.codec", kind: kindChoice, def: "null", commands: CommandSink,
			choices: []choice{{name: "null"}, {name: "deflate"}, {name: "snappy"}, {name: "bzip2"}, {name: "zstandard", aliases: []string{"zstd"}}},
			doc:     "Block compression inside .avro files (Confluent's null, deflate, snappy, bzip2, plus zstandard)."},
		{key: "parquet.codec", kind: kindChoice, def: "snappy", commands: cmdBoth,
			choices: []choice{{name: "none", aliases: []string{"uncompressed"}}, {name: "snappy"}, {name: "gzip"}, {name: "zstd"}, {name: "lz4_raw"}, {name: "brotli"},
				{name: "lz4", unsupported: true}, {name: "lzo", unsupported: true}},
			doc: "Compression inside .parquet files; it also names the extension (.snappy.parquet, .gz.parquet, .zstd.parquet, .lz4raw.parquet, .br.parquet, .parquet). Hadoop-framed lz4 and lzo are not supported."},

		// Converters.
		{key: "value.converter", kind: kindChoice, commands: cmdBoth, choices: converterChoices(),
			doc: "How record values are decoded before writing, as Kafka Connect's converter: avro (Confluent wire format with a Schema Registry), json (JsonConverter), string, bytearray. Unset: the raw bytes."},
		{key: "value.converter.schema.registry.url", commands: cmdBoth, allowed: "URL, or comma-separated URLs",
			doc: "Schema Registry of the value converter; required with avro. user:password@ in the URL is used with basic.auth.credentials.source URL."},
		{key: "value.converter.basic.auth.credentials.source", kind: kindChoice, def: "URL", commands: cmdBoth,
			choices: []choice{{name: "URL"}, {name: "USER_INFO"}},
			doc:     "Where the registry credentials come from: the URL, or value.converter.basic.auth.user.info."},
		{key: "value.converter.basic.auth.user.info", secret: true, commands: cmdBoth, allowed: "user:password",
			doc: "Registry credentials with basic.auth.credentials.source USER_INFO."},
		{key: "value.converter.schemas.enable", kind: kindBool, def: "true", commands: cmdBoth,
			doc: "JsonConverter: values are {\"schema\", \"payload\"} envelopes (Connect's default); false: plain JSON without a schema."},
		{key: "key.converter", kind: kindChoice, commands: cmdBoth, choices: converterChoices(),
			doc: "How record keys are decoded, as value.converter. A key that cannot be decoded makes the record a bad record (see errors.tolerance). Unset: keys are not decoded."},
		{key: "key.converter.schema.registry.url", commands: cmdBoth, allowed: "URL, or comma-separated URLs",
			doc: "Schema Registry of the key converter; required with avro."},
		{key: "key.converter.basic.auth.credentials.source", kind: kindChoice, def: "URL", commands: cmdBoth,
			choices: []choice{{name: "URL"}, {name: "USER_INFO"}},
			doc:     "Where the key converter's registry credentials come from."},
		{key: "key.converter.basic.auth.user.info", secret: true, commands: cmdBoth, allowed: "user:password",
			doc: "Key converter registry credentials with USER_INFO."},
		{key: "key.converter.schemas.enable", kind: kindBool, def: "true", commands: cmdBoth,
			doc: "JsonConverter keys: schema envelopes (Connect's default) or plain JSON."},
		{key: "format.bytearray.separator", def: "\n", raw: true, commands: cmdBoth, allowed: "any string, whitespace kept",
			doc: "Bytes written after each record by the bytes format."},
		{key: "format.bytearray.extension", def: ".bin", commands: cmdBoth, allowed: "string starting with a dot",
			doc: "File extension of the bytes format, before .gz."},
		{key: "partitioner.class", kind: kindChoice, def: "default", commands: cmdBoth,
			choices: []choice{
				{name: "default", aliases: []string{partitionerPkg + "DefaultPartitioner", "DefaultPartitioner"}},
				{name: "field", aliases: []string{partitionerPkg + "FieldPartitioner", "FieldPartitioner"}, unsupported: true},
				{name: "time", aliases: []string{partitionerPkg + "TimeBasedPartitioner", "TimeBasedPartitioner"}, unsupported: true},
				{name: "daily", aliases: []string{partitionerPkg + "DailyPartitioner", "DailyPartitioner"}, unsupported: true},
				{name: "hourly", aliases: []string{partitionerPkg + "HourlyPartitioner", "HourlyPartitioner"}, unsupported: true},
			},
			doc: "How records map to folders below the topic; default keeps Kafka's partitions (partition=<n>)."},
		{key: "behavior.on.null.values", kind: kindChoice, def: "fail", commands: CommandSink,
			choices: []choice{{name: "fail"}, {name: "ignore"}, {name: "write"}},
			doc:     "What to do with a record whose value is null (a tombstone). write needs store.kafka.keys=true: it writes the tombstone's key (and headers, with store.kafka.headers) to .keys (.headers) objects under tombstone.encoded.partition, and a switch between tombstones and other records rotates."},
		{key: "schema.compatibility", kind: kindChoice, def: "NONE", commands: CommandSink,
			choices: []choice{{name: "NONE"}, {name: "BACKWARD"}, {name: "FORWARD"}, {name: "FULL"}},
			doc: "What a value schema different from the open file's does. NONE: it rotates (all open files of the partition are committed). " +
				"BACKWARD and FULL: a newer version rotates, an older one is projected to the file's schema. FORWARD: an older version rotates, a newer one is projected. " +
				"The modes other than NONE need registry versions (AvroConverter)."},
		{key: "errors.tolerance", kind: kindChoice, def: "none", commands: cmdBoth,
			choices: []choice{{name: "none"}, {name: "all"}},
			doc:     "none: a record that cannot be converted or written stops the sink, naming topic, partition and offset, and nothing from it on is committed. all: such records are skipped (sent to the dead letter queue when one is set)."},
		{key: "errors.deadletterqueue.topic.name", commands: CommandSink, allowed: "a Kafka topic name; needs errors.tolerance=all",
			doc: "Topic that receives bad records unchanged (key, value, headers, timestamp), on the same brokers; created when missing. A bad record's offset is committed only after the DLQ has it."},
		{key: "errors.deadletterqueue.topic.replication.factor", kind: kindInt, def: "3", min: 1, max: 32767, commands: CommandSink,
			doc: "Replication factor of a DLQ topic the sink creates, capped at the number of brokers."},
		{key: "errors.deadletterqueue.context.headers.enable", kind: kindBool, def: "false", commands: CommandSink,
			doc: "Add Connect's __connect.errors.* headers (topic, partition, offset, stage, class, exception class and message) to DLQ records."},
		{key: "errors.log.enable", kind: kindBool, def: "false", commands: CommandSink,
			doc: "Log each bad record (topic, partition, offset, error) at error level."},

		// Source command.
		{key: "s3.poll.interval.ms", kind: kindInt, def: "60000", min: 1, max: maxInt64, commands: CommandSource,
			doc: "How often the source looks for new objects, in milliseconds."},
		{key: "record.batch.max.size", kind: kindInt, def: "200", min: 1, max: maxInt32, commands: CommandSource,
			doc: "Accepted for compatibility with the Confluent source connector and range-checked, but it has no effect: " +
				"kafkas3 produces through franz-go, which batches by bytes (each batch at most the target topic's " +
				"max.message.bytes, read with DescribeConfigs), not by record count."},
		{key: "behavior.on.error", kind: kindChoice, def: "fail", commands: CommandSource,
			choices: []choice{{name: "fail"}, {name: "ignore"}, {name: "log"}},
			doc: "What the source does with an object it cannot read as a whole (missing, truncated, not decoding, " +
				"size or SHA-256 other than the archive index says, record count other than its .keys/.headers objects or its index entry) " +
				"and with a malformed key inside a topic folder. fail: stop before producing anything, naming every such object. " +
				"ignore and log: skip the object whole (none of its records) and report the gap it leaves in the log and the summary " +
				"(log also logs each malformed key). --allow-gaps skips such objects under fail too."},

		// Confluent features not supported yet: accepted at their default only.
		{key: "s3.object.tagging", status: statusUnsupported, kind: kindBool, def: "false", commands: cmdBoth,
			doc: "Tag objects with startOffset, endOffset and recordCount."},
		{key: "s3.credentials.provider.sts.role.arn", status: statusUnsupported, commands: cmdBoth,
			doc: "Role to assume for S3 access."},
		{key: "s3.credentials.provider.sts.role.session.name", status: statusUnsupported, commands: cmdBoth,
			doc: "Session name of the assumed role."},
		{key: "s3.credentials.provider.sts.role.external.id", status: statusUnsupported, commands: cmdBoth,
			doc: "External id of the assumed role."},
		{key: "s3.wan.mode", status: statusUnsupported, kind: kindBool, def: "false", commands: cmdBoth,
			doc: "S3 transfer acceleration."},
		{key: "s3.proxy.url", status: statusUnsupported, commands: cmdBoth,
			doc: "HTTP proxy for S3 requests."},
		{key: "partition.field.name", status: statusUnsupported, commands: cmdBoth,
			doc: "Fields used by the field partitioner."},
		{key: "path.format", status: statusUnsupported, commands: cmdBoth,
			doc: "Joda-time folder pattern of time-based partitioners."},
		{key: "partition.duration.ms", status: statusUnsupported, kind: kindInt, def: "-1", commands: cmdBoth,
			doc: "Bucket width of time-based partitioners."},
		{key: "timestamp.extractor", status: statusUnsupported, def: "Wallclock", commands: cmdBoth,
			doc: "Which time time-based partitioners use."},
		{key: "timestamp.field", status: statusUnsupported, def: "timestamp", commands: cmdBoth,
			doc: "Record field holding the time for timestamp.extractor=RecordField."},
		{key: "store.kafka.keys", kind: kindBool, def: "false", commands: CommandSink,
			doc: "Also write each record's key to a parallel <base>.keys<ext> object (same start offset, same records in the same order), committed with its value object. A null key is kept (Confluent's connector refuses it): JSON keys objects write the line null, Avro and Parquet ones the null of the optional key schema; keys.format.class=bytes has no null, so there a null key is a bad record (see errors.tolerance)."},
		{key: "store.kafka.headers", kind: kindBool, def: "false", commands: CommandSink,
			doc: "Also write each record's headers to a parallel <base>.headers<ext> object: an array of {key, value} (order and duplicates kept; a null value stays null). A record without headers gets an empty array and is restored with none (Confluent's connector refuses it)."},
		{key: "store.envelope", kind: kindBool, def: "false", commands: cmdBoth,
			doc: "Write each record whole, in a documented envelope: partition, offset, timestamp (ms), timestamp type, key, value and headers (order and duplicates kept), with null and empty told apart for the key, the value and each header value. " +
				"format.class json (one object per line, bytes as base64), avro or parquet (the record kafkas3.Envelope; a value with a schema, from AvroConverter or JsonConverter with schemas, is a typed nested field, other values are bytes). " +
				"Object names stay Confluent's. Tombstones and null keys are ordinary records, so behavior.on.null.values must stay fail; store.kafka.keys and store.kafka.headers cannot be combined with it (the envelope holds keys and headers). " +
				"kafkas3 source recognises envelope objects by their content (with or without this key) and restores every property, timestamps included (see --timestamps); " +
				"for the source this key only means that avro and parquet archives need no value.converter.schema.registry.url up front (typed envelope values still need one, and the restore stops before producing them without it)."},
		{key: "keys.format.class", kind: kindChoice, def: "avro", commands: CommandSink,
			choices: partFormatChoices(false),
			doc:     "Format of .keys objects. Avro keys keep their schema (AvroConverter, JsonConverter with schemas); other keys are the optional Avro [\"null\",\"bytes\"] ([\"null\",\"string\"] with StringConverter), as Connect types them, so a null key is a null. Parquet writes the same key as the field \"key\" of a record \"RecordKey\" (Confluent's envelope), with parquet.codec. JSON writes keys as the JSON format writes values, a null key as the line null and the text null as the string \"null\". bytes has no null: a null key is a bad record there. s3.compression.type applies to json and bytes."},
		{key: "headers.format.class", kind: kindChoice, def: "avro", commands: CommandSink,
			choices: partFormatChoices(true),
			doc:     "Format of .headers objects: avro (an array of {key: string, value: null or string} records), parquet (that array as the field \"headers\" of a record \"RecordHeaders\", Confluent's envelope, with parquet.codec) or json (a JSON array of {\"key\", \"value\"} per line; header values must be UTF-8). bytes cannot hold headers."},
		{key: "tombstone.encoded.partition", def: "tombstone", commands: cmdBoth,
			doc: "Folder (encoded partition) of the .keys (and .headers) objects of tombstones with behavior.on.null.values=write; a name without directory.delim. The source restores the keys-only objects of this folder as tombstones (null values), in their place among the values."},
		{key: "hive.integration", status: statusUnsupported, kind: kindBool, def: "false", commands: cmdBoth,
			doc: "Hive table maintenance."},

		// Kafka Connect only: accepted, reported once, no effect.
		{key: "connector.class", status: statusIgnored, commands: cmdBoth,
			doc: "Connector implementation; checked to be the S3 connector of the running command, then ignored."},
		{key: "tasks.max", status: statusIgnored, commands: cmdBoth,
			doc: "Connect task count; kafkas3 scales by running more instances in the same group."},
		{key: "key.converter.", prefix: true, status: statusIgnored, commands: cmdBoth,
			doc: "Other Connect converter settings (auto.register.schemas, ...)."},
		{key: "value.converter.", prefix: true, status: statusIgnored, commands: cmdBoth,
			doc: "Other Connect converter settings (auto.register.schemas, ...)."},
		{key: "header.converter", status: statusIgnored, commands: cmdBoth,
			doc: "Connect converter; kafkas3 reads the raw bytes."},
		{key: "header.converter.", prefix: true, status: statusIgnored, commands: cmdBoth,
			doc: "Connect converter settings."},
		{key: "schema.generator.class", status: statusIgnored, commands: cmdBoth,
			doc: "Hive schema generator."},
		{key: "consumer.override.", prefix: true, status: statusIgnored, commands: cmdBoth,
			doc: "Connect per-connector client overrides; set the Kafka keys directly instead."},
		{key: "producer.override.", prefix: true, status: statusIgnored, commands: cmdBoth,
			doc: "Connect per-connector client overrides; set the Kafka keys directly instead."},
		{key: "admin.override.", prefix: true, status: statusIgnored, commands: cmdBoth,
			doc: "Connect per-connector client overrides; set the Kafka keys directly instead."},
		{key: "config.action.reload", status: statusIgnored, commands: cmdBoth,
			doc: "Connect restart policy."},
		{key: "errors.retry.timeout", status: statusIgnored, commands: cmdBoth,
			doc: "Connect conversion retry time."},
		{key: "errors.retry.delay.max.ms", status: statusIgnored, commands: cmdBoth,
			doc: "Connect conversion retry delay."},
		{key: "errors.log.include.messages", status: statusIgnored, commands: cmdBoth,
			doc: "Connect error logging."},
		{key: "predicates", status: statusIgnored, commands: cmdBoth,
			doc: "Connect predicates; only used by transforms."},
		{key: "predicates.", prefix: true, status: statusIgnored, commands: cmdBoth,
			doc: "Connect predicate settings."},
		{key: "retry.backoff.ms", status: statusIgnored, commands: cmdBoth,
			doc: "Connect-level retry wait; kafkas3 uses s3.retry.backoff.ms."},
		{key: "s3.elastic.buffer.enable", status: statusIgnored, commands: cmdBoth,
			doc: "Connector buffer sizing; kafkas3 bounds memory itself."},
		{key: "s3.elastic.buffer.init.capacity", status: statusIgnored, commands: cmdBoth,
			doc: "Connector buffer sizing; kafkas3 bounds memory itself."},
		{key: "s3.http.send.expect.continue", status: statusIgnored, commands: cmdBoth,
			doc: "HTTP detail of the Java SDK."},

		// Never accepted: they would change the archived records.
		{key: "transforms", status: statusRejected, commands: cmdBoth,
			doc: "Single message transforms change records; an archive keeps them unchanged."},
		{key: "transforms.", prefix: true, status: statusRejected, commands: cmdBoth,
			doc: "Settings of single message transforms."},
	}
}

// converterChoices are the values of key.converter and value.converter.
func converterChoices() []choice {
	return []choice{
		{name: "avro", aliases: []string{"io.confluent.connect.avro.AvroConverter", "AvroConverter"}},
		{name: "json", aliases: []string{"org.apache.kafka.connect.json.JsonConverter", "JsonConverter"}},
		{name: "string", aliases: []string{"org.apache.kafka.connect.storage.StringConverter", "StringConverter"}},
		{name: "bytearray", aliases: []string{"bytes", "org.apache.kafka.connect.converters.ByteArrayConverter", "ByteArrayConverter"}},
	}
}

// keyIndex looks keys up in the table.
type keyIndex struct {
	specs    []keySpec
	exact    map[string]*keySpec
	prefixes []*keySpec
}

func newKeyIndex() *keyIndex {
	ix := &keyIndex{specs: configKeys(), exact: map[string]*keySpec{}}
	for i := range ix.specs {
		s := &ix.specs[i]
		if s.prefix {
			ix.prefixes = append(ix.prefixes, s)
		} else {
			ix.exact[s.key] = s
		}
	}
	// Longest prefix first.
	sort.Slice(ix.prefixes, func(a, b int) bool { return len(ix.prefixes[a].key) > len(ix.prefixes[b].key) })
	return ix
}

// lookup returns the spec for key: an exact entry, else the longest prefix
// entry, else nil.
func (ix *keyIndex) lookup(key string) *keySpec {
	if s, ok := ix.exact[key]; ok {
		return s
	}
	for _, s := range ix.prefixes {
		if strings.HasPrefix(key, s.key) && len(key) > len(s.key) {
			return s
		}
	}
	return nil
}

// envName is the environment variable that sets key: KAFKAS3_ plus the key
// upper-cased with "." and "-" turned into "_".
func envName(key string) string {
	r := strings.NewReplacer(".", "_", "-", "_")
	return "KAFKAS3_" + strings.ToUpper(r.Replace(key))
}

// matchChoice returns the choice value names, by its name or an alias,
// ignoring case.
// isChoice reports whether value means the choice named name.
func (s *keySpec) isChoice(value, name string) bool {
	c, ok := s.matchChoice(value)
	return ok && c.name == name
}

func (s *keySpec) matchChoice(value string) (choice, bool) {
	for _, c := range s.choices {
		if strings.EqualFold(value, c.name) {
			return c, true
		}
		for _, a := range c.aliases {
			if strings.EqualFold(value, a) {
				return c, true
			}
		}
	}
	return choice{}, false
}

// partFormatChoices are the values of keys.format.class and
// headers.format.class. Headers cannot be bytes (Settings.Sink says so when
// asked).
func partFormatChoices(headers bool) []choice {
	cs := []choice{
		{name: "json", aliases: []string{s3FormatPkg + "json.JsonFormat", "JsonFormat"}},
		{name: "bytes", aliases: []string{"bytearray", s3FormatPkg + "bytearray.ByteArrayFormat", "ByteArrayFormat"}},
		{name: "avro", aliases: []string{s3FormatPkg + "avro.AvroFormat", "AvroFormat"}},
		{name: "parquet", aliases: []string{s3FormatPkg + "parquet.ParquetFormat", "ParquetFormat"}},
	}
	if headers {
		cs = append(cs[:1], cs[2:]...)
	}
	return cs
}
