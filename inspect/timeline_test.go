package inspect

import (
	"testing"
	"time"
)

// An entry's records and bytes are spread evenly over the buckets its
// times meet, remainders to the first; buckets between are kept empty.
func TestTimelineSpreads(t *testing.T) {
	tl := newTimeline(time.Hour)
	h := time.Hour.Milliseconds()
	tl.add(0, 2*h+5, 7, 10)    // hours 0, 1, 2: 3+2+2 records, 4+3+3 bytes
	tl.add(4*h+1, 4*h+2, 1, 1) // hour 4
	tl.add(-h+1, -h+1, 2, 2)   // before 1970: hour -1
	got := tl.buckets()
	want := []Bucket{{Records: 2, Bytes: 2}, {Records: 3, Bytes: 4}, {Records: 2, Bytes: 3}, {Records: 2, Bytes: 3}, {}, {Records: 1, Bytes: 1}}
	if len(got) != len(want) {
		t.Fatalf("buckets %+v", got)
	}
	for i, b := range got {
		if b.Records != want[i].Records || b.Bytes != want[i].Bytes || !b.Start.Equal(time.UnixMilli(int64(i-1)*h)) {
			t.Errorf("bucket %d: %+v, want %+v at %v", i, b, want[i], time.UnixMilli(int64(i-1)*h).UTC())
		}
	}
	off := newTimeline(0)
	off.add(0, h, 1, 1)
	if off.buckets() != nil {
		t.Errorf("a timeline without buckets has %+v", off.buckets())
	}
}

// A partition spread over more than MaxBuckets keeps the newest.
func TestTimelineBounded(t *testing.T) {
	tl := newTimeline(time.Hour)
	h := time.Hour.Milliseconds()
	tl.add(0, 3*MaxBuckets*h, 3*MaxBuckets+1, 0)
	for i := int64(0); i < 3*MaxBuckets; i += 7 {
		tl.add(i*h, i*h, 1, 0)
	}
	if got := tl.buckets(); len(got) != MaxBuckets || !got[len(got)-1].Start.Equal(time.UnixMilli(3*MaxBuckets*h)) {
		t.Errorf("%d buckets, last %v", len(got), got[len(got)-1].Start)
	}
}
