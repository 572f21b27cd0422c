package cmd

import (
	"context"
	"encoding/binary"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"

	"github.com/kafkas3/kafkas3/format"
	"github.com/kafkas3/kafkas3/internal/srfake"
	"github.com/twmb/avro"
	"github.com/twmb/franz-go/pkg/kgo"
)

const typedUser = `{"type":"record","name":"User","fields":[{"name":"id","type":"long"},{"name":"name","type":"string"}]}`

func produceValues(t *testing.T, ctx context.Context, brokers, topic string, values ...[]byte) {
	t.Helper()
	cl, err := kgo.NewClient(kgo.SeedBrokers(brokers), kgo.RecordPartitioner(kgo.ManualPartitioner()))
	if err != nil {
		t.Fatal(err)
	}
	defer cl.Close()
	var recs []*kgo.Record
	for _, v := range values {
		recs = append(recs, &kgo.Record{Topic: topic, Value: v})
	}
	if err := cl.ProduceSync(ctx, recs...).FirstErr(); err != nil {
		t.Fatal(err)
	}
}

func readValues(t *testing.T, f format.Format, path string) []any {
	t.Helper()
	fh, err := os.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	defer fh.Close()
	rr, err := f.NewReader(fh)
	if err != nil {
		t.Fatal(err)
	}
	var out []any
	for {
		r, err := rr.Read()
		if err == io.EOF {
			return out
		}
		if err != nil {
			t.Fatal(err)
		}
		v, err := format.AvroNative(r.ValueTyped)
		if err != nil {
			t.Fatal(err)
		}
		out = append(out, v)
	}
}

func TestSinkCmdAvroConverterToAvro(t *testing.T) {
	ctx := cliContext(t)
	srv, err := srfake.Start(srfake.Config{User: "u", Password: "p"})
	if err != nil {
		t.Fatal(err)
	}
	defer srv.Close()
	id, _, err := srv.Register("users-value", "AVRO", typedUser)
	if err != nil {
		t.Fatal(err)
	}
	brokers := startKafka(t, 1, "users")
	s := avro.MustParse(typedUser)
	var vals [][]byte
	for i := range 4 {
		b, err := s.Encode(map[string]any{"id": int64(i), "name": fmt.Sprint("n", i)})
		if err != nil {
			t.Fatal(err)
		}
		h := []byte{0, 0, 0, 0, 0}
		binary.BigEndian.PutUint32(h[1:], uint32(id))
		vals = append(vals, append(h, b...))
	}
	vals = append(vals, []byte("not avro"))
	produceValues(t, ctx, brokers, "users", vals...)
	dir := t.TempDir()
	cfg := writeFile(t, "sink.yaml", strings.Replace(sinkYAML(brokers, dir, "users", 3),
		"io.confluent.connect.s3.format.json.JsonFormat", "io.confluent.connect.s3.format.avro.AvroFormat", 1)+`
avro.codec: deflate
value.converter: io.confluent.connect.avro.AvroConverter
value.converter.schema.registry.url: `+srv.URL()+`
value.converter.basic.auth.credentials.source: USER_INFO
value.converter.basic.auth.user.info: u:p
errors.tolerance: all
errors.deadletterqueue.topic.name: users-dlq
errors.deadletterqueue.context.headers.enable: true
errors.log.enable: true
`)
	r := mustRun(t, ctx, ExitOK, "sink", "-c", cfg, "--once", "--log-level", "warn")
	if !strings.Contains(r.out, " records=4 objects=2 ") {
		t.Errorf("summary: %q", r.out)
	}
	if !strings.Contains(r.err, "bad record skipped") || !strings.Contains(r.err, "offset=4") {
		t.Errorf("errors.log.enable did not log the bad record: %s", r.err)
	}
	want := []string{"topics/users/partition=0/users+0+0000000000.avro", "topics/users/partition=0/users+0+0000000003.avro"}
	if got := objectKeys(t, dir); !reflect.DeepEqual(got, want) {
		t.Fatalf("objects %q, want %q", got, want)
	}
	f, _ := format.NewAvro(format.AvroConfig{})
	got := append(readValues(t, f, filepath.Join(dir, want[0])), readValues(t, f, filepath.Join(dir, want[1]))...)
	for i, v := range got {
		if w := map[string]any{"id": int64(i), "name": fmt.Sprint("n", i)}; !reflect.DeepEqual(v, w) {
			t.Errorf("value %d = %#v, want %#v", i, v, w)
		}
	}
	if dlq := readTopic(t, ctx, brokers, "users-dlq"); len(dlq[0]) != 1 || dlq[0][0] != "not avro" {
		t.Errorf("DLQ = %q", dlq)
	}
}

func TestSinkCmdJSONSchemasToParquet(t *testing.T) {
	ctx := cliContext(t)
	brokers := startKafka(t, 1, "j")
	env := `{"schema":{"type":"struct","name":"R","fields":[{"field":"id","type":"int64"},{"field":"s","type":"string","optional":true}]},"payload":{"id":%d,"s":"x%d"}}`
	produceValues(t, ctx, brokers, "j", fmt.Appendf(nil, env, 0, 0), fmt.Appendf(nil, env, 1, 1))
	dir := t.TempDir()
	cfg := writeFile(t, "sink.yaml", strings.Replace(sinkYAML(brokers, dir, "j", 2),
		"io.confluent.connect.s3.format.json.JsonFormat", "parquet", 1)+`
parquet.codec: zstd
value.converter: org.apache.kafka.connect.json.JsonConverter
`)
	mustRun(t, ctx, ExitOK, "sink", "-c", cfg, "--once", "--log-level", "warn")
	key := "topics/j/partition=0/j+0+0000000000.zstd.parquet"
	if got := objectKeys(t, dir); !reflect.DeepEqual(got, []string{key}) {
		t.Fatalf("objects %q", got)
	}
	f, _ := format.NewParquet(format.ParquetConfig{Codec: "zstd"})
	got := readValues(t, f, filepath.Join(dir, key))
	if len(got) != 2 || fmt.Sprint(got[1]) != "map[id:1 s:x1]" {
		t.Fatalf("values %v", got)
	}
}

func TestSinkCmdToleranceNoneNamesTheRecord(t *testing.T) {
	ctx := cliContext(t)
	brokers := startKafka(t, 1, "j")
	produceValues(t, ctx, brokers, "j", []byte(`{"schema":{"type":"string"},"payload":"a"}`), []byte(`plain`))
	dir := t.TempDir()
	cfg := writeFile(t, "sink.yaml", sinkYAML(brokers, dir, "j", 10)+"value.converter: json\n")
	r := mustRun(t, ctx, ExitFail, "sink", "-c", cfg, "--once", "--log-level", "warn")
	if !strings.Contains(r.err, "topic j partition 0 offset 1") || !strings.Contains(r.err, "errors.tolerance") {
		t.Errorf("stderr: %s", r.err)
	}
}
