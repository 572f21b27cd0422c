package cmd

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"

	"github.com/kafkas3/kafkas3/convert"
	"github.com/kafkas3/kafkas3/format"
	"github.com/kafkas3/kafkas3/internal/srfake"
	"github.com/twmb/avro"
	"github.com/twmb/franz-go/pkg/kgo"
)

func startRegistry(t *testing.T) (*srfake.Server, *convert.AvroConverter) {
	t.Helper()
	s, err := srfake.Start(srfake.Config{})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = s.Close() })
	c, err := convert.NewAvro(convert.Config{Kind: convert.KindAvro, SchemaRegistryURL: s.URL()})
	if err != nil {
		t.Fatal(err)
	}
	return s, c
}

// TestSourceCmdTypedArchives archives Avro wire-format records with the real
// sink as Avro and as Parquet, adds hand-written .keys and .headers objects
// (Confluent's store.kafka.keys/headers layout) next to one object, and
// restores with `kafkas3 source` against another registry: values come back
// framed for the target registry under <target>-value, keys and headers
// from the parallel objects.
func TestSourceCmdTypedArchives(t *testing.T) {
	ctx := cliContext(t)
	const schemaText = `{"type":"record","name":"r","fields":[{"name":"id","type":"long"},{"name":"name","type":["null","string"]},
		{"name":"day","type":{"type":"int","logicalType":"date"}}]}`
	brokers := startKafka(t, 1, "orders")
	srcReg, ser := startRegistry(t)
	parsed, err := avro.Parse(schemaText)
	if err != nil {
		t.Fatal(err)
	}
	schema := &format.Schema{Avro: parsed, Text: schemaText}
	cl, err := kgo.NewClient(kgo.SeedBrokers(strings.Split(brokers, ",")...), kgo.DefaultProduceTopic("orders"))
	if err != nil {
		t.Fatal(err)
	}
	defer cl.Close()
	var want []map[string]any
	for i := range 5 {
		v := map[string]any{"id": int64(i), "name": nil, "day": int32(19000 + i)}
		if i%2 == 0 {
			v["name"] = fmt.Sprintf("n%d", i)
		}
		b, err := ser.Encode(ctx, "orders-value", schema, v)
		if err != nil {
			t.Fatal(err)
		}
		if err := cl.ProduceSync(ctx, &kgo.Record{Value: b}).FirstErr(); err != nil {
			t.Fatal(err)
		}
		// What a decoder gives back.
		typed, err := ser.Convert(ctx, "orders", false, b)
		if err != nil {
			t.Fatal(err)
		}
		nat, err := format.AvroNative(typed)
		if err != nil {
			t.Fatal(err)
		}
		want = append(want, nat.(map[string]any))
	}

	for _, tc := range []struct{ name, format, ext string }{
		{"avro", "avro", ".avro"},
		{"parquet", "parquet", ".snappy.parquet"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			dir := t.TempDir()
			y := strings.Replace(sinkYAML(brokers, dir, "orders", 3), "io.confluent.connect.s3.format.json.JsonFormat", tc.format, 1)
			y = strings.Replace(y, "name: test-sink", "name: typed-"+tc.name, 1)
			// The keys and headers objects are added by hand below, as
			// Confluent's connector would write them: no archive index.
			cfg := writeFile(t, "sink.yaml", y+"value.converter: io.confluent.connect.avro.AvroConverter\nvalue.converter.schema.registry.url: "+srcReg.URL()+"\nkafkas3.index.enabled: false\n")
			mustRun(t, ctx, ExitOK, "sink", "-c", cfg, "--once", "--log-level", "warn")
			// Keys and headers of the first object (offsets 0..2).
			base := "topics/orders/partition=0/orders+0+0000000000"
			if _, err := os.Stat(filepath.Join(dir, filepath.FromSlash(base+tc.ext))); err != nil {
				t.Fatalf("the sink did not write %s: %v", base+tc.ext, err)
			}
			writeArchiveFile(t, dir, base+".keys.json", "\"key-0\"\nnull\n\"key-2\"\n")
			writeArchiveFile(t, dir, base+".headers.json", "[{\"key\":\"h\",\"value\":\"0\"}]\n[]\n[{\"key\":\"a\",\"value\":null},{\"key\":\"b\",\"value\":\"2\"}]\n")

			dstReg, de := startRegistry(t)
			target := "copy_" + tc.name
			r := mustRun(t, ctx, ExitOK, "source", "-c", cfg, "--topic-rename", target, "--create-topics",
				"-p", "value.converter.schema.registry.url="+dstReg.URL(), "--log-level", "warn")
			if !strings.Contains(r.out, "objects=2 records=5 ") {
				t.Errorf("summary: %q", r.out)
			}
			recs := consumeAll(t, ctx, brokers, target, 5)
			// The JSON key line null is a null key (the text null is the line "null").
			wantKeys := []string{"key-0", "", "key-2", "", ""}
			wantHdrs := []string{"h=0", "", "a=<nil>,b=2", "", ""}
			for i, rec := range recs {
				typed, err := de.Convert(ctx, target, false, rec.Value)
				if err != nil {
					t.Fatalf("record %d: %v", i, err)
				}
				if typed.Schema.Version != 1 {
					t.Errorf("record %d: schema id %d not registered under %s-value", i, typed.Schema.ID, target)
				}
				got, err := format.AvroNative(typed)
				if err != nil {
					t.Fatal(err)
				}
				if !reflect.DeepEqual(got, want[i]) {
					t.Errorf("record %d = %#v, want %#v", i, got, want[i])
				}
				if string(rec.Key) != wantKeys[i] || (rec.Key == nil) != (wantKeys[i] == "") {
					t.Errorf("record %d key %q, want %q", i, rec.Key, wantKeys[i])
				}
				var hs []string
				for _, h := range rec.Headers {
					v := string(h.Value)
					if h.Value == nil {
						v = "<nil>"
					}
					hs = append(hs, h.Key+"="+v)
				}
				if strings.Join(hs, ",") != wantHdrs[i] {
					t.Errorf("record %d headers %q, want %q", i, hs, wantHdrs[i])
				}
			}
			// The dry run shows the pairing.
			r = mustRun(t, ctx, ExitOK, "source", "-c", cfg, "--topic-rename", target, "--dry-run",
				"-p", "value.converter.schema.registry.url="+dstReg.URL())
			if !strings.Contains(r.out, "2 objects (1 with .keys, 1 with .headers objects)") {
				t.Errorf("dry run: %s", r.out)
			}
		})
	}
}

// consumeAll reads n records of topic from the start.
func consumeAll(t *testing.T, ctx context.Context, brokers, topic string, n int) []*kgo.Record {
	t.Helper()
	cl, err := kgo.NewClient(kgo.SeedBrokers(strings.Split(brokers, ",")...), kgo.ConsumeTopics(topic),
		kgo.ConsumeResetOffset(kgo.NewOffset().AtStart()))
	if err != nil {
		t.Fatal(err)
	}
	defer cl.Close()
	var out []*kgo.Record
	for len(out) < n {
		fs := cl.PollFetches(ctx)
		if ctx.Err() != nil {
			t.Fatalf("read %s: %d of %d records", topic, len(out), n)
		}
		fs.EachRecord(func(r *kgo.Record) { out = append(out, r) })
	}
	return out
}
