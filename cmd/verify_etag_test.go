package cmd

import (
	"context"
	"encoding/json"
	"fmt"
	"strings"
	"testing"

	"github.com/kafkas3/kafkas3/index"
	"github.com/kafkas3/kafkas3/internal/s3fake"
	"github.com/kafkas3/kafkas3/s3store"
	"github.com/twmb/franz-go/pkg/kgo"
)

// etagSinkYAML is a sink config for the in-process S3 fake with 5 MiB
// parts.
func etagSinkYAML(brokers, endpoint, bucket string) string {
	return fakeS3SinkYAML("etags", "et", brokers, endpoint, bucket, "")
}

// fakeS3Store is an S3 store on bucket of fake with parts of partSize.
func fakeS3Store(t *testing.T, fake *s3fake.Server, bucket string, partSize int64) *s3store.S3 {
	t.Helper()
	st, err := s3store.NewS3(t.Context(), s3store.S3Config{Bucket: bucket, Endpoint: fake.URL, PathStyle: true,
		AccessKeyID: "AKFAKE", SecretAccessKey: "fake-secret", PartSize: partSize, SpoolDir: t.TempDir()}, nil)
	if err != nil {
		t.Fatal(err)
	}
	return st
}

// verifyETagJSON runs verify --json, wanting exit code want, and returns its
// report and the HeadObject requests it made.
func verifyETagJSON(t *testing.T, ctx context.Context, fake *s3fake.Server, cfg string, want int) (rep struct {
	Clean             bool `json:"clean"`
	ETagsCompared     int  `json:"etags_compared"`
	ChecksumsCompared int  `json:"checksums_compared"`
	NoChecksum        int  `json:"no_checksum"`
	Problems          []struct {
		Kind, Key string
	} `json:"problems"`
}, heads int) {
	t.Helper()
	before := fake.Count(s3fake.OpHeadObject)
	r := mustRun(t, ctx, want, "verify", "-c", cfg, "--json", "--log-level", "warn")
	if err := json.Unmarshal([]byte(r.out), &rep); err != nil {
		t.Fatalf("verify --json output: %v\n%s", err, r.out)
	}
	return rep, fake.Count(s3fake.OpHeadObject) - before
}

// TestSinkRecordsETagsVerifyProvesByThem: the sink records in each index
// entry the ETag the store answered for each object (multipart and single
// PutObject ones), the one the listing gives; plain verify then proves
// every object by the listing, with no HEAD. An object written again with
// the same bytes but another ETag (another s3.part.size) is proven by its
// stored checksum, no problem; one replaced by other bytes of the same
// size is a checksum problem.
func TestSinkRecordsETagsVerifyProvesByThem(t *testing.T) {
	ctx := cliContext(t)
	fake := s3fake.New()
	t.Cleanup(fake.Close)
	const bucket = "kafkas3-etags"
	fake.CreateBucket(bucket)
	brokers := startKafka(t, 2, "et")
	cl, err := kgo.NewClient(kgo.SeedBrokers(strings.Split(brokers, ",")...), kgo.RecordPartitioner(kgo.ManualPartitioner()))
	if err != nil {
		t.Fatal(err)
	}
	var recs []*kgo.Record
	pad := strings.Repeat("x", 300<<10)
	for i := range 20 { // one 6 MB object: a multipart upload of 2 parts
		recs = append(recs, &kgo.Record{Topic: "et", Partition: 0, Value: fmt.Appendf(nil, `{"i":%d,"pad":"%s"}`, i, pad)})
	}
	for i := range 45 { // three small objects (20, 20, 5 records)
		recs = append(recs, &kgo.Record{Topic: "et", Partition: 1, Value: fmt.Appendf(nil, `{"small":%d}`, i)})
	}
	if err := cl.ProduceSync(ctx, recs...).FirstErr(); err != nil {
		t.Fatal(err)
	}
	cl.Close()
	cfg := writeFile(t, "etags.yaml", etagSinkYAML(brokers, fake.URL, bucket))
	mustRun(t, ctx, ExitOK, "sink", "-c", cfg, "--once", "--log-level", "warn")

	st := fakeS3Store(t, fake, bucket, s3store.MinPartSize)
	listed := map[string]string{}
	if err := st.List(ctx, "topics/", func(info s3store.ObjectInfo) error { listed[info.Key] = info.ETag; return nil }); err != nil {
		t.Fatal(err)
	}
	ix, err := index.Load(ctx, st, index.DefaultPrefix, nil)
	if err != nil {
		t.Fatal(err)
	}
	objects := 0
	for _, e := range ix.Entries {
		for _, o := range e.Objects {
			objects++
			if o.ETag == "" || o.ETag != listed[o.Key] {
				t.Errorf("entry object %q: ETag %q, the listing gives %q", o.Key, o.ETag, listed[o.Key])
			}
		}
	}
	const multipart = "topics/et/partition=0/et+0+0000000000.json"
	if objects != 4 || len(listed) != 4 || !strings.HasSuffix(listed[multipart], "-2") {
		t.Fatalf("%d entry objects, listing %v: want 4, and a 2-part ETag for %s", objects, listed, multipart)
	}

	rep, heads := verifyETagJSON(t, ctx, fake, cfg, ExitOK)
	if !rep.Clean || rep.ETagsCompared != 4 || rep.ChecksumsCompared != 0 || rep.NoChecksum != 0 || heads != 0 {
		t.Fatalf("plain verify: %+v with %d HEADs; want clean, 4 objects proven by ETag, no HEAD", rep, heads)
	}
	text := mustRun(t, ctx, ExitOK, "verify", "-c", cfg, "--log-level", "warn").out
	if !strings.Contains(text, "checked: listing and sizes; objects proven by their ETag 4, by the CRC32C the store keeps 0, by size only 0") {
		t.Errorf("verify summary:\n%s", text)
	}

	// The same bytes in one PutObject (a larger part size): another ETag.
	data, _ := fake.Object(bucket, multipart)
	putBytes(t, fakeS3Store(t, fake, bucket, 16<<20), multipart, data)
	rep, heads = verifyETagJSON(t, ctx, fake, cfg, ExitOK)
	if !rep.Clean || rep.ETagsCompared != 3 || rep.ChecksumsCompared != 1 || heads != 1 {
		t.Fatalf("rewritten with the same bytes: %+v with %d HEADs; want clean, 3 by ETag, 1 by stored checksum, 1 HEAD", rep, heads)
	}

	// Other bytes of the same size.
	const small = "topics/et/partition=1/et+1+0000000020.json"
	data, _ = fake.Object(bucket, small)
	putBytes(t, st, small, []byte(strings.Replace(string(data), `{"small":21}`, `{"small":99}`, 1)))
	rep, heads = verifyETagJSON(t, ctx, fake, cfg, ExitFail)
	if rep.Clean || len(rep.Problems) != 1 || rep.Problems[0].Kind != "checksum" || rep.Problems[0].Key != small || heads != 2 {
		t.Fatalf("replaced object: %+v with %d HEADs; want one checksum problem for %s, 2 HEADs", rep, heads, small)
	}
}

// putBytes writes data at key.
func putBytes(t *testing.T, st s3store.Store, key string, data []byte) {
	t.Helper()
	w, err := st.Create(context.Background(), key)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := w.Write(data); err != nil {
		t.Fatal(err)
	}
	if err := w.Commit(context.Background()); err != nil {
		t.Fatalf("put %q: %v", key, err)
	}
}
