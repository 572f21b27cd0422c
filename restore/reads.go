package restore

import (
	"context"
	"sync"
)

// What the plan reads at once. The plan examines a few partitions at
// once (planner), and each reads its objects that need a read (the proof,
// objects without an index entry, objects the store shows changed)
// through one readBudget, so that together they keep
// Config.ReadConcurrency reads in flight, not that many each, and hold at
// most Config.Parallelism × proofWeight bytes of objects.

// proofWeight is the most an object weighs in the plan's read budget
// (eachObject): objects of this size or more are read Config.Parallelism
// at a time, as a restore reads them; smaller ones (most objects of a
// long archive) more at once, up to Config.ReadConcurrency, so a store
// that answers in tens of milliseconds is kept busy.
const proofWeight = 16 << 20

// budgetUnit is the unit of a readBudget's bytes: an object takes its
// size in units, rounded up.
const budgetUnit = 64 << 10

// readBudget is what the plan's reads may take at once: slots objects
// and the bytes of units (one token each).
type readBudget struct {
	slots chan struct{}
	units chan struct{}
	// mu lets one read at a time take its units, so that two reads each
	// holding part of what they need never wait for each other.
	mu sync.Mutex
}

// newReadBudget returns the budget of one plan: max(Parallelism,
// ReadConcurrency) objects, Parallelism × proofWeight bytes.
func (r *Restorer) newReadBudget() *readBudget {
	return &readBudget{
		slots: make(chan struct{}, max(r.cfg.Parallelism, r.readConcurrency(), 1)),
		units: make(chan struct{}, max(r.cfg.Parallelism, 1)*proofWeight/budgetUnit),
	}
}

// weight is what reading o (with its twins) takes of a readBudget, in
// units.
func weight(o *Object) int {
	w := min(max(o.Size+o.twinBytes(), 1), proofWeight)
	return int((w + budgetUnit - 1) / budgetUnit)
}

// acquire waits until a read of w units fits, or ctx ends.
func (b *readBudget) acquire(ctx context.Context, w int) error {
	select {
	case b.slots <- struct{}{}:
	case <-ctx.Done():
		return ctx.Err()
	}
	b.mu.Lock()
	defer b.mu.Unlock()
	for i := range w {
		select {
		case b.units <- struct{}{}:
		case <-ctx.Done():
			b.release(i)
			<-b.slots
			return ctx.Err()
		}
	}
	return nil
}

// release gives back w units.
func (b *readBudget) release(w int) {
	for range w {
		<-b.units
	}
}

// done ends a read acquired with w units.
func (b *readBudget) done(w int) {
	b.release(w)
	<-b.slots
}

// eachObject calls fn with the index of each object, in order, as b lets them start:
// at most Config.ReadConcurrency (or Config.Parallelism, when higher) at
// a time and at most Config.Parallelism × proofWeight bytes of objects
// (with their twins) at a time, shared with every other eachObject of b.
// The first error stops it (objects not started yet are skipped) and is
// returned; so is the context's error.
func eachObject(ctx context.Context, b *readBudget, objs []Object, fn func(context.Context, int) error) error {
	ctx, cancel := context.WithCancel(ctx)
	defer cancel()
	var (
		wg       sync.WaitGroup
		once     sync.Once
		firstErr error
	)
	for i := range objs {
		w := weight(&objs[i])
		if b.acquire(ctx, w) != nil {
			break
		}
		wg.Go(func() {
			defer b.done(w)
			if err := fn(ctx, i); err != nil {
				once.Do(func() { firstErr = err })
				cancel()
			}
		})
	}
	wg.Wait()
	if firstErr != nil {
		return firstErr
	}
	return ctx.Err()
}
