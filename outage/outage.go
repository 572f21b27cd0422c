package outage

import (
	"context"
	"errors"
	"fmt"
	"io"
	"math/rand/v2"
	"net"
	"sync"
	"sync/atomic"
	"syscall"
	"time"

	"github.com/kafkas3/kafkas3/health"
	"github.com/twmb/franz-go/pkg/kerr"
)

// Dep names a dependency, as package health does.
type Dep = health.Dep

// The dependencies of the sink and the source.
const (
	Broker   = health.Broker
	Store    = health.Store
	Registry = health.Registry
)

// Describe names dep for an error message.
func Describe(dep Dep) string {
	switch dep {
	case Broker:
		return "the Kafka brokers (bootstrap.servers)"
	case Store:
		return "the object store"
	case Registry:
		return "the Schema Registry (schema.registry.url)"
	}
	return string(dep)
}

// Setter receives each dependency's state: SetDown on a failure, SetUp on
// a success. It is the process's readiness (*health.Readiness), which logs
// once per state change.
type Setter = health.Setter

// expecter is a Setter that also takes Expect (*health.Readiness).
type expecter interface{ Expect(dep Dep) }

// Transient reports whether a Kafka error passes on its own (see the
// package doc). A cancelled context is not transient: it is a stop.
func Transient(err error) bool {
	if err == nil || errors.Is(err, context.Canceled) {
		return false
	}
	if kerr.IsRetriable(err) || errors.Is(err, kerr.NotController) {
		return true
	}
	var ke *kerr.Error
	if errors.As(err, &ke) {
		return false // a Kafka error that is not retriable
	}
	if errors.Is(err, context.DeadlineExceeded) {
		return true // a request or dial that timed out
	}
	var ne net.Error
	return errors.As(err, &ne) || errors.Is(err, syscall.ECONNREFUSED) || errors.Is(err, syscall.ECONNRESET) ||
		errors.Is(err, syscall.EPIPE) || errors.Is(err, io.EOF) || errors.Is(err, io.ErrUnexpectedEOF)
}

// Backoff is a capped exponential backoff with jitter. The zero value
// waits 1 s to 30 s.
type Backoff struct {
	Min, Max time.Duration
	n        int
}

// Next returns the next wait: uniform in [d/2, d], where d is Min doubled
// once per call before, capped at Max.
func (b *Backoff) Next() time.Duration {
	lo, hi := b.Min, b.Max
	if lo <= 0 {
		lo = time.Second
	}
	if hi < lo {
		hi = max(lo, 30*time.Second)
	}
	d := lo
	for i := 0; i < b.n && d < hi; i++ {
		d *= 2
	}
	d = min(d, hi)
	b.n++
	return d/2 + time.Duration(rand.Int64N(int64(d/2)+1))
}

// Reset starts the waits again from Min.
func (b *Backoff) Reset() { b.n = 0 }

// UnreachableError is a dependency that stayed down for the limit
// (--once-timeout).
type UnreachableError struct {
	Dep Dep
	For time.Duration // how long it was down
	Err error         // its last failure
}

func (e *UnreachableError) Error() string {
	return fmt.Sprintf("%s unreachable for %v (--once-timeout), giving up: %v", Describe(e.Dep), e.For.Round(time.Second), e.Err)
}

func (e *UnreachableError) Unwrap() error { return e.Err }

// Tracker records since when each dependency has been down and passes the
// states to a Setter. Its methods are safe for concurrent use.
type Tracker struct {
	set   Setter
	limit time.Duration
	now   func() time.Time

	// reported is true once an Up was passed on after the last Down;
	// Up reads it without the lock.
	mu       sync.Mutex
	since    map[Dep]time.Time
	last     map[Dep]error
	reported map[Dep]*atomic.Bool
	down     map[Dep]*atomic.Bool // Broker, Store, Registry: since a Down, until an Up
}

// NewTracker returns a tracker passing states to set (nil: none); with
// limit > 0, Overdue reports a dependency down for limit.
func NewTracker(set Setter, limit time.Duration) *Tracker {
	t := &Tracker{set: set, limit: limit, now: time.Now, since: map[Dep]time.Time{}, last: map[Dep]error{}, reported: map[Dep]*atomic.Bool{}, down: map[Dep]*atomic.Bool{}}
	for _, d := range []Dep{Broker, Store, Registry} {
		t.reported[d], t.down[d] = new(atomic.Bool), new(atomic.Bool)
	}
	return t
}

// Down records that dep failed with err.
func (t *Tracker) Down(dep Dep, err error) {
	t.mu.Lock()
	if _, ok := t.since[dep]; !ok {
		t.since[dep] = t.now()
	}
	t.last[dep] = err
	if r := t.reported[dep]; r != nil {
		r.Store(false)
		t.down[dep].Store(true)
	}
	t.mu.Unlock()
	if t.set != nil {
		t.set.SetDown(dep, err)
	}
}

// Expect starts dep's clock without reporting it down (the Setter's
// Expect, when it has one, makes it pending; nothing is logged): a dependency not reached yet, with why as its error, counts for
// Overdue from now until an Up. It does nothing to a dependency that is
// down or has been up.
func (t *Tracker) Expect(dep Dep, why error) {
	t.mu.Lock()
	defer t.mu.Unlock()
	if r := t.reported[dep]; r != nil && r.Load() {
		return
	}
	if _, ok := t.since[dep]; !ok {
		t.since[dep], t.last[dep] = t.now(), why
		if e, ok := t.set.(expecter); ok {
			e.Expect(dep)
		}
	}
}

// Up records that dep works. For Broker, Store and Registry it costs one
// atomic load when dep is up already, so it may be called per record.
func (t *Tracker) Up(dep Dep) {
	r := t.reported[dep]
	if r != nil && r.Load() {
		return
	}
	t.mu.Lock()
	if r != nil {
		r.Store(true)
		t.down[dep].Store(false)
	}
	delete(t.since, dep)
	delete(t.last, dep)
	t.mu.Unlock()
	if t.set != nil {
		t.set.SetUp(dep)
	}
}

// Recovered is Up for a dependency that is down, and nothing otherwise (a
// caller that cannot tell whether it uses dep: a converter without a
// registry). For Broker, Store and Registry it costs one atomic load.
func (t *Tracker) Recovered(dep Dep) {
	if d := t.down[dep]; d != nil && !d.Load() {
		return
	}
	if t.IsDown(dep) {
		t.Up(dep)
	}
}

// IsDown tells whether dep is down.
func (t *Tracker) IsDown(dep Dep) bool {
	t.mu.Lock()
	defer t.mu.Unlock()
	_, ok := t.since[dep]
	return ok
}

// Overdue returns an *UnreachableError for the dependency down longest
// when it has been down for the limit; nil without a limit or before.
func (t *Tracker) Overdue() error {
	if t.limit <= 0 {
		return nil
	}
	t.mu.Lock()
	defer t.mu.Unlock()
	var worst Dep
	var first time.Time
	for dep, since := range t.since {
		if first.IsZero() || since.Before(first) {
			worst, first = dep, since
		}
	}
	if first.IsZero() {
		return nil
	}
	if d := t.now().Sub(first); d >= t.limit {
		return &UnreachableError{Dep: worst, For: d, Err: t.last[worst]}
	}
	return nil
}

// Left returns how long until Overdue reports a dependency, at most most
// (also without a limit or with nothing down).
func (t *Tracker) Left(most time.Duration) time.Duration {
	if t.limit <= 0 {
		return most
	}
	t.mu.Lock()
	defer t.mu.Unlock()
	left := most
	for _, since := range t.since {
		left = min(left, since.Add(t.limit).Sub(t.now()))
	}
	return left
}
