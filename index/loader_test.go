package index

import "testing"

// TestListFrom: the listing of a partition's log starts below the lowest
// live checkpoint's commit, or at the start of the log when the partition
// has no checkpoint or a writer with checkpoints has none live.
func TestListFrom(t *testing.T) {
	dir := PartitionDir("p/", "orders", 3)
	for _, tc := range []struct {
		name  string
		lives map[string]int64
		want  string
	}{
		{"no checkpoint", map[string]int64{}, ""},
		{"one writer", map[string]int64{"aaaaaaaaaaaa": 1200}, dir + "00000000000000001200"},
		{"the lowest of two", map[string]int64{"aaaaaaaaaaaa": 1200, "bbbbbbbbbbbb": 7}, dir + "00000000000000000007"},
		{"a writer with none live", map[string]int64{"aaaaaaaaaaaa": 1200, "bbbbbbbbbbbb": -1}, ""},
		{"an older kafkas3's log", map[string]int64{"": 0}, dir + "00000000000000000000"},
	} {
		pp := &partPlan{p: logPartition{topic: "orders", part: 3}, lives: tc.lives}
		if got := pp.listFrom("p/"); got != tc.want {
			t.Errorf("%s: %q, want %q", tc.name, got, tc.want)
		}
	}
	// The start sorts after every key of a lower commit and before every
	// key of its own, with or without a writer.
	from := dir + "00000000000000001200"
	for _, k := range []string{Key("p/", "orders", 3, 1199, "ffffffffffff"), Key("p/", "orders", 3, 1199, "")} {
		if k >= from {
			t.Errorf("%s does not sort before %s", k, from)
		}
	}
	for _, k := range []string{Key("p/", "orders", 3, 1200, "000000000000"), Key("p/", "orders", 3, 1200, "")} {
		if k <= from {
			t.Errorf("%s does not sort after %s", k, from)
		}
	}
}
