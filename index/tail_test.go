package index

import (
	"context"
	"io"
	"reflect"
	"sync"
	"sync/atomic"
	"testing"

	"github.com/kafkas3/kafkas3/s3store"
)

// TestTailIsALoad: a Tail refreshed after each change of a log without
// checkpoints gives what a fresh Load gives, reading only the index
// objects new or rewritten since: a new index object, a replay after a
// crash that rewrites one already read under the same key with other
// bytes (a restamp: the same object, its loss recorded) and one at a
// lower commit than the last read (a later run with a smaller flush.size
// rewriting a key with fewer records), a new writer, and a new partition.
// A Tail that listed only after the last key it read, or did not read a
// rewritten key again, fails it.
func TestTailIsALoad(t *testing.T) {
	ctx := context.Background()
	st := s3store.NewMemory()
	wa, wb := WriterOf("a"), WriterOf("b")
	k := func(off int) string { return "topics/orders/partition=0/orders+0+" + string(rune('0'+off)) + ".json" }
	put(t, st, Key("p/", "orders", 0, 10, wa), encode(t, entry(k(0), 0, 10, Run{First: 0, Last: 9})))
	put(t, st, Key("p/", "orders", 0, 20, wa), encode(t, entry(k(1), 10, 20, Run{First: 10, Last: 19})))
	tail := NewTail(st, "p/", nil, LoadOptions{})
	opens := &openCount{Store: st}
	tail.l.st = opens
	each := NewTail(st, "p/", nil, LoadOptions{})
	check := func(what string, wantOpens int) {
		t.Helper()
		checkEach(t, what, each, st)
		before := opens.n.Load()
		got, err := tail.Refresh(ctx)
		if err != nil {
			t.Fatal(err)
		}
		want, err := Load(ctx, st, "p/", nil)
		if err != nil {
			t.Fatal(err)
		}
		if !reflect.DeepEqual(got.Entries, want.Entries) || !reflect.DeepEqual(got.All, want.All) ||
			got.Superseded != want.Superseded || got.IndexObjects != want.IndexObjects {
			t.Fatalf("%s: the Tail gives %d entries (%d in All, %d superseded, %d index objects), a load %d (%d, %d, %d)", what,
				len(got.Entries), len(got.All), got.Superseded, got.IndexObjects, len(want.Entries), len(want.All), want.Superseded, want.IndexObjects)
		}
		if n := opens.n.Load() - before; n != int64(wantOpens) {
			t.Fatalf("%s: %d index objects read, want %d", what, n, wantOpens)
		}
	}
	check("first", 2)
	check("nothing new", 0)
	put(t, st, Key("p/", "orders", 0, 30, wa), encode(t, entry(k(2), 20, 30, Run{First: 20, Last: 29})))
	check("a new index object", 1)
	restamped := entry(k(2), 20, 30, Run{First: 20, Last: 29})
	restamped.From, restamped.Lost = 15, []Run{{First: 15, Last: 19}}
	put(t, st, Key("p/", "orders", 0, 30, wa), encode(t, restamped))
	check("a replay rewriting a key read", 1)
	put(t, st, Key("p/", "orders", 0, 15, wa), encode(t, entry(k(1), 10, 15, Run{First: 10, Last: 14})))
	check("a replay at a lower commit", 1)
	put(t, st, Key("p/", "orders", 0, 25, wb), encode(t, entry(k(3), 20, 25, Run{First: 20, Last: 24})))
	check("a new writer", 1)
	e := entry("topics/orders/partition=1/orders+1+0.json", 0, 5, Run{First: 0, Last: 4})
	e.Partition = 1
	put(t, st, Key("p/", "orders", 1, 5, wa), encode(t, e))
	check("a new partition", 1)
}

// checkEach: RefreshEach gives, one partition at a time, what a Load
// gives: the partitions' entries (live and superseded) add up to its.
func checkEach(t *testing.T, what string, tail *Tail, st Store) {
	t.Helper()
	ctx := context.Background()
	var mu sync.Mutex
	byPart := map[int32][]Entry{}
	live := 0
	err := tail.RefreshEach(ctx, 2, func(ix *Index) error {
		mu.Lock()
		defer mu.Unlock()
		if len(ix.All) == 0 {
			return nil
		}
		for _, e := range ix.All {
			if e.Partition != ix.All[0].Partition {
				t.Errorf("%s: one partition's index holds partitions %d and %d", what, ix.All[0].Partition, e.Partition)
			}
		}
		byPart[ix.All[0].Partition] = ix.All
		live += len(ix.Entries)
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	want, err := Load(ctx, st, "p/", nil)
	if err != nil {
		t.Fatal(err)
	}
	wantBy := map[int32][]Entry{}
	for _, e := range want.All {
		wantBy[e.Partition] = append(wantBy[e.Partition], e)
	}
	if !reflect.DeepEqual(byPart, wantBy) || live != len(want.Entries) {
		t.Fatalf("%s: RefreshEach gives %d partitions (%d live entries), a load %d (%d)", what, len(byPart), live, len(wantBy), len(want.Entries))
	}
}

// openCount counts the opens of a store (from several goroutines).
type openCount struct {
	s3store.Store
	n atomic.Int64
}

func (o *openCount) Open(ctx context.Context, key string) (io.ReadCloser, error) {
	o.n.Add(1)
	return o.Store.Open(ctx, key)
}
