package restore

import (
	"bytes"
	"fmt"
	"testing"

	"github.com/kafkas3/kafkas3/format"
)

// TestEraseListedKeys: a GDPR-style list of 1,000 keys on an archive of
// 100,000 records (10,000 users, 2 partitions, objects of 5,000 records,
// headers on some). Tombstone (the default): every record of a listed key
// comes back as a tombstone of its key (null value, no headers) in its
// place; drop (--exclude-action drop): it does not come back. Every other
// record comes back as archived, in order, compared record by record; the
// summary counts the erased or filtered ones, and a re-run with the same
// list finds everything present and produces nothing.
func TestEraseListedKeys(t *testing.T) {
	for _, drop := range []bool{false, true} {
		t.Run(fmt.Sprintf("drop %v", drop), func(t *testing.T) { eraseListedKeys(t, drop) })
	}
}

func eraseListedKeys(t *testing.T, drop bool) {
	const parts, perPart, perObject, users, listed = 2, 50_000, 5_000, 10_000, 1_000
	a := newArchive(t, fullFormat{})
	var want [parts][]*format.Record
	erased := int64(0)
	for p := range int32(parts) {
		for start := 0; start < perPart; start += perObject {
			recs := make([]*format.Record, perObject)
			for i := range recs {
				n := int(p)*perPart + start + i
				user := n % users
				rec := &format.Record{Key: fmt.Appendf(nil, "user-%d", user), Value: fmt.Appendf(nil, "event %d of user %d", n, user), Timestamp: timeAt(n)}
				if n%3 == 0 {
					rec.Headers = []format.Header{{Key: "trace", Value: fmt.Appendf(nil, "t%d", n)}}
				}
				recs[i] = rec
				w := *rec
				if user < listed {
					erased++
					if drop {
						continue
					}
					w.Value, w.Headers = nil, nil
				}
				want[p] = append(want[p], &w)
			}
			a.put("src", p, int64(start), recs)
		}
	}
	keys := map[string]struct{}{}
	for u := range listed {
		keys[fmt.Sprintf("user-%d", u)] = struct{}{}
	}
	brokers := newCluster(t, parts, "dst")
	cfg := baseConfig(brokers, a.f, "src")
	cfg.Rename, cfg.ExcludeKeys, cfg.Filter.DropKeys = "dst", keys, drop
	sum, err := mustNew(t, cfg, a, nil).Run(testContext(t), nil)
	if err != nil {
		t.Fatal(err)
	}
	produced, counted := int64(parts*perPart), sum.Erased
	if drop {
		produced, counted = produced-erased, sum.Filtered
	}
	if sum.Records != produced || counted != erased {
		t.Fatalf("summary: %d records, %d erased, %d filtered; want %d records, %d erased or filtered", sum.Records, sum.Erased, sum.Filtered, produced, erased)
	}
	got := readTopic(t, brokers, "dst")
	for p := range int32(parts) {
		if len(got[p]) != len(want[p]) {
			t.Fatalf("dst/%d: %d records, want %d", p, len(got[p]), len(want[p]))
		}
		for i, w := range want[p] {
			g := got[p][i]
			if !bytes.Equal(g.Key, w.Key) || !bytes.Equal(g.Value, w.Value) || (g.Value == nil) != (w.Value == nil) ||
				len(g.Headers) != len(w.Headers) || !g.Timestamp.Equal(w.Timestamp) {
				t.Fatalf("dst/%d record %d: key %q value %q headers %v, want %q %q %v", p, i, g.Key, g.Value, g.Headers, w.Key, w.Value, w.Headers)
			}
		}
	}
	again, err := mustNew(t, cfg, a, nil).Run(testContext(t), nil)
	if err != nil {
		t.Fatal(err)
	}
	if again.Records != 0 || again.AlreadyPresent != produced {
		t.Fatalf("re-run: %d records produced, %d present; want 0, %d", again.Records, again.AlreadyPresent, produced)
	}
}
