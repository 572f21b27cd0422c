//go:build integration

package e2e

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"hash/crc32"
	"strings"
	"testing"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/s3"
	"github.com/aws/aws-sdk-go-v2/service/s3/types"
	"github.com/kafkas3/kafkas3/index"
	"github.com/kafkas3/kafkas3/verify"
)

// TestIntegrationChecksumsFullObject: the sink archives into versitygw an
// object larger than s3.part.size (a multipart upload) and a small one (one
// PutObject); `aws s3api head-object --checksum-mode ENABLED` reports for
// each a FULL_OBJECT CRC32C equal to the CRC32C of its bytes and to the
// index entry's (v2, no SHA-256 by default). Plain `kafkas3 verify`
// compares them without reading an object and is clean; after the
// multipart object is replaced (a raw PutObject with its CRC32C) by one of
// the same size with one byte flipped, plain verify exits 1 naming it (kind checksum),
// still reading no object, and --deep finds it too.
func TestIntegrationChecksumsFullObject(t *testing.T) {
	b := newBed(t)
	const topic, big, small = "e2e-checksums", 6000, 10
	b.k.CreateTopic(t, topic, 1)
	b.produce(t, topic, 1, 0, big+small, bigValue)
	bucket := b.s.CreateBucket(t)
	cfg := b.sinkConf("e2e-checksums", topic, bucket).with("flush.size", fmt.Sprint(big)).write(t)
	if sum, p := runOnce(t, "sink", cfg); sum.records != big+small {
		t.Fatalf("sink summary %q\n%s", sum.line, p.logs())
	}

	objs := b.snapshot(t, bucket)
	entries := map[string]index.Object{}
	for k, o := range objs {
		if !strings.HasPrefix(k, indexPrefix+"index/") {
			continue
		}
		es, err := index.Decode(k, bytes.NewReader(o.data))
		if err != nil {
			t.Fatal(err)
		}
		for _, e := range es {
			if e.V != index.Version {
				t.Errorf("entry %s is v%d, want v%d", e.Key, e.V, index.Version)
			}
			for _, ob := range e.Objects {
				entries[ob.Key] = ob
			}
		}
	}
	multipart := fmt.Sprintf("topics/%s/partition=0/%s+0+%010d.json", topic, topic, 0)
	single := fmt.Sprintf("topics/%s/partition=0/%s+0+%010d.json", topic, topic, big)
	if len(entries) != 2 || objs[multipart].size <= 5<<20 || objs[single].size >= 5<<20 {
		t.Fatalf("index entries %v; sizes %d and %d: want a multipart object and a small one", entries, objs[multipart].size, objs[single].size)
	}
	for _, key := range []string{multipart, single} {
		var head struct {
			ContentLength  int64
			ChecksumCRC32C string
			ChecksumType   string
			ETag           string
		}
		out := b.awsCLI(t, "s3api", "head-object", "--bucket", bucket, "--key", key, "--checksum-mode", "ENABLED")
		if err := json.Unmarshal([]byte(out), &head); err != nil {
			t.Fatalf("head-object %s: %v\n%s", key, err, out)
		}
		crc := index.FormatCRC32C(crc32.Checksum(objs[key].data, crc32.MakeTable(crc32.Castagnoli)))
		if head.ChecksumType != "FULL_OBJECT" || head.ChecksumCRC32C != crc || entries[key].CRC32C != crc || entries[key].SHA256 != "" {
			t.Fatalf("%s: the store reports %s CRC32C %q, its bytes have %q, the index says %q (sha256 %q)\n%s",
				key, head.ChecksumType, head.ChecksumCRC32C, crc, entries[key].CRC32C, entries[key].SHA256, out)
		}
		if etag := strings.Trim(head.ETag, `"`); etag == "" || entries[key].ETag != etag {
			t.Fatalf("%s: the store reports ETag %q, the index says %q", key, etag, entries[key].ETag)
		}
	}

	verifyRun := func(label string, wantCode int, args ...string) *proc {
		t.Helper()
		p := startKafkas3(t, label, "verify", cfg, args...)
		if code := p.wait(2 * time.Minute); code != wantCode {
			t.Fatalf("%s: exit %d, want %d\n%s", label, code, wantCode, p.logs())
		}
		return p
	}
	if p := verifyRun("verify", 0); !strings.Contains(p.stdout(), "checked: listing and sizes; objects proven by their ETag 2, by the CRC32C the store keeps 0, by size only 0") {
		t.Fatalf("verify output:\n%s", p.stdout())
	}

	// Same size, one byte flipped, stored with a raw PutObject carrying the
	// CRC32C of the new bytes (as any S3 client that sends CRC32C does; the
	// aws CLI 1.x sends CRC64NVME, which plain verify counts among the
	// objects whose size alone it could compare, see the README).
	data := bytes.Clone(objs[multipart].data)
	data[len(data)/2] ^= 0x01
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	if _, err := b.s.Client().PutObject(ctx, &s3.PutObjectInput{Bucket: aws.String(bucket), Key: aws.String(multipart),
		Body: bytes.NewReader(data), ChecksumAlgorithm: types.ChecksumAlgorithmCrc32c}); err != nil {
		t.Fatal(err)
	}
	if got := b.awsListKeys(t, bucket)[multipart]; got != objs[multipart].size {
		t.Fatalf("replaced object has %d bytes, want %d", got, objs[multipart].size)
	}
	line := fmt.Sprintf("problem: checksum %s/0 %q: the store keeps CRC32C ", topic, multipart)
	if p := verifyRun("verify after the flip", 1); !strings.Contains(p.stdout(), line) {
		t.Fatalf("verify after the flip lacks %q:\n%s", line, p.logs())
	}
	var rep verify.Report
	if err := json.Unmarshal([]byte(verifyRun("verify --json", 1, "--json").stdout()), &rep); err != nil {
		t.Fatal(err)
	}
	if len(rep.Problems) != 1 || rep.Problems[0].Kind != verify.KindChecksum || rep.Problems[0].Key != multipart ||
		rep.ObjectsRead != 0 || !rep.StoreChecksums || rep.ETagsCompared != 1 || rep.ChecksumsCompared != 1 {
		t.Fatalf("verify --json: %+v", rep)
	}
	if p := verifyRun("verify --deep", 1, "--deep"); !strings.Contains(p.stdout(), fmt.Sprintf("problem: checksum %s/0 %q: object's CRC32C is ", topic, multipart)) {
		t.Fatalf("verify --deep:\n%s", p.stdout())
	}
}
