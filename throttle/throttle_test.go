package throttle

import (
	"context"
	"errors"
	"sync"
	"testing"
	"time"
)

// fakeClock is a clock that only the sleeps move.
type fakeClock struct {
	mu sync.Mutex
	t  time.Time
}

func (c *fakeClock) now() time.Time {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.t
}

func (c *fakeClock) sleep(_ context.Context, d time.Duration) error {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.t = c.t.Add(d)
	return nil
}

func newFake(t *testing.T, bytes, records float64) (*Limiter, *fakeClock) {
	t.Helper()
	c := &fakeClock{t: time.Unix(1_700_000_000, 0)}
	l, err := New(Config{BytesPerSec: bytes, RecordsPerSec: records, Now: c.now, Sleep: c.sleep})
	if err != nil {
		t.Fatal(err)
	}
	return l, c
}

// TestRates: whichever unit binds, n records of each size take the time
// the binding rate gives them, less the burst (a tenth of a second),
// within one record.
func TestRates(t *testing.T) {
	for _, c := range []struct {
		name           string
		bytes, records float64
		size           int64
		n              int
		want, per      time.Duration // per: one record at the binding rate
	}{
		{"records bind", 1e9, 1000, 100, 5000, 4900 * time.Millisecond, time.Millisecond},
		{"bytes bind", 1e6, 1e6, 1000, 5000, 4900 * time.Millisecond, time.Millisecond},
		{"records only", 0, 200, 1 << 20, 1000, 4900 * time.Millisecond, 5 * time.Millisecond},
		{"bytes only, records larger than the burst", 1e6, 0, 300_000, 50, 14900 * time.Millisecond, 300 * time.Millisecond},
	} {
		t.Run(c.name, func(t *testing.T) {
			l, clk := newFake(t, c.bytes, c.records)
			start := clk.now()
			for range c.n {
				if err := l.Wait(context.Background(), 1, c.size); err != nil {
					t.Fatal(err)
				}
			}
			got := clk.now().Sub(start)
			if d := got - c.want; d > c.per || d < -c.per {
				t.Fatalf("%d records of %d bytes took %s, want %s (within one record, %s)", c.n, c.size, got, c.want, c.per)
			}
		})
	}
}

// TestShared: goroutines sharing one Limiter together keep its rate.
func TestShared(t *testing.T) {
	l, clk := newFake(t, 0, 1000)
	start := clk.now()
	var wg sync.WaitGroup
	for range 8 {
		wg.Go(func() {
			for range 500 {
				if err := l.Wait(context.Background(), 1, 10); err != nil {
					t.Error(err)
				}
			}
		})
	}
	wg.Wait()
	// 4,000 records at 1,000 a second, the first 100 from the burst.
	if got := clk.now().Sub(start); got < 3800*time.Millisecond || got > 4000*time.Millisecond {
		t.Fatalf("4,000 records in 8 goroutines took %s of the clock, want about 3.9 s", got)
	}
}

func TestUnlimited(t *testing.T) {
	l, err := New(Config{})
	if err != nil || l != nil {
		t.Fatalf("New of no rate = %v, %v; want nil, nil", l, err)
	}
	if err := l.Wait(context.Background(), 1, 1<<30); err != nil {
		t.Fatal(err)
	}
	if l.String() != "" {
		t.Fatalf("String of no limit = %q", l.String())
	}
	if _, err := New(Config{BytesPerSec: -1}); err == nil {
		t.Fatal("a negative rate was taken")
	}
}

func TestString(t *testing.T) {
	l, _ := newFake(t, 10e6, 5000)
	if got := l.String(); got != "10.0 MB/s, 5000 records/s" {
		t.Fatalf("String = %q", got)
	}
}

// TestCancel: a wait ends with its context.
func TestCancel(t *testing.T) {
	l, err := New(Config{RecordsPerSec: 1})
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancelCause(context.Background())
	boom := errors.New("stop")
	cancel(boom)
	if err := l.Wait(ctx, 1, 0); err != nil { // the burst's one record
		t.Fatal(err)
	}
	if err := l.Wait(ctx, 1, 0); !errors.Is(err, boom) {
		t.Fatalf("Wait after cancel = %v, want %v", err, boom)
	}
}
