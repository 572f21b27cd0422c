package restore

import (
	"errors"
	"testing"
)

// TestShardOf: the assignment is a function of the topic, the partition
// and the count only (pinned values, so a change of hash is seen: shards
// of a running Job would otherwise disagree), every partition has exactly
// one shard, and within a topic the shards' counts differ by at most one.
func TestShardOf(t *testing.T) {
	// (FNV-1a 32 of the name + partition) mod 4, computed with Python:
	// orders 845059820, payments 3392796198, a 3826002220.
	pinned := map[string][]int{"orders": {0, 1, 2, 3}, "payments": {2, 3, 0, 1}, "a": {0, 1, 2, 3}}
	for topic, want := range pinned {
		for p, w := range want {
			if got := ShardOf(topic, int32(p), 4); got != w {
				t.Errorf("ShardOf(%q, %d, 4) = %d, want %d", topic, p, got, w)
			}
		}
	}
	for _, n := range []int{2, 3, 7} {
		counts := make([]int, n)
		for p := range int32(100) {
			owners := 0
			for i := range n {
				if (Shard{Index: i, Count: n}).Owns("orders", p) {
					owners++
					counts[i]++
				}
			}
			if owners != 1 {
				t.Fatalf("partition %d has %d owners among %d shards", p, owners, n)
			}
		}
		lo, hi := counts[0], counts[0]
		for _, c := range counts {
			lo, hi = min(lo, c), max(hi, c)
		}
		if hi-lo > 1 {
			t.Errorf("%d shards: partition counts %v", n, counts)
		}
	}
	if !(Shard{}).Owns("x", 9) || !(Shard{Count: 1}).Owns("x", 9) {
		t.Error("no sharding owns every partition")
	}
}

func TestParseShard(t *testing.T) {
	if s, err := ParseShard(" 2/5 "); err != nil || s != (Shard{Index: 2, Count: 5}) {
		t.Errorf("ParseShard(2/5) = %v, %v", s, err)
	}
	for _, bad := range []string{"", "3", "5/5", "-1/2", "1/0", "a/b", "1/2/3", "0/100000"} {
		if _, err := ParseShard(bad); !errors.Is(err, ErrBadShard) {
			t.Errorf("ParseShard(%q): %v", bad, err)
		}
	}
}
