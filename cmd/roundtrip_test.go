package cmd

import (
	"bytes"
	"context"
	"fmt"
	"os"
	"path/filepath"
	"reflect"
	"sort"
	"strings"
	"testing"
	"time"

	"github.com/kafkas3/kafkas3/convert"
	"github.com/kafkas3/kafkas3/format"
	"github.com/twmb/avro"
	"github.com/twmb/franz-go/pkg/kgo"
)

// This file proves the sink's parallel .keys/.headers objects and the
// source's pairing together: records with keys, headers and timestamps go
// through `kafkas3 sink --once` into a local dir and come back through
// `kafkas3 source --topic-rename 'copy_of_$0' --create-topics`.

// rtHeaders returns the headers of record i: together they cover order,
// duplicate keys, a nil value, an empty value, non-ASCII text and (record
// 7) no headers at all, which the sink stores as an empty list.
func rtHeaders(p int32, i int) []kgo.RecordHeader {
	if i == 7 {
		return nil
	}
	switch i % 4 {
	case 0:
		return []kgo.RecordHeader{{Key: "a", Value: []byte("1")}, {Key: "b", Value: []byte(fmt.Sprintf("p%d", p))}, {Key: "a", Value: []byte("3")}}
	case 1:
		return []kgo.RecordHeader{{Key: "nil", Value: nil}, {Key: "empty", Value: []byte{}}, {Key: "nil", Value: nil}}
	case 2:
		return []kgo.RecordHeader{{Key: "z", Value: []byte("last")}, {Key: "a", Value: []byte("first")}}
	}
	return []kgo.RecordHeader{{Key: "ü", Value: []byte("✓ \"quoted\" \\ tab\t")}}
}

// rtTombstones marks the records (partition, index) produced with a null
// value: tombstones, which behavior.on.null.values=write archives as
// keys-and-headers-only objects under tombstone.encoded.partition.
var rtTombstones = map[[2]int]bool{{0, 3}: true, {1, 5}: true}

// rtProduce produces n records to each of topic's two partitions with the
// values value(p, i) (nil for the tombstones), keys "key-<p>-<i>" (a nil
// key for record 6, which the sink stores as null), rtHeaders and
// timestamps in 2021, and returns them by partition.
func rtProduce(t *testing.T, ctx context.Context, brokers, topic string, n int, value func(p int32, i int) []byte) map[int32][]*kgo.Record {
	t.Helper()
	cl, err := kgo.NewClient(kgo.SeedBrokers(strings.Split(brokers, ",")...), kgo.RecordPartitioner(kgo.ManualPartitioner()))
	if err != nil {
		t.Fatal(err)
	}
	defer cl.Close()
	base := time.Date(2021, 3, 4, 5, 6, 7, 0, time.UTC)
	out := map[int32][]*kgo.Record{}
	var recs []*kgo.Record
	for p := range int32(2) {
		for i := range n {
			r := &kgo.Record{
				Topic: topic, Partition: p,
				Key:       []byte(fmt.Sprintf("key-%d-%d", p, i)),
				Headers:   rtHeaders(p, i),
				Timestamp: base.Add(time.Duration(int(p)*1000+i) * time.Second),
			}
			if !rtTombstones[[2]int{int(p), i}] {
				r.Value = value(p, i)
			}
			if i == 6 {
				r.Key = nil
			}
			out[p] = append(out[p], r)
			recs = append(recs, r)
		}
	}
	if err := cl.ProduceSync(ctx, recs...).FirstErr(); err != nil {
		t.Fatal(err)
	}
	return out
}

// rtCheck compares the restored records of one partition with the
// produced ones, tombstones in their places: key bytes, headers (order,
// duplicates, nil versus empty) and, through sameValue, the value; a
// tombstone's value must be nil.
func rtCheck(t *testing.T, p int32, got, want []*kgo.Record, since time.Time, sameValue func(got, want []byte) string) {
	t.Helper()
	if len(got) != len(want) {
		t.Fatalf("partition %d: %d records restored, want %d", p, len(got), len(want))
	}
	for i, g := range got {
		w := want[i]
		if !bytes.Equal(g.Key, w.Key) || (g.Key == nil) != (w.Key == nil) {
			t.Errorf("partition %d record %d: key %q, want %q", p, i, g.Key, w.Key)
		}
		if gh, wh := showHeaders(g.Headers), showHeaders(w.Headers); gh != wh {
			t.Errorf("partition %d record %d: headers %s, want %s", p, i, gh, wh)
		}
		if rtTombstones[[2]int{int(p), i}] {
			if g.Value != nil {
				t.Errorf("partition %d record %d (%s): value %q, want a tombstone (nil)", p, i, w.Key, g.Value)
			}
		} else if msg := sameValue(g.Value, w.Value); msg != "" {
			t.Errorf("partition %d record %d (%s): %s", p, i, w.Key, msg)
		}
		// Confluent's layout (value, .keys and .headers objects) holds no
		// timestamps, so the target stamps the produce time: the original
		// 2021 timestamp is lost. This documents today's behaviour.
		if g.Timestamp.Equal(w.Timestamp) || g.Timestamp.Before(since.Add(-time.Second)) {
			t.Errorf("partition %d record %d: timestamp %v (produced %v); want the restore time", p, i, g.Timestamp, w.Timestamp)
		}
	}
}

// showHeaders prints headers so that a nil value (<nil>) and an empty
// value ("") differ.
func showHeaders(hs []kgo.RecordHeader) string {
	var b strings.Builder
	for i, h := range hs {
		if i > 0 {
			b.WriteString(",")
		}
		if h.Value == nil {
			fmt.Fprintf(&b, "%q=<nil>", h.Key)
		} else {
			fmt.Fprintf(&b, "%q=%q", h.Key, h.Value)
		}
	}
	return "[" + b.String() + "]"
}

// byPartition groups consumed records by partition, in offset order.
func byPartition(recs []*kgo.Record) map[int32][]*kgo.Record {
	out := map[int32][]*kgo.Record{}
	for _, r := range recs {
		out[r.Partition] = append(out[r.Partition], r)
	}
	for _, rs := range out {
		sort.SliceStable(rs, func(a, b int) bool { return rs[a].Offset < rs[b].Offset })
	}
	return out
}

// tombstoneObjects counts the archived objects in the tombstone folder and
// checks they are keys and headers objects only.
func tombstoneObjects(t *testing.T, keys []string, folder string) int {
	t.Helper()
	n := 0
	for _, k := range keys {
		if !strings.Contains(k, "/"+folder+"/") {
			continue
		}
		if !strings.Contains(k, ".keys.") && !strings.Contains(k, ".headers.") {
			t.Errorf("tombstone folder holds a value object %s", k)
		}
		n++
	}
	return n
}

// TestRoundTripKeysHeaders archives records with keys, headers and two
// tombstones with the sink (store.kafka.keys, store.kafka.headers,
// behavior.on.null.values=write) and restores them with the source into
// copy_of_<topic>.
//
// Tombstones: the sink writes a tombstone as a record of the .keys and
// .headers objects under topics/<topic>/<tombstone.encoded.partition>/,
// with no value object. The source restores those objects as records with
// the key, the headers and a nil value, in their place among the values:
// the target holds every produced record in order. A .keys object without
// a value object outside the tombstone folder is an orphan: skipped and
// counted (skipped=1 in the json case).
func TestRoundTripKeysHeaders(t *testing.T) {
	const n = 8 // records per partition
	t.Run("json", func(t *testing.T) {
		ctx := cliContext(t)
		brokers := startKafka(t, 2, "rt")
		produced := rtProduce(t, ctx, brokers, "rt", n, func(p int32, i int) []byte {
			return []byte(fmt.Sprintf(`{"p":%d,"i":%d,"s":"x\"y"}`, p, i))
		})
		dir := t.TempDir()
		cfg := writeFile(t, "sink.yaml", sinkYAML(brokers, dir, "rt", 3)+`store.kafka.keys: true
store.kafka.headers: true
keys.format.class: io.confluent.connect.s3.format.json.JsonFormat
headers.format.class: json
behavior.on.null.values: write
`)
		r := mustRun(t, ctx, ExitOK, "sink", "-c", cfg, "--once", "--log-level", "warn")
		if !strings.Contains(r.out, fmt.Sprintf(" records=%d ", 2*n)) {
			t.Errorf("sink summary: %q", r.out)
		}
		keys := objectKeys(t, dir)
		if got := tombstoneObjects(t, keys, "tombstone"); got != 4 {
			t.Fatalf("%d objects in the tombstone folder, want 4: %q", got, keys)
		}
		// An orphan: a .keys object without a value object, outside the tombstone folder.
		if err := os.WriteFile(filepath.Join(dir, "topics", "rt", "partition=0", "rt+0+0000000100.keys.json"), []byte(`"lost"`+"\n"), 0o600); err != nil {
			t.Fatal(err)
		}
		r = mustRun(t, ctx, ExitOK, "source", "-c", cfg, "--topic-rename", "copy_of_$0", "--dry-run")
		if !strings.Contains(r.out, " objects (2 tombstone; ") || !strings.Contains(r.out, "1 keys or headers without a value object") {
			t.Errorf("source --dry-run: %q", r.out)
		}
		since := time.Now()
		r = mustRun(t, ctx, ExitOK, "source", "-c", cfg, "--topic-rename", "copy_of_$0", "--create-topics", "--log-level", "warn")
		if !strings.Contains(r.out, fmt.Sprintf(" records=%d ", 2*n)) || !strings.Contains(r.out, " skipped=1 ") {
			t.Errorf("source summary: %q", r.out)
		}
		got := byPartition(consumeAll(t, ctx, brokers, "copy_of_rt", 2*n))
		for p := range int32(2) {
			rtCheck(t, p, got[p], produced[p], since, func(g, w []byte) string {
				if !bytes.Equal(g, w) {
					return fmt.Sprintf("value %q, want %q", g, w)
				}
				return ""
			})
		}
	})

	t.Run("avro", func(t *testing.T) {
		ctx := cliContext(t)
		const schemaText = `{"type":"record","name":"Order","namespace":"rt","fields":[{"name":"p","type":"int"},{"name":"i","type":"long"},` +
			`{"name":"note","type":["null","string"],"default":null},{"name":"tags","type":{"type":"array","items":"string"}}]}`
		brokers := startKafka(t, 2, "rt")
		srcReg, ser := startRegistry(t)
		parsed, err := avro.Parse(schemaText)
		if err != nil {
			t.Fatal(err)
		}
		schema := &format.Schema{Avro: parsed, Text: schemaText}
		datum := func(p int32, i int) map[string]any {
			v := map[string]any{"p": p, "i": int64(i) << 40, "note": nil, "tags": []any{}}
			if i%2 == 1 {
				v["note"] = fmt.Sprintf("n-%d-%d", p, i)
				v["tags"] = []any{"x", "y"}
			}
			return v
		}
		produced := rtProduce(t, ctx, brokers, "rt", n, func(p int32, i int) []byte {
			b, err := ser.Encode(ctx, "rt-value", schema, datum(p, i))
			if err != nil {
				t.Fatal(err)
			}
			return b
		})
		dir := t.TempDir()
		y := strings.Replace(sinkYAML(brokers, dir, "rt", 3), "io.confluent.connect.s3.format.json.JsonFormat", "io.confluent.connect.s3.format.avro.AvroFormat", 1)
		cfg := writeFile(t, "sink.yaml", y+`value.converter: io.confluent.connect.avro.AvroConverter
value.converter.schema.registry.url: `+srcReg.URL()+`
key.converter: org.apache.kafka.connect.storage.StringConverter
store.kafka.keys: true
store.kafka.headers: true
keys.format.class: io.confluent.connect.s3.format.avro.AvroFormat
headers.format.class: avro
behavior.on.null.values: write
tombstone.encoded.partition: deleted
`)
		r := mustRun(t, ctx, ExitOK, "sink", "-c", cfg, "--once", "--log-level", "warn")
		if !strings.Contains(r.out, fmt.Sprintf(" records=%d ", 2*n)) {
			t.Errorf("sink summary: %q", r.out)
		}
		keys := objectKeys(t, dir)
		if got := tombstoneObjects(t, keys, "deleted"); got != 4 {
			t.Fatalf("%d objects in the tombstone folder, want 4: %q", got, keys)
		}
		for _, k := range keys {
			if !strings.HasSuffix(k, ".avro") {
				t.Errorf("object %s: want .avro, .keys.avro and .headers.avro objects only", k)
			}
		}

		dstReg, de := startRegistry(t)
		since := time.Now()
		r = mustRun(t, ctx, ExitOK, "source", "-c", cfg, "--topic-rename", "copy_of_$0", "--create-topics",
			"-p", "value.converter.schema.registry.url="+dstReg.URL(), "--log-level", "warn")
		if !strings.Contains(r.out, fmt.Sprintf(" records=%d ", 2*n)) || !strings.Contains(r.out, " skipped=0 ") {
			t.Errorf("source summary: %q", r.out)
		}
		got := byPartition(consumeAll(t, ctx, brokers, "copy_of_rt", 2*n))
		decode := func(c *convert.AvroConverter, topic string, b []byte) (any, *format.Typed, error) {
			typed, err := c.Convert(ctx, topic, false, b)
			if err != nil {
				return nil, nil, err
			}
			nat, err := format.AvroNative(typed)
			return nat, typed, err
		}
		for p := range int32(2) {
			rtCheck(t, p, got[p], produced[p], since, func(g, w []byte) string {
				gotV, typed, err := decode(de, "copy_of_rt", g)
				if err != nil {
					return fmt.Sprintf("decoding with the target registry: %v", err)
				}
				if typed.Schema.Version != 1 {
					return fmt.Sprintf("schema id %d is not version 1 of copy_of_rt-value", typed.Schema.ID)
				}
				if typed.Schema.Avro.Root().Name != "Order" || len(typed.Schema.Avro.Root().Fields) != 4 {
					return fmt.Sprintf("target schema %s", typed.Schema.Avro.String())
				}
				wantV, _, err := decode(ser, "rt", w)
				if err != nil {
					return fmt.Sprintf("decoding the original: %v", err)
				}
				if !reflect.DeepEqual(gotV, wantV) {
					return fmt.Sprintf("value %#v, want %#v", gotV, wantV)
				}
				return ""
			})
		}
		// The original datum, field by field, for the first record.
		first, _, err := decode(de, "copy_of_rt", got[0][0].Value)
		if err != nil {
			t.Fatal(err)
		}
		m, _ := first.(map[string]any)
		if fmt.Sprint(m["p"], m["i"], m["note"], m["tags"]) != "0 0 <nil> []" {
			t.Errorf("first restored datum %#v", first)
		}
	})
}
