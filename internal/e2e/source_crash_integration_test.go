//go:build integration

package e2e

import (
	"fmt"
	"math/rand/v2"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/twmb/franz-go/pkg/kadm"
)

// TestIntegrationSourceCrashExactlyOnce (issue 4, item 6): 400,000 records
// over 4 partitions, archived by `sink --once` as gzipped JSON, are restored
// into copy_of_<topic> by `source --create-topics`; the source is killed
// with SIGKILL at 5 random moments and re-run each time, then run to the
// end. kcat then reads exactly the archived records, in order, partition by
// partition, and one more run produces nothing.
//
// KAFKAS3_E2E_SEED=<n> replays a run's kill schedule.
func TestIntegrationSourceCrashExactlyOnce(t *testing.T) {
	b := newBed(t)
	const parts, perPart, flush = 4, 100_000, 10_000
	topic := srcUnique("src-crash")
	const total = parts * perPart
	target := "copy_of_" + topic
	b.k.CreateTopic(t, topic, parts)
	b.produce(t, topic, parts, 0, perPart, value)
	bucket := b.s.CreateBucket(t)
	cfg := b.sinkConf(topic, topic, bucket).with("flush.size", strconv.Itoa(flush), "s3.compression.type", "gzip").write(t)
	sinkSum, _ := runOnce(t, "sink --once", cfg)
	if sinkSum.records != total {
		t.Fatalf("sink archived %d records, want %d", sinkSum.records, total)
	}

	seed, rng := crashSeed(t)

	// The poller reads the target's end offsets on its own client.
	// Until the target exists, its metadata is purged before each poll, or
	// the client's cached "unknown topic" would hide it for seconds.
	pollCl := b.k.Client(t)
	adm := kadm.NewClient(pollCl)
	landed := func() int64 {
		ends, err := srcEndsWith(adm, target)
		if err != nil || len(ends) < parts {
			pollCl.PurgeTopicsFromClient(target)
			return 0 // not created yet
		}
		return srcSum(ends)
	}
	args := []string{"--topic-rename", "copy_of_$0", "--create-topics"}

	// Kill 1 falls in the start-up phase (plan, topic creation, markers,
	// first batches): a random delay of 20..450 ms, or earlier if 30 % of
	// the records have landed. Kills 2..5 fall when a random share (5..30 %)
	// of what is still to restore has landed, measured by the target's end
	// offsets every 2 ms. The restore runs at several 100,000 records/s
	// here, so the shares are small and the archive large: every kill must
	// hit an unfinished restore. A kill after the first two needs a tenth
	// of the archive still to restore (40,000 records, about 150 ms here):
	// with less, the run may finish between the poll and the signal, and
	// the kill would prove nothing. Kill 1 lands at most about two thirds
	// and a kill's in-flight batches add a few 10,000, so at least three
	// kills always come.
	prev := sourceKills(t, b, cfg, target, args, rng, seed, landed, total, func(k int, p *proc, after int64) string {
		return fmt.Sprintf("%d partitions resumed in this run", strings.Count(p.stderr(), "resuming restore"))
	})
	final, fp := srcRunOK(t, "source final run", cfg, args...)
	if final.records+final.present != total || final.present != prev {
		t.Fatalf("final run: records=%d already_present=%d; want already_present=%d (landed before it) and records=%d",
			final.records, final.present, prev, total-prev)
	}
	t.Logf("final run resumed %d partitions: %d records were already there, it produced %d",
		strings.Count(fp.stderr(), "resuming restore"), final.present, final.records)
	// Not a terminal: progress comes as plain lines, the last at 100 %.
	if !strings.Contains(fp.stderr(), "restore progress: ") || !strings.Contains(fp.stderr(), "(100.0%)") {
		t.Fatalf("final run: no plain progress line reaching 100 %% on stderr\n%s", fp.logs())
	}
	// The aws CLI lists the objects and bytes the run planned and read.
	var awsBytes int64
	awsKeys := srcArchiveKeys(b.awsListKeys(t, bucket))
	for _, size := range awsKeys {
		awsBytes += size
	}
	if int64(len(awsKeys)) != final.objects || awsBytes != final.bytes || final.objects != sinkSum.objects {
		t.Fatalf("aws s3 ls lists %d objects, %d bytes; the final run counted objects=%d bytes=%d, the sink wrote %d objects",
			len(awsKeys), awsBytes, final.objects, final.bytes, sinkSum.objects)
	}

	// kcat reads the source topic and the restored copy: the same values,
	// in the same order, and exactly those that were archived.
	ends := b.srcEnds(t, target)
	for p := range int32(parts) {
		if ends[p] != perPart {
			t.Fatalf("%s/%d ends at %d, want %d (ends %s)", target, p, ends[p], perPart, srcFmt(ends))
		}
		want := srcValues(p, 0, perPart)
		srcSameValues(t, "kcat "+topic+"/"+strconv.Itoa(int(p)), b.srcKcat(t, topic, p), want)
		srcSameValues(t, "kcat "+target+"/"+strconv.Itoa(int(p)), b.srcKcat(t, target, p), want)
	}
	t.Logf("kcat: %s holds the %d archived records in order, partition by partition, like %s", target, total, topic)

	// Markers: every partition's start offset is 0, the empty target's end.
	if m := b.committed(t, srcMarkerGroup(target), target); srcFmt(m) != srcFmt(perPartition(parts, 0)) {
		t.Fatalf("marker group %s holds %s, want start offset 0 for every partition", srcMarkerGroup(target), srcFmt(m))
	}

	// A run after completion produces nothing.
	again, _ := srcRunOK(t, "source after completion", cfg, args...)
	if again.records != 0 || again.present != total {
		t.Fatalf("run after completion: records=%d already_present=%d, want 0 and %d", again.records, again.present, total)
	}
	if got := b.srcEnds(t, target); srcFmt(got) != srcFmt(ends) {
		t.Fatalf("run after completion moved the end offsets: %s, before %s", srcFmt(got), srcFmt(ends))
	}
}

func killRule(k int, delay time.Duration, threshold int64) string {
	if k == 1 {
		return "start-up delay " + delay.String() + " or landed >= " + strconv.FormatInt(threshold, 10)
	}
	return "landed >= " + strconv.FormatInt(threshold, 10)
}

// sourceKills runs the source (cfg, args) and SIGKILLs it up to five
// times, each run resuming the last, as TestIntegrationSourceCrashExactlyOnce
// describes: kill 1 after a random start-up delay (20..450 ms) or once
// 30 % has landed, kills 2..5 when a random share (5..30 %) of what is
// left has landed, and a kill after the first two only while a tenth of
// the archive is still to restore (a run can finish between the poll and
// the signal). Every kill must hit an unfinished restore, leave what
// landed within [before it, total], and at least three must come. note
// adds the test's own words to each kill's log line. It returns what
// landed before the final run.
func sourceKills(t *testing.T, b *bed, cfg, target string, args []string, rng *rand.Rand, seed uint64, landed func() int64, total int64,
	note func(k int, p *proc, after int64) string) int64 {
	t.Helper()
	var prev int64
	kills := 0
	for k := 1; k <= 5; k++ {
		if k > 2 && total-prev < total/10 {
			t.Logf("no kill %d: only %d records of %d left to restore", k, total-prev, total)
			break
		}
		kills = k
		label := "source run " + strconv.Itoa(k)
		p := srcStart(t, label, cfg, args...)
		var delay time.Duration
		threshold := prev + int64(float64(total-prev)*(0.05+0.25*rng.Float64()))
		if k == 1 {
			delay, threshold = time.Duration(20+rng.IntN(431))*time.Millisecond, total*3/10
		}
		for !(k == 1 && time.Since(p.started) >= delay) && landed() < threshold {
			if p.exited() {
				t.Fatalf("%s exited (code %d) before its kill point (delay %v, threshold %d, landed %d)\n%s",
					label, p.cmd.ProcessState.ExitCode(), delay, threshold, landed(), p.logs())
			}
			time.Sleep(2 * time.Millisecond)
		}
		at, before := time.Since(p.started), landed()
		p.signal(syscall.SIGKILL)
		<-p.done
		if ws, ok := p.cmd.ProcessState.Sys().(syscall.WaitStatus); !ok || !ws.Signaled() || ws.Signal() != syscall.SIGKILL {
			t.Fatalf("%s: not killed by SIGKILL: %v\n%s", label, p.cmd.ProcessState, p.logs())
		}
		if before >= total {
			t.Fatalf("kill %d came after the restore had finished (landed %d of %d): the kill schedule missed; seed %d", k, before, total, seed)
		}
		time.Sleep(200 * time.Millisecond) // let requests already on the wire land
		after := landed()
		if after > total || after < prev {
			t.Fatalf("after kill %d the target holds %d records (before it %d, archive %d)", k, after, prev, total)
		}
		t.Logf("kill %d: SIGKILL %v after start (rule: %s); landed %d at the kill, %d after it (+%d this run; per partition %s); %s",
			k, at.Round(time.Millisecond), killRule(k, delay, threshold), before, after, after-prev, srcFmt(b.srcEnds(t, target)), note(k, p, after))
		prev = after
	}
	if kills < 3 {
		t.Fatalf("only %d kills hit an unfinished restore, want at least 3; seed %d", kills, seed)
	}
	return prev
}
