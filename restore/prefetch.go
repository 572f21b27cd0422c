package restore

import (
	"context"
	"errors"
	"fmt"
	"sync/atomic"
)

// Decoding ahead of production. A partition stream produces its objects in
// order, each only after it was read completely and checked (loadObject).
// So that reading the next object (download, decompression, decoding)
// does not wait until the current one is produced, each stream has a
// prefetcher: a goroutine that loads the stream's objects in the order the
// stream needs them (loadOrder) and hands each over when the stream asks
// for it. It loads one object ahead: after handing one over it loads the
// next and waits until the stream takes it. Streams run in parallel
// (Config.Parallelism), so do their prefetchers. Nothing changes in what
// is produced or when: an object's records are produced only after the
// object was loaded and checked, in the stream's order, and an error in
// loading an object stops the stream when it reaches that object, as it
// did when objects were loaded on demand.
//
// Memory: the decoded records that loaded objects hold in memory, across
// the whole restore, never exceed Config.Parallelism × Config.SpillBytes
// (memBudget; records the proof kept, keep.go, included); a record that
// does not fit goes to its object's temporary file, as one past the
// object's own share (stream.spill) does. Records
// handed to the producer leave the budget; the producer buffers at most
// producerBufferBytes of them until the broker acknowledges them.

// memBudget bounds the bytes (recordSize) of decoded records that the
// loaded objects of a restore keep in memory. It never blocks: take says
// whether the bytes fit.
type memBudget struct {
	limit      int64
	used, peak atomic.Int64
	// parent, when set, is a larger budget this one is a part of: bytes
	// are taken from both.
	parent *memBudget
}

func newMemBudget(limit int64, parent *memBudget) *memBudget {
	return &memBudget{limit: limit, parent: parent}
}

// take reserves n bytes if they fit under the limit (and the parent's).
// A nil budget takes everything.
func (m *memBudget) take(n int64) bool {
	if m == nil {
		return true
	}
	u := m.used.Add(n)
	if u > m.limit || !m.parent.take(n) {
		m.used.Add(-n)
		return false
	}
	for p := m.peak.Load(); u > p && !m.peak.CompareAndSwap(p, u); p = m.peak.Load() {
	}
	return true
}

// give returns n bytes taken before.
func (m *memBudget) give(n int64) {
	if m != nil && n != 0 {
		m.used.Add(-n)
		m.parent.give(n)
	}
}

// loadOrder returns the objects a stream loads, in the order it first
// needs them: the object of each segment that segment does not skip
// unread. The first skip records of the stream (those the target holds
// before the verification window) are skipped unread, whole segments at a
// time, exactly as stream.segment decides.
func loadOrder(segs []segment, skip int64) []int {
	var order []int
	seen := map[int]bool{}
	var idx int64
	for _, seg := range segs {
		n := seg.to - seg.from
		skipped := idx+n <= skip
		idx += n
		if skipped || seen[seg.obj] {
			continue
		}
		seen[seg.obj] = true
		order = append(order, seg.obj)
	}
	return order
}

// prefetched is one object loaded by a prefetcher, or the error loading it.
type prefetched struct {
	obj int
	lo  *loadedObject
	err error
}

// prefetcher loads a stream's objects one ahead of the stream.
type prefetcher struct {
	ch   chan prefetched
	done chan struct{} // closed when the goroutine has returned
}

// startPrefetch starts loading the objects of order with load, one ahead of
// take, until ctx is done or order is exhausted.
func startPrefetch(ctx context.Context, order []int, load func(ctx context.Context, obj int) (*loadedObject, error)) *prefetcher {
	p := &prefetcher{ch: make(chan prefetched), done: make(chan struct{})}
	go func() {
		defer close(p.done)
		for _, i := range order {
			lo, err := load(ctx, i)
			select {
			case p.ch <- prefetched{obj: i, lo: lo, err: err}:
			case <-ctx.Done():
				if lo != nil {
					lo.buf.close()
				}
				return
			}
			if err != nil {
				return
			}
		}
	}()
	return p
}

// errPrefetchOrder means a stream asked for another object than the next
// one its prefetcher loaded: a bug, reported rather than producing out of
// order.
var errPrefetchOrder = errors.New("internal error: objects loaded out of order")

// take returns object i, which must be the next one of the order, once it
// is loaded.
func (p *prefetcher) take(ctx context.Context, i int) (*loadedObject, error) {
	select {
	case got := <-p.ch:
		if got.obj != i {
			if got.lo != nil {
				got.lo.buf.close()
			}
			return nil, fmt.Errorf("%w: object %d loaded, object %d wanted", errPrefetchOrder, got.obj, i)
		}
		return got.lo, got.err
	case <-p.done:
		return nil, fmt.Errorf("%w: object %d wanted after the last", errPrefetchOrder, i)
	case <-ctx.Done():
		return nil, context.Cause(ctx)
	}
}

// wait waits until the goroutine has returned; its ctx must be done, or
// every object taken.
func (p *prefetcher) wait() { <-p.done }
