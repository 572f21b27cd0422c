package cmd

import (
	"bytes"
	"fmt"
	"reflect"
	"strings"
	"testing"

	"github.com/kafkas3/kafkas3/internal/s3fake"
	"github.com/twmb/franz-go/pkg/kgo"
)

// wormObjects returns every object of bucket by key.
func wormObjects(fake *s3fake.Server, bucket string) map[string][]byte {
	out := map[string][]byte{}
	for _, k := range fake.Keys(bucket) {
		out[k], _ = fake.Object(bucket, k)
	}
	return out
}

// TestSinkWORMBucket: on a bucket with Object Lock the sink writes every
// object with s3.object.lock.mode's retention and the data objects (not
// the index) with s3.storage.class; a replay of the same records (the
// group's offsets moved back) writes nothing new and succeeds; a replay
// that would put other bytes under an archived key (another flush.size)
// stops with exit 1 naming the object, which stays as it was; the
// archive then restores exactly and verifies clean.
func TestSinkWORMBucket(t *testing.T) {
	ctx := cliContext(t)
	fake := s3fake.New()
	t.Cleanup(fake.Close)
	const bucket, topic = "kafkas3-worm", "w"
	fake.CreateBucket(bucket)
	fake.SetObjectLock(bucket, "COMPLIANCE", 1)
	brokers := startKafka(t, 1, topic)
	want := produceJSON(t, ctx, brokers, topic, 1, 45)
	lock := "s3.storage.class: STANDARD_IA\ns3.object.lock.mode: GOVERNANCE\ns3.object.lock.retain.days: 2\n"
	cfg := writeFile(t, "worm.yaml", fakeS3SinkYAML("worm", topic, brokers, fake.URL, bucket, lock))
	mustRun(t, ctx, ExitOK, "sink", "-c", cfg, "--once", "--log-level", "warn")

	first := wormObjects(fake, bucket)
	data := 0
	for key := range first {
		class, mode, until := fake.StorageClass(bucket, key)
		wantClass := "STANDARD_IA" // every object: not an archive tier
		if strings.HasPrefix(key, "topics/") {
			data++
		}
		if class != wantClass || mode != "GOVERNANCE" || until == "" {
			t.Errorf("%s: storage class %q, lock %q until %q; want class %q, GOVERNANCE", key, class, mode, until, wantClass)
		}
	}
	if data != 3 {
		t.Fatalf("%d data objects, want 3: %v", data, fake.Keys(bucket))
	}

	// The same records again: the conditional writes find the same bytes.
	commitGroup(t, brokers, "connect-worm", topic, 1, 0)
	puts := fake.Count(s3fake.OpPutObject)
	mustRun(t, ctx, ExitOK, "sink", "-c", cfg, "--once", "--log-level", "warn")
	if fake.Count(s3fake.OpPutObject) == puts {
		t.Fatal("the replay wrote nothing: it proved nothing")
	}
	if again := wormObjects(fake, bucket); !reflect.DeepEqual(again, first) {
		t.Errorf("the replay of the same records changed the archive: %d objects, were %d", len(again), len(first))
	}

	// Other bytes under an archived key: refused, named.
	commitGroup(t, brokers, "connect-worm", topic, 1, 0)
	other := writeFile(t, "other.yaml", strings.Replace(fakeS3SinkYAML("worm", topic, brokers, fake.URL, bucket, lock), "flush.size: 20", "flush.size: 10", 1))
	r := mustRun(t, ctx, ExitFail, "sink", "-c", other, "--once", "--log-level", "warn")
	key := fmt.Sprintf("s3://%s/topics/%s/partition=0/%s+0+0000000000.json", bucket, topic, topic)
	t.Logf("refusal: %s", r.err)
	if !strings.Contains(r.err, key) || !strings.Contains(r.err, "Object Lock") {
		t.Errorf("refusal does not name %s and Object Lock:\n%s", key, r.err)
	}
	for k, b := range first {
		if got, _ := fake.Object(bucket, k); !bytes.Equal(got, b) {
			t.Errorf("%s changed after the refusal", k)
		}
	}

	mustRun(t, ctx, ExitOK, "source", "-c", cfg, "--topic-rename", "copy_of_$0", "--create-topics", "--log-level", "warn")
	if got := readTopic(t, ctx, brokers, "copy_of_"+topic); !reflect.DeepEqual(got, want) {
		t.Errorf("restored records differ from the produced ones")
	}
	mustRun(t, ctx, ExitOK, "verify", "-c", cfg, "--deep")
}

// TestSourceVerifyNameArchivedObjects: objects moved to GLACIER or
// DEEP_ARCHIVE without a restored copy stop the source and verify --deep
// before they read an archived object or produce anything (the archive
// index, in the default class, is read), naming them and how to restore
// them; GLACIER_IR objects and restored ones are read.
func TestSourceVerifyNameArchivedObjects(t *testing.T) {
	ctx := cliContext(t)
	fake := s3fake.New()
	t.Cleanup(fake.Close)
	const bucket, topic = "kafkas3-tiers", "g"
	fake.CreateBucket(bucket)
	brokers := startKafka(t, 2, topic)
	want := produceJSON(t, ctx, brokers, topic, 2, 100)
	cfg := writeFile(t, "tiers.yaml", fakeS3SinkYAML("tiers", topic, brokers, fake.URL, bucket, ""))
	mustRun(t, ctx, ExitOK, "sink", "-c", cfg, "--once", "--log-level", "warn")
	keys := func(p int, first ...int) []string {
		var out []string
		for _, f := range first {
			out = append(out, fmt.Sprintf("topics/%s/partition=%d/%s+%d+%010d.json", topic, p, topic, p, f))
		}
		return out
	}
	deep, flex, ir := keys(0, 20), keys(1, 0, 40), keys(0, 0)
	for class, ks := range map[string][]string{"DEEP_ARCHIVE": deep, "GLACIER": flex, "GLACIER_IR": ir} {
		for _, k := range ks {
			if !fake.SetStorageClass(bucket, k, class) {
				t.Fatalf("no object %s", k)
			}
		}
	}
	heads := fake.Count(s3fake.OpHeadObject)
	for _, args := range [][]string{
		{"source", "-c", cfg, "--topic-rename", "copy_of_$0", "--create-topics"},
		{"verify", "-c", cfg, "--deep"},
	} {
		r := mustRun(t, ctx, ExitFail, args...)
		for _, k := range append(append([]string{}, deep...), flex...) {
			if !strings.Contains(r.err, k) {
				t.Errorf("%s: the error does not name %s:\n%s", args[0], k, r.err)
			}
		}
		if strings.Contains(r.err, ir[0]) || !strings.Contains(r.err, "3 objects are in an archive storage class") || !strings.Contains(r.err, "aws s3api restore-object") {
			t.Errorf("%s: error\n%s", args[0], r.err)
		}
	}
	for k := range fake.CountKeys(s3fake.OpGetObject) {
		if strings.HasPrefix(k, "topics/") {
			t.Errorf("archived object %s read before the refusal", k)
		}
	}
	if n := fake.Count(s3fake.OpHeadObject) - heads; n != 6 {
		t.Errorf("%d HEADs, want 6: one per archived object per run, none of the others", n)
	}
	if topicExists(t, ctx, brokers, "copy_of_"+topic) {
		t.Error("the source created the target topic before it refused")
	}
	for _, k := range append(deep, flex...) {
		fake.SetRestored(bucket, k, true)
	}
	mustRun(t, ctx, ExitOK, "source", "-c", cfg, "--topic-rename", "copy_of_$0", "--create-topics", "--log-level", "warn")
	if got := readTopic(t, ctx, brokers, "copy_of_"+topic); !reflect.DeepEqual(got, want) {
		t.Errorf("restored records differ from the produced ones")
	}
	mustRun(t, ctx, ExitOK, "verify", "-c", cfg, "--deep")
}

// TestSinkWORMOncePartialFileRewrite: the case the README names: a
// --once run's last partial file is archived, the group's offset is not
// (moved back here, as a kill before the commit leaves it), and records
// arrive before the next run, which writes a longer file under the same
// key. On a bucket with Object Lock that is refused, naming the object;
// with s3.object.lock.rewrite=new-version it is written, and the archive
// restores every record once and verifies clean.
func TestSinkWORMOncePartialFileRewrite(t *testing.T) {
	ctx := cliContext(t)
	fake := s3fake.New()
	t.Cleanup(fake.Close)
	const bucket, topic = "kafkas3-worm-partial", "p"
	fake.CreateBucket(bucket)
	fake.SetObjectLock(bucket, "GOVERNANCE", 1)
	brokers := startKafka(t, 1, topic)
	want := produceJSON(t, ctx, brokers, topic, 1, 25)[0]
	yaml := fakeS3SinkYAML("partial", topic, brokers, fake.URL, bucket, "")
	cfg := writeFile(t, "partial.yaml", yaml)
	mustRun(t, ctx, ExitOK, "sink", "-c", cfg, "--once", "--log-level", "warn")
	key := "topics/p/partition=0/p+0+0000000020.json"
	before, ok := fake.Object(bucket, key)
	if !ok {
		t.Fatalf("no partial file %s: %v", key, fake.Keys(bucket))
	}
	commitGroup(t, brokers, "connect-partial", topic, 1, 20)
	cl, err := kgo.NewClient(kgo.SeedBrokers(strings.Split(brokers, ",")...), kgo.DefaultProduceTopic(topic))
	if err != nil {
		t.Fatal(err)
	}
	for i := 25; i < 30; i++ {
		v := fmt.Sprintf(`{"late":%d}`, i)
		want = append(want, v)
		if err := cl.ProduceSync(ctx, &kgo.Record{Value: []byte(v)}).FirstErr(); err != nil {
			t.Fatal(err)
		}
	}
	cl.Close()
	r := mustRun(t, ctx, ExitFail, "sink", "-c", cfg, "--once", "--log-level", "warn")
	if !strings.Contains(r.err, "s3://"+bucket+"/"+key) || !strings.Contains(r.err, "s3.object.lock.rewrite=new-version") {
		t.Errorf("refusal does not name %s and the way out:\n%s", key, r.err)
	}
	if got, _ := fake.Object(bucket, key); !bytes.Equal(got, before) {
		t.Fatal("the partial file changed after the refusal")
	}
	cfgNew := writeFile(t, "new.yaml", yaml+"s3.object.lock.rewrite: new-version\n")
	mustRun(t, ctx, ExitOK, "sink", "-c", cfgNew, "--once", "--log-level", "warn")
	if got, _ := fake.Object(bucket, key); bytes.Equal(got, before) || bytes.Count(got, []byte("\n")) != 10 {
		t.Errorf("%s after new-version: %q", key, got)
	}
	mustRun(t, ctx, ExitOK, "source", "-c", cfgNew, "--topic-rename", "copy_of_$0", "--create-topics", "--log-level", "warn")
	if got := readTopic(t, ctx, brokers, "copy_of_"+topic); !reflect.DeepEqual(got[0], want) {
		t.Errorf("restored %d records, want %d: %v", len(got[0]), len(want), got[0])
	}
	mustRun(t, ctx, ExitOK, "verify", "-c", cfgNew, "--deep")
}
