//go:build integration

package e2e

import (
	"context"
	"encoding/json"
	"fmt"
	"math/big"
	"os"
	"os/exec"
	"path/filepath"
	"sort"
	"strings"
	"testing"
	"time"

	"github.com/twmb/avro"
	"github.com/twmb/franz-go/pkg/kgo"

	"github.com/kafkas3/kafkas3/convert"
	"github.com/kafkas3/kafkas3/format"
	"github.com/kafkas3/kafkas3/internal/srfake"
)

// typedSchema covers what the Parquet mapping must handle: a nested record,
// an array of records, a map, nullable fields (a primitive and a named
// record reused by reference), an enum, the date and timestamp logical
// types and a decimal.
const typedSchema = `{"type":"record","name":"Order","namespace":"shop","fields":[
 {"name":"id","type":"long"},
 {"name":"qty","type":"int"},
 {"name":"ok","type":"boolean"},
 {"name":"score","type":"double"},
 {"name":"name","type":"string"},
 {"name":"status","type":{"type":"enum","name":"Status","symbols":["NEW","PAID","SHIPPED"]}},
 {"name":"day","type":{"type":"int","logicalType":"date"}},
 {"name":"at_ms","type":{"type":"long","logicalType":"timestamp-millis"}},
 {"name":"at_us","type":{"type":"long","logicalType":"timestamp-micros"}},
 {"name":"price","type":{"type":"bytes","logicalType":"decimal","precision":12,"scale":2}},
 {"name":"note","type":["null","string"],"default":null},
 {"name":"address","type":{"type":"record","name":"Address","fields":[
   {"name":"street","type":"string"},{"name":"zip","type":["null","int"],"default":null}]}},
 {"name":"lines","type":{"type":"array","items":{"type":"record","name":"Line","fields":[
   {"name":"sku","type":"string"},{"name":"n","type":"int"}]}}},
 {"name":"attrs","type":{"type":"map","values":"string"}},
 {"name":"billing","type":["null","Address"],"default":null}]}`

// typedValue is record i of partition p, in twmb/avro's Go representation.
func typedValue(p int32, i int) map[string]any {
	ts := time.Date(2024, 3, 9, 12, 34, 56, 789123000, time.UTC).Add(time.Duration(i) * time.Hour)
	v := map[string]any{
		"id": int64(p)*1_000_000 + int64(i), "qty": int32(i%7 - 3), "ok": i%2 == 0, "score": float64(i) / 4,
		"name":   fmt.Sprintf("order ünï %d/%d", p, i),
		"status": []string{"NEW", "PAID", "SHIPPED"}[i%3],
		"day":    time.Date(1969+i%60, time.Month(1+i%12), 1+i%28, 0, 0, 0, 0, time.UTC),
		"at_ms":  ts.Truncate(time.Millisecond), "at_us": ts.Truncate(time.Microsecond),
		"price":   big.NewRat(int64(i*1234-5000), 100),
		"note":    nil,
		"address": map[string]any{"street": fmt.Sprintf("Main %d", i), "zip": nil},
		"lines":   []any{},
		"attrs":   map[string]any{},
		"billing": nil,
	}
	if i%3 != 0 {
		v["note"] = fmt.Sprintf("note %d", i)
		v["address"] = map[string]any{"street": "", "zip": int32(10000 + i)}
		v["billing"] = map[string]any{"street": "Bill", "zip": nil}
	}
	for j := range i % 4 {
		v["lines"] = append(v["lines"].([]any), map[string]any{"sku": fmt.Sprintf("sku-%d", j), "n": int32(j)})
		v["attrs"].(map[string]any)[fmt.Sprintf("k%d", j)] = fmt.Sprintf("v%d", j)
	}
	return v
}

// typedExpect renders an Avro value the way testdata/typed/read.py
// renders fastavro's and pyarrow's.
func typedExpect(t *testing.T, n *avro.SchemaNode, v any) any {
	t.Helper()
	if n.Type == "union" {
		if v == nil {
			return nil
		}
		for i := range n.Branches {
			if n.Branches[i].Type != "null" {
				return typedExpect(t, &n.Branches[i], v)
			}
		}
	}
	switch n.Type {
	case "record":
		m := v.(map[string]any)
		out := map[string]any{}
		for i := range n.Fields {
			out[n.Fields[i].Name] = typedExpect(t, &n.Fields[i].Type, m[n.Fields[i].Name])
		}
		return out
	case "array":
		out := []any{}
		for _, x := range v.([]any) {
			out = append(out, typedExpect(t, n.Items, x))
		}
		return out
	case "map":
		out := map[string]any{}
		for k, x := range v.(map[string]any) {
			out[k] = typedExpect(t, n.Values, x)
		}
		return out
	}
	switch n.LogicalType {
	case "date":
		return v.(time.Time).Format(time.DateOnly)
	case "timestamp-millis", "timestamp-micros":
		return v.(time.Time).UnixMicro()
	case "decimal":
		return v.(*big.Rat).FloatString(n.Scale)
	}
	return v
}

// canonJSON is v through JSON and back, marshalled with sorted keys, so
// values from Go and from Python compare as strings.
func canonJSON(t *testing.T, v any) string {
	t.Helper()
	b, err := json.Marshal(v)
	if err != nil {
		t.Fatal(err)
	}
	var x any
	if err := json.Unmarshal(b, &x); err != nil {
		t.Fatal(err)
	}
	b, _ = json.Marshal(x)
	return string(b)
}

// typedRegistry starts an in-process Schema Registry over loopback HTTP.
func typedRegistry(t *testing.T) *srfake.Server {
	t.Helper()
	s, err := srfake.Start(srfake.Config{})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = s.Close() })
	return s
}

func typedConverter(t *testing.T, url string) *convert.AvroConverter {
	t.Helper()
	c, err := convert.NewAvro(convert.Config{Kind: convert.KindAvro, SchemaRegistryURL: url})
	if err != nil {
		t.Fatal(err)
	}
	return c
}

// typedPyRead runs testdata/typed/read.py on files.
func typedPyRead(t *testing.T, files []string) map[string]struct {
	Reader, Codec, Schema string
	Rows                  []any
} {
	t.Helper()
	out, err := exec.Command("python3", append([]string{"../../testdata/typed/read.py"}, files...)...).Output()
	if err != nil {
		if ee, ok := err.(*exec.ExitError); ok {
			t.Fatalf("read.py: %v\n%s", err, ee.Stderr)
		}
		t.Fatal(err)
	}
	var got map[string]struct {
		Reader, Codec, Schema string
		Rows                  []any
	}
	if err := json.Unmarshal(out, &got); err != nil {
		t.Fatalf("read.py output: %v\n%.500s", err, out)
	}
	return got
}

// TestIntegrationTypedArchives produces Avro records in Confluent's wire
// format (schema registered over real HTTP with an in-process registry),
// archives them with the real `kafkas3 sink --once` as AvroFormat and as
// ParquetFormat, has fastavro and pyarrow read every object and compares
// the values with what was produced; then restores both archives with
// `kafkas3 source` against a second registry and decodes what landed.
func TestIntegrationTypedArchives(t *testing.T) {
	if err := exec.Command("python3", "-c", "import fastavro, pyarrow").Run(); err != nil {
		t.Fatalf("python3 with fastavro and pyarrow is required (pip install fastavro pyarrow): %v", err)
	}
	b := newBed(t)
	topic := srcUnique("e2e-typed")
	const parts, perPart, flush = 2, 25, 10
	b.k.CreateTopic(t, topic, parts)

	// Produce with a registry-aware serializer, as a Confluent producer does.
	srcReg := typedRegistry(t)
	parsed, err := avro.Parse(typedSchema)
	if err != nil {
		t.Fatal(err)
	}
	schema := &format.Schema{Avro: parsed, Text: typedSchema}
	ser := typedConverter(t, srcReg.URL())
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	cl := b.k.Client(t, kgo.RecordPartitioner(kgo.ManualPartitioner()))
	for p := range int32(parts) {
		for i := range perPart {
			v, err := ser.Encode(ctx, convert.SubjectName(topic, false), schema, typedValue(p, i))
			if err != nil {
				t.Fatal(err)
			}
			if err := cl.ProduceSync(ctx, &kgo.Record{Topic: topic, Partition: p, Key: key(p, i), Value: v}).FirstErr(); err != nil {
				t.Fatal(err)
			}
		}
	}
	root := parsed.Root().ExpandReferences()
	want := func(p int32, i int) string { return canonJSON(t, typedExpect(t, root, typedValue(p, i))) }

	for _, tc := range []struct {
		name, class, codecKey, codec, ext, wantCodec string
	}{
		// deflate: fastavro reads it with zlib alone (its snappy needs cramjam).
		{"Avro", "io.confluent.connect.s3.format.avro.AvroFormat", "avro.codec", "deflate", ".avro", "deflate"},
		{"Parquet", "io.confluent.connect.s3.format.parquet.ParquetFormat", "parquet.codec", "zstd", ".zstd.parquet", "ZSTD"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			bucket := b.s.CreateBucket(t)
			c := b.sinkConf("e2e-typed-"+strings.ToLower(tc.name)+"-"+topic, topic, bucket).with(
				"flush.size", fmt.Sprint(flush), "format.class", tc.class, tc.codecKey, tc.codec,
				"value.converter", "io.confluent.connect.avro.AvroConverter",
				"value.converter.schema.registry.url", srcReg.URL())
			sum, _ := runOnce(t, tc.name+" sink --once", c.write(t))
			if sum.records != parts*perPart {
				t.Fatalf("sink summary %s, want %d records", sum.line, parts*perPart)
			}

			// Every object, read by an independent implementation.
			objs, _ := splitIndex(b.snapshot(t, bucket))
			dir := t.TempDir()
			var files []string
			byFile := map[string]string{}
			for k, o := range objs {
				f := filepath.Join(dir, filepath.Base(k))
				if err := os.WriteFile(f, o.data, 0o644); err != nil {
					t.Fatal(err)
				}
				files = append(files, f)
				byFile[f] = k
			}
			sort.Strings(files)
			var wantKeys []string
			for p := range int32(parts) {
				for off := 0; off < perPart; off += flush {
					wantKeys = append(wantKeys, fmt.Sprintf("topics/%s/partition=%d/%s+%d+%010d%s", topic, p, topic, p, off, tc.ext))
				}
			}
			var gotKeys []string
			for k := range objs {
				gotKeys = append(gotKeys, k)
			}
			sort.Strings(gotKeys)
			if strings.Join(gotKeys, "\n") != strings.Join(wantKeys, "\n") {
				t.Fatalf("objects:\n%s\nwant:\n%s", strings.Join(gotKeys, "\n"), strings.Join(wantKeys, "\n"))
			}
			got := typedPyRead(t, files)
			rows := 0
			for _, f := range files {
				r, ok := got[f]
				if !ok {
					t.Fatalf("%s: not in read.py's output", byFile[f])
				}
				if r.Codec != tc.wantCodec {
					t.Errorf("%s: %s sees codec %q, want %q", byFile[f], r.Reader, r.Codec, tc.wantCodec)
				}
				if r.Schema == "" {
					t.Errorf("%s: no Avro schema in the file", byFile[f])
				}
				var p int32
				var off int
				if _, err := fmt.Sscanf(strings.TrimPrefix(filepath.Base(f), topic), "+%d+%d", &p, &off); err != nil {
					t.Fatalf("%s: %v", f, err)
				}
				if n := min(flush, perPart-off); len(r.Rows) != n {
					t.Fatalf("%s: %s read %d records, want %d", byFile[f], r.Reader, len(r.Rows), n)
				}
				for j, row := range r.Rows {
					if g, w := canonJSON(t, row), want(p, off+j); g != w {
						t.Errorf("%s record %d (%s):\n got %s\nwant %s", byFile[f], j, r.Reader, g, w)
					}
					rows++
				}
			}
			if t.Failed() {
				return
			}
			t.Logf("%s read %d %s objects, %d records, every value equal to what was produced", got[files[0]].Reader, len(files), tc.ext, rows)

			// Restore into a new topic with a second registry as the target's.
			dstReg := typedRegistry(t)
			target := "restored-" + strings.ToLower(tc.name) + "-" + topic
			sc := c.with("value.converter.schema.registry.url", dstReg.URL())
			rs, _ := srcRunOK(t, tc.name+" source", sc.write(t), "--topic-rename", target, "--create-topics")
			if rs.records != parts*perPart {
				t.Fatalf("source summary %s, want %d records", rs.line, parts*perPart)
			}
			de := typedConverter(t, dstReg.URL())
			rcl := b.k.Client(t, kgo.ConsumeTopics(target), kgo.ConsumeResetOffset(kgo.NewOffset().AtStart()))
			next := map[int32]int{}
			for n := 0; n < parts*perPart; {
				fs := rcl.PollFetches(ctx)
				if ctx.Err() != nil {
					t.Fatalf("read %s: %d of %d records", target, n, parts*perPart)
				}
				fs.EachError(func(_ string, p int32, err error) { t.Fatalf("fetch %s/%d: %v", target, p, err) })
				fs.EachRecord(func(r *kgo.Record) {
					i := next[r.Partition]
					next[r.Partition]++
					n++
					typed, err := de.Convert(ctx, target, false, r.Value)
					if err != nil {
						t.Fatalf("%s/%d offset %d: %v", target, r.Partition, r.Offset, err)
					}
					if typed.Schema.Version != 1 {
						t.Errorf("%s/%d offset %d: schema id %d is version %d under %s-value, want 1", target, r.Partition, r.Offset, typed.Schema.ID, typed.Schema.Version, target)
					}
					v, err := format.AvroNative(typed)
					if err != nil {
						t.Fatal(err)
					}
					if g, w := canonJSON(t, typedExpect(t, root, v)), want(r.Partition, i); g != w {
						t.Errorf("%s/%d offset %d:\n got %s\nwant %s", target, r.Partition, r.Offset, g, w)
					}
				})
			}
			// Partitions are restored in parallel, so each may register the
			// (same) schema once; every record above decoded as version 1.
			if n := dstReg.Requests("POST", "/subjects/"+target+"-value/versions"); n < 1 || n > parts {
				t.Errorf("the target registry got %d registrations under %s-value, want 1..%d", n, target, parts)
			}
			if !t.Failed() {
				t.Logf("restored %d records into %s, framed for the second registry, every value equal", parts*perPart, target)
			}
		})
	}
}
