package archive

import (
	"context"
	"testing"
	"time"

	"github.com/twmb/franz-go/pkg/kgo"
)

func TestBudget(t *testing.T) {
	ctx, cancel := context.WithCancel(context.Background())
	b := newBudget(ctx, 100)
	if n, ok := b.acquire(60); !ok || n != 60 {
		t.Fatalf("acquire(60) = %d, %v", n, ok)
	}
	got := make(chan int64)
	go func() {
		n, _ := b.acquire(500) // clamped to the whole budget: waits for the 60
		got <- n
	}()
	select {
	case n := <-got:
		t.Fatalf("acquire over the budget returned %d while 60 were held", n)
	case <-time.After(50 * time.Millisecond):
	}
	b.release(60)
	if n := <-got; n != 100 {
		t.Fatalf("clamped acquire took %d, want 100", n)
	}
	go func() {
		_, ok := b.acquire(1)
		got <- map[bool]int64{true: 1, false: 0}[ok]
	}()
	cancel()
	if n := <-got; n != 0 {
		t.Fatal("acquire succeeded after the context ended")
	}
}

func TestDetachCopiesAndKeepsNulls(t *testing.T) {
	resp := []byte("keyvalueHV")
	recs := []*kgo.Record{
		{Key: resp[0:3], Value: resp[3:8], Headers: []kgo.RecordHeader{{Key: "h", Value: resp[8:10]}, {Key: "n", Value: nil}}},
		{Key: nil, Value: resp[0:0]},
	}
	detach(recs)
	copy(resp, "XXXXXXXXXX") // the fetch response is reused or freed
	r := recs[0]
	if string(r.Key) != "key" || string(r.Value) != "value" || string(r.Headers[0].Value) != "HV" || r.Headers[1].Value != nil {
		t.Fatalf("detached record changed: %q %q %q %v", r.Key, r.Value, r.Headers[0].Value, r.Headers[1].Value)
	}
	if recs[1].Key != nil || recs[1].Value == nil || len(recs[1].Value) != 0 {
		t.Fatalf("null key or empty value not kept: key %v value %v", recs[1].Key, recs[1].Value)
	}
}

// A compressed batch's records alias a buffer the client decompressed for
// that batch alone: detach leaves them (no copy), and still copies the
// records of an uncompressed batch in the same fetch.
func TestDetachLeavesCompressedBatches(t *testing.T) {
	resp := []byte("plainvalue")
	decompressed := []byte("snappyvalueHV")
	snappy := kgo.NewRecordAttrs(kgo.RecordAttrsOpts{Codec: kgo.CodecSnappy})
	recs := []*kgo.Record{
		{Value: resp[0:5]},
		{Key: decompressed[0:6], Value: decompressed[6:11], Attrs: snappy,
			Headers: []kgo.RecordHeader{{Key: "h", Value: decompressed[11:13]}}},
	}
	detach(recs)
	copy(resp, "XXXXXXXXXX")
	if string(recs[0].Value) != "plain" {
		t.Fatalf("uncompressed record not copied: %q", recs[0].Value)
	}
	r := recs[1]
	if &r.Key[0] != &decompressed[0] || &r.Value[0] != &decompressed[6] || &r.Headers[0].Value[0] != &decompressed[11] {
		t.Fatal("compressed batch's record was copied")
	}
	if string(r.Key) != "snappy" || string(r.Value) != "value" || string(r.Headers[0].Value) != "HV" {
		t.Fatalf("compressed record changed: %q %q %q", r.Key, r.Value, r.Headers[0].Value)
	}
}
