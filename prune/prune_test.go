package prune

import (
	"strings"
	"testing"
	"time"

	"github.com/kafkas3/kafkas3/index"
)

func ent(first, last, maxTS int64) index.Entry {
	return index.Entry{Runs: []index.Run{{First: first, Last: last}}, MaxTS: maxTS, Commit: last + 1}
}

// TestWatermark: the first offset of the first entry with a record at or
// after the cut, lowered while an entry straddles it; past the last entry
// when every record is older.
func TestWatermark(t *testing.T) {
	for _, c := range []struct {
		name string
		es   []index.Entry
		want int64
	}{
		{"cut between objects", []index.Entry{ent(0, 9, 1), ent(10, 19, 5), ent(20, 29, 9)}, 10},
		{"nothing older", []index.Entry{ent(0, 9, 5), ent(10, 19, 9)}, 0},
		{"everything older", []index.Entry{ent(0, 9, 1), ent(10, 19, 2)}, 20},
		{"a straddling replay keeps its offsets", []index.Entry{ent(0, 9, 1), ent(5, 14, 2), ent(15, 19, 9)}, 15},
		// An old object overlapping a kept one (two sink runs with other
		// flush sizes) holds offsets at and above the cut: it stays, and
		// with it the offsets below, down to its first.
		{"an old object overlapping the first kept", []index.Entry{ent(0, 9, 1), ent(8, 19, 9), ent(20, 29, 9)}, 0},
		{"a chain of overlaps", []index.Entry{ent(0, 4, 1), ent(5, 6, 1), ent(3, 9, 1), ent(8, 19, 9)}, 0},
		{"an overlap above older ones", []index.Entry{ent(0, 4, 1), ent(5, 9, 1), ent(8, 19, 9)}, 5},
		// An entry whose records' times are unknown (Entry.Timed) stays.
		{"an entry without times", []index.Entry{ent(0, 9, 1), ent(10, 19, 0), ent(20, 29, 9)}, 10},
	} {
		if got := watermark(c.es, 5); got != c.want {
			t.Errorf("%s: watermark = %d, want %d", c.name, got, c.want)
		}
	}
}

// TestWatermarkOverlappingWriters: two writers whose objects overlap
// (shifted by half an object) chain every entry to the first: the
// watermark comes down to 0 in one pass, not one link a pass (10^5
// entries in a blink, where the pass-per-link took minutes).
func TestWatermarkOverlappingWriters(t *testing.T) {
	var es []index.Entry
	for i := int64(0); i < 50_000; i++ {
		es = append(es, ent(i*100, i*100+99, 1), ent(i*100+50, i*100+149, 1))
	}
	es[len(es)-1].MaxTS = 9
	if got := watermark(es, 5); got != 0 {
		t.Fatalf("watermark = %d, want 0", got)
	}
}

// TestPlanAfterADonePrune: below a finished prune's watermark (done)
// nothing is deleted again, but a key with an entry between done and the
// new watermark goes, though an older entry of it lies below done (a key
// written again after that prune); a key with an entry at or above the
// new watermark stays.
func TestPlanAfterADonePrune(t *testing.T) {
	obj := func(key string, first, last, maxTS int64) index.Entry {
		e := ent(first, last, maxTS)
		e.Key, e.Records = key, last-first+1
		e.Objects = []index.Object{{Key: key, Size: 10}}
		return e
	}
	all := []index.Entry{
		obj("gone", 0, 9, 1),  // below done: deleted by the finished prune
		obj("again", 0, 9, 1), // below done, and written again below the new cut
		obj("again", 0, 14, 1),
		obj("old", 15, 19, 1), // between done and the cut
		obj("new", 20, 29, 9), // at the cut
	}
	p, ok := plan(&index.Index{All: all, Entries: all[1:]}, time.UnixMilli(5), 10)
	if !ok || p.r.Below != 20 {
		t.Fatalf("plan: ok %v, watermark %d; want 20", ok, p.r.Below)
	}
	if got := strings.Join(p.objects, ","); got != "again,old" {
		t.Fatalf("objects to delete: %s, want again,old", got)
	}
}
