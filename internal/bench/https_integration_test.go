//go:build integration

package bench

import (
	"fmt"
	"log/slog"
	"os"

	"github.com/kafkas3/kafkas3/internal/testbed"
)

// Issue 20's bounds on `sink bytes` over HTTPS, against the limit baseline
// over the same HTTPS: at least httpsMinRate of its MB/s, at most
// httpsMaxCPU of its CPU seconds per GB.
const (
	httpsMinRate = 0.85
	httpsMaxCPU  = 1.2
)

// tlsStore is the second versitygw of a run, serving HTTPS with a
// self-signed certificate (testbed.Options.S3TLS), and its process.
type tlsStore struct {
	srv *testbed.S3Server
	pid int
}

// caEnv is what a child of the current S3 server needs in its
// environment: over HTTPS, AWS_CA_BUNDLE naming the server's certificate,
// which is how a kafkas3 user trusts a private CA; nil over plain HTTP.
func (e *env) caEnv() []string {
	if e.s3 == nil || e.s3.CAPath == "" {
		return nil
	}
	return []string{"AWS_CA_BUNDLE=" + e.s3.CAPath}
}

// tlsServer returns the HTTPS versitygw, started on first use on the same
// machine, disk and posix backend as the main one (and, like it, without
// keep-alive: versitygw's default, so every request opens a connection
// and, here, a TLS session).
func (e *env) tlsServer() tlsStore {
	if e.tls.srv != nil {
		return e.tls
	}
	log := slog.New(slog.NewTextHandler(os.Stderr, nil))
	srv, err := testbed.StartS3(e.ctx, testbed.Options{S3TLS: true, Logger: log})
	if err != nil {
		e.b.Fatal(err)
	}
	e.b.Cleanup(func() { _ = srv.Close() })
	e.tls = tlsStore{srv: srv, pid: findPID(srv.DataDir)}
	e.facts.add("s3 over HTTPS", fmt.Sprintf("a second versitygw %s at %s with a self-signed ECDSA P-256 certificate "+
		"(TLS 1.3, Go's crypto/tls on both sides); kafkas3 trusts it through AWS_CA_BUNDLE, the baseline through the same root CA",
		testbed.VersitygwVersion, srv.Endpoint))
	return e.tls
}

// onTLS runs fn with the HTTPS server as the run's S3 server (the rows'
// buckets, configs, listings and versitygw CPU column), then puts the main
// one back.
func (e *env) onTLS(fn func()) {
	t := e.tlsServer()
	main, mainPID := e.s3, e.s3PID
	e.s3, e.s3PID = t.srv, t.pid
	defer func() { e.s3, e.s3PID = main, mainPID }()
	fn()
}

// httpsLimit runs the limit baseline of the main sink rows over HTTPS.
func (e *env) httpsLimit(d dataset, which string) *row {
	var r *row
	e.onTLS(func() {
		r = e.limitRow("limit: consume + aws-sdk-go-v2 upload over HTTPS, no formatting ("+which+")", d, mainFlushSize, 0, false)
	})
	return r
}

// httpsSink runs `sink bytes --once` over HTTPS.
func (e *env) httpsSink(d dataset) *row {
	var r *row
	e.onTLS(func() {
		r = e.sinkRow("sink bytes --once over HTTPS", d, fmtBytes, mainFlushSize, 0, false)
	})
	return r
}

// httpsRows runs the HTTPS rows of the full run: the baseline over HTTPS,
// the sink over HTTPS, the baseline again; the sink row is compared with
// the mean of the two (checkHTTPS).
func (e *env) httpsRows(d dataset) {
	l1 := e.httpsLimit(d, "1 of 2")
	sink := e.httpsSink(d)
	l2 := e.httpsLimit(d, "2 of 2")
	sink.limit = meanBaseline("consume + upload over HTTPS (mean)", l1, l2)
	e.checkHTTPS(sink)
}

// httpsOnly is KAFKAS3_BENCH_ONLY=https after the load: the raw consume,
// then the limit baselines over HTTP and over HTTPS, `sink bytes` over
// HTTP and over HTTPS, and the baselines again in the reverse order, and
// the raw consume again; each sink row is compared with its own
// protocol's baselines, and the HTTPS one checked (checkHTTPS).
func (e *env) httpsOnly(d dataset) {
	raw1 := e.consumeRow("raw consume: franz-go direct consumer (1 of 2)", d)
	http1 := e.limitRow("limit: consume + aws-sdk-go-v2 upload, no formatting (1 of 2)", d, mainFlushSize, 0, false)
	tls1 := e.httpsLimit(d, "1 of 2")
	httpSink := e.sinkRow("sink bytes --once", d, fmtBytes, mainFlushSize, 0, false)
	tlsSink := e.httpsSink(d)
	tls2 := e.httpsLimit(d, "2 of 2")
	http2 := e.limitRow("limit: consume + aws-sdk-go-v2 upload, no formatting (2 of 2)", d, mainFlushSize, 0, false)
	raw2 := e.consumeRow("raw consume: franz-go direct consumer (2 of 2)", d)
	rawRate := (raw1.rate() + raw2.rate()) / 2
	httpSink.setRatio(rawRate, "raw consume (mean)")
	tlsSink.setRatio(rawRate, "raw consume (mean)")
	httpLimit := meanBaseline("consume + upload (mean)", http1, http2)
	tlsLimit := meanBaseline("consume + upload over HTTPS (mean)", tls1, tls2)
	httpSink.limit, tlsSink.limit = httpLimit, tlsLimit
	e.checkHTTPS(tlsSink)
	e.facts.add("HTTPS against HTTP", fmt.Sprintf("baseline %.2f × the MB/s and %.2f × the CPU s/GB of HTTP's; sink bytes %.2f × and %.2f ×",
		tlsLimit.rate/httpLimit.rate, tlsLimit.cpuPerGB/httpLimit.cpuPerGB,
		tlsSink.rate()/httpSink.rate(), tlsSink.cpuPerGB()/httpSink.cpuPerGB()))
}

// checkHTTPS fails the benchmark when the sink over HTTPS moved less than
// httpsMinRate of its HTTPS baseline's MB/s or used more than httpsMaxCPU
// of its CPU seconds per GB (issue 20, item 2), and notes the bounds.
func (e *env) checkHTTPS(r *row) {
	rate, cpu := r.rate()/r.limit.rate, r.cpuPerGB()/r.limit.cpuPerGB
	if rate < httpsMinRate || cpu > httpsMaxCPU {
		e.failures = append(e.failures, fmt.Sprintf("%s: %.2f × the HTTPS baseline's MB/s (bound %.2f) and %.2f × its CPU s/GB (bound %.2f)",
			r.name, rate, httpsMinRate, cpu, httpsMaxCPU))
		r.note += fmt.Sprintf("; **outside issue 20's %.2f × MB/s, %.1f × CPU s/GB**", httpsMinRate, httpsMaxCPU)
		return
	}
	r.note += fmt.Sprintf("; within issue 20's %.2f × MB/s, %.1f × CPU s/GB", httpsMinRate, httpsMaxCPU)
}
