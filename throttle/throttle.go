package throttle

import (
	"context"
	"fmt"
	"sync"
	"time"
)

// Config sets a Limiter's rates; zero leaves that unit unlimited.
type Config struct {
	BytesPerSec   float64
	RecordsPerSec float64
	// Now and Sleep replace the clock and the wait (tests); nil means
	// time.Now and a timer that ctx cancels.
	Now   func() time.Time
	Sleep func(ctx context.Context, d time.Duration) error
}

// Limiter paces records and bytes to Config's rates. A nil *Limiter
// limits nothing. It is safe for concurrent use.
type Limiter struct {
	now   func() time.Time
	sleep func(ctx context.Context, d time.Duration) error

	mu             sync.Mutex
	bytes, records bucket
}

// bucket is one unit's token bucket: tokens refill at rate per second up
// to burst, and may go below zero (a debt the next taker waits out).
type bucket struct {
	rate, burst, tokens float64
	last                time.Time
}

// New returns a Limiter of cfg's rates, nil when both are zero. A
// negative rate is an error.
func New(cfg Config) (*Limiter, error) {
	if !(cfg.BytesPerSec >= 0) || !(cfg.RecordsPerSec >= 0) { // NaN too
		return nil, fmt.Errorf("throttle: rates must be numbers not below zero (bytes %v, records %v per second)", cfg.BytesPerSec, cfg.RecordsPerSec)
	}
	if cfg.BytesPerSec == 0 && cfg.RecordsPerSec == 0 {
		return nil, nil
	}
	l := &Limiter{now: cfg.Now, sleep: cfg.Sleep}
	if l.now == nil {
		l.now = time.Now
	}
	if l.sleep == nil {
		l.sleep = sleepCtx
	}
	t := l.now()
	l.bytes = newBucket(cfg.BytesPerSec, t)
	l.records = newBucket(cfg.RecordsPerSec, t)
	return l, nil
}

// newBucket returns a full bucket of rate per second (0: unlimited)
// whose burst is a tenth of a second of it, at least one unit.
func newBucket(rate float64, now time.Time) bucket {
	burst := max(rate/10, 1)
	return bucket{rate: rate, burst: burst, tokens: burst, last: now}
}

// Wait takes records and bytes from the buckets and returns once both
// allow them: at once while the buckets hold them, else after the time
// their rates need to make up the difference. It returns ctx's error if
// ctx ends first (the tokens stay taken).
func (l *Limiter) Wait(ctx context.Context, records, bytes int64) error {
	if l == nil {
		return nil
	}
	l.mu.Lock()
	now := l.now()
	d := max(l.records.take(float64(records), now), l.bytes.take(float64(bytes), now))
	l.mu.Unlock()
	if d <= 0 {
		return nil
	}
	return l.sleep(ctx, d)
}

// take refills the bucket to now, takes n tokens and returns how long
// the taker waits until the bucket is no longer below zero (0 when it is
// not, or when the bucket is unlimited).
func (b *bucket) take(n float64, now time.Time) time.Duration {
	if b.rate == 0 {
		return 0
	}
	if el := now.Sub(b.last); el > 0 {
		b.tokens = min(b.burst, b.tokens+el.Seconds()*b.rate)
		b.last = now
	}
	b.tokens -= n
	if b.tokens >= 0 {
		return 0
	}
	return time.Duration(-b.tokens / b.rate * float64(time.Second))
}

// String describes the limits for the plan and the progress line:
// "10.0 MB/s, 5000 records/s"; "" when l limits nothing.
func (l *Limiter) String() string {
	if l == nil {
		return ""
	}
	var parts []string
	if r := l.bytes.rate; r > 0 {
		parts = append(parts, fmt.Sprintf("%.1f MB/s", r/1e6))
	}
	if r := l.records.rate; r > 0 {
		parts = append(parts, fmt.Sprintf("%.0f records/s", r))
	}
	if len(parts) == 2 {
		return parts[0] + ", " + parts[1]
	}
	return parts[0]
}

// sleepCtx waits d or until ctx ends.
func sleepCtx(ctx context.Context, d time.Duration) error {
	t := time.NewTimer(d)
	defer t.Stop()
	select {
	case <-t.C:
		return nil
	case <-ctx.Done():
		return context.Cause(ctx)
	}
}
