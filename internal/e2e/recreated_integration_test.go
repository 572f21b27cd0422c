//go:build integration

package e2e

import (
	"bytes"
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"regexp"
	"sort"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/s3"
	"github.com/twmb/franz-go/pkg/kadm"
	"github.com/twmb/franz-go/pkg/kgo"

	"github.com/kafkas3/kafkas3/format"
	"github.com/kafkas3/kafkas3/index"
	"github.com/kafkas3/kafkas3/verify"
)

// The tests of this file play issue 18's recreated topic on the real test
// bed: topic recr (1 partition, 100 records) archived with flush.size 10;
// the topic deleted and created again (a new Kafka topic id, offsets from
// 0), 30 new records produced, and the sink run again (--once) or left
// running (continuous). A sink that overwrote recr+0+0000000000.json,
// ...10.json and ...20.json and their index objects fails each of them.

// recrFlush is flush.size: 100 old records make 10 objects, 30 new ones 3.
const recrFlush, recrOld, recrNew = 10, 100, 30

// recrTest is one test's topics, sink config and bucket. The broker is
// shared by the test binary, so the names are unique.
type recrTest struct {
	b           *bed
	recr, other string // the topic recreated, and one that is not
	name, group string // the sink's name and consumer group
	bucket      string
	envelope    bool
	cfg         string // the sink's config file
}

// newRecrTest creates recr and other (1 partition each; retention.ms=-1
// for the envelope corpus's old timestamps) and writes a sink config of
// both with flush.size 10 and kv.
func newRecrTest(t *testing.T, base string, envelope bool, kv ...string) *recrTest {
	t.Helper()
	b := newBed(t)
	r := &recrTest{b: b, recr: srcUnique(base), other: srcUnique(base + "-other"), bucket: b.s.CreateBucket(t), envelope: envelope}
	r.name = r.recr + "-sink"
	r.group = "connect-" + r.name
	for _, topic := range []string{r.recr, r.other} {
		if envelope {
			envCreateTopic(t, b, topic, 1)
		} else {
			b.k.CreateTopic(t, topic, 1)
		}
	}
	c := b.sinkConf(r.name, r.recr+","+r.other, r.bucket).with("flush.size", fmt.Sprint(recrFlush))
	if envelope {
		c = c.with("store.envelope", "true")
	}
	r.cfg = c.with(kv...).write(t)
	return r
}

// produceRecr writes records from..from+n-1 to recr: value(0, i) in JSON
// tests, the envelope corpus's envRecord(recr, 0, i) (nil and binary keys,
// tombstones, duplicate and nil headers, explicit timestamps) otherwise.
func (r *recrTest) produceRecr(t *testing.T, from, n int) {
	t.Helper()
	if !r.envelope {
		r.b.produce(t, r.recr, 1, from, n, value)
		return
	}
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	cl := r.b.k.Client(t, kgo.RecordPartitioner(kgo.ManualPartitioner()))
	var recs []*kgo.Record
	for i := from; i < from+n; i++ {
		recs = append(recs, envRecord(r.recr, 0, i))
	}
	if err := cl.ProduceSync(ctx, recs...).FirstErr(); err != nil {
		t.Fatal(err)
	}
}

// recrTopicID returns the Kafka id of topic as the broker reports it, in the
// archive's spelling (URL-safe base64 without padding).
func (b *bed) recrTopicID(t *testing.T, topic string) string {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	md, err := kadm.NewClient(b.k.Client(t)).Metadata(ctx, topic)
	if err != nil {
		t.Fatal(err)
	}
	d, ok := md.Topics[topic]
	if !ok || d.Err != nil {
		t.Fatalf("metadata of %s: %v", topic, d.Err)
	}
	id := index.FormatTopicID(d.ID)
	if id == "" {
		t.Fatalf("the broker reports no topic id for %s", topic)
	}
	return id
}

// recreate deletes recr and creates it again (1 partition; retention.ms=-1
// in envelope tests), as an application with auto-create does after an
// accidental delete. KRaft deletes asynchronously: the creation is tried
// again while it answers TOPIC_ALREADY_EXISTS. It returns the new id.
func (r *recrTest) recreate(t *testing.T) string {
	t.Helper()
	start := time.Now()
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	adm := kadm.NewClient(r.b.k.Client(t))
	resp, err := adm.DeleteTopics(ctx, r.recr)
	if err == nil {
		err = resp.Error()
	}
	if err != nil {
		t.Fatalf("delete %s: %v", r.recr, err)
	}
	var configs map[string]*string
	if r.envelope {
		configs = map[string]*string{"retention.ms": ptr("-1"), "max.message.bytes": ptr("8000000")}
	}
	var last error
	if !waitFor(30*time.Second, 50*time.Millisecond, func() bool {
		cr, err := adm.CreateTopic(ctx, 1, 1, configs, r.recr)
		if err == nil {
			err = cr.Err
		}
		last = err
		return err == nil
	}) {
		t.Fatalf("create %s again: %v", r.recr, last)
	}
	if !waitFor(30*time.Second, 50*time.Millisecond, func() bool {
		td, err := adm.ListTopics(ctx, r.recr)
		return err == nil && td[r.recr].Err == nil && len(td[r.recr].Partitions) == 1 && allLeaders(td[r.recr].Partitions)
	}) {
		t.Fatalf("recreated topic %s has no leader", r.recr)
	}
	id := r.b.recrTopicID(t, r.recr)
	t.Logf("%s deleted and created again in %v: topic id %s", r.recr, time.Since(start).Round(time.Millisecond), id)
	return id
}

// recrEverything reads every object of bucket, the topic descriptions and
// offset snapshots included (b.snapshot leaves them out).
func (b *bed) recrEverything(t *testing.T, bucket string) map[string]object {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	cl := b.s.Client()
	out := map[string]object{}
	pg := s3.NewListObjectsV2Paginator(cl, &s3.ListObjectsV2Input{Bucket: aws.String(bucket)})
	for pg.HasMorePages() {
		page, err := pg.NextPage(ctx)
		if err != nil {
			t.Fatalf("list s3://%s: %v", bucket, err)
		}
		for _, o := range page.Contents {
			res, err := cl.GetObject(ctx, &s3.GetObjectInput{Bucket: aws.String(bucket), Key: o.Key})
			if err != nil {
				t.Fatalf("get s3://%s/%s: %v", bucket, aws.ToString(o.Key), err)
			}
			data, err := io.ReadAll(res.Body)
			res.Body.Close()
			if err != nil {
				t.Fatal(err)
			}
			sum := sha256.Sum256(data)
			out[aws.ToString(o.Key)] = object{size: int64(len(data)), etag: aws.ToString(o.ETag), sum: hex.EncodeToString(sum[:]), data: data}
		}
	}
	return out
}

// recrUntouched fails unless every object of before is in after with the same
// bytes and ETag, and returns the keys after added, sorted.
func recrUntouched(t *testing.T, before, after map[string]object) []string {
	t.Helper()
	var changed, added []string
	for k, o := range before {
		if a, ok := after[k]; !ok || a.sum != o.sum || a.etag != o.etag {
			changed = append(changed, k)
		}
	}
	for k := range after {
		if _, ok := before[k]; !ok {
			added = append(added, k)
		}
	}
	sort.Strings(changed)
	sort.Strings(added)
	if len(changed) > 0 {
		t.Fatalf("%d of the %d archived objects were overwritten or deleted: %v", len(changed), len(before), changed)
	}
	return added
}

// checkOldArchive checks the generation 1 archive of recr in objs: the 10
// objects of the old topic at offsets 0, 10, ... 90 with their 10 index
// objects, and for the envelope tests their records.
func (r *recrTest) checkOldArchive(t *testing.T, objs map[string]object) {
	t.Helper()
	var data, idx int
	for k := range objs {
		switch {
		case strings.HasPrefix(k, "topics/"+r.recr+"/"):
			data++
		case strings.HasPrefix(k, indexPrefix+"index/"+r.recr+"/"):
			idx++
		}
	}
	if data != recrOld/recrFlush || idx != recrOld/recrFlush {
		t.Fatalf("the archive of %s holds %d objects and %d index objects, want %d of each", r.recr, data, idx, recrOld/recrFlush)
	}
	if !r.envelope {
		only := map[string]object{}
		for k, o := range objs {
			if strings.HasPrefix(k, "topics/"+r.recr+"/") {
				only[k] = o
			}
		}
		checkJSONArchive(t, only, r.recr, perPartition(1, 0), perPartition(1, recrOld), recrFlush)
	}
}

// checkNothingOfRecr fails if added holds an object of recr: the sink
// whose archiving of recr is stopped writes none (no object, no index
// object, no description).
func (r *recrTest) checkNothingOfRecr(t *testing.T, added []string) {
	t.Helper()
	for _, k := range added {
		switch {
		case strings.HasPrefix(k, indexPrefix+"checkpoints/"+r.recr+"/") && strings.Contains(k, fmt.Sprintf("/%020d-", recrOld)):
			// The checkpoint of the old topic's index at its commit
			// (derived data): a continuous run writes the one of its
			// first commit after that commit, which may come after the
			// listing of the first run (as in checkGen2Added).
		case strings.Contains(k, "/"+r.recr+"/"):
			t.Errorf("the stopped topic got a new object %s", k)
		}
	}
}

// checkFinalSnapshot checks that the --once run whose archiving of recr
// was stopped still wrote the group offset snapshot after its final
// commit for the other topic (its end offset ends), which it archived in
// full, and none for recr.
func (r *recrTest) checkFinalSnapshot(t *testing.T, added []string, objs map[string]object, ends int64) {
	t.Helper()
	var snaps []string
	for _, k := range added {
		if isSnapshotKey(k) {
			snaps = append(snaps, k)
		}
	}
	if len(snaps) != 1 || !strings.HasPrefix(snaps[0], indexPrefix+"snapshots/"+r.other+"/") {
		t.Fatalf("new group offset snapshots %v, want one of %s", snaps, r.other)
	}
	snap, err := index.DecodeSnapshot(snaps[0], bytes.NewReader(objs[snaps[0]].data))
	if err != nil || snap.EndOffsets[0] != ends {
		t.Fatalf("snapshot %s: %+v (%v), want end offset %d", snaps[0], snap, err, ends)
	}
}

// checkStopped checks the error that stops recr, as logged or returned:
// the topic, both ids as the broker reports them, the archived offsets and
// the way out.
func (r *recrTest) checkStopped(t *testing.T, text, oldID, newID string) {
	t.Helper()
	for _, want := range []string{
		"topic " + r.recr + " was deleted and created again",
		"the archive holds topic id " + oldID + " (generation 1), Kafka now has topic id " + newID,
		"Archiving of " + r.recr + " is stopped",
		"archived, generation 1: partition 0 up to offset 99",
		"kafkas3.topic.recreated=new-generation",
	} {
		if !strings.Contains(text, want) {
			t.Errorf("the error does not say %q:\n%s", want, text)
		}
	}
}

// verifyReport runs `kafkas3 verify --json args...` and fails unless it
// exits 0 with a clean report; it returns the report and verify's stderr.
func (r *recrTest) verifyReport(t *testing.T, label string, args ...string) (verify.Report, string) {
	t.Helper()
	p := startKafkas3(t, label, "verify", r.cfg, append([]string{"--json"}, args...)...)
	code := p.wait(time.Minute)
	var rep verify.Report
	if err := json.Unmarshal([]byte(p.stdout()), &rep); err != nil || code != 0 || !rep.Clean || len(rep.Problems) != 0 {
		t.Fatalf("%s: exit %d, report %+v (%v)\n%s", label, code, rep, err, p.logs())
	}
	return rep, p.stderr()
}

// recrRecords returns what a verify report says of topic's partition 0: the
// offsets [from, commit) the index accounts for and the records held.
func recrRecords(t *testing.T, rep verify.Report, topic string) (from, commit, n int64) {
	t.Helper()
	for _, p := range rep.Partitions {
		if p.Topic == topic {
			if p.Partition != 0 || p.Problems != 0 {
				t.Fatalf("verify: %+v", p)
			}
			return p.From, p.Commit, p.Records
		}
	}
	t.Fatalf("verify reports no partition of %s: %+v", topic, rep.Partitions)
	return 0, 0, 0
}

// checkPlan runs `kafkas3 source --dry-run --topics recr` (into
// restored-recr) with args and
// checks its plan: objects objects from offset 0 to last (the start offset
// of the last object) holding n records, no gap, no duplicate.
func (r *recrTest) checkPlan(t *testing.T, label string, objects int, last, n int64, args ...string) string {
	t.Helper()
	p, code := srcRun(t, label, r.cfg, time.Minute, append([]string{"--dry-run", "--topics", r.recr, "--topic-rename", "restored-$0"}, args...)...)
	if code != 0 {
		t.Fatalf("%s: exit code %d\n%s", label, code, p.logs())
	}
	out := p.stdout()
	row := srcParsePlan(t, out)[r.recr]
	total := fmt.Sprintf("records: %d to restore, 0 duplicates, 0 gaps, 0 damaged objects", n)
	part := regexp.MustCompile(`(?m)^` + regexp.QuoteMeta(r.recr) + fmt.Sprintf(`/0\s+%d\s+%d\s+0\.\.%d\s+0\s+0\s`, objects, n, n-1))
	if row.objects != objects || row.partitions != 1 || row.offsets != fmt.Sprintf("0..%d", last) || !strings.Contains(out, total) || !part.MatchString(out) {
		t.Fatalf("%s: plan row %+v, want %d objects from 0..%d and %q with a partition line of %d records:\n%s", label, row, objects, last, total, n, out)
	}
	return p.stderr()
}

// checkOther checks the other topic's archive in objs: ends records in
// order, each once (JSON), or ends offsets in the index (envelope).
func (r *recrTest) checkOther(t *testing.T, objs map[string]object, ends int64) {
	t.Helper()
	if r.envelope {
		return // verifyReport counts them
	}
	only := map[string]object{}
	for k, o := range objs {
		if strings.HasPrefix(k, "topics/"+r.other+"/") {
			only[k] = o
		}
	}
	if n := checkJSONArchive(t, only, r.other, perPartition(1, 0), perPartition(1, ends), recrFlush); n != ends {
		t.Fatalf("%s: %d records archived, want %d", r.other, n, ends)
	}
}

// gen2Key is the key of generation 2's object of recr at offset off.
func (r *recrTest) gen2Key(off int64) string {
	return fmt.Sprintf("topics/generation=2/%s/partition=0/%s+0+%010d.json", r.recr, r.recr, off)
}

// checkGen2 checks generation 2 of recr in objs: its 3 objects under
// topics/generation=2/ with Confluent's names and 3 index objects under
// _kafkas3/generation=2/index/, holding the new topic's records (want, as
// Kafka holds them) as envelopes, field by field.
func (r *recrTest) checkGen2(t *testing.T, objs map[string]object, want []*kgo.Record) {
	t.Helper()
	var got []*format.Record
	for off := int64(0); off < recrNew; off += recrFlush {
		o, ok := objs[r.gen2Key(off)]
		if !ok {
			t.Fatalf("no object %s; have %v", r.gen2Key(off), keysOf(objs))
		}
		rd, err := format.NewJSON().NewReader(bytes.NewReader(o.data))
		if err != nil {
			t.Fatal(err)
		}
		er := format.ReadEnvelopes(rd, format.EnvelopeRequired)
		for {
			rec, err := er.Read()
			if errors.Is(err, io.EOF) {
				break
			}
			if err != nil {
				t.Fatalf("%s: %v", r.gen2Key(off), err)
			}
			got = append(got, rec)
		}
	}
	var gen2, idx2 int
	for k := range objs {
		gen2 += recrBool(strings.HasPrefix(k, "topics/generation=2/"))
		idx2 += recrBool(strings.HasPrefix(k, indexPrefix+"generation=2/index/"+r.recr+"/0/"))
	}
	if gen2 != recrNew/recrFlush || idx2 != recrNew/recrFlush {
		t.Fatalf("generation 2 holds %d objects and %d index objects, want %d of each", gen2, idx2, recrNew/recrFlush)
	}
	if len(got) != len(want) {
		t.Fatalf("generation 2 holds %d records, want %d", len(got), len(want))
	}
	for i, w := range want {
		if g := got[i]; !recrSameRecord(g, w) {
			t.Errorf("generation 2 record %d: %+v, want offset %d key %q value %q headers %v at %v", i, g, w.Offset, w.Key, w.Value, w.Headers, w.Timestamp)
		}
	}
}

// recrBool is 1 for true.
func recrBool(b bool) int {
	if b {
		return 1
	}
	return 0
}

// recrSameRecord compares an archived envelope with a record Kafka holds:
// partition, offset, timestamp, key, value and headers (nil apart from
// empty).
func recrSameRecord(g *format.Record, w *kgo.Record) bool {
	optEq := func(a, b []byte) bool { return bytes.Equal(a, b) && (a == nil) == (b == nil) }
	if g.Partition != w.Partition || g.Offset != w.Offset || !g.Timestamp.Equal(w.Timestamp) ||
		!optEq(g.Key, w.Key) || !optEq(g.Value, w.Value) || len(g.Headers) != len(w.Headers) {
		return false
	}
	for j, h := range w.Headers {
		if g.Headers[j].Key != h.Key || !optEq(g.Headers[j].Value, h.Value) {
			return false
		}
	}
	return true
}

// waitCommitted waits until the sink p's group committed want for topic's
// partition 0, failing if p exits first.
func (r *recrTest) waitCommitted(t *testing.T, p *proc, topic string, want int64) {
	t.Helper()
	var got map[int32]int64
	if !waitFor(60*time.Second, 50*time.Millisecond, func() bool {
		if p.exited() {
			return true
		}
		c, err := r.b.committedErr(r.group, topic)
		got = c
		return err == nil && c[0] == want
	}) || p.exited() {
		t.Fatalf("group %s committed %v for %s, want %d (sink exited: %v)\n%s", r.group, got, topic, want, p.exited(), p.logs())
	}
}

// recrWaitLog waits until the running sink p logged a line holding every
// want, and returns it.
func recrWaitLog(t *testing.T, p *proc, want ...string) string {
	t.Helper()
	var line string
	if !waitFor(90*time.Second, 50*time.Millisecond, func() bool {
		for _, l := range strings.Split(p.stderr(), "\n") {
			if logLines(l, want...) == 1 {
				line = l
				return true
			}
		}
		return p.exited()
	}) || line == "" {
		t.Fatalf("%s logged no line with %q (exited: %v)\n%s", p.name, want, p.exited(), p.logs())
	}
	return line
}

// recrStop sends SIGTERM to the sink p and returns its exit code and summary.
func recrStop(t *testing.T, p *proc) (int, summary) {
	t.Helper()
	p.signal(syscall.SIGTERM)
	code := p.wait(30 * time.Second)
	sum, err := parseSummary(p.stdout())
	if err != nil {
		t.Fatalf("%s: %v\n%s", p.name, err, p.logs())
	}
	t.Logf("%s: SIGTERM: exit %d, %s (ran %v)", p.name, code, sum.line, p.ended.Sub(p.started).Round(time.Millisecond))
	return code, sum
}

// archiveOnce archives recr's 100 records and other's 50 with sink --once
// and returns the archive (every object) and recr's topic id.
func (r *recrTest) archiveOnce(t *testing.T) (map[string]object, string) {
	t.Helper()
	r.produceRecr(t, 0, recrOld)
	r.b.produce(t, r.other, 1, 0, 50, value)
	if sum, _ := runOnce(t, "sink --once #1", r.cfg); sum.records != recrOld+50 {
		t.Fatalf("first run: %s, want %d records", sum.line, recrOld+50)
	}
	before := r.b.recrEverything(t, r.bucket)
	r.checkOldArchive(t, before)
	oldID := r.b.recrTopicID(t, r.recr)
	d, err := index.DecodeTopic(recrDescription(t, before, r.recr))
	if err != nil || d.TopicID != oldID {
		t.Fatalf("the description of %s records topic id %+v (%v), the broker reports %s", r.recr, d, err, oldID)
	}
	return before, oldID
}

// recrDescription returns the key and content of the one topic description
// of topic in objs.
func recrDescription(t *testing.T, objs map[string]object, topic string) (string, io.Reader) {
	t.Helper()
	var found []string
	for k := range objs {
		if strings.HasPrefix(k, indexPrefix+"topics/"+topic+"/") {
			found = append(found, k)
		}
	}
	if len(found) != 1 {
		t.Fatalf("%d descriptions of %s, want 1: %v", len(found), topic, found)
	}
	return found[0], bytes.NewReader(objs[found[0]].data)
}

// TestIntegrationRecreatedOnceStops: recr (100 records) and a second topic
// archived in JSON with flush.size 10; recr deleted and created again with
// 30 new records, 20 more records in the other topic; `sink --once` with
// the same config (kafkas3.topic.recreated=fail, the default) exits 1
// naming recr, both ids as the broker reports them and the archived range;
// every object, index object and description of the first run is
// byte-identical and recr got no new object; the other topic's 20 records
// are archived and committed, recr's new ones are not; `verify` reports
// the archive clean with recr's 100 records and `source --dry-run` plans
// them.
func TestIntegrationRecreatedOnceStops(t *testing.T) {
	r := newRecrTest(t, "recr-once", false)
	before, oldID := r.archiveOnce(t)

	newID := r.recreate(t)
	if newID == oldID {
		t.Fatalf("the recreated topic kept its id %s", oldID)
	}
	r.produceRecr(t, 1000, recrNew)
	r.b.produce(t, r.other, 1, 50, 20, value)
	p, code := runSink(t, "sink --once #2", r.cfg, 2*time.Minute, "--once")
	sum, err := parseSummary(p.stdout())
	if code != 1 || err != nil || sum.records != 20 || sum.objects != 2 {
		t.Fatalf("second run: exit %d, summary %q (%v); want exit 1 after archiving the other topic's 20 records in 2 objects\n%s", code, sum.line, err, p.logs())
	}
	t.Logf("second run: exit 1, %s (wall %v); %s", sum.line, p.ended.Sub(p.started).Round(time.Millisecond), lastLine(p.stderr()))
	r.checkStopped(t, lastLine(p.stderr()), oldID, newID)
	if !strings.Contains(lastLine(p.stderr()), "kafkas3: topic "+r.recr) {
		t.Errorf("the exit error is not the stop of %s: %s", r.recr, lastLine(p.stderr()))
	}
	r.checkStopped(t, recrWaitLog(t, p, "archiving of a topic stopped", "level=ERROR", "topic="+r.recr), oldID, newID)

	after := r.b.recrEverything(t, r.bucket)
	added := recrUntouched(t, before, after)
	r.checkNothingOfRecr(t, added)
	r.checkOldArchive(t, after)
	r.checkOther(t, after, 70)
	r.checkFinalSnapshot(t, added, after, 70)
	if c := r.b.committed(t, r.group, r.recr); len(c) != 0 {
		t.Errorf("group %s committed %v for the recreated %s, want nothing", r.group, c, r.recr)
	}
	if c := r.b.committed(t, r.group, r.other); c[0] != 70 {
		t.Errorf("group %s committed %v for %s, want 70", r.group, c, r.other)
	}
	t.Logf("%d objects of the first run byte-identical; new: %v", len(before), added)

	r.checkGen1(t)
}

// checkGen1 checks that verify and the dry run of generation 1 account
// for recr's 100 archived records and other's 70, and returns what they
// told on stderr.
func (r *recrTest) checkGen1(t *testing.T) (verifyLog, planLog string) {
	t.Helper()
	rep, verifyLog := r.verifyReport(t, "verify")
	if from, commit, n := recrRecords(t, rep, r.recr); from != 0 || commit != recrOld || n != recrOld {
		t.Fatalf("verify: %s offsets [%d, %d) %d records, want [0, 100) 100", r.recr, from, commit, n)
	}
	if _, _, n := recrRecords(t, rep, r.other); n != 70 || len(rep.Partitions) != 2 {
		t.Fatalf("verify: %s holds %d records, want 70; partitions %+v", r.other, n, rep.Partitions)
	}
	return verifyLog, r.checkPlan(t, "source --dry-run", recrOld/recrFlush, recrOld-recrFlush, recrOld)
}

// recrGen2Args address generation 2 of the archive in verify and source.
var recrGen2Args = []string{"--generation", "2"}

// checkGen2Added checks what the run that started generation 2 added to
// the archive: generation 2's objects and index objects, the other
// topic's, the offset snapshots, and the descriptions of generation 2 (at
// the archive's prefix, where the sink finds the current generation, and
// at the generation's own), which name the new topic id.
func (r *recrTest) checkGen2Added(t *testing.T, added []string, objs map[string]object, newID string) {
	t.Helper()
	var descs []string
	for _, k := range added {
		switch {
		case strings.HasPrefix(k, "topics/generation=2/"+r.recr+"/"), strings.HasPrefix(k, indexPrefix+"generation=2/index/"+r.recr+"/"),
			strings.HasPrefix(k, "topics/"+r.other+"/"), strings.HasPrefix(k, indexPrefix+"index/"+r.other+"/"):
		case strings.HasPrefix(k, indexPrefix+"topics/"+r.recr+"/"), strings.HasPrefix(k, indexPrefix+"generation=2/topics/"+r.recr+"/"):
			descs = append(descs, k)
		case strings.HasPrefix(k, indexPrefix+"generation=2/snapshots/"+r.recr+"/"), strings.HasPrefix(k, indexPrefix+"snapshots/"+r.other+"/"):
			// The group offset snapshots after the final commit, each in
			// its topic's generation: the new topic's offsets are not
			// generation 1's.
		case strings.HasPrefix(k, indexPrefix+"generation=2/checkpoints/"+r.recr+"/"), strings.HasPrefix(k, indexPrefix+"checkpoints/"+r.other+"/"):
			// The index checkpoints at the end of --once, each in its
			// topic's generation.
		case strings.HasPrefix(k, indexPrefix+"checkpoints/"+r.recr+"/"):
			// A checkpoint of generation 1's index (new key, derived
			// data): a continuous run writes the one of its first commit
			// after that commit, which may come after the listing of the
			// first run. It may only summarize generation 1's 100 records.
			if !strings.Contains(k, fmt.Sprintf("/%020d-", recrOld)) {
				t.Errorf("generation 1 checkpoint %s: not at commit %d", k, recrOld)
			}
		default:
			t.Errorf("unexpected new object %s", k)
		}
	}
	if len(descs) != 2 {
		t.Fatalf("new descriptions of %s: %v, want one at each prefix", r.recr, descs)
	}
	for _, k := range descs {
		d, err := index.DecodeTopic(k, bytes.NewReader(objs[k].data))
		if err != nil || d.TopicID != newID || d.Gen() != 2 {
			t.Errorf("description %s: %+v (%v), want generation 2 of topic id %s", k, d, err, newID)
		}
	}
}

// restoreInto restores recr (with args: a generation) into a new topic
// and compares it with want (the records Kafka held), record by record.
func (r *recrTest) restoreInto(t *testing.T, suffix string, want []*kgo.Record, args ...string) {
	t.Helper()
	target := r.recr + "-restored-" + suffix
	envCreateTopic(t, r.b, target, 1)
	sum, _ := srcRunOK(t, "source "+suffix, r.cfg, append([]string{"--topics", r.recr, "--topic-rename", target}, args...)...)
	if sum.records != int64(len(want)) || sum.skipped != 0 || sum.gaps != 0 || sum.damaged != 0 || sum.duplicates != 0 {
		t.Fatalf("source %s: %s, want %d records", suffix, sum.line, len(want))
	}
	if bad := envSame(t, "restored "+suffix, envDump(t, r.b, target, len(want)), map[int32][]*kgo.Record{0: want}); bad != 0 {
		t.Fatalf("restored %s: %d of %d records differ", suffix, bad, len(want))
	}
}

// TestIntegrationRecreatedOnceNewGeneration: as
// TestIntegrationRecreatedOnceStops with
// kafkas3.topic.recreated=new-generation and store.envelope=true (the
// envelope corpus's nil and binary keys, tombstones, duplicate and nil
// headers, explicit timestamps): `sink --once` exits 0 and warns; the
// first run's objects stay byte-identical; generation 2 holds the new
// topic's 30 records under topics/generation=2/ with Confluent's names
// (an index of its own, descriptions naming the new id); verify and the
// dry run of each generation account for 100 and 30 records; restoring
// each generation into a new topic gives back its records exactly
// (partition, offset order, key, value, headers, timestamp and type).
func TestIntegrationRecreatedOnceNewGeneration(t *testing.T) {
	r := newRecrTest(t, "recr-gen", true, "kafkas3.topic.recreated", "new-generation")
	before, oldID := r.archiveOnce(t)
	old := envDump(t, r.b, r.recr, recrOld)[0] // the originals, kept: the topic goes

	newID := r.recreate(t)
	if newID == oldID {
		t.Fatalf("the recreated topic kept its id %s", oldID)
	}
	r.produceRecr(t, 1000, recrNew)
	fresh := envDump(t, r.b, r.recr, recrNew)[0]
	r.b.produce(t, r.other, 1, 50, 20, value)
	sum, p := runOnce(t, "sink --once #2", r.cfg)
	if sum.records != recrNew+20 || sum.objects != 5 {
		t.Fatalf("second run: %s, want the new topic's 30 records and the other's 20 in 5 objects", sum.line)
	}
	warn := recrWaitLog(t, p, "level=WARN", "archiving the new topic as a new generation beside the old one", "topic="+r.recr, "generation=2")
	t.Logf("second run warned: %s", warn)

	after := r.b.recrEverything(t, r.bucket)
	added := recrUntouched(t, before, after)
	r.checkOldArchive(t, after)
	r.checkGen2(t, after, fresh)
	r.checkGen2Added(t, added, after, newID)
	if c := r.b.committed(t, r.group, r.recr); c[0] != recrNew {
		t.Errorf("group %s committed %v for the new %s, want %d", r.group, c, r.recr, recrNew)
	}
	t.Logf("%d objects of the first run byte-identical; %d new", len(before), len(added))

	r.checkGenerations(t, newID)
	r.restoreInto(t, "g1", old)
	r.restoreInto(t, "g2", fresh, recrGen2Args...)
}

// checkGenerations checks verify and the dry run of both generations:
// generation 1 accounts for the old topic's 100 records and notes the
// newer generation (naming its topic id and --generation 2); generation 2
// (verify --deep: every object read, decoded and its offsets checked)
// for the new topic's 30.
func (r *recrTest) checkGenerations(t *testing.T, newID string) {
	t.Helper()
	note := fmt.Sprintf("kafkas3: note: topic %s was deleted and created again: the archive also holds generation 2 (topic id %s) of it; "+
		"this run reads generation 1, pass --generation 2 for the newest", r.recr, newID)
	verifyLog, planLog := r.checkGen1(t)
	if !strings.Contains(verifyLog, note) || !strings.Contains(planLog, note) {
		t.Errorf("verify and the dry run of generation 1 do not both note generation 2 (%q):\n%s\n%s", note, verifyLog, planLog)
	}
	rep2, verifyLog2 := r.verifyReport(t, "verify generation 2", append([]string{"--deep"}, recrGen2Args...)...)
	if from, commit, n := recrRecords(t, rep2, r.recr); from != 0 || commit != recrNew || n != recrNew || rep2.ObjectsRead != recrNew/recrFlush {
		t.Fatalf("verify generation 2: %s offsets [%d, %d) %d records, %d objects read; want [0, 30) 30, 3 read", r.recr, from, commit, n, rep2.ObjectsRead)
	}
	planLog2 := r.checkPlan(t, "source --dry-run generation 2", recrNew/recrFlush, recrNew-recrFlush, recrNew, recrGen2Args...)
	if strings.Contains(verifyLog2+planLog2, "kafkas3: note:") {
		t.Errorf("verify or the dry run of generation 2, the newest, note another:\n%s\n%s", verifyLog2, planLog2)
	}
}

// runContinuous archives recr's 100 records and other's 50 with a
// continuous sink, waits until both are committed, and returns the sink,
// the archive (every object) and recr's topic id.
func (r *recrTest) runContinuous(t *testing.T) (*proc, map[string]object, string) {
	t.Helper()
	r.produceRecr(t, 0, recrOld)
	r.b.produce(t, r.other, 1, 0, 50, value)
	p := startSink(t, "sink", r.cfg)
	r.waitCommitted(t, p, r.recr, recrOld)
	r.waitCommitted(t, p, r.other, 50)
	before := r.b.recrEverything(t, r.bucket)
	r.checkOldArchive(t, before)
	return p, before, r.b.recrTopicID(t, r.recr)
}

// TestIntegrationRecreatedContinuousStops: a continuous sink (JSON,
// kafkas3.topic.recreated=fail) has archived recr's 100 records and
// another topic's 50 when recr is deleted and created again under it and
// 30 records are produced to the new topic: the sink (its fetches: the
// topic check is left at its default, 5 minutes) logs the stop at error
// level (naming recr, both ids and the archived range) and goes on
// archiving the other topic (20 more records committed after the stop);
// SIGTERM ends it with exit code 1 and the error; the objects, index
// objects and descriptions it had written are byte-identical, recr got
// none, and verify and the dry run account for the old 100 records.
func TestIntegrationRecreatedContinuousStops(t *testing.T) {
	r := newRecrTest(t, "recr-run", false)
	p, before, oldID := r.runContinuous(t)

	deleted := time.Now()
	newID := r.recreate(t)
	r.produceRecr(t, 1000, recrNew)
	// With kafkas3.topics.check.interval.ms at its default (5 minutes)
	// the fetches find it: franz-go reports UNKNOWN_TOPIC_ID after its
	// sixth try, about 35 s after the delete.
	line := recrWaitLog(t, p, "archiving of a topic stopped", "level=ERROR", "topic="+r.recr)
	t.Logf("stop logged %v after the delete: %s", time.Since(deleted).Round(time.Millisecond), line)
	r.checkStopped(t, line, oldID, newID)
	recrWaitLog(t, p, "level=WARN", "fetch error: the topic's id changed", "topic="+r.recr, "UNKNOWN_TOPIC_ID")
	r.b.produce(t, r.other, 1, 50, 20, value)
	r.waitCommitted(t, p, r.other, 70)

	code, sum := recrStop(t, p)
	if code != 1 || sum.records != recrOld+70 {
		t.Fatalf("SIGTERM: exit %d, %s; want exit 1 after %d records\n%s", code, sum.line, recrOld+70, p.logs())
	}
	r.checkStopped(t, lastLine(p.stderr()), oldID, newID)
	if !strings.Contains(lastLine(p.stderr()), "kafkas3: topic "+r.recr) {
		t.Errorf("the exit error is not the stop of %s: %s", r.recr, lastLine(p.stderr()))
	}
	after := r.b.recrEverything(t, r.bucket)
	added := recrUntouched(t, before, after)
	r.checkNothingOfRecr(t, added)
	r.checkOldArchive(t, after)
	r.checkOther(t, after, 70)
	if c := r.b.committed(t, r.group, r.recr); len(c) != 0 {
		t.Errorf("group %s committed %v for the recreated %s, want nothing", r.group, c, r.recr)
	}
	t.Logf("%d objects of the first run byte-identical; new: %v", len(before), added)
	r.checkGen1(t)
}

// TestIntegrationRecreatedContinuousNewGeneration: a continuous sink
// (store.envelope=true, kafkas3.topic.recreated=new-generation, the
// topics checked every second) has
// archived recr's 100 records and another topic's 50 when recr is
// deleted and created again under it: it warns and archives the new
// topic's 30 records as generation 2 while it runs (objects under
// topics/generation=2/ with Confluent's names, their records field by
// field), goes on with the other topic, and exits 0 on SIGTERM; the
// objects it had written are byte-identical; verify and the dry run of
// each generation account for 100 and 30 records.
func TestIntegrationRecreatedContinuousNewGeneration(t *testing.T) {
	r := newRecrTest(t, "recr-rungen", true, "kafkas3.topic.recreated", "new-generation", "kafkas3.topics.check.interval.ms", "1000")
	p, before, oldID := r.runContinuous(t)

	deleted := time.Now()
	newID := r.recreate(t)
	if newID == oldID {
		t.Fatalf("the recreated topic kept its id %s", oldID)
	}
	r.produceRecr(t, 1000, recrNew)
	fresh := envDump(t, r.b, r.recr, recrNew)[0]
	warn := recrWaitLog(t, p, "level=WARN", "archiving the new topic as a new generation beside the old one", "topic="+r.recr, "generation=2", newID)
	r.waitCommitted(t, p, r.recr, recrNew)
	took := time.Since(deleted)
	t.Logf("generation 2 archived %v after the delete; warned: %s", took.Round(time.Millisecond), warn)
	if took > 20*time.Second {
		// franz-go's fetches alone take about 35 s (see
		// TestIntegrationRecreatedContinuousStops).
		t.Errorf("the topic check every second found the recreated topic only after %v", took)
	}
	r.b.produce(t, r.other, 1, 50, 20, value)
	r.waitCommitted(t, p, r.other, 70)

	code, sum := recrStop(t, p)
	if code != 0 || sum.records != recrOld+recrNew+70 {
		t.Fatalf("SIGTERM: exit %d, %s; want exit 0 after %d records\n%s", code, sum.line, recrOld+recrNew+70, p.logs())
	}
	after := r.b.recrEverything(t, r.bucket)
	added := recrUntouched(t, before, after)
	r.checkOldArchive(t, after)
	r.checkGen2(t, after, fresh)
	r.checkGen2Added(t, added, after, newID)
	t.Logf("%d objects of the first run byte-identical; %d new", len(before), len(added))
	r.checkGenerations(t, newID)
}
