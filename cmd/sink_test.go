package cmd

import (
	"bytes"
	"context"
	"fmt"
	"hash/crc32"
	"io/fs"
	"os"
	"path/filepath"
	"slices"
	"sort"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/kafkas3/kafkas3/index"
	"github.com/twmb/franz-go/pkg/kadm"
	"github.com/twmb/franz-go/pkg/kfake"
	"github.com/twmb/franz-go/pkg/kgo"
)

// This file holds the command-level tests of `kafkas3 sink` and the helpers
// the sink, source and demo tests share: an in-process broker, a producer,
// a topic reader and a CLI runner.

// syncBuffer is an io.Writer safe for the goroutines a command starts.
type syncBuffer struct {
	mu sync.Mutex
	b  bytes.Buffer
}

func (s *syncBuffer) Write(p []byte) (int, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.Write(p)
}

func (s *syncBuffer) String() string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.String()
}

// cliResult is one command run.
type cliResult struct {
	code     int
	out, err string
}

// runCLI runs the CLI in-process with args, as main does.
func runCLI(ctx context.Context, args ...string) cliResult {
	var out, errb syncBuffer
	code := Run(ctx, args, IO{Out: &out, Err: &errb})
	return cliResult{code: code, out: out.String(), err: errb.String()}
}

// mustRun runs the CLI and fails the test unless it exits with want.
func mustRun(t *testing.T, ctx context.Context, want int, args ...string) cliResult {
	t.Helper()
	r := runCLI(ctx, args...)
	if r.code != want {
		t.Fatalf("kafkas3 %s: exit %d, want %d\nstdout:\n%s\nstderr:\n%s", strings.Join(args, " "), r.code, want, r.out, r.err)
	}
	return r
}

func cliContext(t *testing.T) context.Context {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 90*time.Second)
	t.Cleanup(cancel)
	return ctx
}

// startKafka starts an in-process broker with topics of n partitions each
// and returns its address.
func startKafka(t *testing.T, n int32, topics ...string) string {
	t.Helper()
	opts := []kfake.Opt{kfake.NumBrokers(1)}
	if len(topics) > 0 {
		opts = append(opts, kfake.SeedTopics(n, topics...))
	}
	c, err := kfake.NewCluster(opts...)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(c.Close)
	return strings.Join(c.ListenAddrs(), ",")
}

// produceJSON produces n records with JSON values {"topic":...,"i":i} to
// topic, spread round-robin over parts partitions, and returns them by
// partition in produce order.
func produceJSON(t *testing.T, ctx context.Context, brokers, topic string, parts int32, n int) map[int32][]string {
	t.Helper()
	cl, err := kgo.NewClient(kgo.SeedBrokers(strings.Split(brokers, ",")...), kgo.RecordPartitioner(kgo.ManualPartitioner()))
	if err != nil {
		t.Fatal(err)
	}
	defer cl.Close()
	want := map[int32][]string{}
	recs := make([]*kgo.Record, n)
	for i := range recs {
		p := int32(i) % parts
		v := fmt.Sprintf(`{"topic":%q,"i":%d}`, topic, i)
		recs[i] = &kgo.Record{Topic: topic, Partition: p, Value: []byte(v)}
		want[p] = append(want[p], v)
	}
	if err := cl.ProduceSync(ctx, recs...).FirstErr(); err != nil {
		t.Fatalf("produce to %s: %v", topic, err)
	}
	return want
}

// readTopic reads every record of topic (up to the end offsets seen at the
// call) and returns the values by partition, in offset order. It checks
// the offsets are contiguous from zero.
func readTopic(t *testing.T, ctx context.Context, brokers, topic string) map[int32][]string {
	t.Helper()
	got := map[int32][]string{}
	for p, recs := range readRecords(t, ctx, brokers, topic) {
		for i, r := range recs {
			if r.Offset != int64(i) {
				t.Errorf("%s/%d: offset %d, want %d", topic, p, r.Offset, i)
			}
			got[p] = append(got[p], string(r.Value))
		}
	}
	return got
}

// topicExists reports whether topic exists on the broker.
func topicExists(t *testing.T, ctx context.Context, brokers, topic string) bool {
	t.Helper()
	cl, err := kgo.NewClient(kgo.SeedBrokers(strings.Split(brokers, ",")...))
	if err != nil {
		t.Fatal(err)
	}
	defer cl.Close()
	details, err := kadm.NewClient(cl).ListTopics(ctx, topic)
	if err != nil {
		t.Fatal(err)
	}
	d, ok := details[topic]
	return ok && d.Err == nil
}

// objectKeys lists the files under dir as slash-separated keys, sorted,
// without the archive index (index.DefaultPrefix; see indexKeys).
func objectKeys(t *testing.T, dir string) []string {
	t.Helper()
	var keys []string
	for _, k := range allKeys(t, dir) {
		if !strings.HasPrefix(k, index.DefaultPrefix) {
			keys = append(keys, k)
		}
	}
	return keys
}

// indexKeys lists the archive index objects under dir, sorted.
func indexKeys(t *testing.T, dir string) []string {
	return keysUnder(t, dir, index.Dir(index.DefaultPrefix))
}

// keysUnder lists the objects under dir whose keys start with prefix, sorted.
func keysUnder(t *testing.T, dir, prefix string) []string {
	t.Helper()
	var keys []string
	for _, k := range allKeys(t, dir) {
		if strings.HasPrefix(k, prefix) {
			keys = append(keys, k)
		}
	}
	return keys
}

// allKeys lists the files under dir as slash-separated keys, sorted.
func allKeys(t *testing.T, dir string) []string {
	t.Helper()
	var keys []string
	err := filepath.WalkDir(dir, func(p string, d fs.DirEntry, err error) error {
		if err != nil || d.IsDir() {
			return err
		}
		rel, err := filepath.Rel(dir, p)
		keys = append(keys, filepath.ToSlash(rel))
		return err
	})
	if err != nil && !os.IsNotExist(err) {
		t.Fatal(err)
	}
	sort.Strings(keys)
	return keys
}

// sinkYAML is a sink config for an in-process broker and a local dir.
func sinkYAML(brokers, dir, topics string, flush int) string {
	return fmt.Sprintf(`name: test-sink
bootstrap.servers: %s
topics: %s
flush.size: %d
format.class: io.confluent.connect.s3.format.json.JsonFormat
store.local.dir: %s
`, brokers, topics, flush, dir)
}

func TestSinkCmdOnceArchivesAndResumes(t *testing.T) {
	ctx := cliContext(t)
	brokers := startKafka(t, 2, "orders")
	produceJSON(t, ctx, brokers, "orders", 2, 10) // 5 per partition
	dir := t.TempDir()
	cfg := writeFile(t, "sink.yaml", sinkYAML(brokers, dir, "orders", 2))

	r := mustRun(t, ctx, ExitOK, "sink", "-c", cfg, "--once", "--log-level", "warn")
	if !strings.Contains(r.out, "kafkas3 sink: topics=orders partitions=2 records=10 objects=6 ") {
		t.Errorf("summary: %q", r.out)
	}
	want := []string{
		"topics/orders/partition=0/orders+0+0000000000.json",
		"topics/orders/partition=0/orders+0+0000000002.json",
		"topics/orders/partition=0/orders+0+0000000004.json",
		"topics/orders/partition=1/orders+1+0000000000.json",
		"topics/orders/partition=1/orders+1+0000000002.json",
		"topics/orders/partition=1/orders+1+0000000004.json",
	}
	if got := objectKeys(t, dir); strings.Join(got, "\n") != strings.Join(want, "\n") {
		t.Errorf("objects:\n%s\nwant:\n%s", strings.Join(got, "\n"), strings.Join(want, "\n"))
	}
	b, err := os.ReadFile(filepath.Join(dir, "topics/orders/partition=1/orders+1+0000000002.json"))
	if err != nil {
		t.Fatal(err)
	}
	if string(b) != "{\"topic\":\"orders\",\"i\":5}\n{\"topic\":\"orders\",\"i\":7}\n" {
		t.Errorf("object contents: %q", b)
	}

	// One index object per rotation: flush.size 2 over 5 records per
	// partition rotates at offsets 2 and 4, and --once completes the last.
	// Each key names the writer: the group connect-test-sink.
	w := "-" + index.WriterOf("connect-test-sink") + ".jsonl"
	wantIndex := []string{
		"_kafkas3/index/orders/0/00000000000000000002" + w,
		"_kafkas3/index/orders/0/00000000000000000004" + w,
		"_kafkas3/index/orders/0/00000000000000000005" + w,
		"_kafkas3/index/orders/1/00000000000000000002" + w,
		"_kafkas3/index/orders/1/00000000000000000004" + w,
		"_kafkas3/index/orders/1/00000000000000000005" + w,
	}
	if got := indexKeys(t, dir); strings.Join(got, "\n") != strings.Join(wantIndex, "\n") {
		t.Errorf("index objects:\n%s\nwant:\n%s", strings.Join(got, "\n"), strings.Join(wantIndex, "\n"))
	}
	if !strings.HasSuffix(strings.TrimSpace(r.out), " index_objects=6") {
		t.Errorf("summary does not count 6 index objects: %q", r.out)
	}
	ib, err := os.ReadFile(filepath.Join(dir, wantIndex[4]))
	if err != nil {
		t.Fatal(err)
	}
	entries, err := index.Decode(wantIndex[4], bytes.NewReader(ib))
	if err != nil {
		t.Fatal(err)
	}
	crc := index.FormatCRC32C(crc32.Checksum(b, crc32.MakeTable(crc32.Castagnoli)))
	if len(entries) != 1 || entries[0].Key != "topics/orders/partition=1/orders+1+0000000002.json" ||
		fmt.Sprint(entries[0].Runs) != "[2-3]" || entries[0].From != 2 || entries[0].Commit != 4 ||
		entries[0].Objects[0].Size != int64(len(b)) || entries[0].Objects[0].CRC32C != crc || entries[0].Objects[0].SHA256 != "" {
		t.Errorf("index entry %+v does not describe the object (%d bytes)", entries, len(b))
	}

	// The end of --once wrote one group offset snapshot
	// (offsets.snapshot.interval.ms defaults to 60000): the end offsets,
	// and no group (the sink's own is left out).
	snaps := keysUnder(t, dir, index.SnapshotDir(index.DefaultPrefix))
	if len(snaps) != 1 {
		t.Fatalf("snapshots %q, want one", snaps)
	}
	sb, err := os.ReadFile(filepath.Join(dir, snaps[0]))
	if err != nil {
		t.Fatal(err)
	}
	sn, err := index.DecodeSnapshot(snaps[0], bytes.NewReader(sb))
	if err != nil || fmt.Sprint(sn.EndOffsets) != "map[0:5 1:5]" || len(sn.Groups) != 0 {
		t.Fatalf("snapshot %s: %+v, %v", snaps[0], sn, err)
	}
	// One topic description, the topic's.
	descs := func() []string {
		var ks []string
		for _, k := range allKeys(t, dir) {
			if strings.HasPrefix(k, index.TopicsDir(index.DefaultPrefix)) {
				ks = append(ks, k)
			}
		}
		return ks
	}
	firstDescs := descs()
	if len(firstDescs) != 1 || !strings.HasPrefix(firstDescs[0], index.TopicsDir(index.DefaultPrefix)+"orders/") {
		t.Errorf("topic descriptions %q, want one of orders", firstDescs)
	}

	// Per partition the start checkpoint (at 0, before the first index
	// object) and one at its last commit (--once's end).
	ckpts := keysUnder(t, dir, index.CheckpointDir(index.DefaultPrefix))
	if len(ckpts) != 4 || !strings.Contains(ckpts[0], "/00000000000000000000-") || !strings.Contains(ckpts[1], "/00000000000000000005-") {
		t.Errorf("checkpoints %q, want per partition one at 0 and one at 5", ckpts)
	}

	// A second run has nothing new: it writes nothing.
	r = mustRun(t, ctx, ExitOK, "sink", "-c", cfg, "--once", "--log-level", "warn")
	if !strings.Contains(r.out, " records=0 objects=0 ") {
		t.Errorf("second run summary: %q", r.out)
	}
	if got := allKeys(t, dir); len(got) != len(want)+len(wantIndex)+len(snaps)+len(ckpts)+1 || !slices.Equal(descs(), firstDescs) {
		t.Errorf("second run changed the objects: %q", got)
	}
	if got := keysUnder(t, dir, index.SnapshotDir(index.DefaultPrefix)); strings.Join(got, ",") != strings.Join(snaps, ",") {
		t.Errorf("second run with nothing moved wrote a snapshot: %q, want only %q", got, snaps)
	}
}

func TestSinkCmdEnvAndParamOverrides(t *testing.T) {
	ctx := cliContext(t)
	brokers := startKafka(t, 1, "a", "b", "c")
	for _, topic := range []string{"a", "b", "c"} {
		produceJSON(t, ctx, brokers, topic, 1, 6)
	}
	run := func(topic string, args ...string) cliResult {
		t.Helper()
		dir := t.TempDir()
		// flush.size 2 in the file: 3 objects of 6 records.
		cfg := writeFile(t, "sink.yaml", sinkYAML(brokers, dir, topic, 2)+"group.id: g-"+topic+"\n")
		return mustRun(t, ctx, ExitOK, append([]string{"sink", "-c", cfg, "--once", "--log-level", "warn"}, args...)...)
	}

	if r := run("a"); !strings.Contains(r.out, " records=6 objects=3 ") {
		t.Errorf("file flush.size=2: %q", r.out)
	}
	// The environment beats the file.
	t.Setenv("KAFKAS3_FLUSH_SIZE", "3")
	if r := run("b"); !strings.Contains(r.out, " records=6 objects=2 ") {
		t.Errorf("KAFKAS3_FLUSH_SIZE=3: %q", r.out)
	}
	// -p beats the environment and the file.
	if r := run("c", "-p", "flush.size=6"); !strings.Contains(r.out, " records=6 objects=1 ") {
		t.Errorf("-p flush.size=6: %q", r.out)
	}
}

func TestSinkCmdConfigErrors(t *testing.T) {
	ctx := cliContext(t)
	dir := t.TempDir()
	base := sinkYAML("127.0.0.1:1", dir, "orders", 3)
	tests := []struct {
		name string
		body string
		args []string
		want []string
	}{
		{"bad flush.size", strings.Replace(base, "flush.size: 3", "flush.size: 0", 1), nil,
			[]string{`flush.size: "0" is out of range; want an integer > 0`, "from file"}},
		{"unknown key", base + "flush.sise: 3\n", nil,
			[]string{"flush.sise: unknown key", `did you mean "flush.size"?`}},
		{"bad -p", base, []string{"-p", "s3.compression.type=zip"},
			[]string{`s3.compression.type: "zip" is not allowed`, "from -p s3.compression.type"}},
		{"missing format", strings.Replace(base, "format.class: io.confluent.connect.s3.format.json.JsonFormat\n", "", 1), nil,
			[]string{"format.class: required key is not set"}},
		{"unknown flag", base, []string{"--flush-sise", "3"}, []string{"unknown flag: --flush-sise"}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			cfg := writeFile(t, "sink.yaml", tc.body)
			r := mustRun(t, ctx, ExitConfig, append([]string{"sink", "-c", cfg, "--once"}, tc.args...)...)
			for _, w := range tc.want {
				if !strings.Contains(r.err, w) {
					t.Errorf("stderr lacks %q:\n%s", w, r.err)
				}
			}
			if r.out != "" {
				t.Errorf("stdout: %q", r.out)
			}
		})
	}
	if got := objectKeys(t, dir); len(got) != 0 {
		t.Errorf("a bad config wrote objects: %q", got)
	}
}
