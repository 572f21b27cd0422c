//go:build integration

package e2e

import (
	"bytes"
	"context"
	"fmt"
	"os/exec"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/twmb/franz-go/pkg/kadm"
	"github.com/twmb/franz-go/pkg/kgo"

	"github.com/kafkas3/kafkas3/internal/testbed"
)

// grpKcatNext reads the first record at or after offset o of topic/p with
// kcat (read_committed: what a consumer of the group would read next) and
// returns its value; nil when there is none before the partition's end.
func (b *bed) grpKcatNext(t *testing.T, topic string, p int32, o int64) []byte {
	t.Helper()
	kcat := testbed.Tool(t, "kcat", "apt-get install kcat")
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	cmd := exec.CommandContext(ctx, kcat, "-C", "-b", b.k.Addr, "-t", topic, "-p", strconv.Itoa(int(p)),
		"-o", strconv.FormatInt(o, 10), "-c", "1", "-e", "-q", "-X", "isolation.level=read_committed", "-f", "%S %s\n")
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	out, err := cmd.Output()
	if err != nil {
		t.Fatalf("kcat %s/%d -o %d: %v\n%s", topic, p, o, err, stderr.String())
	}
	if len(out) == 0 {
		return nil
	}
	sp := bytes.IndexByte(out, ' ')
	n, err := strconv.Atoi(string(out[:max(sp, 0)]))
	if sp < 0 || err != nil || len(out) != sp+1+n+1 {
		t.Fatalf("kcat %s/%d -o %d: unexpected output %.80q", topic, p, o, out)
	}
	return out[sp+1 : sp+1+n]
}

// grpTxnValue is record i of partition p of a transaction.
func grpTxnValue(kind string, p int32, i int) []byte {
	return fmt.Appendf(nil, `{"txn":%q,"p":%d,"i":%d}`, kind, p, i)
}

// grpTransaction produces n records per partition in one transaction and
// commits or aborts it: the topic then holds its records (aborted ones
// invisible to read_committed) and a control marker after them.
func grpTransaction(t *testing.T, b *bed, topic string, parts int32, n int, commit bool) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	cl := b.k.Client(t, kgo.TransactionalID(srcUnique("grp-txn")), kgo.RecordPartitioner(kgo.ManualPartitioner()))
	if err := cl.BeginTransaction(); err != nil {
		t.Fatal(err)
	}
	kind := "aborted"
	if commit {
		kind = "committed"
	}
	var recs []*kgo.Record
	for p := range parts {
		for i := range n {
			recs = append(recs, &kgo.Record{Topic: topic, Partition: p, Value: grpTxnValue(kind, p, i)})
		}
	}
	if err := cl.ProduceSync(ctx, recs...).FirstErr(); err != nil {
		t.Fatal(err)
	}
	if err := cl.EndTransaction(ctx, kgo.TransactionEndTry(commit)); err != nil {
		t.Fatalf("end transaction (commit %v): %v", commit, err)
	}
}

// TestIntegrationRestoreGroupsExact (issue 9 items 2, 3, 6): a topic with a
// committed and an aborted transaction between plain records, and four
// groups committed with franz-go: at 0, mid-way, on the abort marker (and
// inside the aborted records), at the end. The sink's --once snapshot is
// restored by source --restore-groups into a renamed topic with
// --group-rename; the first run is SIGKILLed while it restores and a
// re-run finishes it. Then, for every group and partition, kcat reads the
// target from the group's committed offset and the first record equals the
// record kcat reads next on the source from the group's offset there
// (read_committed); a group at the end is at the target's end. The dry run
// printed those translations before anything was restored, and a run
// after completion commits the same offsets and produces nothing.
func TestIntegrationRestoreGroupsExact(t *testing.T) {
	b := newBed(t)
	const parts, perPart, txn, tail = 2, 60_000, 10, 20
	topic := srcUnique("grp")
	target := "copy_of_" + topic
	b.k.CreateTopic(t, topic, parts)
	b.produce(t, topic, parts, 0, perPart, value)
	grpTransaction(t, b, topic, parts, txn, false) // perPart..perPart+9, abort marker at perPart+10
	grpTransaction(t, b, topic, parts, txn, true)  // perPart+11..perPart+20, commit marker at perPart+21
	b.produce(t, topic, parts, perPart, tail, value)
	ends := b.srcEnds(t, topic)
	for p := range int32(parts) {
		if want := int64(perPart + 2*(txn+1) + tail); ends[p] != want {
			t.Fatalf("%s/%d ends at %d, want %d (records, two transactions with their markers, records)", topic, p, ends[p], want)
		}
	}
	abortMarker, commitMarker := int64(perPart+txn), int64(perPart+2*txn+1)
	groups := map[string]map[int32]int64{
		"zero":   {0: 0, 1: 0},
		"mid":    {0: perPart / 2, 1: perPart + 3},  // p1: inside the aborted records
		"marker": {0: abortMarker, 1: commitMarker}, // on the control markers
		"end":    {0: ends[0], 1: ends[1]},
	}
	cl := b.k.Client(t)
	adm := kadm.NewClient(cl)
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Minute)
	defer cancel()
	src := func(g string) string { return "app-" + g + "-" + topic }
	dst := func(g string) string { return "dr-" + g + "-" + topic }
	for g, offs := range groups {
		var os kadm.Offsets
		for p, o := range offs {
			os.Add(kadm.Offset{Topic: topic, Partition: p, At: o, LeaderEpoch: -1})
		}
		if err := adm.CommitAllOffsets(ctx, src(g), os); err != nil {
			t.Fatalf("commit %s: %v", src(g), err)
		}
	}

	bucket := b.s.CreateBucket(t)
	cfg := b.sinkConf(topic, topic, bucket).with("flush.size", "7000").write(t)
	if sum, _ := runOnce(t, "sink --once", cfg); sum.records != parts*(perPart+txn+tail) {
		t.Fatalf("sink archived %d records, want %d (the aborted ones and the markers are not records)", sum.records, parts*(perPart+txn+tail))
	}

	// The restored stream of partition p: the plain records, the committed
	// transaction, the tail, at target offsets 0, 1, ...: a group's target
	// offset is the number of archived records below its source offset.
	restoredBelow := func(o int64) int64 {
		switch {
		case o <= perPart:
			return o
		case o <= abortMarker+1: // the aborted records and their marker are not archived
			return perPart
		case o <= commitMarker: // the committed transaction
			return o - int64(txn+1)
		default: // the tail, after the commit marker
			return min(o-int64(txn+2), int64(perPart+txn+tail))
		}
	}
	want := map[string]map[int32]int64{}
	for g, offs := range groups {
		want[g] = map[int32]int64{}
		for p, o := range offs {
			want[g][p] = restoredBelow(o)
		}
	}
	args := []string{"--topic-rename", "copy_of_$0", "--create-topics", "--restore-groups", "--group-rename", "app-(.*)=dr-$1"}

	// The dry run prints every translation; nothing exists on the target yet.
	dp, code := srcRun(t, "source --dry-run", cfg, 3*time.Minute, append(args, "--dry-run")...)
	if code != 0 {
		t.Fatalf("dry run: exit code %d\n%s", code, dp.logs())
	}
	for g, offs := range groups {
		for p, o := range offs {
			line := fmt.Sprintf("%s  %s  %d  %d -> %d", src(g), dst(g), p, o, want[g][p])
			if !strings.Contains(squashSpaces(dp.stdout()), line) {
				t.Errorf("dry run lacks %q:\n%s", line, dp.stdout())
			}
		}
	}
	if t.Failed() {
		t.FailNow()
	}

	// A run killed while it restores commits no group; the re-run
	// finishes the records and commits the groups. The target exists
	// before the run, so the poll sees its first records within
	// milliseconds: a restore of these 120,060 records can finish in well
	// under a second (waiting for a fifth of them once let it finish
	// before the kill, and so, in one CI run, did polling a topic the
	// run had yet to create). Should the restore still finish first, the
	// kill is tried again on a new target, at most three times.
	total := int64(parts * (perPart + txn + tail))
	for attempt := 1; ; attempt++ {
		if attempt > 1 {
			prefix := fmt.Sprintf("copy%d_of_", attempt)
			target = prefix + topic
			args[1] = prefix + "$0"
		}
		at := grpKillOnce(t, b, cfg, target, parts, args)
		if at < total {
			t.Logf("SIGKILL with %d of %d records landed on %s", at, total, target)
			break
		}
		if attempt == 3 {
			t.Fatalf("the kill came after the restore finished, %d times (%d of %d records landed)", attempt, at, total)
		}
		t.Logf("the kill came after the restore finished (%d of %d records landed on %s); again on a new target", at, total, target)
	}
	for g := range groups {
		if got := b.committed(t, dst(g), target); len(got) != 0 {
			t.Fatalf("the killed run committed group %s: %v", dst(g), got)
		}
	}
	sum, rp := srcRunOK(t, "source run 2", cfg, args...)
	if sum.records+sum.present != total || !strings.Contains(rp.stdout(), "restored the offsets of 4 consumer groups") {
		t.Fatalf("re-run: %s\n%s", sum.line, rp.stdout())
	}

	check := func(what string) {
		t.Helper()
		tends := b.srcEnds(t, target)
		for g, offs := range groups {
			got := b.committed(t, dst(g), target)
			for pt, o := range offs {
				if got[pt] != want[g][pt] {
					t.Errorf("%s: group %s %s/%d committed %d, want %d (source offset %d)", what, dst(g), target, pt, got[pt], want[g][pt], o)
					continue
				}
				next := b.grpKcatNext(t, topic, pt, o)
				restored := b.grpKcatNext(t, target, pt, got[pt])
				if next == nil {
					if got[pt] != tends[pt] {
						t.Errorf("%s: group %s has nothing left on %s/%d but is at %d on %s, whose end is %d", what, dst(g), topic, pt, got[pt], target, tends[pt])
					}
					continue
				}
				if !bytes.Equal(next, restored) {
					t.Errorf("%s: group %s partition %d: next record on the source %.60q (from %d), on the target %.60q (from %d)",
						what, dst(g), pt, next, o, restored, got[pt])
				}
			}
		}
		for g := range groups {
			if got := b.committed(t, src(g), target); len(got) != 0 {
				t.Errorf("%s: the source name %s was committed on the target: %v", what, src(g), got)
			}
		}
	}
	check("after the re-run")
	t.Logf("kcat: each of the %d groups reads on %s, from its restored offset, the record it would read next on %s", len(groups), target, topic)

	// The records: kcat reads the same values on both sides (read_committed on the source).
	for pt := range int32(parts) {
		srcVals := append(srcValues(pt, 0, perPart), func() [][]byte {
			var v [][]byte
			for i := range txn {
				v = append(v, grpTxnValue("committed", pt, i))
			}
			return append(v, srcValues(pt, perPart, perPart+tail)...)
		}()...)
		srcSameValues(t, "kcat "+target+"/"+strconv.Itoa(int(pt)), b.srcKcat(t, target, pt), srcVals)
	}

	again, ap := srcRunOK(t, "source after completion", cfg, args...)
	if again.records != 0 || again.present != total || !strings.Contains(ap.stdout(), "restored the offsets of 4 consumer groups") {
		t.Fatalf("run after completion: %s\n%s", again.line, ap.stdout())
	}
	check("after a run after completion")
}

// grpKillOnce creates target, starts the restore, SIGKILLs it as soon as
// the first records are on the target and returns how many records it
// holds then.
func grpKillOnce(t *testing.T, b *bed, cfg, target string, parts int32, args []string) int64 {
	t.Helper()
	b.k.CreateTopic(t, target, parts)
	adm := kadm.NewClient(b.k.Client(t))
	landed := func() int64 {
		e, err := srcEndsWith(adm, target)
		if err != nil || len(e) < int(parts) {
			return 0
		}
		return srcSum(e)
	}
	p := srcStart(t, "source run (killed) into "+target, cfg, args...)
	for landed() == 0 {
		if p.exited() {
			t.Fatalf("the run into %s exited before its kill point\n%s", target, p.logs())
		}
		time.Sleep(time.Millisecond)
	}
	p.signal(syscall.SIGKILL)
	<-p.done
	time.Sleep(200 * time.Millisecond)
	return landed()
}

// squashSpaces collapses runs of two or more spaces (tabwriter padding)
// into two.
func squashSpaces(s string) string {
	var b strings.Builder
	sp := 0
	for _, r := range s {
		if r == ' ' {
			sp++
			continue
		}
		if sp == 1 {
			b.WriteByte(' ')
		} else if sp > 1 {
			b.WriteString("  ")
		}
		sp = 0
		b.WriteRune(r)
	}
	return b.String()
}
