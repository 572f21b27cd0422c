package s3store_test

import (
	"context"
	"fmt"
	"math/rand/v2"
	"slices"
	"sync"
	"testing"

	"github.com/kafkas3/kafkas3/s3store"
)

// randomTree writes n objects under keys of a random folder tree (depth
// 0 to 4, some names sharing prefixes, some keys next to folders of the
// same name) and returns every key.
func randomTree(t *testing.T, st s3store.Store, rng *rand.Rand, n int) []string {
	t.Helper()
	names := []string{"a", "ab", "a-b", "partition=0", "partition=1", "partition=10", "year=2026", "x.json", "topics", "topics-old"}
	var keys []string
	seen := map[string]bool{}
	for len(keys) < n {
		depth := rng.IntN(5)
		k := "topics"
		if rng.IntN(4) > 0 {
			k += "/"
		}
		for range depth {
			k += names[rng.IntN(len(names))] + "/"
		}
		k += fmt.Sprintf("%s+%d.json", names[rng.IntN(len(names))], rng.IntN(100))
		if seen[k] {
			continue
		}
		seen[k] = true
		keys = append(keys, k)
		if err := writeObject(context.Background(), st, k, []byte(k)); err != nil {
			t.Fatal(err)
		}
	}
	slices.Sort(keys)
	return keys
}

// TestListParallel: ListParallel lists every key under the prefix once,
// whatever the tree, at every depth, from the S3 store (ListObjectsV2 with
// a delimiter, pages of 7 keys and folders) and from a store without
// folder listings, with the sizes and ETags List gives; fn is never
// called by two goroutines at once.
func TestListParallel(t *testing.T) {
	fake := newFake(t)
	fake.SetMaxKeys(7)
	st, _ := fakeStore(t, fake, nil)
	rng := rand.New(rand.NewPCG(7, 11))
	randomTree(t, st, rng, 300)
	mem := s3store.NewMemory()
	randomTree(t, mem, rng, 200)
	ctx := context.Background()
	for _, tc := range []struct {
		name string
		st   s3store.Store
	}{{"s3", st}, {"without folders", mem}} {
		for _, prefix := range []string{"", "topics", "topics/", "topics/a/", "topics/partition=1", "none/"} {
			var want []s3store.ObjectInfo
			if err := tc.st.List(ctx, prefix, func(i s3store.ObjectInfo) error { want = append(want, i); return nil }); err != nil {
				t.Fatal(err)
			}
			for depth := range 4 {
				var (
					mu     sync.Mutex
					inside bool
					got    []s3store.ObjectInfo
				)
				err := s3store.ListParallel(ctx, tc.st, prefix, "/", depth, 8, func(i s3store.ObjectInfo) error {
					mu.Lock()
					if inside {
						t.Error("fn called by two goroutines at once")
					}
					inside = true
					mu.Unlock()
					got = append(got, i)
					mu.Lock()
					inside = false
					mu.Unlock()
					return nil
				})
				if err != nil {
					t.Fatalf("%s %q depth %d: %v", tc.name, prefix, depth, err)
				}
				slices.SortFunc(got, func(a, b s3store.ObjectInfo) int {
					if a.Key < b.Key {
						return -1
					}
					if a.Key > b.Key {
						return 1
					}
					return 0
				})
				if len(got) != len(want) {
					t.Fatalf("%s %q depth %d: %d keys, want %d", tc.name, prefix, depth, len(got), len(want))
				}
				for i := range want {
					if got[i].Key != want[i].Key || got[i].Size != want[i].Size || got[i].ETag != want[i].ETag {
						t.Fatalf("%s %q depth %d: key %d is %+v, want %+v", tc.name, prefix, depth, i, got[i], want[i])
					}
				}
			}
		}
	}
}
