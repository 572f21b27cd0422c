package cmd

import (
	"fmt"
	"log/slog"
	"math"
	"os"
	"path/filepath"
	"reflect"
	"slices"
	"strings"
	"testing"

	"github.com/kafkas3/kafkas3/index"
	"github.com/kafkas3/kafkas3/objindex"
	"github.com/kafkas3/kafkas3/s3store"
)

// TestIndexRebuildCmd: an archive without checkpoints gets one per
// partition (--dry-run lists them first and writes nothing); a second
// rebuild writes nothing; verify then reads the checkpoints and reports
// what it reported from the log; a damaged checkpoint is a problem naming
// it.
func TestIndexRebuildCmd(t *testing.T) {
	ctx := cliContext(t)
	_, dir, cfg := verifyArchive(t)
	before := verifyJSON(t, ExitOK, "-c", cfg, "--local-dir", dir)

	// The sink ran with checkpoints off: only its start checkpoints (no
	// entry, at offset 0) are there.
	starts := keysUnder(t, dir, index.CheckpointDir(index.DefaultPrefix))
	if len(starts) != 2 {
		t.Fatalf("checkpoints %q, want the two start checkpoints", starts)
	}
	r := mustRun(t, ctx, ExitOK, "index", "rebuild", "-c", cfg, "--local-dir", dir, "--dry-run")
	if !strings.Contains(r.out, `would write orders/0 writer`) || !strings.Contains(r.out, "checkpoints=2") {
		t.Fatalf("--dry-run output:\n%s", r.out)
	}
	if ks := keysUnder(t, dir, index.CheckpointDir(index.DefaultPrefix)); !reflect.DeepEqual(ks, starts) {
		t.Fatalf("--dry-run wrote %q", ks)
	}
	r = mustRun(t, ctx, ExitOK, "index", "rebuild", "-c", cfg, "--local-dir", dir)
	ks := keysUnder(t, dir, index.CheckpointDir(index.DefaultPrefix))
	if len(ks) != 4 || !strings.Contains(r.out, "checkpoints=2 index_objects_read=8") {
		t.Fatalf("rebuild wrote %q:\n%s", ks, r.out)
	}
	ks = slices.DeleteFunc(ks, func(k string) bool { return slices.Contains(starts, k) })
	r = mustRun(t, ctx, ExitOK, "index", "rebuild", "-c", cfg, "--local-dir", dir)
	if !strings.Contains(r.out, "checkpoints=0 index_objects_read=0") {
		t.Fatalf("a second rebuild:\n%s", r.out)
	}
	after := verifyJSON(t, ExitOK, "-c", cfg, "--local-dir", dir)
	if !reflect.DeepEqual(before, after) {
		t.Fatalf("verify after the rebuild %+v\nbefore %+v", after, before)
	}
	// A damaged checkpoint is a problem naming it.
	if err := os.WriteFile(filepath.Join(dir, filepath.FromSlash(ks[0])), []byte("damaged"), 0o644); err != nil {
		t.Fatal(err)
	}
	rep := verifyJSON(t, ExitFail, "-c", cfg, "--local-dir", dir)
	if len(rep.Problems) != 1 || !strings.Contains(rep.Problems[0].Detail, ks[0]) {
		t.Fatalf("problems %+v, want one naming %s", rep.Problems, ks[0])
	}
}

// loadLocal loads the archive index of the local archive dir.
func loadLocal(t *testing.T, dir string) *index.Index {
	t.Helper()
	st, err := s3store.NewLocal(s3store.LocalConfig{Dir: dir}, slog.New(slog.DiscardHandler))
	if err != nil {
		t.Fatal(err)
	}
	ix, err := index.Load(t.Context(), st, index.DefaultPrefix, nil)
	if err != nil {
		t.Fatal(err)
	}
	return ix
}

// sameObjects fails unless got and want describe the same objects: keys,
// parts, sizes, checksums, offsets and record counts (not from, commit,
// timestamps or topic ids, which only the sink knew).
func sameObjects(t *testing.T, what string, got, want []index.Entry) {
	t.Helper()
	strip := func(es []index.Entry) []index.Entry {
		out := make([]index.Entry, len(es))
		for i, e := range es {
			out[i] = index.Entry{Topic: e.Topic, Partition: e.Partition, Key: e.Key, Objects: e.Objects, Runs: e.Runs,
				Records: e.Records, Envelope: e.Envelope, Tombstone: e.Tombstone}
		}
		return out
	}
	if g, w := strip(got), strip(want); !reflect.DeepEqual(g, w) {
		t.Fatalf("%s: the rebuilt index describes\n%+v\nthe sink's\n%+v", what, g, w)
	}
}

// TestIndexRebuildFromObjects: an archive whose index is deleted (as one
// written without it) gets it back from its objects with --from-objects:
// the same objects, offsets and records as the sink's entries, under the
// rebuild's writer, with a checkpoint per partition; verify finds it
// clean and the source's dry run plans what it planned from the sink's
// index. A second run indexes nothing. Envelope objects give their
// offsets; plain ones the offsets their names start at.
func TestIndexRebuildFromObjects(t *testing.T) {
	ctx := cliContext(t)
	brokers := startKafka(t, 2, "orders")
	produceJSON(t, ctx, brokers, "orders", 2, 20)
	for _, envelope := range []bool{false, true} {
		dir := t.TempDir()
		cfg := writeFile(t, "sink.yaml", sinkYAML(brokers, dir, "orders", 3)+fmt.Sprintf("store.envelope: %v\n", envelope))
		// .keys objects beside plain ones (the envelope holds the keys).
		// A group per run.
		mustRun(t, ctx, ExitOK, "sink", "-c", cfg, "--once", "--log-level", "warn", "-p", fmt.Sprintf("store.kafka.keys=%v", !envelope),
			"-p", fmt.Sprintf("name=rebuild-envelope-%v", envelope))
		want := loadLocal(t, dir)
		planWant := mustRun(t, ctx, ExitOK, "source", "-c", cfg, "--topic-rename", "copy_$0", "--dry-run").out
		for _, d := range []string{index.Dir(index.DefaultPrefix), index.CheckpointDir(index.DefaultPrefix)} {
			if err := os.RemoveAll(filepath.Join(dir, filepath.FromSlash(d))); err != nil {
				t.Fatal(err)
			}
		}
		r := mustRun(t, ctx, ExitOK, "index", "rebuild", "-c", cfg, "--from-objects", "--dry-run")
		if !strings.Contains(r.out, "would index orders/0 from its objects") || len(keysUnder(t, dir, index.Dir(index.DefaultPrefix))) != 0 {
			t.Fatalf("--dry-run:\n%s", r.out)
		}
		r = mustRun(t, ctx, ExitOK, "index", "rebuild", "-c", cfg, "--from-objects")
		if !strings.Contains(r.out, "partitions=2 already_indexed=0 underivable=0 objects=8 index_objects=8 checkpoints=2") {
			t.Fatalf("envelope %v: rebuild --from-objects:\n%s\n%s", envelope, r.out, r.err)
		}
		got := loadLocal(t, dir)
		sameObjects(t, fmt.Sprintf("envelope %v", envelope), got.Entries, want.Entries)
		for i, e := range got.Entries {
			// Envelopes hold the timestamps; plain objects none (any time).
			w := want.Entries[i]
			if envelope && (e.MinTS != w.MinTS || e.MaxTS != w.MaxTS) || !envelope && (e.MinTS != math.MinInt64 || e.MaxTS != math.MaxInt64) {
				t.Fatalf("envelope %v: %s: timestamps [%d,%d], the sink's [%d,%d]", envelope, e.Key, e.MinTS, e.MaxTS, w.MinTS, w.MaxTS)
			}
		}
		assumed := 8 // plain objects: offsets from their names
		if envelope {
			assumed = 0
		}
		if got.Checkpoints != 2 || got.FullListings != 0 || got.Assumed != assumed || want.Assumed != 0 ||
			len(keysUnder(t, dir, index.Dir(index.DefaultPrefix)+"orders/0/")) != 4 {
			t.Fatalf("the rebuilt index: %d checkpoints read, %d full listings, %d assumed", got.Checkpoints, got.FullListings, got.Assumed)
		}
		for _, k := range keysUnder(t, dir, index.Dir(index.DefaultPrefix)) {
			if kn, err := index.ParseKey(k); err != nil || kn.Writer != objindex.Writer() {
				t.Fatalf("index object %s: %+v, %v; want the rebuild's writer", k, kn, err)
			}
		}
		if rep := verifyJSON(t, ExitOK, "-c", cfg, "--deep"); len(rep.Problems) != 0 {
			t.Fatalf("verify of the rebuilt index: %+v", rep.Problems)
		}
		if plan := mustRun(t, ctx, ExitOK, "source", "-c", cfg, "--topic-rename", "copy_$0", "--dry-run").out; plan != planWant {
			t.Fatalf("envelope %v: the plan from the rebuilt index\n%s\nfrom the sink's\n%s", envelope, plan, planWant)
		}
		r = mustRun(t, ctx, ExitOK, "index", "rebuild", "-c", cfg, "--from-objects")
		if !strings.Contains(r.out, "partitions=0 already_indexed=2 underivable=0 objects=0") || !strings.Contains(r.out, "checkpoints=0 index_objects_read=0") {
			t.Fatalf("a second rebuild:\n%s", r.out)
		}
	}
}
