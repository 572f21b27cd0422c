package cmd

import (
	"encoding/json"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/kafkas3/kafkas3/index"
	"github.com/kafkas3/kafkas3/inspect"
	"github.com/twmb/franz-go/pkg/kgo"
)

// lsJSON runs ls --json and parses its output.
func lsJSON(t *testing.T, want int, args ...string) []inspect.Partition {
	t.Helper()
	r := mustRun(t, cliContext(t), want, append([]string{"ls", "--json"}, args...)...)
	var doc struct {
		Partitions []inspect.Partition `json:"partitions"`
	}
	dec := json.NewDecoder(strings.NewReader(r.out))
	dec.DisallowUnknownFields()
	if err := dec.Decode(&doc); err != nil {
		t.Fatalf("ls --json output does not parse: %v\n%s", err, r.out)
	}
	return doc.Partitions
}

// dirBytes sums the sizes of the files under dir/key.
func dirBytes(t *testing.T, dir, key string) int64 {
	t.Helper()
	var n int64
	err := filepath.WalkDir(filepath.Join(dir, filepath.FromSlash(key)), func(_ string, d os.DirEntry, err error) error {
		if err != nil || d.IsDir() {
			return err
		}
		fi, err := d.Info()
		n += fi.Size()
		return err
	})
	if err != nil {
		t.Fatal(err)
	}
	return n
}

// TestLsCmd lists a clean archive (text and JSON against the dump of
// the topic and the files), the same archive with a gap, without its
// index, and the usage and missing-topic errors.
func TestLsCmd(t *testing.T) {
	brokers, base, cfg := verifyArchive(t)
	started := time.Now().Add(-time.Minute)
	dump := readRecords(t, cliContext(t), brokers, "orders")

	r := mustRun(t, cliContext(t), ExitOK, "ls", "-c", cfg)
	row := regexp.MustCompile(`(?m)^orders\s+1\s+0\.\.9\s+10\s+\S+Z\s+\S+Z\s+4\s+\S+ (B|KiB)\s+json\s+no\s+\S+Z\s+-$`)
	if !row.MatchString(r.out) || !strings.HasPrefix(r.out, "TOPIC ") {
		t.Errorf("ls text:\n%s", r.out)
	}
	parts := lsJSON(t, ExitOK, "-c", cfg)
	if len(parts) != 2 {
		t.Fatalf("partitions %+v", parts)
	}
	for p, got := range parts {
		recs := dump[int32(p)]
		first, last := recs[0].Timestamp, recs[0].Timestamp
		for _, rec := range recs {
			first, last = minTime(first, rec.Timestamp), maxTime(last, rec.Timestamp)
		}
		if got.Topic != "orders" || got.Partition != int32(p) || !got.Indexed || got.FirstOffset != 0 || got.LastOffset != 9 || got.Records != 10 ||
			got.From != 0 || got.Commit != 10 || got.Objects != 4 || got.Envelope != "no" || strings.Join(got.Formats, ",") != "json" ||
			len(got.Parts) != 0 || len(got.Problems) != 0 || got.Gaps != 0 || got.Lost != 0 {
			t.Errorf("partition %d: %+v", p, got)
		}
		if want := dirBytes(t, base, "topics/orders/partition="+string(rune('0'+p))); got.Bytes != want {
			t.Errorf("partition %d: bytes %d, the files hold %d", p, got.Bytes, want)
		}
		if got.FirstTime == nil || !got.FirstTime.Equal(first.Truncate(time.Millisecond)) || got.LastTime == nil || !got.LastTime.Equal(last.Truncate(time.Millisecond)) {
			t.Errorf("partition %d: times %v..%v, want %v..%v", p, got.FirstTime, got.LastTime, first, last)
		}
		if got.Written == nil || got.Written.Before(started) || got.Written.After(time.Now()) {
			t.Errorf("partition %d: last archived %v", p, got.Written)
		}
	}

	// The rotation at commit 6 of partition 0 is gone, index object and data.
	gap := t.TempDir()
	if err := os.CopyFS(gap, os.DirFS(base)); err != nil {
		t.Fatal(err)
	}
	remove(t, gap, "topics/orders/partition=0/orders+0+0000000003.json")
	remove(t, gap, index.Key(index.DefaultPrefix, "orders", 0, 6, index.WriterOf("connect-test-sink")))
	parts = lsJSON(t, ExitOK, "-c", cfg, "--local-dir", gap)
	if p := parts[0]; strings.Join(p.Problems, ",") != "gaps" || p.Gaps != 3 || p.Records != 7 || p.Objects != 3 || len(parts[1].Problems) != 0 {
		t.Errorf("with a gap: %+v", parts)
	}
	r = mustRun(t, cliContext(t), ExitOK, "ls", "-c", cfg, "--local-dir", gap)
	if !regexp.MustCompile(`(?m)^orders\s+0\s+0\.\.9\s+7\s.*\sgaps$`).MatchString(r.out) {
		t.Errorf("ls text with a gap:\n%s", r.out)
	}

	// Without the index: objects, bytes, format and start offsets only.
	noIndex := t.TempDir()
	if err := os.CopyFS(noIndex, os.DirFS(base)); err != nil {
		t.Fatal(err)
	}
	if err := os.RemoveAll(filepath.Join(noIndex, "_kafkas3")); err != nil {
		t.Fatal(err)
	}
	parts = lsJSON(t, ExitOK, "-c", cfg, "--local-dir", noIndex)
	if len(parts) != 2 || parts[1].Indexed || parts[1].Objects != 4 || parts[1].FirstOffset != 0 || parts[1].Records != 0 ||
		parts[1].Bytes != dirBytes(t, noIndex, "topics/orders/partition=1") || parts[1].FirstTime != nil || parts[1].Written == nil {
		t.Errorf("without an index: %+v", parts)
	}
	r = mustRun(t, cliContext(t), ExitOK, "ls", "-c", cfg, "--local-dir", noIndex, "--topics", "orders")
	if !regexp.MustCompile(`(?m)^orders\s+1\s+0\.\.\?\s+\?\s+-\s+-\s+4\s.*\sno index$`).MatchString(r.out) {
		t.Errorf("ls text without an index:\n%s", r.out)
	}

	r = mustRun(t, cliContext(t), ExitFail, "ls", "-c", cfg, "--topics", "orders,nope")
	if !strings.Contains(r.err, `nothing archived`) || !strings.Contains(r.err, `"nope"`) || !strings.Contains(r.out, "orders ") {
		t.Errorf("unknown topic: stdout %q stderr %q", r.out, r.err)
	}
	for _, bad := range [][]string{{"--timeline", "week"}, {"--by", "objects"}} {
		if r := mustRun(t, cliContext(t), ExitConfig, append([]string{"ls", "-c", cfg}, bad...)...); !strings.Contains(r.err, bad[0]) {
			t.Errorf("%q: %s", bad, r.err)
		}
	}
}

func minTime(a, b time.Time) time.Time {
	if b.Before(a) {
		return b
	}
	return a
}

func maxTime(a, b time.Time) time.Time {
	if b.After(a) {
		return b
	}
	return a
}

// TestLsCmdLost: offsets Kafka deleted before the sink read them are
// shown as the problem "lost".
func TestLsCmdLost(t *testing.T) {
	_, cfg, _, _ := lostArchive(t, cliContext(t), "")
	parts := lsJSON(t, ExitOK, "-c", cfg)
	if len(parts) != 1 || strings.Join(parts[0].Problems, ",") != "lost" || parts[0].Lost != 40 || parts[0].Gaps != 0 {
		t.Errorf("lost: %+v", parts)
	}
	r := mustRun(t, cliContext(t), ExitOK, "ls", "-c", cfg)
	if !regexp.MustCompile(`(?m)^reten\s+0\s.*\slost$`).MatchString(r.out) {
		t.Errorf("ls text:\n%s", r.out)
	}
}

// TestLsCmdTimeline: records per hour with an empty hour between, as
// buckets (JSON) and as a bar ("·" for the empty hour), by records and
// by bytes, and per day.
func TestLsCmdTimeline(t *testing.T) {
	ctx := cliContext(t)
	brokers := startKafka(t, 1, "lt")
	cl, err := kgo.NewClient(kgo.SeedBrokers(strings.Split(brokers, ",")...), kgo.RecordPartitioner(kgo.ManualPartitioner()))
	if err != nil {
		t.Fatal(err)
	}
	at := func(h, m int) time.Time { return time.Date(2026, 12, 1, h, m, 0, 0, time.UTC) }
	var recs []*kgo.Record
	for _, ts := range []time.Time{at(10, 0), at(10, 30), at(11, 15), at(13, 5)} {
		recs = append(recs, &kgo.Record{Topic: "lt", Value: []byte(`{"a":1}`), Timestamp: ts})
	}
	if err := cl.ProduceSync(ctx, recs...).FirstErr(); err != nil {
		t.Fatal(err)
	}
	cl.Close()
	dir := t.TempDir()
	cfg := writeFile(t, "sink.yaml", sinkYAML(brokers, dir, "lt", 1))
	mustRun(t, ctx, ExitOK, "sink", "-c", cfg, "--once", "--log-level", "warn")

	parts := lsJSON(t, ExitOK, "-c", cfg, "--timeline", "hour")
	var got []string
	for _, b := range parts[0].Timeline {
		got = append(got, b.Start.Format("15:04")+"="+string(rune('0'+b.Records)))
	}
	if strings.Join(got, " ") != "10:00=2 11:00=1 12:00=0 13:00=1" {
		t.Errorf("timeline %q", got)
	}
	r := mustRun(t, ctx, ExitOK, "ls", "-c", cfg, "--timeline", "hour")
	if !strings.Contains(r.out, "timeline: records per bucket, UTC, · none\nlt/0  2026-12-01T10 █▄·▄ 2026-12-01T13  max 2\n") {
		t.Errorf("timeline text:\n%s", r.out)
	}
	r = mustRun(t, ctx, ExitOK, "ls", "-c", cfg, "--timeline", "day", "--by", "bytes")
	if !regexp.MustCompile(`timeline: bytes per bucket, UTC, · none\nlt/0  2026-12-01 █ 2026-12-01  max \d+\n`).MatchString(r.out) {
		t.Errorf("timeline by bytes per day:\n%s", r.out)
	}
	if r := mustRun(t, ctx, ExitOK, "ls", "-c", cfg); strings.Contains(r.out, "timeline") {
		t.Errorf("a timeline without --timeline:\n%s", r.out)
	}
}
