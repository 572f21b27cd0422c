package config

import (
	"errors"
	"github.com/kafkas3/kafkas3/partition"
	"github.com/kafkas3/kafkas3/restore"
	"github.com/kafkas3/kafkas3/s3store"
	"github.com/twmb/franz-go/pkg/kgo"
	"reflect"
	"slices"
	"strings"
	"testing"
	"time"
)

func loadSource(t *testing.T, body string, params ...string) (*SourceConfig, error) {
	t.Helper()
	st, err := Load(Input{Command: Source, ConfigFile: writeFile(t, "c.yaml", body), Params: params})
	if st == nil {
		return nil, err
	}
	c, err := st.Source(nil)
	if err != nil {
		return nil, err
	}
	return c, nil
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
	c, err := st.Source(nil)
	if err != nil {
		t.Fatal(err)
	}
	r := c.Restore
	if r.Format == nil || r.Format.Extension() != ".json" || len(r.KafkaOpts) != 0 || r.ValueEncoder != nil || r.KeyEncoder != nil {
		t.Errorf("Format %v, KafkaOpts %d, encoders %v %v", r.Format, len(r.KafkaOpts), r.ValueEncoder, r.KeyEncoder)
	}
	r.Format, r.KafkaOpts = nil, nil
	want := restore.Config{
		Brokers:       []string{"localhost:9092"},
		ArchiveTopics: []string{"s3_topic"},
		Keys:          partition.KeyConfig{TopicsDir: "topics", DirectoryDelim: "/", FileDelim: "+", OffsetPadWidth: 10},
		IndexPrefix:   "_kafkas3/",
		PollInterval:  time.Minute, OnError: restore.OnError("fail"), BatchSize: 200, TombstonePartition: "tombstone", ReadConcurrency: 64,
	}
	if !reflect.DeepEqual(r, want) {
		t.Errorf("Source() =\n%+v\nwant\n%+v", r, want)
	}
	wantStore := StoreConfig{S3: s3store.S3Config{Bucket: "confluent-kafka-connect-s3-testing", Region: "us-west-2", PathStyle: true,
		PartRetries: 3, RetryBackoff: 200 * time.Millisecond}}
	if !reflect.DeepEqual(c.Store, wantStore) || c.FormatName != "json" {
		t.Errorf("Store = %+v, FormatName %q", c.Store, c.FormatName)
	}
	// Sink and Source guard against settings of the other command.
	if _, err := st.Sink(nil); err == nil {
		t.Error("Sink() on source settings succeeded")
	}
	sink, err := Load(Input{Command: Sink, ConfigFile: fixtures + "/orders.yaml"})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := sink.Source(nil); err == nil {
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
	r := o.Restore
	if r.Brokers != nil || r.ArchiveTopics != nil || r.ArchiveTopicsRegex.String() != "orders-.*" ||
		o.Store.LocalDir != "/archive" || r.Format.Extension() != ".json.gz" ||
		r.PollInterval != 1500*time.Millisecond || r.OnError != "log" || r.BatchSize != 50 {
		t.Errorf("Source() = %+v", o)
	}

	// s3.compression.type zstd: the source reads .json.zst objects.
	o, err = loadSource(t, base+"topics: orders\ns3.compression.type: zstd\n")
	if err != nil || o.Restore.Format.Extension() != ".json.zst" {
		t.Fatalf("zstd source: %v, %v", o, err)
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
		if o.Store.S3.PathStyle != tc.want {
			t.Errorf("%q: PathStyle = %v, want %v", tc.params, o.Store.S3.PathStyle, tc.want)
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
		{"partitioner", base, []string{"partitioner.class=TimeBasedPartitioner"}, []string{"path.format: required key is not set (partitioner.class is time)",
			"timezone: required key is not set (partitioner.class is time)"}},
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
	if _, set := st.Get(st.keys.Name); set {
		t.Error("name is set for the source")
	}
	if _, err := st.Source(nil); err != nil {
		t.Errorf("Source() = %v", err)
	}
	// Without them the source is fine too: nothing is required of it but
	// the format and a store.
	if _, err := loadSource(t, "format.class: json\nstore.local.dir: /a\n"); err != nil {
		t.Errorf("Source() without name: %v", err)
	}
}

// TestClientID: client.id becomes the Kafka client id of the source's
// producer and the sink's consumer (broker quotas by client id); unset,
// the client's own default stays.
func TestClientID(t *testing.T) {
	src, err := loadSource(t, "bootstrap.servers: localhost:9092\ntopics: orders\nstore.local.dir: /tmp/a\nformat.class: json\n", "client.id=restore-orders")
	if err != nil {
		t.Fatal(err)
	}
	sink, err := loadSink(t, "client.id=archive-orders")
	if err != nil {
		t.Fatal(err)
	}
	plain, err := loadSource(t, "bootstrap.servers: localhost:9092\ntopics: orders\nstore.local.dir: /tmp/a\nformat.class: json\n")
	if err != nil {
		t.Fatal(err)
	}
	for _, c := range []struct {
		opts []kgo.Opt
		want string
	}{{src.Restore.KafkaOpts, "restore-orders"}, {sink.Archive.KafkaOpts, "archive-orders"}, {plain.Restore.KafkaOpts, "kgo"}} {
		cl, err := kgo.NewClient(append([]kgo.Opt{kgo.SeedBrokers("127.0.0.1:1")}, c.opts...)...)
		if err != nil {
			t.Fatal(err)
		}
		got := cl.OptValue(kgo.ClientID)
		cl.Close()
		if got != c.want {
			t.Errorf("client id %v, want %q", got, c.want)
		}
	}
}
