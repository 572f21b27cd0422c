package cmd

import (
	"fmt"
	"maps"
	"reflect"
	"strings"
	"testing"

	"github.com/kafkas3/kafkas3/internal/s3fake"
	"github.com/twmb/franz-go/pkg/kgo"
)

// fakeS3SinkYAML is a sink config named name for topic on the in-process
// S3 fake (JSON, flush.size 20, 5 MiB parts), with extra lines after it.
func fakeS3SinkYAML(name, topic, brokers, endpoint, bucket, extra string) string {
	return fmt.Sprintf(`name: %s
bootstrap.servers: %s
topics: %s
flush.size: 20
format.class: json
store.url: %s
s3.bucket.name: %s
aws.access.key.id: AKFAKE
aws.secret.access.key: fake-secret
s3.part.size: 5242880
`, name, brokers, topic, endpoint, bucket) + extra
}

// s3OptsYAML is a sink config for the in-process S3 fake with SSE-C,
// object tagging and 5 MiB parts.
func s3OptsYAML(brokers, endpoint, bucket string) string {
	return fakeS3SinkYAML("s3opts", "big", brokers, endpoint, bucket, `s3.sse.customer.key: MDEyMzQ1Njc4OWFiY2RlZjAxMjM0NTY3ODlhYmNkZWY=
s3.object.tagging: true
s3.object.tagging.key.value.pairs: team:data
`)
}

// TestSinkSourceVerifyS3Options runs sink --once, source and verify
// against the S3 fake with SSE-C and object tagging: partition 0's
// objects are multipart uploads (6 MB each), partition 1's a single
// PutObject. Every object is stored SSE-C, every UploadPart and read
// carried the key (the fake refuses them otherwise), each value object
// has Confluent's tags, the restore equals what was produced and verify
// finds the archive complete; without the key the source cannot read it.
func TestSinkSourceVerifyS3Options(t *testing.T) {
	ctx := cliContext(t)
	fake := s3fake.New()
	t.Cleanup(fake.Close)
	const bucket = "kafkas3-options"
	fake.CreateBucket(bucket)
	brokers := startKafka(t, 2, "big")
	cl, err := kgo.NewClient(kgo.SeedBrokers(strings.Split(brokers, ",")...), kgo.RecordPartitioner(kgo.ManualPartitioner()))
	if err != nil {
		t.Fatal(err)
	}
	want := map[int32][]string{}
	var recs []*kgo.Record
	pad := strings.Repeat("x", 300<<10)
	for i := range 40 {
		v := fmt.Sprintf(`{"i":%d,"pad":"%s"}`, i, pad)
		recs, want[0] = append(recs, &kgo.Record{Topic: "big", Partition: 0, Value: []byte(v)}), append(want[0], v)
	}
	for i := range 5 {
		v := fmt.Sprintf(`{"small":%d}`, i)
		recs, want[1] = append(recs, &kgo.Record{Topic: "big", Partition: 1, Value: []byte(v)}), append(want[1], v)
	}
	if err := cl.ProduceSync(ctx, recs...).FirstErr(); err != nil {
		t.Fatal(err)
	}
	cl.Close()
	cfg := writeFile(t, "s3.yaml", s3OptsYAML(brokers, fake.URL, bucket))
	mustRun(t, ctx, ExitOK, "sink", "-c", cfg, "--once", "--log-level", "warn")

	tags := func(start, end, n int) map[string]string {
		return map[string]string{"startOffset": fmt.Sprint(start), "endOffset": fmt.Sprint(end), "recordCount": fmt.Sprint(n), "team": "data"}
	}
	wantTags := map[string]map[string]string{
		"topics/big/partition=0/big+0+0000000000.json": tags(0, 19, 20),
		"topics/big/partition=0/big+0+0000000020.json": tags(20, 39, 20),
		"topics/big/partition=1/big+1+0000000000.json": tags(0, 4, 5),
	}
	for key, w := range wantTags {
		if got := fake.Tags(bucket, key); !maps.Equal(got, w) {
			t.Errorf("%s: tags %v, want %v", key, got, w)
		}
	}
	for _, key := range fake.Keys(bucket) {
		if sse, _ := fake.ObjectSSE(bucket, key); sse.CustomerKeyMD5 != "hRasmdxgYDKV3nvbahU1MA==" {
			t.Errorf("%s stored with %+v, want SSE-C", key, sse)
		}
		if _, value := wantTags[key]; !value && len(fake.Tags(bucket, key)) > 0 {
			t.Errorf("%s (not a value object) is tagged", key)
		}
	}
	if n := fake.Count(s3fake.OpUploadPart); n != 4 {
		t.Errorf("%d parts uploaded, want 4 (two 6 MB objects)", n)
	}

	mustRun(t, ctx, ExitOK, "source", "-c", cfg, "--topic-rename", "copy_of_$0", "--create-topics", "--log-level", "warn")
	if got := readTopic(t, ctx, brokers, "copy_of_big"); !reflect.DeepEqual(got, want) {
		t.Errorf("restored records differ from the produced ones (%d and %d in partition 0)", len(got[0]), len(want[0]))
	}
	reads := fake.Count(s3fake.OpGetObject)
	mustRun(t, ctx, ExitOK, "verify", "-c", cfg, "--deep")
	if fake.Count(s3fake.OpGetObject) == reads {
		t.Error("verify --deep read no object")
	}
	for _, op := range []string{s3fake.OpUploadPart, s3fake.OpGetObject} {
		for i, h := range fake.Headers(op) {
			if h.Get("X-Amz-Server-Side-Encryption-Customer-Key-Md5") != "hRasmdxgYDKV3nvbahU1MA==" {
				t.Fatalf("%s request %d without the SSE-C key", op, i+1)
			}
		}
	}

	noKey := writeFile(t, "nokey.yaml", strings.Replace(s3OptsYAML(brokers, fake.URL, bucket), "s3.sse.customer.key:", "# s3.sse.customer.key:", 1))
	r := runCLI(ctx, "source", "-c", noKey, "--topic-rename", "again_$0", "--create-topics")
	if r.code == ExitOK || !strings.Contains(r.err, "encrypted with a customer key (SSE-C): set s3.sse.customer.key") {
		t.Errorf("source without the SSE-C key: exit %d\n%s%s", r.code, r.out, r.err)
	}
}
