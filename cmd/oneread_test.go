package cmd

import (
	"bytes"
	"fmt"
	"sort"
	"strings"
	"testing"
	"time"

	"github.com/kafkas3/kafkas3/internal/s3fake"
	"github.com/twmb/franz-go/pkg/kgo"
)

// TestSourceOneReadPerObject archives records with keys, headers and
// timestamps (store.envelope, JSON and Avro, flush.size 4: three objects
// per partition) into the S3 fake with `kafkas3 sink --once`, then
// restores them with `kafkas3 source`: the run says it checks the archive
// from its index, GETs each data object exactly once and HEADs none, and
// the target equals the source record by record (partition, order, key,
// value, headers, timestamp). --prove-first restores again into another
// target the old way: the run says it reads every object first, and
// every object is read twice.
func TestSourceOneReadPerObject(t *testing.T) {
	const n = 12
	for _, tc := range []struct{ name, class string }{
		{"json", "io.confluent.connect.s3.format.json.JsonFormat"},
		{"avro", "io.confluent.connect.s3.format.avro.AvroFormat"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			ctx := cliContext(t)
			fake := s3fake.New()
			t.Cleanup(fake.Close)
			const bucket = "kafkas3-oneread"
			fake.CreateBucket(bucket)
			brokers := startKafka(t, 2, "rt")
			produced := envProduce(t, ctx, brokers, "rt", n, func(p int32, i int) []byte { return fmt.Appendf(nil, "v-%d-%d", p, i) })
			y := fmt.Sprintf(`name: oneread
bootstrap.servers: %s
topics: rt
flush.size: 4
format.class: %s
store.envelope: true
store.url: %s
s3.bucket.name: %s
aws.access.key.id: AKFAKE
aws.secret.access.key: fake-secret
`, brokers, tc.class, fake.URL, bucket)
			cfg := writeFile(t, "sink.yaml", y)
			mustRun(t, ctx, ExitOK, "sink", "-c", cfg, "--once", "--log-level", "warn")
			var data []string
			for _, k := range fake.Keys(bucket) {
				if strings.HasPrefix(k, "topics/") {
					data = append(data, k)
				}
			}
			sort.Strings(data)
			if len(data) != 6 {
				t.Fatalf("data objects %q, want 3 per partition", data)
			}

			gets, heads := fake.CountKeys(s3fake.OpGetObject), fake.CountKeys(s3fake.OpHeadObject)
			r := mustRun(t, ctx, ExitOK, "source", "-c", cfg, "--topic-rename", "copy_of_$0", "--create-topics")
			if !strings.Contains(r.err, "checking the archive from its index; each object is read once, when it is restored") {
				t.Fatalf("the run does not say it reads each object once:\n%s", r.err)
			}
			checkGets(t, "one read", fake, data, gets, heads, func(string) int { return 1 })
			checkEnvelopeCopy(t, brokers, "copy_of_rt", produced, n)

			gets, heads = fake.CountKeys(s3fake.OpGetObject), fake.CountKeys(s3fake.OpHeadObject)
			r = mustRun(t, ctx, ExitOK, "source", "-c", cfg, "--topic-rename", "proven_$0", "--create-topics", "--prove-first")
			if !strings.Contains(r.err, "checking the archive before restoring: reading every new object once") {
				t.Fatalf("--prove-first does not say it proves the archive first:\n%s", r.err)
			}
			// Each object is read twice: the proof, then the production.
			checkGets(t, "prove first", fake, data, gets, heads, func(string) int { return 2 })
			checkEnvelopeCopy(t, brokers, "proven_rt", produced, n)
		})
	}
}

// checkGets compares the GETs of each data object since before (the
// counts then) with want, and asserts it had no HEAD.
func checkGets(t *testing.T, what string, fake *s3fake.Server, data []string, before, headsBefore map[string]int, want func(key string) int) {
	t.Helper()
	gets, heads := fake.CountKeys(s3fake.OpGetObject), fake.CountKeys(s3fake.OpHeadObject)
	total := 0
	for _, k := range data {
		got := gets[k] - before[k]
		total += got
		if got != want(k) {
			t.Errorf("%s: %d GETs of %s, want %d", what, got, k, want(k))
		}
		if h := heads[k] - headsBefore[k]; h != 0 {
			t.Errorf("%s: %d HEADs of %s, want none", what, h, k)
		}
	}
	t.Logf("%s: %d GETs of %d data objects", what, total, len(data))
}

// checkEnvelopeCopy compares target with what was produced, record by
// record: partition, order, key, value, headers, timestamp.
func checkEnvelopeCopy(t *testing.T, brokers, target string, produced map[int32][]*kgo.Record, n int) {
	t.Helper()
	got := byPartition(consumeAll(t, cliContext(t), brokers, target, 2*n))
	for p := range int32(2) {
		envCheck(t, p, got[p], produced[p], time.Time{}, func(g, w []byte) string {
			if !bytes.Equal(g, w) {
				return fmt.Sprintf("value %q, want %q", g, w)
			}
			return ""
		})
	}
}
