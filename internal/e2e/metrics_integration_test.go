//go:build integration

package e2e

import (
	"bufio"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"os"
	"regexp"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"
)

// metricsURL waits for the "serving metrics" line of p's JSON log and
// returns the server's base URL.
func metricsURL(t *testing.T, p *proc) string {
	t.Helper()
	re := regexp.MustCompile(`"url":"(http://[^"]+)/metrics"`)
	var base string
	if !waitFor(60*time.Second, 50*time.Millisecond, func() bool {
		if m := re.FindStringSubmatch(p.stderr()); m != nil {
			base = m[1]
		}
		return base != "" || p.exited()
	}) || base == "" {
		t.Fatalf("%s: no serving metrics line\n%s", p.name, p.logs())
	}
	return base
}

// scrapeMetrics reads base/metrics as series -> value.
func scrapeMetrics(t *testing.T, base string) map[string]float64 {
	t.Helper()
	resp, err := http.Get(base + "/metrics")
	if err != nil {
		t.Fatalf("scrape: %v", err)
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
			t.Fatalf("scrape: %q: %v", line, err)
		}
		out[line[:i]] = v
	}
	return out
}

// waitMetric polls base/metrics until series reaches want; it returns the
// scrape that showed it.
func waitMetric(t *testing.T, p *proc, base, series string, want float64) map[string]float64 {
	t.Helper()
	var m map[string]float64
	if !waitFor(90*time.Second, 100*time.Millisecond, func() bool {
		m = scrapeMetrics(t, base)
		return m[series] >= want || p.exited()
	}) || m[series] != want {
		t.Fatalf("%s: %s = %v, want %v\n%s", p.name, series, m[series], want, p.logs())
	}
	return m
}

func getStatus(t *testing.T, url string) (int, string) {
	t.Helper()
	resp, err := http.Get(url)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	b, _ := io.ReadAll(resp.Body)
	return resp.StatusCode, string(b)
}

// allJSON fails unless every line of s is one JSON object; it returns them.
func allJSON(t *testing.T, what, s string) []map[string]any {
	t.Helper()
	var out []map[string]any
	for _, l := range strings.Split(strings.TrimSpace(s), "\n") {
		m := map[string]any{}
		if err := json.Unmarshal([]byte(l), &m); err != nil {
			t.Fatalf("%s: stderr line is not JSON: %q", what, l)
		}
		out = append(out, m)
	}
	return out
}

// TestIntegrationMetrics scrapes a continuous sink and a following source
// against real Kafka and versitygw while they run: records, bytes and
// objects per topic agree with the bucket and with each run's summary, the
// lag per partition drops to 0, uploads and produce requests are timed,
// /healthz and /readyz answer, the sink logs its progress line, and with
// --log-format json every stderr line is JSON.
func TestIntegrationMetrics(t *testing.T) {
	b := newBed(t)
	const parts, perPart, flush = 3, 2_500, 1000
	topic := srcUnique("e2e-metrics")
	b.k.CreateTopic(t, topic, parts)
	b.produce(t, topic, parts, 0, perPart, value)
	bucket := b.s.CreateBucket(t)
	cfg := b.sinkConf(topic, topic, bucket).with("flush.size", strconv.Itoa(flush), "kafkas3.log.interval.ms", "1000").write(t)

	sink := startSink(t, "sink", cfg, "--metrics-addr", "127.0.0.1:0", "--log-format", "json")
	base := metricsURL(t, sink)
	records := fmt.Sprintf(`kafkas3_sink_records_total{topic=%q}`, topic)
	// 2,000 of each partition's 2,500 records fill two objects; 500 stay open.
	m := waitMetric(t, sink, base, records, parts*2*flush)
	objs, _ := splitIndex(b.snapshot(t, bucket))
	var bytes int64
	for _, o := range objs {
		bytes += o.size
	}
	if got := m[fmt.Sprintf(`kafkas3_sink_objects_total{topic=%q}`, topic)]; got != float64(len(objs)) || len(objs) != parts*2 {
		t.Errorf("objects_total %v, the bucket holds %d objects (want %d)", got, len(objs), parts*2)
	}
	if got := m[fmt.Sprintf(`kafkas3_sink_bytes_total{topic=%q}`, topic)]; got != float64(bytes) {
		t.Errorf("bytes_total %v, the bucket's objects hold %d bytes", got, bytes)
	}
	for p := range parts {
		if v, ok := m[fmt.Sprintf(`kafkas3_sink_consumer_lag_records{partition="%d",topic=%q}`, p, topic)]; !ok || v != 0 {
			t.Errorf("lag of partition %d = %v (exported %v), want 0", p, v, ok)
		}
	}
	if m["kafkas3_sink_upload_duration_seconds_count"] < float64(len(objs)) || m["kafkas3_sink_open_files"] != parts {
		t.Errorf("uploads timed %v (objects %d), open files %v (want %d)", m["kafkas3_sink_upload_duration_seconds_count"], len(objs), m["kafkas3_sink_open_files"], parts)
	}
	for _, dep := range []string{"broker", "store"} {
		if v := m[fmt.Sprintf(`kafkas3_dependency_up{dependency=%q}`, dep)]; v != 1 {
			t.Errorf("dependency %s up = %v", dep, v)
		}
	}
	if code, body := getStatus(t, base+"/readyz"); code != 200 {
		t.Errorf("/readyz = %d %q", code, body)
	}
	if code, _ := getStatus(t, base+"/healthz"); code != 200 {
		t.Errorf("/healthz = %d", code)
	}
	// 500 more per partition complete a third object each.
	b.produce(t, topic, parts, perPart, 500, value)
	m = waitMetric(t, sink, base, records, parts*3*flush)
	if !waitFor(10*time.Second, 100*time.Millisecond, func() bool { return strings.Contains(sink.stderr(), `"msg":"sink progress"`) }) {
		t.Errorf("no progress line within 10 s at kafkas3.log.interval.ms=1000\n%s", sink.logs())
	}
	sink.signal(syscall.SIGTERM)
	if code := sink.wait(60 * time.Second); code != 0 {
		t.Fatalf("sink: exit %d after SIGTERM\n%s", code, sink.logs())
	}
	sum, err := parseSummary(sink.stdout())
	if err != nil {
		t.Fatal(err)
	}
	t.Logf("sink: %s; scraped records=%v objects=%v bytes=%v", sum.line, m[records],
		m[fmt.Sprintf(`kafkas3_sink_objects_total{topic=%q}`, topic)], m[fmt.Sprintf(`kafkas3_sink_bytes_total{topic=%q}`, topic)])
	if float64(sum.records) != m[records] || float64(sum.objects) != m[fmt.Sprintf(`kafkas3_sink_objects_total{topic=%q}`, topic)] ||
		float64(sum.bytes) != m[fmt.Sprintf(`kafkas3_sink_bytes_total{topic=%q}`, topic)] {
		t.Errorf("the summary %q does not agree with the last scrape %v", sum.line, m)
	}
	allJSON(t, "sink", sink.stderr())

	// The source, following the archive, scraped while it runs.
	target := "copy_of_" + topic
	src := srcStart(t, "source --follow", cfg, "--topic-rename", "copy_of_$0", "--create-topics", "--follow",
		"-p", "s3.poll.interval.ms=500", "--metrics-addr", "127.0.0.1:0", "--log-format", "json")
	sbase := metricsURL(t, src)
	srecords := fmt.Sprintf(`kafkas3_source_records_total{topic=%q}`, target)
	sm := waitMetric(t, src, sbase, srecords, float64(sum.records))
	if !waitFor(30*time.Second, 100*time.Millisecond, func() bool {
		sm = scrapeMetrics(t, sbase)
		return sm["kafkas3_source_pass_done_bytes"] == sm["kafkas3_source_pass_planned_bytes"]
	}) {
		t.Errorf("the pass never completed: %v", sm)
	}
	if got := sm[fmt.Sprintf(`kafkas3_source_bytes_total{topic=%q}`, target)]; got != float64(sum.bytes) {
		t.Errorf("source bytes_total %v, the sink archived %d bytes", got, sum.bytes)
	}
	if got := sm[fmt.Sprintf(`kafkas3_source_objects_total{topic=%q}`, target)]; got != float64(sum.objects) {
		t.Errorf("source objects_total %v, the sink archived %d objects", got, sum.objects)
	}
	if sm["kafkas3_source_produce_duration_seconds_count"] < 1 {
		t.Error("no produce request timed")
	}
	if code, body := getStatus(t, sbase+"/readyz"); code != 200 {
		t.Errorf("source /readyz = %d %q", code, body)
	}
	if got := srcSum(b.srcEnds(t, target)); got != sum.records {
		t.Errorf("%s holds %d records, want %d", target, got, sum.records)
	}
	src.signal(syscall.SIGTERM)
	if code := src.wait(60 * time.Second); code != 0 {
		t.Fatalf("source: exit %d after SIGTERM\n%s", code, src.logs())
	}
	ssum, err := srcParseSummary(src.stdout())
	if err != nil {
		t.Fatal(err)
	}
	t.Logf("source: %s; scraped records=%v", ssum.line, sm[srecords])
	if float64(ssum.records) != sm[srecords] || float64(ssum.bytes) != sm[fmt.Sprintf(`kafkas3_source_bytes_total{topic=%q}`, target)] {
		t.Errorf("the source summary %q does not agree with the last scrape", ssum.line)
	}
	allJSON(t, "source", src.stderr())
}

// TestIntegrationSinkArchiveAge (issue 22, item 4, on the test bed): a
// cron-style sink --once with --metrics-textfile leaves, when it ends, a
// Prometheus text file whose newest-archived timestamp of each partition
// is the newest record produced to it; a second run with records stamped
// later moves it on.
func TestIntegrationSinkArchiveAge(t *testing.T) {
	b := newBed(t)
	topic := srcUnique("age")
	b.k.CreateTopic(t, topic, 2)
	bucket := b.s.CreateBucket(t)
	cfg := b.sinkConf(topic, topic, bucket).with("flush.size", "10").write(t)
	file := t.TempDir() + "/kafkas3.prom"
	newest := func(p int32) float64 {
		t.Helper()
		text, err := os.ReadFile(file)
		if err != nil {
			t.Fatal(err)
		}
		re := regexp.MustCompile(fmt.Sprintf(`(?m)^kafkas3_sink_newest_archived_timestamp_seconds\{partition="%d",topic="%s"\} (\S+)$`, p, regexp.QuoteMeta(topic)))
		m := re.FindSubmatch(text)
		if m == nil {
			t.Fatalf("no newest archived timestamp of partition %d in the textfile:\n%s", p, text)
		}
		v, err := strconv.ParseFloat(string(m[1]), 64)
		if err != nil {
			t.Fatal(err)
		}
		return v
	}
	for run, at := range []time.Time{time.Now().Add(-2 * time.Hour), time.Now().Add(-time.Hour)} {
		produceStamped(t, b, topic, 2, 20, func(i int) time.Time { return at.Add(time.Duration(i) * time.Millisecond) })
		p, code := runSink(t, fmt.Sprintf("sink --once %d", run), cfg, 3*time.Minute, "--once", "--metrics-textfile", file)
		if code != 0 {
			t.Fatalf("exit %d\n%s", code, p.logs())
		}
		want := float64(at.Add(19*time.Millisecond).UnixMilli()) / 1000
		for part := range int32(2) {
			if got := newest(part); got != want {
				t.Fatalf("run %d: partition %d newest archived %v, want %v (the last record produced)", run, part, got, want)
			}
		}
	}
}
