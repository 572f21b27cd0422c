package restore

import (
	"context"
	"sync"
	"testing"
	"time"
)

// TestEachObjectBudget: the proof reads small objects up to
// ReadConcurrency at once and objects of proofWeight or more (with their
// twins) Parallelism at a time, and reads each object once.
func TestEachObjectBudget(t *testing.T) {
	for _, tc := range []struct {
		name      string
		size      int64
		twins     int64
		wantPeak  int // at most; small objects: more than Parallelism
		objects   int
		parallel  int
		readConcy int
	}{
		{"small", 1 << 10, 0, 32, 200, 4, 32},
		{"large", proofWeight, 0, 4, 40, 4, 32},
		{"large with twins", proofWeight / 2, proofWeight / 2, 4, 40, 4, 32},
		{"half", proofWeight / 2, 0, 8, 40, 4, 32},
	} {
		t.Run(tc.name, func(t *testing.T) {
			r := &Restorer{cfg: Config{Parallelism: tc.parallel, ReadConcurrency: tc.readConcy}}
			objs := make([]Object, tc.objects)
			for i := range objs {
				objs[i] = Object{Size: tc.size, twins: &twinObjects{keys: twinObject{size: tc.twins}}}
			}
			var mu sync.Mutex
			cur, peak := 0, 0
			seen := map[int]int{}
			err := eachObject(context.Background(), r.newReadBudget(), objs, func(ctx context.Context, i int) error {
				mu.Lock()
				cur++
				peak = max(peak, cur)
				seen[i]++
				mu.Unlock()
				time.Sleep(5 * time.Millisecond)
				mu.Lock()
				cur--
				mu.Unlock()
				return nil
			})
			if err != nil {
				t.Fatal(err)
			}
			if peak > tc.wantPeak || (tc.wantPeak > tc.parallel && peak <= tc.parallel) {
				t.Errorf("%d objects read at once at most, want %d (Parallelism %d)", peak, tc.wantPeak, tc.parallel)
			}
			for i := range objs {
				if seen[i] != 1 {
					t.Fatalf("object %d was read %d times", i, seen[i])
				}
			}
		})
	}
}

// TestEachObjectSharedBudget: the partitions a plan makes at once read
// through one budget: together, not each, at most ReadConcurrency small
// objects at once.
func TestEachObjectSharedBudget(t *testing.T) {
	r := &Restorer{cfg: Config{Parallelism: 2, ReadConcurrency: 8}}
	b := r.newReadBudget()
	var mu sync.Mutex
	cur, peak, n := 0, 0, 0
	fn := func(ctx context.Context, _ int) error {
		mu.Lock()
		cur++
		n++
		peak = max(peak, cur)
		mu.Unlock()
		time.Sleep(2 * time.Millisecond)
		mu.Lock()
		cur--
		mu.Unlock()
		return nil
	}
	var wg sync.WaitGroup
	for range 4 {
		objs := make([]Object, 50)
		for i := range objs {
			objs[i] = Object{Size: 1 << 10}
		}
		wg.Go(func() {
			if err := eachObject(context.Background(), b, objs, fn); err != nil {
				t.Error(err)
			}
		})
	}
	wg.Wait()
	if peak > 8 || peak < 5 || n != 200 {
		t.Fatalf("%d objects read, at most %d at once; want 200, at most 8 (and more than 4)", n, peak)
	}
}
