//go:build integration

package testbed

import (
	"bytes"
	"context"
	"crypto/x509"
	"errors"
	"fmt"
	"io"
	"os"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/credentials"
	"github.com/aws/aws-sdk-go-v2/service/s3"
	"github.com/twmb/franz-go/pkg/kgo"
)

func TestMain(m *testing.M) { os.Exit(Main(m)) }

func TestKafkaIntegration(t *testing.T) {
	start := time.Now()
	k := Kafka(t)
	t.Logf("broker %s available after %v (includes start on first use)", k.Addr, time.Since(start).Round(time.Millisecond))
	if k2 := Kafka(t); k2 != k {
		t.Fatalf("second Kafka call returned another broker %s", k2.Addr)
	}

	const topic, n = "testbed-roundtrip", 500
	k.CreateTopic(t, topic, 2)

	prod := k.Client(t, kgo.DefaultProduceTopic(topic), kgo.RecordPartitioner(kgo.ManualPartitioner()))
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	for i := range n {
		r := &kgo.Record{Partition: int32(i % 2), Key: fmt.Appendf(nil, "k%d", i), Value: fmt.Appendf(nil, "v%d", i)}
		prod.Produce(ctx, r, nil)
	}
	if err := prod.Flush(ctx); err != nil {
		t.Fatal(err)
	}

	cons := k.Client(t, kgo.ConsumeTopics(topic), kgo.ConsumeResetOffset(kgo.NewOffset().AtStart()))
	next := map[int32]int{0: 0, 1: 1} // the index expected next in each partition
	got := 0
	for got < n {
		fs := cons.PollFetches(ctx)
		if err := ctx.Err(); err != nil {
			t.Fatalf("consumed %d of %d records: %v", got, n, err)
		}
		fs.EachError(func(tp string, p int32, err error) { t.Fatalf("fetch %s[%d]: %v", tp, p, err) })
		fs.EachRecord(func(r *kgo.Record) {
			want := next[r.Partition]
			if string(r.Key) != fmt.Sprintf("k%d", want) || string(r.Value) != fmt.Sprintf("v%d", want) {
				t.Fatalf("partition %d offset %d: key %q value %q, want k%d v%d", r.Partition, r.Offset, r.Key, r.Value, want, want)
			}
			next[r.Partition] = want + 2
			got++
		})
	}

	// Topics are never created by accident.
	meta := k.Client(t)
	req := kgo.Record{Topic: "testbed-no-such-topic", Value: []byte("x")}
	pctx, pcancel := context.WithTimeout(ctx, 3*time.Second)
	defer pcancel()
	if err := meta.ProduceSync(pctx, &req).FirstErr(); err == nil {
		t.Fatal("produce to a topic never created succeeded: auto.create.topics.enable is on")
	}
}

func TestS3StopStartIntegration(t *testing.T) {
	start := time.Now()
	s := S3(t)
	t.Logf("versitygw %s available after %v", s.Endpoint, time.Since(start).Round(time.Millisecond))
	b1, b2 := s.CreateBucket(t), s.CreateBucket(t)
	if b1 == b2 {
		t.Fatalf("CreateBucket returned %q twice", b1)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	cl := s.Client()
	body := bytes.Repeat([]byte("kafkas3"), 1000)
	if _, err := cl.PutObject(ctx, &s3.PutObjectInput{Bucket: aws.String(b1), Key: aws.String("a/b.bin"), Body: bytes.NewReader(body)}); err != nil {
		t.Fatal(err)
	}

	if err := s.Stop(); err != nil {
		t.Fatal(err)
	}
	dctx, dcancel := context.WithTimeout(ctx, 5*time.Second)
	_, err := cl.HeadObject(dctx, &s3.HeadObjectInput{Bucket: aws.String(b1), Key: aws.String("a/b.bin")}, func(o *s3.Options) { o.RetryMaxAttempts = 1 })
	dcancel()
	if err == nil {
		t.Fatal("HeadObject succeeded while versitygw was stopped")
	}

	restart := time.Now()
	if err := s.Start(); err != nil {
		t.Fatal(err)
	}
	t.Logf("versitygw restarted in %v", time.Since(restart).Round(time.Millisecond))
	out, err := cl.GetObject(ctx, &s3.GetObjectInput{Bucket: aws.String(b1), Key: aws.String("a/b.bin")})
	if err != nil {
		t.Fatalf("object lost across Stop/Start: %v", err)
	}
	defer out.Body.Close()
	got, err := io.ReadAll(out.Body)
	if err != nil || !bytes.Equal(got, body) {
		t.Fatalf("object after restart: %d bytes, err %v; want %d equal bytes", len(got), err, len(body))
	}
}

// TestKafkaStartFailureIntegration checks that a broker that cannot start
// gives an error carrying its log, and leaves no temp dir behind.
func TestKafkaStartFailureIntegration(t *testing.T) {
	testbed := t.TempDir()
	ctx, cancel := context.WithTimeout(context.Background(), 90*time.Second)
	defer cancel()
	k, err := StartKafka(ctx, Options{TempDir: testbed, KafkaHeap: "lots"})
	if err == nil {
		k.Close()
		t.Fatal("StartKafka with -Xmxlots succeeded")
	}
	msg := err.Error()
	if !strings.Contains(msg, "did not start") || !strings.Contains(msg, "broker.log ---") ||
		!strings.Contains(msg, "Invalid maximum heap size") {
		t.Fatalf("error lacks the broker log tail:\n%s", msg)
	}
	if left, _ := os.ReadDir(testbed); len(left) != 0 {
		t.Fatalf("failed start left %d entries in its temp dir parent", len(left))
	}
}

// TestS3TLSIntegration: the HTTPS versitygw answers at an https://
// endpoint with its self-signed certificate: its Client (trusting CAPath)
// writes and reads an object, Env names the CA in AWS_CA_BUNDLE, and a
// client trusting only the system roots is refused by certificate
// verification.
func TestS3TLSIntegration(t *testing.T) {
	s := S3TLS(t)
	if !strings.HasPrefix(s.Endpoint, "https://127.0.0.1:") || s.CAPath == "" {
		t.Fatalf("endpoint %q, CA %q: want https://127.0.0.1:<port> and a CA file", s.Endpoint, s.CAPath)
	}
	if plain := S3(t); plain == s || strings.HasPrefix(plain.Endpoint, "https") {
		t.Fatalf("S3 returned %s, want the plain HTTP server", plain.Endpoint)
	}
	if !slices.Contains(s.Env(), "AWS_CA_BUNDLE="+s.CAPath) {
		t.Fatalf("Env() = %v, want AWS_CA_BUNDLE=%s", s.Env(), s.CAPath)
	}
	bucket := s.CreateBucket(t)
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	body := bytes.Repeat([]byte("tls"), 1000)
	if _, err := s.Client().PutObject(ctx, &s3.PutObjectInput{Bucket: aws.String(bucket), Key: aws.String("k"), Body: bytes.NewReader(body)}); err != nil {
		t.Fatal(err)
	}
	out, err := s.Client().GetObject(ctx, &s3.GetObjectInput{Bucket: aws.String(bucket), Key: aws.String("k")})
	if err != nil {
		t.Fatal(err)
	}
	got, err := io.ReadAll(out.Body)
	out.Body.Close()
	if err != nil || !bytes.Equal(got, body) {
		t.Fatalf("read back %d bytes, err %v; want %d equal bytes", len(got), err, len(body))
	}
	untrusting := s3.New(s3.Options{Region: s.Region, BaseEndpoint: aws.String(s.Endpoint), UsePathStyle: true,
		Credentials: credentials.NewStaticCredentialsProvider(s.AccessKey, s.SecretKey, ""), RetryMaxAttempts: 1})
	_, err = untrusting.ListBuckets(ctx, &s3.ListBucketsInput{})
	var unknown x509.UnknownAuthorityError
	if !errors.As(err, &unknown) {
		t.Fatalf("ListBuckets without the CA: %v, want an unknown authority", err)
	}
}
