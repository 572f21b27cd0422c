package cmd

import (
	"os"
	"path/filepath"
	"reflect"
	"slices"
	"strings"
	"testing"

	"github.com/kafkas3/kafkas3/index"
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
