//go:build integration

package e2e

import (
	"fmt"
	"regexp"
	"sort"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/twmb/franz-go/pkg/kadm"
)

// TestIntegrationSourceDryRunAndPlan (issue 4, items 2 and 8): with
// filename.offset.zero.pad.width=1 and flush.size=3 the keys sort
// differently as strings (t+0+12 before t+0+3); --dry-run prints the plan
// (target, partitions, objects, bytes, offset range) without touching Kafka,
// the objects and bytes it counts are what `aws s3 ls --recursive` lists,
// and the restore produces the records in offset order.
func TestIntegrationSourceDryRunAndPlan(t *testing.T) {
	b := newBed(t)
	const parts, perPart, flush = 2, 25, 3
	topic := srcUnique("src-plan")
	target := "copy_of_" + topic
	b.k.CreateTopic(t, topic, parts)
	b.produce(t, topic, parts, 0, perPart, value)
	bucket := b.s.CreateBucket(t)
	cfg := b.sinkConf(topic, topic, bucket).with("flush.size", strconv.Itoa(flush), "filename.offset.zero.pad.width", "1").write(t)
	runOnce(t, "sink --once", cfg)

	// The aws CLI lists the archive on its own: unpadded keys whose string
	// order is not their offset order.
	listed := srcArchiveKeys(b.awsListKeys(t, bucket))
	wantObjects := parts * ((perPart + flush - 1) / flush)
	if len(listed) != wantObjects {
		t.Fatalf("aws s3 ls lists %d objects, want %d: %v", len(listed), wantObjects, listed)
	}
	var listedBytes int64
	keyRE := regexp.MustCompile(`^topics/` + topic + `/partition=(\d)/` + topic + `\+(\d)\+(\d+)\.json$`)
	byPart := map[string][]string{}
	for k, size := range listed {
		m := keyRE.FindStringSubmatch(k)
		if m == nil || m[1] != m[2] {
			t.Fatalf("aws s3 ls: unexpected key %q", k)
		}
		if off, _ := strconv.Atoi(m[3]); off%flush != 0 || strconv.Itoa(off) != m[3] {
			t.Fatalf("key %q: want an unpadded multiple of %d", k, flush)
		}
		listedBytes += size
		byPart[m[1]] = append(byPart[m[1]], k)
	}
	p0 := byPart["0"]
	sort.Strings(p0)
	t.Logf("aws s3 ls: %d objects, %d bytes; partition 0 in string order: %s", len(listed), listedBytes,
		strings.Join(p0, " "))
	if !strings.HasSuffix(p0[1], "+12.json") || !strings.HasSuffix(p0[len(p0)-1], "+9.json") {
		t.Fatalf("string order of the keys is offset order (%v): the test proves nothing", p0)
	}

	// Dry run against a dead broker address: it needs no Kafka.
	dry, code := srcRun(t, "source --dry-run", cfg, time.Minute, "--topic-rename", "copy_of_$0", "--dry-run",
		"-p", "bootstrap.servers=127.0.0.1:1")
	if code != 0 {
		t.Fatalf("dry run: exit code %d\n%s", code, dry.logs())
	}
	out := dry.stdout()
	t.Logf("dry run printed:\n%s", out)
	rows := srcParsePlan(t, out)
	want := srcPlanRow{source: topic, target: target, partitions: parts, objects: wantObjects,
		bytes: srcHumanBytes(listedBytes), offsets: fmt.Sprintf("0..%d", (perPart-1)/flush*flush)}
	if len(rows) != 1 || rows[topic] != want {
		t.Fatalf("dry-run plan %+v, want one row %+v", rows, want)
	}
	if !strings.Contains(out, fmt.Sprintf("total: 1 topics, %d partitions, %d objects, %s;", parts, wantObjects, srcHumanBytes(listedBytes))) ||
		!strings.Contains(out, "dry run: nothing produced") {
		t.Fatalf("dry run: no total line or no 'nothing produced' in\n%s", out)
	}
	if n := b.srcTopicPartitions(t, target); n != -1 {
		t.Fatalf("dry run created %s (%d partitions)", target, n)
	}
	if m := b.committed(t, srcMarkerGroup(target), target); len(m) != 0 {
		t.Fatalf("dry run wrote markers %s", srcFmt(m))
	}

	// The restore: objects in offset order, so kcat reads 0..24 in order.
	sum, _ := srcRunOK(t, "source", cfg, "--topic-rename", "copy_of_$0", "--create-topics")
	if sum.topics != 1 || sum.partitions != parts || sum.objects != int64(wantObjects) || sum.records != parts*perPart ||
		sum.bytes != listedBytes || sum.present != 0 {
		t.Fatalf("summary %q; want topics=1 partitions=%d objects=%d records=%d bytes=%d (aws s3 ls) already_present=0",
			sum.line, parts, wantObjects, parts*perPart, listedBytes)
	}
	for p := range int32(parts) {
		srcSameValues(t, fmt.Sprintf("kcat %s/%d", target, p), b.srcKcat(t, target, p), srcValues(p, 0, perPart))
	}

	// A dry run against the restored target moves nothing.
	ends := b.srcEnds(t, target)
	if dry, code := srcRun(t, "source --dry-run again", cfg, time.Minute, "--topic-rename", "copy_of_$0", "--dry-run"); code != 0 ||
		srcParsePlan(t, dry.stdout())[topic] != want {
		t.Fatalf("second dry run: exit code %d, plan %+v\n%s", code, srcParsePlan(t, dry.stdout()), dry.logs())
	}
	if got := b.srcEnds(t, target); srcFmt(got) != srcFmt(ends) || srcSum(got) != parts*perPart {
		t.Fatalf("end offsets after the second dry run %s, before %s", srcFmt(got), srcFmt(ends))
	}
}

// TestIntegrationSourceTargets (issue 4, items 4 and 5): missing targets,
// too few and too many partitions, and the feedback-loop guard, each
// checked before anything is produced.
func TestIntegrationSourceTargets(t *testing.T) {
	b := newBed(t)
	const perPart = 100
	a, bt := srcUnique("src-tA"), srcUnique("src-tB")
	b.k.CreateTopic(t, a, 3)
	b.k.CreateTopic(t, bt, 2)
	b.produce(t, a, 3, 0, perPart, value)
	b.produce(t, bt, 2, 0, perPart, value)
	bucket := b.s.CreateBucket(t)
	cfg := b.sinkConf(a, a+","+bt, bucket).with("flush.size", "40").write(t)
	runOnce(t, "sink --once", cfg)
	ca, cb := "copy_of_"+a, "copy_of_"+bt
	rename := []string{"--topic-rename", "copy_of_$0"}

	// 1. Missing targets: exit 1, every missing topic named, nothing created.
	p, code := srcRun(t, "missing targets", cfg, time.Minute, rename...)
	if code != 1 || !strings.Contains(p.stderr(), strconv.Quote(ca)) || !strings.Contains(p.stderr(), strconv.Quote(cb)) ||
		!strings.Contains(p.stderr(), "--create-topics") {
		t.Fatalf("missing targets: exit code %d, want 1 and stderr naming %q and %q\n%s", code, ca, cb, p.logs())
	}
	if b.srcTopicPartitions(t, ca) != -1 || b.srcTopicPartitions(t, cb) != -1 {
		t.Fatalf("a failed run created target topics")
	}
	t.Logf("missing targets: exit 1: %s", srcLastLine(p.stderr()))

	// 2. copy_of_A has fewer partitions (2 < 3), copy_of_B more (3 > 2):
	// the run fails before producing to either, naming topic and counts.
	b.k.CreateTopic(t, ca, 2)
	b.k.CreateTopic(t, cb, 3)
	p, code = srcRun(t, "too few partitions", cfg, time.Minute, rename...)
	if code != 1 || !strings.Contains(p.stderr(), strconv.Quote(ca)+" has 2 partitions, the archive has 3") {
		t.Fatalf("too few partitions: exit code %d, want 1 and stderr naming %q with 2 and 3 partitions\n%s", code, ca, p.logs())
	}
	for _, tp := range []string{ca, cb} {
		if n := srcSum(b.srcEnds(t, tp)); n != 0 {
			t.Fatalf("too few partitions: %s holds %d records, want none", tp, n)
		}
		if m := b.committed(t, srcMarkerGroup(tp), tp); len(m) != 0 {
			t.Fatalf("too few partitions: markers %s written for %s", srcFmt(m), tp)
		}
	}
	t.Logf("too few partitions: exit 1: %s", srcLastLine(p.stderr()))

	// 3. More partitions is a warning; the extra partition stays empty.
	sum, p := srcRunOK(t, "more partitions", cfg, append(rename, "--topics", bt)...)
	if sum.records != 2*perPart || !strings.Contains(p.stderr(), "more partitions than the archive") {
		t.Fatalf("more partitions: records=%d, want %d, and a warning\n%s", sum.records, 2*perPart, p.logs())
	}
	if got := srcFmt(b.srcEnds(t, cb)); got != fmt.Sprintf("0:%d 1:%d 2:0", perPart, perPart) {
		t.Fatalf("%s end offsets %s", cb, got)
	}

	// 4. The feedback-loop guard: restoring into the archived topics
	// themselves is a configuration error (exit 2), in a dry run too.
	endsA, endsB := srcFmt(b.srcEnds(t, a)), srcFmt(b.srcEnds(t, bt))
	for _, extra := range [][]string{nil, {"--dry-run"}} {
		label := strings.TrimSpace("same topic " + strings.Join(extra, " "))
		p, code := srcRun(t, label, cfg, time.Minute, extra...)
		if code != 2 || !strings.Contains(p.stderr(), "feedback loop") || !strings.Contains(p.stderr(), strconv.Quote(a)) ||
			!strings.Contains(p.stderr(), strconv.Quote(bt)) || !strings.Contains(p.stderr(), "--allow-same-topic") {
			t.Fatalf("%s: exit code %d, want 2 and a feedback-loop error naming %q and %q\n%s", label, code, a, bt, p.logs())
		}
		t.Logf("%s: exit 2: %s", label, srcLastLine(p.stderr()))
	}
	if srcFmt(b.srcEnds(t, a)) != endsA || srcFmt(b.srcEnds(t, bt)) != endsB {
		t.Fatalf("the refused runs wrote to the archived topics")
	}

	// 5. --allow-same-topic lets it through: A gets its archive appended.
	sum, _ = srcRunOK(t, "same topic allowed", cfg, "--topics", a, "--allow-same-topic")
	if sum.records != 3*perPart {
		t.Fatalf("--allow-same-topic: records=%d, want %d", sum.records, 3*perPart)
	}
	for p := range int32(3) {
		srcSameValues(t, fmt.Sprintf("kcat %s/%d", a, p), b.srcKcat(t, a, p), append(srcValues(p, 0, perPart), srcValues(p, 0, perPart)...))
	}
}

// TestIntegrationSourceFollow (issue 4, item 7): `source --follow` restores
// the archive, then restores a batch the sink archives later, within a
// bounded wait, and exits 0 on SIGTERM.
func TestIntegrationSourceFollow(t *testing.T) {
	b := newBed(t)
	const parts, first, second = 2, 500, 300
	topic := srcUnique("src-follow")
	target := "copy_of_" + topic
	b.k.CreateTopic(t, topic, parts)
	b.produce(t, topic, parts, 0, first, value)
	bucket := b.s.CreateBucket(t)
	cfg := b.sinkConf(topic, topic, bucket).with("flush.size", "200").write(t)
	runOnce(t, "sink --once #1", cfg)

	f := srcStart(t, "source --follow", cfg, "--topic-rename", "copy_of_$0", "--create-topics", "--follow",
		"-p", "s3.poll.interval.ms=1000")
	landed := func() int64 {
		ends, err := b.srcEndsErr(target)
		if err != nil {
			return 0
		}
		return srcSum(ends)
	}
	if !waitFor(60*time.Second, 100*time.Millisecond, func() bool { return landed() >= parts*first || f.exited() }) || f.exited() {
		t.Fatalf("follow: initial pass: %d of %d records landed (exited %v)\n%s", landed(), parts*first, f.exited(), f.logs())
	}
	t.Logf("follow: initial pass restored %d records after %v", landed(), time.Since(f.started).Round(time.Millisecond))

	b.produce(t, topic, parts, first, second, value)
	runOnce(t, "sink --once #2", cfg)
	archived := time.Now()
	if !waitFor(30*time.Second, 100*time.Millisecond, func() bool { return landed() >= parts*(first+second) || f.exited() }) || f.exited() {
		t.Fatalf("follow: new objects: %d of %d records landed within 30 s of the second sink run (exited %v)\n%s",
			landed(), parts*(first+second), f.exited(), f.logs())
	}
	t.Logf("follow: the second batch landed %v after the sink archived it (poll interval 1 s)", time.Since(archived).Round(time.Millisecond))
	for p := range int32(parts) {
		srcSameValues(t, fmt.Sprintf("kcat %s/%d", target, p), b.srcKcat(t, target, p), srcValues(p, 0, first+second))
	}

	f.signal(syscall.SIGTERM)
	sigAt := time.Now()
	if code := f.wait(30 * time.Second); code != 0 {
		t.Fatalf("follow: exit code %d after SIGTERM, want 0\n%s", code, f.logs())
	}
	sum, err := srcParseSummary(f.stdout())
	if err != nil {
		t.Fatalf("follow: %v\n%s", err, f.logs())
	}
	t.Logf("follow: exited 0 %v after SIGTERM: %s", f.ended.Sub(sigAt).Round(time.Millisecond), sum.line)
	if sum.records != parts*(first+second) {
		t.Fatalf("follow summary records=%d, want %d", sum.records, parts*(first+second))
	}
	if got := srcSum(b.srcEnds(t, target)); got != parts*(first+second) {
		t.Fatalf("follow: target holds %d records, want %d", got, parts*(first+second))
	}
}

// srcEndsErr is srcEnds without failing the test (for polling).
func (b *bed) srcEndsErr(topic string) (map[int32]int64, error) {
	cl, err := b.k.NewClient()
	if err != nil {
		return nil, err
	}
	defer cl.Close()
	return srcEndsWith(kadm.NewClient(cl), topic)
}

// srcLastLine returns the last non-empty line of s.
func srcLastLine(s string) string {
	lines := strings.Split(strings.TrimSpace(s), "\n")
	return lines[len(lines)-1]
}
