package cmd

import (
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/kafkas3/kafkas3/index"
	"github.com/kafkas3/kafkas3/verify"
	"github.com/twmb/franz-go/pkg/kadm"
	"github.com/twmb/franz-go/pkg/kgo"
)

// verifyArchive archives 20 records of "orders" (2 partitions, flush.size
// 3: objects at offsets 0, 3, 6 and 9 of each) into a local directory and
// returns the brokers, the directory and the config file. It writes no
// index checkpoints: the damage cases damage the index's log, which a
// checkpoint would stand for (TestVerifyCmdReadsCheckpoints covers them).
func verifyArchive(t *testing.T) (brokers, dir, cfg string) {
	t.Helper()
	ctx := cliContext(t)
	brokers = startKafka(t, 2, "orders")
	produceJSON(t, ctx, brokers, "orders", 2, 20)
	dir = t.TempDir()
	cfg = writeFile(t, "sink.yaml", sinkYAML(brokers, dir, "orders", 3))
	mustRun(t, ctx, ExitOK, "sink", "-c", cfg, "--once", "--log-level", "warn", "-p", "kafkas3.index.checkpoint.interval=0")
	return brokers, dir, cfg
}

// verifyJSON runs verify --json and parses its output.
func verifyJSON(t *testing.T, want int, args ...string) verify.Report {
	t.Helper()
	r := mustRun(t, cliContext(t), want, append([]string{"verify", "--json"}, args...)...)
	var rep verify.Report
	if err := json.Unmarshal([]byte(r.out), &rep); err != nil {
		t.Fatalf("verify --json output does not parse: %v\n%s", err, r.out)
	}
	return rep
}

func kinds(rep verify.Report) []string {
	var out []string
	for _, p := range rep.Problems {
		out = append(out, p.Kind)
	}
	return out
}

// TestVerifyCmdFindsEachDamage damages copies of one archive in one way
// each and checks verify's exit code, its problem line and its JSON.
func TestVerifyCmdFindsEachDamage(t *testing.T) {
	_, base, cfg := verifyArchive(t)
	const p0 = "topics/orders/partition=0/orders+0+"
	const p1 = "topics/orders/partition=1/orders+1+"
	for _, tc := range []struct {
		name   string
		damage func(t *testing.T, dir string)
		deep   bool
		extra  []string // more flags
		code   int
		line   string // in the text output
		kinds  []string
	}{
		{name: "clean", code: ExitOK, line: "kafkas3 verify: clean; partitions=2 index_objects=8 unindexed=0 checked: listing and sizes"},
		{name: "clean deep", deep: true, code: ExitOK, line: "kafkas3 verify: clean; partitions=2 index_objects=8 unindexed=0 checked: listing, sizes, checksums and decoding of 8 objects"},
		{
			name:   "deleted object",
			damage: func(t *testing.T, dir string) { remove(t, dir, p0+"0000000003.json") },
			code:   ExitFail,
			line:   `problem: missing orders/0 "` + p0 + `0000000003.json": object is in the index (commit 6, offsets 3-5) but not in the store`,
			kinds:  []string{verify.KindMissing},
		},
		{
			name: "truncated object",
			damage: func(t *testing.T, dir string) {
				if err := os.Truncate(filepath.Join(dir, p1+"0000000006.json"), 10); err != nil {
					t.Fatal(err)
				}
			},
			code:  ExitFail,
			line:  `problem: size orders/1 "` + p1 + `0000000006.json": object has 10 bytes in the store, `,
			kinds: []string{verify.KindSize},
		},
		{
			// Plain verify reads no object, and a local directory keeps no
			// checksum: a flipped byte that keeps the size is found by
			// --deep only, and plain verify says what it could not check.
			name:   "flipped byte, plain",
			damage: func(t *testing.T, dir string) { flip(t, dir, p1+"0000000000.json") },
			code:   ExitOK,
			line:   "note: the store keeps no checksum (a local directory): plain verify compared sizes only; --deep reads every object",
		},
		{
			name:   "flipped byte, deep",
			damage: func(t *testing.T, dir string) { flip(t, dir, p1+"0000000000.json") },
			deep:   true,
			code:   ExitFail,
			line:   `problem: checksum orders/1 "` + p1 + `0000000000.json": object's CRC32C is `,
			kinds:  []string{verify.KindChecksum},
		},
		{
			// The rotation at commit 6 is gone, index object and data.
			name: "gap",
			damage: func(t *testing.T, dir string) {
				remove(t, dir, p0+"0000000003.json")
				remove(t, dir, index.Key(index.DefaultPrefix, "orders", 0, 6, index.WriterOf("connect-test-sink")))
			},
			code:  ExitFail,
			line:  "problem: gap orders/0: 3 offsets 3-5: no index entry accounts for them",
			kinds: []string{verify.KindGap},
		},
		{
			name:   "unindexed Confluent-style object",
			damage: func(t *testing.T, dir string) { writeArchiveFile(t, dir, p0+"0000000100.json", "{\"x\":1}\n") },
			code:   ExitFail,
			line:   `problem: unindexed orders/0 "` + p0 + `0000000100.json": object under topics.dir has no index entry`,
			kinds:  []string{verify.KindUnindexed},
		},
		{
			name: "no index at all",
			damage: func(t *testing.T, dir string) {
				if err := os.RemoveAll(filepath.Join(dir, "_kafkas3")); err != nil {
					t.Fatal(err)
				}
			},
			code:  ExitFail,
			line:  "note: no archive index under kafkas3.index.prefix",
			kinds: []string{verify.KindUnindexed, verify.KindUnindexed, verify.KindUnindexed, verify.KindUnindexed, verify.KindUnindexed, verify.KindUnindexed, verify.KindUnindexed, verify.KindUnindexed},
		},
		{
			name:  "unknown topic",
			extra: []string{"--topics", "orders,nope"},
			code:  ExitFail,
			line:  `problem: empty nope: topic has no index entry and no object under "topics/nope/": check the name`,
			kinds: []string{verify.KindEmpty},
		},
		{
			name: "malformed index object",
			damage: func(t *testing.T, dir string) {
				writeArchiveFile(t, dir, "_kafkas3/index/orders/1/00000000000000000003.jsonl", "{}\n")
			},
			code:  ExitFail,
			line:  `problem: index -: load the archive index under "_kafkas3/index/": malformed archive index: index object "_kafkas3/index/orders/1/00000000000000000003.jsonl" line 1: v is 0`,
			kinds: []string{verify.KindIndex},
		},
	} {
		t.Run(tc.name, func(t *testing.T) {
			dir := t.TempDir()
			if err := os.CopyFS(dir, os.DirFS(base)); err != nil {
				t.Fatal(err)
			}
			if tc.damage != nil {
				tc.damage(t, dir)
			}
			args := []string{"-c", cfg, "--local-dir", dir}
			if tc.deep {
				args = append(args, "--deep")
			}
			args = append(args, tc.extra...)
			r := mustRun(t, cliContext(t), tc.code, append([]string{"verify"}, args...)...)
			if !strings.Contains(r.out, tc.line) {
				t.Errorf("output lacks %q:\n%s", tc.line, r.out)
			}
			if tc.code == ExitFail && !strings.Contains(r.err, "the archive has problems: ") {
				t.Errorf("stderr: %q", r.err)
			}
			rep := verifyJSON(t, tc.code, args...)
			if got := strings.Join(kinds(rep), ","); got != strings.Join(tc.kinds, ",") || rep.Clean != (tc.code == ExitOK) {
				t.Errorf("JSON problems %q clean %v, want %q", got, rep.Clean, tc.kinds)
			}
			if tc.name == "clean" {
				want := verify.Partition{Topic: "orders", Partition: 1, From: 0, Commit: 10, Records: 10, Entries: 4, Objects: 4, Bytes: rep.Partitions[1].Bytes}
				if len(rep.Partitions) != 2 || rep.Partitions[1] != want || want.Bytes == 0 {
					t.Errorf("partitions %+v", rep.Partitions)
				}
				if !strings.Contains(r.out, "orders  1          0..9     10       0       0     4        ") {
					t.Errorf("table row missing:\n%s", r.out)
				}
			}
		})
	}
}

// TestVerifyCmdOverlappingRuns archives the same topic twice into one
// directory with different connector names (groups): a second sink that
// would rewrite the first one's objects with other records is refused,
// naming the object; one that starts at offset 1 with the same flush.size
// writes objects of its own (+1, +4, +7), and verify reports the
// overlapping offsets and their objects.
func TestVerifyCmdOverlappingRuns(t *testing.T) {
	brokers, dir, _ := verifyArchive(t)
	ctx := cliContext(t)
	y := strings.Replace(sinkYAML(brokers, dir, "orders", 4), "name: test-sink", "name: second-sink", 1)
	r := mustRun(t, ctx, ExitFail, "sink", "-c", writeFile(t, "second.yaml", y), "--once", "--log-level", "warn")
	if !strings.Contains(r.err, `refusing to overwrite object "topics/orders/partition=`) || !strings.Contains(r.err, "another sink's consumer group") {
		t.Fatalf("second sink's stderr: %s", r.err)
	}

	y = strings.Replace(sinkYAML(brokers, dir, "orders", 3), "name: test-sink", "name: third-sink", 1)
	commitGroup(t, brokers, "connect-third-sink", "orders", 2, 1)
	mustRun(t, ctx, ExitOK, "sink", "-c", writeFile(t, "third.yaml", y), "--once", "--log-level", "warn")
	r = mustRun(t, ctx, ExitFail, "verify", "-c", writeFile(t, "v.yaml", y))
	// First run: +0 (0-2), +3, +6, +9; the third +1 (1-3), +4 (4-6),
	// +7 (7-9). Both runs' last rotation committed 10, each in its own
	// index object (the key names the writer's group), so every object
	// keeps its entry.
	const p = "topics/orders/partition=0/orders+0+"
	for _, want := range []string{
		"problem: overlap orders/0: 2 offsets 1-2 held by 2 objects: " + p + "0000000000.json, " + p + "0000000001.json",
		"problem: overlap orders/0: 1 offsets 3 held by 2 objects: " + p + "0000000001.json, " + p + "0000000003.json",
		"problem: overlap orders/0: 2 offsets 4-5 held by 2 objects: " + p + "0000000003.json, " + p + "0000000004.json",
		"problem: overlap orders/0: 1 offsets 6 held by 2 objects: " + p + "0000000004.json, " + p + "0000000006.json",
		"problem: overlap orders/0: 2 offsets 7-8 held by 2 objects: " + p + "0000000006.json, " + p + "0000000007.json",
		"problem: overlap orders/0: 1 offsets 9 held by 2 objects: " + p + "0000000007.json, " + p + "0000000009.json",
	} {
		if !strings.Contains(r.out, want) {
			t.Errorf("output lacks %q:\n%s", want, r.out)
		}
	}
	if strings.Contains(r.out, "problem: unindexed") {
		t.Errorf("one sink's index objects overwrote the other's:\n%s", r.out)
	}
	rep := verifyJSON(t, ExitFail, "-c", writeFile(t, "v2.yaml", y))
	n := map[string]int{}
	for _, pr := range rep.Problems {
		n[pr.Kind]++
	}
	// Per partition: 1-2, 3, 4-5, 6, 7-8 and 9 overlap.
	if n[verify.KindOverlap] != 12 || len(rep.Problems) != 12 || rep.Superseded != 0 {
		t.Errorf("problems %v, %d superseded; want 12 overlaps, none superseded", n, rep.Superseded)
	}
}

// commitGroup commits offset at for every partition of topic in group.
func commitGroup(t *testing.T, brokers, group, topic string, partitions int32, at int64) {
	t.Helper()
	cl, err := kgo.NewClient(kgo.SeedBrokers(strings.Split(brokers, ",")...))
	if err != nil {
		t.Fatal(err)
	}
	defer cl.Close()
	os := kadm.Offsets{}
	for p := range partitions {
		os.Add(kadm.Offset{Topic: topic, Partition: p, At: at, LeaderEpoch: -1})
	}
	resp, err := kadm.NewClient(cl).CommitOffsets(t.Context(), group, os)
	if err == nil {
		err = resp.Error()
	}
	if err != nil {
		t.Fatal(err)
	}
}

// TestVerifyCmdDeepProgressAndUsage: --deep writes progress lines on
// stderr; bad flags and configs exit 2.
func TestVerifyCmdDeepProgressAndUsage(t *testing.T) {
	_, dir, cfg := verifyArchive(t)
	var out, errb syncBuffer
	f := &verifyFlags{archiveFlags: archiveFlags{configFlags: configFlags{ConfigFile: cfg, LogLevel: "warn"}, Generation: 1}, Deep: true}
	if err := runVerifyCmd(cliContext(t), f, IO{Out: &out, Err: &errb}); err != nil {
		t.Fatalf("verify --deep: %v\n%s", err, out.String())
	}
	lines := strings.Split(strings.TrimSpace(errb.String()), "\n")
	if len(lines) != 8 || !strings.HasPrefix(lines[0], "kafkas3 verify: read 1/8 objects, ") || !strings.HasPrefix(lines[7], "kafkas3 verify: read 8/8 objects, ") {
		t.Errorf("progress lines:\n%s", errb.String())
	}
	ctx := cliContext(t)
	for _, args := range [][]string{
		{"verify", "-c", cfg, "--topics", "not a topic"},
		{"verify", "-c", cfg, "--bogus"},
		{"verify", "-c", cfg, "-p", "kafkas3.index.prefix=topics/x/"},
		{"verify", "--local-dir", dir, "-p", "format.class=nope"},
	} {
		mustRun(t, ctx, ExitConfig, args...)
	}
}

func remove(t *testing.T, dir, key string) {
	t.Helper()
	if err := os.Remove(filepath.Join(dir, filepath.FromSlash(key))); err != nil {
		t.Fatal(err)
	}
}

// flip inverts one bit in the middle of an object, keeping its size.
func flip(t *testing.T, dir, key string) {
	t.Helper()
	p := filepath.Join(dir, filepath.FromSlash(key))
	b, err := os.ReadFile(p)
	if err != nil {
		t.Fatal(err)
	}
	b[len(b)/2] ^= 0x01
	if err := os.WriteFile(p, b, 0o644); err != nil {
		t.Fatal(err)
	}
}
