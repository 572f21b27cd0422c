package restore

import (
	"bytes"
	"errors"
	"fmt"
	"io"
	"strings"
	"testing"

	"github.com/kafkas3/kafkas3/format"
	"github.com/twmb/franz-go/pkg/kgo"
)

// tombArchive is partition 0 of topic "orders" as the sink writes it with
// store.kafka.keys (JSON) and behavior.on.null.values=write: value objects
// at 0 (records 0-1), 5 (5-8) and 10 (10-11), tombstone objects at 2 (2-4,
// with a .headers object) and 9 (9, without); the tombstone objects live
// in folder. It also holds an orphan .keys object in partition=0 (no value
// object). tombArchive returns, per offset, the key, whether it is a
// tombstone, and its headers.
type tombRec struct {
	key     string
	tomb    bool
	headers []format.Header
}

func tombArchive(t *testing.T, folder string) (*archive, []tombRec) {
	a := newArchive(t, format.NewJSON())
	var want []tombRec
	keysObj := func(dir string, start int64, n int) {
		a.putRaw(fmt.Sprintf("topics/orders/%s/orders+0+%010d.keys.json", dir, start), func(w io.Writer) {
			for i := range n {
				fmt.Fprintf(w, "\"k%d\"\n", start+int64(i))
			}
		})
	}
	value := func(start int64, n int) {
		a.put("orders", 0, start, values("v", int(start), n))
		keysObj("partition=0", start, n)
		for i := range n {
			want = append(want, tombRec{key: fmt.Sprint("k", start+int64(i))})
		}
	}
	tomb := func(start int64, n int, withHeaders bool) {
		keysObj(folder, start, n)
		if withHeaders {
			a.putRaw(fmt.Sprintf("topics/orders/%s/orders+0+%010d.headers.json", folder, start), func(w io.Writer) {
				for i := range n {
					fmt.Fprintf(w, "[{\"key\":\"h\",\"value\":\"%d\"},{\"key\":\"n\",\"value\":null}]\n", start+int64(i))
				}
			})
		}
		for i := range n {
			r := tombRec{key: fmt.Sprint("k", start+int64(i)), tomb: true}
			if withHeaders {
				r.headers = []format.Header{{Key: "h", Value: fmt.Append(nil, start+int64(i))}, {Key: "n"}}
			}
			want = append(want, r)
		}
	}
	value(0, 2)
	tomb(2, 3, true)
	value(5, 4)
	tomb(9, 1, false)
	value(10, 2)
	keysObj("partition=0", 20, 1) // orphan: no value object, not in the tombstone folder
	return a, want
}

// checkTomb asserts that recs are exactly want: keys, nil values for the
// tombstones, "v-<offset>" values for the others, and headers.
func checkTomb(t *testing.T, recs []*kgo.Record, want []tombRec) {
	t.Helper()
	if len(recs) != len(want) {
		t.Fatalf("%d records, want %d", len(recs), len(want))
	}
	for i, w := range want {
		r := recs[i]
		if string(r.Key) != w.key {
			t.Errorf("offset %d: key %q, want %q", r.Offset, r.Key, w.key)
		}
		if w.tomb && r.Value != nil {
			t.Errorf("offset %d: value %q, want a tombstone (nil)", r.Offset, r.Value)
		}
		if wv := fmt.Sprintf("v-%d", i); !w.tomb && string(r.Value) != wv {
			t.Errorf("offset %d: value %q, want %q", r.Offset, r.Value, wv)
		}
		if len(r.Headers) != len(w.headers) {
			t.Errorf("offset %d: headers %v, want %v", r.Offset, r.Headers, w.headers)
			continue
		}
		for j, h := range w.headers {
			g := r.Headers[j]
			if g.Key != h.Key || !bytes.Equal(g.Value, h.Value) || (g.Value == nil) != (h.Value == nil) {
				t.Errorf("offset %d: header %d is %q=%q, want %q=%q", r.Offset, j, g.Key, g.Value, h.Key, h.Value)
			}
		}
	}
}

// TestRestoreTombstonesInOrder restores value and tombstone objects
// interleaved: the target holds every record in the archive's order, the
// tombstones with their keys, headers and nil values. The dry-run plan
// counts the tombstone objects; with another tombstone.encoded.partition
// they are orphans, skipped and counted.
func TestRestoreTombstonesInOrder(t *testing.T) {
	a, want := tombArchive(t, "deleted")
	brokers := newCluster(t, 1, "copy")
	cfg := baseConfig(brokers, a.f, "orders")
	cfg.Rename = "copy"
	cfg.TombstonePartition = "deleted"

	dry := cfg
	dry.DryRun = true
	r := mustNew(t, dry, a, nil)
	plan, err := r.Plan(testContext(t))
	if err != nil {
		t.Fatal(err)
	}
	tp := plan.Topics[0]
	if tp.Objects != 5 || tp.TombstoneObjects != 2 || tp.KeysObjects != 3 || tp.HeadersObjects != 0 ||
		fmt.Sprint(plan.Skipped) != fmt.Sprint(map[string]int{SkipParallelOrphan: 1}) {
		t.Fatalf("plan: objects %d, tombstone %d, keys %d, headers %d, skipped %v", tp.Objects, tp.TombstoneObjects, tp.KeysObjects, tp.HeadersObjects, plan.Skipped)
	}
	var starts []int64
	for _, o := range tp.Parts[0].Objects {
		starts = append(starts, o.StartOffset)
		if o.Tombstone != (o.StartOffset == 2 || o.StartOffset == 9) || o.Tombstone && o.KeysKey() != "" {
			t.Errorf("object %+v", o)
		}
	}
	if fmt.Sprint(starts) != "[0 2 5 9 10]" {
		t.Fatalf("object order %v", starts)
	}
	var text bytes.Buffer
	if err := plan.WriteText(&text); err != nil || !strings.Contains(text.String(), "5 objects (2 tombstone; 3 with .keys, 0 with .headers objects)") {
		t.Fatalf("plan text (%v):\n%s", err, text.String())
	}
	sum, err := r.Run(testContext(t), nil)
	if err != nil || sum.Objects != 5 || sum.Records != 0 || !sum.DryRun {
		t.Fatalf("dry run: %+v, %v", sum, err)
	}
	if n := len(readTopic(t, brokers, "copy")[0]); n != 0 {
		t.Fatalf("dry run produced %d records", n)
	}

	sum, err = mustNew(t, cfg, a, nil).Run(testContext(t), nil)
	if err != nil {
		t.Fatal(err)
	}
	if sum.Records != 12 || sum.KeysSkipped[SkipParallelOrphan] != 1 {
		t.Fatalf("summary %+v", sum)
	}
	checkTomb(t, readTopic(t, brokers, "copy")[0], want)

	// The archive's folder is not the configured one: its keys and
	// headers objects are orphans.
	other := cfg
	other.TombstonePartition = ""
	plan, err = mustNew(t, other, a, nil).Plan(testContext(t))
	if err != nil {
		t.Fatal(err)
	}
	if tp := plan.Topics[0]; tp.Objects != 3 || tp.TombstoneObjects != 0 || plan.Skipped[SkipParallelOrphan] != 4 {
		t.Fatalf("default tombstone folder: objects %d, tombstone %d, skipped %v", tp.Objects, tp.TombstoneObjects, plan.Skipped)
	}
}

// TestResumeInsideTombstoneRun resumes after a crash that left the target
// with records 0-3, two of the three tombstones of the run 2-4: the re-run
// verifies the tail (a value and two tombstones: keys, headers, nil
// values), counts them as present and produces the rest. A prefix whose
// tombstone has an empty value instead of a nil one is refused.
func TestResumeInsideTombstoneRun(t *testing.T) {
	a, want := tombArchive(t, "tombstone")
	brokers := newCluster(t, 1, "dst", "bad")
	cfg := baseConfig(brokers, a.f, "orders")
	toKgoRecs := func(topic string, empty bool) []*kgo.Record {
		var out []*kgo.Record
		for i, w := range want[:4] {
			r := &kgo.Record{Topic: topic, Key: []byte(w.key)}
			if !w.tomb {
				r.Value = fmt.Appendf(nil, "v-%d", i)
			} else if empty && i == 3 {
				r.Value = []byte{}
			}
			for _, h := range w.headers {
				r.Headers = append(r.Headers, kgo.RecordHeader{Key: h.Key, Value: h.Value})
			}
			out = append(out, r)
		}
		return out
	}
	write := func(topic string, empty bool) {
		commitMarker(t, brokers, topic, cfg.Identity, "orders", 0, 0)
		cl, err := kgo.NewClient(kgo.SeedBrokers(brokers...), kgo.RecordPartitioner(kgo.ManualPartitioner()))
		if err != nil {
			t.Fatal(err)
		}
		defer cl.Close()
		if err := cl.ProduceSync(testContext(t), toKgoRecs(topic, empty)...).FirstErr(); err != nil {
			t.Fatal(err)
		}
	}

	write("dst", false)
	cfg.Rename = "dst"
	sum, err := mustNew(t, cfg, a, nil).Run(testContext(t), nil)
	if err != nil {
		t.Fatal(err)
	}
	if sum.Records != 8 || sum.AlreadyPresent != 4 {
		t.Fatalf("summary %+v, want 8 produced and 4 present", sum)
	}
	checkTomb(t, readTopic(t, brokers, "dst")[0], want)
	sum, err = mustNew(t, cfg, a, nil).Run(testContext(t), nil)
	if err != nil || sum.Records != 0 || sum.AlreadyPresent != 12 {
		t.Fatalf("run after completion: %+v, %v", sum, err)
	}

	write("bad", true)
	cfg.Rename = "bad"
	_, err = mustNew(t, cfg, a, nil).Run(testContext(t), nil)
	if !errors.Is(err, ErrForeignWrite) || !strings.Contains(err.Error(), "bad/0 offset 3") {
		t.Fatalf("err = %v, want ErrForeignWrite naming bad/0 offset 3 (empty value, not a tombstone)", err)
	}
	if n := len(readTopic(t, brokers, "bad")[0]); n != 4 {
		t.Fatalf("bad/0 holds %d records after a refused run, want 4", n)
	}
}
