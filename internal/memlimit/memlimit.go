package memlimit

import (
	"context"
	"os"
	"runtime/debug"
	"runtime/metrics"
	"time"
)

// liveHeap is the runtime metric of the heap the last collection marked live.
const liveHeap = "/gc/heap/live:bytes"

// ReaderHeadroom is the headroom of the commands that read an archive
// (kafkas3 verify; the simulation of an archive of a million objects,
// internal/scale, measures with it): they hold the listing of the archive
// and a few partitions of its index, and without a limit the default GOGC
// lets the heap grow to twice that before collecting.
const ReaderHeadroom = 64 << 20

// Config says how Run sets the limit.
type Config struct {
	// Headroom is the memory allowed above the live heap, in bytes.
	Headroom int64
	// Every is how often the live heap is read (100 ms when zero).
	Every time.Duration
}

// Run keeps the soft memory limit at the live heap plus cfg.Headroom until
// ctx ends, then restores the limit it found. It returns at once, doing
// nothing, when GOMEMLIMIT is set or cfg.Headroom is not positive.
func Run(ctx context.Context, cfg Config) {
	if os.Getenv("GOMEMLIMIT") != "" || cfg.Headroom <= 0 {
		return
	}
	every := cfg.Every
	if every <= 0 {
		every = 100 * time.Millisecond
	}
	before := debug.SetMemoryLimit(-1)
	defer debug.SetMemoryLimit(before)
	sample := []metrics.Sample{{Name: liveHeap}}
	t := time.NewTicker(every)
	defer t.Stop()
	for {
		metrics.Read(sample)
		if sample[0].Value.Kind() == metrics.KindUint64 {
			debug.SetMemoryLimit(Limit(sample[0].Value.Uint64(), cfg.Headroom))
		}
		select {
		case <-ctx.Done():
			return
		case <-t.C:
		}
	}
}

// Start runs Run with cfg until the returned stop is called; stop
// returns once Run has put back the limit it found, so that whatever runs
// after it in the process (a command after a command, in tests) finds
// that limit, not this run's.
func Start(ctx context.Context, cfg Config) (stop func()) {
	ctx, cancel := context.WithCancel(ctx)
	done := make(chan struct{})
	go func() {
		defer close(done)
		Run(ctx, cfg)
	}()
	return func() { cancel(); <-done }
}

// Limit is the soft memory limit for a live heap of live bytes: live plus
// headroom, saturating at the largest limit.
func Limit(live uint64, headroom int64) int64 {
	const maxLimit = int64(^uint64(0) >> 1)
	if live > uint64(maxLimit-headroom) {
		return maxLimit
	}
	return int64(live) + headroom
}
