//go:build integration

package e2e

import (
	"bytes"
	"context"
	"fmt"
	"reflect"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/twmb/franz-go/pkg/kadm"

	"github.com/kafkas3/kafkas3/index"
)

// TestIntegrationLostBeforeArchiving is issue 18's reten scenario on the
// real broker, for `sink --once` and a sink that runs until SIGTERM, in
// JSON and with store.envelope: 20 records archived (committed 20), 80
// more produced, the log start moved to 60 with DeleteRecords, the sink
// run again. It must warn "lost offsets 20-59 (40)" naming the partition,
// print lost=40, record the run in the index, leave the objects written
// before the loss byte-identical; verify exits 1 naming the range and 0
// with --accept-lost; the restore's dry run lists the range. The cases
// share one broker and one bucket.
func TestIntegrationLostBeforeArchiving(t *testing.T) {
	b := newBed(t)
	bucket := b.s.CreateBucket(t)
	for _, tc := range []struct {
		name     string
		envelope bool
		once     bool
	}{{"once json", false, true}, {"once envelope", true, true}, {"continuous json", false, false}, {"continuous envelope", true, false}} {
		t.Run(tc.name, func(t *testing.T) {
			topic := srcUnique("reten")
			b.k.CreateTopic(t, topic, 1)
			c := b.sinkConf("lost-"+topic, topic, bucket).with("flush.size", "10")
			if tc.envelope {
				c = c.with("store.envelope", "true")
			}
			cfg := c.write(t)
			b.produce(t, topic, 1, 0, 20, value)
			runOnce(t, "sink before the loss", cfg)
			before := topicObjects(b.snapshot(t, bucket), topic)
			b.produce(t, topic, 1, 20, 80, value)
			b.deleteRecords(t, topic, 0, 60)

			sum, p := lostSinkRun(t, b, tc.once, cfg, "connect-lost-"+topic, topic)
			warn := fmt.Sprintf("records lost before archiving: %s[0] lost offsets 20-59 (40)", topic)
			if sum.lost != 40 || sum.records != 40 || !strings.Contains(p.stderr(), warn) || !strings.Contains(p.stderr(), "level=WARN") {
				t.Fatalf("sink after the loss: %s; want lost=40 records=40 and %q\n%s", sum.line, warn, p.logs())
			}
			after := topicObjects(b.snapshot(t, bucket), topic)
			for k, o := range before {
				if after[k].sum != o.sum {
					t.Errorf("object %s written before the loss changed or disappeared", k)
				}
			}
			checkLostEntries(t, after, topic)
			checkLostCommands(t, cfg, topic)
		})
	}
}

// lostSinkRun runs the sink after the loss: --once, or until it has
// committed offset 100 and is stopped with SIGTERM. It returns the
// summary and the process.
func lostSinkRun(t *testing.T, b *bed, once bool, cfg, group, topic string) (summary, *proc) {
	t.Helper()
	if once {
		return runOnce(t, "sink --once after the loss", cfg)
	}
	p := startSink(t, "sink after the loss", cfg)
	if !waitFor(90*time.Second, 200*time.Millisecond, func() bool {
		c, err := b.committedErr(group, topic)
		return err == nil && c[0] == 100
	}) {
		t.Fatalf("offset 100 not committed within 90 s\n%s", p.logs())
	}
	p.signal(syscall.SIGTERM)
	if code := p.wait(30 * time.Second); code != 0 {
		t.Fatalf("exit code %d after SIGTERM\n%s", code, p.logs())
	}
	sum, err := parseSummary(p.stdout())
	if err != nil {
		t.Fatalf("%v\n%s", err, p.logs())
	}
	return sum, p
}

// deleteRecords moves the log start of topic's partition p to offset.
func (b *bed) deleteRecords(t *testing.T, topic string, p int32, offset int64) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	var o kadm.Offsets
	o.Add(kadm.Offset{Topic: topic, Partition: p, At: offset})
	res, err := kadm.NewClient(b.k.Client(t)).DeleteRecords(ctx, o)
	if err == nil {
		err = res.Error()
	}
	if err != nil {
		t.Fatalf("delete records of %s[%d] before %d: %v", topic, p, offset, err)
	}
}

// topicObjects keeps the data and index objects of topic.
func topicObjects(objs map[string]object, topic string) map[string]object {
	out := map[string]object{}
	for k, o := range objs {
		if strings.HasPrefix(k, "topics/"+topic+"/") || strings.HasPrefix(k, indexPrefix+"index/"+topic+"/") {
			out[k] = o
		}
	}
	return out
}

// checkLostEntries decodes the topic's index objects: exactly one entry,
// the first after the loss, carries the lost run 20-59, and the coverage
// holds 60 records, 40 lost, none absent, no gap.
func checkLostEntries(t *testing.T, objs map[string]object, topic string) {
	t.Helper()
	var all []index.Entry
	for k, o := range objs {
		if !strings.HasPrefix(k, indexPrefix+"index/") {
			continue
		}
		es, err := index.Decode(k, bytes.NewReader(o.data))
		if err != nil {
			t.Fatal(err)
		}
		all = append(all, es...)
	}
	var carriers []index.Entry
	for _, e := range all {
		if len(e.Lost) > 0 {
			carriers = append(carriers, e)
		}
	}
	want := []index.Run{{First: 20, Last: 59}}
	if len(carriers) != 1 || !reflect.DeepEqual(carriers[0].Lost, want) || carriers[0].From != 20 || carriers[0].First() != 60 {
		t.Errorf("entries with lost runs: %+v, want one from 20 starting at 60 with lost %v", carriers, want)
	}
	ps := index.Analyze(all)
	if len(ps) != 1 || !ps[0].Clean() || ps[0].Records != 60 || ps[0].LostCount != 40 || ps[0].Absent != 0 || ps[0].Commit != 100 {
		t.Errorf("coverage %+v", ps)
	}
}

// checkLostCommands runs verify (exit 1 naming the range), verify
// --accept-lost (exit 0, the range accepted) and the restore's dry run
// (the range listed, exit 0).
func checkLostCommands(t *testing.T, cfg, topic string) {
	t.Helper()
	line := fmt.Sprintf("lost %s/0: 40 offsets 20-59 lost before archiving", topic)
	p := startKafkas3(t, "verify", "verify", cfg, "--topics", topic)
	if code := p.wait(2 * time.Minute); code != 1 || !strings.Contains(p.stdout(), "problem: "+line) {
		t.Errorf("verify: exit %d, want 1 and %q\n%s", code, "problem: "+line, p.logs())
	}
	p = startKafkas3(t, "verify --accept-lost", "verify", cfg, "--topics", topic, "--accept-lost")
	if code := p.wait(2 * time.Minute); code != 0 || !strings.Contains(p.stdout(), "accepted: "+line) ||
		!strings.Contains(p.stdout(), "kafkas3 verify: clean (1 accepted: --accept-lost);") {
		t.Errorf("verify --accept-lost: exit %d, want 0 and %q\n%s", code, "accepted: "+line, p.logs())
	}
	p, code := srcRun(t, "source --dry-run", cfg, 2*time.Minute, "--dry-run", "--topic-rename", "copy_of_$0")
	plan := fmt.Sprintf("lost before archiving: %s/0 offsets 20-59 (40)", topic)
	if code != 0 || !strings.Contains(p.stdout(), plan) || !strings.Contains(p.stdout(), "records: 60 to restore, 0 duplicates, 0 gaps, 0 damaged objects; 40 offsets lost before archiving") {
		t.Errorf("source --dry-run: exit %d, want 0 and %q\n%s", code, plan, p.stdout())
	}
}

// TestIntegrationLostNothingLeft: when DeleteRecords moved the log start
// to the end, no fetch shows the loss; `sink --once` still warns, prints
// lost=80, commits the log start and records the run, so verify names it.
func TestIntegrationLostNothingLeft(t *testing.T) {
	b := newBed(t)
	bucket := b.s.CreateBucket(t)
	topic := srcUnique("gone")
	b.k.CreateTopic(t, topic, 1)
	cfg := b.sinkConf("lost-"+topic, topic, bucket).with("flush.size", "10").write(t)
	b.produce(t, topic, 1, 0, 20, value)
	runOnce(t, "sink before the loss", cfg)
	b.produce(t, topic, 1, 20, 80, value)
	b.deleteRecords(t, topic, 0, 100)

	sum, p := runOnce(t, "sink --once after the loss", cfg)
	if warn := fmt.Sprintf("%s[0] lost offsets 20-99 (80)", topic); sum.lost != 80 || sum.records != 0 || !strings.Contains(p.stderr(), warn) {
		t.Fatalf("sink: %s; want lost=80 and %q\n%s", sum.line, warn, p.logs())
	}
	if c := b.committed(t, "connect-lost-"+topic, topic); c[0] != 100 {
		t.Fatalf("committed %v, want the log start 100", c)
	}
	v := startKafkas3(t, "verify", "verify", cfg, "--topics", topic)
	if code, line := v.wait(2*time.Minute), fmt.Sprintf("problem: lost %s/0: 80 offsets 20-99 lost before archiving", topic); code != 1 || !strings.Contains(v.stdout(), line) {
		t.Fatalf("verify: exit %d, want 1 and %q\n%s", code, line, v.logs())
	}
	if sum, _ := runOnce(t, "sink --once again", cfg); sum.lost != 0 || sum.records != 0 {
		t.Fatalf("a run after the loss: %s", sum.line)
	}
}
