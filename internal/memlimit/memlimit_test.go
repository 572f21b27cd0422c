package memlimit

import (
	"context"
	"math"
	"runtime"
	"runtime/debug"
	"testing"
	"time"
)

func TestLimit(t *testing.T) {
	cases := []struct {
		live     uint64
		headroom int64
		want     int64
	}{
		{0, 64 << 20, 64 << 20},
		{100 << 20, 64 << 20, 164 << 20},
		{math.MaxInt64, 1, math.MaxInt64},
		{math.MaxUint64, 64 << 20, math.MaxInt64},
	}
	for _, c := range cases {
		if got := Limit(c.live, c.headroom); got != c.want {
			t.Errorf("Limit(%d, %d) = %d, want %d", c.live, c.headroom, got, c.want)
		}
	}
}

// TestRunFollowsTheLiveHeap checks that Run sets the limit to the live heap
// plus the headroom, raises it when the live heap grows, and restores the
// limit it found when ctx ends.
func TestRunFollowsTheLiveHeap(t *testing.T) {
	t.Setenv("GOMEMLIMIT", "")
	before := debug.SetMemoryLimit(-1)
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan struct{})
	const headroom = 256 << 20
	go func() { Run(ctx, Config{Headroom: headroom, Every: time.Millisecond}); close(done) }()

	limitAtLeast := func(want int64) int64 {
		t.Helper()
		deadline := time.Now().Add(5 * time.Second)
		for {
			runtime.GC()
			got := debug.SetMemoryLimit(-1)
			if got >= want && got < math.MaxInt64 {
				return got
			}
			if time.Now().After(deadline) {
				t.Fatalf("memory limit %d, want at least %d", got, want)
			}
			time.Sleep(5 * time.Millisecond)
		}
	}
	small := limitAtLeast(headroom)
	held := make([]byte, 64<<20) // live: the limit must follow
	for i := range held {
		held[i] = byte(i)
	}
	big := limitAtLeast(headroom + 64<<20)
	if big-small < 60<<20 {
		t.Errorf("limit went from %d to %d for 64 MiB more live heap", small, big)
	}
	runtime.KeepAlive(held)
	cancel()
	<-done
	if got := debug.SetMemoryLimit(-1); got != before {
		t.Errorf("limit after Run = %d, want the %d it found", got, before)
	}
}

func TestRunLeavesGOMEMLIMITAlone(t *testing.T) {
	t.Setenv("GOMEMLIMIT", "1GiB")
	before := debug.SetMemoryLimit(-1)
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan struct{})
	go func() { Run(ctx, Config{Headroom: 1 << 20, Every: time.Millisecond}); close(done) }()
	time.Sleep(50 * time.Millisecond)
	if got := debug.SetMemoryLimit(-1); got != before {
		t.Errorf("limit = %d with GOMEMLIMIT set, want %d untouched", got, before)
	}
	cancel()
	<-done
}

// TestStartMemLimit: Start's stop returns once the limit found is
// back.
func TestStartMemLimit(t *testing.T) {
	t.Setenv("GOMEMLIMIT", "")
	const found = math.MaxInt64 - 54321
	before := debug.SetMemoryLimit(found)
	t.Cleanup(func() { debug.SetMemoryLimit(before) })
	for range 20 {
		stop := Start(context.Background(), Config{Headroom: 64 << 20})
		stop()
		if got := debug.SetMemoryLimit(-1); got != found {
			t.Fatalf("memory limit after stop: %d, want %d", got, found)
		}
	}
}
