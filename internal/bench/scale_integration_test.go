//go:build integration

package bench

import (
	"bytes"
	"fmt"
	"net/http"
	"net/http/httputil"
	"net/url"
	"os"
	"os/exec"
	"sort"
	"strconv"
	"strings"
	"sync"
	"time"
)

// Issue 19's archive of real size: many small objects behind a store that
// answers in tens of milliseconds.
const (
	scaleObjectsEnv = "KAFKAS3_BENCH_SCALE_OBJECTS" // objects of the scale archive (default 6,000)
	scaleLatencyEnv = "KAFKAS3_BENCH_SCALE_LATENCY" // added to every request (default 20ms)
	scalePartitions = 12
	scaleFlushSize  = 10  // records per object
	scaleValueSize  = 200 // bytes per record
)

// scaleRows (KAFKAS3_BENCH_ONLY=scale) archives KAFKAS3_BENCH_SCALE_OBJECTS
// objects of scaleFlushSize records (12 partitions, JSON) straight into the
// S3 server, then runs `kafkas3 verify`, `kafkas3 source --dry-run` and a
// restore through a proxy that adds KAFKAS3_BENCH_SCALE_LATENCY to every
// request and counts them by kind, with their wall time and peak RSS.
func (e *env) scaleRows() {
	objects := envAtLeast(e.b, scaleObjectsEnv, 6000, scalePartitions, "an object count")
	latency := 20 * time.Millisecond
	if s := os.Getenv(scaleLatencyEnv); s != "" {
		var err error
		if latency, err = time.ParseDuration(s); err != nil {
			e.b.Fatalf("%s=%q: %v", scaleLatencyEnv, s, err)
		}
	}
	d := dataset{Kind: kindText, Topic: "scale", Partitions: scalePartitions, Records: objects * scaleFlushSize, ValueSize: scaleValueSize}
	e.facts.add("scale archive", fmt.Sprintf("%d objects of %d records of %d B in %d partitions (JSON), read through a proxy adding %v per request",
		objects, scaleFlushSize, scaleValueSize, scalePartitions, latency))
	e.produceRow(fmt.Sprintf("load: %d records of %d B", d.Records, d.ValueSize), d, "new")
	sink := e.sinkRowWith(fmt.Sprintf("sink json --once, flush.size=%d (the scale archive)", scaleFlushSize), d, fmtJSON, scaleFlushSize, 0, false,
		map[string]string{"kafkas3.log.interval.ms": "1000000"})
	proxy := e.latencyProxy(latency)
	through := map[string]string{"store.url": proxy.url, "flush.size": strconv.Itoa(scaleFlushSize)}
	cfg := e.config(fmt.Sprintf("scale-%d", len(e.rows)), d, sink.bucket, fmtJSON, through)

	e.scaleRow(proxy, fmt.Sprintf("verify (%d objects, +%v per request)", objects, latency), d, exec.Command(e.bin, "verify", "--config", cfg), "clean")
	e.scaleRow(proxy, fmt.Sprintf("source --dry-run (%d objects, +%v per request)", objects, latency), d,
		exec.Command(e.bin, "source", "--config", cfg, "--topic-rename", "scaledry_$0", "--dry-run"), "dry run: nothing produced")
	r := e.scaleRow(proxy, fmt.Sprintf("source restore (%d objects, +%v per request)", objects, latency), d,
		exec.Command(e.bin, "source", "--config", cfg, "--topic-rename", "scalecopy_$0", "--create-topics"), "records=")
	e.checkEndOffsets(r.name, "scalecopy_"+d.Topic, d.Records)
}

// scaleRow runs cmd through the proxy and notes its requests by kind;
// want must appear on its stdout.
func (e *env) scaleRow(p *latencyProxy, name string, d dataset, cmd *exec.Cmd, want string) *row {
	p.reset()
	pr := e.run(name, cmd)
	if !bytes.Contains(pr.stdout, []byte(want)) {
		e.b.Fatalf("%s: stdout lacks %q: %s", name, want, pr.stdout)
	}
	return e.add(&row{name: name, kind: kindProof, records: d.Records, bytes: d.Bytes(), wall: pr.wall, rssKiB: pr.rssKiB, cpu: pr.cpu,
		note: "requests: " + p.summary()})
}

// latencyProxy is a reverse proxy to the S3 server that waits a fixed
// latency before passing each request on, and counts the requests by kind
// (GET of an object, LIST, HEAD, PUT, POST, other) with the most in flight
// at once.
type latencyProxy struct {
	url      string
	mu       sync.Mutex
	counts   map[string]int
	inflight int
	peak     int
}

func (e *env) latencyProxy(latency time.Duration) *latencyProxy {
	target, err := url.Parse(e.s3.Endpoint)
	if err != nil {
		e.b.Fatal(err)
	}
	p := &latencyProxy{counts: map[string]int{}}
	rp := httputil.NewSingleHostReverseProxy(target)
	h := http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		p.begin(requestKind(r))
		defer p.end()
		time.Sleep(latency)
		rp.ServeHTTP(w, r)
	})
	p.url = e.serve(h)
	return p
}

// requestKind names an S3 request: GET (an object), LIST, HEAD, PUT, POST
// or other.
func requestKind(r *http.Request) string {
	switch r.Method {
	case http.MethodGet:
		q := r.URL.Query()
		if q.Has("list-type") || q.Has("prefix") || strings.Count(strings.Trim(r.URL.Path, "/"), "/") == 0 {
			return "LIST"
		}
		return "GET"
	case http.MethodHead, http.MethodPut, http.MethodPost:
		return r.Method
	}
	return "other"
}

func (p *latencyProxy) begin(kind string) {
	p.mu.Lock()
	defer p.mu.Unlock()
	p.counts[kind]++
	p.inflight++
	p.peak = max(p.peak, p.inflight)
}

func (p *latencyProxy) end() {
	p.mu.Lock()
	defer p.mu.Unlock()
	p.inflight--
}

func (p *latencyProxy) reset() {
	p.mu.Lock()
	defer p.mu.Unlock()
	clear(p.counts)
	p.peak = 0
}

// summary prints the counts by kind and the most requests in flight.
func (p *latencyProxy) summary() string {
	p.mu.Lock()
	defer p.mu.Unlock()
	kinds := make([]string, 0, len(p.counts))
	total := 0
	for k, n := range p.counts {
		kinds = append(kinds, fmt.Sprintf("%d %s", n, k))
		total += n
	}
	sort.Strings(kinds)
	return fmt.Sprintf("%d (%s), at most %d at once", total, strings.Join(kinds, ", "), p.peak)
}
