//go:build integration

package e2e

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"os/exec"
	"regexp"
	"sort"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/twmb/franz-go/pkg/kadm"
	"github.com/twmb/franz-go/pkg/kerr"

	"github.com/kafkas3/kafkas3/internal/testbed"
)

// srcUnique returns base with a suffix that differs between runs, so
// -count=N runs do not meet the topics and groups of earlier iterations.
func srcUnique(base string) string {
	return fmt.Sprintf("%s-%06x", base, time.Now().UnixNano()/1000&0xffffff)
}

// srcMarkerGroup is the consumer group holding a target's resume markers
// (restore.MarkerGroup; spelled out so the test checks the documented name).
func srcMarkerGroup(target string) string { return "kafkas3-restore-" + target }

// srcStart starts `kafkas3 source --config cfgPath args...` like startSink
// starts the sink: stdout and stderr go to files, the environment carries
// no AWS_ or KAFKAS3_ settings, and the process dies with the test.
func srcStart(t *testing.T, label, cfgPath string, args ...string) *proc {
	t.Helper()
	return startKafkas3(t, label, "source", cfgPath, args...)
}

// srcRun runs the source to completion and returns its exit code.
func srcRun(t *testing.T, label, cfgPath string, timeout time.Duration, args ...string) (*proc, int) {
	t.Helper()
	p := srcStart(t, label, cfgPath, args...)
	return p, p.wait(timeout)
}

// srcRunOK runs the source, fails the test unless it exits 0, and returns
// the parsed summary line.
func srcRunOK(t *testing.T, label, cfgPath string, args ...string) (srcSummary, *proc) {
	t.Helper()
	p, code := srcRun(t, label, cfgPath, 3*time.Minute, args...)
	if code != 0 {
		t.Fatalf("%s: exit code %d\n%s", label, code, p.logs())
	}
	sum, err := srcParseSummary(p.stdout())
	if err != nil {
		t.Fatalf("%s: %v\n%s", label, err, p.logs())
	}
	t.Logf("%s: %s (wall %v)", label, sum.line, p.ended.Sub(p.started).Round(time.Millisecond))
	return sum, p
}

// srcSummary is the parsed "kafkas3 source: topics=... already_present=..." line.
type srcSummary struct {
	line                                      string
	topics, partitions                        int
	objects, records, bytes, skipped, present int64
	seconds                                   float64
	// duplicates, damaged, gaps and gapOffsets are the fields after
	// already_present (archived records whose offset another object holds,
	// damaged objects skipped, gaps and their offsets).
	duplicates, damaged, gaps, gapOffsets int64
}

var srcSummaryRE = regexp.MustCompile(`(?m)^kafkas3 source: topics=(\d+) partitions=(\d+) objects=(\d+) records=(\d+) bytes=(\d+) seconds=([0-9.]+) skipped=(\d+) already_present=(\d+) duplicates=(\d+) damaged_objects=(\d+) gaps=(\d+) gap_offsets=(\d+)(?: lost=\d+)?(?: until=\S+ past_cut=\d+)?(?: unknown_order=\d+)?(?: damaged_found=\d+)?(?: erased=\d+)?(?: filtered=\d+)?(?: expired=\d+)?(?: schemas=\d+ unknown_schema_ids=\d+)?$`)

func srcParseSummary(stdout string) (srcSummary, error) {
	m := srcSummaryRE.FindAllStringSubmatch(stdout, -1)
	if len(m) != 1 {
		return srcSummary{}, fmt.Errorf("want exactly one source summary line on stdout, got %d in %q", len(m), stdout)
	}
	f := m[0]
	atoi := func(s string) int64 { n, _ := strconv.ParseInt(s, 10, 64); return n }
	s := srcSummary{line: strings.TrimPrefix(f[0], "kafkas3 source: "),
		topics: int(atoi(f[1])), partitions: int(atoi(f[2])), objects: atoi(f[3]), records: atoi(f[4]),
		bytes: atoi(f[5]), skipped: atoi(f[7]), present: atoi(f[8]),
		duplicates: atoi(f[9]), damaged: atoi(f[10]), gaps: atoi(f[11]), gapOffsets: atoi(f[12])}
	s.seconds, _ = strconv.ParseFloat(f[6], 64)
	return s, nil
}

// srcKcat reads partition p of topic from the beginning to its end with
// kcat, an independent client, and returns the record values in order.
func (b *bed) srcKcat(t *testing.T, topic string, p int32) [][]byte {
	t.Helper()
	kcat := testbed.Tool(t, "kcat", "apt-get install kcat")
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	// %S is the value size: it guards against a value holding a newline.
	cmd := exec.CommandContext(ctx, kcat, "-C", "-b", b.k.Addr, "-t", topic, "-p", strconv.Itoa(int(p)),
		"-o", "beginning", "-e", "-q", "-f", "%S %s\n")
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	out, err := cmd.Output()
	if err != nil {
		t.Fatalf("kcat %s/%d: %v\n%s", topic, p, err, stderr.String())
	}
	var vals [][]byte
	for len(out) > 0 {
		sp := bytes.IndexByte(out, ' ')
		if sp < 0 {
			t.Fatalf("kcat %s/%d: unexpected output %.80q", topic, p, out)
		}
		n, err := strconv.Atoi(string(out[:sp]))
		if err != nil || len(out) < sp+1+n+1 || out[sp+1+n] != '\n' {
			t.Fatalf("kcat %s/%d: unexpected output %.80q", topic, p, out)
		}
		vals = append(vals, out[sp+1:sp+1+n])
		out = out[sp+1+n+1:]
	}
	return vals
}

// srcSameValues fails unless got equals want, naming the first difference.
func srcSameValues(t *testing.T, what string, got, want [][]byte) {
	t.Helper()
	for i := range min(len(got), len(want)) {
		if !bytes.Equal(got[i], want[i]) {
			t.Fatalf("%s: record %d is %.80q, want %.80q", what, i, got[i], want[i])
		}
	}
	if len(got) != len(want) {
		t.Fatalf("%s: %d records, want %d", what, len(got), len(want))
	}
}

// srcValues returns value(p, i) for i in [from, to).
func srcValues(p int32, from, to int) [][]byte {
	out := make([][]byte, 0, to-from)
	for i := from; i < to; i++ {
		out = append(out, value(p, i))
	}
	return out
}

// srcTopicPartitions returns the partition count of topic, or -1 when it
// does not exist.
func (b *bed) srcTopicPartitions(t *testing.T, topic string) int {
	t.Helper()
	cl, err := b.k.NewClient()
	if err != nil {
		t.Fatal(err)
	}
	defer cl.Close()
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	details, err := kadm.NewClient(cl).ListTopics(ctx, topic)
	if err != nil {
		t.Fatalf("list topic %s: %v", topic, err)
	}
	d, ok := details[topic]
	if !ok || errors.Is(d.Err, kerr.UnknownTopicOrPartition) {
		return -1
	}
	if d.Err != nil {
		t.Fatalf("list topic %s: %v", topic, d.Err)
	}
	return len(d.Partitions)
}

// srcEnds returns the end offsets of topic from a fresh client (a missing
// topic gives an empty map).
func (b *bed) srcEnds(t *testing.T, topic string) map[int32]int64 {
	t.Helper()
	cl, err := b.k.NewClient()
	if err != nil {
		t.Fatal(err)
	}
	defer cl.Close()
	out, err := srcEndsWith(kadm.NewClient(cl), topic)
	if err != nil {
		t.Fatal(err)
	}
	return out
}

func srcEndsWith(adm *kadm.Client, topic string) (map[int32]int64, error) {
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	ends, err := adm.ListEndOffsets(ctx, topic)
	out := map[int32]int64{}
	if err != nil {
		return nil, fmt.Errorf("end offsets of %s: %w", topic, err)
	}
	ends.Each(func(o kadm.ListedOffset) {
		if o.Err == nil {
			out[o.Partition] = o.Offset
		}
	})
	return out, nil
}

func srcSum(m map[int32]int64) int64 {
	var n int64
	for _, v := range m {
		n += v
	}
	return n
}

// srcFmt renders an offsets map in partition order.
func srcFmt(m map[int32]int64) string {
	ps := make([]int, 0, len(m))
	for p := range m {
		ps = append(ps, int(p))
	}
	sort.Ints(ps)
	var sb strings.Builder
	for i, p := range ps {
		if i > 0 {
			sb.WriteByte(' ')
		}
		fmt.Fprintf(&sb, "%d:%d", p, m[int32(p)])
	}
	return sb.String()
}

// srcHumanBytes formats n as the dry-run plan does: binary units with one
// decimal ("3.4 KiB"), or "N B" below 1 KiB.
func srcHumanBytes(n int64) string {
	if n < 1024 {
		return fmt.Sprintf("%d B", n)
	}
	div, exp := int64(1024), 0
	for m := n / 1024; m >= 1024; m /= 1024 {
		div *= 1024
		exp++
	}
	return fmt.Sprintf("%.1f %ciB", float64(n)/float64(div), "KMGTPE"[exp])
}

// srcPlanRow is one topic row of the --dry-run plan table.
type srcPlanRow struct {
	source, target      string
	partitions, objects int
	bytes, offsets      string
}

// srcParsePlan parses the rows of the --dry-run plan table:
// TOPIC TARGET PARTITIONS OBJECTS BYTES START OFFSETS.
func srcParsePlan(t *testing.T, out string) map[string]srcPlanRow {
	t.Helper()
	lines := strings.Split(out, "\n")
	if len(lines) == 0 || !regexp.MustCompile(`^TOPIC\s+TARGET\s+PARTITIONS\s+OBJECTS\s+BYTES\s+START OFFSETS\s*$`).MatchString(lines[0]) {
		t.Fatalf("dry run: no plan header in %q", out)
	}
	row := regexp.MustCompile(`^(\S+)\s+(\S+)\s+(\d+)\s+(\d+)\s+(\d+(?:\.\d)? [KMGTPE]?i?B)\s+(\S+)\s*$`)
	rows := map[string]srcPlanRow{}
	for _, l := range lines[1:] {
		if strings.HasPrefix(l, "total:") {
			return rows
		}
		m := row.FindStringSubmatch(l)
		if m == nil {
			t.Fatalf("dry run: unexpected plan line %q in\n%s", l, out)
		}
		parts, _ := strconv.Atoi(m[3])
		objs, _ := strconv.Atoi(m[4])
		rows[m[1]] = srcPlanRow{source: m[1], target: m[2], partitions: parts, objects: objs, bytes: m[5], offsets: m[6]}
	}
	t.Fatalf("dry run: no total line in %q", out)
	return nil
}

// srcArchiveKeys drops the archive index (the sink's default
// kafkas3.index.prefix, _kafkas3/) from a listing: the source plans the
// objects under topics.dir, and reads the index on its own.
func srcArchiveKeys(listed map[string]int64) map[string]int64 {
	out := map[string]int64{}
	for k, v := range listed {
		if !strings.HasPrefix(k, "_kafkas3/") {
			out[k] = v
		}
	}
	return out
}
