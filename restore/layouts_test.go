package restore

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"github.com/kafkas3/kafkas3/s3store"
	"github.com/twmb/franz-go/pkg/kgo"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/kafkas3/kafkas3/format"
	"github.com/kafkas3/kafkas3/index"
	"github.com/kafkas3/kafkas3/partition"
)

// layout maps a record's offset to the folder (encoded partition) a sink
// with one of Confluent's partitioners writes it to, with directory.delim
// dd.
type layout struct {
	name   string
	folder func(off int64, dd string) string
}

// recordTime is the record time of offset off in the layout tests: every
// 20 minutes from 2026-12-31T22:10Z, across the new year, except offsets
// 9 and 11, late records stamped back in 2026's last hour.
func recordTime(off int64) time.Time {
	t0 := time.Date(2026, 12, 31, 22, 10, 0, 0, time.UTC)
	if off == 9 || off == 11 {
		return t0.Add(time.Hour + 5*time.Minute)
	}
	return t0.Add(time.Duration(off) * 20 * time.Minute)
}

// testLayouts are Confluent's layouts: Default, Hourly and Daily (across a
// year boundary, with late records), a TimeBased path.format whose folders
// do not sort like time (day first), and Field with two fields (three
// values, interleaved).
func testLayouts() []layout {
	joined := func(dd string, parts ...string) string { return strings.Join(parts, dd) }
	return []layout{
		{"default", func(int64, string) string { return "partition=0" }},
		{"hourly", func(off int64, dd string) string {
			t := recordTime(off)
			return joined(dd, fmt.Sprintf("year=%04d", t.Year()), fmt.Sprintf("month=%02d", t.Month()), fmt.Sprintf("day=%02d", t.Day()), fmt.Sprintf("hour=%02d", t.Hour()))
		}},
		{"daily", func(off int64, dd string) string {
			t := recordTime(off)
			return joined(dd, fmt.Sprintf("year=%04d", t.Year()), fmt.Sprintf("month=%02d", t.Month()), fmt.Sprintf("day=%02d", t.Day()))
		}},
		{"timebased day first", func(off int64, dd string) string {
			t := recordTime(off)
			return joined(dd, fmt.Sprintf("day=%02d", t.Day()), fmt.Sprintf("month=%02d", t.Month()), fmt.Sprintf("year=%04d", t.Year()))
		}},
		{"field", func(off int64, dd string) string {
			regions := []string{"region=eu" + dd + "tier=3", "region=us" + dd + "tier=1", "region=ap" + dd + "tier=2"}
			return regions[off%3]
		}},
	}
}

// sunkObject is one object a sink-like writer made: its folder and the
// offsets of its records.
type sunkObject struct {
	folder  string
	offsets []int64
	commit  int64 // the offset the commit that wrote it reached
}

// sinkLike writes offsets 0..n-1 as a sink does: each record goes to its
// folder's open object; every commitEvery records a rotation commits every
// open object.
func sinkLike(l layout, dd string, n, commitEvery int64) []sunkObject {
	var out []sunkObject
	for from := int64(0); from < n; from += commitEvery {
		to := min(from+commitEvery, n)
		open := map[string]int{}
		for off := from; off < to; off++ {
			f := l.folder(off, dd)
			i, ok := open[f]
			if !ok {
				i = len(out)
				open[f] = i
				out = append(out, sunkObject{folder: f, commit: to})
			}
			out[i].offsets = append(out[i].offsets, off)
		}
	}
	return out
}

// layoutRecord is the record at off: value v-<off>; envelopes carry the
// partition, offset and time.
func layoutRecord(p int32, off int64) *format.Record {
	return &format.Record{Partition: p, Offset: off, Timestamp: recordTime(off), Value: fmt.Appendf(nil, "v-%d", off)}
}

// putIn writes one object of topic/p in folder, named with the first
// record's offset, holding recs.
func (a *archive) putIn(topic string, p int32, folder string, recs []*format.Record) string {
	a.t.Helper()
	key := a.keys.ObjectKey(partition.ObjectName{Topic: topic, Encoded: folder, Partition: p, StartOffset: recs[0].Offset, Ext: a.f.Extension()})
	return a.putRecords(key, recs)
}

// writeSunk writes objs into topic/p; withIndex adds each commit's index
// entries (one index object per commit), as the kafkas3 sink does.
func (a *archive) writeSunk(topic string, p int32, objs []sunkObject, withIndex bool) []string {
	a.t.Helper()
	var keys []string
	var batch []indexed
	for i, o := range objs {
		recs := make([]*format.Record, len(o.offsets))
		var runs offsetRuns
		for j, off := range o.offsets {
			recs[j] = layoutRecord(p, off)
			if err := runs.add(off); err != nil {
				a.t.Fatal(err)
			}
		}
		key := a.putIn(topic, p, o.folder, recs)
		keys = append(keys, key)
		ir := make([]index.Run, len(runs.runs))
		for j, r := range runs.runs {
			ir[j] = index.Run{First: r.First, Last: r.Last}
		}
		batch = append(batch, indexed{key: key, runs: ir, from: o.commit - commitOf(objs, o.commit)})
		if withIndex && (i == len(objs)-1 || objs[i+1].commit != o.commit) {
			a.writeIndex(topic, p, o.commit, batch...)
			batch = nil
		}
	}
	return keys
}

// commitOf returns how many offsets the commit reaching commit covers.
func commitOf(objs []sunkObject, commit int64) int64 {
	var n int64
	for _, o := range objs {
		if o.commit == commit {
			n += int64(len(o.offsets))
		}
	}
	return n
}

// layoutValues are the records v-<off> of offsets from..to-1.
func layoutValues(from, to int64) []*format.Record {
	var out []*format.Record
	for off := from; off < to; off++ {
		out = append(out, &format.Record{Value: fmt.Appendf(nil, "v-%d", off)})
	}
	return out
}

// TestLayoutsRestoreInOffsetOrder: archives of every layout (the default,
// hourly and daily across the new year with late records going back to
// 2026's folders, a time-based path.format whose folders sort against
// time, a field layout with two fields whose folders interleave), with
// the archive index or with envelopes and no index, with Confluent's key
// layout and with another directory.delim and no topics.dir: each
// partition's objects are found in every folder, at any depth, and
// restored in exact offset order, each record once; the plan says how.
func TestLayoutsRestoreInOffsetOrder(t *testing.T) {
	const n = 16
	plain := format.NewJSON()
	envelope := mustFormat(t, format.Config{Kind: format.KindJSON, Envelope: true})
	for _, l := range testLayouts() {
		for _, tc := range []struct {
			name      string
			f         format.Format
			withIndex bool
			keys      partition.KeyConfig
		}{
			{"index", plain, true, partition.DefaultKeyConfig()},
			{"envelope", envelope, false, partition.DefaultKeyConfig()},
			{"index, delim # and no topics.dir", plain, true, partition.KeyConfig{DirectoryDelim: "#", FileDelim: "+", OffsetPadWidth: 5}},
		} {
			t.Run(l.name+"/"+tc.name, func(t *testing.T) {
				a := newArchive(t, tc.f)
				a.keys = tc.keys
				objs := sinkLike(l, tc.keys.DirectoryDelim, n, 6)
				a.writeSunk("src", 0, objs, tc.withIndex)
				brokers := newCluster(t, 1)
				cfg := indexedConfig(brokers, a)
				cfg.Keys, cfg.Format = tc.keys, plain
				r := mustNew(t, cfg, a, nil)
				plan, err := r.Plan(testContext(t))
				if err != nil {
					t.Fatal(err)
				}
				pp := plan.Topics[0].Parts[0]
				folders := map[string]bool{}
				for _, o := range objs {
					folders[o.folder] = true
				}
				if pp.Order != OrderOffsets || pp.Folders != len(folders) || len(pp.Objects) != len(objs) || pp.Records != n || pp.Duplicates != 0 || len(pp.Gaps) != 0 {
					t.Fatalf("plan: order %q folders %d (want %d) objects %d (want %d) records %d duplicates %d gaps %v damaged %v",
						pp.Order, pp.Folders, len(folders), len(pp.Objects), len(objs), pp.Records, pp.Duplicates, pp.Gaps, pp.Damaged)
				}
				if tc.withIndex != pp.Complete() {
					t.Fatalf("complete %v (%s)", pp.Complete(), pp.CompletenessText())
				}
				var text bytes.Buffer
				if err := plan.WriteText(&text); err != nil {
					t.Fatal(err)
				}
				if want := pp.OrderText(); !strings.Contains(text.String(), want) || strings.Contains(text.String(), "order unknown") {
					t.Fatalf("plan text lacks %q:\n%s", want, text.String())
				}
				sum, err := r.Run(testContext(t), nil)
				if err != nil || sum.Records != n || len(sum.UnknownOrder) != 0 {
					t.Fatalf("%+v, %v", sum, err)
				}
				checkValues(t, "dst/0", readTopic(t, brokers, "dst")[0], layoutValues(0, n))
			})
		}
	}
}

// TestLayoutsSortAgainstKeys: the time-based archive's folders sort
// against time (day=01/month=01/year=2027 before day=31/month=12/year=2026)
// and the hourly one's late records make a 2026 folder hold offsets after
// 2027's: the plan's objects are in start-offset order, not key order.
func TestLayoutsSortAgainstKeys(t *testing.T) {
	for _, l := range testLayouts()[1:4] {
		a := newArchive(t, format.NewJSON())
		objs := sinkLike(l, "/", 16, 6)
		keys := a.writeSunk("src", 0, objs, true)
		cfg := indexedConfig(nil, a)
		cfg.DryRun = true
		plan, err := mustNew(t, cfg, a, nil).Plan(testContext(t))
		if err != nil {
			t.Fatal(err)
		}
		var got []string
		for _, o := range plan.Topics[0].Parts[0].Objects {
			got = append(got, o.Key)
		}
		if slices.IsSorted(keys) {
			t.Fatalf("%s: the test's keys sort like offsets: %q", l.name, keys)
		}
		sorted := slices.Clone(keys)
		slices.SortStableFunc(sorted, func(x, y string) int {
			return int(objs[slices.Index(keys, x)].offsets[0] - objs[slices.Index(keys, y)].offsets[0])
		})
		if !slices.Equal(got, sorted) {
			t.Fatalf("%s: plan order %q, want by start offset %q", l.name, got, sorted)
		}
	}
}

// TestLayoutsWithoutOffsets: archives without index and without envelopes
// (Confluent's connector) in several folders are in an unknown order:
// the plan says which partitions and why (objects of a field layout
// overlap: their records interleave), the run refuses before producing
// anything, and --allow-unknown-order restores every record (none
// dropped as a duplicate), object by object in start-offset order, saying
// so in the log and the summary. One folder (the default layout, a single
// hour) needs no flag.
func TestLayoutsWithoutOffsets(t *testing.T) {
	layouts := testLayouts()
	for _, tc := range []struct {
		l           layout
		order       string
		overlapping bool
		// inOrder: the objects sorted by start offset happen to hold
		// the records in offset order.
		inOrder bool
	}{
		{layouts[0], OrderOneFolder, false, true},
		{layout{"one hour", func(int64, string) string { return "year=2026/month=12/day=31/hour=23" }}, OrderOneFolder, false, true},
		{layout{"hourly, no late records", func(off int64, dd string) string { return fmt.Sprintf("year=%d/hour=%d", 2026+off/8, off/4) }}, OrderUnknown, false, true},
		{layouts[1], OrderUnknown, true, false},
		{layouts[4], OrderUnknown, true, false},
	} {
		t.Run(tc.l.name, func(t *testing.T) {
			const n = 16
			a := newArchive(t, format.NewJSON())
			objs := sinkLike(tc.l, "/", n, 8)
			a.writeSunk("src", 0, objs, false)
			brokers := newCluster(t, 1)
			cfg := indexedConfig(brokers, a)
			log := &logBuffer{}
			plan, err := mustNew(t, cfg, a, log).Plan(testContext(t))
			if err != nil {
				t.Fatal(err)
			}
			pp := plan.Topics[0].Parts[0]
			if pp.Order != tc.order || (pp.Overlapping > 0) != tc.overlapping || pp.Records != n || pp.Duplicates != 0 {
				t.Fatalf("order %q overlapping %d records %d duplicates %d", pp.Order, pp.Overlapping, pp.Records, pp.Duplicates)
			}
			var text bytes.Buffer
			plan.WriteText(&text)
			_, err = mustNew(t, cfg, a, log).Run(testContext(t), nil)
			if tc.order == OrderOneFolder {
				if err != nil || strings.Contains(text.String(), "order unknown") {
					t.Fatalf("one folder: %v\n%s", err, text.String())
				}
				checkValues(t, "dst/0", readTopic(t, brokers, "dst")[0], layoutValues(0, n))
				return
			}
			for _, want := range []string{fmt.Sprintf("UNKNOWN: %d folders", pp.Folders), "order unknown: src/0: objects in"} {
				if !strings.Contains(text.String(), want) {
					t.Fatalf("plan text lacks %q:\n%s", want, text.String())
				}
			}
			if tc.overlapping != strings.Contains(text.String(), "start inside the offsets of an object of another folder") ||
				tc.overlapping == strings.Contains(text.String(), "if the partition's offsets are consecutive") {
				t.Fatalf("plan text and overlap %v:\n%s", tc.overlapping, text.String())
			}
			if !errors.Is(err, ErrOrderUnknown) || !strings.Contains(err.Error(), "src/0") || !strings.Contains(err.Error(), "--allow-unknown-order") {
				t.Fatalf("err = %v, want ErrOrderUnknown naming src/0 and the flag", err)
			}
			if got := targetRecords(t, brokers, "dst"); got != -1 {
				t.Fatalf("refused run: target holds %d records (-1: absent)", got)
			}
			cfg.AllowUnknownOrder = true
			sum, err := mustNew(t, cfg, a, log).Run(testContext(t), nil)
			if err != nil || sum.Records != n || !slices.Equal(sum.UnknownOrder, []string{"src/0"}) ||
				!strings.Contains(sum.String(), "record order unknown: 1 partitions (src/0)") {
				t.Fatalf("allowed: %+v (%s), %v", sum, sum, err)
			}
			if !strings.Contains(log.String(), "restoring a partition whose record order is unknown") {
				t.Fatalf("no warning in the log:\n%s", log)
			}
			// Every record, object by object in start-offset order.
			var want []*format.Record
			sorted := slices.Clone(objs)
			slices.SortStableFunc(sorted, func(x, y sunkObject) int { return int(x.offsets[0] - y.offsets[0]) })
			for _, o := range sorted {
				for _, off := range o.offsets {
					want = append(want, &format.Record{Value: fmt.Appendf(nil, "v-%d", off)})
				}
			}
			got := readTopic(t, brokers, "dst")[0]
			checkValues(t, "dst/0", got, want)
			inOrder := true
			for i, o := range sorted[1:] {
				inOrder = inOrder && o.offsets[0] > slices.Max(sorted[i].offsets)
			}
			if inOrder != tc.inOrder {
				t.Fatalf("the objects hold the records in order: %v, want %v", inOrder, tc.inOrder)
			}
		})
	}
}

// byCommit returns the objects of objs written by the commits reaching
// from (exclusive) .. to (inclusive).
func byCommit(objs []sunkObject, from, to int64) []sunkObject {
	var out []sunkObject
	for _, o := range objs {
		if o.commit > from && o.commit <= to {
			out = append(out, o)
		}
	}
	return out
}

// followUntil runs r in follow mode until ctx ends; the returned func
// cancels it and returns the run's summary and error.
func followUntil(t *testing.T, r *Restorer) func() (Summary, error) {
	t.Helper()
	ctx, cancel := context.WithCancel(testContext(t))
	done := make(chan struct{})
	var sum Summary
	var err error
	go func() {
		defer close(done)
		sum, err = r.Run(ctx, nil)
	}()
	return func() (Summary, error) {
		cancel()
		<-done
		if errors.Is(err, context.Canceled) {
			err = nil
		}
		return sum, err
	}
}

// waitRecords waits until topic/0 holds n records, or fails.
func waitRecords(t *testing.T, brokers []string, topic string, n int) {
	t.Helper()
	for deadline := time.Now().Add(20 * time.Second); ; time.Sleep(20 * time.Millisecond) {
		got := targetRecords(t, brokers, topic) // -1 before the topic exists
		if got >= int64(n) {
			return
		}
		if time.Now().After(deadline) {
			t.Fatalf("%s/0 holds %d records, want %d", topic, got, n)
		}
	}
}

// TestFollowNewPeriodsAndFolders: --follow over hourly, daily, time-based
// and field archives (with the archive index) picks up what later commits
// add: new hours and days across the new year, late records back in
// 2026's folders, new field values, and restores it in offset order.
func TestFollowNewPeriodsAndFolders(t *testing.T) {
	newValues := layout{"field, new values", func(off int64, dd string) string {
		if off < 6 {
			return []string{"region=eu", "region=us"}[off%2]
		}
		return []string{"region=eu", "region=us", "region=ap"}[off%3]
	}}
	for _, l := range append(testLayouts()[1:4], newValues) {
		t.Run(l.name, func(t *testing.T) {
			const n = 18
			a := newArchive(t, format.NewJSON())
			objs := sinkLike(l, "/", n, 6)
			a.writeSunk("src", 0, byCommit(objs, 0, 6), true)
			brokers := newCluster(t, 1)
			cfg := indexedConfig(brokers, a)
			cfg.Follow, cfg.PollInterval = true, 20*time.Millisecond
			stop := followUntil(t, mustNew(t, cfg, a, nil))
			waitRecords(t, brokers, "dst", 6)
			before := map[string]bool{}
			for _, o := range byCommit(objs, 0, 6) {
				before[o.folder] = true
			}
			newFolders := 0
			for _, o := range byCommit(objs, 6, n) {
				if !before[o.folder] {
					newFolders++
				}
			}
			if newFolders == 0 {
				t.Fatal("the later commits add no folder")
			}
			a.writeSunk("src", 0, byCommit(objs, 6, 12), true)
			waitRecords(t, brokers, "dst", 12)
			a.writeSunk("src", 0, byCommit(objs, 12, n), true)
			waitRecords(t, brokers, "dst", n)
			time.Sleep(100 * time.Millisecond) // more passes: nothing may be duplicated
			sum, err := stop()
			if err != nil || sum.Records != n {
				t.Fatalf("%+v, %v", sum, err)
			}
			checkValues(t, "dst/0", readTopic(t, brokers, "dst")[0], layoutValues(0, n))
		})
	}
}

// TestFollowWaitsForCommitsUnderWay: a field archive with the index; of
// the next rotation only one folder's object is uploaded and no index
// entry is written yet (the sink is between uploads). Follow passes leave
// it for later (restoring it would put offsets 6, 9 before 7, 8 of the
// object not uploaded yet), then restore the whole rotation in offset
// order once its entries are there.
func TestFollowWaitsForCommitsUnderWay(t *testing.T) {
	const n = 12
	a := newArchive(t, format.NewJSON())
	objs := sinkLike(testLayouts()[4], "/", n, 6)
	a.writeSunk("src", 0, byCommit(objs, 0, 6), true)
	brokers := newCluster(t, 1)
	cfg := indexedConfig(brokers, a)
	cfg.Follow, cfg.PollInterval = true, 20*time.Millisecond
	log := &logBuffer{}
	stop := followUntil(t, mustNew(t, cfg, a, log))
	waitRecords(t, brokers, "dst", 6)
	next := byCommit(objs, 6, n)
	a.writeSunk("src", 0, next[:1], false)
	time.Sleep(200 * time.Millisecond) // several passes
	if got := len(readTopic(t, brokers, "dst")[0]); got != 6 {
		t.Fatalf("a pass restored %d records of a rotation under way", got-6)
	}
	if !strings.Contains(log.String(), "left for the next pass") {
		t.Fatalf("log:\n%s", log)
	}
	a.writeSunk("src", 0, next, true)
	waitRecords(t, brokers, "dst", n)
	sum, err := stop()
	if err != nil || sum.Records != n {
		t.Fatalf("%+v, %v", sum, err)
	}
	checkValues(t, "dst/0", readTopic(t, brokers, "dst")[0], layoutValues(0, n))
}

// hidingStore hides one key from listings, as an object uploaded while
// the archive is listed is missed.
type hidingStore struct {
	s3store.Store
	hide string
}

func (h hidingStore) List(ctx context.Context, prefix string, fn func(s3store.ObjectInfo) error) error {
	return h.Store.List(ctx, prefix, func(info s3store.ObjectInfo) error {
		if info.Key == h.hide {
			return nil
		}
		return fn(info)
	})
}

// TestPlanTakesIndexedObjectsTheListingMissed: an object the listing did
// not show but the archive index names (uploaded while the archive was
// listed; the index is read after) is looked up and restored, not taken
// for a missing object.
func TestPlanTakesIndexedObjectsTheListingMissed(t *testing.T) {
	a := newArchive(t, format.NewJSON())
	keys := a.writeSunk("src", 0, sinkLike(testLayouts()[4], "/", 12, 6), true)
	brokers := newCluster(t, 1)
	r, err := New(indexedConfig(brokers, a), hidingStore{a.store, keys[4]}, nil)
	if err != nil {
		t.Fatal(err)
	}
	plan, err := r.Plan(testContext(t))
	if err != nil {
		t.Fatal(err)
	}
	if pp := plan.Topics[0].Parts[0]; !pp.Complete() || pp.Records != 12 || len(pp.Objects) != len(keys) {
		t.Fatalf("complete %v records %d objects %d damaged %v", pp.Complete(), pp.Records, len(pp.Objects), pp.Damaged)
	}
	if _, err := r.Run(testContext(t), nil); err != nil {
		t.Fatal(err)
	}
	checkValues(t, "dst/0", readTopic(t, brokers, "dst")[0], layoutValues(0, 12))
}

// TestInterleavedObjectsShareTheSpillBudget: objects whose offsets
// interleave stay loaded together while their partition is produced; they
// share Config.SpillBytes (each gets its part), so memory does not grow
// with the number of folders.
func TestInterleavedObjectsShareTheSpillBudget(t *testing.T) {
	for _, tc := range []struct {
		segs []segment
		n    int
		want int
	}{
		{nil, 0, 1},
		{[]segment{{obj: 0}, {obj: 1}, {obj: 2}}, 3, 1},
		{[]segment{{obj: 0}, {obj: 1}, {obj: 2}, {obj: 0}, {obj: 1}, {obj: 2}}, 3, 3},
		{[]segment{{obj: 0}, {obj: 1}, {obj: 0}, {obj: 2}, {obj: 3}, {obj: 2}}, 4, 2},
	} {
		if got := maxLoaded(tc.segs, tc.n); got != tc.want {
			t.Errorf("maxLoaded(%v) = %d, want %d", tc.segs, got, tc.want)
		}
	}
	a := newArchive(t, format.NewJSON())
	a.writeSunk("src", 0, sinkLike(testLayouts()[4], "/", 12, 12), true) // three folders, interleaved
	cfg := indexedConfig(nil, a)
	cfg.DryRun, cfg.SpillBytes = true, 3000
	r := mustNew(t, cfg, a, nil)
	plan, err := r.Plan(testContext(t))
	if err != nil {
		t.Fatal(err)
	}
	s := r.newStream(testContext(t), nil, job{topic: &plan.Topics[0], part: plan.Topics[0].Parts[0]}, nopProgress{})
	if s.spill != 1000 {
		t.Fatalf("each of 3 interleaved objects may keep %d bytes, want 1000", s.spill)
	}
}

// TestResumeInterleavedFolders: a field archive (three folders whose
// objects interleave, with the index) restored by runs cancelled in the
// middle of an object, while the objects of a rotation are loaded
// together: after each run the target holds a prefix of the offset-ordered
// stream, and the last run completes it, each offset once, in order.
func TestResumeInterleavedFolders(t *testing.T) {
	const n = 3000
	brokers := newCluster(t, 1, "dst")
	a := newArchive(t, format.NewJSON())
	objs := sinkLike(testLayouts()[4], "/", n, 600)
	a.writeSunk("src", 0, objs, true)
	planOpens := int64(len(objs) + n/600) // every object, and one index object per commit
	cfg := indexedConfig(brokers, a)
	cfg.CreateTopics = false
	cfg.KafkaOpts = []kgo.Opt{kgo.ProducerLinger(0), kgo.MaxBufferedRecords(100)}
	want := map[int32][]*format.Record{0: layoutValues(0, n)}
	// Cancelled at the opens of the third and sixth objects produced: the
	// stream loads one object ahead (prefetch.go), so when the third is
	// opened the first has been handed to the producer, and the run stops
	// in the middle of the interleaved objects.
	held := cancelRuns(t, cfg, a, brokers, want, planOpens+3, planOpens+6)
	sum, err := mustNew(t, cfg, a, nil).Run(testContext(t), nil)
	if err != nil || sum.AlreadyPresent != int64(held) || sum.Records != int64(n-held) {
		t.Fatalf("final run %+v after %d held: %v", sum, held, err)
	}
	checkValues(t, "dst/0", readTopic(t, brokers, "dst")[0], want[0])
}

// TestRotationUnderWayWithoutFollow: without --follow, a field archive
// whose next rotation is half uploaded (one object, no index entry yet)
// is in an unknown order; the plan says why (an object after the index's
// last commit: a sink commit under way) and the run refuses before
// producing anything.
func TestRotationUnderWayWithoutFollow(t *testing.T) {
	a := newArchive(t, format.NewJSON())
	objs := sinkLike(testLayouts()[4], "/", 12, 6)
	a.writeSunk("src", 0, byCommit(objs, 0, 6), true)
	a.writeSunk("src", 0, byCommit(objs, 6, 12)[:1], false)
	brokers := newCluster(t, 1)
	r := mustNew(t, indexedConfig(brokers, a), a, nil)
	plan, err := r.Plan(testContext(t))
	if err != nil {
		t.Fatal(err)
	}
	pp := plan.Topics[0].Parts[0]
	if pp.Order != OrderUnknown || pp.Basis != BasisMixed || !strings.Contains(pp.orderReason(), "1 objects without an index entry start after the archive index's last commit") {
		t.Fatalf("order %q basis %q: %s", pp.Order, pp.Basis, pp.orderReason())
	}
	if _, err := r.Run(testContext(t), nil); !errors.Is(err, ErrOrderUnknown) || !strings.Contains(err.Error(), "a sink commit under way") {
		t.Fatalf("err = %v", err)
	}
	if n := targetRecords(t, brokers, "dst"); n != -1 {
		t.Fatalf("target holds %d records", n)
	}
}

// TestFollowStopsWhenTheStreamChanges: --follow with
// --allow-unknown-order over a field archive without index: a pass
// restores the objects it lists (eu+0 holding 0 and 2, ap+4 holding 4)
// while us+1 (1 and 3) is not uploaded yet. When it appears, it belongs
// before records already produced: the run stops with ErrStreamChanged
// and produces nothing more (resuming by count would skip 1 and repeat 4).
func TestFollowStopsWhenTheStreamChanges(t *testing.T) {
	a := newArchive(t, format.NewJSON())
	put := func(folder string, offs ...int64) {
		var recs []*format.Record
		for _, o := range offs {
			recs = append(recs, layoutRecord(0, o))
		}
		a.putIn("src", 0, folder, recs)
	}
	put("region=eu", 0, 2)
	put("region=ap", 4)
	brokers := newCluster(t, 1)
	cfg := indexedConfig(brokers, a)
	cfg.Follow, cfg.PollInterval, cfg.AllowUnknownOrder = true, 20*time.Millisecond, true
	ctx, cancel := context.WithCancel(testContext(t))
	defer cancel()
	done := make(chan error, 1)
	go func() {
		_, err := mustNew(t, cfg, a, nil).Run(ctx, nil)
		done <- err
	}()
	waitRecords(t, brokers, "dst", 3)
	put("region=us", 1, 3)
	select {
	case err := <-done:
		if !errors.Is(err, ErrStreamChanged) || !strings.Contains(err.Error(), "region=ap") {
			t.Fatalf("err = %v, want ErrStreamChanged naming the ap object", err)
		}
	case <-time.After(20 * time.Second):
		t.Fatal("follow did not stop")
	}
	var want []*format.Record
	for _, off := range []int64{0, 2, 4} {
		want = append(want, &format.Record{Value: fmt.Appendf(nil, "v-%d", off)})
	}
	checkValues(t, "dst/0", readTopic(t, brokers, "dst")[0], want)
}

// TestUntilAcrossInterleavedFolders: --until on a field archive with the
// index, whose folders interleave: the snapshot's end offset cuts the
// offset-ordered stream, so exactly the records below it are restored, in
// order, whichever folders hold them.
func TestUntilAcrossInterleavedFolders(t *testing.T) {
	const n = 12
	a := newArchive(t, format.NewJSON())
	a.writeSunk("src", 0, sinkLike(testLayouts()[4], "/", n, 6), true)
	a.putSnapshot("src", 2000, map[int32]int64{0: 8})
	brokers := newCluster(t, 1)
	cfg := indexedConfig(brokers, a)
	cfg.Until = time.UnixMilli(2500)
	sum, err := mustNew(t, cfg, a, nil).Run(testContext(t), nil)
	if err != nil || sum.Records != 8 || sum.PastCut != n-8 {
		t.Fatalf("%s, %v", sum, err)
	}
	checkValues(t, "dst/0", readTopic(t, brokers, "dst")[0], layoutValues(0, 8))
}

// TestRestoreGroupsRefusesUnknownOrder: --restore-groups with
// --allow-unknown-order over a partition whose order is unknown (an
// indexed field archive with a rotation half uploaded): a group offset
// cannot be placed exactly in a stream of whole objects at assumed
// offsets, so the run refuses before producing anything.
func TestRestoreGroupsRefusesUnknownOrder(t *testing.T) {
	a := newArchive(t, format.NewJSON())
	objs := sinkLike(testLayouts()[4], "/", 12, 6)
	a.writeSunk("src", 0, byCommit(objs, 0, 6), true)
	a.writeSunk("src", 0, byCommit(objs, 6, 12)[:1], false)
	a.putSnapshot("src", 2000, map[int32]int64{0: 6})
	brokers := newCluster(t, 1, "dst")
	cfg := groupsConfig(brokers, a)
	cfg.AllowUnknownOrder = true
	_, err := mustNew(t, cfg, a, nil).Run(testContext(t), nil)
	if !errors.Is(err, ErrOrderUnknown) || !strings.Contains(err.Error(), "--restore-groups cannot translate") {
		t.Fatalf("err = %v", err)
	}
	if n := len(readTopic(t, brokers, "dst")[0]); n != 0 {
		t.Fatalf("%d records produced", n)
	}
}
