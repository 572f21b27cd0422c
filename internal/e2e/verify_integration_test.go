//go:build integration

package e2e

import (
	"encoding/json"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/kafkas3/kafkas3/index"
	"github.com/kafkas3/kafkas3/verify"
)

// TestIntegrationVerify: sink --once into versitygw writes one index object
// per rotation (listed with the aws CLI); `kafkas3 verify` (plain and
// --deep) exits 0; after `aws s3 rm` of one object it exits 1 naming the
// object, in the table and in --json.
func TestIntegrationVerify(t *testing.T) {
	b := newBed(t)
	const topic, parts, perPart, flush = "e2e-verify", 3, 2_500, 1000
	b.k.CreateTopic(t, topic, parts)
	b.produce(t, topic, parts, 0, perPart, value)
	bucket := b.s.CreateBucket(t)
	cfg := b.sinkConf("e2e-verify", topic, bucket).write(t)

	sum, _ := runOnce(t, "sink", cfg)
	// 2,500 per partition with flush.size 1000: rotations at 1000, 2000, 2500.
	if sum.indexObjects != parts*3 {
		t.Fatalf("summary %q: want index_objects=%d", sum.line, parts*3)
	}
	ls := b.awsCLI(t, "s3", "ls", "--recursive", "s3://"+bucket+"/_kafkas3/index/")
	var indexKeys []string
	for _, line := range strings.Split(strings.TrimSpace(ls), "\n") {
		if f := strings.Fields(line); len(f) == 4 {
			indexKeys = append(indexKeys, f[3])
		}
	}
	// The key names the writer: the group connect-e2e-verify.
	want := index.Key("_kafkas3/", topic, 1, 2500, index.WriterOf("connect-e2e-verify"))
	if len(indexKeys) != parts*3 || !strings.Contains(ls, want) {
		t.Fatalf("aws s3 ls of the index lists %d objects, want %d including %s:\n%s", len(indexKeys), parts*3, want, ls)
	}

	verifyRun := func(label string, wantCode int, args ...string) *proc {
		t.Helper()
		p := startKafkas3(t, label, "verify", cfg, args...)
		if code := p.wait(2 * time.Minute); code != wantCode {
			t.Fatalf("%s: exit %d, want %d\n%s", label, code, wantCode, p.logs())
		}
		return p
	}
	clean := fmt.Sprintf("kafkas3 verify: clean; partitions=%d index_objects=%d unindexed=0 checked: ", parts, parts*3)
	if p := verifyRun("verify", 0); !strings.Contains(p.stdout(), clean+"listing and sizes; objects proven by their ETag 9, by the CRC32C the store keeps 0, by size only 0") {
		t.Fatalf("verify output:\n%s", p.stdout())
	}
	if p := verifyRun("verify --deep", 0, "--deep"); !strings.Contains(p.stdout(), clean+"listing, sizes, checksums and decoding of 9 objects") ||
		!strings.Contains(p.stderr(), "kafkas3 verify: read 9/9 objects") {
		t.Fatalf("verify --deep output:\n%s", p.logs())
	}

	victim := fmt.Sprintf("topics/%s/partition=1/%s+1+%010d.json", topic, topic, 1000)
	b.awsCLI(t, "s3", "rm", "s3://"+bucket+"/"+victim)
	line := fmt.Sprintf(`problem: missing %s/1 %q: object is in the index (commit 2000, offsets 1000-1999) but not in the store`, topic, victim)
	if p := verifyRun("verify after rm", 1); !strings.Contains(p.stdout(), line) || !strings.Contains(p.stderr(), "the archive has problems") {
		t.Fatalf("verify after rm lacks %q:\n%s", line, p.logs())
	}
	p := verifyRun("verify --json", 1, "--json")
	var rep verify.Report
	if err := json.Unmarshal([]byte(p.stdout()), &rep); err != nil {
		t.Fatalf("verify --json: %v\n%s", err, p.stdout())
	}
	if rep.Clean || len(rep.Problems) != 1 || rep.Problems[0].Kind != verify.KindMissing || rep.Problems[0].Key != victim ||
		rep.Problems[0].First != 1000 || rep.Problems[0].Last != 1999 || len(rep.Partitions) != parts || rep.Partitions[1].Problems != 1 {
		t.Fatalf("verify --json report: %+v", rep)
	}
}
