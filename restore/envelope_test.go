package restore

import (
	"bytes"
	"errors"
	"fmt"
	"io"
	"reflect"
	"strings"
	"testing"
	"time"

	"github.com/kafkas3/kafkas3/format"
	"github.com/kafkas3/kafkas3/index"
	"github.com/twmb/franz-go/pkg/kgo"
)

func mustFormat(t *testing.T, cfg format.Config) format.Format {
	t.Helper()
	f, err := format.New(cfg)
	if err != nil {
		t.Fatal(err)
	}
	return f
}

// envelopeRecords makes n records of partition p from offset from, with
// nil and empty keys, tombstones, duplicate and nil-valued headers and
// old timestamps.
func envelopeRecords(p int32, from, n int) []*format.Record {
	out := make([]*format.Record, n)
	for i := range out {
		o := from + i
		r := &format.Record{Partition: p, Offset: int64(o), Timestamp: time.UnixMilli(int64(86_400_000 * o)),
			Key: fmt.Appendf(nil, "k%d", o), Value: fmt.Appendf(nil, "v%d\r\n\"", o)}
		switch o % 4 {
		case 0:
			r.Key = nil
			r.Headers = []format.Header{{Key: "d", Value: nil}, {Key: "d", Value: []byte{}}, {Key: "d", Value: []byte{0xff}}}
		case 1:
			r.Value = nil
		case 2:
			r.Key, r.Value = []byte{}, []byte{}
		}
		out[i] = r
	}
	return out
}

func checkEnvelopeRecords(t *testing.T, got []*kgo.Record, want []*format.Record, timestamps bool) {
	t.Helper()
	if len(got) != len(want) {
		t.Fatalf("%d records, want %d", len(got), len(want))
	}
	for i, w := range want {
		g := got[i]
		if !bytes.Equal(g.Key, w.Key) || (g.Key == nil) != (w.Key == nil) || !bytes.Equal(g.Value, w.Value) || (g.Value == nil) != (w.Value == nil) {
			t.Errorf("record %d: key %q value %q, want %q %q (nil apart)", i, g.Key, g.Value, w.Key, w.Value)
		}
		if timestamps && !g.Timestamp.Equal(w.Timestamp) {
			t.Errorf("record %d: timestamp %v, want %v", i, g.Timestamp, w.Timestamp)
		}
		if !timestamps && time.Since(g.Timestamp) > time.Hour {
			t.Errorf("record %d: timestamp %v, want the restore's time", i, g.Timestamp)
		}
		var hs []format.Header
		for _, h := range g.Headers {
			hs = append(hs, format.Header{Key: h.Key, Value: h.Value})
		}
		if len(hs) != len(w.Headers) {
			t.Fatalf("record %d: headers %v, want %v", i, hs, w.Headers)
		}
		for j := range hs {
			if hs[j].Key != w.Headers[j].Key || !bytes.Equal(hs[j].Value, w.Headers[j].Value) || (hs[j].Value == nil) != (w.Headers[j].Value == nil) {
				t.Errorf("record %d header %d: %+v, want %+v", i, j, hs[j], w.Headers[j])
			}
		}
	}
}

// TestRestoreEnvelopeEveryProperty: envelope objects (JSON, Avro and
// Parquet), read with the plain format the source config names, are
// recognised by content and restored with their keys, values, headers and
// timestamps (--timestamps original, the default) or the restore's time
// (now); tombstones and nil keys stay nil. Records carry the archived
// offsets (Record.Offset).
func TestRestoreEnvelopeEveryProperty(t *testing.T) {
	for _, kind := range []format.Kind{format.KindJSON, format.KindAvro, format.KindParquet} {
		for _, ts := range []Timestamps{"", TimestampsNow} {
			t.Run(fmt.Sprint(kind, "/", ts), func(t *testing.T) {
				a := newArchive(t, mustFormat(t, format.Config{Kind: kind, Envelope: true}))
				want := map[int32][]*format.Record{0: envelopeRecords(0, 0, 6), 1: envelopeRecords(1, 0, 3)}
				a.put("orders", 0, 0, want[0][:4])
				a.put("orders", 0, 4, want[0][4:])
				a.put("orders", 1, 0, want[1])
				brokers := newCluster(t, 2, "copy")
				cfg := baseConfig(brokers, mustFormat(t, format.Config{Kind: kind}), "orders")
				cfg.Rename, cfg.Timestamps = "copy", ts
				sum, err := mustNew(t, cfg, a, nil).Run(testContext(t), nil)
				if err != nil {
					t.Fatal(err)
				}
				if sum.Records != 9 {
					t.Fatalf("summary %+v", sum)
				}
				got := readTopic(t, brokers, "copy")
				for p, w := range want {
					checkEnvelopeRecords(t, got[p], w, ts == "")
				}
			})
		}
	}
}

// TestRestoreEnvelopeOffsets: the reader hook exposes each envelope's
// archived offset on the record (Record.Offset), gaps included.
func TestRestoreEnvelopeOffsets(t *testing.T) {
	f := mustFormat(t, format.Config{Kind: format.KindJSON, Envelope: true})
	a := newArchive(t, f)
	want := envelopeRecords(3, 5, 4)
	for i, r := range want {
		r.Offset = int64(10 + 2*i) // compaction left gaps
	}
	key := a.put("orders", 3, 10, want)
	r := mustNew(t, baseConfig([]string{"localhost:1"}, format.NewJSON(), "orders"), a, nil)
	rc, err := a.store.Open(testContext(t), key)
	if err != nil {
		t.Fatal(err)
	}
	defer rc.Close()
	rd, err := format.NewJSON().NewReader(rc)
	if err != nil {
		t.Fatal(err)
	}
	er := r.envelopes(rd, Object{Key: key})
	var offsets []int64
	for {
		rec, err := er.Read()
		if err != nil {
			break
		}
		offsets = append(offsets, rec.Offset)
	}
	if !reflect.DeepEqual(offsets, []int64{10, 12, 14, 16}) {
		t.Fatalf("offsets %v", offsets)
	}
}

// TestRestoreEnvelopePartitionMismatch: an envelope record of another
// partition than its object's stops the restore, naming the object, the
// offset and both partitions, before the object's first record is
// produced.
func TestRestoreEnvelopePartitionMismatch(t *testing.T) {
	a := newArchive(t, mustFormat(t, format.Config{Kind: format.KindJSON, Envelope: true}))
	recs := envelopeRecords(0, 0, 2)
	recs[0].Partition = 2
	key := a.put("orders", 0, 0, recs)
	brokers := newCluster(t, 1, "copy")
	cfg := baseConfig(brokers, format.NewJSON(), "orders")
	cfg.Rename = "copy"
	_, err := mustNew(t, cfg, a, nil).Run(testContext(t), nil)
	if !errors.Is(err, ErrEnvelopePartition) || !strings.Contains(err.Error(), key) || !strings.Contains(err.Error(), "offset 0 says partition 2") {
		t.Fatalf("error %v, want ErrEnvelopePartition naming %s and offset 0", err, key)
	}
	if n := len(readTopic(t, brokers, "copy")[0]); n != 0 {
		t.Fatalf("%d records produced", n)
	}
}

// TestRestoreEnvelopeTypedValues: typed envelope values are registered
// and framed for the target registry; tombstones stay nil; without a
// registry the restore refuses with ErrNoRegistry.
func TestRestoreEnvelopeTypedValues(t *testing.T) {
	for _, kind := range []format.Kind{format.KindAvro, format.KindParquet} {
		t.Run(kind.String(), func(t *testing.T) {
			a := newArchive(t, mustFormat(t, format.Config{Kind: kind, Envelope: true}))
			recs, natives := typedRecords(t, 0, 3)
			for i, r := range recs {
				r.Offset, r.Key, r.Timestamp = int64(i), fmt.Appendf(nil, "k%d", i), time.UnixMilli(int64(i))
			}
			recs = append(recs, &format.Record{Offset: 3, Key: []byte("gone"), Timestamp: time.UnixMilli(3)})
			a.put("orders", 0, 0, recs)
			reg, enc := startRegistry(t)
			brokers := newCluster(t, 1, "copy")
			cfg := baseConfig(brokers, mustFormat(t, format.Config{Kind: kind}), "orders")
			cfg.Rename = "copy"
			if _, err := mustNew(t, cfg, a, nil).Run(testContext(t), nil); !errors.Is(err, ErrNoRegistry) {
				t.Fatalf("without a registry: %v", err)
			}
			cfg.ValueEncoder = enc
			if _, err := mustNew(t, cfg, a, nil).Run(testContext(t), nil); err != nil {
				t.Fatal(err)
			}
			got := readTopic(t, brokers, "copy")[0]
			if len(got) != 4 {
				t.Fatalf("%d records", len(got))
			}
			for i, n := range natives {
				if v := decodeWire(t, reg, "copy-value", got[i].Value); !reflect.DeepEqual(v, n) {
					t.Errorf("record %d: %#v, want %#v", i, v, n)
				}
				if string(got[i].Key) != fmt.Sprintf("k%d", i) || got[i].Timestamp.UnixMilli() != int64(i) {
					t.Errorf("record %d: key %q timestamp %v", i, got[i].Key, got[i].Timestamp)
				}
			}
			if got[3].Value != nil || string(got[3].Key) != "gone" {
				t.Errorf("tombstone: %q %q", got[3].Key, got[3].Value)
			}
		})
	}
}

// writeEnvelopeIndex writes the archive index of one object of topic/p
// holding offsets 0..n-1, with the envelope flag.
func (a *archive) writeEnvelopeIndex(topic string, p int32, key string, n int64, envelope bool) {
	a.t.Helper()
	e := index.Entry{V: index.Version, Topic: topic, Partition: p, Key: key, Objects: []index.Object{a.describe(key)},
		Runs: []index.Run{{First: 0, Last: n - 1}}, Records: n, Commit: n, Envelope: envelope}
	b, err := index.Encode([]index.Entry{e})
	if err != nil {
		a.t.Fatal(err)
	}
	a.putRaw(index.Key(index.DefaultPrefix, topic, p, n, ""), func(w io.Writer) { w.Write(b) })
}

// TestRestoreEnvelopeIndexFlag: with an archive index, its envelope flag
// decides instead of the content. A plain JSON value that has the
// envelope's shape is restored as that value when the entry says
// envelope=false (without the index it would be decoded), and a plain
// object whose entry says envelope=true is damaged.
func TestRestoreEnvelopeIndexFlag(t *testing.T) {
	line := format.AppendEnvelopeLine(nil, &format.Record{Key: []byte("k"), Value: []byte("v")})
	for _, tc := range []struct {
		name     string
		indexed  bool
		envelope bool
		want     string // restored value; "" means the restore fails as damaged
	}{
		{"no index: content decides", false, false, "v"},
		{"index says plain", true, false, string(line)},
		{"index says envelope", true, true, ""},
	} {
		t.Run(tc.name, func(t *testing.T) {
			a := newArchive(t, format.NewJSON())
			key := a.put("orders", 0, 0, []*format.Record{{Value: line}})
			if tc.indexed {
				a.writeEnvelopeIndex("orders", 0, key, 1, tc.envelope)
			}
			if tc.envelope {
				// The entry says envelope, the object holds a plain value.
				a = newArchive(t, format.NewJSON())
				key = a.put("orders", 0, 0, []*format.Record{{Value: []byte(`{"a":1}`)}})
				a.writeEnvelopeIndex("orders", 0, key, 1, true)
			}
			brokers := newCluster(t, 1, "copy")
			cfg := baseConfig(brokers, format.NewJSON(), "orders")
			cfg.Rename, cfg.IndexPrefix = "copy", index.DefaultPrefix
			_, err := mustNew(t, cfg, a, nil).Run(testContext(t), nil)
			if tc.want == "" {
				if !errors.Is(err, ErrDamagedObject) || !errors.Is(err, format.ErrBadEnvelope) {
					t.Fatalf("error %v, want a damaged object (bad envelope)", err)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			got := readTopic(t, brokers, "copy")[0]
			if len(got) != 1 || string(got[0].Value) != tc.want {
				t.Fatalf("restored %d records, first value %q, want %q", len(got), got[0].Value, tc.want)
			}
		})
	}
}

// TestSameRecordComparesTimestamps: before resuming, the records already
// in the target are compared with the archive on their timestamps too
// when the archive gives them (envelopes, --timestamps original), except
// where the broker stamped them (LogAppendTime).
func TestSameRecordComparesTimestamps(t *testing.T) {
	ts := time.UnixMilli(1_600_000_000_123)
	want := &format.Record{Key: []byte("k"), Value: []byte("v"), Timestamp: ts}
	got := &kgo.Record{Key: []byte("k"), Value: []byte("v"), Timestamp: ts}
	if !sameRecord(got, want) {
		t.Fatal("equal records differ")
	}
	got.Timestamp = ts.Add(time.Millisecond)
	if sameRecord(got, want) {
		t.Fatal("a record with another timestamp passed as restored")
	}
	if !sameTime(ts.Add(time.Hour), ts, true) || sameTime(ts.Add(time.Hour), ts, false) {
		t.Fatal("a broker-stamped (LogAppendTime) record was compared on time, or a client-stamped one was not")
	}
	noTS := &format.Record{Key: []byte("k"), Value: []byte("v")}
	if !sameRecord(got, noTS) {
		t.Fatal("an archive without timestamps was compared on time")
	}
}
