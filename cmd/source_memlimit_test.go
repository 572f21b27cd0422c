package cmd

import (
	"math"
	"runtime/debug"
	"testing"
)

// TestSourceCmdPutsBackTheMemoryLimit: a restore that reads each object
// once runs under the soft memory limit (memlimit.Start) and, once the
// command returns, the limit is the one it found, not its own: a run
// after it (in the same process) must not inherit a limit of this run's
// live heap.
func TestSourceCmdPutsBackTheMemoryLimit(t *testing.T) {
	t.Setenv("GOMEMLIMIT", "")
	const found = math.MaxInt64 - 12345 // recognisable, and no limit in practice
	before := debug.SetMemoryLimit(found)
	t.Cleanup(func() { debug.SetMemoryLimit(before) })
	ctx := cliContext(t)
	a := newArchived(t, ctx, 2, 20, 4, "", "orders")
	mustRun(t, ctx, ExitOK, "source", "-c", a.cfg, "--topic-rename", "copy_of_$0", "--create-topics")
	if got := debug.SetMemoryLimit(-1); got != found {
		t.Fatalf("memory limit after the command: %d, want the %d it found", got, found)
	}
}
