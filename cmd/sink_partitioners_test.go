package cmd

import (
	"fmt"
	"path/filepath"
	"reflect"
	"strings"
	"testing"
	"time"

	"github.com/kafkas3/kafkas3/format"
	"github.com/twmb/franz-go/pkg/kgo"
)

// TestSinkCmdSeedTimeBasedParquet runs the seed article's archiving
// configuration (Connect REST JSON: TimeBasedPartitioner with an hourly
// path.format, partition.duration.ms 3600000, locale en-US, timezone UTC,
// timestamp.extractor Record, ParquetFormat), unchanged apart from the
// endpoints and the converter (JsonConverter with schemas), and checks the
// object keys and their records.
func TestSinkCmdSeedTimeBasedParquet(t *testing.T) {
	ctx := cliContext(t)
	brokers := startKafka(t, 1, "orders")
	env := `{"schema":{"type":"struct","name":"Order","fields":[{"field":"id","type":"int64"}]},"payload":{"id":%d}}`
	cl, err := kgo.NewClient(kgo.SeedBrokers(brokers))
	if err != nil {
		t.Fatal(err)
	}
	hour := func(h, m int) time.Time { return time.Date(2026, 8, 1, h, m, 0, 0, time.UTC) }
	for i, ts := range []time.Time{hour(9, 5), hour(9, 40), hour(10, 1), hour(9, 59), hour(10, 30)} {
		r := &kgo.Record{Topic: "orders", Value: fmt.Appendf(nil, env, i), Timestamp: ts}
		if err := cl.ProduceSync(ctx, r).FirstErr(); err != nil {
			t.Fatal(err)
		}
	}
	cl.Close()
	dir := t.TempDir()
	cfg := writeFile(t, "orders.json", fmt.Sprintf(`{"name": "orders-s3", "config": {
  "connector.class": "io.confluent.connect.s3.S3SinkConnector",
  "tasks.max": "1",
  "topics": "orders",
  "s3.bucket.name": "archive",
  "s3.region": "us-east-1",
  "flush.size": "10000",
  "rotate.interval.ms": "3600000",
  "storage.class": "io.confluent.connect.s3.storage.S3Storage",
  "format.class": "io.confluent.connect.s3.format.parquet.ParquetFormat",
  "partitioner.class": "io.confluent.connect.storage.partitioner.TimeBasedPartitioner",
  "path.format": "'year'=YYYY/'month'=MM/'day'=dd/'hour'=HH",
  "partition.duration.ms": "3600000",
  "locale": "en-US",
  "timezone": "UTC",
  "timestamp.extractor": "Record",
  "value.converter": "org.apache.kafka.connect.json.JsonConverter",
  "value.converter.schemas.enable": "true",
  "bootstrap.servers": %q,
  "store.local.dir": %q
}}`, brokers, dir))
	mustRun(t, ctx, ExitOK, "sink", "-c", cfg, "--once", "--log-level", "warn")
	d := "topics/orders/year=2026/month=08/day=01/hour="
	want := map[string]string{
		d + "09/orders+0+0000000000.snappy.parquet": "[map[id:0] map[id:1]]",
		d + "09/orders+0+0000000003.snappy.parquet": "[map[id:3]]", // late: its hour was committed at offset 2
		d + "10/orders+0+0000000002.snappy.parquet": "[map[id:2] map[id:4]]",
	}
	keys := objectKeys(t, dir)
	got := map[string]string{}
	f, _ := format.NewParquet(format.ParquetConfig{Codec: "snappy"})
	for _, k := range keys {
		got[k] = fmt.Sprint(readValues(t, f, filepath.Join(dir, k)))
	}
	if !reflect.DeepEqual(got, want) {
		t.Fatalf("objects\n got %q\nwant %q", got, want)
	}
}

// TestSinkCmdFieldPartitionerBadRecords: a record without the field stops
// the sink under errors.tolerance none (exit 1, naming the record) and is
// skipped and reported under all.
func TestSinkCmdFieldPartitionerBadRecords(t *testing.T) {
	ctx := cliContext(t)
	brokers := startKafka(t, 1, "f")
	produceValues(t, ctx, brokers, "f", []byte(`{"region":"eu","n":0}`), []byte(`{"n":1}`), []byte(`{"region":true,"n":2}`))
	dir := t.TempDir()
	base := sinkYAML(brokers, dir, "f", 10) + "partitioner.class: FieldPartitioner\npartition.field.name: region\n"
	r := mustRun(t, ctx, ExitFail, "sink", "-c", writeFile(t, "none.yaml", base), "--once", "--log-level", "warn")
	for _, want := range []string{"bad record at topic f partition 0 offset 1 (TASK_PUT): record cannot be partitioned",
		`partition.field.name: value has no field "region"`, "errors.tolerance is none"} {
		if !strings.Contains(r.err, want) {
			t.Errorf("stderr lacks %q:\n%s", want, r.err)
		}
	}
	if keys := objectKeys(t, dir); len(keys) != 0 {
		t.Fatalf("tolerance none left objects %q", keys)
	}
	r = mustRun(t, ctx, ExitOK, "sink", "-c", writeFile(t, "all.yaml", base+"errors.tolerance: all\n"), "--once", "--log-level", "warn")
	if !strings.Contains(r.out, " records=2 ") || !strings.Contains(r.out, " skipped=1 ") || !strings.Contains(r.err, "1 bad records") {
		t.Errorf("summary:\n%s\nstderr:\n%s", r.out, r.err)
	}
	want := []string{"topics/f/region=eu/f+0+0000000000.json", "topics/f/region=true/f+0+0000000002.json"}
	if got := objectKeys(t, dir); !reflect.DeepEqual(got, want) {
		t.Fatalf("objects %q, want %q", got, want)
	}
}

// TestSinkCmdPartitionerConfigErrors: every problem of the partitioner
// keys is reported in one run, with exit code 2, before anything is
// consumed.
func TestSinkCmdPartitionerConfigErrors(t *testing.T) {
	ctx := cliContext(t)
	cfg := writeFile(t, "bad.properties", `name=bad
bootstrap.servers=localhost:1
topics=orders
flush.size=10
store.local.dir=`+t.TempDir()+`
format.class=json
partitioner.class=io.confluent.connect.storage.partitioner.TimeBasedPartitioner
path.format='year'=YYYY/'week'=qq
timestamp.extractor=Record
`)
	r := mustRun(t, ctx, ExitConfig, "sink", "-c", cfg, "--once")
	for _, want := range []string{"4 configuration problems:",
		`path.format: "'year'=YYYY/'week'=qq" is not a Joda-Time pattern`,
		"partition.duration.ms: required key is not set (partitioner.class is time)",
		"locale: required key is not set (partitioner.class is time)",
		"timezone: required key is not set (partitioner.class is time)"} {
		if !strings.Contains(r.err, want) {
			t.Errorf("stderr lacks %q:\n%s", want, r.err)
		}
	}
}
