package archive

import (
	"context"
	"sync"

	"github.com/twmb/franz-go/pkg/kgo"
)

// fetchBudget is how many bytes of fetched records may wait for, or be in,
// the partition workers at once. Without a shared bound the records queued
// per worker grow with the number of partitions.
const fetchBudget = 32 << 20

// budget bounds a shared quantity (bytes of records in flight). A request
// larger than the whole budget is clamped, so it waits until nothing else
// is held and never deadlocks.
type budget struct {
	mu   sync.Mutex
	cond *sync.Cond
	max  int64
	used int64
	done bool
}

// newBudget returns a budget of max; waits end when ctx is done.
func newBudget(ctx context.Context, max int64) *budget {
	b := &budget{max: max}
	b.cond = sync.NewCond(&b.mu)
	context.AfterFunc(ctx, func() {
		b.mu.Lock()
		b.done = true
		b.mu.Unlock()
		b.cond.Broadcast()
	})
	return b
}

// acquire takes n (clamped to the budget) and returns what it took; it
// returns false if ctx ended first.
func (b *budget) acquire(n int64) (int64, bool) {
	n = min(n, b.max)
	b.mu.Lock()
	defer b.mu.Unlock()
	for b.used+n > b.max && !b.done {
		b.cond.Wait()
	}
	if b.done {
		return 0, false
	}
	b.used += n
	return n, true
}

// release returns n taken by acquire.
func (b *budget) release(n int64) {
	if n == 0 {
		return
	}
	b.mu.Lock()
	b.used -= n
	b.mu.Unlock()
	b.cond.Broadcast()
}

// batchBytes approximates the memory a fetched batch holds.
func batchBytes(recs []*kgo.Record) int64 {
	var n int64
	for _, r := range recs {
		n += int64(len(r.Key)+len(r.Value)) + 64
		for _, h := range r.Headers {
			n += int64(len(h.Key) + len(h.Value))
		}
	}
	return n
}

// detach copies the keys, values and header values of a batch's records
// that alias the fetch response into one buffer of its own. Records of an
// uncompressed record batch alias the fetch response (up to
// FetchMaxBytes, shared by many partitions); a few records queued per
// partition would otherwise keep many whole responses alive, and memory
// would grow with the partitions. Records of a compressed batch alias only
// their batch's decompressed bytes, a fresh buffer the client allocates
// for that batch alone (no decompression pool is configured, so it is
// never reused), which is about the size batchBytes charges to the fetch
// budget: they are left as they are, saving a copy of every byte.
func detach(recs []*kgo.Record) {
	var n int
	for _, r := range recs {
		if r.Attrs.CompressionType() != 0 {
			continue
		}
		n += len(r.Key) + len(r.Value)
		for _, h := range r.Headers {
			n += len(h.Value)
		}
	}
	if n == 0 {
		return
	}
	buf := make([]byte, 0, n)
	clone := func(b []byte) []byte {
		if b == nil {
			return nil // keep Kafka nulls null
		}
		start := len(buf)
		buf = append(buf, b...)
		return buf[start:len(buf):len(buf)]
	}
	for _, r := range recs {
		if r.Attrs.CompressionType() != 0 {
			continue
		}
		r.Key = clone(r.Key)
		r.Value = clone(r.Value)
		for i := range r.Headers {
			r.Headers[i].Value = clone(r.Headers[i].Value)
		}
	}
}

// inBatch is a fetched batch for one worker with the budget it holds and
// the partition's log start offset as the fetch response gave it (-1 when
// unknown), from which the worker tells records lost before archiving
// (lost.go). A batch without records carries only a log start (--once,
// lostOnly).
type inBatch struct {
	recs     []*kgo.Record
	held     int64
	logStart int64
}
