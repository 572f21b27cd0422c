//go:build integration

package e2e

import (
	"context"
	"encoding/hex"
	"fmt"
	"os/exec"
	"path"
	"reflect"
	"sort"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/twmb/avro"
	"github.com/twmb/franz-go/pkg/kgo"

	"github.com/kafkas3/kafkas3/convert"
	"github.com/kafkas3/kafkas3/format"
)

const keysSchema = `{"type":"record","name":"Event","namespace":"e2e","fields":[{"name":"p","type":"int"},{"name":"i","type":"long"},{"name":"name","type":["null","string"],"default":null}]}`

// keysKey is the key of record i of partition p: text and one byte that is
// not UTF-8, so it must survive as Avro bytes.
func keysKey(p int32, i int) []byte { return append(fmt.Appendf(nil, "k-%d-%d", p, i), 0xff) }

// keysValue is the datum of record i of partition p.
func keysValue(p int32, i int) map[string]any {
	v := map[string]any{"p": p, "i": int64(i), "name": nil}
	if i%2 == 1 {
		v["name"] = fmt.Sprintf("ünï %d/%d", p, i)
	}
	return v
}

// keysHeaders are the headers of record i of partition p: order, a
// duplicate key, a nil value, an empty value and non-ASCII text.
func keysHeaders(p int32, i int) []kgo.RecordHeader {
	switch i % 3 {
	case 0:
		return []kgo.RecordHeader{{Key: "a", Value: []byte("1")}, {Key: "b", Value: []byte("ü✓")}, {Key: "a", Value: []byte("2")}}
	case 1:
		return []kgo.RecordHeader{{Key: "nil", Value: nil}, {Key: "empty", Value: []byte{}}}
	}
	return []kgo.RecordHeader{{Key: "z", Value: []byte("z")}, {Key: "y", Value: fmt.Appendf(nil, "p%d-%d", p, i)}}
}

// keysHeadersPy is keysHeaders as testdata/typed/read.py prints fastavro's
// reading of a .headers.avro record: an array of {key, value}.
func keysHeadersPy(hs []kgo.RecordHeader) []any {
	out := []any{}
	for _, h := range hs {
		var v any
		if h.Value != nil {
			v = string(h.Value)
		}
		out = append(out, map[string]any{"key": h.Key, "value": v})
	}
	return out
}

// TestIntegrationKeysHeadersAvro archives Avro values (AvroConverter) with
// store.kafka.keys and store.kafka.headers as Avro and
// behavior.on.null.values=write into versitygw, downloads the bucket with
// the aws CLI, and has fastavro read every .avro, .keys.avro and
// .headers.avro object: per Kafka partition, the objects in start-offset
// order (tombstone folder included) hold every key and every header list
// in produce order, and the value objects the non-null values. Then it
// restores with `kafkas3 source` into copy_of_<topic> against a second
// registry and checks keys, headers and values on the real broker: the
// two tombstones (keys-only objects with their .headers objects in the
// tombstone folder) come back in their places with null values.
func TestIntegrationKeysHeadersAvro(t *testing.T) {
	if err := exec.Command("python3", "-c", "import fastavro").Run(); err != nil {
		t.Fatalf("python3 with fastavro is required (pip install fastavro): %v", err)
	}
	b := newBed(t)
	topic := srcUnique("e2e-keys")
	const parts, perPart, flush = 2, 7, 3
	tomb := map[[2]int]bool{{0, 2}: true, {1, 5}: true}
	b.k.CreateTopic(t, topic, parts)

	srcReg := typedRegistry(t)
	parsed, err := avro.Parse(keysSchema)
	if err != nil {
		t.Fatal(err)
	}
	schema := &format.Schema{Avro: parsed, Text: keysSchema}
	ser := typedConverter(t, srcReg.URL())
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	cl := b.k.Client(t, kgo.RecordPartitioner(kgo.ManualPartitioner()))
	var recs []*kgo.Record
	for p := range int32(parts) {
		for i := range perPart {
			r := &kgo.Record{Topic: topic, Partition: p, Key: keysKey(p, i), Headers: keysHeaders(p, i)}
			if !tomb[[2]int{int(p), i}] {
				if r.Value, err = ser.Encode(ctx, convert.SubjectName(topic, false), schema, keysValue(p, i)); err != nil {
					t.Fatal(err)
				}
			}
			recs = append(recs, r)
		}
	}
	if err := cl.ProduceSync(ctx, recs...).FirstErr(); err != nil {
		t.Fatal(err)
	}

	bucket := b.s.CreateBucket(t)
	c := b.sinkConf("e2e-keys-"+topic, topic, bucket).with(
		"flush.size", fmt.Sprint(flush), "format.class", "io.confluent.connect.s3.format.avro.AvroFormat", "avro.codec", "deflate",
		"value.converter", "io.confluent.connect.avro.AvroConverter", "value.converter.schema.registry.url", srcReg.URL(),
		"store.kafka.keys", "true", "store.kafka.headers", "true",
		"keys.format.class", "io.confluent.connect.s3.format.avro.AvroFormat", "headers.format.class", "io.confluent.connect.s3.format.avro.AvroFormat",
		"behavior.on.null.values", "write")
	sum, _ := runOnce(t, "sink --once", c.write(t))
	if sum.records != parts*perPart {
		t.Fatalf("sink summary %s, want %d records", sum.line, parts*perPart)
	}

	// Download with the aws CLI; read every object with fastavro.
	files := b.download(t, bucket)
	var paths []string
	for _, f := range files {
		paths = append(paths, f)
	}
	sort.Strings(paths)
	read := typedPyRead(t, paths)

	// kind -> partition -> objects, each with its start offset and rows.
	type obj struct {
		key   string
		start int
		rows  []any
	}
	byKind := map[string]map[int32][]obj{}
	tombObjects := 0
	for k, f := range files {
		r, ok := read[f]
		if !ok {
			t.Fatalf("%s: not in read.py's output", k)
		}
		if r.Codec != "deflate" {
			t.Errorf("%s: codec %q, want deflate", k, r.Codec)
		}
		base := path.Base(k)
		kind := "value"
		for _, in := range []string{"keys", "headers"} {
			if strings.HasSuffix(base, "."+in+".avro") {
				kind = in
			}
		}
		dir := path.Base(path.Dir(k))
		if dir == "tombstone" {
			if kind == "value" {
				t.Errorf("%s: a value object in the tombstone folder", k)
			}
			tombObjects++
		}
		f := strings.Split(strings.TrimSuffix(strings.TrimSuffix(strings.TrimSuffix(base, ".avro"), ".keys"), ".headers"), "+")
		if len(f) != 3 || f[0] != topic {
			t.Fatalf("%s: unexpected object name", k)
		}
		p, err1 := strconv.Atoi(f[1])
		start, err2 := strconv.Atoi(f[2])
		if err1 != nil || err2 != nil || (dir != "tombstone" && dir != fmt.Sprintf("partition=%d", p)) {
			t.Fatalf("%s: unexpected object name", k)
		}
		if byKind[kind] == nil {
			byKind[kind] = map[int32][]obj{}
		}
		byKind[kind][int32(p)] = append(byKind[kind][int32(p)], obj{k, start, r.Rows})
	}
	if tombObjects != 4 {
		t.Errorf("%d objects in the tombstone folder, want 4 (.keys and .headers of 2 tombstones)", tombObjects)
	}
	for p := range int32(parts) {
		for _, kind := range []string{"value", "keys", "headers"} {
			objs := byKind[kind][p]
			sort.Slice(objs, func(a, b int) bool { return objs[a].start < objs[b].start })
			var rows []any
			var want []any
			for i := range perPart {
				isTomb := tomb[[2]int{int(p), i}]
				switch {
				case kind == "keys":
					want = append(want, "hex:"+hex.EncodeToString(keysKey(p, i)))
				case kind == "headers":
					want = append(want, keysHeadersPy(keysHeaders(p, i)))
				case !isTomb:
					want = append(want, keysValue(p, i))
				}
			}
			next := 0
			for _, o := range objs {
				if kind != "value" && o.start != next {
					t.Errorf("%s starts at %d, but the previous objects end at %d", o.key, o.start, next)
				}
				if kind == "keys" && len(o.rows) == 0 {
					t.Errorf("%s is empty", o.key)
				}
				next = o.start + len(o.rows)
				rows = append(rows, o.rows...)
			}
			if g, w := canonJSON(t, rows), canonJSON(t, want); g != w {
				t.Errorf("partition %d %s objects, read by fastavro:\n got %s\nwant %s", p, kind, g, w)
			}
		}
		// Each value object has its .keys and .headers twins with as many rows.
		for _, v := range byKind["value"][p] {
			for _, kind := range []string{"keys", "headers"} {
				twin := strings.TrimSuffix(v.key, ".avro") + "." + kind + ".avro"
				found := false
				for _, o := range byKind[kind][p] {
					if o.key == twin {
						found = true
						if len(o.rows) != len(v.rows) {
							t.Errorf("%s has %d rows, %s %d", twin, len(o.rows), v.key, len(v.rows))
						}
					}
				}
				if !found {
					t.Errorf("%s has no %s object", v.key, kind)
				}
			}
		}
	}
	if t.Failed() {
		return
	}
	t.Logf("fastavro read %d objects: keys, headers and values equal to what was produced", len(files))

	// Restore against a second registry and read the real broker.
	dstReg := typedRegistry(t)
	target := "copy_of_" + topic
	rs, _ := srcRunOK(t, "source", c.with("value.converter.schema.registry.url", dstReg.URL()).write(t),
		"--topic-rename", "copy_of_$0", "--create-topics")
	if rs.records != parts*perPart || rs.skipped != 0 {
		t.Fatalf("source summary %s, want %d records (tombstones included) and 0 skipped", rs.line, parts*perPart)
	}
	de := typedConverter(t, dstReg.URL())
	rcl := b.k.Client(t, kgo.ConsumeTopics(target), kgo.ConsumeResetOffset(kgo.NewOffset().AtStart()))
	got := map[int32][]*kgo.Record{}
	for n := 0; n < parts*perPart; {
		fs := rcl.PollFetches(ctx)
		if ctx.Err() != nil {
			t.Fatalf("read %s: %d of %d records", target, n, parts*perPart)
		}
		fs.EachError(func(_ string, p int32, err error) { t.Fatalf("fetch %s/%d: %v", target, p, err) })
		fs.EachRecord(func(r *kgo.Record) { got[r.Partition] = append(got[r.Partition], r); n++ })
	}
	for p := range int32(parts) {
		j := 0
		for i := range perPart {
			if j >= len(got[p]) {
				t.Fatalf("partition %d: %d records restored", p, len(got[p]))
			}
			r := got[p][j]
			j++
			if r.Offset != int64(i) {
				t.Errorf("%s/%d: record %d at offset %d", target, p, i, r.Offset)
			}
			if string(r.Key) != string(keysKey(p, i)) {
				t.Errorf("%s/%d offset %d: key %q, want %q", target, p, r.Offset, r.Key, keysKey(p, i))
			}
			if g, w := fmt.Sprintf("%q", keysHeadersGo(r.Headers)), fmt.Sprintf("%q", keysHeadersGo(keysHeaders(p, i))); g != w {
				t.Errorf("%s/%d offset %d: headers %s, want %s", target, p, r.Offset, g, w)
			}
			if tomb[[2]int{int(p), i}] {
				if r.Value != nil {
					t.Errorf("%s/%d offset %d: value %x, want a tombstone (null)", target, p, r.Offset, r.Value)
				}
				continue
			}
			typed, err := de.Convert(ctx, target, false, r.Value)
			if err != nil {
				t.Fatalf("%s/%d offset %d: %v", target, p, r.Offset, err)
			}
			v, err := format.AvroNative(typed)
			if err != nil {
				t.Fatal(err)
			}
			if !reflect.DeepEqual(v, any(keysValue(p, i))) {
				t.Errorf("%s/%d offset %d: value %#v, want %#v", target, p, r.Offset, v, keysValue(p, i))
			}
		}
		if j != len(got[p]) {
			t.Errorf("partition %d: %d records restored, want %d", p, len(got[p]), j)
		}
	}
}

// keysHeadersGo renders headers with nil values as "<nil>", so nil and
// empty differ.
func keysHeadersGo(hs []kgo.RecordHeader) []string {
	var out []string
	for _, h := range hs {
		v := strconv.Quote(string(h.Value))
		if h.Value == nil {
			v = "<nil>"
		}
		out = append(out, h.Key+"="+v)
	}
	return out
}
