package metrics

import (
	"bytes"
	"log/slog"
	"testing"
	"time"

	"github.com/kafkas3/kafkas3/archive"
	"github.com/prometheus/client_golang/prometheus/testutil"
)

// TestArchiveAge: a partition fetches three batches (offsets 0-9 stamped
// t0, 10-19 t0+10s, 20-29 t0+20s). Before anything is archived the
// oldest waiting record is t0's; once offsets below 15 are archived it is
// the batch 10-19's first (within that batch); below 30 none waits and
// the series goes. The newest archived timestamp follows the completed
// value objects' newest records (.keys objects do not count). The
// interval line names the worst partition of each.
func TestArchiveAge(t *testing.T) {
	s, _, _ := newTestSink(t)
	t0 := time.Now().Add(-time.Hour).Truncate(time.Millisecond)
	p := s.Partition("orders", 3)
	for i := range int64(3) {
		p.Fetched(10, 0, archive.BatchSpan{First: i * 10, Last: i*10 + 9, FirstTime: t0.Add(time.Duration(i) * 10 * time.Second)})
	}
	oldest := func() float64 { return testutil.ToFloat64(s.oldest.WithLabelValues("orders", "3")) }
	if got, want := oldest(), float64(t0.UnixMilli())/1000; got != want {
		t.Fatalf("oldest unarchived = %v, want %v", got, want)
	}
	p.Completed([]archive.FileStats{{Key: "a", Records: 15, MaxTime: t0.Add(12 * time.Second).UnixMilli()},
		{Key: "a.keys", Part: archive.PartKeys, Records: 15, MaxTime: t0.Add(time.Hour).UnixMilli()}})
	p.Archived(15)
	if got, want := oldest(), float64(t0.Add(10*time.Second).UnixMilli())/1000; got != want {
		t.Fatalf("after archiving below 15: oldest unarchived = %v, want %v", got, want)
	}
	if got, want := testutil.ToFloat64(s.newest.WithLabelValues("orders", "3")), float64(t0.Add(12*time.Second).UnixMilli())/1000; got != want {
		t.Fatalf("newest archived = %v, want %v", got, want)
	}

	var buf bytes.Buffer
	s.report(10e9, slog.New(slog.NewJSONHandler(&buf, nil)))
	l := logLines(t, &buf)[0]
	if l["oldest_unarchived_partition"] != "orders/3" || l["newest_archived_partition"] != "orders/3" {
		t.Fatalf("the interval line does not name the partition: %v", l)
	}
	if d, err := time.ParseDuration(l["oldest_unarchived_age"].(string)); err != nil || d < 59*time.Minute || d > 61*time.Minute {
		t.Fatalf("oldest_unarchived_age = %v, want about 59m50s", l["oldest_unarchived_age"])
	}

	p.Archived(30)
	if n := testutil.CollectAndCount(s.oldest); n != 0 {
		t.Fatalf("every fetched record archived: %d oldest series, want none", n)
	}
}

// TestArchiveAgeIsBounded: a long rotation of many small batches keeps
// at most maxSpans of them, and the oldest waiting record stays the
// first batch's.
func TestArchiveAgeIsBounded(t *testing.T) {
	var a partitionAge
	t0 := time.Now().Truncate(time.Millisecond)
	for i := range int64(10_000) {
		a.fetched(archive.BatchSpan{First: i, Last: i, FirstTime: t0.Add(time.Duration(i) * time.Millisecond)})
	}
	if len(a.spans) > maxSpans {
		t.Fatalf("%d batches kept, want at most %d", len(a.spans), maxSpans)
	}
	if ms, ok := a.oldestMS(); !ok || ms != t0.UnixMilli() {
		t.Fatalf("oldest = %d, %v; want %d", ms, ok, t0.UnixMilli())
	}
	a.archived(5000)
	if ms, ok := a.oldestMS(); !ok || ms > t0.Add(5000*time.Millisecond).UnixMilli() {
		t.Fatalf("after archiving below 5000: oldest = %d, %v; want at or before offset 5000's", ms, ok)
	}
	a.archived(10_000)
	if _, ok := a.oldestMS(); ok {
		t.Fatal("everything archived, yet a record waits")
	}
}
