//go:build integration

package bench

import (
	"fmt"
	"net"
	"net/http"
	"net/http/httputil"
	"net/url"
	"strconv"
	"sync"
)

// indexRows measures the archive index's cost: `kafkas3 sink --once` of
// d in bytes with kafkas3.index.enabled true and false, side by side,
// with flush.size 50,000 (the main runs' ~50 MiB objects) and 1,000 (~1
// MiB objects, where one index PUT per rotation weighs most), each pair
// twice in alternation. Every run goes through a counting reverse proxy
// in front of the S3 server, which counts the requests by method; the
// note of each index-on row gives its extra requests and its throughput
// against the mean of the index-off runs of the same flush.size. It returns
// the rows of flush.size 50,000, whose objects are the main limit
// baseline's; the rows of flush.size 1,000 get a limit baseline of their
// own (1,000-record objects, run before and after them, straight to the S3
// server, not through the proxy).
func (e *env) indexRows(d dataset) []*row {
	var main []*row
	proxy, counts, reset := e.countingProxy()
	for _, flush := range []int{mainFlushSize, 1000} {
		var on, off, limits []*row
		var onReq, offReq []map[string]int
		limitName := fmt.Sprintf("limit: consume + aws-sdk-go-v2 upload, no formatting, flush.size=%d", flush)
		if flush != mainFlushSize {
			limits = append(limits, e.limitRow(limitName+" (1 of 2)", d, flush, 0, false))
		}
		for round := 1; round <= 2; round++ {
			for _, enabled := range []bool{true, false} {
				reset()
				name := fmt.Sprintf("sink bytes --once, flush.size=%d, index %s (%d of 2)", flush, map[bool]string{true: "on", false: "off"}[enabled], round)
				r := e.sinkRowWith(name, d, fmtBytes, flush, 0, false, map[string]string{
					"kafkas3.index.enabled": strconv.FormatBool(enabled),
					"store.url":             proxy,
				})
				c := counts()
				r.note += fmt.Sprintf("; requests: %d PUT, %d POST, %d other", c["PUT"], c["POST"], c["other"])
				if enabled {
					on, onReq = append(on, r), append(onReq, c)
				} else {
					off, offReq = append(off, r), append(offReq, c)
				}
			}
		}
		if flush == mainFlushSize {
			main = append(append(main, on...), off...)
		} else {
			limits = append(limits, e.limitRow(limitName+" (2 of 2)", d, flush, 0, false))
			limit := meanBaseline(fmt.Sprintf("consume + upload, flush.size=%d (mean)", flush), limits...)
			for _, r := range append(append([]*row{}, on...), off...) {
				r.limit = limit
			}
		}
		offRate := (off[0].rate() + off[1].rate()) / 2
		for i, r := range on {
			extraPUT := onReq[i]["PUT"] - offReq[i]["PUT"]
			extraAll := total(onReq[i]) - total(offReq[i])
			r.note += fmt.Sprintf("; index: +%d PUT (+%.1f%%), +%d requests in all; throughput %.2f× index off (mean)",
				extraPUT, 100*float64(extraPUT)/float64(max(1, offReq[i]["PUT"])), extraAll, r.rate()/offRate)
		}
		e.facts.add(fmt.Sprintf("archive index cost, flush.size=%d", flush), fmt.Sprintf(
			"+%d PUT requests per run (%d with the index, %d without); throughput with/without: %.2f (mean of 2 runs each, alternating)",
			onReq[0]["PUT"]-offReq[0]["PUT"], onReq[0]["PUT"], offReq[0]["PUT"], ((on[0].rate()+on[1].rate())/2)/offRate))
	}
	return main
}

func total(m map[string]int) int {
	n := 0
	for _, v := range m {
		n += v
	}
	return n
}

// countingProxy starts a reverse proxy to the S3 server that counts
// requests by method (PUT, POST, other). It returns its URL, a snapshot of
// the counts and a reset. The Host header is passed through, so SigV4
// signatures made for the proxy's address stay valid.
func (e *env) countingProxy() (string, func() map[string]int, func()) {
	target, err := url.Parse(e.s3.Endpoint)
	if err != nil {
		e.b.Fatal(err)
	}
	var mu sync.Mutex
	counts := map[string]int{}
	rp := httputil.NewSingleHostReverseProxy(target)
	h := http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		m := r.Method
		if m != http.MethodPut && m != http.MethodPost {
			m = "other"
		}
		mu.Lock()
		counts[m]++
		mu.Unlock()
		rp.ServeHTTP(w, r)
	})
	proxyURL := e.serve(h)
	snapshot := func() map[string]int {
		mu.Lock()
		defer mu.Unlock()
		out := map[string]int{}
		for k, v := range counts {
			out[k] = v
		}
		return out
	}
	reset := func() {
		mu.Lock()
		clear(counts)
		mu.Unlock()
	}
	return proxyURL, snapshot, reset
}

// serve serves h on a loopback port until the benchmark ends and returns
// its URL.
func (e *env) serve(h http.Handler) string {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		e.b.Fatal(err)
	}
	srv := &http.Server{Handler: h}
	go func() { _ = srv.Serve(ln) }()
	e.b.Cleanup(func() { _ = srv.Close() })
	return "http://" + ln.Addr().String()
}
