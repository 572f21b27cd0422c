//go:build integration

package smoke

import (
	"bytes"
	"context"
	"crypto/rand"
	"crypto/sha256"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/s3"
	"github.com/aws/aws-sdk-go-v2/service/s3/types"
	"github.com/twmb/franz-go/pkg/kgo"

	"github.com/kafkas3/kafkas3/internal/testbed"
)

func TestMain(m *testing.M) { os.Exit(testbed.Main(m)) }

const (
	kcatRecords    = 10000
	kcatPartitions = 3
	kcatBatch      = 1000 // records per "batch" header value
)

// kcatKey and kcatValue are record i's key and value.
func kcatKey(i int) string { return fmt.Sprintf("key-%05d", i) }
func kcatValue(i int) string {
	return fmt.Sprintf("value-%05d-%s", i, strings.Repeat(string(rune('a'+i%26)), i%50))
}

// kcatHeaders are the headers kcat is told to put on record i, in order. kcat
// puts the same -H headers on every record of one run, so each run covers one
// partition and one batch; a repeated key and an empty value are included.
func kcatHeaders(i int) []kgo.RecordHeader {
	return []kgo.RecordHeader{
		{Key: "partition", Value: []byte(strconv.Itoa(i % kcatPartitions))},
		{Key: "batch", Value: []byte(strconv.Itoa(i / kcatBatch))},
		{Key: "dup", Value: []byte("first")},
		{Key: "dup", Value: []byte("second")},
		{Key: "empty", Value: []byte{}},
	}
}

func TestKcatProduceFranzConsumeIntegration(t *testing.T) {
	kcat := testbed.Tool(t, "kcat", "apt-get install kcat")
	k := testbed.Kafka(t)
	const topic = "smoke-kcat"
	k.CreateTopic(t, topic, kcatPartitions)
	ctx, cancel := context.WithTimeout(context.Background(), 3*time.Minute)
	defer cancel()

	start := time.Now()
	runs := 0
	for batch := 0; batch*kcatBatch < kcatRecords; batch++ {
		for p := range kcatPartitions {
			var in bytes.Buffer
			first := 0
			for i := batch * kcatBatch; i < min((batch+1)*kcatBatch, kcatRecords); i++ {
				if i%kcatPartitions != p {
					continue
				}
				if in.Len() == 0 {
					first = i
				}
				fmt.Fprintf(&in, "%s:%s\n", kcatKey(i), kcatValue(i))
			}
			args := []string{"-P", "-q", "-b", k.Addr, "-t", topic, "-p", strconv.Itoa(p), "-K", ":",
				"-X", "message.timeout.ms=30000",
				// Idempotent, so a batch librdkafka retries (the topic's
				// leader not known yet on a fresh broker) cannot land after
				// the next one: a CI run saw partition 0 start again at
				// key-00000 after key-00999.
				"-X", "enable.idempotence=true"}
			for _, h := range kcatHeaders(first) {
				args = append(args, "-H", h.Key+"="+string(h.Value))
			}
			cmd := exec.CommandContext(ctx, kcat, args...)
			cmd.Stdin = &in
			if out, err := cmd.CombinedOutput(); err != nil || len(bytes.TrimSpace(out)) > 0 {
				t.Fatalf("kcat %s: %v\n%s", strings.Join(args, " "), err, out)
			}
			runs++
		}
	}
	t.Logf("kcat produced %d records in %d runs in %v", kcatRecords, runs, time.Since(start).Round(time.Millisecond))

	start = time.Now()
	cl := k.Client(t, kgo.ConsumeTopics(topic), kgo.ConsumeResetOffset(kgo.NewOffset().AtStart()))
	seen := make([]bool, kcatRecords)
	last := map[int32]int{0: -1, 1: -1, 2: -1}
	got := 0
	for got < kcatRecords {
		fs := cl.PollFetches(ctx)
		if ctx.Err() != nil {
			t.Fatalf("consumed %d of %d records before timeout", got, kcatRecords)
		}
		fs.EachError(func(tp string, p int32, err error) { t.Fatalf("fetch %s[%d]: %v", tp, p, err) })
		for _, r := range fs.Records() {
			where := fmt.Sprintf("partition %d offset %d", r.Partition, r.Offset)
			i, err := strconv.Atoi(strings.TrimPrefix(string(r.Key), "key-"))
			if err != nil || i < 0 || i >= kcatRecords || string(r.Key) != kcatKey(i) {
				t.Fatalf("%s: unexpected key %q", where, r.Key)
			}
			if seen[i] {
				t.Fatalf("%s: key %q seen twice", where, r.Key)
			}
			seen[i] = true
			got++
			if want := int32(i % kcatPartitions); r.Partition != want {
				t.Errorf("%s: key %q in partition %d, kcat was told %d", where, r.Key, r.Partition, want)
			}
			if i <= last[r.Partition] {
				t.Errorf("%s: key %q after index %d: order lost", where, r.Key, last[r.Partition])
			}
			last[r.Partition] = i
			if string(r.Value) != kcatValue(i) {
				t.Errorf("%s: value %q, want %q", where, r.Value, kcatValue(i))
			}
			if !equalHeaders(r.Headers, kcatHeaders(i)) {
				t.Errorf("%s: headers %s, want %s", where, fmtHeaders(r.Headers), fmtHeaders(kcatHeaders(i)))
			}
			if t.Failed() {
				t.FailNow()
			}
		}
	}
	t.Logf("franz-go consumed and checked %d records in %v", got, time.Since(start).Round(time.Millisecond))
}

func equalHeaders(a, b []kgo.RecordHeader) bool {
	if len(a) != len(b) {
		return false
	}
	for i := range a {
		if a[i].Key != b[i].Key || !bytes.Equal(a[i].Value, b[i].Value) {
			return false
		}
	}
	return true
}

func fmtHeaders(hs []kgo.RecordHeader) string {
	parts := make([]string, len(hs))
	for i, h := range hs {
		parts[i] = fmt.Sprintf("%s=%q", h.Key, h.Value)
	}
	return "[" + strings.Join(parts, " ") + "]"
}

func TestMultipartUploadAWSCLIDownloadIntegration(t *testing.T) {
	awsCLI := testbed.Tool(t, "aws", "apt-get install awscli")
	s := testbed.S3(t)
	bucket := s.CreateBucket(t)
	const key, size, partSize = "smoke/multipart.bin", 30 << 20, 5 << 20
	ctx, cancel := context.WithTimeout(context.Background(), 3*time.Minute)
	defer cancel()

	data := make([]byte, size)
	if _, err := rand.Read(data); err != nil {
		t.Fatal(err)
	}
	want := sha256.Sum256(data)

	start := time.Now()
	etag, parts, err := multipartUpload(ctx, s.Client(), bucket, key, data, partSize)
	if err != nil {
		t.Fatalf("multipart upload of %d bytes: %v", size, err)
	}
	if parts < 2 {
		t.Fatalf("upload of %d bytes with %d-byte parts took %d part", size, partSize, parts)
	}
	t.Logf("uploaded %d MiB in %d %d-MiB parts in %v (etag %s)", size>>20, parts, partSize>>20,
		time.Since(start).Round(time.Millisecond), etag)
	head, err := s.Client().HeadObject(ctx, &s3.HeadObjectInput{Bucket: aws.String(bucket), Key: aws.String(key)})
	if err != nil {
		t.Fatal(err)
	}
	if aws.ToInt64(head.ContentLength) != size || !strings.HasSuffix(strings.Trim(aws.ToString(head.ETag), `"`), fmt.Sprintf("-%d", size/partSize)) {
		t.Fatalf("HeadObject: length %d etag %s, want %d bytes in %d parts", aws.ToInt64(head.ContentLength), aws.ToString(head.ETag), size, size/partSize)
	}

	dir := t.TempDir()
	dst := filepath.Join(dir, "download.bin")
	start = time.Now()
	cmd := exec.CommandContext(ctx, awsCLI, "s3", "cp", "--no-progress", "s3://"+bucket+"/"+key, dst, "--endpoint-url", s.Endpoint)
	cmd.Env = append(os.Environ(), s.Env()...)
	cmd.Env = append(cmd.Env,
		"AWS_CONFIG_FILE="+filepath.Join(dir, "no-config"),
		"AWS_SHARED_CREDENTIALS_FILE="+filepath.Join(dir, "no-credentials"),
		"AWS_EC2_METADATA_DISABLED=true", "AWS_PAGER=")
	if out, err := cmd.CombinedOutput(); err != nil {
		t.Fatalf("aws s3 cp: %v\n%s", err, out)
	}
	t.Logf("aws s3 cp downloaded it in %v", time.Since(start).Round(time.Millisecond))
	got, err := os.ReadFile(dst)
	if err != nil {
		t.Fatal(err)
	}
	if sum := sha256.Sum256(got); sum != want {
		t.Fatalf("downloaded %d bytes with sha256 %x, uploaded %d bytes with sha256 %x", len(got), sum, size, want)
	}
}

// multipartUpload stores data under key with the S3 multipart API, in
// parts of partSize bytes, and returns the object's ETag and the number of
// parts. A failed upload is aborted.
func multipartUpload(ctx context.Context, cl *s3.Client, bucket, key string, data []byte, partSize int) (string, int, error) {
	up, err := cl.CreateMultipartUpload(ctx, &s3.CreateMultipartUploadInput{Bucket: aws.String(bucket), Key: aws.String(key)})
	if err != nil {
		return "", 0, err
	}
	abort := func(err error) (string, int, error) {
		_, _ = cl.AbortMultipartUpload(context.WithoutCancel(ctx), &s3.AbortMultipartUploadInput{Bucket: aws.String(bucket), Key: aws.String(key), UploadId: up.UploadId})
		return "", 0, err
	}
	var done []types.CompletedPart
	for n, off := int32(1), 0; off < len(data); n, off = n+1, off+partSize {
		part, err := cl.UploadPart(ctx, &s3.UploadPartInput{Bucket: aws.String(bucket), Key: aws.String(key), UploadId: up.UploadId,
			PartNumber: aws.Int32(n), Body: bytes.NewReader(data[off:min(off+partSize, len(data))])})
		if err != nil {
			return abort(fmt.Errorf("part %d: %w", n, err))
		}
		done = append(done, types.CompletedPart{PartNumber: aws.Int32(n), ETag: part.ETag})
	}
	res, err := cl.CompleteMultipartUpload(ctx, &s3.CompleteMultipartUploadInput{Bucket: aws.String(bucket), Key: aws.String(key),
		UploadId: up.UploadId, MultipartUpload: &types.CompletedMultipartUpload{Parts: done}})
	if err != nil {
		return abort(err)
	}
	return aws.ToString(res.ETag), len(done), nil
}
