//go:build integration

package e2e

import (
	"fmt"
	"io"
	"log"
	"net"
	"net/http"
	"net/http/httputil"
	"net/url"
	"os/exec"
	"regexp"
	"strings"
	"sync"
	"testing"
	"time"
)

// getCounter is a reverse proxy to the S3 server that counts the GETs of
// index objects and of checkpoints (a listing, a GET with list-type, is
// not counted). The Host header passes through, so SigV4 stays valid.
type getCounter struct {
	url string
	mu  sync.Mutex
	n   map[string]int // "index", "checkpoint"
}

func newGetCounter(t *testing.T, endpoint string) *getCounter {
	t.Helper()
	target, err := url.Parse(endpoint)
	if err != nil {
		t.Fatal(err)
	}
	c := &getCounter{n: map[string]int{}}
	rp := httputil.NewSingleHostReverseProxy(target)
	rp.ErrorLog = log.New(io.Discard, "", 0) // a client that hangs up is no failure
	h := http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.Method == http.MethodGet && !r.URL.Query().Has("list-type") {
			c.mu.Lock()
			switch {
			case strings.Contains(r.URL.Path, "/_kafkas3/index/"):
				c.n["index"]++
			case strings.Contains(r.URL.Path, "/_kafkas3/checkpoints/"):
				c.n["checkpoint"]++
			}
			c.mu.Unlock()
		}
		rp.ServeHTTP(w, r)
	})
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	srv := &http.Server{Handler: h}
	go func() { _ = srv.Serve(ln) }()
	t.Cleanup(func() { _ = srv.Close() })
	c.url = "http://" + ln.Addr().String()
	return c
}

// take returns the counts since the last take and resets them.
func (c *getCounter) take() (index, checkpoints int) {
	c.mu.Lock()
	defer c.mu.Unlock()
	index, checkpoints = c.n["index"], c.n["checkpoint"]
	clear(c.n)
	return index, checkpoints
}

// TestIntegrationIndexCheckpoints: two sinks --once of one topic into two
// buckets on versitygw, one with kafkas3.index.checkpoint.interval=5, one
// with 0 (no checkpoints). verify and source --dry-run of the first read
// its checkpoints (counted through a proxy: one checkpoint GET per
// partition, no index object GET), those of the second every index
// object and its start checkpoints (one per partition, no entry: a sink
// writes one before its first index object, checkpoints off too), with
// the same verify result; `kafkas3 index rebuild` of the
// second writes its checkpoints, after which it reads like the first. A
// restore from the first archive is compared record by record with kcat.
func TestIntegrationIndexCheckpoints(t *testing.T) {
	b := newBed(t)
	const parts, perPart, flush = 3, 200, 10
	topic := srcUnique("e2e-ckpt")
	b.k.CreateTopic(t, topic, parts)
	b.produce(t, topic, parts, 0, perPart, value)
	proxy := newGetCounter(t, b.s.Endpoint)
	indexObjects := parts * perPart / flush

	archive := func(interval string) string {
		bucket := b.s.CreateBucket(t)
		cfg := b.sinkConf("e2e-ckpt-"+interval, topic, bucket).with("flush.size", fmt.Sprint(flush),
			"kafkas3.index.checkpoint.interval", interval, "store.url", proxy.url).write(t)
		if sum, _ := runOnce(t, "sink interval "+interval, cfg); sum.indexObjects != int64(indexObjects) {
			t.Fatalf("sink interval %s: %q, want index_objects=%d", interval, sum.line, indexObjects)
		}
		return cfg
	}
	withCkpt, without := archive("5"), archive("0")
	proxy.take()

	verifyOut := func(label, cfg string, wantIndex, wantCkpt int) string {
		t.Helper()
		p := startKafkas3(t, label, "verify", cfg)
		if code := p.wait(time.Minute); code != 0 {
			t.Fatalf("%s: exit %d\n%s", label, code, p.logs())
		}
		if ix, ck := proxy.take(); ix != wantIndex || ck != wantCkpt {
			t.Fatalf("%s: %d index object GETs and %d checkpoint GETs, want %d and %d", label, ix, ck, wantIndex, wantCkpt)
		}
		return p.stdout()
	}
	clean := fmt.Sprintf("kafkas3 verify: clean; partitions=%d index_objects=%d unindexed=0", parts, indexObjects)
	got := verifyOut("verify with checkpoints", withCkpt, 0, parts)
	want := verifyOut("verify without checkpoints", without, indexObjects, parts)
	if !strings.Contains(got, clean) || got != want {
		t.Fatalf("verify with checkpoints:\n%s\nwithout:\n%s\nwant %q in both", got, want, clean)
	}

	dry := func(label, cfg string, wantIndex, wantCkpt int) string {
		t.Helper()
		p, code := srcRun(t, label, cfg, time.Minute, "--topic-rename", "copy_of_$0", "--dry-run", "-p", "bootstrap.servers=127.0.0.1:1")
		if code != 0 {
			t.Fatalf("%s: exit %d\n%s", label, code, p.logs())
		}
		if ix, ck := proxy.take(); ix != wantIndex || ck != wantCkpt {
			t.Fatalf("%s: %d index object GETs and %d checkpoint GETs, want %d and %d", label, ix, ck, wantIndex, wantCkpt)
		}
		// The archives differ only in when their topic was described.
		return regexp.MustCompile(`archived at \S+`).ReplaceAllString(p.stdout(), "")
	}
	dryWith := dry("source --dry-run with checkpoints", withCkpt, 0, parts)
	if dryWithout := dry("source --dry-run without", without, indexObjects, parts); dryWith != dryWithout {
		t.Fatalf("dry run with checkpoints:\n%s\nwithout:\n%s", dryWith, dryWithout)
	}

	out, err := exec.Command(binPath, "index", "rebuild", "--config", without).CombinedOutput()
	if err != nil || !strings.Contains(string(out), fmt.Sprintf("partitions=%d checkpoints=%d index_objects_read=%d", parts, parts, indexObjects)) {
		t.Fatalf("index rebuild: %v\n%s", err, out)
	}
	proxy.take()
	if rebuilt := verifyOut("verify after rebuild", without, 0, parts); rebuilt != got {
		t.Fatalf("verify after rebuild:\n%s\nwith the sink's checkpoints:\n%s", rebuilt, got)
	}

	sum, _ := srcRunOK(t, "source with checkpoints", withCkpt, "--topic-rename", "copy_of_$0", "--create-topics")
	if ix, ck := proxy.take(); sum.records != parts*perPart || ix != 0 || ck < parts {
		t.Fatalf("restore %q: %d index object GETs, %d checkpoint GETs", sum.line, ix, ck)
	}
	for p := range int32(parts) {
		srcSameValues(t, fmt.Sprintf("kcat copy_of_%s/%d", topic, p), b.srcKcat(t, "copy_of_"+topic, p), srcValues(p, 0, perPart))
	}
}
