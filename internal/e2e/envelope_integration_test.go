//go:build integration

package e2e

import (
	"bytes"
	"context"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"os/exec"
	"path"
	"sort"
	"strings"
	"testing"
	"time"

	"github.com/twmb/avro"
	"github.com/twmb/franz-go/pkg/kadm"
	"github.com/twmb/franz-go/pkg/kgo"

	"github.com/kafkas3/kafkas3/convert"
	"github.com/kafkas3/kafkas3/format"
)

// envParts and envPerPart size the hostile corpus: 3 x 734 = 2,202 records.
const envParts, envPerPart = 3, 734

// envBig marks the records with a 300 KB value.
var envBig = map[[2]int]bool{{0, 100}: true, {1, 400}: true, {2, 700}: true}

// envRecord is record i of partition p of the hostile corpus: nil, empty,
// unicode and binary keys; tombstones, empty values, every byte 0..255,
// CR/LF and quotes, 300 KB values; no headers, duplicate, nil-valued and
// empty headers; explicit timestamps from 1971 and 2003.
func envRecord(topic string, p int32, i int) *kgo.Record {
	r := &kgo.Record{Topic: topic, Partition: p,
		Timestamp: time.UnixMilli(1_050_000_000_000 + int64(p)*10_000_000 + int64(i)*1000)}
	if i%17 == 0 {
		r.Timestamp = time.UnixMilli(31_536_000_000 + int64(i)) // 1971
	}
	switch i % 11 {
	case 0: // nil key
	case 1:
		r.Key = []byte{}
	case 2:
		r.Key = fmt.Appendf(nil, "ключ-✓-%d-%d", p, i)
	case 3:
		r.Key = []byte{0, 0xff, 0xfe, byte(i), '\n'}
	default:
		r.Key = fmt.Appendf(nil, "k-%d-%d", p, i)
	}
	switch {
	case envBig[[2]int{int(p), i}]:
		r.Value = bytes.Repeat(fmt.Appendf(nil, "%d-%d\r\n", p, i), 300_000/8)
	case i%13 == 0: // tombstone
	case i%13 == 1:
		r.Value = []byte{}
	case i%13 == 2:
		r.Value = make([]byte, 256)
		for b := range r.Value {
			r.Value[b] = byte(b)
		}
	case i%13 == 3:
		r.Value = fmt.Appendf(nil, "line1\r\nline2\n\"quoted\" 'single' \\ %d", i)
	default:
		r.Value = fmt.Appendf(nil, `{"p":%d,"i":%d,"s":"ü✓"}`, p, i)
	}
	switch i % 5 {
	case 1:
		r.Headers = []kgo.RecordHeader{{Key: "dup", Value: []byte("1")}, {Key: "dup", Value: []byte("2")}, {Key: "dup", Value: []byte("1")}}
	case 2:
		r.Headers = []kgo.RecordHeader{{Key: "nil", Value: nil}}
	case 3:
		r.Headers = []kgo.RecordHeader{{Key: "empty", Value: []byte{}}, {Key: "", Value: []byte("empty key")}}
	case 4:
		r.Headers = []kgo.RecordHeader{{Key: "ü", Value: []byte{0xff, 0}}, {Key: "nil", Value: nil}, {Key: "e", Value: []byte{}}}
	}
	return r
}

// envCreateTopic creates topic with retention.ms=-1, so that the corpus's
// old timestamps are not deleted by retention.
func envCreateTopic(t *testing.T, b *bed, topic string, partitions int32) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	adm := kadm.NewClient(b.k.Client(t))
	retain := "-1"
	resp, err := adm.CreateTopic(ctx, partitions, 1, map[string]*string{"retention.ms": &retain, "max.message.bytes": ptr("8000000")}, topic)
	if err == nil {
		err = resp.Err
	}
	if err != nil {
		t.Fatalf("create %s: %v", topic, err)
	}
	if !waitFor(30*time.Second, 100*time.Millisecond, func() bool {
		td, err := adm.ListTopics(ctx, topic)
		return err == nil && td[topic].Err == nil && len(td[topic].Partitions) == int(partitions) && allLeaders(td[topic].Partitions)
	}) {
		t.Fatalf("topic %s has no leaders", topic)
	}
}

func ptr(s string) *string { return &s }

func allLeaders(ps kadm.PartitionDetails) bool {
	for _, p := range ps {
		if p.Leader < 0 || p.Err != nil {
			return false
		}
	}
	return true
}

// envDump reads every record of topic with franz-go, by partition in
// offset order.
func envDump(t *testing.T, b *bed, topic string, n int) map[int32][]*kgo.Record {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	cl := b.k.Client(t, kgo.ConsumeTopics(topic), kgo.ConsumeResetOffset(kgo.NewOffset().AtStart()), kgo.FetchMaxBytes(64<<20))
	out := map[int32][]*kgo.Record{}
	for got := 0; got < n; {
		fs := cl.PollFetches(ctx)
		if ctx.Err() != nil {
			t.Fatalf("read %s: %d of %d records", topic, got, n)
		}
		fs.EachError(func(_ string, p int32, err error) { t.Fatalf("fetch %s/%d: %v", topic, p, err) })
		fs.EachRecord(func(r *kgo.Record) { out[r.Partition] = append(out[r.Partition], r); got++ })
	}
	for _, rs := range out {
		sort.SliceStable(rs, func(a, b int) bool { return rs[a].Offset < rs[b].Offset })
	}
	return out
}

// envSame compares two dumps record for record: partition, order (offset),
// key, value, headers (nil and empty apart), timestamp and timestamp type.
// It returns how many records differ, reporting the first few.
func envSame(t *testing.T, what string, got, want map[int32][]*kgo.Record) int {
	t.Helper()
	optEq := func(a, b []byte) bool { return bytes.Equal(a, b) && (a == nil) == (b == nil) }
	bad := 0
	report := func(format string, a ...any) {
		bad++
		if bad <= 10 {
			t.Errorf(what+": "+format, a...)
		}
	}
	for p := range int32(envParts) {
		g, w := got[p], want[p]
		if len(g) != len(w) {
			report("partition %d: %d records, want %d", p, len(g), len(w))
			continue
		}
		for i := range w {
			a, e := g[i], w[i]
			switch {
			case a.Partition != e.Partition || a.Offset != e.Offset:
				report("record %d/%d at %d/%d", e.Partition, e.Offset, a.Partition, a.Offset)
			case !optEq(a.Key, e.Key):
				report("%d/%d: key %q (nil %v), want %q (nil %v)", p, e.Offset, a.Key, a.Key == nil, e.Key, e.Key == nil)
			case !optEq(a.Value, e.Value):
				report("%d/%d: value of %d bytes (nil %v), want %d bytes (nil %v)", p, e.Offset, len(a.Value), a.Value == nil, len(e.Value), e.Value == nil)
			case !a.Timestamp.Equal(e.Timestamp) || a.Attrs.TimestampType() != e.Attrs.TimestampType():
				report("%d/%d: timestamp %v type %d, want %v type %d", p, e.Offset, a.Timestamp, a.Attrs.TimestampType(), e.Timestamp, e.Attrs.TimestampType())
			case len(a.Headers) != len(e.Headers):
				report("%d/%d: %d headers, want %d", p, e.Offset, len(a.Headers), len(e.Headers))
			default:
				for j, h := range e.Headers {
					if a.Headers[j].Key != h.Key || !optEq(a.Headers[j].Value, h.Value) {
						report("%d/%d header %d: %q=%q (nil %v), want %q=%q (nil %v)", p, e.Offset, j,
							a.Headers[j].Key, a.Headers[j].Value, a.Headers[j].Value == nil, h.Key, h.Value, h.Value == nil)
					}
				}
			}
		}
	}
	return bad
}

// envPyFile is one file as testdata/envelope/read.py reports it.
type envPyFile struct {
	Reader     string
	SchemaName string `json:"schema_name"`
	Columns    map[string]string
	Rows       []envPyRow
	DuckDB     *struct {
		Rows       int64
		NullValues int64   `json:"null_values"`
		NullKeys   int64   `json:"null_keys"`
		Headers    int64   `json:"headers"`
		MinOffset  int64   `json:"min_offset"`
		MaxOffset  int64   `json:"max_offset"`
		MinTS      int64   `json:"min_ts"`
		ValueIDs   []int64 `json:"value_ids"`
	} `json:"duckdb"`
}

type envPyRow struct {
	Partition     int32
	Offset        int64
	Timestamp     int64
	TimestampType string `json:"timestamp_type"`
	Key           any
	Value         any
	Headers       []struct {
		Key   string
		Value any
	}
}

// envPyRead runs read.py on files.
func envPyRead(t *testing.T, files []string) map[string]envPyFile {
	t.Helper()
	out, err := exec.Command("python3", append([]string{"../../testdata/envelope/read.py"}, files...)...).Output()
	if err != nil {
		if ee, ok := err.(*exec.ExitError); ok {
			t.Fatalf("read.py: %v\n%s", err, ee.Stderr)
		}
		t.Fatal(err)
	}
	var got map[string]envPyFile
	if err := json.Unmarshal(out, &got); err != nil {
		t.Fatalf("read.py output: %v\n%.500s", err, out)
	}
	return got
}

func envHex(b []byte) any {
	if b == nil {
		return nil
	}
	return "hex:" + hex.EncodeToString(b)
}

// envCheckPy compares what an independent reader (fastavro, pyarrow) read
// from the envelope objects of one Kafka partition with the produced
// records: every field of every row, in order.
func envCheckPy(t *testing.T, what string, rows []envPyRow, want []*kgo.Record) {
	t.Helper()
	if len(rows) != len(want) {
		t.Fatalf("%s: %d rows, want %d", what, len(rows), len(want))
	}
	bad := 0
	for i, w := range want {
		r := rows[i]
		hs := make([]any, 0)
		for _, h := range w.Headers {
			hs = append(hs, map[string]any{"Key": h.Key, "Value": envHex(h.Value)})
		}
		gh := make([]any, 0)
		for _, h := range r.Headers {
			gh = append(gh, map[string]any{"Key": h.Key, "Value": h.Value})
		}
		if r.Partition != w.Partition || r.Offset != w.Offset || r.Timestamp != w.Timestamp.UnixMilli() || r.TimestampType != "CreateTime" ||
			fmt.Sprint(r.Key) != fmt.Sprint(envHex(w.Key)) || fmt.Sprint(r.Value) != fmt.Sprint(envHex(w.Value)) || fmt.Sprint(gh) != fmt.Sprint(hs) {
			bad++
			if bad < 5 {
				t.Errorf("%s: row %d: %+v\nwant partition %d offset %d ts %d key %v headers %v", what, i, r, w.Partition, w.Offset, w.Timestamp.UnixMilli(), envHex(w.Key), hs)
			}
		}
	}
}

// TestIntegrationEnvelope produces a hostile corpus of 2,202 records in 3
// partitions with franz-go, archives it with `kafkas3 sink --once` and
// store.envelope=true into versitygw as JSON, Avro and Parquet, restores
// each archive with `kafkas3 source` into a new topic (retention.ms=-1),
// and compares every record of a franz-go dump of the restored topic with
// a dump of the source topic: partition, order, key, value, headers,
// timestamp and timestamp type. fastavro reads the Avro envelopes and
// pyarrow (and DuckDB when installed) the Parquet ones, every field of
// every row compared with the produced records. Finally Avro values with a
// registry schema are archived as Avro and Parquet envelopes, and the
// nested value's fields are read by fastavro, pyarrow and a DuckDB query.
func TestIntegrationEnvelope(t *testing.T) {
	if err := exec.Command("python3", "-c", "import fastavro, pyarrow").Run(); err != nil {
		t.Fatalf("python3 with fastavro and pyarrow is required: %v", err)
	}
	haveDuck := exec.Command("python3", "-c", "import duckdb").Run() == nil
	if !haveDuck {
		t.Log("duckdb is not installed (pip install duckdb): the DuckDB checks are skipped")
	}
	b := newBed(t)
	topic := srcUnique("e2e-env")
	envCreateTopic(t, b, topic, envParts)
	ctx, cancel := context.WithTimeout(context.Background(), 3*time.Minute)
	defer cancel()
	cl := b.k.Client(t, kgo.RecordPartitioner(kgo.ManualPartitioner()), kgo.ProducerBatchMaxBytes(4<<20), kgo.MaxBufferedBytes(64<<20))
	var recs []*kgo.Record
	for p := range int32(envParts) {
		for i := range envPerPart {
			recs = append(recs, envRecord(topic, p, i))
		}
	}
	if err := cl.ProduceSync(ctx, recs...).FirstErr(); err != nil {
		t.Fatal(err)
	}
	const total = envParts * envPerPart
	source := envDump(t, b, topic, total)

	for _, tc := range []struct{ name, class, ext string }{
		{"json", "io.confluent.connect.s3.format.json.JsonFormat", ".json"},
		{"avro", "io.confluent.connect.s3.format.avro.AvroFormat", ".avro"},
		{"parquet", "io.confluent.connect.s3.format.parquet.ParquetFormat", ".snappy.parquet"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			bucket := b.s.CreateBucket(t)
			c := b.sinkConf("e2e-env-"+tc.name+"-"+topic, topic, bucket).with(
				"flush.size", "300", "format.class", tc.class, "store.envelope", "true", "avro.codec", "deflate")
			sum, _ := runOnce(t, "sink --once "+tc.name, c.write(t))
			if sum.records != total {
				t.Fatalf("sink summary %s, want %d records", sum.line, total)
			}
			files := b.download(t, bucket)
			var paths []string
			perPart := map[int32][]string{}
			for k, f := range files {
				if strings.HasPrefix(k, "_kafkas3/") {
					continue
				}
				if !strings.HasSuffix(k, tc.ext) {
					t.Errorf("object %s: want %s", k, tc.ext)
				}
				var p int32
				if _, err := fmt.Sscanf(k[strings.LastIndex(k, "/")+1+len(topic):], "+%d+", &p); err != nil {
					t.Fatalf("object %s: %v", k, err)
				}
				perPart[p] = append(perPart[p], f)
				paths = append(paths, f)
			}
			if tc.name != "json" {
				read := envPyRead(t, paths)
				for p := range int32(envParts) {
					fs := perPart[p]
					sort.Strings(fs) // zero-padded start offsets
					var rows []envPyRow
					for _, f := range fs {
						r := read[f]
						if tc.name == "avro" && (r.Reader != "fastavro" || r.SchemaName != format.EnvelopeSchemaName) {
							t.Errorf("%s: reader %s schema %q", f, r.Reader, r.SchemaName)
						}
						if tc.name == "parquet" {
							if r.Columns["timestamp"] != "timestamp[ms, tz=UTC]" || r.Columns["key"] != "binary" ||
								!strings.HasPrefix(r.Columns["headers"], "list<element: struct<key: string not null, value: binary>") {
								t.Errorf("%s: pyarrow columns %v", f, r.Columns)
							}
							if haveDuck && (r.DuckDB == nil || r.DuckDB.Rows != int64(len(r.Rows))) {
								t.Errorf("%s: duckdb %+v, want %d rows", f, r.DuckDB, len(r.Rows))
							}
						}
						rows = append(rows, r.Rows...)
					}
					envCheckPy(t, fmt.Sprintf("%s partition %d (%s)", tc.name, p, read[fs[0]].Reader), rows, source[p])
				}
				if haveDuck && tc.name == "parquet" {
					var nullValues, nullKeys, headers, rows int64
					minTS := int64(1) << 62
					for _, f := range paths {
						d := read[f].DuckDB
						nullValues, nullKeys, headers, rows = nullValues+d.NullValues, nullKeys+d.NullKeys, headers+d.Headers, rows+d.Rows
						minTS = min(minTS, d.MinTS)
					}
					var wv, wk, wh int64
					wantMin := int64(1) << 62
					for _, r := range recs {
						wantMin = min(wantMin, r.Timestamp.UnixMilli())
						wh += int64(len(r.Headers))
						if r.Value == nil {
							wv++
						}
						if r.Key == nil {
							wk++
						}
					}
					if rows != total || nullValues != wv || nullKeys != wk || headers != wh || minTS != wantMin {
						t.Errorf("duckdb: %d rows, %d null values, %d null keys, %d headers, min timestamp %d; want %d, %d, %d, %d, %d",
							rows, nullValues, nullKeys, headers, minTS, total, wv, wk, wh, wantMin)
					}
				}
			}

			target := topic + "-restored-" + tc.name
			envCreateTopic(t, b, target, envParts)
			rs, _ := srcRunOK(t, "source "+tc.name, c.write(t), "--topic-rename", target)
			if rs.records != total || rs.skipped != 0 || rs.gaps != 0 || rs.damaged != 0 {
				t.Fatalf("source summary %s, want %d records, nothing skipped", rs.line, total)
			}
			if bad := envSame(t, tc.name, envDump(t, b, target, total), source); bad != 0 {
				t.Fatalf("%s: %d of %d records differ", tc.name, bad, total)
			}
			t.Logf("%s: %d records in %d objects restored identically (partition, offset, key, value, headers, timestamp, type)", tc.name, total, len(paths))
		})
	}

	t.Run("typed", func(t *testing.T) { envTyped(t, b, haveDuck) })
}

const envTypedSchema = `{"type":"record","name":"Order","namespace":"e2e","fields":[{"name":"id","type":"long"},{"name":"item","type":["null","string"],"default":null}]}`

// envTyped archives values with a registry schema (AvroConverter) as Avro
// and Parquet envelopes and has fastavro, pyarrow and DuckDB read the
// nested value's fields; then restores the Parquet archive against a second
// registry and compares the decoded values.
func envTyped(t *testing.T, b *bed, haveDuck bool) {
	const n = 20
	topic := srcUnique("e2e-env-typed")
	envCreateTopic(t, b, topic, 1)
	reg := typedRegistry(t)
	ser := typedConverter(t, reg.URL())
	parsed, err := avro.Parse(envTypedSchema)
	if err != nil {
		t.Fatal(err)
	}
	schema := &format.Schema{Avro: parsed, Text: envTypedSchema}
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	var recs []*kgo.Record
	for i := range n {
		r := &kgo.Record{Topic: topic, Key: fmt.Appendf(nil, "k%d", i), Timestamp: time.UnixMilli(1_000_000_000_000 + int64(i))}
		if i%5 != 4 { // every fifth a tombstone
			if r.Value, err = ser.Encode(ctx, convert.SubjectName(topic, false), schema, map[string]any{"id": int64(i), "item": fmt.Sprint("item-", i)}); err != nil {
				t.Fatal(err)
			}
		}
		recs = append(recs, r)
	}
	if err := b.k.Client(t).ProduceSync(ctx, recs...).FirstErr(); err != nil {
		t.Fatal(err)
	}
	for _, class := range []string{"io.confluent.connect.s3.format.avro.AvroFormat", "io.confluent.connect.s3.format.parquet.ParquetFormat"} {
		bucket := b.s.CreateBucket(t)
		c := b.sinkConf("e2e-env-typed-"+path.Ext(class)+topic, topic, bucket).with("flush.size", "1000", "format.class", class, "store.envelope", "true",
			"value.converter", "io.confluent.connect.avro.AvroConverter", "value.converter.schema.registry.url", reg.URL())
		if sum, _ := runOnce(t, "sink --once typed", c.write(t)); sum.records != n {
			t.Fatalf("sink summary %s", sum.line)
		}
		var paths []string
		for k, f := range b.download(t, bucket) {
			if !strings.HasPrefix(k, "_kafkas3/") {
				paths = append(paths, f)
			}
		}
		if len(paths) != 1 {
			t.Fatalf("%d objects, want 1", len(paths))
		}
		r := envPyRead(t, paths)[paths[0]]
		if len(r.Rows) != n {
			t.Fatalf("%s: %d rows", r.Reader, len(r.Rows))
		}
		var ids []int64
		for i, row := range r.Rows {
			if i%5 == 4 {
				if row.Value != nil {
					t.Errorf("%s row %d: value %v, want null", r.Reader, i, row.Value)
				}
				continue
			}
			v, ok := row.Value.(map[string]any)
			if !ok || v["id"] != float64(i) || v["item"] != fmt.Sprint("item-", i) {
				t.Errorf("%s row %d: value %#v, want the nested record {id, item}", r.Reader, i, row.Value)
			}
			ids = append(ids, int64(i))
		}
		if strings.Contains(class, "parquet") {
			if !strings.HasPrefix(r.Columns["value"], "struct<id: int64 not null, item: string>") {
				t.Errorf("pyarrow value column %s, want a struct", r.Columns["value"])
			}
			if haveDuck && (r.DuckDB == nil || fmt.Sprint(r.DuckDB.ValueIDs) != fmt.Sprint(ids)) {
				t.Errorf("duckdb SELECT value.id: %+v, want %v", r.DuckDB, ids)
			}
			// Restore against a second registry.
			dst := typedRegistry(t)
			target := topic + "-restored"
			envCreateTopic(t, b, target, 1)
			rs, _ := srcRunOK(t, "source typed", c.with("value.converter.schema.registry.url", dst.URL()).write(t), "--topic-rename", target)
			if rs.records != n {
				t.Fatalf("source summary %s", rs.line)
			}
			de := typedConverter(t, dst.URL())
			for i, g := range envDump(t, b, target, n)[0] {
				w := recs[i]
				if string(g.Key) != string(w.Key) || !g.Timestamp.Equal(w.Timestamp) || (g.Value == nil) != (w.Value == nil) {
					t.Errorf("restored %d: key %q ts %v nil value %v", i, g.Key, g.Timestamp, g.Value == nil)
					continue
				}
				if w.Value == nil {
					continue
				}
				typed, err := de.Convert(ctx, target, false, g.Value)
				if err != nil {
					t.Fatal(err)
				}
				v, _ := format.AvroNative(typed)
				if m, _ := v.(map[string]any); m["id"] != int64(i) || m["item"] != fmt.Sprint("item-", i) {
					t.Errorf("restored %d: value %#v", i, v)
				}
			}
		}
	}
}
