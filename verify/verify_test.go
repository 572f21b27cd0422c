package verify

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"hash/crc32"
	"io"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/kafkas3/kafkas3/format"
	"github.com/kafkas3/kafkas3/index"
	"github.com/kafkas3/kafkas3/partition"
	"github.com/kafkas3/kafkas3/s3store"
)

func put(t *testing.T, st s3store.Store, key, body string) {
	t.Helper()
	ctx := context.Background()
	w, err := st.Create(ctx, key)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := io.WriteString(w, body); err != nil {
		t.Fatal(err)
	}
	if err := w.Commit(ctx); err != nil {
		t.Fatal(err)
	}
}

// obj describes body for a v2 entry: its CRC32C, as the sink does by
// default.
func obj(key, part, body string) index.Object {
	return index.Object{Key: key, Part: part, Size: int64(len(body)), CRC32C: index.FormatCRC32C(crc32.Checksum([]byte(body), crc32.MakeTable(crc32.Castagnoli)))}
}

// objSHA describes body for a v1 entry (sha256 only) or, with withCRC, a
// v2 entry of kafkas3.index.digest=sha256 (both).
func objSHA(key, part, body string, withCRC bool) index.Object {
	o := obj(key, part, body)
	if !withCRC {
		o.CRC32C = ""
	}
	sum := sha256.Sum256([]byte(body))
	o.SHA256 = hex.EncodeToString(sum[:])
	return o
}

// archive stores objects and one index object holding entries at commit.
func archive(t *testing.T, st s3store.Store, commit int64, entries ...index.Entry) {
	t.Helper()
	b, err := index.Encode(entries)
	if err != nil {
		t.Fatal(err)
	}
	put(t, st, index.Key(index.DefaultPrefix, entries[0].Topic, entries[0].Partition, commit, ""), string(b))
}

func entry(topic string, p int32, key string, from, commit int64, runs []index.Run, objs ...index.Object) index.Entry {
	var n int64
	for _, r := range runs {
		n += r.Len()
	}
	return index.Entry{V: index.Version, Topic: topic, Partition: p, Key: key, Objects: objs, Runs: runs, Records: n, From: from, Commit: commit}
}

func run(t *testing.T, cfg Config, st s3store.Store) *Report {
	t.Helper()
	rep, err := Run(context.Background(), cfg, st, nil)
	if err != nil {
		t.Fatal(err)
	}
	return rep
}

func baseConfig() Config {
	return Config{Keys: partition.DefaultKeyConfig(), Format: format.NewJSON(), IndexPrefix: index.DefaultPrefix, Deep: true}
}

func problemKinds(rep *Report) string {
	var out []string
	for _, p := range rep.Problems {
		out = append(out, p.Kind+":"+p.Key)
	}
	return strings.Join(out, " ")
}

// TestDeepChecksWhatTheHashCannot: objects whose bytes match the index
// but that do not decode, or hold another number of records than the
// entry, are problems only --deep finds; keys and headers objects are
// read with the format of their extension.
func TestDeepChecksWhatTheHashCannot(t *testing.T) {
	st := s3store.NewMemory()
	const p = "topics/t/partition=0/t+0+"
	bodies := map[string]string{
		p + "0000000000.json":         "1\n2\n",
		p + "0000000000.keys.json":    "\"a\"\nnull\n",
		p + "0000000000.headers.json": "[]\n[{\"key\":\"h\",\"value\":null}]\n",
		p + "0000000002.json":         "3\n4\n5\n", // the index says 2 records
		p + "0000000004.json":         "not json\n",
	}
	for k, b := range bodies {
		put(t, st, k, b)
	}
	archive(t, st, 2, entry("t", 0, p+"0000000000.json", 0, 2, []index.Run{{First: 0, Last: 1}},
		obj(p+"0000000000.json", "", bodies[p+"0000000000.json"]),
		obj(p+"0000000000.keys.json", "keys", bodies[p+"0000000000.keys.json"]),
		obj(p+"0000000000.headers.json", "headers", bodies[p+"0000000000.headers.json"])))
	archive(t, st, 4, entry("t", 0, p+"0000000002.json", 2, 4, []index.Run{{First: 2, Last: 3}}, obj(p+"0000000002.json", "", bodies[p+"0000000002.json"])))
	archive(t, st, 5, entry("t", 0, p+"0000000004.json", 4, 5, []index.Run{{First: 4, Last: 4}}, obj(p+"0000000004.json", "", bodies[p+"0000000004.json"])))

	cfg := baseConfig()
	cfg.Deep = false
	if rep := run(t, cfg, st); !rep.Clean {
		t.Fatalf("plain verify: %s", problemKinds(rep))
	}
	var progress []string
	cfg.Deep = true
	cfg.Progress = func(done, total int, b, tb int64) { progress = append(progress, fmt.Sprintf("%d/%d", done, total)) }
	rep := run(t, cfg, st)
	if got, want := problemKinds(rep), "records:"+p+"0000000002.json decode:"+p+"0000000004.json"; got != want {
		t.Fatalf("problems %s, want %s", got, want)
	}
	if rep.ObjectsRead != 5 || strings.Join(progress, " ") != "1/5 2/5 3/5 4/5 5/5" {
		t.Fatalf("read %d objects, progress %v", rep.ObjectsRead, progress)
	}
	if d := rep.Problems[0].Detail; !strings.Contains(d, "object holds 3 records, the index says 2 (offsets 2-3)") {
		t.Errorf("records detail %q", d)
	}
}

// envelopeObject writes records with the given offsets in the JSON
// envelope (store.envelope=true).
func envelopeObject(t *testing.T, offsets ...int64) string {
	t.Helper()
	f, err := format.NewEnvelope(format.NewJSON(), format.KindJSON)
	if err != nil {
		t.Fatal(err)
	}
	var b strings.Builder
	w, err := f.NewWriter(&b)
	if err != nil {
		t.Fatal(err)
	}
	for _, o := range offsets {
		if err := w.Write(&format.Record{Topic: "e", Partition: 0, Offset: o, Value: []byte("v")}); err != nil {
			t.Fatal(err)
		}
	}
	if err := w.Close(); err != nil {
		t.Fatal(err)
	}
	return b.String()
}

// TestDeepChecksEnvelopeOffsets: records of an envelope object carry
// their offsets; --deep compares each with the entry's runs, and an entry
// flagged envelope whose object holds plain values is a decode problem.
func TestDeepChecksEnvelopeOffsets(t *testing.T) {
	st := s3store.NewMemory()
	const p = "topics/e/partition=0/e+0+"
	good, bad, plain := envelopeObject(t, 0, 1, 3), envelopeObject(t, 4, 6), "1\n"
	put(t, st, p+"0000000000.json", good)
	put(t, st, p+"0000000004.json", bad)
	put(t, st, p+"0000000006.json", plain)
	for _, e := range []index.Entry{
		entry("e", 0, p+"0000000000.json", 0, 4, []index.Run{{First: 0, Last: 1}, {First: 3, Last: 3}}, obj(p+"0000000000.json", "", good)),
		entry("e", 0, p+"0000000004.json", 4, 6, []index.Run{{First: 4, Last: 5}}, obj(p+"0000000004.json", "", bad)),
		entry("e", 0, p+"0000000006.json", 6, 7, []index.Run{{First: 6, Last: 6}}, obj(p+"0000000006.json", "", plain)),
	} {
		e.Envelope = true
		archive(t, st, e.Commit, e)
	}
	rep := run(t, baseConfig(), st)
	if got := problemKinds(rep); got != "offsets:"+p+"0000000004.json decode:"+p+"0000000006.json" {
		t.Fatalf("problems %s", got)
	}
	if d := rep.Problems[0].Detail; d != "record 1 has offset 6, the index says 5" {
		t.Errorf("detail %q", d)
	}
	if pt := rep.Partitions[0]; pt.Records != 6 || pt.Absent != 1 || pt.Problems != 2 {
		t.Errorf("partition %+v", pt)
	}
}

// TestTopicsAndEmptyTopicsDir: with an empty topics.dir the index folder
// is no topic folder and its objects are never "unindexed"; --topics
// limits both the index and the listing.
func TestTopicsAndEmptyTopicsDir(t *testing.T) {
	st := s3store.NewMemory()
	for _, topic := range []string{"a", "b"} {
		key := topic + "/partition=0/" + topic + "+0+0000000000.json"
		put(t, st, key, "1\n")
		archive(t, st, 1, entry(topic, 0, key, 0, 1, []index.Run{{First: 0, Last: 0}}, obj(key, "", "1\n")))
	}
	put(t, st, "b/partition=0/b+0+0000000001.json", "2\n") // unindexed
	cfg := baseConfig()
	cfg.Keys.TopicsDir = ""
	rep := run(t, cfg, st)
	if got := problemKinds(rep); got != "unindexed:b/partition=0/b+0+0000000001.json" || len(rep.Partitions) != 2 || rep.Unindexed != 1 {
		t.Fatalf("problems %s, partitions %d", got, len(rep.Partitions))
	}
	cfg.Topics = []string{"a"}
	rep = run(t, cfg, st)
	if !rep.Clean || len(rep.Partitions) != 1 || rep.Partitions[0].Topic != "a" || rep.IndexObjects != 1 {
		t.Fatalf("--topics a: %s, %+v", problemKinds(rep), rep.Partitions)
	}
	// A topic with nothing is never clean (a typo).
	cfg.Topics = []string{"a", "typo"}
	rep = run(t, cfg, st)
	if got := problemKinds(rep); got != "empty:" || rep.Problems[0].Topic != "typo" {
		t.Fatalf("--topics a,typo: %s", got)
	}
}

type failList struct{ s3store.Store }

func (failList) List(context.Context, string, func(s3store.ObjectInfo) error) error {
	return fmt.Errorf("listing refused")
}

// TestStoreFailureIsAnError: a store that cannot be listed is an error,
// not a report.
func TestStoreFailureIsAnError(t *testing.T) {
	if _, err := Run(context.Background(), baseConfig(), failList{s3store.NewMemory()}, nil); err == nil || !strings.Contains(err.Error(), "listing refused") {
		t.Fatalf("err = %v", err)
	}
}

// TestOlderEntryMatches: a later sink run with a smaller flush.size
// rewrote +0 with fewer records under a lower commit. The store's object
// matches the older entry, which verify then uses (by size; with --deep,
// by SHA-256 when the sizes agree), as the source's plan does: clean, not
// "size".
func TestOlderEntryMatches(t *testing.T) {
	const p = "topics/o/partition=0/o+0+"
	for _, deep := range []bool{false, true} {
		st := s3store.NewMemory()
		runA0 := "1\n2\n3\n4\n5\n" // first run, flush.size 5
		runB0, runB3 := "1\n2\n3\n", "4\n5\n6\n"
		put(t, st, p+"0000000000.json", runB0)
		put(t, st, p+"0000000003.json", runB3)
		archive(t, st, 5, entry("o", 0, p+"0000000000.json", 0, 5, []index.Run{{First: 0, Last: 4}}, obj(p+"0000000000.json", "", runA0)))
		archive(t, st, 3, entry("o", 0, p+"0000000000.json", 0, 3, []index.Run{{First: 0, Last: 2}}, obj(p+"0000000000.json", "", runB0)))
		archive(t, st, 6, entry("o", 0, p+"0000000003.json", 3, 6, []index.Run{{First: 3, Last: 5}}, obj(p+"0000000003.json", "", runB3)))
		cfg := baseConfig()
		cfg.Deep = deep
		rep := run(t, cfg, st)
		if !rep.Clean || rep.Partitions[0].Records != 6 || rep.Partitions[0].Commit != 6 {
			t.Fatalf("deep=%v: problems %s, partitions %+v", deep, problemKinds(rep), rep.Partitions)
		}
	}

	// Same size, other bytes: only the checksum tells which entry the
	// object is; --deep takes the one that matches, and so does plain
	// verification, by the CRC32C the store keeps.
	st := s3store.NewMemory()
	a, b := "1\n2\n", "3\n4\n"
	put(t, st, p+"0000000000.json", b)
	archive(t, st, 3, entry("o", 0, p+"0000000000.json", 0, 3, []index.Run{{First: 0, Last: 1}}, obj(p+"0000000000.json", "", a)))
	archive(t, st, 2, entry("o", 0, p+"0000000000.json", 0, 2, []index.Run{{First: 0, Last: 1}}, obj(p+"0000000000.json", "", b)))
	rep := run(t, baseConfig(), st)
	if !rep.Clean || rep.ObjectsRead != 2 {
		t.Fatalf("deep, same size: problems %s, read %d objects (want the live entry, then the older one)", problemKinds(rep), rep.ObjectsRead)
	}
	plain := baseConfig()
	plain.Deep = false
	if rep := run(t, plain, st); !rep.Clean || rep.ChecksumsCompared != 1 {
		t.Fatalf("plain, same size: problems %s, %d checksums compared", problemKinds(rep), rep.ChecksumsCompared)
	}
	// When no entry's checksum matches, the live entry's problem is reported.
	put(t, st, p+"0000000000.json", "5\n6\n")
	for _, cfg := range []Config{baseConfig(), plain} {
		if rep := run(t, cfg, st); problemKinds(rep) != "checksum:"+p+"0000000000.json" || !strings.Contains(rep.Problems[0].Detail, "the index says "+obj("", "", a).CRC32C) {
			t.Fatalf("no match, deep %v: %s %+v", cfg.Deep, problemKinds(rep), rep.Problems)
		}
	}
}

// TestLayouts: archives of time-based and field layouts (folders of any
// depth, across a year boundary, with directory.delim "#" and no
// topics.dir too) whose objects of different folders interleave in
// offsets are clean, deep included; a deleted object of a deep folder is
// missing.
func TestLayouts(t *testing.T) {
	for _, tc := range []struct {
		name    string
		keys    partition.KeyConfig
		folders [2]string
	}{
		{"hourly", partition.DefaultKeyConfig(), [2]string{"year=2026/month=12/day=31/hour=23", "year=2027/month=01/day=01/hour=00"}},
		{"field, delim #, no topics.dir", partition.KeyConfig{DirectoryDelim: "#", FileDelim: "+", OffsetPadWidth: 10},
			[2]string{"region=eu#tier=3", "region=us#tier=1"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			st := s3store.NewMemory()
			// Offsets 0, 2, 4 in the first folder, 1, 3 in the second (late records, or field values).
			var entries []index.Entry
			for i, offs := range [][]int64{{0, 2, 4}, {1, 3}} {
				key := tc.keys.ObjectKey(partition.ObjectName{Topic: "t", Encoded: tc.folders[i], Partition: 0, StartOffset: offs[0], Ext: ".json"})
				var body string
				var runs []index.Run
				for _, o := range offs {
					body += fmt.Sprintf("%d\n", o)
					runs = append(runs, index.Run{First: o, Last: o})
				}
				put(t, st, key, body)
				entries = append(entries, entry("t", 0, key, 0, 5, runs, obj(key, "", body)))
			}
			archive(t, st, 5, entries...)
			cfg := baseConfig()
			cfg.Keys = tc.keys
			rep := run(t, cfg, st)
			if !rep.Clean || len(rep.Partitions) != 1 || rep.ObjectsRead != 2 {
				t.Fatalf("problems %s, partitions %+v, read %d", problemKinds(rep), rep.Partitions, rep.ObjectsRead)
			}
			// Delete the second folder's object: a new store without it.
			gone := entries[1].Key
			st2 := s3store.NewMemory()
			put(t, st2, entries[0].Key, "0\n2\n4\n")
			archive(t, st2, 5, entries...)
			if got := problemKinds(run(t, cfg, st2)); got != "missing:"+gone {
				t.Fatalf("deleted %s: problems %s", gone, got)
			}
		})
	}
}

// TestPlainVerifyComparesStoredChecksums: an object replaced by one of the
// same size (a flipped byte) is found without --deep on a store that keeps
// checksums (one stored-checksum request per object, at most
// Config.Concurrency at once), and named; on a local directory, which
// keeps none, plain verification can compare sizes only and says so, and
// --deep finds it. A v1 entry (SHA-256 only) has no CRC32C to compare
// without --deep; --deep checks its SHA-256, and a v2 entry's SHA-256
// (kafkas3.index.digest=sha256) besides its CRC32C.
func TestPlainVerifyComparesStoredChecksums(t *testing.T) {
	const p = "topics/c/partition=0/c+0+"
	local, err := s3store.NewLocal(s3store.LocalConfig{Dir: t.TempDir()}, nil)
	if err != nil {
		t.Fatal(err)
	}
	const n = 12
	for _, tc := range []struct {
		name  string
		store s3store.Store
		keeps bool
	}{{"memory", &countingStore{Memory: s3store.NewMemory()}, true}, {"local", local, false}} {
		st := tc.store
		for i := range n {
			key := fmt.Sprintf("%s%010d.json", p, i)
			body := fmt.Sprintf("%d\n", 10+i)
			put(t, st, key, body)
			archive(t, st, int64(i+1), entry("c", 0, key, int64(i), int64(i+1), []index.Run{{First: int64(i), Last: int64(i)}}, obj(key, "", body)))
		}
		cfg := baseConfig()
		cfg.Deep, cfg.Concurrency = false, 3
		if rep := run(t, cfg, st); !rep.Clean || rep.StoreChecksums != tc.keeps || rep.ChecksumsCompared+rep.NoChecksum != n ||
			(rep.ChecksumsCompared == n) != tc.keeps {
			t.Fatalf("%s: intact archive: problems %s, store checksums %v, compared %d, none %d",
				tc.name, problemKinds(rep), rep.StoreChecksums, rep.ChecksumsCompared, rep.NoChecksum)
		}
		bad := fmt.Sprintf("%s%010d.json", p, 5)
		put(t, st, bad, "16\n") // was "15\n": same size
		rep := run(t, cfg, st)
		want := ""
		if tc.keeps {
			want = "checksum:" + bad
		}
		if got := problemKinds(rep); got != want {
			t.Fatalf("%s: problems %q, want %q", tc.name, got, want)
		}
		if tc.keeps && !strings.Contains(rep.Problems[0].Detail, "the index says "+obj("", "", "15\n").CRC32C) {
			t.Errorf("detail %q", rep.Problems[0].Detail)
		}
		if cs, ok := st.(*countingStore); ok {
			if cs.calls.Load() != 2*n || cs.peak.Load() > 3 || cs.peak.Load() < 2 {
				t.Errorf("%d stored-checksum requests, %d at once; want %d, 2 or 3 at once", cs.calls.Load(), cs.peak.Load(), 2*n)
			}
		}
		cfg.Deep = true
		if got := problemKinds(run(t, cfg, st)); got != "checksum:"+bad {
			t.Fatalf("%s: deep problems %q", tc.name, got)
		}
	}

	// v1 and SHA-256 entries.
	st := s3store.NewMemory()
	k1, k2 := p+"0000000000.json", p+"0000000001.json"
	put(t, st, k1, "1\n")
	put(t, st, k2, "2\n")
	e1 := entry("c", 0, k1, 0, 1, []index.Run{{First: 0, Last: 0}}, objSHA(k1, "", "1\n", false))
	e1.V = index.Version1
	archive(t, st, 1, e1)
	archive(t, st, 2, entry("c", 0, k2, 1, 2, []index.Run{{First: 1, Last: 1}}, objSHA(k2, "", "2\n", true)))
	cfg := baseConfig()
	cfg.Deep = false
	if rep := run(t, cfg, st); !rep.Clean || rep.ChecksumsCompared != 1 || rep.NoChecksum != 1 {
		t.Fatalf("v1 and sha256 entries: problems %s, compared %d, none %d", problemKinds(rep), rep.ChecksumsCompared, rep.NoChecksum)
	}
	cfg.Deep = true
	if rep := run(t, cfg, st); !rep.Clean {
		t.Fatalf("deep: %s", problemKinds(rep))
	}
	put(t, st, k1, "3\n")
	if got := problemKinds(run(t, cfg, st)); got != "sha256:"+k1 {
		t.Fatalf("deep, v1 entry changed: %q", got)
	}
}

// countingStore counts the stored-checksum requests of a memory store
// and the most that ran at once.
type countingStore struct {
	*s3store.Memory
	calls, running, peak atomic.Int64
}

func (c *countingStore) StoredCRC32C(ctx context.Context, key string) (string, bool, error) {
	c.calls.Add(1)
	now := c.running.Add(1)
	defer c.running.Add(-1)
	for {
		p := c.peak.Load()
		if now <= p || c.peak.CompareAndSwap(p, now) {
			break
		}
	}
	time.Sleep(5 * time.Millisecond) // let requests overlap
	return c.Memory.StoredCRC32C(ctx, key)
}

// failingList fails every listing under prefix: topics.dir cannot be
// listed, the index can.
type failingList struct {
	s3store.Store
	prefix string
}

var errDenied = errors.New("access denied")

func (f failingList) List(ctx context.Context, prefix string, fn func(s3store.ObjectInfo) error) error {
	if strings.HasPrefix(prefix, f.prefix) || strings.HasPrefix(f.prefix, prefix) && !strings.HasPrefix(prefix, index.DefaultPrefix) {
		return errDenied
	}
	return f.Store.List(ctx, prefix, fn)
}

// TestIndexErrorsBeforeListingErrors: verify reads the index one partition
// at a time beside the listing of topics.dir. A listing that fails is
// returned as Run's error, but a malformed index object is reported (an
// index problem naming it) whichever partition holds it, as when the
// index was read whole before the listing was looked at; and neither
// hides the other's kind.
func TestIndexErrorsBeforeListingErrors(t *testing.T) {
	st := s3store.NewMemory()
	const p = "topics/t/partition=0/t+0+"
	body := "1\n2\n"
	put(t, st, p+"0000000000.json", body)
	for part := range int32(6) {
		archive(t, st, 2, entry("t", part, fmt.Sprintf("topics/t/partition=%d/t+%d+0000000000.json", part, part), 0, 2, []index.Run{{First: 0, Last: 1}},
			obj(fmt.Sprintf("topics/t/partition=%d/t+%d+0000000000.json", part, part), "", body)))
	}
	cfg := baseConfig()
	cfg.Deep = false
	denied := failingList{Store: st, prefix: "topics/t/"}
	if _, err := Run(context.Background(), cfg, denied, nil); !errors.Is(err, errDenied) {
		t.Fatalf("Run with topics.dir unlistable = %v, want the listing's error", err)
	}
	put(t, st, index.Key(index.DefaultPrefix, "t", 4, 3, ""), "not json\n")
	rep, err := Run(context.Background(), cfg, denied, nil)
	if err != nil || len(rep.Problems) != 1 || rep.Problems[0].Kind != KindIndex || !strings.Contains(rep.Problems[0].Detail, "/t/4/") {
		t.Fatalf("Run = %+v, %v; want only the malformed index object of partition 4 reported", rep, err)
	}
}
