//go:build integration

package e2e

import (
	"fmt"
	"net"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"
)

// bigValue is a ~1 KiB JSON value, so that objects of a few thousand records
// are multipart uploads.
func bigValue(p int32, i int) []byte {
	pad := strings.Repeat(string(rune('A'+(i*7+int(p))%26)), 950+i%50)
	return fmt.Appendf(nil, `{"p":%d,"i":%d,"pad":"%s"}`, p, i, pad)
}

// closedPort returns a loopback address nothing listens on.
func closedPort(t *testing.T) string {
	t.Helper()
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	addr := l.Addr().String()
	l.Close()
	return addr
}

// TestIntegrationSinkFaults (issue 3 item 12).
func TestIntegrationSinkFaults(t *testing.T) {
	b := newBed(t)
	const topic = "e2e-faults"
	b.k.CreateTopic(t, topic, 2)
	b.produce(t, topic, 2, 0, 500, value)
	bucket := b.s.CreateBucket(t)

	// failFast runs the sink, which must fail within limit, with a non-zero
	// exit code and stderr naming every want; the group must hold no offsets.
	failFast := func(t *testing.T, name string, c conf, limit time.Duration, want ...string) {
		t.Helper()
		p, code := runSink(t, name, c.write(t), limit+5*time.Second, "--once", "--once-timeout", "15s")
		took := p.ended.Sub(p.started)
		if code == 0 || took > limit {
			t.Fatalf("exit code %d after %v; want non-zero within %v\n%s", code, took, limit, p.logs())
		}
		for _, w := range want {
			if !strings.Contains(p.stderr(), w) {
				t.Fatalf("stderr does not name %q\n%s", w, p.logs())
			}
		}
		if c := b.committed(t, "connect-"+name, topic); len(c) != 0 {
			t.Fatalf("group connect-%s has committed offsets %v: something was consumed", name, c)
		}
		lines := strings.Split(strings.TrimSpace(p.stderr()), "\n")
		t.Logf("exit %d after %v: %s", code, took.Round(time.Millisecond), lines[len(lines)-1])
	}

	t.Run("UnreachableBroker", func(t *testing.T) {
		addr := closedPort(t)
		failFast(t, "e2e-fault-broker", b.sinkConf("e2e-fault-broker", topic, bucket).with("bootstrap.servers", addr), 30*time.Second, addr)
	})
	t.Run("SilentBroker", func(t *testing.T) {
		// Accepts connections and never answers: only a timeout can end it.
		l, err := net.Listen("tcp", "127.0.0.1:0")
		if err != nil {
			t.Fatal(err)
		}
		defer l.Close()
		go func() {
			var held []net.Conn
			defer func() {
				for _, c := range held {
					c.Close()
				}
			}()
			for {
				c, err := l.Accept()
				if err != nil {
					return
				}
				held = append(held, c)
			}
		}()
		addr := l.Addr().String()
		failFast(t, "e2e-fault-silent", b.sinkConf("e2e-fault-silent", topic, bucket).with("bootstrap.servers", addr), 30*time.Second, addr)
	})
	t.Run("MissingBucket", func(t *testing.T) {
		missing := "kafkas3-no-such-bucket-" + fmt.Sprint(time.Now().UnixNano())
		failFast(t, "e2e-fault-bucket", b.sinkConf("e2e-fault-bucket", topic, missing), 30*time.Second, missing, "does not exist")
	})
	t.Run("WrongSecret", func(t *testing.T) {
		failFast(t, "e2e-fault-secret", b.sinkConf("e2e-fault-secret", topic, bucket).with("aws.secret.access.key", "wrong-secret"),
			30*time.Second, bucket, "access denied")
	})
	t.Run("UnknownAccessKey", func(t *testing.T) {
		failFast(t, "e2e-fault-key", b.sinkConf("e2e-fault-key", topic, bucket).with("aws.access.key.id", "nobody"),
			30*time.Second, bucket, "access denied")
	})
	if len(b.list(t, bucket)) != 0 {
		t.Fatalf("a failed run wrote to %s", bucket)
	}
	t.Run("S3DownFor20s", func(t *testing.T) { testS3Outage(t, b) })
}

// testS3Outage stops versitygw for 20 s while a continuous sink archives
// records that keep arriving, with objects of ~6.1 MB (two-part multipart
// uploads) and a final partial one of ~4 MB (a single PutObject). The sink must keep running and recover by itself; finished with
// --once, the archive equals a clean run's.
func testS3Outage(t *testing.T, b *bed) {
	const topic, parts, perPart, flush, chunk = "e2e-s3down", 2, 22_000, 6000, 100
	b.k.CreateTopic(t, topic, parts)
	bucket, bucketClean := b.s.CreateBucket(t), b.s.CreateBucket(t)
	base := b.sinkConf("", topic, "").with("flush.size", fmt.Sprint(flush), "s3.part.size", "5242880")
	const name = "e2e-s3down"
	group := "connect-" + name
	cfg := base.with("name", name, "s3.bucket.name", bucket).write(t)

	p := startSink(t, "continuous sink", cfg)
	var wg sync.WaitGroup
	wg.Add(1)
	prodStart := time.Now()
	go func() {
		defer wg.Done()
		for from := 0; from < perPart; from += chunk {
			if err := b.produceErr(topic, parts, from, chunk, bigValue); err != nil {
				t.Error(err)
				return
			}
			time.Sleep(150 * time.Millisecond)
		}
	}()

	// Stop S3 once the sink has completed an object.
	if !waitFor(60*time.Second, 100*time.Millisecond, func() bool { return b.progress(t, group, topic) > 0 }) {
		t.Fatalf("no commit within 60 s\n%s", p.logs())
	}
	if err := b.s.Stop(); err != nil {
		t.Fatal(err)
	}
	stopped := time.Now()
	// An object completed just before the stop is committed within 0.5 s.
	time.Sleep(time.Second)
	before := b.progress(t, group, topic)
	t.Logf("versitygw stopped %v after the producer started; committed %d records", stopped.Sub(prodStart).Round(time.Millisecond), before)
	time.Sleep(19 * time.Second)
	if p.exited() {
		t.Fatalf("the sink exited while S3 was down (code %d)\n%s", p.cmd.ProcessState.ExitCode(), p.logs())
	}
	duringOutage := b.progress(t, group, topic)
	if err := b.s.Start(); err != nil {
		t.Fatal(err)
	}
	restarted := time.Now()
	t.Logf("versitygw started again after %v; committed during the outage: %d records", restarted.Sub(stopped).Round(time.Millisecond), duringOutage-before)
	if duringOutage != before {
		t.Fatalf("offsets advanced from %d to %d while S3 was down", before, duringOutage)
	}
	if !waitFor(90*time.Second, 100*time.Millisecond, func() bool { return p.exited() || b.progress(t, group, topic) > duringOutage }) || p.exited() {
		t.Fatalf("the sink did not recover within 90 s of S3 coming back (exited %v)\n%s", p.exited(), p.logs())
	}
	recovery := time.Since(restarted)
	t.Logf("first commit after S3 came back: %v later", recovery.Round(time.Millisecond))
	wg.Wait()
	t.Logf("producer finished %v after start", time.Since(prodStart).Round(time.Millisecond))
	if t.Failed() {
		t.FailNow()
	}

	// Continuous mode completes the files that reach flush.size: wait for
	// their commits, then stop it and let --once complete the rest.
	ends := b.endOffsets(t, topic)
	want := map[int32]int64{}
	for pt, e := range ends {
		want[pt] = e / flush * flush
	}
	if !waitFor(90*time.Second, 200*time.Millisecond, func() bool {
		c, err := b.committedErr(group, topic)
		return err == nil && fmt.Sprint(c) == fmt.Sprint(want)
	}) {
		t.Fatalf("committed %v, want %v\n%s", b.committed(t, group, topic), want, p.logs())
	}
	caughtUp := time.Since(restarted)
	p.signal(syscall.SIGTERM)
	if code := p.wait(30 * time.Second); code != 0 {
		t.Fatalf("exit code %d after SIGTERM\n%s", code, p.logs())
	}
	warns := logLines(p.stderr(), "dependency down", "dependency=store")
	sum, _ := parseSummary(p.stdout())
	t.Logf("caught up %v after S3 came back; stopped by SIGTERM: %s; %d store outages logged", caughtUp.Round(time.Millisecond), sum.line, warns)
	if warns == 0 {
		t.Fatalf("the sink logged no store failure: the outage was not noticed\n%s", p.logs())
	}
	final, _ := runOnce(t, "final --once", cfg)
	clean, _ := runOnce(t, "clean --once", base.with("name", name+"-clean", "s3.bucket.name", bucketClean).write(t))
	got, wantObjs := b.snapshot(t, bucket), b.snapshot(t, bucketClean)
	n := checkJSONValues(t, got, topic, perPartition(parts, 0), ends, flush, bigValue)
	if n != parts*perPart || clean.records != parts*perPart {
		t.Fatalf("archive holds %d records, clean run %d, want %d", n, clean.records, parts*perPart)
	}
	sameObjects(t, "archive after the outage", got, wantObjs)
	var size int64
	multipart := 0
	for _, o := range got {
		size += o.size
		if strings.Contains(strings.Trim(o.etag, `"`), "-") {
			multipart++
		}
	}
	if multipart == 0 {
		t.Fatalf("no object was a multipart upload (etags %v)", got)
	}
	t.Logf("%d records in %d objects (%d bytes, %d multipart) identical to a clean run; final run %s; pending multipart uploads left: %d (clean bucket %d)",
		n, len(got), size, multipart, final.line, b.pendingUploads(t, bucket), b.pendingUploads(t, bucketClean))
}
