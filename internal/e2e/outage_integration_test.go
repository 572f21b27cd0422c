//go:build integration

package e2e

import (
	"context"
	"fmt"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/kafkas3/kafkas3/internal/testbed"
)

// TestIntegrationBrokerOutages (issue 13, item 2): the real broker is
// killed (SIGKILL) and restarted on the same port and log dir twice while a
// continuous sink archives records that keep arriving, the second time for
// over two minutes. The sink must keep
// running, log each outage once (down with the cause, up again with how
// long), resume from the committed offsets and, finished with --once, hold
// the same objects, byte for byte, as a clean run.
func TestIntegrationBrokerOutages(t *testing.T) {
	b := newBed(t)
	ctx, cancel := context.WithTimeout(context.Background(), 12*time.Minute)
	defer cancel()
	broker, err := testbed.StartKafka(ctx, testbed.Options{QuickJVM: true, KafkaHeap: "384m"})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = broker.Close() })
	ob := &bed{k: broker, s: b.s}
	const topic, parts, flush, chunk = "e2e-brokerdown", 2, 500, 1500
	broker.CreateTopic(t, topic, parts)
	bucket, bucketClean := b.s.CreateBucket(t), b.s.CreateBucket(t)
	base := ob.sinkConf("", topic, "").with("flush.size", fmt.Sprint(flush))
	const name = "e2e-brokerdown"
	group := "connect-" + name
	cfg := base.with("name", name, "s3.bucket.name", bucket).write(t)

	ob.produce(t, topic, parts, 0, chunk, value)
	p := startSink(t, "continuous sink", cfg)
	if !waitFor(60*time.Second, 100*time.Millisecond, func() bool { return ob.progress(t, group, topic) > 0 }) {
		t.Fatalf("no commit within 60 s\n%s", p.logs())
	}
	for i := 1; i <= 2; i++ {
		broker.Kill()
		killed := time.Now()
		// The first outage is short; the second lasts over two minutes:
		// longer than the group's session timeout (45 s), the capped
		// backoff (30 s) and franz-go's request retry budget.
		time.Sleep(map[int]time.Duration{1: 15 * time.Second, 2: 130 * time.Second}[i])
		if p.exited() {
			t.Fatalf("outage %d: the sink exited while the broker was down (code %d)\n%s", i, p.cmd.ProcessState.ExitCode(), p.logs())
		}
		if err := broker.Restart(ctx); err != nil {
			t.Fatal(err)
		}
		t.Logf("outage %d: broker back after %v", i, time.Since(killed).Round(time.Millisecond))
		ob.produce(t, topic, parts, i*chunk, chunk, value)
		// The next outage starts only once the sink has seen this one end:
		// on a loaded machine its reconnect can take longer than the
		// produce, and two kills would read as one outage.
		if !waitFor(120*time.Second, 200*time.Millisecond, func() bool {
			return logLines(p.stderr(), "dependency up again", "dependency=broker") >= i
		}) {
			t.Fatalf("outage %d: the sink did not report the brokers up again within 120 s of the restart\n%s", i, p.logs())
		}
	}
	want := map[int32]int64{}
	for pt, e := range ob.endOffsets(t, topic) {
		want[pt] = e / flush * flush
	}
	if !waitFor(120*time.Second, 200*time.Millisecond, func() bool {
		c, err := ob.committedErr(group, topic)
		return err == nil && fmt.Sprint(c) == fmt.Sprint(want)
	}) {
		t.Fatalf("committed %v, want %v\n%s", ob.committed(t, group, topic), want, p.logs())
	}
	p.signal(syscall.SIGTERM)
	if code := p.wait(30 * time.Second); code != 0 {
		t.Fatalf("exit code %d after SIGTERM\n%s", code, p.logs())
	}
	downs, ups := logLines(p.stderr(), "dependency down", "dependency=broker"), logLines(p.stderr(), "dependency up again", "dependency=broker")
	t.Logf("logged for the brokers: %d down, %d up again", downs, ups)
	if downs < 2 || ups < 2 || downs > 4 || downs != ups {
		t.Fatalf("want each outage logged once down and once up again, got %d down and %d up\n%s", downs, ups, p.logs())
	}

	final, _ := runOnce(t, "final --once", cfg)
	clean, _ := runOnce(t, "clean --once", base.with("name", name+"-clean", "s3.bucket.name", bucketClean).write(t))
	got, wantObjs := b.snapshot(t, bucket), b.snapshot(t, bucketClean)
	n := checkJSONArchive(t, got, topic, perPartition(parts, 0), ob.endOffsets(t, topic), flush)
	if n != parts*3*chunk || clean.records != parts*3*chunk {
		t.Fatalf("archive holds %d records, clean run %d, want %d", n, clean.records, parts*3*chunk)
	}
	sameObjects(t, "archive after two broker outages", got, wantObjs)
	t.Logf("%d objects equal to the clean run's; final --once: %s", len(got), final.line)
}

// logLines counts the lines of logs that contain every one of want.
func logLines(logs string, want ...string) int {
	n := 0
	for _, l := range strings.Split(logs, "\n") {
		ok := true
		for _, w := range want {
			ok = ok && strings.Contains(l, w)
		}
		if ok {
			n++
		}
	}
	return n
}

// TestIntegrationSourceFollowBrokerOutages (issue 13, item 2): the real
// broker, which `source --follow` restores into, is killed (SIGKILL) and
// restarted twice: once as the first records land, once right after the
// sink archived a second batch. The source must keep running, report the
// brokers down and up again, and leave the target holding every archived
// record once, in order.
func TestIntegrationSourceFollowBrokerOutages(t *testing.T) {
	b := newBed(t)
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Minute)
	defer cancel()
	broker, err := testbed.StartKafka(ctx, testbed.Options{QuickJVM: true, KafkaHeap: "384m"})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = broker.Close() })
	ob := &bed{k: broker, s: b.s}
	const parts, first, second = 2, 3000, 2000
	topic := srcUnique("src-follow-down")
	target := "copy_of_" + topic
	broker.CreateTopic(t, topic, parts)
	ob.produce(t, topic, parts, 0, first, value)
	bucket := b.s.CreateBucket(t)
	cfg := ob.sinkConf(topic, topic, bucket).with("flush.size", "200").write(t)
	runOnce(t, "sink --once #1", cfg)

	f := srcStart(t, "source --follow", cfg, "--topic-rename", "copy_of_$0", "--create-topics", "--follow",
		"-p", "s3.poll.interval.ms=1000")
	landed := func() int64 {
		ends, err := ob.srcEndsErr(target)
		if err != nil {
			return 0
		}
		return srcSum(ends)
	}
	outage := func(i int) {
		t.Helper()
		broker.Kill()
		killed := time.Now()
		time.Sleep(10 * time.Second)
		if f.exited() {
			t.Fatalf("outage %d: the source exited while the broker was down (code %d)\n%s", i, f.cmd.ProcessState.ExitCode(), f.logs())
		}
		if err := broker.Restart(ctx); err != nil {
			t.Fatal(err)
		}
		t.Logf("outage %d: broker back after %v; %d records had landed", i, time.Since(killed).Round(time.Millisecond), landed())
	}
	if !waitFor(60*time.Second, 20*time.Millisecond, func() bool { return landed() > 0 || f.exited() }) || f.exited() {
		t.Fatalf("follow: nothing landed (exited %v)\n%s", f.exited(), f.logs())
	}
	outage(1)
	if !waitFor(120*time.Second, 100*time.Millisecond, func() bool { return landed() >= parts*first || f.exited() }) || f.exited() {
		t.Fatalf("follow: %d of %d records landed after the first outage (exited %v)\n%s", landed(), parts*first, f.exited(), f.logs())
	}
	ob.produce(t, topic, parts, first, second, value)
	runOnce(t, "sink --once #2", cfg)
	outage(2)
	total := int64(parts * (first + second))
	if !waitFor(120*time.Second, 100*time.Millisecond, func() bool { return landed() >= total || f.exited() }) || f.exited() {
		t.Fatalf("follow: %d of %d records landed after the second outage (exited %v)\n%s", landed(), total, f.exited(), f.logs())
	}
	time.Sleep(3 * time.Second) // more passes: nothing may be produced twice
	f.signal(syscall.SIGTERM)
	if code := f.wait(30 * time.Second); code != 0 {
		t.Fatalf("follow: exit code %d after SIGTERM, want 0\n%s", code, f.logs())
	}
	if got := landed(); got != total {
		t.Fatalf("target holds %d records, want %d", got, total)
	}
	for p := range int32(parts) {
		srcSameValues(t, fmt.Sprintf("kcat %s/%d", target, p), ob.srcKcat(t, target, p), srcValues(p, 0, first+second))
	}
	downs, ups := logLines(f.stderr(), "dependency down", "dependency=broker"), logLines(f.stderr(), "dependency up again", "dependency=broker")
	t.Logf("follow: logged for the brokers %d down, %d up again; %s", downs, ups, srcLastLine(f.stdout()))
	if downs < 1 || downs != ups {
		t.Fatalf("want the outages logged down and up again, got %d down and %d up\n%s", downs, ups, f.logs())
	}
}
