package cmd

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/kafkas3/kafkas3/format"
	"github.com/kafkas3/kafkas3/partition"
	"github.com/kafkas3/kafkas3/restore"
	"github.com/kafkas3/kafkas3/s3store"
	"github.com/twmb/franz-go/pkg/kadm"
	"github.com/twmb/franz-go/pkg/kgo"
)

// archived is a local archive of topics and a broker to restore into.
type archived struct {
	brokers string
	dir     string
	cfg     string                        // a sink config file for the archive, used by source too
	want    map[string]map[int32][]string // topic -> partition -> values
}

// newArchived produces n records to each topic (parts partitions) and
// archives them with `kafkas3 sink --once` and flush.size=flush. extra is
// appended to the config.
func newArchived(t *testing.T, ctx context.Context, parts int32, n, flush int, extra string, topics ...string) *archived {
	t.Helper()
	a := &archived{brokers: startKafka(t, parts, topics...), dir: t.TempDir(), want: map[string]map[int32][]string{}}
	for _, topic := range topics {
		a.want[topic] = produceJSON(t, ctx, a.brokers, topic, parts, n)
	}
	a.cfg = writeFile(t, "orders.yaml", sinkYAML(a.brokers, a.dir, strings.Join(topics, ","), flush)+extra)
	mustRun(t, ctx, ExitOK, "sink", "-c", a.cfg, "--once", "--log-level", "warn")
	return a
}

// writeArchived writes the objects `kafkas3 sink` would write for n records
// per topic (JSON compressed with comp, round-robin over parts partitions,
// flush.size=flush) straight into a local directory, and starts an empty
// broker. The source
// tests use it so they do not depend on the sink.
func writeArchived(t *testing.T, parts int32, n, flush int, comp format.Compression, topics ...string) *archived {
	t.Helper()
	a := &archived{brokers: startKafka(t, parts), dir: t.TempDir(), want: map[string]map[int32][]string{}}
	extra := ""
	if comp != format.CompressionNone {
		extra = "s3.compression.type: " + comp.String() + "\n"
	}
	fm, err := format.New(format.Config{Kind: format.KindJSON, Compression: comp, CompressionLevel: -1})
	if err != nil {
		t.Fatal(err)
	}
	keys := partition.DefaultKeyConfig()
	for _, topic := range topics {
		byPart := map[int32][]*format.Record{}
		a.want[topic] = map[int32][]string{}
		for i := range n {
			p := int32(i) % parts
			v := fmt.Sprintf(`{"topic":%q,"i":%d}`, topic, i)
			byPart[p] = append(byPart[p], &format.Record{Topic: topic, Partition: p, Offset: int64(len(byPart[p])), Value: []byte(v)})
			a.want[topic][p] = append(a.want[topic][p], v)
		}
		for p, recs := range byPart {
			for start := 0; start < len(recs); start += flush {
				var buf bytes.Buffer
				w, err := fm.NewWriter(&buf)
				if err != nil {
					t.Fatal(err)
				}
				for _, r := range recs[start:min(start+flush, len(recs))] {
					if err := w.Write(r); err != nil {
						t.Fatal(err)
					}
				}
				if err := w.Close(); err != nil {
					t.Fatal(err)
				}
				key := keys.ObjectKey(partition.ObjectName{Topic: topic, Encoded: fmt.Sprintf("partition=%d", p),
					Partition: p, StartOffset: int64(start), Ext: fm.Extension()})
				writeArchiveFile(t, a.dir, key, buf.String())
			}
		}
	}
	a.cfg = writeFile(t, "orders.yaml", sinkYAML(a.brokers, a.dir, strings.Join(topics, ","), flush)+extra)
	return a
}

func TestSourceCmdDryRun(t *testing.T) {
	ctx := cliContext(t)
	a := writeArchived(t, 2, 10, 2, format.CompressionNone, "orders")

	r := mustRun(t, ctx, ExitOK, "source", "-c", a.cfg, "--topic-rename", "copy_of_$0", "--dry-run")
	for _, want := range []string{
		"TOPIC   TARGET          PARTITIONS  OBJECTS  BYTES  START OFFSETS",
		"orders  copy_of_orders  2           6        ",
		"0..4",
		"total: 1 topics, 2 partitions, 6 objects,",
		"dry run: nothing produced",
	} {
		if !strings.Contains(r.out, want) {
			t.Errorf("plan lacks %q:\n%s", want, r.out)
		}
	}
	if topicExists(t, ctx, a.brokers, "copy_of_orders") {
		t.Error("dry run created the target topic")
	}

	// A dry run needs no Kafka: a config without bootstrap.servers works.
	noKafka := writeFile(t, "nokafka.yaml", fmt.Sprintf("topics: orders\nformat.class: json\nstore.local.dir: %s\n", a.dir))
	r = mustRun(t, ctx, ExitOK, "source", "-c", noKafka, "--topic-rename", "copy_of_$0", "--dry-run")
	if !strings.Contains(r.out, "copy_of_orders") {
		t.Errorf("plan without Kafka:\n%s", r.out)
	}
	// ... but a restore does.
	r = mustRun(t, ctx, ExitConfig, "source", "-c", noKafka, "--topic-rename", "copy_of_$0")
	if !strings.Contains(r.err, "bootstrap.servers: required key is not set") {
		t.Errorf("stderr: %s", r.err)
	}

	// The feedback-loop guard holds in a dry run too, after the plan.
	r = mustRun(t, ctx, ExitConfig, "source", "-c", a.cfg, "--dry-run")
	if !strings.Contains(r.out, "orders  orders  2") || !strings.Contains(r.err, `"orders" would be archived again`) {
		t.Errorf("guarded dry run:\nstdout:\n%s\nstderr:\n%s", r.out, r.err)
	}
	mustRun(t, ctx, ExitOK, "source", "-c", a.cfg, "--dry-run", "--allow-same-topic")
}

func TestSourceCmdRestoresAndResumes(t *testing.T) {
	ctx := cliContext(t)
	a := newArchived(t, ctx, 3, 30, 4, "", "orders", "payments")

	r := mustRun(t, ctx, ExitOK, "source", "-c", a.cfg, "--topic-rename", "copy_of_$0", "--create-topics")
	if !strings.Contains(r.out, "kafkas3 source: topics=2 partitions=6 objects=18 records=60 bytes=") ||
		!strings.Contains(r.out, " skipped=0 already_present=0") {
		t.Errorf("summary: %q", r.out)
	}
	if !strings.Contains(r.err, "created target topic") || !strings.Contains(r.err, "restore progress: 60 records") {
		t.Errorf("stderr lacks the log or the progress line:\n%s", r.err)
	}
	for _, topic := range []string{"orders", "payments"} {
		got := readTopic(t, ctx, a.brokers, "copy_of_"+topic)
		if !reflect.DeepEqual(got, a.want[topic]) {
			t.Errorf("copy_of_%s = %v\nwant %v", topic, got, a.want[topic])
		}
	}

	// A re-run finds everything restored and produces nothing.
	r = mustRun(t, ctx, ExitOK, "source", "-c", a.cfg, "--topic-rename", "copy_of_$0", "--create-topics")
	if !strings.Contains(r.out, " objects=18 records=0 ") || !strings.Contains(r.out, " already_present=60") {
		t.Errorf("re-run summary: %q", r.out)
	}
	for _, topic := range []string{"orders", "payments"} {
		if got := readTopic(t, ctx, a.brokers, "copy_of_"+topic); !reflect.DeepEqual(got, a.want[topic]) {
			t.Errorf("after re-run copy_of_%s = %v", topic, got)
		}
	}

	// --topics picks one archived topic; --topic-rename-regex limits the rename.
	r = mustRun(t, ctx, ExitOK, "source", "-c", a.cfg, "--topics", "payments",
		"--topic-rename-regex", "pay(.*)", "--topic-rename", "restored-$1", "--create-topics")
	if !strings.Contains(r.out, "topics=1 partitions=3 objects=9 records=30 ") {
		t.Errorf("--topics payments summary: %q", r.out)
	}
	if got := readTopic(t, ctx, a.brokers, "restored-ments"); !reflect.DeepEqual(got, a.want["payments"]) {
		t.Errorf("restored-ments = %v", got)
	}
}

// TestSourceCmdCompressedAndFlags restores gzip and zstd archives, the
// source config's s3.compression.type selecting the extension.
func TestSourceCmdCompressedAndFlags(t *testing.T) {
	for _, comp := range []format.Compression{format.CompressionGzip, format.CompressionZstd} {
		t.Run(comp.String(), func(t *testing.T) { sourceCompressed(t, comp) })
	}
}

func sourceCompressed(t *testing.T, comp format.Compression) {
	ctx := cliContext(t)
	a := writeArchived(t, 1, 7, 3, comp, "logs")
	ext := ".json" + comp.Extension()
	if keys := objectKeys(t, a.dir); len(keys) != 3 || !strings.HasSuffix(keys[0], ext) {
		t.Fatalf("%s archive: %q", comp, keys)
	}
	// Dedicated flags: the archive dir and brokers come from flags here.
	cfg := writeFile(t, "src.properties", "topics=logs\nformat.class=json\ns3.compression.type="+comp.String()+"\nstore.local.dir=/nonexistent\n")
	r := mustRun(t, ctx, ExitOK, "source", "-c", cfg, "--local-dir", a.dir, "--bootstrap-servers", a.brokers,
		"--topic-rename", "copy_of_$0", "--create-topics", "-p", "behavior.on.error=log")
	if !strings.Contains(r.out, "objects=3 records=7 ") {
		t.Errorf("summary: %q", r.out)
	}
	if got := readTopic(t, ctx, a.brokers, "copy_of_logs"); !reflect.DeepEqual(got, a.want["logs"]) {
		t.Errorf("copy_of_logs = %v", got)
	}
	// Without the compression key, or with the other one, the objects are
	// another format's: skipped and counted, nothing restored.
	other := map[format.Compression]string{format.CompressionGzip: "zstd", format.CompressionZstd: "gzip"}[comp]
	for _, c := range []string{"none", other} {
		r = mustRun(t, ctx, ExitOK, "source", "-c", cfg, "--local-dir", a.dir, "-p", "s3.compression.type="+c, "--dry-run",
			"--topic-rename", "x_$0")
		if !strings.Contains(r.out, "keys skipped: 3 other extension") {
			t.Errorf("s3.compression.type=%s: plan: %s", c, r.out)
		}
	}
}

func TestSourceCmdTargetErrors(t *testing.T) {
	ctx := cliContext(t)
	a := writeArchived(t, 2, 8, 2, format.CompressionNone, "orders", "payments")

	// Missing targets: every one is named, nothing is produced.
	r := mustRun(t, ctx, ExitFail, "source", "-c", a.cfg, "--topic-rename", "copy_of_$0")
	if !strings.Contains(r.err, `target topics do not exist: "copy_of_orders", "copy_of_payments"; create them or pass --create-topics`) {
		t.Errorf("stderr: %s", r.err)
	}
	if topicExists(t, ctx, a.brokers, "copy_of_orders") {
		t.Error("a target was created without --create-topics")
	}

	// Feedback loop: restoring into the archived topics themselves.
	r = mustRun(t, ctx, ExitConfig, "source", "-c", a.cfg)
	if !strings.Contains(r.err, `"orders", "payments" would be archived again by this config's topics/topics.regex, a feedback loop`) ||
		!strings.Contains(r.err, "--allow-same-topic") {
		t.Errorf("stderr: %s", r.err)
	}
	// The same with topics.regex in the file and a rename into its range.
	r = mustRun(t, ctx, ExitConfig, "source", "-c", a.cfg, "-p", "topics=", "-p", "topics.regex=.*s",
		"--topics", "orders", "--topic-rename", "$0-copies")
	if !strings.Contains(r.err, `"orders-copies" would be archived again`) {
		t.Errorf("stderr: %s", r.err)
	}

	// Too few target partitions: refused before producing, with counts.
	cl, err := kgo.NewClient(kgo.SeedBrokers(strings.Split(a.brokers, ",")...))
	if err != nil {
		t.Fatal(err)
	}
	defer cl.Close()
	if _, err := kadm.NewClient(cl).CreateTopic(ctx, 1, -1, nil, "small"); err != nil {
		t.Fatal(err)
	}
	r = mustRun(t, ctx, ExitFail, "source", "-c", a.cfg, "--topics", "orders", "--topic-rename", "small")
	if !strings.Contains(r.err, `"small" has 1 partitions, the archive has 2`) {
		t.Errorf("stderr: %s", r.err)
	}
	if got := readTopic(t, ctx, a.brokers, "small"); len(got) != 0 {
		t.Errorf("small holds records: %v", got)
	}
}

func TestSourceCmdConfigErrors(t *testing.T) {
	ctx := cliContext(t)
	dir := t.TempDir()
	base := writeFile(t, "c.yaml", sinkYAML("127.0.0.1:1", dir, "orders", 3))
	tests := []struct {
		name string
		args []string
		want string
	}{
		{"behavior.on.error", []string{"-p", "behavior.on.error=explode"},
			`behavior.on.error: "explode" is not allowed; want one of fail, ignore, log (from -p behavior.on.error)`},
		{"poll interval", []string{"-p", "s3.poll.interval.ms=0"}, `s3.poll.interval.ms: "0" is out of range`},
		{"path style", []string{"-p", "s3.path.style.access=false", "-p", "s3.path.style.access.enabled=true"},
			"s3.path.style.access: \"false\" contradicts s3.path.style.access.enabled=true"},
		{"unknown key", []string{"-p", "s3.poll.intervall.ms=5"}, `s3.poll.intervall.ms: unknown key; did you mean "s3.poll.interval.ms"?`},
		{"avro needs a target registry", []string{"-p", "format.class=avro"},
			"value.converter.schema.registry.url: required key is not set (format.class avro: the source registers each value schema under <target topic>-value"},
		{"parquet with a json converter", []string{"-p", "format.class=parquet", "-p", "value.converter=org.apache.kafka.connect.json.JsonConverter"},
			`value.converter: "org.apache.kafka.connect.json.JsonConverter" is not supported by kafkas3 source with format.class parquet`},
		{"topics and regex", []string{"--topics", "a", "--topics-regex", "b.*"}, "--topics-regex: is set together with --topics"},
		{"bad topic", []string{"--topics", "a/b"}, `--topics: has "a/b", which is not a Kafka topic name`},
		{"bad regex", []string{"--topics-regex", "a("}, `--topics-regex: "a(" does not compile`},
		{"rename regex alone", []string{"--topic-rename-regex", "o.*"}, "--topic-rename-regex: \"o.*\" is set without --topic-rename"},
		{"bad rename", []string{"--topics", "x", "--topic-rename", "copy_of_$2"}, "topic rename \"copy_of_$2\" refers to group 2; the regex has 0"},
		{"dry run and follow", []string{"--dry-run", "--follow"}, "--follow: is set together with --dry-run"},
		{"timestamps", []string{"--timestamps", "later"}, `--timestamps: is "later"; want original or now`},
		{"until not a time", []string{"--until", "yesterday"}, `--until: is "yesterday"; want an RFC 3339 time with a zone`},
		{"until without a zone", []string{"--until", "2026-12-01T11:00:00"}, `--until: is "2026-12-01T11:00:00"; want an RFC 3339 time with a zone`},
		{"until before 1970", []string{"--until", "-5"}, `--until: is -5; want Unix milliseconds after 1970`},
		{"until and follow", []string{"--until", "2026-12-01T11:00:00Z", "--follow"}, "--until: is set together with --follow"},
		{"replication factor without create", []string{"--replication-factor", "2"}, "--replication-factor: is set without --create-topics"},
		{"replication factor", []string{"--create-topics", "--replication-factor", "-1"}, "--replication-factor: is -1; want a number from 1 to 32767"},
		{"topic config form", []string{"--create-topics", "--topic-config", "retention.ms"}, `--topic-config: is "retention.ms"; want key=value`},
		{"topic config without create", []string{"--topic-config", "retention.ms=-1"}, "--topic-config: is set without --create-topics"},
		{"restore groups and follow", []string{"--restore-groups", "--follow"}, "--restore-groups: is set together with --follow"},
		{"group rename alone", []string{"--group-rename", "a=b"}, `--group-rename: "a=b" is set without --restore-groups`},
		{"group rename without =", []string{"--restore-groups", "--group-rename", "ab"}, `--group-rename: "ab" is not REGEX=REPLACEMENT`},
		{"group rename bad regex", []string{"--restore-groups", "--group-rename", "a(=b"}, `--group-rename: regex "a(" does not compile`},
		{"group rename bad reference", []string{"--topics", "x", "--restore-groups", "--group-rename", "a=$3"}, `refers to group 3; the regex has 0`},
		{"exclude action drop alone", []string{"--exclude-action", "drop"}, "--exclude-action: drop is set without --exclude-keys-file"},
		{"exclude action", []string{"--exclude-action", "hide"}, `--exclude-action: is "hide"; want tombstone or drop`},
		{"key regex", []string{"--key-regex", "a("}, `--key-regex: "a(" does not compile`},
		{"header", []string{"--header", "=x"}, `--header: is "=x"; want NAME or NAME=VALUE`},
		{"from", []string{"--from", "soon"}, `--from: is "soon"; want an RFC 3339 time with a zone`},
		{"filter and follow", []string{"--key-regex", "a.*", "--follow"}, "--follow: is set together with a record filter"},
		{"filter, groups and dry run", []string{"--header", "h", "--restore-groups", "--dry-run"}, "--restore-groups: is set together with --dry-run and a record filter"},
		{"skip expired stamped now", []string{"--skip-expired", "--timestamps", "now"}, "--skip-expired: is set together with --timestamps now: records stamped now never expire"},
		{"skip expired and follow", []string{"--skip-expired", "--follow"}, "--follow: is set together with --skip-expired"},
		{"skip expired, groups and dry run", []string{"--skip-expired", "--restore-groups", "--dry-run"}, "--restore-groups: is set together with --dry-run and --skip-expired"},
		{"exclude keys file", []string{"--exclude-keys-file", "/nonexistent/gdpr.txt"}, "--exclude-keys-file: open /nonexistent/gdpr.txt"},
		{"byte rate", []string{"--max-bytes-per-sec", "fast"}, `--max-bytes-per-sec: is "fast"; want a positive number of bytes a second, with an optional unit: 10MB, 50MiB, 2.5GB`},
		{"byte rate zero", []string{"--max-bytes-per-sec", "0MB"}, `--max-bytes-per-sec: is "0MB"; want a positive number`},
		{"byte rate NaN", []string{"--max-bytes-per-sec", "NaN"}, `--max-bytes-per-sec: is "NaN"; want a positive number`},
		{"from with timestamps now", []string{"--from", "2026-12-01T00:00:00Z", "--timestamps", "now"}, "--from selects records by their archived timestamp, which --timestamps now replaces"},
		{"record rate", []string{"--max-records-per-sec", "-5"}, `--max-records-per-sec: is -5; want a positive number of records a second`},
		{"log level", []string{"--log-level", "loud"}, `--log-level "loud"`},
		{"no topics", []string{"-p", "topics="}, "topics: no topics to restore: pass --topics or --topics-regex"},
		{"connector", []string{"-p", "connector.class=FileStreamSource"}, `connector.class: "FileStreamSource" is not an S3 connector`},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			r := mustRun(t, ctx, ExitConfig, append([]string{"source", "-c", base}, tc.args...)...)
			if !strings.Contains(r.err, tc.want) {
				t.Errorf("stderr lacks %q:\n%s", tc.want, r.err)
			}
		})
	}
	// A malformed key with behavior.on.error=fail is a failure (exit 1) naming it.
	a := writeArchived(t, 1, 3, 3, format.CompressionNone, "orders")
	writeArchiveFile(t, a.dir, "topics/orders/partition=0/orders+0+zzz.json", "{}\n")
	r := mustRun(t, ctx, ExitFail, "source", "-c", a.cfg, "--topic-rename", "copy_of_$0", "--create-topics")
	if !strings.Contains(r.err, "orders+0+zzz.json") || !strings.Contains(r.err, "behavior.on.error=fail") {
		t.Errorf("stderr: %s", r.err)
	}
	r = mustRun(t, ctx, ExitOK, "source", "-c", a.cfg, "--topic-rename", "copy_of_$0", "--create-topics", "-p", "behavior.on.error=ignore")
	if !strings.Contains(r.out, "records=3 ") || !strings.Contains(r.out, "skipped=1 ") {
		t.Errorf("summary: %q", r.out)
	}
}

// hookStore calls onOpen before each object is opened, with the count of
// objects opened so far.
type hookStore struct {
	s3store.Store
	mu     sync.Mutex
	opened int
	onOpen func(n int)
}

func (s *hookStore) Open(ctx context.Context, key string) (io.ReadCloser, error) {
	s.mu.Lock()
	s.opened++
	n := s.opened
	s.mu.Unlock()
	s.onOpen(n)
	return s.Store.Open(ctx, key)
}

// endOffsetSum returns the sum of topic's end offsets (0 when it does not exist).
func endOffsetSum(ctx context.Context, brokers, topic string) int64 {
	cl, err := kgo.NewClient(kgo.SeedBrokers(strings.Split(brokers, ",")...))
	if err != nil {
		return 0
	}
	defer cl.Close()
	ends, err := kadm.NewClient(cl).ListEndOffsets(ctx, topic)
	if err != nil {
		return 0
	}
	var n int64
	ends.Each(func(o kadm.ListedOffset) {
		if o.Err == nil {
			n += o.Offset
		}
	})
	return n
}

func TestSourceCmdInterruptThenResume(t *testing.T) {
	ctx := cliContext(t)
	a := writeArchived(t, 2, 20000, 500, format.CompressionNone, "big") // 20 objects per partition
	flags := func() *sourceFlags {
		return &sourceFlags{configFlags: configFlags{ConfigFile: a.cfg, LogLevel: "warn"}, Rename: "copy_of_$0", RenameRegex: defaultRenameRegex,
			CreateTopics: true}
	}

	// Interrupt when the 11th object is opened to be produced, once records
	// have landed (that partition's stream waits meanwhile, the other one
	// goes on). The plan opens each of the 40 objects once before (its
	// proof reads every object).
	runCtx, interrupt := context.WithCancel(ctx)
	defer interrupt()
	f := flags()
	f.wrapStore = func(st s3store.Store) s3store.Store {
		return &hookStore{Store: st, onOpen: func(n int) {
			if n != 40+11 {
				return
			}
			for deadline := time.Now().Add(10 * time.Second); time.Now().Before(deadline); time.Sleep(5 * time.Millisecond) {
				if endOffsetSum(ctx, a.brokers, "copy_of_big") > 0 {
					break
				}
			}
			interrupt()
		}}
	}
	var out, errb syncBuffer
	start := time.Now()
	err := runSourceCmd(runCtx, f, IO{Out: &out, Err: &errb})
	if took := time.Since(start); took > 30*time.Second {
		t.Errorf("interrupted run took %v", took)
	}
	if err == nil || !strings.Contains(err.Error(), "interrupted before the restore finished") ||
		!strings.Contains(err.Error(), "re-run the same command to resume") || errors.Is(err, ErrConfig) {
		t.Fatalf("interrupted run: err = %v\nstdout: %s\nstderr: %s", err, out.String(), errb.String())
	}
	if !strings.Contains(out.String(), "kafkas3 source: topics=1 partitions=2 objects=40 ") {
		t.Errorf("no summary after an interrupt: %q", out.String())
	}
	// What landed is a prefix of each partition, and not everything.
	landed := readTopic(t, ctx, a.brokers, "copy_of_big")
	n := 0
	for p, vals := range landed {
		if want := a.want["big"][p]; len(vals) > len(want) || !reflect.DeepEqual(vals, want[:len(vals)]) {
			t.Errorf("partition %d after the interrupt is not a prefix of the archive", p)
		}
		n += len(vals)
	}
	if n == 0 || n == 20000 {
		t.Errorf("%d of 20000 records landed before the interrupt; want some, not all", n)
	}
	t.Logf("%d of 20000 records landed before the interrupt", n)

	// The re-run, through the CLI, completes: the target then holds exactly the archive.
	r := mustRun(t, ctx, ExitOK, "source", "-c", a.cfg, "--topic-rename", "copy_of_$0", "--create-topics", "--log-level", "warn")
	if want := fmt.Sprintf(" records=%d ", 20000-n); !strings.Contains(r.out, want) ||
		!strings.Contains(r.out, fmt.Sprintf(" already_present=%d", n)) {
		t.Errorf("re-run after %d landed records: %q", n, r.out)
	}
	if got := readTopic(t, ctx, a.brokers, "copy_of_big"); !reflect.DeepEqual(got, a.want["big"]) {
		t.Errorf("copy_of_big after resume: %d+%d records, want %d+%d",
			len(got[0]), len(got[1]), len(a.want["big"][0]), len(a.want["big"][1]))
	}
}

func TestSourceErrorExitCodes(t *testing.T) {
	if !errors.Is(sourceError(fmt.Errorf("x: %w", restore.ErrFeedbackLoop)), ErrConfig) {
		t.Error("feedback loop is not a config error")
	}
	if !errors.Is(sourceError(fmt.Errorf("x: %w", restore.ErrInvalidConfig)), ErrConfig) {
		t.Error("invalid restore config is not a config error")
	}
	if errors.Is(sourceError(fmt.Errorf("x: %w", restore.ErrMissingTopics)), ErrConfig) {
		t.Error("missing topics is a config error; want exit 1")
	}
}

// writeArchiveFile puts a file at key below dir, as a foreign writer would.
func writeArchiveFile(t *testing.T, dir, key, body string) {
	t.Helper()
	p := filepath.Join(dir, filepath.FromSlash(key))
	if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(p, []byte(body), 0o644); err != nil {
		t.Fatal(err)
	}
}

func TestSourceCmdFollow(t *testing.T) {
	ctx := cliContext(t)
	a := writeArchived(t, 1, 3, 3, format.CompressionNone, "events") // one object, offsets 0..2

	runCtx, stop := context.WithCancel(ctx)
	defer stop()
	done := make(chan cliResult, 1)
	go func() {
		done <- runCLI(runCtx, "source", "-c", a.cfg, "--topic-rename", "copy_of_$0", "--create-topics", "--follow",
			"-p", "s3.poll.interval.ms=50", "--log-level", "warn")
	}()
	waitRecords := func(n int64) {
		t.Helper()
		for deadline := time.Now().Add(20 * time.Second); time.Now().Before(deadline); time.Sleep(10 * time.Millisecond) {
			if endOffsetSum(ctx, a.brokers, "copy_of_events") >= n {
				return
			}
		}
		t.Fatalf("copy_of_events did not reach %d records", n)
	}
	waitRecords(3)
	// A new object appears in the archive; the running restore picks it up.
	writeArchiveFile(t, a.dir, "topics/events/partition=0/events+0+0000000003.json", "{\"n\":3}\n{\"n\":4}\n")
	waitRecords(5)
	stop()
	var r cliResult
	select {
	case r = <-done:
	case <-time.After(30 * time.Second):
		t.Fatal("--follow did not stop within 30 s of the interrupt")
	}
	if r.code != ExitOK || !strings.Contains(r.out, "objects=2 records=5 ") {
		t.Errorf("follow: exit %d\nstdout: %s\nstderr: %s", r.code, r.out, r.err)
	}
	want := append(a.want["events"][0], `{"n":3}`, `{"n":4}`)
	if got := readTopic(t, ctx, a.brokers, "copy_of_events"); !reflect.DeepEqual(got[0], want) || len(got) != 1 {
		t.Errorf("copy_of_events = %v, want %v", got, want)
	}
}

// TestSourceCmdNothingToRestore: a chosen topic without a folder in the
// archive, or a topics regex that matches no topic folder, fails the run
// (exit 1) naming the topic or regex and the listed prefix, before any
// Kafka connection and also in a dry run.
func TestSourceCmdNothingToRestore(t *testing.T) {
	ctx := cliContext(t)
	dir := t.TempDir()
	writeArchiveFile(t, dir, "topics/orders/partition=0/orders+0+0000000000.json", "{\"n\":0}\n")
	// A sibling of topics.dir is not under it: its folders do not count.
	writeArchiveFile(t, dir, "topics-old/payments/partition=0/payments+0+0000000000.json", "{\"n\":0}\n")
	cfg := writeFile(t, "c.yaml", sinkYAML("127.0.0.1:1", dir, "orders", 3))
	tests := []struct {
		name string
		args []string
		want string
	}{
		{"typo in --topics", []string{"--topics", "orders,ordrs"},
			`nothing to restore: topic "ordrs" has no folder in the archive (nothing under "topics/ordrs/") in file://` + dir},
		{"typo in the file's topics", []string{"-p", "topics=ordrs"},
			`topic "ordrs" has no folder in the archive (nothing under "topics/ordrs/")`},
		{"dry run", []string{"--topics", "ordrs", "--dry-run"},
			`topic "ordrs" has no folder in the archive (nothing under "topics/ordrs/")`},
		{"other topics.dir", []string{"-p", "topics.dir=archive"},
			`topic "orders" has no folder in the archive (nothing under "archive/orders/")`},
		{"--topics-regex", []string{"--topics-regex", "pay.*"},
			`nothing to restore: --topics-regex "pay.*" matched no topic folder under "topics/" in file://` + dir},
		{"--topics-regex matches whole names", []string{"--topics-regex", "order"},
			`--topics-regex "order" matched no topic folder under "topics/"`},
		{"file topics.regex", []string{"-p", "topics=", "-p", "topics.regex=pay.*", "--dry-run"},
			`topics.regex "pay.*" matched no topic folder under "topics/"`},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			args := append([]string{"source", "-c", cfg, "--topic-rename", "copy_of_$0"}, tc.args...)
			r := mustRun(t, ctx, ExitFail, args...)
			if !strings.Contains(r.err, tc.want) {
				t.Errorf("stderr lacks %q:\n%s", tc.want, r.err)
			}
			if strings.Contains(r.err, `topic "orders" has`) && !strings.Contains(tc.want, `topic "orders" has`) {
				t.Errorf("stderr names orders, which has a folder:\n%s", r.err)
			}
		})
	}
	// Topics and regexes that find a folder pass the check.
	for _, args := range [][]string{{"--topics", "orders"}, {"--topics-regex", "ord.*"}} {
		r := mustRun(t, ctx, ExitOK, append([]string{"source", "-c", cfg, "--topic-rename", "copy_of_$0", "--dry-run"}, args...)...)
		if !strings.Contains(r.out, "total: 1 topics, 1 partitions, 1 objects,") {
			t.Errorf("%q: plan: %s", args, r.out)
		}
	}
}

// TestCheckArchiveTopicsStopsEarly: the check lists no further than the
// first key of each explicit topic.
func TestCheckArchiveTopicsStopsEarly(t *testing.T) {
	dir := t.TempDir()
	for i := range 5 {
		writeArchiveFile(t, dir, fmt.Sprintf("topics/orders/partition=0/orders+0+%010d.json", i), "{}\n")
	}
	local, err := s3store.NewLocal(s3store.LocalConfig{Dir: dir}, slog.New(slog.DiscardHandler))
	if err != nil {
		t.Fatal(err)
	}
	st := &countingStore{Store: local}
	cfg := restore.Config{Topics: []string{"orders"}, Keys: partition.DefaultKeyConfig()}
	if err := checkArchiveTopics(context.Background(), st, cfg, "file://"+dir, "topics.regex"); err != nil {
		t.Fatal(err)
	}
	if st.seen != 1 {
		t.Errorf("listed %d keys, want 1", st.seen)
	}
	cfg.Topics = []string{"nope"}
	if err := checkArchiveTopics(context.Background(), st, cfg, "file://"+dir, "topics.regex"); !errors.Is(err, ErrNothingToRestore) || errors.Is(err, ErrConfig) {
		t.Errorf("err = %v, want ErrNothingToRestore and not a config error", err)
	}
}

// countingStore counts the keys its List hands out.
type countingStore struct {
	s3store.Store
	seen int
}

func (c *countingStore) List(ctx context.Context, prefix string, fn func(s3store.ObjectInfo) error) error {
	return c.Store.List(ctx, prefix, func(info s3store.ObjectInfo) error {
		c.seen++
		return fn(info)
	})
}

// TestSourceCmdGapsAndAllowGaps: an archive with a deleted object. The dry
// run prints the gap per partition and exits 1; the restore exits 1 before
// producing anything; --allow-gaps restores the rest, counts the gap in the
// summary line and says so in a warning line.
func TestSourceCmdGapsAndAllowGaps(t *testing.T) {
	ctx := cliContext(t)
	a := writeArchived(t, 1, 30, 10, format.CompressionNone, "orders") // objects at 0, 10, 20
	if err := os.Remove(filepath.Join(a.dir, "topics/orders/partition=0/orders+0+0000000010.json")); err != nil {
		t.Fatal(err)
	}
	r := mustRun(t, ctx, ExitFail, "source", "-c", a.cfg, "--topic-rename", "copy_of_$0", "--dry-run")
	for _, want := range []string{"gap: orders/0 offsets 10..19 (no object holds them)", "NO: gaps or damaged objects (listed below)",
		"records: 20 to restore, 0 duplicates, 1 gaps, 0 damaged objects", "dry run: nothing produced"} {
		if !strings.Contains(r.out, want) {
			t.Errorf("dry run lacks %q:\n%s", want, r.out)
		}
	}
	if !strings.Contains(r.err, "the archive has gaps") {
		t.Errorf("dry run stderr: %s", r.err)
	}
	r = mustRun(t, ctx, ExitFail, "source", "-c", a.cfg, "--topic-rename", "copy_of_$0", "--create-topics")
	if !strings.Contains(r.err, "orders/0 offsets 10..19") || topicExists(t, ctx, a.brokers, "copy_of_orders") {
		t.Fatalf("run with a gap: stderr %s", r.err)
	}
	r = mustRun(t, ctx, ExitOK, "source", "-c", a.cfg, "--topic-rename", "copy_of_$0", "--create-topics", "--allow-gaps")
	if !strings.Contains(r.out, " records=20 ") || !strings.Contains(r.out, " gaps=1 gap_offsets=10") ||
		!strings.Contains(r.err, "WARNING: records of the archive were not restored: 0 damaged objects skipped, 1 gaps (10 offsets): orders/0 10..19") {
		t.Fatalf("--allow-gaps:\nstdout %s\nstderr %s", r.out, r.err)
	}
	got := readTopic(t, ctx, a.brokers, "copy_of_orders")
	want := append(append([]string(nil), a.want["orders"][0][:10]...), a.want["orders"][0][20:]...)
	if !reflect.DeepEqual(got[0], want) {
		t.Fatalf("restored %v, want %v", got[0], want)
	}
}

// TestParseUntil: --until takes RFC 3339 (with fractions and any zone) and
// Unix milliseconds, to the millisecond.
func TestParseUntil(t *testing.T) {
	for in, want := range map[string]int64{
		"2026-12-01T11:00:00Z":           1796122800000,
		"2026-12-01T12:00:00.250+01:00":  1796122800250,
		" 1796122800250 ":                1796122800250,
		"2026-12-01T11:00:00.999999999Z": 1796122800999,
	} {
		got, err := parseUntil(in)
		if err != nil || got.UnixMilli() != want {
			t.Errorf("parseUntil(%q) = %v (%d ms), %v; want %d ms", in, got, got.UnixMilli(), err, want)
		}
	}
}

// TestSourceUntilRefusedOnConfluentLayout: --until reaches the restore: a
// dry run of an archive without snapshots or record timestamps shows the
// refusal per partition and exits 1.
func TestSourceCmdUntilRefusedOnConfluentLayout(t *testing.T) {
	ctx := cliContext(t)
	a := writeArchived(t, 1, 3, 3, format.CompressionNone, "orders")
	r := mustRun(t, ctx, ExitFail, "source", "-c", a.cfg, "--dry-run", "--until", "2026-12-01T11:00:00Z")
	if !strings.Contains(r.out, "REFUSED: no snapshot at or before 2026-12-01T11:00:00Z") ||
		!strings.Contains(r.err, "the archive cannot tell what the cluster held at --until") {
		t.Errorf("stdout %s\nstderr %s", r.out, r.err)
	}
}

// FuzzParseUntil: --until never panics, and a time it accepts is after
// 1970 and reads back from its RFC 3339 form to the same millisecond.
func FuzzParseUntil(f *testing.F) {
	for _, s := range []string{"2026-12-01T11:00:00Z", "1796122800250", "-1", "0", "2026-12-01T12:00:00.250+01:00", "9999999999999999999", ""} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		got, err := parseUntil(s)
		if err != nil {
			return
		}
		if got.UnixMilli() <= 0 {
			t.Fatalf("parseUntil(%q) = %v, not after 1970", s, got)
		}
		back, err := parseUntil(got.Format(time.RFC3339Nano))
		if err != nil || back.UnixMilli() != got.UnixMilli() {
			t.Fatalf("parseUntil(%q) = %v; its RFC 3339 form reads back as %v, %v", s, got, back, err)
		}
	})
}

// TestSourceCmdRestoreGroups: the sink's --once snapshot of three groups
// (at 0, mid-way, at the end) is restored by source --restore-groups with
// --group-rename into a renamed topic; the dry run prints each translation
// first, a re-run commits the same offsets.
func TestSourceCmdRestoreGroups(t *testing.T) {
	ctx := cliContext(t)
	brokers := startKafka(t, 2, "orders")
	produceJSON(t, ctx, brokers, "orders", 2, 20) // 10 per partition
	cl, err := kgo.NewClient(kgo.SeedBrokers(strings.Split(brokers, ",")...))
	if err != nil {
		t.Fatal(err)
	}
	defer cl.Close()
	adm := kadm.NewClient(cl)
	for g, offs := range map[string]map[int32]int64{"app-zero": {0: 0, 1: 0}, "app-mid": {0: 4, 1: 7}, "app-end": {0: 10, 1: 10}} {
		var os kadm.Offsets
		for p, o := range offs {
			os.Add(kadm.Offset{Topic: "orders", Partition: p, At: o, LeaderEpoch: -1})
		}
		if err := adm.CommitAllOffsets(ctx, g, os); err != nil {
			t.Fatal(err)
		}
	}
	dir := t.TempDir()
	cfg := writeFile(t, "orders.yaml", sinkYAML(brokers, dir, "orders", 3))
	mustRun(t, ctx, ExitOK, "sink", "-c", cfg, "--once", "--log-level", "warn")

	args := []string{"source", "-c", cfg, "--topic-rename", "copy_of_$0", "--create-topics", "--restore-groups", "--group-rename", "app-(.*)=dr-$1"}
	r := mustRun(t, ctx, ExitOK, append(args, "--dry-run")...)
	for _, want := range []string{"groups of orders -> copy_of_orders from snapshot _kafkas3/snapshots/orders/",
		"app-mid   dr-mid        0          4 -> 4", "app-mid   dr-mid        1          7 -> 7", "app-end   dr-end        1          10 -> 10"} {
		if !strings.Contains(r.out, want) {
			t.Errorf("dry run lacks %q:\n%s", want, r.out)
		}
	}
	if resp, err := adm.FetchOffsets(ctx, "dr-mid"); err == nil && len(resp["copy_of_orders"]) > 0 {
		t.Fatalf("the dry run committed: %v", resp)
	}
	want := map[string]map[int32]int64{"dr-zero": {0: 0, 1: 0}, "dr-mid": {0: 4, 1: 7}, "dr-end": {0: 10, 1: 10}}
	check := func(what string) {
		t.Helper()
		for g, offs := range want {
			resp, err := adm.FetchOffsets(ctx, g)
			if err != nil {
				t.Fatalf("%s: %s: %v", what, g, err)
			}
			got := map[int32]int64{}
			for p, o := range resp["copy_of_orders"] {
				got[p] = o.At
			}
			if !reflect.DeepEqual(got, offs) {
				t.Errorf("%s: group %s committed %v, want %v", what, g, got, offs)
			}
		}
	}
	r = mustRun(t, ctx, ExitOK, args...)
	if !strings.Contains(r.out, " records=20 ") || !strings.Contains(r.out, "restored the offsets of 3 consumer groups") ||
		!strings.Contains(r.out, "app-zero  dr-zero       0          0 -> 0") {
		t.Errorf("run output:\n%s", r.out)
	}
	check("first run")
	r = mustRun(t, ctx, ExitOK, args...)
	if !strings.Contains(r.out, " records=0 ") || !strings.Contains(r.out, "restored the offsets of 3 consumer groups") {
		t.Errorf("re-run output:\n%s", r.out)
	}
	check("re-run")
}

// TestSourceCmdUnknownOrder: a field layout written without the archive
// index and without envelopes (as Confluent's connector writes it), whose
// two folders interleave in offsets. The dry run marks the partition
// UNKNOWN under ORDER and says why; the restore stops before producing
// anything and names --allow-unknown-order; a dry run with the flag's old
// name, --allow-unproven-order, passes (and notes the name is deprecated);
// with the flag, every record is restored, object by object in
// start-offset order, and the summary and a warning line say so.
func TestSourceCmdUnknownOrder(t *testing.T) {
	ctx := cliContext(t)
	a := writeArchived(t, 1, 0, 1, format.CompressionNone, "orders") // an empty broker and the config
	eu := []string{`{"region":"eu","i":0}`, `{"region":"eu","i":2}`}
	us := []string{`{"region":"us","i":1}`, `{"region":"us","i":3}`}
	writeArchiveFile(t, a.dir, "topics/orders/region=eu/orders+0+0000000000.json", strings.Join(eu, "\n")+"\n")
	writeArchiveFile(t, a.dir, "topics/orders/region=us/orders+0+0000000001.json", strings.Join(us, "\n")+"\n")
	r := mustRun(t, ctx, ExitFail, "source", "-c", a.cfg, "--topic-rename", "copy_of_$0", "--dry-run")
	for _, want := range []string{"UNKNOWN: 2 folders", "order unknown: orders/0: objects in 2 folders",
		"1 objects start inside the offsets of an object of another folder"} {
		if !strings.Contains(r.out, want) {
			t.Errorf("dry run lacks %q:\n%s", want, r.out)
		}
	}
	if !strings.Contains(r.err, "the record order of partitions is unknown") {
		t.Errorf("dry run stderr: %s", r.err)
	}
	r = mustRun(t, ctx, ExitFail, "source", "-c", a.cfg, "--topic-rename", "copy_of_$0", "--create-topics")
	if !strings.Contains(r.err, "--allow-unknown-order") || topicExists(t, ctx, a.brokers, "copy_of_orders") {
		t.Fatalf("run: stderr %s", r.err)
	}
	r = mustRun(t, ctx, ExitOK, "source", "-c", a.cfg, "--topic-rename", "copy_of_$0", "--dry-run", "--allow-unproven-order")
	if !strings.Contains(r.out, "order unknown: orders/0") || !strings.Contains(r.err, "--allow-unproven-order is deprecated, use --allow-unknown-order") {
		t.Fatalf("dry run with --allow-unproven-order:\nstdout %s\nstderr %s", r.out, r.err)
	}
	r = mustRun(t, ctx, ExitOK, "source", "-c", a.cfg, "--topic-rename", "copy_of_$0", "--create-topics", "--allow-unknown-order")
	if !strings.Contains(r.out, " records=4 ") || !strings.Contains(r.out, " unknown_order=1") ||
		!strings.Contains(r.err, "WARNING: the record order of 1 partitions is unknown") {
		t.Fatalf("--allow-unknown-order:\nstdout %s\nstderr %s", r.out, r.err)
	}
	if got := readTopic(t, ctx, a.brokers, "copy_of_orders"); !reflect.DeepEqual(got[0], append(eu, us...)) {
		t.Fatalf("restored %v, want %v then %v", got[0], eu, us)
	}
}
