//go:build integration

package e2e

import (
	"bufio"
	"bytes"
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"io"
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
	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kgo"
	"github.com/twmb/franz-go/pkg/kmsg"

	"github.com/kafkas3/kafkas3/internal/testbed"
)

// binPath is the kafkas3 binary built by TestMain for this test process.
var binPath string

func TestMain(m *testing.M) { os.Exit(run(m)) }

// binEnv names a prebuilt kafkas3 binary to test instead of building one.
const binEnv = "KAFKAS3_E2E_BIN"

func run(m *testing.M) int {
	defer sharedAuth.close()
	if p := os.Getenv(binEnv); p != "" {
		binPath = p
		fmt.Fprintf(os.Stderr, "e2e: testing %s (%s)\n", p, binEnv)
		return testbed.Main(m)
	}
	dir, err := os.MkdirTemp("", "kafkas3-e2e-bin-")
	if err != nil {
		fmt.Fprintln(os.Stderr, "e2e:", err)
		return 1
	}
	defer os.RemoveAll(dir)
	binPath = filepath.Join(dir, "kafkas3")
	start := time.Now()
	build := exec.Command("go", "build", "-o", binPath, "github.com/kafkas3/kafkas3")
	build.Env = append(os.Environ(), "CGO_ENABLED=0")
	if out, err := build.CombinedOutput(); err != nil {
		fmt.Fprintf(os.Stderr, "e2e: go build kafkas3: %v\n%s", err, out)
		return 1
	}
	fmt.Fprintf(os.Stderr, "e2e: built %s in %v\n", binPath, time.Since(start).Round(time.Millisecond))
	return testbed.Main(m)
}

// bed is the test bed one test uses.
type bed struct {
	k *testbed.KafkaBroker
	s *testbed.S3Server
}

func newBed(t *testing.T) *bed {
	t.Helper()
	return &bed{k: testbed.Kafka(t), s: testbed.S3(t)}
}

// conf is a flat Confluent-style sink config.
type conf map[string]string

// sinkConf is the config of a JSON sink of topic into bucket.
func (b *bed) sinkConf(name, topic, bucket string) conf {
	return conf{
		"name":                         name,
		"bootstrap.servers":            b.k.Addr,
		"topics":                       topic,
		"flush.size":                   "1000",
		"format.class":                 "io.confluent.connect.s3.format.json.JsonFormat",
		"s3.bucket.name":               bucket,
		"s3.region":                    b.s.Region,
		"store.url":                    b.s.Endpoint,
		"s3.path.style.access.enabled": "true",
		"aws.access.key.id":            b.s.AccessKey,
		"aws.secret.access.key":        b.s.SecretKey,
		"s3.part.size":                 "5242880",
	}
}

func (c conf) with(kv ...string) conf {
	out := conf{}
	for k, v := range c {
		out[k] = v
	}
	for i := 0; i+1 < len(kv); i += 2 {
		out[kv[i]] = kv[i+1]
	}
	return out
}

// write stores the config as a flat JSON file and returns its path.
func (c conf) write(t *testing.T) string {
	t.Helper()
	b, err := json.MarshalIndent(c, "", "  ")
	if err != nil {
		t.Fatal(err)
	}
	f, err := os.CreateTemp(t.TempDir(), "sink-*.json")
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	if _, err := f.Write(b); err != nil {
		t.Fatal(err)
	}
	return f.Name()
}

// proc is one running `kafkas3 sink` subprocess.
type proc struct {
	t       *testing.T
	name    string
	cmd     *exec.Cmd
	started time.Time
	outPath string
	errPath string
	tmpDir  string
	done    chan struct{}
	waitErr error
	ended   time.Time
}

// startSink starts `kafkas3 sink --config cfgPath args...`. Its stdout and
// stderr go to files; TMPDIR (the spool dir) is a directory of its own.
func startSink(t *testing.T, label, cfgPath string, args ...string) *proc {
	t.Helper()
	return startKafkas3(t, label, "sink", cfgPath, args...)
}

// startKafkas3 starts `kafkas3 <command> --config cfgPath args...` with
// stdout and stderr in files, its own TMPDIR, no AWS_ or KAFKAS3_
// environment, and death with the test process.
func startKafkas3(t *testing.T, label, command, cfgPath string, args ...string) *proc {
	t.Helper()
	return startKafkas3Env(t, label, command, cfgPath, nil, args...)
}

// startKafkas3Env is startKafkas3 with env (NAME=value entries) added to
// the process's environment.
func startKafkas3Env(t *testing.T, label, command, cfgPath string, env []string, args ...string) *proc {
	t.Helper()
	dir := t.TempDir()
	p := &proc{t: t, name: label, outPath: filepath.Join(dir, "stdout"), errPath: filepath.Join(dir, "stderr"),
		tmpDir: filepath.Join(dir, "tmp"), done: make(chan struct{})}
	if err := os.Mkdir(p.tmpDir, 0o755); err != nil {
		t.Fatal(err)
	}
	stdout, err := os.Create(p.outPath)
	if err != nil {
		t.Fatal(err)
	}
	stderr, err := os.Create(p.errPath)
	if err != nil {
		t.Fatal(err)
	}
	p.cmd = exec.Command(binPath, append([]string{command, "--config", cfgPath}, args...)...)
	p.cmd.Stdout, p.cmd.Stderr = stdout, stderr
	p.cmd.Env = append(append(filterEnv(os.Environ(), "AWS_", "KAFKAS3_"), "TMPDIR="+p.tmpDir), env...)
	p.cmd.SysProcAttr = &syscall.SysProcAttr{Pdeathsig: syscall.SIGKILL}
	if err := p.cmd.Start(); err != nil {
		t.Fatalf("start %s: %v", label, err)
	}
	p.started = time.Now()
	go func() {
		p.waitErr = p.cmd.Wait()
		p.ended = time.Now()
		stdout.Close()
		stderr.Close()
		close(p.done)
	}()
	t.Cleanup(func() {
		select {
		case <-p.done:
		default:
			_ = p.cmd.Process.Kill()
			<-p.done
		}
	})
	return p
}

func filterEnv(env []string, prefixes ...string) []string {
	var out []string
next:
	for _, kv := range env {
		for _, p := range prefixes {
			if strings.HasPrefix(kv, p) {
				continue next
			}
		}
		out = append(out, kv)
	}
	return out
}

func (p *proc) exited() bool {
	select {
	case <-p.done:
		return true
	default:
		return false
	}
}

// wait waits up to timeout for the process to exit and returns its exit
// code, or fails the test (after killing it).
func (p *proc) wait(timeout time.Duration) int {
	p.t.Helper()
	select {
	case <-p.done:
	case <-time.After(timeout):
		_ = p.cmd.Process.Kill()
		<-p.done
		p.t.Fatalf("%s did not exit within %v\n%s", p.name, timeout, p.logs())
	}
	return p.cmd.ProcessState.ExitCode()
}

func (p *proc) signal(sig syscall.Signal) {
	p.t.Helper()
	if err := p.cmd.Process.Signal(sig); err != nil && !p.exited() {
		p.t.Fatalf("signal %v to %s: %v", sig, p.name, err)
	}
}

func (p *proc) stdout() string { b, _ := os.ReadFile(p.outPath); return string(b) }
func (p *proc) stderr() string { b, _ := os.ReadFile(p.errPath); return string(b) }

// logs renders the tail of stdout and stderr for failure messages.
func (p *proc) logs() string {
	tail := func(s string, n int) string {
		lines := strings.Split(strings.TrimRight(s, "\n"), "\n")
		if len(lines) > n {
			lines = lines[len(lines)-n:]
		}
		return strings.Join(lines, "\n")
	}
	return fmt.Sprintf("--- %s stdout ---\n%s\n--- %s stderr (tail) ---\n%s", p.name, tail(p.stdout(), 10), p.name, tail(p.stderr(), 30))
}

// spoolLeft counts the files left in the process's TMPDIR.
func (p *proc) spoolLeft() int {
	es, _ := os.ReadDir(p.tmpDir)
	return len(es)
}

// runSink runs the sink to completion and returns its exit code.
func runSink(t *testing.T, label, cfgPath string, timeout time.Duration, args ...string) (*proc, int) {
	t.Helper()
	p := startSink(t, label, cfgPath, args...)
	code := p.wait(timeout)
	return p, code
}

// runOnce runs `sink --once` and fails the test unless it exits 0; it
// returns the parsed summary line.
func runOnce(t *testing.T, label, cfgPath string) (summary, *proc) {
	t.Helper()
	p, code := runSink(t, label, cfgPath, 3*time.Minute, "--once")
	if code != 0 {
		t.Fatalf("%s: exit code %d\n%s", label, code, p.logs())
	}
	sum, err := parseSummary(p.stdout())
	if err != nil {
		t.Fatalf("%s: %v\n%s", label, err, p.logs())
	}
	t.Logf("%s: %s (wall %v)", label, sum.line, p.ended.Sub(p.started).Round(time.Millisecond))
	return sum, p
}

// summary is the parsed "kafkas3 sink: topics=... seconds=..." line.
type summary struct {
	line       string
	topics     string
	partitions int
	records    int64
	objects    int64
	bytes      int64
	seconds    float64
	// indexObjects is index_objects: archive index objects written.
	indexObjects int64
	// lost is lost: offsets lost before archiving.
	lost int64
}

var summaryRE = regexp.MustCompile(`(?m)^kafkas3 sink: topics=(\S*) partitions=(\d+) records=(\d+) objects=(\d+) bytes=(\d+) seconds=([0-9.]+) skipped=(\d+) lost=(\d+) index_objects=(\d+)(?: schema_objects=\d+ unknown_schema_ids=\d+)?$`)

func parseSummary(stdout string) (summary, error) {
	m := summaryRE.FindAllStringSubmatch(stdout, -1)
	if len(m) != 1 {
		return summary{}, fmt.Errorf("want exactly one summary line on stdout, got %d in %q", len(m), stdout)
	}
	s := summary{line: strings.TrimPrefix(m[0][0], "kafkas3 sink: "), topics: m[0][1]}
	s.partitions, _ = strconv.Atoi(m[0][2])
	s.records, _ = strconv.ParseInt(m[0][3], 10, 64)
	s.objects, _ = strconv.ParseInt(m[0][4], 10, 64)
	s.bytes, _ = strconv.ParseInt(m[0][5], 10, 64)
	s.seconds, _ = strconv.ParseFloat(m[0][6], 64)
	s.lost, _ = strconv.ParseInt(m[0][8], 10, 64)
	s.indexObjects, _ = strconv.ParseInt(m[0][9], 10, 64)
	return s, nil
}

// value is the JSON value of record i of partition p: about 100 bytes.
func value(p int32, i int) []byte {
	pad := strings.Repeat(string(rune('a'+(i+int(p))%26)), 40+i%17)
	return fmt.Appendf(nil, `{"p":%d,"i":%d,"pad":"%s"}`, p, i, pad)
}

func key(p int32, i int) []byte { return fmt.Appendf(nil, "k-%d-%d", p, i) }

// produce writes n records to each partition of topic, starting at index
// from, with key(p,i) and val(p,i), asynchronously, and flushes.
func (b *bed) produce(t *testing.T, topic string, partitions int32, from, n int, val func(int32, int) []byte) {
	t.Helper()
	start := time.Now()
	if err := b.produceErr(topic, partitions, from, n, val); err != nil {
		t.Fatal(err)
	}
	t.Logf("produced %d records to %s (%d partitions) in %v", n*int(partitions), topic, partitions, time.Since(start).Round(time.Millisecond))
}

// produceErr is produce for any goroutine.
func (b *bed) produceErr(topic string, partitions int32, from, n int, val func(int32, int) []byte) error {
	cl, err := b.k.NewClient(kgo.RecordPartitioner(kgo.ManualPartitioner()), kgo.ProducerLinger(5*time.Millisecond),
		kgo.MaxBufferedRecords(50_000))
	if err != nil {
		return err
	}
	defer cl.Close()
	var mu sync.Mutex
	var firstErr error
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	for i := from; i < from+n; i++ {
		for p := range partitions {
			r := &kgo.Record{Topic: topic, Partition: p, Key: key(p, i), Value: val(p, i)}
			cl.Produce(ctx, r, func(_ *kgo.Record, err error) {
				if err != nil {
					mu.Lock()
					if firstErr == nil {
						firstErr = err
					}
					mu.Unlock()
				}
			})
		}
	}
	if err := cl.Flush(ctx); err != nil {
		return fmt.Errorf("flush to %s: %w", topic, err)
	}
	if firstErr != nil {
		return fmt.Errorf("produce to %s: %w", topic, firstErr)
	}
	return nil
}

// object is one stored object.
type object struct {
	size int64
	etag string
	sum  string // sha256 hex of the content
	data []byte
}

// snapshot reads every object of bucket through the S3 API.
func (b *bed) snapshot(t *testing.T, bucket string) map[string]object {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 3*time.Minute)
	defer cancel()
	cl := b.s.Client()
	out := map[string]object{}
	for _, oi := range b.list(t, bucket) {
		res, err := cl.GetObject(ctx, &s3.GetObjectInput{Bucket: aws.String(bucket), Key: aws.String(oi.key)})
		if err != nil {
			t.Fatalf("get s3://%s/%s: %v", bucket, oi.key, err)
		}
		data, err := io.ReadAll(res.Body)
		res.Body.Close()
		if err != nil {
			t.Fatalf("read s3://%s/%s: %v", bucket, oi.key, err)
		}
		sum := sha256.Sum256(data)
		out[oi.key] = object{size: int64(len(data)), etag: oi.etag, sum: hex.EncodeToString(sum[:]), data: data}
	}
	return out
}

// indexPrefix is where the sink writes its archive index by default
// (kafkas3.index.prefix), outside topics.dir.
const indexPrefix = "_kafkas3/"

// isSnapshotKey tells the keys of the sink's group offset snapshots
// (offsets.snapshot.interval.ms). Their keys and contents name the wall time
// and the groups of the moment, so two runs over the same records never
// write the same ones: list and snapshot leave them out, and the tests of
// group offsets read them on their own.
func isSnapshotKey(k string) bool { return strings.HasPrefix(k, indexPrefix+"snapshots/") }

// isCheckpointKey tells the index checkpoints (<prefix>checkpoints/, and a
// generation's). They are derived data, written at a run's first commit,
// every kafkas3.index.checkpoint.interval index objects and at the end of
// --once, so two runs over the same records (a crashed one and a clean
// one) write them at other commits: list and snapshot leave them out like
// the snapshots; the tests that compare archives check instead that what
// the index says, read through the checkpoints, is the same (verifyClean),
// and TestIntegrationIndexCheckpoints tests them on their own.
func isCheckpointKey(k string) bool {
	rest, ok := strings.CutPrefix(k, indexPrefix)
	if !ok {
		return false
	}
	if g, after, cut := strings.Cut(rest, "/"); cut && strings.HasPrefix(g, "generation=") {
		rest = after
	}
	return strings.HasPrefix(rest, "checkpoints/")
}

// isIndexKey tells the keys of the archive index.
func isIndexKey(k string) bool { return strings.HasPrefix(k, indexPrefix) }

// isDescriptionKey tells the sink's topic descriptions (under
// <prefix>topics/, named by the wall time): list and snapshot leave them
// out like the offset snapshots; the topic config tests read them on
// their own.
func isDescriptionKey(k string) bool { return strings.HasPrefix(k, indexPrefix+"topics/") }

// splitIndex splits a snapshot into the archive's data objects and its
// index objects (under <prefix>index/).
func splitIndex(objs map[string]object) (data, idx map[string]object) {
	data, idx = map[string]object{}, map[string]object{}
	for k, o := range objs {
		if strings.HasPrefix(k, indexPrefix+"index/") {
			idx[k] = o
		} else if isIndexKey(k) {
			continue
		} else {
			data[k] = o
		}
	}
	return data, idx
}

// writerRE matches the writer token of an index object key.
var writerRE = regexp.MustCompile(`-[0-9a-f]{12}\.jsonl$`)

// withoutWriter returns objs with the writer token cut from index keys.
func withoutWriter(objs map[string]object) map[string]object {
	out := make(map[string]object, len(objs))
	for k, o := range objs {
		if isIndexKey(k) {
			k = writerRE.ReplaceAllString(k, ".jsonl")
		}
		out[k] = o
	}
	return out
}

type listed struct {
	key  string
	size int64
	etag string
	mod  time.Time
}

// list lists bucket through the S3 API, in key order (the archive index
// included, see splitIndex; the offset snapshots and topic descriptions
// not, see isSnapshotKey).
func (b *bed) list(t *testing.T, bucket string) []listed {
	t.Helper()
	out, err := b.listErr(bucket)
	if err != nil {
		t.Fatal(err)
	}
	return out
}

func (b *bed) listErr(bucket string) ([]listed, error) {
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	var out []listed
	pg := s3.NewListObjectsV2Paginator(b.s.Client(), &s3.ListObjectsV2Input{Bucket: aws.String(bucket)})
	for pg.HasMorePages() {
		page, err := pg.NextPage(ctx)
		if err != nil {
			return nil, fmt.Errorf("list s3://%s: %w", bucket, err)
		}
		for _, o := range page.Contents {
			if isSnapshotKey(aws.ToString(o.Key)) || isDescriptionKey(aws.ToString(o.Key)) || isCheckpointKey(aws.ToString(o.Key)) {
				continue // wall-time stamped; see isSnapshotKey
			}
			out = append(out, listed{key: aws.ToString(o.Key), size: aws.ToInt64(o.Size), etag: aws.ToString(o.ETag), mod: aws.ToTime(o.LastModified)})
		}
	}
	return out, nil
}

// pendingUploads counts the incomplete multipart uploads of bucket.
func (b *bed) pendingUploads(t *testing.T, bucket string) int {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	res, err := b.s.Client().ListMultipartUploads(ctx, &s3.ListMultipartUploadsInput{Bucket: aws.String(bucket)})
	if err != nil {
		t.Fatalf("list multipart uploads of %s: %v", bucket, err)
	}
	return len(res.Uploads)
}

// sameObjects fails unless got and want hold the same keys with the same
// bytes. Index object keys name the writer's group (index.WriterOf), which
// differs between the runs compared (a clean run has a group of its own),
// so they are compared without it.
func sameObjects(t *testing.T, what string, got, want map[string]object) {
	t.Helper()
	got, want = withoutWriter(got), withoutWriter(want)
	var missing, extra, differ []string
	for k, w := range want {
		g, ok := got[k]
		switch {
		case !ok:
			missing = append(missing, k)
		case g.sum != w.sum:
			differ = append(differ, fmt.Sprintf("%s (%d bytes sha256 %.12s, want %d bytes sha256 %.12s)", k, g.size, g.sum, w.size, w.sum))
		}
	}
	for k := range got {
		if _, ok := want[k]; !ok {
			extra = append(extra, k)
		}
	}
	sort.Strings(missing)
	sort.Strings(extra)
	sort.Strings(differ)
	if len(missing)+len(extra)+len(differ) > 0 {
		t.Fatalf("%s: %d objects, clean run %d: %d missing %v, %d extra %v, %d differ %v", what, len(got), len(want),
			len(missing), head(missing), len(extra), head(extra), len(differ), head(differ))
	}
}

func head(s []string) []string {
	if len(s) > 5 {
		return append(s[:5:5], "...")
	}
	return s
}

// keyRE parses a default-layout key: topics/<t>/partition=<p>/<t>+<p>+<offset>.<ext>.
var keyRE = regexp.MustCompile(`^topics/([^/]+)/partition=(\d+)/([^/+]+)\+(\d+)\+(\d{10})\.(json|json\.gz|bin|bin\.gz)$`)

// checkJSONArchive checks that objs (default layout, JSON format, values
// from value()) hold offsets from[p]..ends[p]-1 of every partition exactly
// once, in order, with no gaps, each object holding at most flush records.
// It returns the number of records.
func checkJSONArchive(t *testing.T, objs map[string]object, topic string, from, ends map[int32]int64, flush int) int64 {
	t.Helper()
	return checkJSONValues(t, objs, topic, from, ends, flush, value)
}

// checkJSONValues is checkJSONArchive for records produced with val.
func checkJSONValues(t *testing.T, objs map[string]object, topic string, from, ends map[int32]int64, flush int, val func(int32, int) []byte) int64 {
	t.Helper()
	type piece struct {
		start int64
		data  []byte
		key   string
	}
	byPart := map[int32][]piece{}
	for k, o := range objs {
		if isIndexKey(k) {
			continue // the archive index; compared by the callers that snapshot it
		}
		m := keyRE.FindStringSubmatch(k)
		if m == nil || m[1] != topic || m[3] != topic || m[2] != m[4] || m[6] != "json" {
			t.Fatalf("unexpected key %q (topic %s)", k, topic)
		}
		p, _ := strconv.Atoi(m[2])
		start, _ := strconv.ParseInt(m[5], 10, 64)
		byPart[int32(p)] = append(byPart[int32(p)], piece{start, o.data, k})
	}
	var total int64
	for p, end := range ends {
		ps := byPart[p]
		sort.Slice(ps, func(i, j int) bool { return ps[i].start < ps[j].start })
		next := from[p]
		for _, pc := range ps {
			if pc.start != next {
				t.Fatalf("partition %d: object %s starts at %d, want %d (gap or overlap)", p, pc.key, pc.start, next)
			}
			sc := bufio.NewScanner(bytes.NewReader(pc.data))
			sc.Buffer(make([]byte, 1<<20), 16<<20)
			n := 0
			for sc.Scan() {
				var v struct {
					P int32 `json:"p"`
					I int64 `json:"i"`
				}
				if err := json.Unmarshal(sc.Bytes(), &v); err != nil {
					t.Fatalf("%s line %d: %v: %q", pc.key, n+1, err, sc.Bytes())
				}
				if v.P != p || v.I != next {
					t.Fatalf("%s line %d: record p=%d i=%d, want p=%d i=%d", pc.key, n+1, v.P, v.I, p, next)
				}
				if want := val(p, int(next)); !bytes.Equal(sc.Bytes(), want) {
					t.Fatalf("%s line %d: %.80q, want the produced value %.80q", pc.key, n+1, sc.Bytes(), want)
				}
				next++
				n++
			}
			if err := sc.Err(); err != nil {
				t.Fatalf("%s: %v", pc.key, err)
			}
			if n == 0 || n > flush {
				t.Fatalf("%s holds %d records, want 1..%d (flush.size)", pc.key, n, flush)
			}
		}
		if next != end {
			t.Fatalf("partition %d: archive ends at offset %d, want %d", p, next, end)
		}
		total += next - from[p]
	}
	for p := range byPart {
		if _, ok := ends[p]; !ok {
			t.Fatalf("objects for unexpected partition %d", p)
		}
	}
	return total
}

// endOffsets returns the end offset of every partition of topic.
func (b *bed) endOffsets(t *testing.T, topic string) map[int32]int64 {
	t.Helper()
	adm := kadm.NewClient(b.k.Client(t))
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	ends, err := adm.ListEndOffsets(ctx, topic)
	if err != nil {
		t.Fatal(err)
	}
	out := map[int32]int64{}
	ends.Each(func(o kadm.ListedOffset) { out[o.Partition] = o.Offset })
	return out
}

// committed returns group's committed offsets for topic (none when the group
// does not exist).
func (b *bed) committed(t *testing.T, group, topic string) map[int32]int64 {
	t.Helper()
	out, err := b.committedErr(group, topic)
	if err != nil {
		t.Fatal(err)
	}
	return out
}

func (b *bed) committedErr(group, topic string) (map[int32]int64, error) {
	cl, err := b.k.NewClient()
	if err != nil {
		return nil, err
	}
	defer cl.Close()
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	offs, err := kadm.NewClient(cl).FetchOffsets(ctx, group)
	// A fresh broker answers COORDINATOR_NOT_AVAILABLE while it creates
	// its offsets topic.
	for kerr.IsRetriable(err) && ctx.Err() == nil {
		time.Sleep(250 * time.Millisecond)
		offs, err = kadm.NewClient(cl).FetchOffsets(ctx, group)
	}
	if errors.Is(err, kerr.GroupIDNotFound) {
		return map[int32]int64{}, nil
	}
	if err != nil {
		return nil, fmt.Errorf("fetch offsets of group %s: %w", group, err)
	}
	out := map[int32]int64{}
	offs.Each(func(o kadm.OffsetResponse) {
		if o.Topic == topic && o.Err == nil && o.At >= 0 {
			out[o.Partition] = o.At
		}
	})
	return out, nil
}

// evictMembers removes every member of group with LeaveGroup requests on
// their behalf, as Kafka's admin tools do for members that died without
// leaving. It returns how many were removed.
func (b *bed) evictMembers(t *testing.T, group string) int {
	t.Helper()
	cl := b.k.Client(t)
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	groups, err := kadm.NewClient(cl).DescribeGroups(ctx, group)
	if err != nil {
		t.Fatalf("describe group %s: %v", group, err)
	}
	g := groups[group]
	if g.Err != nil {
		t.Fatalf("describe group %s: %v", group, g.Err)
	}
	if len(g.Members) == 0 {
		return 0
	}
	req := kmsg.NewPtrLeaveGroupRequest()
	req.Group = group
	for _, m := range g.Members {
		lm := kmsg.NewLeaveGroupRequestMember()
		lm.MemberID = m.MemberID
		req.Members = append(req.Members, lm)
	}
	resp, err := req.RequestWith(ctx, cl)
	if err != nil {
		t.Fatalf("leave group %s: %v", group, err)
	}
	if err := kerr.ErrorForCode(resp.ErrorCode); err != nil {
		t.Fatalf("leave group %s: %v", group, err)
	}
	for _, m := range resp.Members {
		if err := kerr.ErrorForCode(m.ErrorCode); err != nil {
			t.Fatalf("leave group %s member %s: %v", group, m.MemberID, err)
		}
	}
	return len(g.Members)
}

// awsCLI runs the aws CLI against the test S3 server and returns stdout.
func (b *bed) awsCLI(t *testing.T, args ...string) string {
	t.Helper()
	aws := testbed.Tool(t, "aws", "apt-get install awscli")
	dir := t.TempDir()
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	cmd := exec.CommandContext(ctx, aws, append(args, "--endpoint-url", b.s.Endpoint)...)
	cmd.Env = append(filterEnv(os.Environ(), "AWS_"), b.s.Env()...)
	cmd.Env = append(cmd.Env,
		"AWS_CONFIG_FILE="+filepath.Join(dir, "no-config"),
		"AWS_SHARED_CREDENTIALS_FILE="+filepath.Join(dir, "no-credentials"),
		"AWS_EC2_METADATA_DISABLED=true", "AWS_PAGER=")
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	out, err := cmd.Output()
	if err != nil {
		t.Fatalf("aws %s: %v\n%s", strings.Join(args, " "), err, stderr.String())
	}
	return string(out)
}

// awsListKeys lists bucket with `aws s3 ls --recursive` and returns the keys
// with their sizes.
func (b *bed) awsListKeys(t *testing.T, bucket string) map[string]int64 {
	t.Helper()
	out := b.awsCLI(t, "s3", "ls", "--recursive", "s3://"+bucket+"/")
	keys := map[string]int64{}
	for _, line := range strings.Split(strings.TrimSpace(out), "\n") {
		if line == "" {
			continue
		}
		// 2024-01-01 12:00:00     123456 topics/t/partition=0/t+0+0000000000.json
		f := strings.Fields(line)
		if len(f) < 4 {
			t.Fatalf("aws s3 ls: unexpected line %q", line)
		}
		size, err := strconv.ParseInt(f[2], 10, 64)
		if err != nil {
			t.Fatalf("aws s3 ls: unexpected line %q", line)
		}
		keys[strings.Join(f[3:], " ")] = size
	}
	return keys
}

// checkAWSList fails unless `aws s3 ls --recursive` lists exactly objs.
func (b *bed) checkAWSList(t *testing.T, bucket string, objs map[string]object) {
	t.Helper()
	keys := b.awsListKeys(t, bucket)
	for k := range keys {
		if isSnapshotKey(k) || isDescriptionKey(k) || isCheckpointKey(k) {
			delete(keys, k) // left out of snapshot too (wall-time keys, checkpoints)
		}
	}
	if len(keys) != len(objs) {
		t.Fatalf("aws s3 ls lists %d keys in %s, the S3 API %d", len(keys), bucket, len(objs))
	}
	for k, o := range objs {
		if size, ok := keys[k]; !ok || size != o.size {
			t.Fatalf("aws s3 ls: key %s size %d (listed %v), want %d", k, size, ok, o.size)
		}
	}
}

// waitFor polls cond every interval until it returns true or timeout passes.
func waitFor(timeout, interval time.Duration, cond func() bool) bool {
	deadline := time.Now().Add(timeout)
	for {
		if cond() {
			return true
		}
		if time.Now().After(deadline) {
			return false
		}
		time.Sleep(interval)
	}
}

// perPartition returns a map with n for each of partitions.
func perPartition(partitions int32, n int64) map[int32]int64 {
	m := map[int32]int64{}
	for p := range partitions {
		m[p] = n
	}
	return m
}

// commitGroup commits group's offsets of topic's partitions (retrying
// while the fresh coordinator is not ready).
func (b *bed) commitGroup(t *testing.T, group, topic string, offsets map[int32]int64) {
	t.Helper()
	adm := kadm.NewClient(b.k.Client(t))
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	var offs kadm.Offsets
	for p, at := range offsets {
		offs.AddOffset(topic, p, at, -1)
	}
	if err := waitForErr(30*time.Second, func() error {
		res, err := adm.CommitOffsets(ctx, group, offs)
		if err == nil {
			err = res.Error()
		}
		return err
	}); err != nil {
		t.Fatalf("commit offsets for %s: %v", group, err)
	}
}

// verifyClean runs `kafkas3 verify --json` with cfg and fails unless the
// archive is clean with records records: what the index says, read through
// the checkpoints of the run, accounts for every object.
func verifyClean(t *testing.T, what, cfg string, records int64) {
	t.Helper()
	p := startKafkas3(t, what+": verify", "verify", cfg, "--json")
	if code := p.wait(2 * time.Minute); code != 0 {
		t.Fatalf("%s: verify exit %d\n%s\n%s", what, code, p.stdout(), p.logs())
	}
	var rep struct {
		Clean      bool `json:"clean"`
		Partitions []struct {
			Records int64 `json:"records"`
		} `json:"partitions"`
	}
	if err := json.Unmarshal([]byte(p.stdout()), &rep); err != nil {
		t.Fatalf("%s: verify --json: %v\n%s", what, err, p.stdout())
	}
	var n int64
	for _, part := range rep.Partitions {
		n += part.Records
	}
	if !rep.Clean || n != records {
		t.Fatalf("%s: verify clean %v with %d records, want clean with %d\n%s", what, rep.Clean, n, records, p.stdout())
	}
	t.Logf("%s: verify clean, %d records", what, n)
}
