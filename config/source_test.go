package config

import (
	"errors"
	"reflect"
	"slices"
	"strings"
	"testing"
	"time"
)

func loadSource(t *testing.T, body string, params ...string) (*SourceOptions, error) {
	t.Helper()
	st, err := Load(Input{Command: Source, ConfigFile: writeFile(t, "c.yaml", body), Params: params})
	if err != nil {
		return nil, err
	}
	return st.Source()
}

func TestSourceOptionsFromSinkFixture(t *testing.T) {
	// The sink's quick-start file serves the source unchanged.
	st, err := Load(Input{Command: Source, ConfigFile: fixtures + "/orders.yaml"})
	if err != nil {
		t.Fatal(err)
	}
	// name is the sink's: the source lists it as ignored.
	if want := []string{"connector.class", "flush.size", "name", "s3.part.size", "schema.compatibility", "tasks.max"}; !slices.Equal(st.Ignored(), want) {
		t.Errorf("Ignored() = %q, want %q", st.Ignored(), want)
	}
	o, err := st.Source()
	if err != nil {
		t.Fatal(err)
	}
	want := &SourceOptions{
		KafkaSettings: KafkaSettings{
			BootstrapServers: []string{"localhost:9092"},
			SecurityProtocol: "PLAINTEXT",
		},
		ArchiveTopics: []string{"s3_topic"},
		LayoutSettings: LayoutSettings{TopicsDir: "topics", DirectoryDelim: "/", FileDelim: "+", OffsetPadWidth: 10,
			Partitioner: PartitionerDefault},
		StoreSettings: StoreSettings{Store: StoreS3, Bucket: "confluent-kafka-connect-s3-testing", Region: "us-west-2", PathStyle: true,
			PartRetries: 3, RetryBackoff: 200 * time.Millisecond},
		FormatSettings: FormatSettings{CompressionType: CompressionNone, Format: FormatJSON, ParquetCodec: "snappy", BytesSeparator: "\n", BytesExtension: ".bin"},
		IndexSettings:  IndexSettings{IndexPrefix: "_kafkas3/"},
		ValueConverter: ConverterSettings{CredentialsSource: "URL", SchemasEnable: true},
		KeyConverter:   ConverterSettings{CredentialsSource: "URL", SchemasEnable: true},
		PollInterval:   time.Minute, OnError: OnErrorFail, BatchMaxSize: 200, TombstonePartition: "tombstone",
	}
	if !reflect.DeepEqual(o, want) {
		t.Errorf("Source() =\n%+v\nwant\n%+v", o, want)
	}
	// Sink and Source guard against settings of the other command.
	if _, err := st.Sink(); err == nil {
		t.Error("Sink() on source settings succeeded")
	}
	sink, err := Load(Input{Command: Sink, ConfigFile: fixtures + "/orders.yaml"})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := sink.Source(); err == nil {
		t.Error("Source() on sink settings succeeded")
	}
}

func TestSourceOptionsKeys(t *testing.T) {
	const base = "format.class: json\nstore.local.dir: /archive\n"
	o, err := loadSource(t, base+"topics.regex: orders-.*\ns3.compression.type: gzip\n",
		"s3.poll.interval.ms=1500", "behavior.on.error=LOG", "record.batch.max.size=50")
	if err != nil {
		t.Fatal(err)
	}
	if o.BootstrapServers != nil || o.ArchiveTopics != nil || o.ArchiveTopicsRegex != "orders-.*" ||
		o.Store != StoreLocal || o.CompressionType != CompressionGzip ||
		o.PollInterval != 1500*time.Millisecond || o.OnError != OnErrorLog || o.BatchMaxSize != 50 {
		t.Errorf("Source() = %+v", o)
	}

	// s3.path.style.access is the source's name; the sink's name works too.
	for _, tc := range []struct {
		params []string
		want   bool
	}{
		{nil, true},
		{[]string{"s3.path.style.access=false"}, false},
		{[]string{"s3.path.style.access.enabled=false"}, false},
		{[]string{"s3.path.style.access=true", "s3.path.style.access.enabled=true"}, true},
	} {
		o, err := loadSource(t, base, tc.params...)
		if err != nil {
			t.Fatalf("%q: %v", tc.params, err)
		}
		if o.PathStyle != tc.want {
			t.Errorf("%q: PathStyle = %v, want %v", tc.params, o.PathStyle, tc.want)
		}
	}
}

func TestSourceOptionsErrors(t *testing.T) {
	const base = "format.class: json\nstore.local.dir: /archive\n"
	tests := []struct {
		name   string
		body   string
		params []string
		want   []string
	}{
		{"no format", "store.local.dir: /a\n", nil, []string{"format.class: required key is not set"}},
		{"no bucket", "format.class: json\n", nil, []string{"s3.bucket.name: required key is not set"}},
		{"on error", base, []string{"behavior.on.error=skip"},
			[]string{`behavior.on.error: "skip" is not allowed; want one of fail, ignore, log (from -p behavior.on.error)`}},
		{"poll", base, []string{"s3.poll.interval.ms=-5"}, []string{`s3.poll.interval.ms: "-5" is out of range; want an integer > 0`}},
		{"batch", base, []string{"record.batch.max.size=x"}, []string{`record.batch.max.size: "x" is not an integer`}},
		{"topics and regex", base + "topics: a\ntopics.regex: b\n", nil,
			[]string{"topics.regex: \"b\" is set together with topics"}},
		{"bad topic", base + "topics: a/b\n", nil, []string{`topics: "a/b" has "a/b", which is not a Kafka topic name`}},
		{"bad brokers", base + "bootstrap.servers: nohost\n", nil, []string{`bootstrap.servers: "nohost" has "nohost", which is not host:port`}},
		{"path style", base, []string{"s3.path.style.access=false", "s3.path.style.access.enabled=true"},
			[]string{`s3.path.style.access: "false" contradicts s3.path.style.access.enabled=true`}},
		{"partitioner", base, []string{"partitioner.class=TimeBasedPartitioner"}, []string{"partitioner.class: \"TimeBasedPartitioner\" is not supported yet"}},
		{"connector", base + "connector.class: io.confluent.connect.jdbc.JdbcSourceConnector\n", nil,
			[]string{"connector.class: \"io.confluent.connect.jdbc.JdbcSourceConnector\" is not an S3 connector"}},
		{"all at once", "store.local.dir: /a\n", []string{"behavior.on.error=x", "s3.poll.interval.ms=0"},
			[]string{"3 configuration problems", "format.class", "behavior.on.error", "s3.poll.interval.ms"}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			_, err := loadSource(t, tc.body, tc.params...)
			if !errors.Is(err, ErrConfig) {
				t.Fatalf("err = %v, want a config error", err)
			}
			for _, w := range tc.want {
				if !strings.Contains(err.Error(), w) {
					t.Errorf("err lacks %q:\n%v", w, err)
				}
			}
		})
	}
	// The source connector's own class is fine.
	if _, err := loadSource(t, base+"connector.class: io.confluent.connect.s3.source.S3SourceConnector\n"); err != nil {
		t.Error(err)
	}
}

// TestSourceIgnoresSinkIdentity: name and group.id are the sink's; the
// source reports them as ignored and does not need them.
func TestSourceIgnoresSinkIdentity(t *testing.T) {
	st, err := Load(Input{Command: Source, Params: []string{
		"name=orders", "group.id=mine", "format.class=json", "store.local.dir=/a"}})
	if err != nil {
		t.Fatal(err)
	}
	if want := []string{"group.id", "name"}; !slices.Equal(st.Ignored(), want) {
		t.Errorf("Ignored() = %q, want %q", st.Ignored(), want)
	}
	if _, set := st.Get("name"); set {
		t.Error("name is set for the source")
	}
	if _, err := st.Source(); err != nil {
		t.Errorf("Source() = %v", err)
	}
	// Without them the source is fine too: nothing is required of it but
	// the format and a store.
	if _, err := loadSource(t, "format.class: json\nstore.local.dir: /a\n"); err != nil {
		t.Errorf("Source() without name: %v", err)
	}
}
