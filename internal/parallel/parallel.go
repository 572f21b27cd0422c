// Package parallel runs the store requests of a reader of the archive
// (listings, index objects, checkpoints) a bounded number at a time, with
// the error a loop in order would give.
package parallel

import (
	"context"
	"sync"
	"sync/atomic"
)

// Each calls fn(i) for every i in [0, count), n at a time. It returns
// the error of the lowest i that failed, and skips the i above it that
// have not started, so that the error is the one a loop in order gives.
func Each(ctx context.Context, n, count int, fn func(i int) error) error {
	var (
		next   atomic.Int64
		failed atomic.Int64
		mu     sync.Mutex
		errs   = map[int]error{}
		wg     sync.WaitGroup
	)
	failed.Store(int64(count))
	for w := 0; w < min(n, count); w++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for {
				i := int(next.Add(1) - 1)
				if i >= count || int64(i) > failed.Load() {
					return
				}
				err := ctx.Err()
				if err == nil {
					err = fn(i)
				}
				if err != nil {
					mu.Lock()
					errs[i] = err
					if int64(i) < failed.Load() {
						failed.Store(int64(i))
					}
					mu.Unlock()
				}
			}
		}()
	}
	wg.Wait()
	if f := int(failed.Load()); f < count {
		return errs[f]
	}
	return nil
}
