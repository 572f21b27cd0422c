//go:build integration

package e2e

import (
	"encoding/json"
	"math/rand/v2"
	"os"
	"strconv"
	"sync"
	"testing"
	"time"
)

// progress returns the sum of group's committed offsets for topic.
func (b *bed) progress(t *testing.T, group, topic string) int64 {
	t.Helper()
	c, err := b.committedErr(group, topic)
	if err != nil {
		t.Logf("committed offsets of %s: %v", group, err)
		return -1
	}
	var n int64
	for _, o := range c {
		n += o
	}
	return n
}

// crashSeed returns the seed of a crash test's random kill moments
// (KAFKAS3_E2E_SEED, else the clock) and its generator, and logs how to
// rerun with it.
func crashSeed(t *testing.T) (uint64, *rand.Rand) {
	t.Helper()
	seed := uint64(time.Now().UnixNano())
	if s := os.Getenv("KAFKAS3_E2E_SEED"); s != "" {
		v, err := strconv.ParseUint(s, 10, 64)
		if err != nil {
			t.Fatalf("KAFKAS3_E2E_SEED=%q: %v", s, err)
		}
		seed = v
	}
	t.Logf("kill schedule seed %d (replay with KAFKAS3_E2E_SEED=%d)", seed, seed)
	return seed, rand.New(rand.NewPCG(seed, seed^0x9e3779b97f4a7c15))
}

// crashRuns starts a continuous sink on cfgCrash kills times, SIGKILLs
// each at a random moment (the last one only after the run has committed
// something, if no earlier one did), and evicts the dead member from
// group. It fails the test unless some kill came mid-archive, and returns
// the spool files the killed processes left.
func (b *bed) crashRuns(t *testing.T, rng *rand.Rand, cfgCrash, group, topic string, kills int, total int64) (leftSpool int) {
	t.Helper()
	midArchive := 0
	for i := 1; i <= kills; i++ {
		before := b.progress(t, group, topic)
		p := startSink(t, "crash run "+strconv.Itoa(i), cfgCrash)
		delay := time.Duration(300+rng.IntN(2700)) * time.Millisecond
		time.Sleep(delay)
		if i == kills && midArchive == 0 {
			// Every earlier kill came before the first commit (a slow
			// start on a busy machine): the last one waits until this
			// run has committed something, so the test proves a kill
			// mid-archive whatever the seed.
			waitFor(30*time.Second, 20*time.Millisecond, func() bool { return b.progress(t, group, topic) > before })
			delay = time.Since(p.started)
		}
		if p.exited() {
			t.Fatalf("crash run %d exited by itself with code %d\n%s", i, p.cmd.ProcessState.ExitCode(), p.logs())
		}
		if err := p.cmd.Process.Kill(); err != nil {
			t.Fatal(err)
		}
		p.wait(10 * time.Second)
		atKill := b.progress(t, group, topic)
		objects := len(b.list(t, bucketOf(t, cfgCrash)))
		leftSpool += p.spoolLeft()
		if atKill > before {
			midArchive++
		}
		t.Logf("kill %d: SIGKILL %v after start; committed %d -> %d of %d records; %d objects in bucket",
			i, delay, before, atKill, total, objects)
		// The dead process stays a group member until its session times
		// out (45 s), which would hold up the next join; remove it, as
		// Kafka's admin tools can.
		b.evictMembers(t, group)
	}
	if midArchive == 0 {
		t.Fatalf("none of the %d kills came after the process had archived something: the test proved nothing", kills)
	}
	t.Logf("%d of %d kills came while the process was archiving (its commits had moved the group)", midArchive, kills)
	return leftSpool
}

// bucketOf reads s3.bucket.name from a config file conf.write wrote.
func bucketOf(t *testing.T, cfgPath string) string {
	t.Helper()
	data, err := os.ReadFile(cfgPath)
	if err != nil {
		t.Fatal(err)
	}
	var c conf
	if err := json.Unmarshal(data, &c); err != nil {
		t.Fatal(err)
	}
	return c["s3.bucket.name"]
}

// checkCommittedToEnd fails unless group committed every partition of
// topic up to its end offset.
func (b *bed) checkCommittedToEnd(t *testing.T, group, topic string, parts int, ends map[int32]int64) {
	t.Helper()
	c := b.committed(t, group, topic)
	if len(c) != parts {
		t.Fatalf("group %s committed %v", group, c)
	}
	for p, e := range ends {
		if c[p] != e {
			t.Fatalf("group %s committed %v, end offsets %v", group, c, ends)
		}
	}
}

// TestIntegrationSinkCrashExactlyOnce (issue 3 item 7): 200,000 records from 4
// partitions; a sink in continuous mode is SIGKILLed at 5 random moments
// while it archives and restarted, then finished with --once. The archive
// equals a clean --once run's: same keys, byte-identical objects, every
// record exactly once and in order.
func TestIntegrationSinkCrashExactlyOnce(t *testing.T) {
	b := newBed(t)
	const topic, parts, perPart, flush, kills = "e2e-crash", 4, 50_000, 1000, 5
	_, rng := crashSeed(t)

	b.k.CreateTopic(t, topic, parts)
	bucketClean, bucketCrash := b.s.CreateBucket(t), b.s.CreateBucket(t)
	base := b.sinkConf("", topic, "").with("flush.size", strconv.Itoa(flush))
	cfgClean := base.with("name", "e2e-crash-clean", "s3.bucket.name", bucketClean).write(t)
	const crashName = "e2e-crash"
	group := "connect-" + crashName
	cfgCrash := base.with("name", crashName, "s3.bucket.name", bucketCrash).write(t)

	// Records arrive while the crash runs happen: 200 chunks of 250 per
	// partition, one every 75 ms.
	var prodWG sync.WaitGroup
	prodWG.Add(1)
	prodStart := time.Now()
	go func() {
		defer prodWG.Done()
		for from := 0; from < perPart; from += 250 {
			if err := b.produceErr(topic, parts, from, 250, value); err != nil {
				t.Error(err)
				return
			}
			time.Sleep(75 * time.Millisecond)
		}
	}()

	leftSpool := b.crashRuns(t, rng, cfgCrash, group, topic, kills, parts*perPart)
	prodWG.Wait()
	t.Logf("producer finished %v after start", time.Since(prodStart).Round(time.Millisecond))
	if t.Failed() {
		t.FailNow()
	}
	b.evictMembers(t, group)
	final, _ := runOnce(t, "final --once", cfgCrash)
	clean, _ := runOnce(t, "clean --once", cfgClean)
	if clean.records != parts*perPart {
		t.Fatalf("clean run archived %d records, want %d", clean.records, parts*perPart)
	}

	ends := b.endOffsets(t, topic)
	want := b.snapshot(t, bucketClean)
	got := b.snapshot(t, bucketCrash)
	from := perPartition(parts, 0)
	if n := checkJSONArchive(t, want, topic, from, ends, flush); n != parts*perPart {
		t.Fatalf("clean archive holds %d records, want %d", n, parts*perPart)
	}
	if n := checkJSONArchive(t, got, topic, from, ends, flush); n != parts*perPart {
		t.Fatalf("crash archive holds %d records, want %d", n, parts*perPart)
	}
	sameObjects(t, "crash archive", got, want)
	verifyClean(t, "crash archive", cfgCrash, parts*perPart)
	b.checkAWSList(t, bucketCrash, got)
	b.checkAWSList(t, bucketClean, want)
	var size int64
	for _, o := range got {
		size += o.size
	}
	t.Logf("%d records, %d objects, %d bytes: crash archive equals clean archive byte for byte; final run %s",
		parts*perPart, len(got), size, final.line)
	t.Logf("pending multipart uploads: crash bucket %d, clean bucket %d; spool files left by killed processes: %d",
		b.pendingUploads(t, bucketCrash), b.pendingUploads(t, bucketClean), leftSpool)
	b.checkCommittedToEnd(t, group, topic, parts, ends)
}
