package index

import (
	"context"
	"errors"
	"math"
	"reflect"
	"testing"

	"github.com/kafkas3/kafkas3/s3store"
)

// TestLoadDropsPruned: with a watermark at 5 (and an older one at 3),
// Load, EachPartition and a Tail leave out the entries holding only
// offsets below 5, name the watermark in Pruned and count the live ones
// dropped; KeepPruned keeps them. A Tail refreshed after a new watermark
// drops the entries below it too. The watermark costs no request: the
// checkpoint listing names it.
func TestLoadDropsPruned(t *testing.T) {
	st := s3store.NewMemory()
	const p = "_kafkas3/"
	a := entry("o+0", 0, 3, Run{0, 2})
	b := entry("o+3", 3, 5, Run{3, 4})
	c := entry("o+5", 5, 8, Run{5, 7})
	put(t, st, Key(p, "orders", 0, 3, ""), encode(t, a))
	put(t, st, Key(p, "orders", 0, 5, ""), encode(t, b))
	put(t, st, Key(p, "orders", 0, 8, ""), encode(t, c))
	tail := NewTail(st, p, nil, LoadOptions{})
	if ix, err := tail.Refresh(context.Background()); err != nil || len(ix.Entries) != 3 || len(ix.Pruned) != 0 {
		t.Fatalf("before the prune: %v, %d entries, %v", err, len(ix.Entries), ix.Pruned)
	}
	put(t, st, PrunedKey(p, "orders", 0, 3), EncodeWatermark(Watermark{Topic: "orders", Partition: 0, Below: 3}))
	put(t, st, PrunedKey(p, "orders", 0, 5), EncodeWatermark(Watermark{Topic: "orders", Partition: 0, Below: 5}))
	want := []Pruned{{Topic: "orders", Partition: 0, Below: 5}}
	check := func(what string, ix *Index, err error) {
		t.Helper()
		if err != nil {
			t.Fatal(err)
		}
		if !reflect.DeepEqual(ix.Entries, []Entry{c}) || !reflect.DeepEqual(ix.All, []Entry{c}) || !reflect.DeepEqual(ix.Pruned, want) || ix.PrunedEntries != 2 {
			t.Fatalf("%s: Entries %+v All %+v Pruned %+v PrunedEntries %d", what, ix.Entries, ix.All, ix.Pruned, ix.PrunedEntries)
		}
	}
	ix, err := Load(context.Background(), st, p, nil)
	check("Load", ix, err)
	err = EachPartition(context.Background(), st, p, nil, LoadOptions{}, func(ix *Index) error { check("EachPartition", ix, nil); return nil })
	if err != nil {
		t.Fatal(err)
	}
	ix, err = tail.Refresh(context.Background())
	check("Tail", ix, err)
	ix, err = LoadWith(context.Background(), st, p, nil, LoadOptions{KeepPruned: true})
	if err != nil || len(ix.Entries) != 3 || !reflect.DeepEqual(ix.Pruned, want) {
		t.Fatalf("KeepPruned: %v, %d entries, %v", err, len(ix.Entries), ix.Pruned)
	}
	// A done key counts as the watermark too.
	put(t, st, PrunedDoneKey(p, "orders", 0, 6), EncodeWatermark(Watermark{Topic: "orders", Partition: 0, Below: 6}))
	if ix, err = Load(context.Background(), st, p, nil); err != nil || ix.Pruned[0].Below != 6 {
		t.Fatalf("with a done key at 6: %v, %+v", err, ix.Pruned)
	}
}

func TestWatermarkKeysAndDecode(t *testing.T) {
	const p = "_kafkas3/"
	w := Watermark{Topic: "orders", Partition: 3, Below: 1200, TimeMS: 5, CutoffMS: 4}
	key := PrunedKey(p, "orders", 3, 1200)
	if key != "_kafkas3/checkpoints/orders/3/pruned-00000000000000001200.json" {
		t.Fatalf("PrunedKey = %q", key)
	}
	got, err := DecodeWatermark(key, EncodeWatermark(w))
	w.Pruned = WatermarkVersion
	if err != nil || got != w {
		t.Fatalf("round trip: %+v, %v", got, err)
	}
	if below, done, ok, err := ParsePrunedKey(PrunedDoneKey(p, "orders", 3, 1200)); below != 1200 || !done || !ok || err != nil {
		t.Fatalf("done key: %d %v %v %v", below, done, ok, err)
	}
	for _, bad := range []struct{ key, body string }{
		{key, `{"pruned":2,"topic":"orders","partition":3,"below":1200,"time_ms":5,"cutoff_ms":4}`},
		{key, `{"pruned":1,"topic":"orders","partition":3,"below":1201,"time_ms":5,"cutoff_ms":4}`},
		{key, `{"pruned":1,"topic":"other","partition":3,"below":1200,"time_ms":5,"cutoff_ms":4}`},
		{key, `{"pruned":1,"topic":"orders","partition":3,"below":1200,"extra":1}`},
		{p + "checkpoints/orders/3/pruned-12.json", `{}`},
	} {
		if _, err := DecodeWatermark(bad.key, []byte(bad.body)); !errors.Is(err, ErrMalformed) {
			t.Errorf("DecodeWatermark(%q, %s) = %v, want ErrMalformed", bad.key, bad.body, err)
		}
	}
	// A malformed watermark key fails the load, naming it.
	st := s3store.NewMemory()
	put(t, st, Key(p, "orders", 0, 3, ""), encode(t, entry("o+0", 0, 3, Run{0, 2})))
	put(t, st, p+"checkpoints/orders/0/pruned-x.json", []byte("{}"))
	if _, err := Load(context.Background(), st, p, nil); !errors.Is(err, ErrMalformed) {
		t.Fatalf("Load with a malformed watermark key = %v", err)
	}
}

func FuzzDecodeWatermark(f *testing.F) {
	f.Add("_kafkas3/checkpoints/orders/3/pruned-00000000000000001200.json", []byte(`{"pruned":1,"topic":"orders","partition":3,"below":1200,"time_ms":5,"cutoff_ms":4}`))
	f.Add("x/checkpoints/t/0/pruned-00000000000000000000-done.json", []byte(`{}`))
	f.Fuzz(func(t *testing.T, key string, b []byte) {
		w, err := DecodeWatermark(key, b)
		if err != nil {
			return
		}
		if again, err := DecodeWatermark(key, EncodeWatermark(w)); err != nil || again != w {
			t.Fatalf("a decoded watermark does not round-trip: %+v %v", again, err)
		}
	})
}

func TestEntryTimed(t *testing.T) {
	for _, c := range []struct {
		min, max int64
		want     bool
	}{{0, 0, false}, {math.MinInt64, math.MaxInt64, false}, {0, 5, true}, {1700000000000, 1700000000001, true}} {
		e := Entry{MinTS: c.min, MaxTS: c.max}
		if got := e.Timed(); got != c.want {
			t.Errorf("Timed(%d, %d) = %v, want %v", c.min, c.max, got, c.want)
		}
	}
}
