package scale

import (
	"bytes"
	"context"
	"fmt"
	"testing"
	"time"

	"github.com/kafkas3/kafkas3/format"
	"github.com/kafkas3/kafkas3/index"
	"github.com/kafkas3/kafkas3/partition"
	"github.com/kafkas3/kafkas3/restore"
)

// runShape is a partition whose offsets have holes (issue 19, items 5 and
// 7): runs of runLen records, each followed by one offset that holds no
// record, perObject records to an object. runLen 1 is a compacted topic
// at its worst (every other offset removed by compaction: one run per
// record); runLen 10 is a transactional one (transactions of 10 records,
// each followed by its commit marker).
type runShape struct {
	name      string
	runLen    int64
	perObject int64 // records per object (flush.size)
}

var (
	compactedShape     = runShape{"compacted", 1, 1000}
	transactionalShape = runShape{"transactional", 10, 1000}
)

// buildRuns writes into a new simStore one partition of shape s holding
// runs runs (rounded up to whole objects): per object a value object of
// its records ("v" each, the bytes format), one index object (a v2 entry
// whose runs are the object's offsets, from its first offset to the
// first offset of the next object), and the partition's newest
// checkpoint as build writes it.
func buildRuns(s runShape, runs int64, keys partition.KeyConfig, ext string) (*simStore, error) {
	st := newSimStore()
	perRun := s.runLen + 1 // the run and the hole after it
	runsPer := s.perObject / s.runLen
	value := bytes.Repeat([]byte("v\n"), int(runsPer*s.runLen))
	crc, etag := index.FormatCRC32C(crcOf(value)), etagOf(value)
	var entries []index.Entry
	for from := int64(0); from < runs*perRun; from += runsPer * perRun {
		key := keys.ObjectKey(partition.ObjectName{Topic: topic, Encoded: "partition=0", StartOffset: from, Ext: ext})
		e := index.Entry{V: index.Version2, Topic: topic, Key: key,
			Objects: []index.Object{{Key: key, Size: int64(len(value)), CRC32C: crc, ETag: etag}},
			Runs:    make([]index.Run, 0, runsPer), From: from, Commit: from + runsPer*perRun}
		for r := from; r < e.Commit; r += perRun {
			e.Runs = append(e.Runs, index.Run{First: r, Last: r + s.runLen - 1})
		}
		e.Records = runsPer * s.runLen
		b, err := index.Encode([]index.Entry{e})
		if err != nil {
			return nil, err
		}
		st.add(key, value)
		st.add(index.Key(index.DefaultPrefix, topic, 0, e.Commit, writer), b)
		entries = append(entries, e)
	}
	if err := addCheckpoint(st, 0, entries); err != nil {
		return nil, err
	}
	st.seal()
	return st, nil
}

// planRuns builds the partition of shape s with runs runs and measures
// the restore's plan of it (one read per object, as `kafkas3 source`
// plans), checking that the plan restores every record, one segment per
// run, without gaps.
func planRuns(tb testing.TB, s runShape, runs int64, latency time.Duration) result {
	keys := partition.DefaultKeyConfig()
	f, err := format.NewBytes(format.DefaultBytesConfig())
	if err != nil {
		tb.Fatal(err)
	}
	t0 := time.Now()
	st, err := buildRuns(s, runs, keys, f.Extension())
	if err != nil {
		tb.Fatal(err)
	}
	tb.Logf("built %s partition: %d runs of %d records in %d objects in %s", s.name, runs, s.runLen,
		len(st.objs)/2, time.Since(t0).Round(time.Millisecond))
	st.latency = latency
	var plan *restore.Plan
	plain := planStep(st, keys, f, true)
	r, err := measure(context.Background(), st, step{"restore.Plan", func(ctx context.Context) (any, error) {
		p, err := plain(ctx)
		plan, _ = p.(*restore.Plan)
		return p, err
	}})
	if err != nil {
		tb.Fatalf("restore.Plan: %v", err)
	}
	pp := plan.Topics[0].Parts[0]
	if want := runs * s.runLen; pp.Records != want || len(pp.Gaps) != 0 || pp.Duplicates != 0 || !pp.Complete() {
		tb.Fatalf("plan: records %d, gaps %d, duplicates %d, complete %q; want %d records, complete, no gap or duplicate",
			pp.Records, len(pp.Gaps), pp.Duplicates, pp.CompletenessText(), want)
	}
	tb.Logf("%s runs=%d records=%d objects=%d restore.Plan wall=%s cpu=%s LIST=%d GET=%d HEAD=%d peak_heap=%dMiB retained=%dMiB",
		s.name, runs, pp.Records, len(pp.Objects), r.wall.Round(time.Millisecond), r.cpu.Round(time.Millisecond), r.lists, r.gets, r.head, r.peakHeap>>20, r.retained>>20)
	return r
}

// TestRunsSmall plans small compacted and transactional partitions
// without latency, so `make test` keeps planRuns compiling and correct.
func TestRunsSmall(t *testing.T) {
	for _, s := range []runShape{compactedShape, transactionalShape} {
		planRuns(t, s, 20_000, 0)
	}
}

// BenchmarkCompacted is issue 19's compacted and transactional partition:
// the restore's plan (one read per object) of one partition of
// KAFKAS3_SIM_RUNS runs (default 1,000,000; -short caps it at 10,000)
// behind KAFKAS3_SIM_LATENCY_MS per request (default 20), for each shape.
// Item 5's target: a compacted partition of 10^6 single-offset runs plans
// in at most 10 s.
func BenchmarkCompacted(b *testing.B) {
	runs := int64(envInt(b, "KAFKAS3_SIM_RUNS", 1_000_000))
	lat := time.Duration(envInt(b, "KAFKAS3_SIM_LATENCY_MS", 20)) * time.Millisecond
	if testing.Short() {
		runs = min(runs, 10_000)
	}
	for _, s := range []runShape{compactedShape, transactionalShape} {
		b.Run(fmt.Sprintf("%s/runs=%d", s.name, runs), func(b *testing.B) {
			for range b.N {
				r := planRuns(b, s, runs, lat)
				b.ReportMetric(r.wall.Seconds(), "plan-s")
				b.ReportMetric(r.cpu.Seconds(), "plan-cpu-s")
				b.ReportMetric(float64(r.peakHeap>>20), "peakMiB")
				b.ReportMetric(float64(r.retained>>20), "retainedMiB")
			}
		})
	}
}
