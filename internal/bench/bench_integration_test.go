//go:build integration

package bench

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"maps"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"sort"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/s3"
	"github.com/twmb/franz-go/pkg/kadm"

	"github.com/kafkas3/kafkas3/index"
	"github.com/kafkas3/kafkas3/internal/testbed"
)

func TestMain(m *testing.M) {
	if mode := os.Getenv(childEnv); mode != "" {
		os.Exit(runChild(mode, os.Stdout, os.Stderr))
	}
	os.Exit(m.Run())
}

// Sizes and limits.
const (
	defaultBytes          = 1 << 30 // main data set: 1 GiB
	defaultPartitionBytes = 8 << 20 // per partition of the 200-partition run
	valueSize             = 1024
	mainPartitions        = 12
	manyPartitions        = 200
	manyPartSize          = 5 << 20   // s3.part.size of the 200-partition run
	rssLimitKiB           = 200 << 10 // 200 MiB at 200 partitions: issue 20, item 7 (300 MiB in issue 3)
	mainFlushSize         = 50000     // records per object in the main sink runs (~50 MiB)

	bytesEnv          = "KAFKAS3_BENCH_BYTES"
	partitionBytesEnv = "KAFKAS3_BENCH_PARTITION_BYTES"
	outEnv            = "KAFKAS3_BENCH_OUT"
	// onlyEnv=index runs only the load, the raw consumes, the main limit
	// baselines and the archive index rows (indexRows), for a quick
	// measurement of the index's cost; onlyEnv=sink runs the load, the raw
	// consumes, the main limit baselines and the main sink rows
	// (mainSinkRows: bytes, JSON+gzip, local bytes, JSON+gzip of the letters);
	// onlyEnv=bytes the same without the gzip rows; onlyEnv=typed the load,
	// the raw consumes, the main limit baselines, JSON without compression
	// and the typed rows (typedRows: Avro and Parquet, with the Avro
	// topic's own limit baseline); onlyEnv=thousand only the 1,000-partition
	// rows (thousandRows); onlyEnv=many only the 200-partition rows
	// (manyRows); onlyEnv=scale only the archive of many small objects
	// read behind a latency proxy (scaleRows, issue 19); onlyEnv=https
	// the load, the raw consumes, the limit baselines over HTTP and over
	// HTTPS and `sink bytes` over both (httpsOnly); onlyEnv=restore the load, an Avro topic
	// of as many bytes, the bytes, JSON+gzip, Avro and Parquet archives
	// (restoreArchives) and the restore rows in two rounds between
	// producer baselines (restoreRows).
	onlyEnv = "KAFKAS3_BENCH_ONLY"
)

// BenchmarkKafkas3 runs every measurement once, side by side on one broker
// and one S3 server, prints the table and writes it to $KAFKAS3_BENCH_OUT.
// Run it with -benchtime 1x (make bench).
func BenchmarkKafkas3(b *testing.B) {
	e := setup(b)
	if os.Getenv(onlyEnv) == "scale" {
		e.scaleRows() // only the archive of many small objects behind latency
		e.report()
		if len(e.failures) > 0 {
			b.Fatal(strings.Join(e.failures, "\n"))
		}
		return
	}
	if only := os.Getenv(onlyEnv); only == "thousand" || only == "many" {
		if only == "many" {
			e.manyRows(envSize(b, partitionBytesEnv, defaultPartitionBytes)) // only the 200-partition rows
		} else {
			e.thousandRows() // only the 1,000-partition rows
		}
		e.report()
		if len(e.failures) > 0 {
			b.Fatal(strings.Join(e.failures, "\n"))
		}
		return
	}
	mainBytes := envSize(b, bytesEnv, defaultBytes)
	partBytes := envSize(b, partitionBytesEnv, defaultPartitionBytes)
	main := dataset{Kind: kindText, Topic: "bench", Partitions: mainPartitions,
		Records: mainBytes / valueSize, ValueSize: valueSize}
	e.facts.add("main data set", fmt.Sprintf("%d records of %d B (%s) in %d partitions, JSON events with a vocabulary text field",
		main.Records, valueSize, human(main.Bytes()), main.Partitions))

	// Load the data once; every run below reads it.
	e.createTopic(main.Topic, main.Partitions)
	e.produceRow("load: franz-go idempotent producer (first write)", main, "")

	only := os.Getenv(onlyEnv)
	if only != "" && only != "index" && only != "sink" && only != "bytes" && only != "zstd" && only != "typed" && only != "restore" && only != "envelope" && only != "gzip" && only != "https" {
		b.Fatalf("%s=%q: want index, sink, bytes, zstd, typed, restore, envelope, gzip, https, many, thousand, scale or unset", onlyEnv, only)
	}
	if only == "https" {
		e.httpsOnly(main)
		e.report()
		if len(e.failures) > 0 {
			b.Fatal(strings.Join(e.failures, "\n"))
		}
		return
	}
	// Modes that compare rows of one run with each other, in rounds.
	if rows := map[string]func(dataset, int){"gzip": e.gzipRows, "envelope": e.envelopeRows}[only]; rows != nil {
		rows(main, restoreRounds(b))
		e.report()
		if len(e.failures) > 0 {
			b.Fatal(strings.Join(e.failures, "\n"))
		}
		return
	}
	if only == "restore" {
		e.restoreOnly = true
		e.restoreRows(main, e.restoreArchives(main), restoreRounds(b))
		e.report()
		if len(e.failures) > 0 {
			b.Fatal(strings.Join(e.failures, "\n"))
		}
		return
	}
	raw1 := e.consumeRow("raw consume: franz-go direct consumer (1 of 2)", main)
	limits := e.mainLimits(main, "1 of 2")
	var s3Rows, localRows []*row
	if only != "index" && only != "typed" {
		s3Rows, localRows = e.mainSinkRows(main, mainBytes, only)
	}
	if only == "" || only == "typed" {
		s3Rows = append(s3Rows, e.sinkRow("sink json --once (no compression)", main, fmtJSON, mainFlushSize, 0, false))
	}
	if only == "" || only == "index" {
		s3Rows = append(s3Rows, e.indexRows(main)...)
	}
	if only == "" {
		e.httpsRows(main) // with their own limit baseline, over HTTPS
	}
	limits = append(limits, e.mainLimits(main, "2 of 2")...)
	raw2 := e.consumeRow("raw consume: franz-go direct consumer (2 of 2)", main)
	rawRate := (raw1.rate() + raw2.rate()) / 2
	for i := range e.rows {
		if e.rows[i].kind == kindSink {
			e.rows[i].setRatio(rawRate, "raw consume (mean)")
		}
	}
	s3Limit := meanBaseline("consume + upload (mean)", limits[0], limits[2])
	localLimit := meanBaseline("consume + file write (mean)", limits[1], limits[3])
	for _, r := range s3Rows {
		r.limit = s3Limit
	}
	for _, r := range localRows {
		r.limit = localLimit
	}
	e.checkZstdThroughput()

	if only != "" {
		if only == "typed" {
			e.typedRows() // with their own limit baseline
		}
		e.report()
		if len(e.failures) > 0 {
			b.Fatal(strings.Join(e.failures, "\n"))
		}
		return
	}

	// Typed formats: Avro (fast path) and Parquet from an Avro topic, with
	// ratios against that topic's own raw consume.
	typed := e.typedRows()

	// Restore against a bare idempotent producer writing the same records.
	e.restoreRows(main, restoreSets(main, typed), 1)

	e.manyRows(partBytes)
	e.thousandRows()

	e.report()
	for _, r := range e.rows {
		if r.kind != kindSink {
			continue
		}
		unit := strings.NewReplacer(" ", "_", ",", "", "=", "", "+", "_").Replace(r.name)
		b.ReportMetric(r.rate()/1e6, "MB/s:"+unit)
	}
	if len(e.failures) > 0 {
		b.Fatal(strings.Join(e.failures, "\n"))
	}
}

// manyRows runs the memory rows with many partitions: every partition
// receives data, and each object grows past one 5 MiB part; the sink's
// peak RSS must stay under rssLimitKiB, for bytes, JSON+gzip and
// JSON+zstd.
func (e *env) manyRows(partBytes int64) {
	// Memory with many partitions: every partition receives data, and each
	// object grows past one 5 MiB part.
	many := dataset{Kind: kindRandom, Topic: "bench200", Partitions: manyPartitions,
		Records: manyPartitions * (partBytes / valueSize), ValueSize: valueSize, Run: 256}
	e.facts.add("200-partition data set", fmt.Sprintf("%d records of %d B (%s, %s per partition) in %d partitions, JSON with base64 of random bytes",
		many.Records, valueSize, human(many.Bytes()), human(partBytes), many.Partitions))
	e.createTopic(many.Topic, many.Partitions)
	e.produceRow("load: franz-go idempotent producer, 200 partitions", many, "")
	perPart := many.Records / int64(many.Partitions)
	// flush.size above the records per partition: one object per
	// partition, open for the whole run. gzip and zstd add a compressor
	// per open object.
	manyLimit := meanBaseline("consume + upload, 200 partitions", e.limitRow(
		"limit: consume + aws-sdk-go-v2 upload, 200 partitions, 5 MiB parts", many, int(perPart+1), manyPartSize, false))
	for _, f := range []string{fmtBytes, fmtJSONGzip, fmtJSONZstd} {
		r := e.sinkRow(fmt.Sprintf("sink %s --once, 200 partitions, s3.part.size=5 MiB", f), many, f, int(perPart+1), manyPartSize, false)
		r.limit = manyLimit
		e.checkMultipart(r, many, manyPartSize)
		if r.rssKiB >= rssLimitKiB {
			e.failures = append(e.failures, fmt.Sprintf("sink %s with %d partitions and s3.part.size=%d: peak RSS %.1f MiB, limit %d MiB",
				f, manyPartitions, manyPartSize, float64(r.rssKiB)/1024, rssLimitKiB>>10))
			r.note += fmt.Sprintf(", **over the %d MiB limit**", rssLimitKiB>>10)
		} else {
			r.note += fmt.Sprintf(", under the %d MiB limit", rssLimitKiB>>10)
		}
	}
}

// mainLimits runs the limit baselines of the main sink runs: consume +
// upload, and consume + file write.
func (e *env) mainLimits(d dataset, which string) []*row {
	return []*row{
		e.limitRow("limit: consume + aws-sdk-go-v2 upload, no formatting ("+which+")", d, mainFlushSize, 0, false),
		e.limitRow("limit: consume + file write, no formatting ("+which+")", d, mainFlushSize, 0, true),
	}
}

// mainSinkRows runs the main sink rows: bytes to S3 and to a local
// directory (not with only=zstd) and, unless only=bytes, JSON+gzip and
// JSON+zstd of the main set and of the random-letter data set (loaded
// here, as large as the main set) to S3. It returns the S3 rows and the
// local rows. The gzip rows' objects are checked against one compress/gzip
// stream of the same bytes, the zstd rows' sizes against the gzip rows'
// and their throughput against the limit baseline (checkZstd).
func (e *env) mainSinkRows(main dataset, n int64, only string) (s3Rows, localRows []*row) {
	if only != "zstd" {
		s3Rows = append(s3Rows, e.sinkRow("sink bytes --once", main, fmtBytes, mainFlushSize, 0, false))
		localRows = append(localRows, e.sinkRow("sink bytes --once to a local dir (no S3 server)", main, fmtBytes, mainFlushSize, 0, true))
	}
	if only == "bytes" {
		return s3Rows, localRows
	}
	gz := e.sinkRow("sink json+gzip --once", main, fmtJSONGzip, mainFlushSize, 0, false)
	e.checkGzipSize(gz)
	zs := e.sinkRow("sink json+zstd --once", main, fmtJSONZstd, mainFlushSize, 0, false)

	letters := dataset{Kind: kindLetters, Topic: "bench_letters", Partitions: mainPartitions, Records: n / valueSize, ValueSize: valueSize}
	e.facts.add("letters data set", fmt.Sprintf("%d records of %d B (%s) in %d partitions, JSON with a text field of random lowercase letters; "+
		"its sink row is compared with the main set's limit baseline (same record count, sizes and partitions: the baseline does not read the bytes)",
		letters.Records, valueSize, human(letters.Bytes()), letters.Partitions))
	e.createTopic(letters.Topic, letters.Partitions)
	e.produceRow("load: franz-go idempotent producer, letters topic", letters, "")
	lgz := e.sinkRow("sink json+gzip --once, random-letter data set", letters, fmtJSONGzip, mainFlushSize, 0, false)
	e.checkGzipSize(lgz)
	lzs := e.sinkRow("sink json+zstd --once, random-letter data set", letters, fmtJSONZstd, mainFlushSize, 0, false)
	e.checkZstd(zs, gz)
	e.checkZstd(lzs, lgz)
	return append(s3Rows, gz, zs, lgz, lzs), localRows
}

func withTopic(d dataset, topic string) dataset {
	d.Topic = topic
	return d
}

// env is one benchmark run: the services, the kafkas3 binary, the rows.
type env struct {
	b     *testing.B
	ctx   context.Context
	kafka *testbed.KafkaBroker
	s3    *testbed.S3Server
	bin   string
	dir   string
	// restoreOnly is KAFKAS3_BENCH_ONLY=restore: sink runs are not profiled.
	restoreOnly bool
	// brokerPID and s3PID are the service processes whose CPU time each
	// run reports; 0 if not found.
	brokerPID, s3PID int
	start            time.Time
	facts            facts
	rows             []*row
	// registryURL is the in-process schema registry of the typed runs.
	registryURL string
	// archives maps a format to the bucket the main sink run wrote it to.
	archives map[string]string
	// failures are checks that failed after the runs; the benchmark fails
	// after printing the table.
	failures []string
	// tls is the HTTPS versitygw of the HTTPS rows, started on first use
	// (tlsServer); onTLS makes it e.s3 for a while.
	tls tlsStore
}

func setup(b *testing.B) *env {
	e := &env{b: b, ctx: context.Background(), dir: b.TempDir(), start: time.Now(), archives: map[string]string{}}
	log := slog.New(slog.NewTextHandler(os.Stderr, nil))
	opts := testbed.Options{KafkaHeap: "1g", Logger: log} // full JIT: QuickJVM is for tests

	var wg sync.WaitGroup
	var kErr, sErr, bErr error
	wg.Go(func() { e.kafka, kErr = testbed.StartKafka(e.ctx, opts) })
	wg.Go(func() { e.s3, sErr = testbed.StartS3(e.ctx, opts) })
	wg.Go(func() { bErr = e.build() })
	wg.Wait()
	if e.kafka != nil {
		b.Cleanup(func() { _ = e.kafka.Close() })
	}
	if e.s3 != nil {
		b.Cleanup(func() { _ = e.s3.Close() })
	}
	for _, err := range []error{kErr, sErr} {
		if err == nil {
			continue
		}
		if errors.Is(err, testbed.ErrToolMissing) && os.Getenv(testbed.RequireEnv) != "1" {
			b.Skip(err.Error())
		}
		b.Fatal(err)
	}
	if bErr != nil {
		b.Fatal(bErr)
	}
	e.brokerPID = findPID(filepath.Join(e.kafka.Dir, "server.properties"))
	e.s3PID = findPID(e.s3.DataDir)
	e.warmGroups()
	e.facts.collect(e)
	return e
}

// build compiles kafkas3 from the module root into e.dir, as `make build`
// does but keeping symbols (for perf).
func (e *env) build() error {
	out, err := exec.Command("go", "env", "GOMOD").Output()
	if err != nil {
		return fmt.Errorf("go env GOMOD: %w", err)
	}
	root := filepath.Dir(strings.TrimSpace(string(out)))
	e.bin = filepath.Join(e.dir, "kafkas3")
	cmd := exec.Command("go", "build", "-trimpath", "-o", e.bin, ".")
	cmd.Dir = root
	cmd.Env = append(os.Environ(), "CGO_ENABLED=0")
	if out, err := cmd.CombinedOutput(); err != nil {
		return fmt.Errorf("go build kafkas3: %w\n%s", err, out)
	}
	return nil
}

func envSize(b *testing.B, name string, def int64) int64 {
	return envAtLeast(b, name, def, valueSize*manyPartitions, "a byte count")
}

// envAtLeast reads an integer of at least least from the environment
// (what: what it counts, for the error), def when unset.
func envAtLeast(b *testing.B, name string, def, least int64, what string) int64 {
	s := os.Getenv(name)
	if s == "" {
		return def
	}
	n, err := strconv.ParseInt(s, 10, 64)
	if err != nil || n < least {
		b.Fatalf("%s=%q: want %s of at least %d", name, s, what, least)
	}
	return n
}

func (e *env) createTopic(name string, partitions int32) {
	ctx, cancel := context.WithTimeout(e.ctx, time.Minute)
	defer cancel()
	if err := e.kafka.CreateTopicContext(ctx, name, partitions); err != nil {
		e.b.Fatal(err)
	}
}

// Row kinds.
const (
	kindLoad    = "load"
	kindRaw     = "raw"
	kindSink    = "sink"
	kindRestore = "restore"
	kindProof   = "proof" // a restore's proof alone (source --dry-run)
	kindLimit   = "limit" // a limit baseline (limit_integration_test.go)
)

// row is one measured process.
type row struct {
	name    string
	kind    string
	records int64
	bytes   int64 // Kafka record value bytes moved
	wall    time.Duration
	rssKiB  int64
	cpu     cpuTimes
	ratio   float64
	against string
	note    string
	bucket  string
	// limit is the limit baseline a sink row is compared with, nil if none.
	limit *baseline
	// proof is how long a restore row's proof took (its log), 0 for others.
	proof time.Duration
}

func (r *row) rate() float64 { return float64(r.bytes) / r.wall.Seconds() }

func (r *row) setRatio(base float64, against string) {
	r.ratio = r.rate() / base
	r.against = against
}

// procResult is a finished process.
type procResult struct {
	wall   time.Duration
	rssKiB int64
	cpu    cpuTimes
	stdout []byte
	start  time.Time // when the process was started
	log    string    // the file holding its stderr
}

// run runs cmd to completion, its stderr in a log file, and measures its
// wall time and peak RSS (peakRSS). A failure ends the benchmark with the log's tail.
func (e *env) run(name string, cmd *exec.Cmd) procResult {
	e.b.Helper()
	logPath := filepath.Join(e.dir, fmt.Sprintf("%02d.log", len(e.rows)))
	lf, err := os.Create(logPath)
	if err != nil {
		e.b.Fatal(err)
	}
	defer lf.Close()
	var out bytes.Buffer
	cmd.Stdout = &out
	cmd.Stderr = lf
	cmd.SysProcAttr = &syscall.SysProcAttr{Pdeathsig: syscall.SIGKILL}
	fmt.Fprintf(os.Stderr, "bench: %s ...\n", name)
	brokerCPU, s3CPU := procCPU(e.brokerPID), procCPU(e.s3PID)
	start := time.Now()
	polled, err := runPolled(cmd)
	wall := time.Since(start)
	cpu := cpuTimes{broker: procCPU(e.brokerPID) - brokerCPU, s3: procCPU(e.s3PID) - s3CPU}
	if err != nil {
		e.b.Fatalf("%s: %v\nstdout: %s\n--- stderr tail (%s) ---\n%s", name, err, out.Bytes(), logPath, tail(logPath, 30))
	}
	ru, ok := cmd.ProcessState.SysUsage().(*syscall.Rusage)
	if !ok {
		e.b.Fatalf("%s: no rusage", name)
	}
	cpu.self = time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
	rss := peakRSS(ru.Maxrss, polled)
	fmt.Fprintf(os.Stderr, "bench: %s: %.1fs, peak RSS %.1f MiB (ru_maxrss %.1f, VmHWM polled %.1f), CPU s: self %.1f broker %.1f s3 %.1f\n", name, wall.Seconds(),
		float64(rss)/1024, float64(ru.Maxrss)/1024, float64(polled)/1024, cpu.self.Seconds(), cpu.broker.Seconds(), cpu.s3.Seconds())
	return procResult{wall: wall, rssKiB: rss, cpu: cpu, stdout: out.Bytes(), start: start, log: logPath}
}

func tail(path string, lines int) string {
	b, _ := os.ReadFile(path)
	ls := strings.Split(strings.TrimRight(string(b), "\n"), "\n")
	if len(ls) > lines {
		ls = ls[len(ls)-lines:]
	}
	return strings.Join(ls, "\n")
}

// child runs this test binary in a child mode.
func (e *env) child(name, mode string, a childArgs) (procResult, childResult) {
	e.b.Helper()
	self, err := os.Executable()
	if err != nil {
		e.b.Fatal(err)
	}
	a.Brokers = e.kafka.Addr
	args, err := json.Marshal(a)
	if err != nil {
		e.b.Fatal(err)
	}
	cmd := exec.Command(self, "-test.run=^$", "-test.bench=^$")
	cmd.Env = append(os.Environ(), childEnv+"="+mode, childArgsEnv+"="+string(args))
	cmd.Env = append(cmd.Env, e.caEnv()...)
	pr := e.run(name, cmd)
	var res childResult
	if err := json.Unmarshal(pr.stdout, &res); err != nil {
		e.b.Fatalf("%s: child result %q: %v", name, pr.stdout, err)
	}
	return pr, res
}

func (e *env) add(r *row) *row {
	e.rows = append(e.rows, r)
	return r
}

// produceRow writes d with the bare idempotent producer; create "new"
// creates d's topic first.
func (e *env) produceRow(name string, d dataset, create string) *row {
	if create == "new" {
		e.createTopic(d.Topic, d.Partitions)
	}
	pr, res := e.child(name, modeProduce, childArgs{Data: d})
	e.checkEndOffsets(name, d.Topic, d.Records)
	return e.add(&row{name: name, kind: kindLoad, records: res.Records, bytes: res.Bytes, wall: pr.wall, rssKiB: pr.rssKiB, cpu: pr.cpu})
}

func (e *env) consumeRow(name string, d dataset) *row {
	pr, res := e.child(name, modeConsume, childArgs{Data: d})
	if res.Records != d.Records || res.Bytes != d.Bytes() {
		e.b.Fatalf("%s: read %d records, %d bytes; want %d, %d", name, res.Records, res.Bytes, d.Records, d.Bytes())
	}
	return e.add(&row{name: name, kind: kindRaw, records: res.Records, bytes: res.Bytes, wall: pr.wall, rssKiB: pr.rssKiB, cpu: pr.cpu})
}

// config writes a kafkas3 config file (flat Confluent keys, YAML) for d's
// topic in bucket (none when "": extra then names store.local.dir) with the
// given format, plus extra keys.
func (e *env) config(name string, d dataset, bucket, f string, extra map[string]string) string {
	keys := map[string]string{
		"name":              name,
		"bootstrap.servers": e.kafka.Addr,
		"topics":            d.Topic,
		"flush.size":        strconv.Itoa(mainFlushSize),
		"format.class":      "bytes",
	}
	if bucket != "" {
		keys["s3.bucket.name"] = bucket
		keys["s3.region"] = e.s3.Region
		keys["store.url"] = e.s3.Endpoint
		keys["s3.path.style.access.enabled"] = "true"
		keys["aws.access.key.id"] = e.s3.AccessKey
		keys["aws.secret.access.key"] = e.s3.SecretKey
	}
	switch f {
	case fmtJSON:
		keys["format.class"] = "json"
	case fmtJSONGzip:
		keys["format.class"] = "json"
		keys["s3.compression.type"] = "gzip"
	case fmtJSONZstd:
		keys["format.class"] = "json"
		keys["s3.compression.type"] = "zstd"
	case fmtBytesGzip:
		keys["s3.compression.type"] = "gzip"
	}
	if typedFormat(f) {
		maps.Copy(keys, e.typedConfig(f))
	}
	maps.Copy(keys, envelopeConfig(f))
	for k, v := range extra {
		keys[k] = v
	}
	names := make([]string, 0, len(keys))
	for k := range keys {
		names = append(names, k)
	}
	sort.Strings(names)
	var sb strings.Builder
	for _, k := range names {
		fmt.Fprintf(&sb, "%s: %q\n", k, keys[k])
	}
	path := filepath.Join(e.dir, name+".yaml")
	if err := os.WriteFile(path, []byte(sb.String()), 0o600); err != nil {
		e.b.Fatal(err)
	}
	return path
}

// sinkRow runs `kafkas3 sink --once` over d into a fresh bucket.
// flushSize is flush.size; partSize is s3.part.size, 0 for the default.
// With local set it writes to a local directory (store.local.dir) instead
// of a bucket.
func (e *env) sinkRow(name string, d dataset, f string, flushSize int, partSize int64, local bool) *row {
	return e.sinkRowWith(name, d, f, flushSize, partSize, local, nil)
}

// sinkRowWith is sinkRow with more config keys (overriding the others).
func (e *env) sinkRowWith(name string, d dataset, f string, flushSize int, partSize int64, local bool, more map[string]string) *row {
	extra := map[string]string{"flush.size": strconv.Itoa(flushSize)}
	if partSize > 0 {
		extra["s3.part.size"] = strconv.FormatInt(partSize, 10)
	}
	var bucket, dir string
	if local {
		dir = filepath.Join(e.dir, fmt.Sprintf("local-%d", len(e.rows)))
		extra["store.local.dir"] = dir
	} else {
		var err error
		if bucket, err = e.s3.CreateBucketContext(e.ctx); err != nil {
			e.b.Fatal(err)
		}
	}
	maps.Copy(extra, more)
	cfg := e.config(fmt.Sprintf("bench-%s-%d", strings.NewReplacer("+", "-").Replace(f), len(e.rows)), d, bucket, f, extra)
	cmd := exec.Command(e.bin, "sink", "--config", cfg, "--once")
	if ca := e.caEnv(); ca != nil {
		cmd.Env = append(os.Environ(), ca...)
	}
	pr := e.run(name, cmd)
	m := regexp.MustCompile(`\brecords=(\d+)`).FindSubmatch(pr.stdout)
	if m == nil {
		e.b.Fatalf("%s: no summary on stdout: %q", name, pr.stdout)
	}
	if n, _ := strconv.ParseInt(string(m[1]), 10, 64); n != d.Records {
		e.b.Fatalf("%s: summary says %d records, want %d: %s", name, n, d.Records, pr.stdout)
	}
	var objs []object
	if local {
		objs = localObjects(e.b, dir)
	} else {
		objs = e.listObjects(bucket)
	}
	var stored int64
	for _, o := range objs {
		stored += o.size
	}
	if f == fmtBytes && stored != d.Records*(valueSize+1) {
		e.b.Fatalf("%s: %s%s holds %d bytes in %d objects, want %d (records × (value + newline))",
			name, bucket, dir, stored, len(objs), d.Records*(valueSize+1))
	}
	note := fmt.Sprintf("%d objects, %s stored", len(objs), human(stored))
	if typedFormat(f) {
		note += e.checkTypedObjects(name, d, f, bucket, objs)
	}
	// The restore rows read the archives from the main (plain HTTP) server.
	if _, ok := e.archives[f]; !ok && !local && d.Partitions == mainPartitions && e.s3.CAPath == "" {
		e.archives[f] = bucket
	}
	if !local && !typedFormat(f) && more == nil && !e.restoreOnly { // the in-process profile run has no converters
		e.profileSink(name, d, f, flushSize, partSize)
	}
	return e.add(&row{name: name, kind: kindSink, records: d.Records, bytes: d.Bytes(), wall: pr.wall, rssKiB: pr.rssKiB, cpu: pr.cpu,
		bucket: bucket, note: note})
}

// localObjects lists the regular files under dir.
func localObjects(b *testing.B, dir string) []object {
	var objs []object
	err := filepath.WalkDir(dir, func(path string, d os.DirEntry, err error) error {
		if err != nil || d.IsDir() {
			return err
		}
		if rel, _ := filepath.Rel(dir, path); strings.HasPrefix(filepath.ToSlash(rel), index.DefaultPrefix) {
			return nil // data objects only
		}
		info, err := d.Info()
		if err != nil {
			return err
		}
		objs = append(objs, object{key: path, size: info.Size()})
		return nil
	})
	if err != nil {
		b.Fatalf("list %s: %v", dir, err)
	}
	return objs
}

// checkEndOffsets fails unless topic holds want records in all.
func (e *env) checkEndOffsets(name, topic string, want int64) {
	cl, err := e.kafka.NewClient()
	if err != nil {
		e.b.Fatal(err)
	}
	defer cl.Close()
	ends, err := kadm.NewClient(cl).ListEndOffsets(e.ctx, topic)
	if err == nil {
		err = ends.Error()
	}
	if err != nil {
		e.b.Fatalf("%s: end offsets of %s: %v", name, topic, err)
	}
	var n int64
	ends.Each(func(o kadm.ListedOffset) { n += o.Offset })
	if n != want {
		e.b.Fatalf("%s: topic %s holds %d records, want %d", name, topic, n, want)
	}
}

type object struct {
	key  string
	size int64
}

func (e *env) listObjects(bucket string) []object {
	cl := e.s3.Client()
	var objs []object
	p := s3.NewListObjectsV2Paginator(cl, &s3.ListObjectsV2Input{Bucket: aws.String(bucket)})
	for p.HasMorePages() {
		page, err := p.NextPage(e.ctx)
		if err != nil {
			e.b.Fatalf("list bucket %s: %v", bucket, err)
		}
		for _, o := range page.Contents {
			if k := aws.ToString(o.Key); !strings.HasPrefix(k, index.DefaultPrefix) { // data objects only
				objs = append(objs, object{key: k, size: aws.ToInt64(o.Size)})
			}
		}
	}
	return objs
}

// checkMultipart fails unless the run wrote one object per partition and
// every object is larger than one part, so each went through a multipart
// upload while all partitions had an open object.
func (e *env) checkMultipart(r *row, d dataset, partSize int64) {
	objs := e.listObjects(r.bucket)
	if len(objs) != int(d.Partitions) {
		e.failures = append(e.failures, fmt.Sprintf("%s: %d objects, want one per partition (%d)", r.name, len(objs), d.Partitions))
		return
	}
	smallest := objs[0].size
	for _, o := range objs {
		if o.size <= partSize {
			e.failures = append(e.failures, fmt.Sprintf("%s: object %s is %d bytes, not past one part of %d: multipart not exercised",
				r.name, o.key, o.size, partSize))
			r.note += ", **multipart not exercised**"
			return
		}
		smallest = min(smallest, o.size)
	}
	r.note += fmt.Sprintf(", every object > 1 part (smallest %s)", human(smallest))
}

// cpuTimes is the CPU time a run used: the measured process itself, and the
// broker and versitygw while it ran (they share the machine's cores).
type cpuTimes struct {
	self, broker, s3 time.Duration
}

// findPID returns the process whose command line contains arg, or 0.
func findPID(arg string) int {
	dirs, _ := filepath.Glob("/proc/[0-9]*")
	for _, d := range dirs {
		cmdline, err := os.ReadFile(filepath.Join(d, "cmdline"))
		if err != nil || !bytes.Contains(cmdline, []byte(arg)) {
			continue
		}
		if pid, err := strconv.Atoi(filepath.Base(d)); err == nil && pid != os.Getpid() {
			return pid
		}
	}
	return 0
}

// clockTicks is USER_HZ, the unit of /proc/<pid>/stat times; 100 on Linux.
const clockTicks = 100

// procCPU returns the user+system CPU time of pid so far, 0 if unknown.
func procCPU(pid int) time.Duration {
	if pid == 0 {
		return 0
	}
	b, err := os.ReadFile(fmt.Sprintf("/proc/%d/stat", pid))
	if err != nil {
		return 0
	}
	// Fields after the command name, which is in parentheses and may
	// contain spaces: state is field 3, utime 14, stime 15.
	i := bytes.LastIndexByte(b, ')')
	if i < 0 {
		return 0
	}
	f := strings.Fields(string(b[i+1:]))
	if len(f) < 13 {
		return 0
	}
	ut, _ := strconv.ParseInt(f[11], 10, 64)
	st, _ := strconv.ParseInt(f[12], 10, 64)
	return time.Duration(ut+st) * time.Second / clockTicks
}
