package restore

import (
	"bytes"
	"fmt"
	"runtime"
	"testing"

	"github.com/kafkas3/kafkas3/format"
)

// TestRestoreAfterTheProofReadsEachObjectAgain: without an index every
// object is read by the proof and again to be produced. Every property of
// every record (nil and empty keys, values and header values, duplicate
// headers, timestamps) comes back, in order, and the memory the loaded
// records took is given back.
func TestRestoreAfterTheProofReadsEachObjectAgain(t *testing.T) {
	brokers := newCluster(t, 2, "dst")
	a := newArchive(t, fullFormat{})
	want := map[int32][]*format.Record{}
	keys := map[int32][]string{}
	for p := range int32(2) {
		for obj := range 3 {
			var recs []*format.Record
			for i := range 50 {
				n := obj*50 + i
				rec := &format.Record{Value: fmt.Appendf(nil, "v%d-%d", p, n), Timestamp: timeAt(n)}
				switch n % 4 {
				case 0:
					rec.Key = nil
				case 1:
					rec.Key, rec.Value = []byte{}, []byte{}
				default:
					rec.Key = fmt.Appendf(nil, "k%d", n)
				}
				if n%3 == 0 {
					rec.Headers = []format.Header{{Key: "h", Value: nil}, {Key: "h", Value: []byte{}}, {Key: "x", Value: []byte("y")}}
				}
				recs = append(recs, rec)
			}
			keys[p] = append(keys[p], a.put("src", p, int64(obj*50), recs))
			want[p] = append(want[p], recs...)
		}
	}
	st := &openLog{Store: a.store}
	cfg := baseConfig(brokers, a.f, "src")
	cfg.Rename = "dst"
	r, err := New(cfg, st, nil)
	if err != nil {
		t.Fatal(err)
	}
	if sum, err := r.Run(testContext(t), nil); err != nil || sum.Records != 300 {
		t.Fatalf("restore: %+v, %v", sum, err)
	}
	for p := range int32(2) {
		for i, key := range keys[p] {
			const wantOpens = 2 // the proof, then the production
			if n := st.count(key); n != wantOpens {
				t.Errorf("object %d of partition %d (%s) opened %d times, want %d", i, p, key, n, wantOpens)
			}
		}
	}
	if r.mem.peak.Load() == 0 || r.mem.used.Load() != 0 {
		t.Fatalf("memory budget: peak %d, %d still taken", r.mem.peak.Load(), r.mem.used.Load())
	}
	got := readTopic(t, brokers, "dst")
	for p := range int32(2) {
		if len(got[p]) != len(want[p]) {
			t.Fatalf("dst/%d: %d records, want %d", p, len(got[p]), len(want[p]))
		}
		for i, w := range want[p] {
			if !sameRecord(got[p][i], w) || !got[p][i].Timestamp.Equal(w.Timestamp) {
				t.Fatalf("dst/%d record %d: key %q value %q headers %v, want %q %q %v", p, i, got[p][i].Key, got[p][i].Value, got[p][i].Headers, w.Key, w.Value, w.Headers)
			}
		}
	}
}

// TestProofCopiesNoValue: the proof reads the values without copying
// them (format.Transient): planning 2,000 JSON events of 1 KiB allocates
// less than a quarter of their 2 MB.
func TestProofCopiesNoValue(t *testing.T) {
	a := newArchive(t, format.NewJSON())
	recs := make([]*format.Record, 2000)
	for i := range recs {
		recs[i] = &format.Record{Value: fmt.Appendf(nil, `{"i":%d,"pad":"%s"}`, i, bytes.Repeat([]byte("p"), 1000))}
	}
	a.put("src", 0, 0, recs)
	cfg := baseConfig(nil, a.f, "src")
	cfg.DryRun = true
	r := mustNew(t, cfg, a, nil)
	var before, after runtime.MemStats
	runtime.GC()
	runtime.ReadMemStats(&before)
	plan, err := r.Plan(testContext(t))
	runtime.ReadMemStats(&after)
	if err != nil {
		t.Fatal(err)
	}
	if plan.Topics[0].Records != 2000 {
		t.Fatalf("planned %d records, want 2000", plan.Topics[0].Records)
	}
	if transient := after.TotalAlloc - before.TotalAlloc; transient > 500_000 {
		t.Fatalf("the proof allocated %d bytes; want ≤ 500,000", transient)
	}
}
