package restore

import (
	"context"
	"os"
	"runtime"
	"strconv"
	"testing"
	"time"

	"github.com/kafkas3/kafkas3/checkpoint"
	"github.com/kafkas3/kafkas3/format"
	"github.com/kafkas3/kafkas3/index"
)

// BenchmarkFollowKeeps measures what a follower (--follow) keeps between
// passes and what its next plan costs, on an indexed archive of
// KAFKAS3_FOLLOW_OBJECTS objects (default 100,000; one record each) in
// 100 partitions, each with a checkpoint after its objects, in the
// in-process memory store (no latency, no broker: a completed pass is
// simulated by handing the plan to rememberStreams, as Run does after a
// pass). Then one rotation per partition is added and planned. Side by
// side: "marks", as `kafkas3 source --follow` runs (prune.go), and
// "whole", every plan made whole as before the marks.
//
//	go test -count=1 -run '^$' -bench BenchmarkFollowKeeps -benchtime 1x ./restore
//
// It reports the heap kept after each pass (HeapAlloc after a GC, less
// that before the Restorer: the archive's store excluded) per archived
// object, and the second plan's objects and wall time.
func BenchmarkFollowKeeps(b *testing.B) {
	n := 100_000
	if v := os.Getenv("KAFKAS3_FOLLOW_OBJECTS"); v != "" {
		var err error
		if n, err = strconv.Atoi(v); err != nil {
			b.Fatal(err)
		}
	}
	for _, whole := range []bool{false, true} {
		name := "marks"
		if whole {
			name = "whole"
		}
		b.Run(name, func(b *testing.B) {
			for range b.N {
				followKeeps(b, n, 100, whole)
			}
		})
	}
}

func followKeeps(b *testing.B, n, parts int, whole bool) {
	ctx := context.Background()
	a := newArchive(b, format.NewJSON())
	next := make([]int64, parts)
	rotate := func(p int32) {
		key := a.put("src", p, next[p], values("v", int(next[p]), 1))
		a.writeIndex("src", p, next[p]+1, indexed{key: key, runs: []index.Run{{First: next[p], Last: next[p]}}, from: next[p]})
		next[p]++
	}
	for p := range int32(parts) {
		part := checkpoint.Partition{Prefix: index.DefaultPrefix, Topic: "src", Partition: p}
		if _, err := checkpoint.Begin(ctx, a.store, part, 0, 100); err != nil {
			b.Fatal(err)
		}
		for range n / parts {
			rotate(p)
		}
		if _, err := checkpoint.Write(ctx, a.store, part, next[p], 100); err != nil {
			b.Fatal(err)
		}
	}
	cfg := indexedConfig([]string{"127.0.0.1:1"}, a)
	cfg.Follow, cfg.ReadOnce = true, true
	base := heapAfterGC()
	r, err := New(cfg, a.store, nil)
	if err != nil {
		b.Fatal(err)
	}
	r.whole = whole
	pass := func() (*Plan, time.Duration, uint64) {
		t0 := time.Now()
		plan, err := r.Plan(ctx)
		if err != nil {
			b.Fatal(err)
		}
		wall := time.Since(t0)
		r.rememberStreams(plan)
		return plan, wall, heapAfterGC() - base
	}
	plan1, wall1, _ := pass()
	objects1 := plan1.Objects()
	plan1 = nil
	kept1 := heapAfterGC() - base
	for p := range int32(parts) {
		rotate(p)
	}
	plan2, wall2, _ := pass()
	objects2 := plan2.Objects()
	plan2 = nil
	kept2 := heapAfterGC() - base
	runtime.KeepAlive(r)
	b.Logf("%d objects: first plan %s (%d objects); kept after it %d KiB (%.0f B/object); next plan %s (%d objects); kept after it %d KiB (%.0f B/object)",
		n, wall1.Round(time.Millisecond), objects1, kept1>>10, float64(kept1)/float64(n),
		wall2.Round(time.Millisecond), objects2, kept2>>10, float64(kept2)/float64(n))
	b.ReportMetric(float64(kept2)/float64(n), "kept-B/object")
	b.ReportMetric(float64(objects2), "next-plan-objects")
	b.ReportMetric(wall2.Seconds(), "next-plan-s")
}

// heapAfterGC is HeapAlloc after a garbage collection.
func heapAfterGC() uint64 {
	runtime.GC()
	var ms runtime.MemStats
	runtime.ReadMemStats(&ms)
	return ms.HeapAlloc
}
