package archive

import (
	"context"
	"testing"
	"time"
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
