package config

import (
	"bytes"
	"compress/gzip"
	"io"

	"errors"
	"github.com/kafkas3/kafkas3/archive"
	"github.com/kafkas3/kafkas3/format"
	"github.com/kafkas3/kafkas3/partition"
	"github.com/kafkas3/kafkas3/s3store"
	"os"
	"path/filepath"
	"reflect"
	"slices"
	"strings"
	"testing"
	"time"
)

const fixtures = "../testdata/config"

// envMap returns a LookupEnv over m.
func envMap(m map[string]string) func(string) (string, bool) {
	return func(k string) (string, bool) {
		v, ok := m[k]
		return v, ok
	}
}

// quickStart is the SinkConfig every fixture must produce, without what
// comparable clears (checkQuickStartObjects checks that).
func quickStart() *SinkConfig {
	return &SinkConfig{
		Archive: archive.Config{
			Name: "s3-sink", Brokers: []string{"localhost:9092"}, GroupID: "connect-s3-sink",
			Topics:             []string{"s3_topic"},
			FlushSize:          3,
			MaxOpenPartitions:  archive.DefaultMaxOpenPartitions,
			Keys:               partition.KeyConfig{TopicsDir: "topics", DirectoryDelim: "/", FileDelim: "+", OffsetPadWidth: 10},
			NullValues:         archive.NullFail,
			TombstonePartition: "tombstone",
			IndexPrefix:        "_kafkas3/", CheckpointInterval: 100, TopicCheckInterval: 5 * time.Minute, SnapshotInterval: time.Minute,
			Compatibility: archive.CompatNone,
			Errors:        archive.ErrorsConfig{Tolerance: archive.ToleranceNone, DLQReplicationFactor: 3},
		},
		Store: StoreConfig{S3: s3store.S3Config{
			Bucket: "confluent-kafka-connect-s3-testing", Region: "us-west-2", PathStyle: true,
			PartSize: 5242880, PartRetries: 3, RetryBackoff: 200 * time.Millisecond,
		}},
		FormatName:  "json",
		LogInterval: 30 * time.Second,
	}
}

// comparableView returns c without the built objects (formats, partitioner,
// converters, client options), which reflect.DeepEqual cannot compare.
func comparableView(c *SinkConfig) *SinkConfig {
	d := *c
	a := &d.Archive
	a.Format, a.Partitioner, a.KafkaOpts = nil, nil, nil
	a.KeysFormat, a.HeadersFormat, a.ValueConverter, a.KeyConverter = nil, nil, nil, nil
	return &d
}

// checkQuickStartObjects checks the built objects of quickStart's config:
// the JSON format, the default partitioner and one client option (the
// session timeout: no TLS, no SASL).
func checkQuickStartObjects(t *testing.T, c *SinkConfig) {
	t.Helper()
	a := c.Archive
	if a.Format == nil || a.Format.Extension() != ".json" {
		t.Errorf("Format = %v, want JSON", a.Format)
	}
	if _, ok := a.Partitioner.(partition.DefaultPartitioner); !ok {
		t.Errorf("Partitioner = %T, want the default partitioner", a.Partitioner)
	}
	if len(a.KafkaOpts) != 1 || a.KeysFormat != nil || a.HeadersFormat != nil || a.ValueConverter != nil || a.KeyConverter != nil {
		t.Errorf("KafkaOpts %d, parts %v %v, converters %v %v", len(a.KafkaOpts), a.KeysFormat, a.HeadersFormat, a.ValueConverter, a.KeyConverter)
	}
}

// choiceOf returns the canonical value of a choice key in st, as the
// parsers see it.
func choiceOf(st *Settings, h ChoiceKey) string { return newParser(st).choice(h) }

func TestLoadFixturesAgree(t *testing.T) {
	tests := []struct {
		file    string
		ignored []string
	}{
		{"orders.yaml", []string{"connector.class", "tasks.max"}},
		{"orders.json", []string{"connector.class", "tasks.max"}},
		{"orders.properties", []string{"connector.class", "schema.generator.class", "tasks.max"}},
		{"connect-rest.json", []string{"connector.class", "schema.generator.class", "tasks.max"}},
	}
	for _, tc := range tests {
		t.Run(tc.file, func(t *testing.T) {
			st, err := Load(Input{
				Command:    Sink,
				ConfigFile: filepath.Join(fixtures, tc.file),
				// Connect REST documents carry no broker list; the worker has it.
				LookupEnv: envMap(map[string]string{"KAFKAS3_BOOTSTRAP_SERVERS": "localhost:9092"}),
			})
			if err != nil {
				t.Fatalf("LoadSettings: %v", err)
			}
			if got := st.Ignored(); !reflect.DeepEqual(got, tc.ignored) {
				t.Errorf("Ignored() = %q, want %q", got, tc.ignored)
			}
			got, err := st.Sink(nil)
			if err != nil {
				t.Fatalf("Sink: %v", err)
			}
			if want := quickStart(); !reflect.DeepEqual(comparableView(got), want) {
				t.Errorf("Sink() =\n%+v\nwant\n%+v", comparableView(got), want)
			}
			checkQuickStartObjects(t, got)
			if o := st.Origin(st.keys.FlushSize); o.Kind != OriginFile || o.Name != filepath.Join(fixtures, tc.file) {
				t.Errorf("Origin(flush.size) = %v, want the file", o)
			}
			if o := st.Origin(st.keys.TopicsDir); o.Kind != OriginDefault {
				t.Errorf("Origin(topics.dir) = %v, want default", o)
			}
		})
	}
}

// writeFile writes a config file into a temp dir and returns its path.
func writeFile(t *testing.T, name, body string) string {
	t.Helper()
	p := filepath.Join(t.TempDir(), name)
	if err := os.WriteFile(p, []byte(body), 0o600); err != nil {
		t.Fatal(err)
	}
	return p
}

const minimalYAML = `name: n
bootstrap.servers: b:9092
topics: t
flush.size: 10
s3.bucket.name: bkt
format.class: json
`

func TestPrecedence(t *testing.T) {
	file := writeFile(t, "c.yaml", minimalYAML+"s3.region: file-region\ns3.part.retries: 4\ntopics.dir: filedir\n")
	env := map[string]string{
		"KAFKAS3_FLUSH_SIZE":      "20",
		"KAFKAS3_S3_REGION":       "env-region",
		"KAFKAS3_S3_PART_RETRIES": "5",
		"KAFKAS3_S3_BUCKET_NAME":  "env-bucket",
		"KAFKAS3_TOPICS_DIR":      "", // empty counts as unset
	}
	st, err := Load(Input{
		Command:    Sink,
		ConfigFile: file,
		LookupEnv:  envMap(env),
		Params:     []string{"s3.region=param-region", "s3.part.retries=6", "s3.part.retries=7"},
		Flags:      map[string]string{"s3.region": "flag-region"},
	})
	if err != nil {
		t.Fatal(err)
	}
	c, err := st.Sink(nil)
	if err != nil {
		t.Fatal(err)
	}
	a, s3 := c.Archive, c.Store.S3
	checks := []struct {
		key    string
		got    any
		want   any
		origin OriginKind
	}{
		{"flush.size", a.FlushSize, 20, OriginEnv},                    // env > file
		{"s3.bucket.name", s3.Bucket, "env-bucket", OriginEnv},        // env > file
		{"s3.region", s3.Region, "flag-region", OriginFlag},           // flag > -p > env > file
		{"s3.part.retries", s3.PartRetries, 7, OriginParam},           // last -p wins, > env
		{"topics.dir", a.Keys.TopicsDir, "filedir", OriginFile},       // empty env ignored
		{"s3.part.size", s3.PartSize, int64(26214400), OriginDefault}, // default
		{"format.class", c.FormatName, "json", OriginFile},            // file
		{"s3.retry.backoff.ms", s3.RetryBackoff, 200 * time.Millisecond, OriginDefault},
	}
	for _, c := range checks {
		if !reflect.DeepEqual(c.got, c.want) {
			t.Errorf("%s = %v, want %v", c.key, c.got, c.want)
		}
		if k := st.Origin(st.keys.Lookup(c.key)).Kind; k != c.origin {
			t.Errorf("%s origin = %v, want kind %d", c.key, st.Origin(st.keys.Lookup(c.key)), c.origin)
		}
	}
	if got := st.Origin(st.keys.FlushSize).String(); got != "environment KAFKAS3_FLUSH_SIZE" {
		t.Errorf("origin string = %q", got)
	}
}

func TestEnvOnlyFlushSize(t *testing.T) {
	st, err := Load(Input{
		Command: Sink,
		LookupEnv: envMap(map[string]string{
			"KAFKAS3_NAME": "n", "KAFKAS3_BOOTSTRAP_SERVERS": "a:1,b:2", "KAFKAS3_TOPICS": "x, y",
			"KAFKAS3_FLUSH_SIZE": "1000", "KAFKAS3_STORE_LOCAL_DIR": "/tmp/archive",
			"KAFKAS3_FORMAT_CLASS": "bytearray", "KAFKAS3_S3_COMPRESSION_TYPE": "gzip",
			"KAFKAS3_FORMAT_BYTEARRAY_SEPARATOR": "  ", // whitespace kept
		}),
	})
	if err != nil {
		t.Fatal(err)
	}
	c, err := st.Sink(nil)
	if err != nil {
		t.Fatal(err)
	}
	a := c.Archive
	if a.FlushSize != 1000 || c.Store.LocalDir != "/tmp/archive" || c.FormatName != "bytes" ||
		a.Format.Extension() != ".bin.gz" || !slices.Equal(a.Topics, []string{"x", "y"}) ||
		!slices.Equal(a.Brokers, []string{"a:1", "b:2"}) || a.GroupID != "connect-n" {
		t.Errorf("unexpected config %+v", a)
	}
	// The separator keeps its whitespace: two records, each followed by it.
	var buf bytes.Buffer
	w, err := a.Format.NewWriter(&buf)
	if err != nil {
		t.Fatal(err)
	}
	for _, v := range []string{"a", "b"} {
		if err := w.Write(&format.Record{Value: []byte(v)}); err != nil {
			t.Fatal(err)
		}
	}
	if err := w.Close(); err != nil {
		t.Fatal(err)
	}
	zr, err := gzip.NewReader(&buf)
	if err != nil {
		t.Fatal(err)
	}
	if got, _ := io.ReadAll(zr); string(got) != "a  b  " {
		t.Errorf("bytes objects hold %q, want %q", got, "a  b  ")
	}
}

func TestGroupID(t *testing.T) {
	for _, tc := range []struct {
		params []string
		want   string
	}{
		{nil, "connect-n"},
		{[]string{"name=orders archive"}, "connect-orders archive"},
		{[]string{"group.id=mine"}, "mine"},
	} {
		st, err := Load(Input{Command: Sink, ConfigFile: writeFile(t, "c.yaml", minimalYAML), Params: tc.params})
		if err != nil {
			t.Fatal(err)
		}
		c, err := st.Sink(nil)
		if err != nil {
			t.Fatal(err)
		}
		if c.Archive.GroupID != tc.want {
			t.Errorf("params %q: GroupID = %q, want %q", tc.params, c.Archive.GroupID, tc.want)
		}
	}
}

// sinkErr loads base plus params and returns the error of Load (when it
// has no settings) or Sink, which repeats the load's problems.
func sinkErr(t *testing.T, base string, params ...string) error {
	t.Helper()
	st, err := Load(Input{Command: Sink, ConfigFile: writeFile(t, "c.yaml", base), Params: params})
	if st == nil {
		return err
	}
	_, err = st.Sink(nil)
	return err
}

func TestValidationErrors(t *testing.T) {
	tests := []struct {
		name   string
		base   string
		params []string
		want   []string // substrings of the error, in order
	}{
		{"index prefix inside topics.dir", minimalYAML, []string{"kafkas3.index.prefix=topics/_kafkas3/"},
			[]string{`kafkas3.index.prefix: "topics/_kafkas3/" puts the index (topics/_kafkas3/index/) inside topics.dir "topics"`}},
		{"topics.dir inside the index", minimalYAML, []string{"kafkas3.index.prefix=data/", "topics.dir=data/index/t"},
			[]string{`kafkas3.index.prefix: "data/" puts the index (data/index/) inside topics.dir "data/index/t"`}},
		{"topic descriptions in topics.dir", minimalYAML, []string{"kafkas3.index.prefix=data/", "topics.dir=data/topics"},
			[]string{`kafkas3.index.prefix: "data/" puts the index (data/topics/) inside topics.dir "data/topics"`}},
		{"topics check interval", minimalYAML, []string{"kafkas3.topics.check.interval.ms=10"},
			[]string{`kafkas3.topics.check.interval.ms: "10" is out of range`}},
		{"index prefix without slash", minimalYAML, []string{"kafkas3.index.prefix=_kafkas3"},
			[]string{`kafkas3.index.prefix: "_kafkas3" is not a key prefix`}},
		{"index enabled not bool", minimalYAML, []string{"kafkas3.index.enabled=maybe"},
			[]string{`kafkas3.index.enabled: "maybe"`}},
		{"flush.size not int", minimalYAML, []string{"flush.size=abc"},
			[]string{`flush.size: "abc" is not an integer; want an integer > 0 (from -p flush.size)`}},
		{"flush.size zero", minimalYAML, []string{"flush.size=0"},
			[]string{`flush.size: "0" is out of range; want an integer > 0`}},
		{"flush.size missing", strings.Replace(minimalYAML, "flush.size: 10\n", "", 1), nil,
			[]string{"flush.size: required key is not set"}},
		{"name missing", strings.Replace(minimalYAML, "name: n\n", "", 1), nil,
			[]string{"name: required key is not set"}},
		{"bootstrap missing", strings.Replace(minimalYAML, "bootstrap.servers: b:9092\n", "", 1), nil,
			[]string{"bootstrap.servers: required key is not set"}},
		{"bootstrap bad", minimalYAML, []string{"bootstrap.servers=a:1,nohost"},
			[]string{`bootstrap.servers: "a:1,nohost" has "nohost", which is not host:port`}},
		{"part size small", minimalYAML, []string{"s3.part.size=1024"},
			[]string{`s3.part.size: "1024" is out of range; want an integer from 5242880 to 2147483647`}},
		{"part retries negative", minimalYAML, []string{"s3.part.retries=-1"},
			[]string{`s3.part.retries: "-1" is out of range; want an integer from 0 to 2147483647`}},
		{"backoff negative", minimalYAML, []string{"s3.retry.backoff.ms=-5"},
			[]string{`s3.retry.backoff.ms: "-5" is out of range; want an integer >= 0`}},
		{"compression type", minimalYAML, []string{"s3.compression.type=snappy"},
			[]string{`s3.compression.type: "snappy" is not allowed; want one of none, gzip, zstd`}},
		{"compression level", minimalYAML, []string{"s3.compression.level=10"},
			[]string{`s3.compression.level: "10" is out of range; want an integer from -1 to 9`}},
		{"path style bool", minimalYAML, []string{"s3.path.style.access.enabled=yes"},
			[]string{`s3.path.style.access.enabled: "yes" is not a boolean; want true or false`}},
		{"both topics", minimalYAML, []string{"topics.regex=t.*"},
			[]string{`topics.regex: "t.*" is set together with topics; want exactly one of topics and topics.regex`}},
		{"no topics", strings.Replace(minimalYAML, "topics: t\n", "", 1), nil,
			[]string{"topics: required key is not set (set exactly one of topics and topics.regex)"}},
		{"bad regex", strings.Replace(minimalYAML, "topics: t\n", "topics.regex: \"a(\"\n", 1), nil,
			[]string{`topics.regex: "a(" does not compile`, "want a regular expression in RE2 syntax"}},
		{"bad groups.regex", minimalYAML, []string{"groups.regex=g("},
			[]string{`groups.regex: "g(" does not compile`, "want a regular expression in RE2 syntax"}},
		{"negative snapshot interval", minimalYAML, []string{"offsets.snapshot.interval.ms=-1"},
			[]string{`offsets.snapshot.interval.ms: "-1" is out of range; want an integer >= 0`}},
		{"bad topic", minimalYAML, []string{"topics=ok,bad topic"},
			[]string{`topics: "ok,bad topic" has "bad topic", which is not a Kafka topic name`}},
		{"schedule needs tz", minimalYAML, []string{"rotate.schedule.interval.ms=60000"},
			[]string{"timezone: required key is not set (rotate.schedule.interval.ms is set)"}},
		{"bad tz", minimalYAML, []string{"timezone=Mars/Olympus"},
			[]string{`timezone: "Mars/Olympus" is not a known IANA zone; want a name like UTC or Europe/Berlin`}},
		{"avro needs a converter", minimalYAML, []string{"format.class=io.confluent.connect.s3.format.avro.AvroFormat"},
			[]string{`value.converter: required key is not set (format.class avro needs values with a schema`}},
		{"parquet needs a schemaful converter", minimalYAML, []string{"format.class=parquet", "value.converter=org.apache.kafka.connect.storage.StringConverter"},
			[]string{`value.converter: "org.apache.kafka.connect.storage.StringConverter" gives values without a schema, but format.class parquet needs one`}},
		{"parquet json without schemas", minimalYAML, []string{"format.class=parquet", "value.converter=JsonConverter", "value.converter.schemas.enable=false"},
			[]string{`value.converter: "JsonConverter" gives values without a schema`}},
		{"avro converter needs registry", minimalYAML, []string{"format.class=avro", "value.converter=io.confluent.connect.avro.AvroConverter"},
			[]string{"value.converter.schema.registry.url: required key is not set (value.converter is avro)"}},
		{"registry url", minimalYAML, []string{"key.converter=avro", "key.converter.schema.registry.url=localhost:8081"},
			[]string{`key.converter.schema.registry.url: "localhost:8081" is not an http(s) URL`}},
		{"user info needed", minimalYAML, []string{"value.converter=avro", "value.converter.schema.registry.url=http://r:8081", "value.converter.basic.auth.credentials.source=USER_INFO"},
			[]string{"value.converter.basic.auth.user.info: required key is not set (value.converter.basic.auth.credentials.source is USER_INFO)"}},
		{"user info secret", minimalYAML, []string{"value.converter.basic.auth.user.info=hunter2"},
			[]string{"value.converter.basic.auth.user.info: the value is not user:password"}},
		{"unknown converter", minimalYAML, []string{"value.converter=io.confluent.connect.protobuf.ProtobufConverter"},
			[]string{`value.converter: "io.confluent.connect.protobuf.ProtobufConverter" is not allowed; want one of avro, json, string, bytearray`}},
		{"avro codec", minimalYAML, []string{"avro.codec=lz4"},
			[]string{`avro.codec: "lz4" is not allowed; want one of null, deflate, snappy, bzip2, zstandard`}},
		{"parquet lzo", minimalYAML, []string{"parquet.codec=lzo"},
			[]string{`parquet.codec: "lzo" is not supported yet by this version; want one of none, snappy, gzip, zstd, lz4_raw, brotli`}},
		{"parquet lz4", minimalYAML, []string{"parquet.codec=LZ4"},
			[]string{`parquet.codec: "LZ4" is not supported yet`}},
		{"dlq needs tolerance all", minimalYAML, []string{"errors.deadletterqueue.topic.name=dlq"},
			[]string{`errors.deadletterqueue.topic.name: "dlq" needs errors.tolerance=all`}},
		{"dlq topic name", minimalYAML, []string{"errors.tolerance=all", "errors.deadletterqueue.topic.name=bad topic"},
			[]string{`errors.deadletterqueue.topic.name: "bad topic" is not a Kafka topic name`}},
		{"dlq is archived", minimalYAML, []string{"errors.tolerance=all", "errors.deadletterqueue.topic.name=t"},
			[]string{`errors.deadletterqueue.topic.name: "t" is one of the archived topics`}},
		{"unknown format", minimalYAML, []string{"format.class=csv"},
			[]string{`format.class: "csv" is not allowed; want one of json, bytes, avro, parquet`}},
		{"format missing", strings.Replace(minimalYAML, "format.class: json\n", "", 1), nil,
			[]string{"format.class: required key is not set"}},
		{"time partitioner", minimalYAML, []string{"partitioner.class=io.confluent.connect.storage.partitioner.TimeBasedPartitioner"},
			[]string{"4 configuration problems", "path.format: required key is not set (partitioner.class is time)",
				"partition.duration.ms: required key is not set (partitioner.class is time)",
				"locale: required key is not set (partitioner.class is time)", "timezone: required key is not set (partitioner.class is time)"}},
		{"null write", minimalYAML, []string{"behavior.on.null.values=write"},
			[]string{`behavior.on.null.values: "write" needs store.kafka.keys=true`}},
		{"headers bytes", minimalYAML, []string{"store.kafka.headers=true", "headers.format.class=io.confluent.connect.s3.format.bytearray.ByteArrayFormat"},
			[]string{`headers.format.class: "io.confluent.connect.s3.format.bytearray.ByteArrayFormat" cannot hold headers`}},
		{"keys orc", minimalYAML, []string{"store.kafka.keys=true", "keys.format.class=orc"},
			[]string{`keys.format.class: "orc" is not allowed; want one of json, bytes, avro, parquet`}},
		{"headers orc", minimalYAML, []string{"store.kafka.headers=true", "headers.format.class=orc"},
			[]string{`headers.format.class: "orc" is not allowed; want one of json, avro, parquet`}},
		{"envelope bytes", minimalYAML, []string{"store.envelope=true", "format.class=bytes"},
			[]string{`store.envelope: "true" needs format.class json, avro or parquet`}},
		{"envelope keys headers", minimalYAML, []string{"store.envelope=true", "store.kafka.keys=true", "store.kafka.headers=true"},
			[]string{`store.kafka.keys: "true" cannot be combined with store.envelope=true`, `store.kafka.headers: "true" cannot be combined with store.envelope=true`}},
		{"envelope null values", minimalYAML, []string{"store.envelope=true", "behavior.on.null.values=ignore"},
			[]string{`behavior.on.null.values: "ignore" is not used with store.envelope=true`}},
		{"tombstone folder", minimalYAML, []string{"tombstone.encoded.partition=a/b"},
			[]string{`tombstone.encoded.partition: "a/b" is not a folder name`}},
		{"schema compat", minimalYAML, []string{"schema.compatibility=SIDEWAYS"},
			[]string{`schema.compatibility: "SIDEWAYS" is not allowed; want one of NONE, BACKWARD, FORWARD, FULL`}},
		{"bucket missing", strings.Replace(minimalYAML, "s3.bucket.name: bkt\n", "", 1), nil,
			[]string{"s3.bucket.name: required key is not set (the store is S3"}},
		{"local needs dir", minimalYAML, []string{"storage.class=local"},
			[]string{"store.local.dir: required key is not set (storage.class is local)"}},
		{"sasl needs mechanism", minimalYAML, []string{"security.protocol=SASL_SSL"},
			[]string{"sasl.mechanism: required key is not set (security.protocol is SASL_SSL)"}},
		{"sasl needs user", minimalYAML, []string{"security.protocol=SASL_SSL", "sasl.mechanism=SCRAM-SHA-512"},
			[]string{"sasl.username: required key is not set", "sasl.password: required key is not set"}},
		{"mechanism without sasl", minimalYAML, []string{"sasl.mechanism=PLAIN", "sasl.username=u", "sasl.password=p"},
			[]string{`sasl.mechanism: "PLAIN" needs security.protocol SASL_PLAINTEXT or SASL_SSL, not PLAINTEXT`}},
		{"bad protocol", minimalYAML, []string{"security.protocol=TLS"},
			[]string{`security.protocol: "TLS" is not allowed; want one of PLAINTEXT, SSL, SASL_PLAINTEXT, SASL_SSL`}},
		{"secret not echoed", minimalYAML, []string{"s3.sse.customer.key=hunter2"},
			[]string{"s3.sse.customer.key: the value is not a base64-encoded 32-byte key"}},
		{"kms without ssea", minimalYAML, []string{"s3.sse.kms.key.id=k1"},
			[]string{`s3.sse.kms.key.id: "k1" needs s3.ssea.name aws:kms or aws:kms:dsse`}},
		{"half static creds", minimalYAML, []string{"aws.access.key.id=AK"},
			[]string{"aws.secret.access.key: required key is not set (aws.access.key.id is set)"}},
		{"store url", minimalYAML, []string{"store.url=ftp://x"},
			[]string{`store.url: "ftp://x" is not an endpoint URL; want http(s)://host[:port]`}},
		{"wrong connector", minimalYAML, []string{"connector.class=io.confluent.connect.s3.source.S3SourceConnector"},
			[]string{`connector.class: "io.confluent.connect.s3.source.S3SourceConnector" is not the S3 sink connector`}},
		{"bad extension", minimalYAML, []string{"format.bytearray.extension=bin"},
			[]string{`format.bytearray.extension: "bin" is not a file extension`}},
		{"empty delim", minimalYAML, []string{"directory.delim="},
			[]string{`directory.delim: "" is empty; want a non-empty string`}},
		{"pad width", minimalYAML, []string{"filename.offset.zero.pad.width=30"},
			[]string{`filename.offset.zero.pad.width: "30" is out of range; want an integer from 0 to 19`}},
		{"bad locale", minimalYAML, []string{"locale=en US"},
			[]string{`locale: "en US" is not a locale tag`}},
		{"unsupported at non-default", minimalYAML, []string{"hive.integration=true"},
			[]string{`hive.integration: "true" is not supported yet by this version (hive table maintenance); leave it unset or "false"`}},
		{"jaas secret", minimalYAML, []string{"security.protocol=SASL_SSL", "sasl.mechanism=PLAIN", "sasl.jaas.config=x password=\"s3cret\";"},
			[]string{"sasl.jaas.config: the value is not a JAAS login line: the control flag after x is not one of required, requisite, sufficient, optional"}},
		{"jaas without mechanism", minimalYAML, []string{"sasl.jaas.config=org.apache.kafka.common.security.plain.PlainLoginModule required username=u password=\"s3cret\";"},
			[]string{"sasl.jaas.config: the value is set without sasl.mechanism"}},
		{"transforms", minimalYAML, []string{"transforms=unwrap", "transforms.unwrap.type=X"},
			[]string{"transforms: not supported: single message transforms change records", "transforms.unwrap.type: not supported"}},
		{"assume role", minimalYAML, []string{"s3.credentials.provider.class=io.confluent.connect.s3.auth.AwsAssumeRoleCredentialsProvider"},
			[]string{"s3.credentials.provider.sts.role.arn: required key is not set (s3.credentials.provider.class is io.confluent.connect.s3.auth.AwsAssumeRoleCredentialsProvider)"}},
		{"isolation level", minimalYAML, []string{"isolation.level=committed"},
			[]string{`isolation.level: "committed" is not allowed; want one of read_committed, read_uncommitted`}},
		{"connect isolation level", minimalYAML, []string{"consumer.override.isolation.level=READ-UNCOMMITTED"},
			[]string{`consumer.override.isolation.level: "READ-UNCOMMITTED" is not allowed; want one of read_committed, read_uncommitted`}},
		{"errors tolerance", minimalYAML, []string{"errors.tolerance=some"},
			[]string{`errors.tolerance: "some" is not allowed; want one of none, all`}},
		{"bad -p", minimalYAML, []string{"flush.size"},
			[]string{`-p "flush.size": want key=value`}},
		{"several at once", minimalYAML, []string{"flush.size=x", "s3.part.size=1", "format.class=avro"},
			[]string{"3 configuration problems:", "flush.size:", "s3.part.size:", "value.converter:"}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			err := sinkErr(t, tc.base, tc.params...)
			if err == nil {
				t.Fatal("no error")
			}
			if !errors.Is(err, ErrConfig) {
				t.Errorf("error does not wrap ErrConfig: %v", err)
			}
			msg := err.Error()
			rest := msg
			for _, w := range tc.want {
				i := strings.Index(rest, w)
				if i < 0 {
					t.Fatalf("error %q\ndoes not contain (in order) %q", msg, w)
				}
				rest = rest[i+len(w):]
			}
			if strings.Contains(msg, "hunter2") || strings.Contains(msg, "s3cret") {
				t.Errorf("error leaks a secret: %q", msg)
			}
		})
	}
}

func TestAcceptedValues(t *testing.T) {
	type check = func(*Settings, *SinkConfig) bool
	readUncommitted := func(want bool) check {
		return func(_ *Settings, c *SinkConfig) bool { return c.Archive.ReadUncommitted == want }
	}
	tests := []struct {
		name   string
		params []string
		check  check
	}{
		{"short and class names case-insensitively", []string{"format.class=BYTES", "partitioner.class=default", "storage.class=s3"},
			func(st *Settings, c *SinkConfig) bool {
				_, def := c.Archive.Partitioner.(partition.DefaultPartitioner)
				return c.FormatName == "bytes" && c.Archive.Format.Extension() == ".bin" && def
			}},
		{"zstd json with json keys", []string{"s3.compression.type=zstd", "s3.compression.level=9", "store.kafka.keys=true", "keys.format.class=json"},
			func(_ *Settings, c *SinkConfig) bool {
				a := c.Archive
				return a.Format.Extension() == ".json.zst" && a.KeysFormat != nil && a.KeysFormat.Format.Extension() == ".json.zst"
			}},
		{"zstd bytes, avro keys", []string{"format.class=bytes", "s3.compression.type=ZSTD", "store.kafka.keys=true"},
			func(_ *Settings, c *SinkConfig) bool {
				a := c.Archive
				return a.Format.Extension() == ".bin.zst" && a.KeysFormat != nil && a.KeysFormat.Format.Extension() == ".avro"
			}},
		{"regex", []string{"topics=", "topics.regex=orders\\..*"},
			func(_ *Settings, c *SinkConfig) bool {
				return c.Archive.TopicsRegex == `orders\..*` && c.Archive.Topics == nil
			}},
		{"schedule with tz", []string{"rotate.schedule.interval.ms=3600000", "timezone=Europe/Berlin", "rotate.interval.ms=600000"},
			func(_ *Settings, c *SinkConfig) bool {
				a := c.Archive
				return a.RotateScheduleInterval == time.Hour && a.Timezone != nil && a.Timezone.String() == "Europe/Berlin" &&
					a.RotateInterval == 10*time.Minute
			}},
		{"sasl", []string{"security.protocol=sasl_ssl", "sasl.mechanism=scram-sha-256", "sasl.username=u", "sasl.password=p"},
			func(st *Settings, c *SinkConfig) bool {
				// session timeout, TLS and SCRAM
				return choiceOf(st, st.keys.SecurityProtocol) == "SASL_SSL" && choiceOf(st, st.keys.SASLMechanism) == "SCRAM-SHA-256" &&
					len(c.Archive.KafkaOpts) == 3
			}},
		{"endpoint scheme added", []string{"store.url=minio.local:9000", "s3.path.style.access.enabled=false"},
			func(_ *Settings, c *SinkConfig) bool {
				return c.Store.S3.Endpoint == "https://minio.local:9000" && !c.Store.S3.PathStyle
			}},
		{"sse-c", []string{"s3.sse.customer.key=" + strings.Repeat("A", 43) + "=", "s3.ssea.name=AES256"},
			func(_ *Settings, c *SinkConfig) bool {
				return c.Store.S3.SSEAlgorithm == "AES256" && c.Store.S3.CustomerKey != ""
			}},
		{"kms", []string{"s3.ssea.name=aws:kms", "s3.sse.kms.key.id=k1", "s3.acl.canned=bucket-owner-full-control"},
			func(_ *Settings, c *SinkConfig) bool {
				return c.Store.S3.KMSKeyID == "k1" && c.Store.S3.CannedACL == "bucket-owner-full-control"
			}},
		{"local dir wins over S3Storage", []string{"storage.class=io.confluent.connect.s3.storage.S3Storage", "store.local.dir=/x", "s3.bucket.name="},
			func(_ *Settings, c *SinkConfig) bool { return c.Store.LocalDir == "/x" }},
		{"empty topics.dir", []string{"topics.dir="}, func(_ *Settings, c *SinkConfig) bool { return c.Archive.Keys.TopicsDir == "" }},
		{"envelope avro without a schema converter", []string{"store.envelope=true", "format.class=avro", "behavior.on.null.values=fail"},
			func(_ *Settings, c *SinkConfig) bool {
				return c.Archive.Envelope && c.FormatName == "avro" && c.Archive.Format != nil
			}},
		{"unsupported at default", []string{"store.kafka.keys=FALSE", "partition.duration.ms=-1", "transforms=", "avro.codec=null"},
			func(*Settings, *SinkConfig) bool { return true }},
		{"read_committed by default", nil, readUncommitted(false)},
		{"isolation.level", []string{"isolation.level=READ_UNCOMMITTED"}, readUncommitted(true)},
		{"Connect's override wins", []string{"isolation.level=read_committed", "consumer.override.isolation.level=read_uncommitted"}, readUncommitted(true)},
		{"Connect's override alone", []string{"consumer.override.isolation.level=read_committed"}, readUncommitted(false)},
		{"default credentials provider", []string{"s3.credentials.provider.class=com.amazonaws.auth.DefaultAWSCredentialsProviderChain"},
			func(*Settings, *SinkConfig) bool { return true }},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			st, err := Load(Input{Command: Sink, ConfigFile: writeFile(t, "c.yaml", minimalYAML), Params: tc.params})
			if err != nil {
				t.Fatal(err)
			}
			c, err := st.Sink(nil)
			if err != nil {
				t.Fatal(err)
			}
			if !tc.check(st, c) {
				t.Errorf("unexpected config %+v", c)
			}
		})
	}
}

func TestUnknownKeys(t *testing.T) {
	tests := []struct {
		key, want string
	}{
		{"flush.sise", `flush.sise: unknown key; did you mean "flush.size"?`},
		{"Flush.Size", `Flush.Size: unknown key; did you mean "flush.size"?`},
		{"s3.bucket", `s3.bucket: unknown key (from`},
		{"s3.bukcet.name", `s3.bukcet.name: unknown key; did you mean "s3.bucket.name"?`},
		{"topic", `topic: unknown key; did you mean "topics"?`},
		{"completely.different.thing", "completely.different.thing: unknown key (from"},
	}
	for _, tc := range tests {
		t.Run(tc.key, func(t *testing.T) {
			err := sinkErr(t, minimalYAML+tc.key+": 1\n")
			if err == nil || !errors.Is(err, ErrConfig) {
				t.Fatalf("err = %v, want a config error", err)
			}
			if !strings.Contains(err.Error(), tc.want) {
				t.Errorf("error %q does not contain %q", err, tc.want)
			}
		})
	}
	// Unknown keys are found in every layer; all are reported at once.
	_, err := Load(Input{Command: Sink, Params: []string{"flsh.size=1"},
		Flags: map[string]string{"bogus.key": "x"}})
	if err == nil || !strings.Contains(err.Error(), "flsh.size: unknown key") || !strings.Contains(err.Error(), "bogus.key: unknown key") {
		t.Errorf("err = %v", err)
	}
}

func TestIgnoredKeys(t *testing.T) {
	st, err := Load(Input{Command: Sink, ConfigFile: writeFile(t, "c.yaml", minimalYAML+`
key.converter: org.apache.kafka.connect.storage.StringConverter
value.converter: org.apache.kafka.connect.converters.ByteArrayConverter
value.converter.schemas.enable: false
consumer.override.max.poll.records: 500
header.converter: x
errors.log.enable: true
s3.poll.interval.ms: 1000
behavior.on.error: log
`)})
	if err != nil {
		t.Fatal(err)
	}
	want := []string{"behavior.on.error", "consumer.override.max.poll.records", "header.converter", "s3.poll.interval.ms"}
	if got := st.Ignored(); !reflect.DeepEqual(got, want) {
		t.Errorf("Ignored() = %q\nwant %q", got, want)
	}
	if _, ok := st.Get(st.keys.S3PollIntervalMs); ok {
		t.Error("a source-only key is in the sink's settings")
	}
	if _, err := st.Sink(nil); err != nil {
		t.Fatal(err)
	}

	// The same keys are active for the source.
	st, err = Load(Input{Command: Source, Params: []string{"s3.poll.interval.ms=1000", "flush.size=3"}})
	if err != nil {
		t.Fatal(err)
	}
	if v, _ := st.Get(st.keys.S3PollIntervalMs); v != "1000" {
		t.Errorf("source s3.poll.interval.ms = %q", v)
	}
	if v, _ := st.Get(st.keys.RecordBatchMaxSize); v != "200" {
		t.Errorf("source record.batch.max.size default = %q", v)
	}
	if !slices.Equal(st.Ignored(), []string{"flush.size"}) {
		t.Errorf("source Ignored() = %q", st.Ignored())
	}
}

func TestFileFormats(t *testing.T) {
	tests := []struct {
		name, file, body string
		want             map[string]string // expected raw values
		wantErr          string
	}{
		{name: "yaml lists and numbers", file: "a.yml",
			body: "topics: [a, b]\nflush.size: 0003\nbootstrap.servers:\n  - h1:1\n  - h2:2\ns3.path.style.access.enabled: false\ntopics.dir: ''\n",
			want: map[string]string{"topics": "a,b", "flush.size": "0003", "bootstrap.servers": "h1:1,h2:2",
				"s3.path.style.access.enabled": "false", "topics.dir": ""}},
		{name: "yaml null leaves default", file: "a.yaml", body: "topics.dir: ~\n", want: map[string]string{"topics.dir": "topics"}},
		{name: "yaml nested", file: "a.yaml", body: "s3:\n  bucket.name: x\n", wantErr: "s3: line 2: nested values are not supported"},
		{name: "yaml duplicate", file: "a.yaml", body: "topics: a\ntopics: b\n", wantErr: `line 2: key "topics" appears twice`},
		{name: "yaml not a map", file: "a.yaml", body: "- a\n- b\n", wantErr: "want a mapping"},
		{name: "yaml syntax", file: "a.yaml", body: "topics: [a\n", wantErr: "config file"},
		{name: "yaml REST shape", file: "a.yaml", body: "name: n\nconfig:\n  flush.size: 5\n",
			want: map[string]string{"name": "n", "flush.size": "5"}},
		{name: "json numbers and bools", file: "a.json", body: `{"flush.size": 12, "s3.part.size": 5242880, "s3.path.style.access.enabled": false, "topics": ["x","y"]}`,
			want: map[string]string{"flush.size": "12", "s3.part.size": "5242880", "s3.path.style.access.enabled": "false", "topics": "x,y"}},
		{name: "json trailing data", file: "a.json", body: `{"flush.size": 1} {}`, wantErr: "unexpected data after the JSON object"},
		{name: "json nested", file: "a.json", body: `{"s3": {"bucket": "x"}}`, wantErr: "s3: nested values are not supported"},
		{name: "rest names differ", file: "a.json", body: `{"name": "a", "config": {"name": "b"}}`, wantErr: `name: top-level "a" and config name "b" differ`},
		{name: "rest extra top key", file: "a.json", body: `{"name": "a", "config": {}, "extra": 1}`, wantErr: "extra: unknown top-level key"},
		{name: "rest config not a map", file: "a.json", body: `{"name": "a", "config": "x"}`, wantErr: "config: want a mapping"},
		{name: "rest GET output", file: "a.json", body: `{"name": "a", "config": {"name": "a", "flush.size": "4"}, "tasks": [{"connector": "a", "task": 0}], "type": "sink"}`,
			want: map[string]string{"name": "a", "flush.size": "4"}},
		{name: "properties", file: "a.properties", body: "flush.size = 7\ntopics.dir=\n",
			want: map[string]string{"flush.size": "7", "topics.dir": ""}},
		{name: "sniff json", file: "conf", body: ` {"flush.size": "8"}`, want: map[string]string{"flush.size": "8"}},
		{name: "sniff yaml", file: "conf", body: "flush.size: 9\ntopics: [a]\n", want: map[string]string{"flush.size": "9", "topics": "a"}},
		{name: "sniff properties", file: "conf", body: "flush.size=10\ntopics=a\n", want: map[string]string{"flush.size": "10", "topics": "a"}},
		{name: "empty yaml", file: "a.yaml", body: "", want: map[string]string{"topics.dir": "topics"}},
		{name: "missing file", file: "", wantErr: "config file"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			path := filepath.Join(t.TempDir(), "does-not-exist.yaml")
			if tc.file != "" {
				path = writeFile(t, tc.file, tc.body)
			}
			st, err := Load(Input{Command: Sink, ConfigFile: path})
			if tc.wantErr != "" {
				if err == nil || !strings.Contains(err.Error(), tc.wantErr) || !errors.Is(err, ErrConfig) {
					t.Fatalf("err = %v, want one containing %q", err, tc.wantErr)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			for k, want := range tc.want {
				if got, ok := st.Get(st.keys.Lookup(k)); !ok || got != want {
					t.Errorf("%s = %q (set %v), want %q", k, got, ok, want)
				}
			}
		})
	}
}

func TestLoadSettingsNeedsCommand(t *testing.T) {
	if _, err := Load(Input{}); err == nil || errors.Is(err, ErrConfig) {
		t.Errorf("err = %v, want a programming error that is not a config error", err)
	}
}

func TestEnvName(t *testing.T) {
	for key, want := range map[string]string{
		"flush.size":                     "KAFKAS3_FLUSH_SIZE",
		"s3.bucket.name":                 "KAFKAS3_S3_BUCKET_NAME",
		"filename.offset.zero.pad.width": "KAFKAS3_FILENAME_OFFSET_ZERO_PAD_WIDTH",
		"a-b.c":                          "KAFKAS3_A_B_C",
	} {
		if got := EnvName(key); got != want {
			t.Errorf("EnvName(%q) = %q, want %q", key, got, want)
		}
	}
}

func TestReadConcurrencyKey(t *testing.T) {
	st, err := Load(Input{Command: Source, ConfigFile: writeFile(t, "c.yaml", minimalYAML)})
	if err != nil {
		t.Fatal(err)
	}
	sc, err := st.Source(nil)
	if err != nil || sc.Restore.ReadConcurrency != 64 {
		t.Fatalf("default: %v, %v", sc.Restore.ReadConcurrency, err)
	}
	st, err = Load(Input{Command: Source, ConfigFile: writeFile(t, "c.yaml", minimalYAML), Params: []string{"kafkas3.read.concurrency=0"}})
	if err == nil {
		_, err = st.Source(nil)
	}
	if err == nil || !strings.Contains(err.Error(), "kafkas3.read.concurrency") {
		t.Fatalf("0 accepted: %v", err)
	}
}
