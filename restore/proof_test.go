package restore

import (
	"bytes"
	"context"
	"encoding/binary"
	"errors"
	"fmt"
	"io"
	"os"
	"strings"
	"testing"
	"time"

	"github.com/kafkas3/kafkas3/format"
	"github.com/twmb/franz-go/pkg/kadm"
	"github.com/twmb/franz-go/pkg/kgo"
)

// offsetValues makes records whose values name their source offset:
// "<prefix>-<offset>" for offsets from..from+n-1.
func offsetValues(prefix string, from, n int) []*format.Record { return values(prefix, from, n) }

// putAt writes an object of topic/p at start holding the records of
// offsets start..start+n-1 ("v-<offset>").
func (a *archive) putAt(topic string, p int32, start, n int) string {
	return a.put(topic, p, int64(start), offsetValues("v", start, n))
}

// damage rewrites the stored object key with fn applied to its bytes.
func (a *archive) damage(key string, fn func([]byte) []byte) {
	a.t.Helper()
	rc, err := a.store.Open(context.Background(), key)
	if err != nil {
		a.t.Fatal(err)
	}
	b, err := io.ReadAll(rc)
	rc.Close()
	if err != nil {
		a.t.Fatal(err)
	}
	a.putRaw(key, func(w io.Writer) { w.Write(fn(bytes.Clone(b))) })
}

func truncate(b []byte) []byte { return b[:len(b)*2/3] }

// flip flips one bit of the byte in the middle.
func flip(b []byte) []byte {
	b[len(b)/2] ^= 0x10
	return b
}

// targetRecords counts what topic holds; -1 when it does not exist.
func targetRecords(t *testing.T, brokers []string, topic string) int64 {
	t.Helper()
	adm := newAdmin(t, brokers)
	td, err := adm.ListTopics(testContext(t), topic)
	if err != nil {
		t.Fatal(err)
	}
	if d, ok := td[topic]; !ok || d.Err != nil {
		return -1
	}
	ends, err := adm.ListEndOffsets(testContext(t), topic)
	if err != nil {
		t.Fatal(err)
	}
	var n int64
	ends.Each(func(o kadm.ListedOffset) { n += o.Offset })
	return n
}

// checkOffsets asserts that recs hold the values v-<offset> of offsets, in order.
func checkOffsets(t *testing.T, what string, recs []*kgo.Record, offsets ...[2]int) {
	t.Helper()
	var want []*format.Record
	for _, r := range offsets {
		want = append(want, offsetValues("v", r[0], r[1]-r[0]+1)...)
	}
	checkValues(t, what, recs, want)
}

// TestRestoreOverlappingObjectsOnce restores an archive written by two sink
// runs with different flush sizes into one bucket (objects 0-2, 3-5, 6-8
// and 0-4, 5-9; the second run's object at 0 replaced the first's): each
// source offset is restored once, in offset order, the duplicates are
// counted, and a second run produces nothing.
func TestRestoreOverlappingObjectsOnce(t *testing.T) {
	brokers := newCluster(t, 2)
	a := newArchive(t, format.NewJSON())
	for p := range int32(2) {
		a.putAt("src", p, 0, 3)
		a.putAt("src", p, 3, 3)
		a.putAt("src", p, 6, 3)
		a.putAt("src", p, 0, 5) // replaces 0..2
		a.putAt("src", p, 5, 5)
	}
	cfg := baseConfig(brokers, a.f, "src")
	cfg.Rename, cfg.CreateTopics = "dst", true
	r := mustNew(t, cfg, a, nil)
	plan, err := r.Plan(testContext(t))
	if err != nil {
		t.Fatal(err)
	}
	for _, pp := range plan.Topics[0].Parts {
		if pp.Records != 10 || pp.Duplicates != 6 || len(pp.Gaps) != 0 || pp.FirstOffset != 0 || pp.LastOffset != 9 || pp.Basis != BasisNames {
			t.Fatalf("partition %d plan: records %d duplicates %d gaps %v offsets %d..%d basis %q",
				pp.Partition, pp.Records, pp.Duplicates, pp.Gaps, pp.FirstOffset, pp.LastOffset, pp.Basis)
		}
	}
	var text bytes.Buffer
	if err := plan.WriteText(&text); err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{"records: 20 to restore, 12 duplicates, 0 gaps, 0 damaged objects",
		"src/0      4        10       0..9     6           0     one folder  unknown: names and record counts (no index; consecutive offsets assumed)"} {
		if !strings.Contains(text.String(), want) {
			t.Fatalf("plan text lacks %q:\n%s", want, text.String())
		}
	}
	sum, err := r.Run(testContext(t), nil)
	if err != nil {
		t.Fatal(err)
	}
	if sum.Records != 20 || sum.Duplicates != 12 || sum.Skipped() {
		t.Fatalf("summary %+v", sum)
	}
	got := readTopic(t, brokers, "dst")
	for p := range int32(2) {
		checkOffsets(t, fmt.Sprintf("dst/%d", p), got[p], [2]int{0, 9})
	}
	sum, err = mustNew(t, cfg, a, nil).Run(testContext(t), nil)
	if err != nil || sum.Records != 0 || sum.AlreadyPresent != 20 {
		t.Fatalf("second run: %+v, %v", sum, err)
	}
}

// TestRestoreGapsStopBeforeProducing: a missing object (offsets 6..8) is
// shown by the plan and stops the run before the target is even created;
// with AllowGaps the rest is restored and the gap reported.
func TestRestoreGapsStopBeforeProducing(t *testing.T) {
	brokers := newCluster(t, 2)
	a := newArchive(t, format.NewJSON())
	a.putAt("src", 0, 0, 3)
	a.putAt("src", 0, 3, 3)
	a.putAt("src", 0, 9, 3) // 6..8 missing
	a.putAt("src", 1, 0, 4)
	cfg := baseConfig(brokers, a.f, "src")
	cfg.Rename, cfg.CreateTopics = "dst", true

	plan, err := mustNew(t, cfg, a, nil).Plan(testContext(t))
	if err != nil {
		t.Fatal(err)
	}
	var text bytes.Buffer
	plan.WriteText(&text)
	for _, want := range []string{"gap: src/0 offsets 6..8 (no object holds them)", "NO: gaps or damaged objects (listed below)", "1 gaps"} {
		if !strings.Contains(text.String(), want) {
			t.Fatalf("plan text lacks %q:\n%s", want, text.String())
		}
	}
	sum, err := mustNew(t, cfg, a, nil).Run(testContext(t), nil)
	if !errors.Is(err, ErrGaps) || !strings.Contains(err.Error(), "src/0 offsets 6..8") || !strings.Contains(err.Error(), "--allow-gaps") {
		t.Fatalf("err = %v", err)
	}
	if n := targetRecords(t, brokers, "dst"); n != -1 || sum.Records != 0 {
		t.Fatalf("a run stopped by a gap left the target with %d records (-1: absent), produced %d", n, sum.Records)
	}

	cfg.AllowGaps = true
	log := &logBuffer{}
	sum, err = mustNew(t, cfg, a, log).Run(testContext(t), nil)
	if err != nil {
		t.Fatal(err)
	}
	if sum.Records != 13 || len(sum.Gaps) != 1 || sum.Gaps[0].Gap != (Gap{First: 6, Last: 8}) || sum.GapOffsets != 3 || !sum.Skipped() {
		t.Fatalf("summary %+v", sum)
	}
	if !strings.Contains(log.String(), "gap: these archived offsets are not restored") || !strings.Contains(log.String(), "first_offset=6 last_offset=8") {
		t.Fatalf("no gap in the log:\n%s", log)
	}
	got := readTopic(t, brokers, "dst")
	checkOffsets(t, "dst/0", got[0], [2]int{0, 5}, [2]int{9, 11})
	checkOffsets(t, "dst/1", got[1], [2]int{0, 3})
}

func avroFormat(t *testing.T) format.Format {
	f, err := format.NewAvro(format.AvroConfig{})
	if err != nil {
		t.Fatal(err)
	}
	return f
}

func parquetFormat(t *testing.T) format.Format {
	f, err := format.NewParquet(format.ParquetConfig{Codec: "snappy"})
	if err != nil {
		t.Fatal(err)
	}
	return f
}

// TestRestoreDamagedObjectsProduceNothing: a truncated .json.gz, .json.zst,
// .avro or .parquet object, or a .json.gz or .json.zst with one flipped
// bit, stops the restore
// under behavior.on.error=fail before anything is produced, naming the
// object; the plan shows it.
func TestRestoreDamagedObjectsProduceNothing(t *testing.T) {
	typed := func(t *testing.T, start int) []*format.Record {
		recs, _ := typedRecords(t, start, 5)
		return recs
	}
	for _, tc := range []struct {
		name   string
		f      func(t *testing.T) format.Format
		damage func([]byte) []byte
	}{
		{"truncated json.gz", gzipJSON, truncate},
		{"flipped json.gz", gzipJSON, flip},
		{"truncated json.zst", zstdJSON, truncate},
		{"flipped json.zst", zstdJSON, flip},
		{"truncated avro", avroFormat, truncate},
		{"truncated parquet", parquetFormat, truncate},
		{"parquet without its last byte", parquetFormat, func(b []byte) []byte { return b[:len(b)-1] }},
	} {
		t.Run(tc.name, func(t *testing.T) {
			brokers := newCluster(t, 1)
			f := tc.f(t)
			a := newArchive(t, f)
			var keys []string
			for _, start := range []int{0, 5, 10} {
				recs := offsetValues("v", start, 5)
				if !strings.HasPrefix(f.Extension(), ".json") {
					recs = typed(t, start)
				}
				keys = append(keys, a.put("src", 0, int64(start), recs))
			}
			a.damage(keys[1], tc.damage)
			cfg := baseConfig(brokers, f, "src")
			cfg.Rename, cfg.CreateTopics = "dst", true
			_, enc := startRegistry(t)
			cfg.ValueEncoder = enc
			r := mustNew(t, cfg, a, nil)
			plan, err := r.Plan(testContext(t))
			if err != nil {
				t.Fatal(err)
			}
			pp := plan.Topics[0].Parts[0]
			if len(pp.Damaged) != 1 || pp.Damaged[0].Key != keys[1] || !errors.Is(pp.Damaged[0].Err, ErrDamagedObject) {
				t.Fatalf("damaged = %+v", pp.Damaged)
			}
			var text bytes.Buffer
			plan.WriteText(&text)
			if !strings.Contains(text.String(), "damaged: src/0 object \""+keys[1]+"\"") ||
				!strings.Contains(text.String(), fmt.Sprintf("gap: src/0 offsets 5..9 (object %q, damaged or missing)", keys[1])) {
				t.Fatalf("plan text:\n%s", text.String())
			}
			_, err = r.Run(testContext(t), nil)
			if !errors.Is(err, ErrDamagedObject) || !strings.Contains(err.Error(), keys[1]) || !strings.Contains(err.Error(), "nothing was produced") {
				t.Fatalf("err = %v", err)
			}
			if n := targetRecords(t, brokers, "dst"); n != -1 {
				t.Fatalf("target holds %d records (-1: absent)", n)
			}
		})
	}
}

// TestRestoreDamagedObjectSkipped: behavior.on.error ignore and log, and
// AllowGaps, skip a damaged object as a whole (none of its records), and
// report the gap it leaves (log, summary); a damaged last object leaves a
// gap whose end is unknown.
func TestRestoreDamagedObjectSkipped(t *testing.T) {
	for _, tc := range []struct {
		name      string
		onError   OnError
		allowGaps bool
		damaged   int // which object of 0-4, 5-9, 10-14
		gap       Gap
		restored  [][2]int
	}{
		{"ignore", OnErrorIgnore, false, 1, Gap{First: 5, Last: 9}, [][2]int{{0, 4}, {10, 14}}},
		{"log", OnErrorLog, false, 1, Gap{First: 5, Last: 9}, [][2]int{{0, 4}, {10, 14}}},
		{"fail with allow gaps", OnErrorFail, true, 1, Gap{First: 5, Last: 9}, [][2]int{{0, 4}, {10, 14}}},
		{"last object", OnErrorLog, false, 2, Gap{First: 10, Last: -1}, [][2]int{{0, 9}}},
		{"first object", OnErrorLog, false, 0, Gap{First: 0, Last: 4}, [][2]int{{5, 14}}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			brokers := newCluster(t, 1)
			a := newArchive(t, gzipJSON(t))
			var keys []string
			for _, start := range []int{0, 5, 10} {
				keys = append(keys, a.putAt("src", 0, start, 5))
			}
			a.damage(keys[tc.damaged], truncate)
			tc.gap.Object = keys[tc.damaged]
			cfg := baseConfig(brokers, a.f, "src")
			cfg.Rename, cfg.CreateTopics, cfg.OnError, cfg.AllowGaps = "dst", true, tc.onError, tc.allowGaps
			log := &logBuffer{}
			sum, err := mustNew(t, cfg, a, log).Run(testContext(t), nil)
			if err != nil {
				t.Fatal(err)
			}
			if sum.ObjectsSkipped != 1 || len(sum.Gaps) != 1 || sum.Gaps[0].Gap != tc.gap {
				t.Fatalf("summary: skipped %d gaps %+v, want gap %+v", sum.ObjectsSkipped, sum.Gaps, tc.gap)
			}
			for _, want := range []string{"skipping a damaged object", keys[tc.damaged], "gap: these archived offsets are not restored"} {
				if !strings.Contains(log.String(), want) {
					t.Fatalf("log lacks %q:\n%s", want, log)
				}
			}
			checkOffsets(t, "dst/0", readTopic(t, brokers, "dst")[0], tc.restored...)
		})
	}
}

// TestRestoreBytesSeparatorNeverMispaired: a bytes value holding the
// separator reads as two records, so its .keys object has one record
// fewer: detected before anything is produced, naming both objects.
func TestRestoreBytesSeparatorNeverMispaired(t *testing.T) {
	bf, err := format.NewBytes(format.BytesConfig{Separator: []byte("\n"), Extension: ".bin"})
	if err != nil {
		t.Fatal(err)
	}
	brokers := newCluster(t, 1)
	a := newArchive(t, bf)
	a.putAt("src", 0, 0, 3) // a good object first: nothing of it may land either
	vals := []*format.Record{{Value: []byte("a")}, {Value: []byte("b\nc")}}
	vkey := a.put("src", 0, 3, vals)
	keysKey := strings.TrimSuffix(vkey, ".bin") + ".keys.json"
	a.putRaw(keysKey, func(w io.Writer) { io.WriteString(w, "\"k1\"\n\"k2\"\n") })
	cfg := baseConfig(brokers, bf, "src")
	cfg.Rename, cfg.CreateTopics = "dst", true
	_, err = mustNew(t, cfg, a, nil).Run(testContext(t), nil)
	if !errors.Is(err, ErrParallelMismatch) || !errors.Is(err, ErrDamagedObject) || !strings.Contains(err.Error(), vkey) ||
		!strings.Contains(err.Error(), keysKey) || !strings.Contains(err.Error(), "format.bytearray.separator") {
		t.Fatalf("err = %v", err)
	}
	if n := targetRecords(t, brokers, "dst"); n != -1 {
		t.Fatalf("target holds %d records (-1: absent)", n)
	}
}

// TestRestoreSpillsToDisk restores objects far larger than SpillBytes:
// every field of every record (nil and empty keys, values and header
// values, duplicate headers, timestamps) comes back through the temporary
// file, in order.
func TestRestoreSpillsToDisk(t *testing.T) {
	brokers := newCluster(t, 1, "dst")
	a := newArchive(t, fullFormat{})
	var want []*format.Record
	for obj := range 3 {
		var recs []*format.Record
		for i := range 200 {
			n := obj*200 + i
			rec := &format.Record{Value: bytes.Repeat([]byte{byte(n)}, n%50), Timestamp: timeAt(n)}
			switch n % 4 {
			case 0:
				rec.Key = nil
			case 1:
				rec.Key = []byte{}
				rec.Value = nil
			default:
				rec.Key = fmt.Appendf(nil, "k%d", n)
			}
			if n%3 == 0 {
				rec.Headers = []format.Header{{Key: "h", Value: nil}, {Key: "h", Value: []byte{}}, {Key: "x", Value: []byte("y")}}
			}
			recs = append(recs, rec)
		}
		a.put("src", 0, int64(obj*200), recs)
		want = append(want, recs...)
	}
	cfg := baseConfig(brokers, a.f, "src")
	cfg.Rename, cfg.SpillBytes, cfg.TempDir = "dst", 2048, t.TempDir()
	if _, err := mustNew(t, cfg, a, nil).Run(testContext(t), nil); err != nil {
		t.Fatal(err)
	}
	got := readTopic(t, brokers, "dst")[0]
	if len(got) != len(want) {
		t.Fatalf("%d records, want %d", len(got), len(want))
	}
	for i, w := range want {
		if !sameRecord(got[i], w) || !got[i].Timestamp.Equal(w.Timestamp) {
			t.Fatalf("record %d: got key %q value %q headers %v ts %v, want %q %q %v %v", i,
				got[i].Key, got[i].Value, got[i].Headers, got[i].Timestamp, w.Key, w.Value, w.Headers, w.Timestamp)
		}
	}
}

// TestRecordBufferSpillsAndReplays checks the buffer itself: past its limit
// records go to an unlinked file, and all come back in order, equal.
func TestRecordBufferSpillsAndReplays(t *testing.T) {
	dir := t.TempDir()
	b := newRecordBuffer(300, dir, nil)
	defer b.close()
	var want []*format.Record
	for i := range 50 {
		rec := &format.Record{Offset: int64(1000 + i), Key: fmt.Appendf(nil, "k%d", i), Value: bytes.Repeat([]byte("v"), i),
			Timestamp: timeAt(i), TimestampType: format.TimestampType(i % 2)}
		if i%5 == 0 {
			rec.Value = nil
			rec.Headers = []format.Header{{Key: "a"}, {Key: "a", Value: []byte{}}}
		}
		want = append(want, rec)
		if err := b.add(rec); err != nil {
			t.Fatal(err)
		}
	}
	if !b.Spilled() || b.Len() != 50 {
		t.Fatalf("spilled %v, len %d", b.Spilled(), b.Len())
	}
	if entries, _ := os.ReadDir(dir); len(entries) != 0 {
		t.Fatalf("the spill file is visible in %s: %v", dir, entries)
	}
	if err := b.rewind(); err != nil {
		t.Fatal(err)
	}
	for i, w := range want {
		got, err := b.get()
		if err != nil {
			t.Fatal(err)
		}
		if got.Offset != w.Offset || !bytes.Equal(got.Key, w.Key) || !bytes.Equal(got.Value, w.Value) || (got.Value == nil) != (w.Value == nil) ||
			!got.Timestamp.Equal(w.Timestamp) || got.TimestampType != w.TimestampType || len(got.Headers) != len(w.Headers) {
			t.Fatalf("record %d: %+v, want %+v", i, got, w)
		}
		for j, h := range w.Headers {
			if got.Headers[j].Key != h.Key || (got.Headers[j].Value == nil) != (h.Value == nil) {
				t.Fatalf("record %d header %d: %+v, want %+v", i, j, got.Headers[j], h)
			}
		}
	}
	if _, err := b.get(); !errors.Is(err, io.EOF) {
		t.Fatalf("after the last record: %v", err)
	}
}

// FuzzSpillRecord: decoding arbitrary bytes never panics, and a record
// that decodes encodes and decodes again to the same record.
func FuzzSpillRecord(f *testing.F) {
	enc := func(rec *format.Record) []byte {
		b := appendSpillRecord(nil, rec)
		_, n := binary.Uvarint(b)
		return b[n:]
	}
	f.Add(enc(&format.Record{Offset: 7, Key: []byte("k"), Headers: []format.Header{{Key: "h"}}}))
	f.Add(enc(&format.Record{Offset: -1, Value: []byte{}, Timestamp: timeAt(3), TimestampType: 1}))
	f.Add([]byte{})
	f.Fuzz(func(t *testing.T, b []byte) {
		rec, err := decodeSpillRecord(b)
		if err != nil {
			return
		}
		rec2, err := decodeSpillRecord(enc(rec))
		if err != nil || rec2.Offset != rec.Offset || !bytes.Equal(rec2.Key, rec.Key) || (rec2.Key == nil) != (rec.Key == nil) ||
			!bytes.Equal(rec2.Value, rec.Value) || (rec2.Value == nil) != (rec.Value == nil) ||
			len(rec2.Headers) != len(rec.Headers) || !rec2.Timestamp.Equal(rec.Timestamp) || rec2.TimestampType != rec.TimestampType {
			t.Fatalf("re-encoded record differs: %+v vs %+v (%v)", rec2, rec, err)
		}
	})
}

// timeAt is a millisecond timestamp for record i.
func timeAt(i int) time.Time { return time.UnixMilli(1_700_000_000_000 + int64(i)) }

// TestResumeOverlappingArchive interrupts restores of an archive written
// twice with different flush sizes (objects of 500 and of 700 records,
// overlapping everywhere) and re-runs: after each interrupted run every
// target partition holds a prefix of the deduplicated stream, and the last
// run completes it with each offset once, in order.
func TestResumeOverlappingArchive(t *testing.T) {
	brokers := newCluster(t, 2, "dst")
	a := newArchive(t, format.NewJSON())
	const n = 5000
	want := map[int32][]*format.Record{}
	objects := 0
	for p := range int32(2) {
		for _, flush := range []int{500, 700} {
			for start := 0; start < n; start += flush {
				a.putAt("src", p, start, min(flush, n-start))
				if flush == 500 || start%500 != 0 {
					objects++ // a 700 object at a multiple of 500 replaces a 500 one
				}
			}
		}
		want[p] = offsetValues("v", 0, n)
	}
	cfg := baseConfig(brokers, a.f, "src")
	cfg.Rename = "dst"
	cfg.Parallelism = 1
	cfg.KafkaOpts = []kgo.Opt{kgo.ProducerLinger(0), kgo.MaxBufferedRecords(300)}
	held := cancelRuns(t, cfg, a, brokers, want, int64(objects)+4, int64(objects)+9)
	sum, err := mustNew(t, cfg, a, nil).Run(testContext(t), nil)
	if err != nil {
		t.Fatal(err)
	}
	if sum.AlreadyPresent != int64(held) || sum.Records != int64(2*n-held) {
		t.Fatalf("final run %+v after %d held", sum, held)
	}
	got := readTopic(t, brokers, "dst")
	for p := range int32(2) {
		checkValues(t, fmt.Sprintf("dst/%d", p), got[p], want[p])
	}
}

// cancelRuns runs the restore once per entry of opens, each cancelled at
// that store open, and requires the target to hold a longer prefix of want
// after each; it returns the records the target holds.
func cancelRuns(t *testing.T, cfg Config, a *archive, brokers []string, want map[int32][]*format.Record, opens ...int64) int {
	t.Helper()
	held := 0
	for _, at := range opens {
		ctx, cancel := context.WithCancel(testContext(t))
		r, err := New(cfg, &cancelStore{Store: a.store, n: at, cancel: cancel}, nil)
		if err != nil {
			t.Fatal(err)
		}
		_, err = r.Run(ctx, nil)
		cancel()
		if !errors.Is(err, context.Canceled) && !errors.Is(err, io.ErrUnexpectedEOF) {
			t.Fatalf("run cancelled at open %d: err = %v", at, err)
		}
		now := checkPrefix(t, brokers, "dst", want)
		if now <= held {
			t.Fatalf("cancelled at open %d: target holds %d records, before %d", at, now, held)
		}
		held = now
	}
	return held
}

// TestRestoreSpillsWithoutCopies: a JSON and a gzipped bytes archive whose
// objects (about 300 KB: several fills of a reader's buffer) are far
// larger than SpillBytes. The records a loaded object
// keeps in memory are copies of the reader's buffers; once its buffer has
// spilled, the reader hands out values in place (format.Transient), each
// encoded into the file before the next is read. Every value comes back
// whole and in order: none was overwritten by a later read.
func TestRestoreSpillsWithoutCopies(t *testing.T) {
	bytesGzip, err := format.New(format.Config{Kind: format.KindBytes, Bytes: format.DefaultBytesConfig(), Compression: format.CompressionGzip, CompressionLevel: -1})
	if err != nil {
		t.Fatal(err)
	}
	for _, f := range []format.Format{format.NewJSON(), bytesGzip} {
		t.Run(f.Extension(), func(t *testing.T) {
			brokers := newCluster(t, 1, "dst")
			a := newArchive(t, f)
			var want []*format.Record
			for obj := range 3 {
				var recs []*format.Record
				for i := range 3000 {
					n := obj*3000 + i
					recs = append(recs, &format.Record{Value: fmt.Appendf(nil, "value-%d-%s", n, bytes.Repeat([]byte{'a' + byte(n%26)}, n%97))})
				}
				a.put("src", 0, int64(obj*3000), recs)
				want = append(want, recs...)
			}
			cfg := baseConfig(brokers, a.f, "src")
			cfg.Rename, cfg.SpillBytes, cfg.TempDir = "dst", 64<<10, t.TempDir()
			if _, err := mustNew(t, cfg, a, nil).Run(testContext(t), nil); err != nil {
				t.Fatal(err)
			}
			checkValues(t, "dst/0", readTopic(t, brokers, "dst")[0], want)
		})
	}
}
