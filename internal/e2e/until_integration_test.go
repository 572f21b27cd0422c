//go:build integration

package e2e

import (
	"bytes"
	"context"
	"fmt"
	"regexp"
	"sort"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/s3"
	"github.com/twmb/franz-go/pkg/kadm"
	"github.com/twmb/franz-go/pkg/kgo"

	"github.com/kafkas3/kafkas3/index"
)

// untilParts is the partition count of the --until tests.
const untilParts = 3

// untilRecord is record i of partition p: key, value and two headers.
func untilRecord(topic string, p int32, i int) *kgo.Record {
	return &kgo.Record{Topic: topic, Partition: p, Key: key(p, i), Value: value(p, i),
		Headers: []kgo.RecordHeader{{Key: "i", Value: []byte(strconv.Itoa(i))}, {Key: "nil", Value: nil}}}
}

// untilProduce produces records from..from+n-1 to every partition and
// waits for them.
func untilProduce(t *testing.T, b *bed, topic string, from, n int) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	cl := b.k.Client(t, kgo.RecordPartitioner(kgo.ManualPartitioner()))
	var recs []*kgo.Record
	for p := range int32(untilParts) {
		for i := from; i < from+n; i++ {
			recs = append(recs, untilRecord(topic, p, i))
		}
	}
	if err := cl.ProduceSync(ctx, recs...).FirstErr(); err != nil {
		t.Fatal(err)
	}
}

// untilDump reads every committed record of topic with franz-go
// (read_committed, n in all), by partition in offset order.
func untilDump(t *testing.T, b *bed, topic string, n int) map[int32][]*kgo.Record {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	cl := b.k.Client(t, kgo.ConsumeTopics(topic), kgo.ConsumeResetOffset(kgo.NewOffset().AtStart()),
		kgo.FetchIsolationLevel(kgo.ReadCommitted()))
	out := map[int32][]*kgo.Record{}
	for got := 0; got < n; {
		fs := cl.PollFetches(ctx)
		if ctx.Err() != nil {
			t.Fatalf("read %s: %d of %d records", topic, got, n)
		}
		fs.EachError(func(_ string, p int32, err error) { t.Fatalf("fetch %s/%d: %v", topic, p, err) })
		fs.EachRecord(func(r *kgo.Record) { out[r.Partition] = append(out[r.Partition], r); got++ })
	}
	for _, rs := range out {
		sort.SliceStable(rs, func(a, b int) bool { return rs[a].Offset < rs[b].Offset })
	}
	return out
}

// untilBelow returns the records of dump below each partition's cut.
func untilBelow(dump map[int32][]*kgo.Record, cut map[int32]int64) map[int32][]*kgo.Record {
	out := map[int32][]*kgo.Record{}
	for p, rs := range dump {
		for _, r := range rs {
			if r.Offset < cut[p] {
				out[p] = append(out[p], r)
			}
		}
	}
	return out
}

// untilSame compares a restored topic with the source records it must
// hold, record for record: position, key, value, headers (nil and empty
// apart) and the timestamp to the millisecond (LogAppendTime comes back
// as CreateTime with the same time).
func untilSame(t *testing.T, what string, got, want map[int32][]*kgo.Record) {
	t.Helper()
	eq := func(a, b []byte) bool { return bytes.Equal(a, b) && (a == nil) == (b == nil) }
	bad := 0
	report := func(format string, a ...any) {
		bad++
		if bad <= 10 {
			t.Errorf(what+": "+format, a...)
		}
	}
	for p := range int32(untilParts) {
		g, w := got[p], want[p]
		if len(g) != len(w) {
			report("partition %d: %d records, want %d", p, len(g), len(w))
			continue
		}
		for i, e := range w {
			a := g[i]
			switch {
			case a.Offset != int64(i):
				report("%d: record %d at offset %d", p, i, a.Offset)
			case !eq(a.Key, e.Key) || !eq(a.Value, e.Value):
				report("%d/%d: %q=%q, want %q=%q", p, e.Offset, a.Key, a.Value, e.Key, e.Value)
			case a.Timestamp.UnixMilli() != e.Timestamp.UnixMilli():
				report("%d/%d: timestamp %v, want %v", p, e.Offset, a.Timestamp, e.Timestamp)
			case len(a.Headers) != len(e.Headers):
				report("%d/%d: %d headers, want %d", p, e.Offset, len(a.Headers), len(e.Headers))
			default:
				for j, h := range e.Headers {
					if a.Headers[j].Key != h.Key || !eq(a.Headers[j].Value, h.Value) {
						report("%d/%d header %d: %q=%q, want %q=%q", p, e.Offset, j, a.Headers[j].Key, a.Headers[j].Value, h.Key, h.Value)
					}
				}
			}
		}
	}
}

// untilSummaryRE reads records, already_present and the --until fields of
// the source's summary line.
var untilSummaryRE = regexp.MustCompile(`(?m)^kafkas3 source: .* records=(\d+) .* already_present=(\d+) .* until=(\S+) past_cut=(\d+)$`)

// untilRun runs the source with args and wants exit code want; with exit
// 0 it returns records, already_present and past_cut of the summary.
func untilRun(t *testing.T, label, cfg string, want int, args ...string) (records, present, pastCut int64, p *proc) {
	t.Helper()
	p, code := srcRun(t, label, cfg, 3*time.Minute, args...)
	if code != want {
		t.Fatalf("%s: exit code %d, want %d\n%s", label, code, want, p.logs())
	}
	if want != 0 {
		return 0, 0, 0, p
	}
	m := untilSummaryRE.FindStringSubmatch(p.stdout())
	if m == nil {
		t.Fatalf("%s: no summary line with until= and past_cut= in\n%s", label, p.stdout())
	}
	atoi := func(s string) int64 { n, _ := strconv.ParseInt(s, 10, 64); return n }
	t.Logf("%s: %s", label, strings.TrimSpace(m[0]))
	return atoi(m[1]), atoi(m[2]), atoi(m[4]), p
}

// untilSnapshots returns the snapshots of topic in bucket, oldest first.
func untilSnapshots(t *testing.T, b *bed, bucket, topic string) []*index.Snapshot {
	t.Helper()
	var keys []string
	for k := range b.awsListKeys(t, bucket) {
		if strings.HasPrefix(k, index.SnapshotTopicDir(indexPrefix, topic)) {
			keys = append(keys, k)
		}
	}
	sort.Strings(keys)
	var out []*index.Snapshot
	for _, k := range keys {
		ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
		obj, err := b.s.Client().GetObject(ctx, &s3.GetObjectInput{Bucket: aws.String(bucket), Key: aws.String(k)})
		if err != nil {
			cancel()
			t.Fatalf("get %s: %v", k, err)
		}
		s, err := index.DecodeSnapshot(k, obj.Body)
		obj.Body.Close()
		cancel()
		if err != nil {
			t.Fatal(err)
		}
		out = append(out, s)
	}
	return out
}

// untilPlanRows returns the dry run's point-in-time rows by partition,
// spaces squeezed: "<cut> <restored> <left out> <chosen by>".
func untilPlanRows(t *testing.T, out, topic string) map[int32]string {
	t.Helper()
	rows := map[int32]string{}
	for _, line := range strings.Split(out, "\n") {
		f := strings.Fields(line)
		if len(f) < 5 || !strings.HasPrefix(f[0], topic+"/") {
			continue
		}
		if _, err := strconv.Atoi(f[1]); err != nil && f[1] != "-" {
			continue
		}
		p, _ := strconv.Atoi(strings.TrimPrefix(f[0], topic+"/"))
		// The partition table has a numeric OBJECTS column too: the
		// point-in-time rows are the ones with a CHOSEN BY text.
		if rest := strings.Join(f[4:], " "); strings.Contains(rest, "snapshot at") || strings.Contains(rest, "timestamps") || strings.Contains(rest, "REFUSED") {
			rows[int32(p)] = strings.Join(f[1:], " ")
		}
	}
	return rows
}

// TestIntegrationRestoreUntilSnapshot (issue 9, item 5): phase 1 records,
// `sink --once` (which snapshots the end offsets after its final commit),
// a pause, phase 2 records, `sink --once` again; `source --until` a time
// between the two runs restores exactly the phase-1 records of every
// partition (compared record for record with a franz-go dump of the
// source: key, value, headers, timestamp), cut at the first snapshot's end
// offsets, as the dry run shows, and --restore-groups commits the three
// groups' phase-1 offsets (at 0, mid-way, at the end; two moved on in
// phase 2) from that same snapshot. The same --until again produces nothing;
// a full restore then adds exactly phase 2; --until again after it is
// refused before anything is produced.
func TestIntegrationRestoreUntilSnapshot(t *testing.T) {
	b := newBed(t)
	const n1, n2 = 120, 70
	topic := srcUnique("until-snap")
	target := "copy_of_" + topic
	b.k.CreateTopic(t, topic, untilParts)
	bucket := b.s.CreateBucket(t)
	cfg := b.sinkConf(topic, topic, bucket).with("flush.size", "50", "store.envelope", "true").write(t)

	untilProduce(t, b, topic, 0, n1)
	end1 := b.endOffsets(t, topic)
	// Three groups: at 0, mid-way and at the end of phase 1; in phase 2
	// the last two move on.
	src := func(g string) string { return "app-" + g + "-" + topic }
	dst := func(g string) string { return "dr-" + g + "-" + topic }
	phase1Groups := map[string]int64{"zero": 0, "mid": n1 / 2, "end": n1}
	untilCommit(t, b, src("zero"), topic, 0)
	untilCommit(t, b, src("mid"), topic, n1/2)
	untilCommit(t, b, src("end"), topic, n1)
	runOnce(t, "sink --once (phase 1)", cfg)
	snaps := untilSnapshots(t, b, bucket, topic)
	if len(snaps) != 1 || fmt.Sprint(snaps[0].EndOffsets) != fmt.Sprint(end1) {
		t.Fatalf("after phase 1: snapshots %+v, want one with end offsets %v", snaps, end1)
	}
	time.Sleep(1500 * time.Millisecond)
	until := time.Now().UTC()
	time.Sleep(1500 * time.Millisecond)
	untilProduce(t, b, topic, n1, n2)
	untilCommit(t, b, src("mid"), topic, n1+n2/2)
	untilCommit(t, b, src("end"), topic, n1+n2)
	runOnce(t, "sink --once (phase 2)", cfg)
	if snaps = untilSnapshots(t, b, bucket, topic); len(snaps) != 2 || snaps[1].TimeMS <= until.UnixMilli() || snaps[0].TimeMS > until.UnixMilli() {
		t.Fatalf("after phase 2: %d snapshots %+v, want one before and one after --until %v", len(snaps), snaps, until)
	}
	dump := untilDump(t, b, topic, untilParts*(n1+n2))
	phase1 := untilBelow(dump, end1)
	untilArg := until.Format(time.RFC3339Nano)

	dry, code := srcRun(t, "source --dry-run --until", cfg, time.Minute, "--topic-rename", "copy_of_$0", "--dry-run", "--until", untilArg)
	if code != 0 {
		t.Fatalf("dry run: exit %d\n%s", code, dry.logs())
	}
	t.Logf("dry run:\n%s", dry.stdout())
	rows := untilPlanRows(t, dry.stdout(), topic)
	for p := range int32(untilParts) {
		want := fmt.Sprintf("%d %d %d snapshot at %s", end1[p], end1[p], n2, time.UnixMilli(snaps[0].TimeMS).UTC().Format(time.RFC3339Nano))
		if !strings.HasPrefix(rows[p], want) || !strings.Contains(rows[p], "precision: the snapshot interval") {
			t.Errorf("dry run row of partition %d: %q, want %q...", p, rows[p], want)
		}
	}

	args := []string{"--topic-rename", "copy_of_$0", "--create-topics", "--until", untilArg,
		"--restore-groups", "--group-rename", "app-(.*)=dr-$1"}
	records, _, pastCut, _ := untilRun(t, "source --until --restore-groups", cfg, 0, args...)
	if records != untilParts*n1 || pastCut != untilParts*n2 {
		t.Fatalf("--until: %d records, %d past the cut; want %d and %d", records, pastCut, untilParts*n1, untilParts*n2)
	}
	// The groups of that moment (the snapshot the cuts come from), not
	// their phase-2 positions; the target offsets equal the source ones
	// (no gaps, an empty target).
	for g, o := range phase1Groups {
		got := b.committed(t, dst(g), target)
		if fmt.Sprint(got) != fmt.Sprint(map[int32]int64{0: o, 1: o, 2: o}) {
			t.Errorf("group %s on %s: %v, want %d on every partition", dst(g), target, got, o)
		}
	}
	untilSame(t, "--until", untilDump(t, b, target, untilParts*n1), phase1)
	if ends := b.endOffsets(t, target); fmt.Sprint(ends) != fmt.Sprint(end1) {
		t.Fatalf("target ends at %v, want %v", ends, end1)
	}

	records, present, _, _ := untilRun(t, "source --until again", cfg, 0, args...)
	if records != 0 || present != untilParts*n1 {
		t.Fatalf("re-run: %d records, %d already present", records, present)
	}

	full, code := srcRun(t, "source (full)", cfg, 3*time.Minute, "--topic-rename", "copy_of_$0")
	if code != 0 || !strings.Contains(full.stdout(), fmt.Sprintf(" records=%d ", untilParts*n2)) {
		t.Fatalf("full restore: exit %d\n%s", code, full.logs())
	}
	untilSame(t, "full restore after --until", untilDump(t, b, target, untilParts*(n1+n2)), dump)

	_, _, _, refused := untilRun(t, "source --until after the full restore", cfg, 1, args...)
	if !strings.Contains(refused.stderr(), "the target already holds records past the --until cut") ||
		!strings.Contains(refused.stderr(), fmt.Sprintf("%s/0 holds %d records of this restore", target, n1+n2)) {
		t.Fatalf("refusal: %s", refused.stderr())
	}
	if ends := b.endOffsets(t, target); srcSum(ends) != untilParts*(n1+n2) {
		t.Fatalf("target changed after the refusal: %v", ends)
	}
}

// TestIntegrationRestoreUntilLogAppendTime (issue 9, item 5): a topic with
// message.timestamp.type=LogAppendTime archived with store.envelope and no
// snapshots (offsets.snapshot.interval.ms=0), both phases in one `sink
// --once`: `source --until` a time between the phases cuts by the
// records' broker timestamps, exactly (the dry run says so, and that the
// objects holding only phase 2 are not read), and restores exactly the
// phase-1 records, each with its original time.
func TestIntegrationRestoreUntilLogAppendTime(t *testing.T) {
	b := newBed(t)
	const n1, n2 = 90, 40
	topic := srcUnique("until-lat")
	target := "copy_of_" + topic
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	adm := kadm.NewClient(b.k.Client(t))
	resp, err := adm.CreateTopic(ctx, untilParts, 1, map[string]*string{"message.timestamp.type": ptr("LogAppendTime")}, topic)
	if err == nil {
		err = resp.Err
	}
	if err != nil {
		t.Fatalf("create %s: %v", topic, err)
	}
	if !waitFor(30*time.Second, 100*time.Millisecond, func() bool {
		td, err := adm.ListTopics(ctx, topic)
		return err == nil && td[topic].Err == nil && len(td[topic].Partitions) == untilParts && allLeaders(td[topic].Partitions)
	}) {
		t.Fatalf("topic %s has no leaders", topic)
	}
	bucket := b.s.CreateBucket(t)
	cfg := b.sinkConf(topic, topic, bucket).with("flush.size", "25", "store.envelope", "true", "offsets.snapshot.interval.ms", "0").write(t)

	untilProduce(t, b, topic, 0, n1)
	end1 := b.endOffsets(t, topic)
	time.Sleep(1500 * time.Millisecond)
	until := time.Now().UTC()
	time.Sleep(1500 * time.Millisecond)
	untilProduce(t, b, topic, n1, n2)
	runOnce(t, "sink --once", cfg)
	if snaps := untilSnapshots(t, b, bucket, topic); len(snaps) != 0 {
		t.Fatalf("%d snapshots with offsets.snapshot.interval.ms=0", len(snaps))
	}
	dump := untilDump(t, b, topic, untilParts*(n1+n2))
	for p, rs := range dump {
		if rs[0].Attrs.TimestampType() != 1 {
			t.Fatalf("partition %d: timestamp type %d, want LogAppendTime (1)", p, rs[0].Attrs.TimestampType())
		}
	}
	phase1 := untilBelow(dump, end1)
	untilArg := strconv.FormatInt(until.UnixMilli(), 10) // Unix milliseconds work too

	dry, code := srcRun(t, "source --dry-run --until", cfg, time.Minute, "--topic-rename", "copy_of_$0", "--dry-run", "--until", untilArg)
	if code != 0 {
		t.Fatalf("dry run: exit %d\n%s", code, dry.logs())
	}
	t.Logf("dry run:\n%s", dry.stdout())
	rows := untilPlanRows(t, dry.stdout(), topic)
	for p := range int32(untilParts) {
		// flush.size 25: the objects from 100 and 125 hold phase 2 only,
		// the index says so (min_ts), and they are not read.
		if want := fmt.Sprintf("%d %d %d record timestamps, exact; 2 objects wholly past the cut not read (archive index)", end1[p], end1[p], n2); rows[p] != want {
			t.Errorf("dry run row of partition %d: %q, want %q", p, rows[p], want)
		}
	}
	// --create-topics would create the target as archived, LogAppendTime,
	// and the broker would restamp every record: CreateTime keeps the
	// original times to compare.
	records, _, pastCut, _ := untilRun(t, "source --until", cfg, 0, "--topic-rename", "copy_of_$0", "--create-topics",
		"--topic-config", "message.timestamp.type=CreateTime", "--until", untilArg)
	if records != untilParts*n1 || pastCut != untilParts*n2 {
		t.Fatalf("--until: %d records, %d past the cut; want %d and %d", records, pastCut, untilParts*n1, untilParts*n2)
	}
	untilSame(t, "--until by LogAppendTime", untilDump(t, b, target, untilParts*n1), phase1)
}

// untilCommit commits offset o for every partition of topic in group
// (no members), as a consumer that read up to o would.
func untilCommit(t *testing.T, b *bed, group, topic string, o int64) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	var os kadm.Offsets
	for p := range int32(untilParts) {
		os.Add(kadm.Offset{Topic: topic, Partition: p, At: o, LeaderEpoch: -1})
	}
	if err := kadm.NewClient(b.k.Client(t)).CommitAllOffsets(ctx, group, os); err != nil {
		t.Fatalf("commit %s: %v", group, err)
	}
}

// TestIntegrationRestoreUntilTransactions (issue 9, items 5 and 6): phase
// 1 is plain records, an aborted and a committed transaction and more
// plain records, with groups at 0, inside the aborted records, just after
// the commit marker and at the end; `sink --once` (read_committed)
// snapshots the last stable offsets; phase 2 adds a committed and an
// aborted transaction and plain records and moves the groups; `sink
// --once` again. `source --until` between the runs with --restore-groups
// restores exactly the committed phase-1 records (record for record
// against a read_committed franz-go dump) and the groups at their phase-1
// positions translated across the markers and the aborted records.
func TestIntegrationRestoreUntilTransactions(t *testing.T) {
	b := newBed(t)
	const plain, txn, tail = 50, 10, 10
	topic := srcUnique("until-txn")
	target := "copy_of_" + topic
	b.k.CreateTopic(t, topic, untilParts)
	bucket := b.s.CreateBucket(t)
	cfg := b.sinkConf(topic, topic, bucket).with("flush.size", "15", "store.envelope", "true").write(t)

	untilProduce(t, b, topic, 0, plain)
	grpTransaction(t, b, topic, untilParts, txn, false) // 50..59, abort marker 60
	grpTransaction(t, b, topic, untilParts, txn, true)  // 61..70, commit marker 71
	untilProduce(t, b, topic, plain, tail)              // 72..81
	end1 := b.endOffsets(t, topic)
	if end1[0] != plain+2*(txn+1)+tail {
		t.Fatalf("phase 1 ends at %v, want %d per partition", end1, plain+2*(txn+1)+tail)
	}
	src := func(g string) string { return "app-" + g + "-" + topic }
	dst := func(g string) string { return "dr-" + g + "-" + topic }
	// source offset -> records restored below it (the target offset).
	phase1 := map[string][2]int64{"zero": {0, 0}, "aborted": {55, plain}, "committed": {72, plain + txn}, "end": {end1[0], plain + txn + tail}}
	for g, o := range phase1 {
		untilCommit(t, b, src(g), topic, o[0])
	}
	runOnce(t, "sink --once (phase 1)", cfg)
	time.Sleep(1500 * time.Millisecond)
	until := time.Now().UTC()
	time.Sleep(1500 * time.Millisecond)
	grpTransaction(t, b, topic, untilParts, txn, true)
	grpTransaction(t, b, topic, untilParts, txn, false)
	untilProduce(t, b, topic, plain+tail, tail)
	end2 := b.endOffsets(t, topic)
	for g := range phase1 {
		if g != "zero" {
			untilCommit(t, b, src(g), topic, end2[0])
		}
	}
	runOnce(t, "sink --once (phase 2)", cfg)
	if snaps := untilSnapshots(t, b, bucket, topic); len(snaps) != 2 || fmt.Sprint(snaps[0].EndOffsets) != fmt.Sprint(end1) {
		t.Fatalf("snapshots %+v, want two, the first at %v", snaps, end1)
	}
	perPart := plain + txn + tail
	dump := untilDump(t, b, topic, untilParts*(perPart+txn+tail))

	args := []string{"--topic-rename", "copy_of_$0", "--create-topics", "--until", until.Format(time.RFC3339Nano),
		"--restore-groups", "--group-rename", "app-(.*)=dr-$1"}
	records, _, pastCut, _ := untilRun(t, "source --until --restore-groups", cfg, 0, args...)
	if records != int64(untilParts*perPart) || pastCut != int64(untilParts*(txn+tail)) {
		t.Fatalf("--until: %d records, %d past the cut; want %d and %d", records, pastCut, untilParts*perPart, untilParts*(txn+tail))
	}
	untilSame(t, "--until across transactions", untilDump(t, b, target, untilParts*perPart), untilBelow(dump, end1))
	for g, o := range phase1 {
		got := b.committed(t, dst(g), target)
		if fmt.Sprint(got) != fmt.Sprint(map[int32]int64{0: o[1], 1: o[1], 2: o[1]}) {
			t.Errorf("group %s (source offset %d) on %s: %v, want %d on every partition", dst(g), o[0], target, got, o[1])
		}
	}
}
