package cmd

import (
	"bufio"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"os"
	"path"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/kafkas3/kafkas3/archive"
	"github.com/kafkas3/kafkas3/format"
	"github.com/kafkas3/kafkas3/health"
	"github.com/kafkas3/kafkas3/metrics"
	"github.com/prometheus/client_golang/prometheus"
)

// scrape reads url's Prometheus text exposition into series -> value
// (series is the name with its labels as exposed: name{a="b"}).
func scrape(t *testing.T, url string) map[string]float64 {
	t.Helper()
	resp, err := http.Get(url)
	if err != nil {
		t.Fatalf("scrape %s: %v", url, err)
	}
	defer resp.Body.Close()
	out := map[string]float64{}
	sc := bufio.NewScanner(resp.Body)
	sc.Buffer(make([]byte, 1<<20), 1<<20)
	for sc.Scan() {
		line := sc.Text()
		if line == "" || strings.HasPrefix(line, "#") {
			continue
		}
		i := strings.LastIndexByte(line, ' ')
		v, err := strconv.ParseFloat(line[i+1:], 64)
		if err != nil {
			t.Fatalf("scrape %s: %q: %v", url, line, err)
		}
		out[line[:i]] = v
	}
	return out
}

// status GETs url and returns the status code and body.
func status(t *testing.T, url string) (int, string) {
	t.Helper()
	resp, err := http.Get(url)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	b, _ := io.ReadAll(resp.Body)
	return resp.StatusCode, string(b)
}

// jsonLines parses every line of s as one JSON object, failing on a line
// that is not one.
func jsonLines(t *testing.T, s string) []map[string]any {
	t.Helper()
	var out []map[string]any
	for _, l := range strings.Split(strings.TrimSpace(s), "\n") {
		m := map[string]any{}
		if err := json.Unmarshal([]byte(l), &m); err != nil {
			t.Fatalf("stderr line is not JSON: %q\nstderr:\n%s", l, s)
		}
		out = append(out, m)
	}
	return out
}

// metricsBase waits for the "serving metrics" JSON log line in errb and
// returns the server's base URL.
func metricsBase(t *testing.T, errb *syncBuffer) string {
	t.Helper()
	re := regexp.MustCompile(`"url":"(http://[^"]+)/metrics"`)
	for deadline := time.Now().Add(20 * time.Second); time.Now().Before(deadline); time.Sleep(10 * time.Millisecond) {
		if m := re.FindStringSubmatch(errb.String()); m != nil {
			return m[1]
		}
	}
	t.Fatalf("no serving metrics line:\n%s", errb.String())
	return ""
}

// waitSeries polls base/metrics until want(series) holds.
func waitSeries(t *testing.T, base string, what string, want func(map[string]float64) bool) map[string]float64 {
	t.Helper()
	for deadline := time.Now().Add(30 * time.Second); time.Now().Before(deadline); time.Sleep(20 * time.Millisecond) {
		if m := scrape(t, base+"/metrics"); want(m) {
			return m
		}
	}
	t.Fatalf("metrics never showed %s: %v", what, scrape(t, base+"/metrics"))
	return nil
}

// runInBackground runs the CLI with args until stop, returning its result
// on done; its stderr is errb, read while it runs.
func runInBackground(ctx context.Context, errb *syncBuffer, args ...string) (stop func(), done <-chan cliResult) {
	runCtx, cancel := context.WithCancel(ctx)
	ch := make(chan cliResult, 1)
	go func() {
		var out syncBuffer
		code := Run(runCtx, args, IO{Out: &out, Err: errb})
		ch <- cliResult{code: code, out: out.String(), err: errb.String()}
	}()
	return cancel, ch
}

func waitDone(t *testing.T, done <-chan cliResult) cliResult {
	t.Helper()
	select {
	case r := <-done:
		return r
	case <-time.After(40 * time.Second):
		t.Fatal("the command did not stop within 40 s of the interrupt")
	}
	return cliResult{}
}

// summaryInt returns the value of field name=N in the summary line.
func summaryInt(t *testing.T, out, name string) float64 {
	t.Helper()
	m := regexp.MustCompile(`\b` + name + `=(\d+)`).FindStringSubmatch(out)
	if m == nil {
		t.Fatalf("no %s= in %q", name, out)
	}
	v, _ := strconv.ParseFloat(m[1], 64)
	return v
}

// TestSinkCmdMetricsDuringRun scrapes a running sink: the records, bytes
// and objects per topic are what the summary reports at the end, the lag
// per partition is 0 once all is fetched, /healthz and /readyz answer, the
// progress line comes every kafkas3.log.interval.ms, and with
// --log-format json every stderr line is JSON.
func TestSinkCmdMetricsDuringRun(t *testing.T) {
	ctx := cliContext(t)
	brokers := startKafka(t, 2, "orders")
	produceJSON(t, ctx, brokers, "orders", 2, 10) // 5 per partition
	dir := t.TempDir()
	cfg := writeFile(t, "sink.yaml", sinkYAML(brokers, dir, "orders", 2))
	var errb syncBuffer
	stop, done := runInBackground(ctx, &errb, "sink", "-c", cfg, "--metrics-addr", "127.0.0.1:0", "--log-format", "json",
		"-p", "kafkas3.log.interval.ms=1000")
	defer stop()
	base := metricsBase(t, &errb)

	// flush.size 2 over 5 records per partition: 2 objects each complete,
	// the fifth record stays in an open file while the sink runs.
	m := waitSeries(t, base, "8 records archived", func(m map[string]float64) bool {
		return m[`kafkas3_sink_records_total{topic="orders"}`] == 8
	})
	if got := m[`kafkas3_sink_objects_total{topic="orders"}`]; got != 4 {
		t.Errorf("objects = %v, want 4", got)
	}
	if got := m[`kafkas3_sink_fetched_records_total{topic="orders"}`]; got != 10 {
		t.Errorf("fetched = %v, want 10", got)
	}
	for _, p := range []string{"0", "1"} {
		if v, ok := m[`kafkas3_sink_consumer_lag_records{partition="`+p+`",topic="orders"}`]; !ok || v != 0 {
			t.Errorf("lag of partition %s = %v (exported: %v), want 0", p, v, ok)
		}
	}
	now := float64(time.Now().UnixMilli()) / 1000
	for _, p := range []string{"0", "1"} {
		// The fifth record waits in an open file; 4 are archived.
		for _, name := range []string{"kafkas3_sink_oldest_unarchived_timestamp_seconds", "kafkas3_sink_newest_archived_timestamp_seconds"} {
			if v, ok := m[name+`{partition="`+p+`",topic="orders"}`]; !ok || v > now || v < now-300 {
				t.Errorf("%s of partition %s = %v (exported: %v), want the last minutes", name, p, v, ok)
			}
		}
	}
	if m["kafkas3_sink_assigned_partitions"] != 2 || m["kafkas3_sink_open_files"] != 2 {
		t.Errorf("assigned partitions %v, open files %v; want 2 and 2 (one open file per partition)", m["kafkas3_sink_assigned_partitions"], m["kafkas3_sink_open_files"])
	}
	if m["kafkas3_sink_spool_bytes"] <= 0 {
		t.Errorf("spool bytes = %v with two open files holding a record each", m["kafkas3_sink_spool_bytes"])
	}
	// Every object in the store (4 objects, their 4 index objects, the
	// topic description) was one upload; the open files are temp files.
	var complete int
	for _, k := range allKeys(t, dir) {
		if !strings.Contains(path.Base(k), ".tmp-") {
			complete++
		}
	}
	if got := m["kafkas3_sink_upload_duration_seconds_count"]; got != float64(complete) || complete < 8 {
		t.Errorf("uploads observed = %v, want %d (the objects in the store)", got, complete)
	}
	if code, body := status(t, base+"/healthz"); code != 200 {
		t.Errorf("/healthz = %d %q", code, body)
	}
	if code, body := status(t, base+"/readyz"); code != 200 || body != "ready\n" {
		t.Errorf("/readyz = %d %q", code, body)
	}
	// Produce 4 more: the lag shows nothing left, the counters grow.
	produceJSON(t, ctx, brokers, "orders", 2, 4)
	m = waitSeries(t, base, "12 records archived", func(m map[string]float64) bool {
		return m[`kafkas3_sink_records_total{topic="orders"}`] == 12
	})
	for deadline := time.Now().Add(10 * time.Second); !strings.Contains(errb.String(), `"msg":"sink progress"`); time.Sleep(50 * time.Millisecond) {
		if time.Now().After(deadline) {
			t.Fatalf("no progress line within 10 s at kafkas3.log.interval.ms=1000:\n%s", errb.String())
		}
	}
	stop()
	r := waitDone(t, done)
	if r.code != ExitOK {
		t.Fatalf("sink: exit %d\n%s\n%s", r.code, r.out, r.err)
	}
	// The open files were aborted at the stop: the summary counts what the
	// metrics counted.
	for name, series := range map[string]string{"records": `kafkas3_sink_records_total{topic="orders"}`,
		"objects": `kafkas3_sink_objects_total{topic="orders"}`, "bytes": `kafkas3_sink_bytes_total{topic="orders"}`} {
		if got, want := m[series], summaryInt(t, r.out, name); got != want {
			t.Errorf("%s: metrics %v, summary %v (%s)", name, got, want, r.out)
		}
	}
	var progress map[string]any
	for _, l := range jsonLines(t, r.err) {
		if l["msg"] == "sink progress" {
			progress = l
		}
	}
	for _, k := range []string{"records_per_s", "bytes_per_s", "fetched_per_s", "lag", "objects", "records_total", "partitions"} {
		if _, ok := progress[k]; !ok {
			t.Errorf("progress line lacks %s: %v", k, progress)
		}
	}
}

// TestSourceCmdMetricsDuringRun scrapes a following restore: records per
// target topic, bytes and objects as the summary counts them, the pass's
// planned and done bytes, the produce latency, /readyz.
func TestSourceCmdMetricsDuringRun(t *testing.T) {
	ctx := cliContext(t)
	a := writeArchived(t, 2, 12, 3, format.CompressionNone, "events") // 6 per partition, 2 objects each
	var errb syncBuffer
	stop, done := runInBackground(ctx, &errb, "source", "-c", a.cfg, "--topic-rename", "copy_of_$0", "--create-topics", "--follow",
		"-p", "s3.poll.interval.ms=50", "--metrics-addr", "127.0.0.1:0", "--log-format", "json")
	defer stop()
	base := metricsBase(t, &errb)
	m := waitSeries(t, base, "12 records restored", func(m map[string]float64) bool {
		return m[`kafkas3_source_records_total{topic="copy_of_events"}`] == 12
	})
	if got := m[`kafkas3_source_objects_total{topic="copy_of_events"}`]; got != 4 {
		t.Errorf("objects = %v, want 4", got)
	}
	if m["kafkas3_source_pass_planned_objects"] != 4 || m["kafkas3_source_pass_planned_bytes"] <= 0 {
		t.Errorf("planned: %v objects, %v bytes", m["kafkas3_source_pass_planned_objects"], m["kafkas3_source_pass_planned_bytes"])
	}
	m = waitSeries(t, base, "the pass done", func(m map[string]float64) bool {
		return m["kafkas3_source_pass_done_bytes"] == m["kafkas3_source_pass_planned_bytes"]
	})
	if m["kafkas3_source_produce_duration_seconds_count"] < 1 {
		t.Errorf("no produce request observed")
	}
	if code, body := status(t, base+"/readyz"); code != 200 {
		t.Errorf("/readyz = %d %q", code, body)
	}
	stop()
	r := waitDone(t, done)
	if r.code != ExitOK {
		t.Fatalf("source: exit %d\n%s\n%s", r.code, r.out, r.err)
	}
	for name, series := range map[string]string{"records": `kafkas3_source_records_total{topic="copy_of_events"}`,
		"bytes": `kafkas3_source_bytes_total{topic="copy_of_events"}`, "objects": `kafkas3_source_objects_total{topic="copy_of_events"}`} {
		if got, want := m[series], summaryInt(t, r.out, name); got != want {
			t.Errorf("%s: metrics %v, summary %v (%s)", name, got, want, r.out)
		}
	}
	jsonLines(t, r.err)
}

// TestLogFormatJSON: with --log-format json every stderr line is a JSON
// object, the error at exit included; a wrong --log-format or
// --metrics-addr is a configuration error naming the flag.
func TestLogFormatJSON(t *testing.T) {
	ctx := cliContext(t)
	r := mustRun(t, ctx, ExitConfig, "sink", "-c", "/nonexistent/sink.yaml", "--log-format", "json")
	lines := jsonLines(t, r.err)
	last := lines[len(lines)-1]
	if last["level"] != "ERROR" || !strings.HasPrefix(fmt.Sprint(last["msg"]), "kafkas3: ") || last["exit_code"] != 2.0 {
		t.Errorf("error at exit: %v", last)
	}
	// Text stays the default.
	r = mustRun(t, ctx, ExitConfig, "sink", "-c", "/nonexistent/sink.yaml")
	if !strings.HasPrefix(r.err, "kafkas3: ") {
		t.Errorf("text error at exit: %q", r.err)
	}
	dir := t.TempDir()
	cfg := writeFile(t, "sink.yaml", sinkYAML("127.0.0.1:1", dir, "orders", 2))
	for _, tc := range []struct{ args []string }{
		{[]string{"--log-format", "xml"}},
		{[]string{"--metrics-addr", "9464"}},
	} {
		r := mustRun(t, ctx, ExitConfig, append([]string{"sink", "-c", cfg}, tc.args...)...)
		if !strings.Contains(r.err, tc.args[0]+" ") {
			t.Errorf("%v: the error does not name %s: %q", tc.args, tc.args[0], r.err)
		}
	}
	// A source that fails after starting: its log and its exit error are JSON.
	a := writeArchived(t, 1, 3, 3, format.CompressionNone, "events")
	r = mustRun(t, ctx, ExitFail, "source", "-c", a.cfg, "--topics", "nosuchtopic", "--log-format", "json")
	lines = jsonLines(t, r.err)
	if last := lines[len(lines)-1]; last["level"] != "ERROR" || !strings.Contains(fmt.Sprint(last["msg"]), "nosuchtopic") {
		t.Errorf("source error at exit: %v", last)
	}
}

// TestREADMEMetrics: every kafkas3_ metric the sink and the source export
// is in the docs' metrics section (docs/operations.md).
func TestREADMEMetrics(t *testing.T) {
	readme := []byte(docsText(t))
	reg := prometheus.NewRegistry()
	sink, err := metrics.NewSink(reg, nil)
	if err != nil {
		t.Fatal(err)
	}
	p := sink.Partition("t", 0) // a child of each labelled metric
	p.Fetched(1, 0, archive.BatchSpan{FirstTime: time.Now()})
	p.Completed([]archive.FileStats{{Records: 1, MaxTime: 1}})
	ready := health.NewReadiness(nil)
	ready.SetUp(health.Broker)
	if err := metrics.RegisterProcess(reg, ready); err != nil {
		t.Fatal(err)
	}
	sreg := prometheus.NewRegistry()
	src, err := metrics.NewSource(sreg, nil)
	if err != nil {
		t.Fatal(err)
	}
	src.Stream("t", 0)
	if _, err := src.SourceHooks(sreg); err != nil {
		t.Fatal(err)
	}
	var names []string
	for _, g := range []prometheus.Gatherer{reg, sreg} {
		mfs, err := g.Gather()
		if err != nil {
			t.Fatal(err)
		}
		for _, mf := range mfs {
			if strings.HasPrefix(mf.GetName(), "kafkas3_") {
				names = append(names, mf.GetName())
			}
		}
	}
	if len(names) < 20 {
		t.Fatalf("only %d metrics gathered: %v", len(names), names)
	}
	for _, n := range names {
		if !strings.Contains(string(readme), "`"+n+"`") {
			t.Errorf("the docs do not document %s (docs/operations.md)", n)
		}
	}
}

// TestSinkOnceExportsMetrics: --once with --metrics-textfile writes the
// run's metrics in Prometheus' text format when it ends (the newest
// archived record's timestamp per partition among them), and with
// --metrics-push-url pushes them to a Pushgateway under job kafkas3_sink
// and the connector's name. A push URL that is not http(s) is a usage
// error.
func TestSinkOnceExportsMetrics(t *testing.T) {
	ctx := cliContext(t)
	brokers := startKafka(t, 2, "orders")
	before := time.Now()
	produceJSON(t, ctx, brokers, "orders", 2, 10)
	dir := t.TempDir()
	cfg := writeFile(t, "sink.yaml", sinkYAML(brokers, dir, "orders", 5))
	var mu sync.Mutex
	var pushed []string
	gw := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		b, _ := io.ReadAll(r.Body)
		mu.Lock()
		pushed = append(pushed, r.Method+" "+r.URL.Path+" "+string(b))
		mu.Unlock()
		w.WriteHeader(http.StatusOK)
	}))
	defer gw.Close()
	file := filepath.Join(t.TempDir(), "kafkas3.prom")
	mustRun(t, ctx, ExitOK, "sink", "-c", cfg, "--once", "--metrics-textfile", file, "--metrics-push-url", gw.URL)

	text, err := os.ReadFile(file)
	if err != nil {
		t.Fatal(err)
	}
	for _, p := range []string{"0", "1"} {
		re := regexp.MustCompile(`(?m)^kafkas3_sink_newest_archived_timestamp_seconds\{partition="` + p + `",topic="orders"\} (\S+)$`)
		m := re.FindSubmatch(text)
		if m == nil {
			t.Fatalf("the textfile has no newest archived timestamp of partition %s:\n%s", p, text)
		}
		v, err := strconv.ParseFloat(string(m[1]), 64)
		if err != nil || v < float64(before.Add(-time.Second).UnixMilli())/1000 || v > float64(time.Now().UnixMilli())/1000 {
			t.Fatalf("partition %s: newest archived timestamp %s, want the time the records were produced", p, m[1])
		}
	}
	if !strings.Contains(string(text), `kafkas3_sink_records_total{topic="orders"} 10`) {
		t.Fatalf("the textfile lacks the records archived:\n%s", text)
	}
	mu.Lock()
	defer mu.Unlock()
	if len(pushed) != 1 || !strings.HasPrefix(pushed[0], "PUT /metrics/job/kafkas3_sink/connector/") {
		t.Fatalf("pushes: %q, want one PUT under job kafkas3_sink and the connector", pushed)
	}
	r := mustRun(t, ctx, ExitConfig, "sink", "-c", cfg, "--once", "--metrics-push-url", "pushgateway:9091")
	if !strings.Contains(r.err, `--metrics-push-url "pushgateway:9091": want http://HOST:PORT`) {
		t.Fatalf("a push URL without scheme: %s", r.err)
	}
}
