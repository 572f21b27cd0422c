package restore

import (
	"context"
	"errors"
	"fmt"
	"sync"
	"sync/atomic"
	"time"
)

// Decoding ahead of production. A partition stream produces its objects in
// order, each only after it was read completely and checked (loadObject).
// So that reading the next object (download, decompression, decoding)
// does not wait until the current one is produced, each stream has a
// prefetcher: goroutines that load the stream's objects in the order the
// stream needs them (loadOrder) and hand each over when the stream asks
// for it. It loads at least one object ahead, and more at once while the
// objects loaded ahead hold less than Config.PrefetchBytes of stored
// bytes (at most prefetchMax): a partition of large objects is read one object
// ahead, one of small objects many requests at a time. Streams run in parallel
// (Config.Parallelism), so do their prefetchers. Nothing changes in what
// is produced or when: an object's records are produced only after the
// object was loaded and checked, in the stream's order, and an error in
// loading an object stops the stream when it reaches that object, as it
// did when objects were loaded on demand.
//
// Memory: the decoded records that loaded objects hold in memory, across
// the whole restore, never exceed Config.Parallelism × Config.SpillBytes
// nor MaxRecordMemory (memBudget); a record that does not fit goes to its object's temporary file, as one past the
// object's own share (stream.spill) does. Records
// handed to the producer leave the budget; the producer buffers at most
// producerBufferBytes of them until the broker acknowledges them.

// memBudget bounds the bytes (recordSize) of decoded records that the
// loaded objects of a restore keep in memory. It never blocks: take says
// whether the bytes fit.
type memBudget struct {
	limit      int64
	used, peak atomic.Int64
}

func newMemBudget(limit int64) *memBudget {
	return &memBudget{limit: limit}
}

// take reserves n bytes if they fit under the limit.
// A nil budget takes everything.
func (m *memBudget) take(n int64) bool {
	if m == nil {
		return true
	}
	u := m.used.Add(n)
	if u > m.limit {
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

// prefetcher loads a stream's objects ahead of the stream.
type prefetcher struct {
	ch   chan prefetched
	done chan struct{} // closed when every goroutine has returned
}

// prefetchMax bounds the objects a stream loads ahead at once. A stream
// loads at least one object ahead; while the objects loaded ahead and not
// yet taken hold less than Config.PrefetchBytes (stored bytes with their
// twins), it loads more of them at once, so a partition of small objects
// behind a store that answers in tens of milliseconds is not read one
// request at a time.
const prefetchMax = 16

// prefetchSlot is one object of the order being loaded, and where its
// result goes.
type prefetchSlot struct {
	obj  int
	size int64
	res  chan prefetched
}

// startPrefetch starts loading the objects of order with load, ahead of
// take, until ctx is done or order is exhausted: one ahead, or, with
// sizes (an object's stored bytes) and limit, more at once while those
// loaded ahead hold less than limit bytes. Objects are handed over in
// order; a failed load is handed over in its place and nothing after it
// is.
func startPrefetch(ctx context.Context, order []int, load func(ctx context.Context, obj int) (*loadedObject, error), sizes func(obj int) int64, limit int64) *prefetcher {
	p := &prefetcher{ch: make(chan prefetched), done: make(chan struct{})}
	lctx, cancel := context.WithCancel(ctx)
	slots := make(chan prefetchSlot, prefetchMax)
	freed := make(chan int64, len(order)+1) // never blocks the handing over
	var loads sync.WaitGroup
	go func() {
		defer close(slots)
		launchPrefetch(lctx, order, sizes, limit, slots, freed, &loads, load)
	}()
	go func() {
		defer close(p.done)
		var loading *prefetchSlot // the load under way when ctx ended
		defer func() {
			cancel()
			if loading != nil {
				closeWhenLoaded(loading.res)
			}
			for s := range slots { // the loads not handed over
				closeWhenLoaded(s.res)
			}
			loads.Wait()
		}()
		for s := range slots {
			var got prefetched
			select {
			case got = <-s.res:
			case <-ctx.Done():
				loading = &s
				return
			}
			select {
			case p.ch <- got:
			case <-ctx.Done():
				if got.lo != nil {
					got.lo.buf.close()
				}
				return
			}
			if got.err != nil {
				return // nothing after a failed load is handed over
			}
			freed <- s.size
		}
	}()
	return p
}

// launchPrefetch starts a load of each object of order, in order, into
// slots, as long as what is loaded ahead fits (see startPrefetch).
func launchPrefetch(ctx context.Context, order []int, sizes func(int) int64, limit int64, slots chan<- prefetchSlot, freed <-chan int64,
	loads *sync.WaitGroup, load func(ctx context.Context, obj int) (*loadedObject, error)) {
	var ahead int64
	n := 0 // loads started and not handed over
	for _, i := range order {
		size := max(limit, 1) // without sizes: one ahead
		if sizes != nil && limit > 0 {
			size = min(max(sizes(i), 1), limit)
		}
	drain:
		for {
			select {
			case f := <-freed:
				ahead -= f
				n--
			default:
				break drain
			}
		}
		for n > 0 && ahead+size > max(limit, 1) {
			select {
			case f := <-freed:
				ahead -= f
				n--
			case <-ctx.Done():
				return
			}
		}
		s := prefetchSlot{obj: i, size: size, res: make(chan prefetched, 1)}
		select {
		case slots <- s:
		case <-ctx.Done():
			return
		}
		ahead += size
		n++
		loads.Go(func() {
			lo, err := load(ctx, i)
			s.res <- prefetched{obj: i, lo: lo, err: err}
		})
	}
}

// closeWhenLoaded releases the object of res once its load returns.
func closeWhenLoaded(res <-chan prefetched) {
	if got := <-res; got.lo != nil {
		got.lo.buf.close()
	}
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

// takeWithin is take waiting at most d: ok is false when object i is not
// loaded by then (nothing is taken then).
func (p *prefetcher) takeWithin(ctx context.Context, i int, d time.Duration) (lo *loadedObject, ok bool, err error) {
	t := time.NewTimer(d)
	defer t.Stop()
	select {
	case got := <-p.ch:
		if got.obj != i {
			if got.lo != nil {
				got.lo.buf.close()
			}
			return nil, true, fmt.Errorf("%w: object %d loaded, object %d wanted", errPrefetchOrder, got.obj, i)
		}
		return got.lo, true, got.err
	case <-p.done:
		return nil, true, fmt.Errorf("%w: object %d wanted after the last", errPrefetchOrder, i)
	case <-ctx.Done():
		return nil, true, context.Cause(ctx)
	case <-t.C:
		return nil, false, nil
	}
}

// wait waits until the goroutine has returned; its ctx must be done, or
// every object taken.
func (p *prefetcher) wait() { <-p.done }
