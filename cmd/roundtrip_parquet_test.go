package cmd

import (
	"bytes"
	"fmt"
	"reflect"
	"strings"
	"testing"
	"time"

	"github.com/kafkas3/kafkas3/convert"
	"github.com/kafkas3/kafkas3/format"
	"github.com/twmb/avro"
	"github.com/twmb/franz-go/pkg/kgo"
)

// TestRoundTripParquetKeysHeaders archives keys and headers as Parquet
// (keys.format.class and headers.format.class ParquetFormat: Confluent's
// RecordKey and RecordHeaders envelopes) and restores them with the
// source, which unwraps the envelopes.
func TestRoundTripParquetKeysHeaders(t *testing.T) {
	const n = 8 // records per partition

	// Untyped keys (Avro "bytes" in the envelope) next to JSON values.
	t.Run("bytes keys", func(t *testing.T) {
		ctx := cliContext(t)
		brokers := startKafka(t, 2, "rp")
		produced := rtProduce(t, ctx, brokers, "rp", n, func(p int32, i int) []byte {
			return []byte(fmt.Sprintf(`{"p":%d,"i":%d}`, p, i))
		})
		dir := t.TempDir()
		cfg := writeFile(t, "sink.yaml", sinkYAML(brokers, dir, "rp", 3)+`store.kafka.keys: true
store.kafka.headers: true
keys.format.class: io.confluent.connect.s3.format.parquet.ParquetFormat
headers.format.class: parquet
parquet.codec: zstd
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
		var nk, nh int
		for _, k := range keys {
			switch {
			case strings.HasSuffix(k, ".keys.zstd.parquet"):
				nk++
			case strings.HasSuffix(k, ".headers.zstd.parquet"):
				nh++
			case !strings.HasSuffix(k, ".json"):
				t.Errorf("object %s: want .json, .keys.zstd.parquet and .headers.zstd.parquet objects", k)
			}
		}
		if nk == 0 || nk != nh {
			t.Fatalf("%d keys and %d headers objects: %q", nk, nh, keys)
		}
		since := time.Now()
		r = mustRun(t, ctx, ExitOK, "source", "-c", cfg, "--topic-rename", "copy_of_$0", "--create-topics", "--log-level", "warn")
		if !strings.Contains(r.out, fmt.Sprintf(" records=%d ", 2*n)) || !strings.Contains(r.out, " skipped=0 ") {
			t.Errorf("source summary: %q", r.out)
		}
		got := byPartition(consumeAll(t, ctx, brokers, "copy_of_rp", 2*n)) // tombstones included
		for p := range int32(2) {
			rtCheck(t, p, got[p], produced[p], since, func(g, w []byte) string {
				if !bytes.Equal(g, w) {
					return fmt.Sprintf("value %q, want %q", g, w)
				}
				return ""
			})
		}
	})

	// Avro record keys (AvroConverter keys: their schema is the envelope's
	// field type) next to Parquet values; the source frames the keys for
	// the target registry under copy_of_rq-key.
	t.Run("avro keys", func(t *testing.T) {
		ctx := cliContext(t)
		const (
			valueSchema = `{"type":"record","name":"V","namespace":"rq","fields":[{"name":"i","type":"long"},{"name":"s","type":"string"}]}`
			keySchema   = `{"type":"record","name":"K","namespace":"rq","fields":[{"name":"p","type":"int"},{"name":"id","type":"string"}]}`
		)
		brokers := startKafka(t, 2, "rq")
		srcReg, ser := startRegistry(t)
		mk := func(text string) *format.Schema {
			s, err := avro.Parse(text)
			if err != nil {
				t.Fatal(err)
			}
			return &format.Schema{Avro: s, Text: text}
		}
		vs, ks := mk(valueSchema), mk(keySchema)
		cl, err := kgo.NewClient(kgo.SeedBrokers(strings.Split(brokers, ",")...), kgo.RecordPartitioner(kgo.ManualPartitioner()))
		if err != nil {
			t.Fatal(err)
		}
		defer cl.Close()
		produced := map[int32][]*kgo.Record{}
		var recs []*kgo.Record
		for p := range int32(2) {
			for i := range n {
				k, err := ser.Encode(ctx, "rq-key", ks, map[string]any{"p": p, "id": fmt.Sprintf("id-%d-%d", p, i)})
				if err != nil {
					t.Fatal(err)
				}
				r := &kgo.Record{Topic: "rq", Partition: p, Key: k, Headers: rtHeaders(p, i)}
				if !(p == 1 && i == 2) { // one tombstone
					if r.Value, err = ser.Encode(ctx, "rq-value", vs, map[string]any{"i": int64(i), "s": fmt.Sprintf("s%d", p)}); err != nil {
						t.Fatal(err)
					}
				}
				produced[p] = append(produced[p], r)
				recs = append(recs, r)
			}
		}
		if err := cl.ProduceSync(ctx, recs...).FirstErr(); err != nil {
			t.Fatal(err)
		}

		dir := t.TempDir()
		y := strings.Replace(sinkYAML(brokers, dir, "rq", 3), "io.confluent.connect.s3.format.json.JsonFormat", "parquet", 1)
		cfg := writeFile(t, "sink.yaml", y+`value.converter: io.confluent.connect.avro.AvroConverter
value.converter.schema.registry.url: `+srcReg.URL()+`
key.converter: io.confluent.connect.avro.AvroConverter
key.converter.schema.registry.url: `+srcReg.URL()+`
store.kafka.keys: true
store.kafka.headers: true
keys.format.class: parquet
headers.format.class: ParquetFormat
behavior.on.null.values: write
`)
		mustRun(t, ctx, ExitOK, "sink", "-c", cfg, "--once", "--log-level", "warn")
		keys := objectKeys(t, dir)
		if got := tombstoneObjects(t, keys, "tombstone"); got != 2 {
			t.Fatalf("%d objects in the tombstone folder, want 2: %q", got, keys)
		}
		for _, k := range keys {
			if !strings.HasSuffix(k, ".snappy.parquet") {
				t.Errorf("object %s: want .snappy.parquet, .keys.snappy.parquet and .headers.snappy.parquet objects", k)
			}
		}

		dstReg, de := startRegistry(t)
		r := mustRun(t, ctx, ExitOK, "source", "-c", cfg, "--topic-rename", "copy_of_$0", "--create-topics",
			"-p", "value.converter.schema.registry.url="+dstReg.URL(), "-p", "key.converter.schema.registry.url="+dstReg.URL(), "--log-level", "warn")
		if !strings.Contains(r.out, fmt.Sprintf(" records=%d ", 2*n)) || !strings.Contains(r.out, " skipped=0 ") {
			t.Errorf("source summary: %q", r.out)
		}
		got := byPartition(consumeAll(t, ctx, brokers, "copy_of_rq", 2*n)) // the tombstone included
		decode := func(c *convert.AvroConverter, topic string, isKey bool, b []byte) (any, *format.Typed) {
			t.Helper()
			typed, err := c.Convert(ctx, topic, isKey, b)
			if err != nil {
				t.Fatalf("decoding %x: %v", b, err)
			}
			nat, err := format.AvroNative(typed)
			if err != nil {
				t.Fatal(err)
			}
			return nat, typed
		}
		for p := range int32(2) {
			want := produced[p]
			if len(got[p]) != len(want) {
				t.Fatalf("partition %d: %d records, want %d", p, len(got[p]), len(want))
			}
			for i, g := range got[p] {
				w := want[i]
				gk, typed := decode(de, "copy_of_rq", true, g.Key)
				if typed.Schema.Version != 1 || typed.Schema.Avro.Root().Name != "K" {
					t.Errorf("partition %d record %d: key schema %s (id %d, version %d), want K registered under copy_of_rq-key",
						p, i, typed.Schema.Avro.String(), typed.Schema.ID, typed.Schema.Version)
				}
				if wk, _ := decode(ser, "rq", true, w.Key); !reflect.DeepEqual(gk, wk) {
					t.Errorf("partition %d record %d: key %#v, want %#v", p, i, gk, wk)
				}
				if w.Value == nil {
					if g.Value != nil {
						t.Errorf("partition %d record %d: value %x, want a tombstone (nil)", p, i, g.Value)
					}
				} else {
					gv, _ := decode(de, "copy_of_rq", false, g.Value)
					if wv, _ := decode(ser, "rq", false, w.Value); !reflect.DeepEqual(gv, wv) {
						t.Errorf("partition %d record %d: value %#v, want %#v", p, i, gv, wv)
					}
				}
				if gh, wh := showHeaders(g.Headers), showHeaders(w.Headers); gh != wh {
					t.Errorf("partition %d record %d: headers %s, want %s", p, i, gh, wh)
				}
			}
		}
	})
}
