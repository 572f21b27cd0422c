//go:build integration

package e2e

import (
	"bytes"
	"context"
	"fmt"
	"net/http"
	"net/http/httptest"
	"net/http/httputil"
	"net/url"
	"strings"
	"testing"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/s3"
)

// TestIntegrationPruneCrash (issue 22, items 1 and 5, on the test bed): an
// archive of 4 partitions, 200 records each in objects of 2 (the first
// 120 of each stamped 40 days ago, the others an hour ago), on versitygw.
// `kafkas3 prune --keep-days 30` is SIGKILLed at random moments, run
// after run, until one finishes. After each kill `kafkas3 verify` reports
// the archive clean, and a restore of it gives each partition exactly its
// records from the watermark on (offset 120 once the watermark is
// written, else all of them), compared record by record (key, value,
// timestamp). The prune that finishes leaves 40 objects a partition. The
// prunes reach versitygw through a proxy that adds 20 ms to each request,
// as a real store does, so the kills land inside them; every other kill
// waits for a watermark to appear.
func TestIntegrationPruneCrash(t *testing.T) {
	b := newBed(t)
	_, rng := crashSeed(t)
	const parts, n, old = 4, 200, 120
	topic := srcUnique("prune")
	b.k.CreateTopic(t, topic, parts)
	now := time.Now()
	stamp := func(i int) time.Time {
		if i < old {
			return now.Add(-40*24*time.Hour + time.Duration(i)*time.Millisecond)
		}
		return now.Add(-time.Hour + time.Duration(i)*time.Millisecond)
	}
	produceStamped(t, b, topic, parts, n, stamp)
	bucket := b.s.CreateBucket(t)
	cfg := b.sinkConf(topic, topic, bucket).with("flush.size", "2", "store.envelope", "true").write(t)
	slow := b.sinkConf(topic, topic, bucket).with("flush.size", "2", "store.envelope", "true", "store.url", slowEndpoint(t, b.s.Endpoint, 20*time.Millisecond)).write(t)
	runOnce(t, "sink --once", cfg)

	kills, midway := 0, 0
	for run := 1; ; run++ {
		p := startKafkas3(t, fmt.Sprintf("prune %d", run), "prune", slow, "--keep-days", "30")
		if run%2 == 0 {
			// Every other kill waits for a watermark: then it lands while
			// the objects below it go (a few requests of 20 ms).
			b.waitWatermark(t, bucket, topic, p)
			time.Sleep(time.Duration(rng.IntN(40)) * time.Millisecond)
		} else {
			time.Sleep(time.Duration(rng.IntN(150)) * time.Millisecond)
		}
		if p.exited() {
			if code := p.wait(time.Second); code != 0 {
				t.Fatalf("prune %d: exit %d\n%s", run, code, p.logs())
			}
			break
		}
		if err := p.cmd.Process.Kill(); err != nil {
			t.Fatal(err)
		}
		p.wait(10 * time.Second)
		kills++
		if b.checkPrunedArchive(t, cfg, fmt.Sprintf("after kill %d", kills), topic, parts, n, old, stamp) {
			midway++
		}
		if run == 8 {
			p := startKafkas3(t, "prune to the end", "prune", cfg, "--keep-days", "30")
			if code := p.wait(3 * time.Minute); code != 0 {
				t.Fatalf("prune to the end: exit %d\n%s", code, p.logs())
			}
			break
		}
	}
	t.Logf("%d prunes SIGKILLed before one finished, %d of them after a watermark was written", kills, midway)
	if midway == 0 {
		t.Fatalf("no kill came after the prune had written a watermark: the test proved nothing")
	}
	b.checkPrunedArchive(t, cfg, "pruned", topic, parts, n, old, stamp)
	keys := b.list(t, bucket)
	for p := range parts {
		dir := fmt.Sprintf("topics/%s/partition=%d/", topic, p)
		count := 0
		for _, k := range keys {
			if strings.HasPrefix(k.key, dir) {
				count++
			}
		}
		if count != (n-old)/2 {
			t.Fatalf("%s holds %d objects after the prune, want %d", dir, count, (n-old)/2)
		}
	}
}

// waitWatermark waits until the bucket holds a prune watermark of topic,
// or p has exited.
func (b *bed) waitWatermark(t *testing.T, bucket, topic string, p *proc) {
	t.Helper()
	prefix := "_kafkas3/checkpoints/" + topic + "/"
	found := waitFor(30*time.Second, 2*time.Millisecond, func() bool {
		if p.exited() {
			return true
		}
		out, err := b.s.Client().ListObjectsV2(context.Background(), &s3.ListObjectsV2Input{Bucket: aws.String(bucket), Prefix: aws.String(prefix)})
		if err != nil {
			t.Fatal(err)
		}
		for _, o := range out.Contents {
			if strings.Contains(aws.ToString(o.Key), "/pruned-") {
				return true
			}
		}
		return false
	})
	if !found {
		t.Fatalf("no prune watermark under %s within 30s\n%s", prefix, p.logs())
	}
}

// slowEndpoint is a proxy to endpoint that holds each request latency
// before passing it on.
func slowEndpoint(t *testing.T, endpoint string, latency time.Duration) string {
	t.Helper()
	target, err := url.Parse(endpoint)
	if err != nil {
		t.Fatal(err)
	}
	rp := httputil.NewSingleHostReverseProxy(target)
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		time.Sleep(latency)
		rp.ServeHTTP(w, r)
	}))
	t.Cleanup(srv.Close)
	return srv.URL
}

// checkPrunedArchive runs verify (clean) and a restore of the archive into
// a new topic, each partition exactly its records from its watermark on
// (old once verify names the watermark, else 0). It tells whether some
// partition had its watermark.
func (b *bed) checkPrunedArchive(t *testing.T, cfg, what, topic string, parts, n, old int, stamp func(int) time.Time) bool {
	t.Helper()
	v := startKafkas3(t, what+": verify", "verify", cfg)
	if code := v.wait(2 * time.Minute); code != 0 || !strings.Contains(v.stdout(), "kafkas3 verify: clean") {
		t.Fatalf("%s: verify exit %d\n%s", what, code, v.logs())
	}
	target := srcUnique("pruned")
	srcRunOK(t, what+": source", cfg, "--topic-rename", target, "--create-topics")
	watermarked := false
	for p := range int32(parts) {
		from := 0
		if strings.Contains(v.stdout(), fmt.Sprintf("%s/%d below %d", topic, p, old)) {
			from, watermarked = old, true
		}
		got := b.readKeyed(t, target, p)
		if len(got) != n-from {
			t.Fatalf("%s: %s/%d holds %d records, want %d (from offset %d)", what, target, p, len(got), n-from, from)
		}
		for j, r := range got {
			i := from + j
			if !bytes.Equal(r.Key, key(p, i)) || !bytes.Equal(r.Value, value(p, i)) || !r.Timestamp.Equal(stamp(i).Truncate(time.Millisecond)) {
				t.Fatalf("%s: %s/%d record %d: key %q ts %v, want %q %v", what, target, p, j, r.Key, r.Timestamp, key(p, i), stamp(i))
			}
		}
	}
	return watermarked
}
