package archive

import (
	"errors"
	"fmt"
	"testing"
	"time"

	"github.com/kafkas3/kafkas3/s3store"
)

// TestStoppedOnceFinalSnapshot: a --once run that stops a recreated topic
// (kafkas3.topic.recreated=fail) but archives another to its end still
// writes the other topic's group offset snapshot after its final commit,
// and none of the stopped one.
func TestStoppedOnceFinalSnapshot(t *testing.T) {
	brokers := newCluster(t, 1, "recr", "other")
	produce(t, brokers, "recr", 1, 0, 10)
	produce(t, brokers, "other", 1, 0, 3)
	store := s3store.NewMemory()
	cfg := snapshotConfig(brokers, time.Hour, "recr", "other")
	runSink(t, cfg, store)
	recrBefore, otherBefore := len(readSnapshots(t, store, "recr")), len(readSnapshots(t, store, "other"))

	recreateTopic(t, brokers, "recr", 1)
	produce(t, brokers, "recr", 1, 100, 4)
	produce(t, brokers, "other", 1, 3, 3)
	sum, log, err := runSinkLog(t, cfg, store)
	var re *RecreatedError
	if !errors.As(err, &re) {
		t.Fatalf("sink error %v, want a *RecreatedError\n%s", err, log)
	}
	other := readSnapshots(t, store, "other")
	if sum.Snapshots != 1 || len(other) != otherBefore+1 || other[0].EndOffsets[0] != 6 {
		t.Fatalf("snapshots written %d, of other %d (before %d), latest %+v; want the final one of other at end offset 6\n%s",
			sum.Snapshots, len(other), otherBefore, other[0], log)
	}
	if n := len(readSnapshots(t, store, "recr")); n != recrBefore {
		t.Errorf("the stopped topic got %d new snapshots", n-recrBefore)
	}
}

func TestOnlyStopped(t *testing.T) {
	a, b := &RecreatedError{Topic: "a"}, &RecreatedError{Topic: "b"}
	for _, tc := range []struct {
		err  error
		want bool
	}{
		{nil, false},
		{a, true},
		{errors.Join(a), true},
		{errors.Join(a, b), true},
		{errors.Join(a, errors.New("other")), false},
		{fmt.Errorf("wrapped: %w", a), false},
		{errors.New("other"), false},
	} {
		if got := onlyStopped(tc.err); got != tc.want {
			t.Errorf("onlyStopped(%v) = %v, want %v", tc.err, got, tc.want)
		}
	}
}
