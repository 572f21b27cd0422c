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
			objs := make([]*Object, tc.objects)
			for i := range objs {
				objs[i] = &Object{Size: tc.size, twins: &twinObjects{keys: twinObject{size: tc.twins}}}
			}
			var mu sync.Mutex
			cur, peak := 0, 0
			seen := map[*Object]int{}
			err := r.eachObject(context.Background(), objs, func(ctx context.Context, o *Object) error {
				mu.Lock()
				cur++
				peak = max(peak, cur)
				seen[o]++
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
			for _, o := range objs {
				if seen[o] != 1 {
					t.Fatalf("an object was read %d times", seen[o])
				}
			}
		})
	}
}
