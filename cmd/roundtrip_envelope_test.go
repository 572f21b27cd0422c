package cmd

import (
	"bytes"
	"context"
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

// envProduce produces n records to each of topic's two partitions: nil,
// empty and text keys, tombstones (value(p, i) returning nil), records
// without headers and with duplicate, nil-valued and empty headers, and
// timestamps in 2001. It returns them by partition.
func envProduce(t *testing.T, ctx context.Context, brokers, topic string, n int, value func(p int32, i int) []byte) map[int32][]*kgo.Record {
	t.Helper()
	cl, err := kgo.NewClient(kgo.SeedBrokers(strings.Split(brokers, ",")...), kgo.RecordPartitioner(kgo.ManualPartitioner()))
	if err != nil {
		t.Fatal(err)
	}
	defer cl.Close()
	base := time.Date(2001, 2, 3, 4, 5, 6, 789e6, time.UTC)
	out := map[int32][]*kgo.Record{}
	var recs []*kgo.Record
	for p := range int32(2) {
		for i := range n {
			r := &kgo.Record{Topic: topic, Partition: p, Value: value(p, i), Timestamp: base.Add(time.Duration(int(p)*1000+i) * time.Second)}
			switch i % 5 {
			case 0: // nil key
			case 1:
				r.Key = []byte{}
			default:
				r.Key = fmt.Appendf(nil, "key-%d-%d\n\"", p, i)
			}
			switch i % 3 {
			case 1:
				r.Headers = []kgo.RecordHeader{{Key: "d", Value: nil}, {Key: "d", Value: []byte{}}, {Key: "d", Value: []byte{0, 0xff}}}
			case 2:
				r.Headers = []kgo.RecordHeader{{Key: "ü", Value: []byte("✓")}}
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

// envCheck compares the restored records of one partition with the
// produced ones: order, key (nil apart from empty), headers, timestamp and
// timestamp type (original: equal; now: the restore's time), and the value
// through sameValue (nil for tombstones).
func envCheck(t *testing.T, p int32, got, want []*kgo.Record, now time.Time, sameValue func(got, want []byte) string) {
	t.Helper()
	if len(got) != len(want) {
		t.Fatalf("partition %d: %d records restored, want %d", p, len(got), len(want))
	}
	for i, g := range got {
		w := want[i]
		if g.Partition != p || g.Offset != int64(i) {
			t.Errorf("partition %d record %d: at %d/%d", p, i, g.Partition, g.Offset)
		}
		if !bytes.Equal(g.Key, w.Key) || (g.Key == nil) != (w.Key == nil) {
			t.Errorf("partition %d record %d: key %q (nil %v), want %q (nil %v)", p, i, g.Key, g.Key == nil, w.Key, w.Key == nil)
		}
		if gh, wh := showHeaders(g.Headers), showHeaders(w.Headers); gh != wh {
			t.Errorf("partition %d record %d: headers %s, want %s", p, i, gh, wh)
		}
		switch {
		case w.Value == nil:
			if g.Value != nil {
				t.Errorf("partition %d record %d: value %q, want a tombstone (nil)", p, i, g.Value)
			}
		default:
			if msg := sameValue(g.Value, w.Value); msg != "" {
				t.Errorf("partition %d record %d: %s", p, i, msg)
			}
		}
		if g.Attrs.TimestampType() != 0 {
			t.Errorf("partition %d record %d: timestamp type %d, want CreateTime", p, i, g.Attrs.TimestampType())
		}
		if now.IsZero() && !g.Timestamp.Equal(w.Timestamp) {
			t.Errorf("partition %d record %d: timestamp %v, want the original %v", p, i, g.Timestamp, w.Timestamp)
		}
		if !now.IsZero() && g.Timestamp.Before(now.Add(-time.Second)) {
			t.Errorf("partition %d record %d: timestamp %v, want the restore's time (--timestamps now)", p, i, g.Timestamp)
		}
	}
}

// TestRoundTripEnvelope archives a hostile corpus with `kafkas3 sink --once`
// and store.envelope=true, in JSON, Avro and Parquet, values without a
// schema (bytes, including empty values and tombstones) and with a
// registry schema (AvroConverter), restores it with `kafkas3 source` into
// copy_of_<topic> and compares every property of every record. The JSON
// case restores a second time with --timestamps now.
func TestRoundTripEnvelope(t *testing.T) {
	const n = 10
	const schemaText = `{"type":"record","name":"Order","namespace":"rt","fields":[{"name":"p","type":"int"},{"name":"i","type":"long"},` +
		`{"name":"note","type":["null","string"],"default":null},{"name":"attrs","type":{"type":"map","values":"string"}}]}`
	for _, tc := range []struct {
		name, class, ext string
		registry         bool
	}{
		{"json", "io.confluent.connect.s3.format.json.JsonFormat", ".json", false},
		{"avro", "io.confluent.connect.s3.format.avro.AvroFormat", ".avro", false},
		{"avro-registry", "io.confluent.connect.s3.format.avro.AvroFormat", ".avro", true},
		{"parquet", "io.confluent.connect.s3.format.parquet.ParquetFormat", ".snappy.parquet", false},
		{"parquet-registry", "io.confluent.connect.s3.format.parquet.ParquetFormat", ".snappy.parquet", true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			ctx := cliContext(t)
			brokers := startKafka(t, 2, "rt")
			value := func(p int32, i int) []byte {
				switch i % 7 {
				case 3:
					return nil
				case 4:
					return []byte{}
				}
				return fmt.Appendf(nil, "v-%d-%d\r\n\"\x00\xff", p, i)
			}
			y := strings.Replace(sinkYAML(brokers, t.TempDir(), "rt", 4), "io.confluent.connect.s3.format.json.JsonFormat", tc.class, 1) + "store.envelope: true\n"
			var ser, de *convert.AvroConverter
			if tc.registry {
				srcReg, s := startRegistry(t)
				ser = s
				parsed, err := avro.Parse(schemaText)
				if err != nil {
					t.Fatal(err)
				}
				schema := &format.Schema{Avro: parsed, Text: schemaText}
				value = func(p int32, i int) []byte {
					if i%7 == 3 {
						return nil
					}
					b, err := ser.Encode(ctx, "rt-value", schema, map[string]any{"p": p, "i": int64(i), "note": nil,
						"attrs": map[string]any{"b": "2", "a": fmt.Sprint(i), "c": ""}})
					if err != nil {
						t.Fatal(err)
					}
					return b
				}
				y += "value.converter: io.confluent.connect.avro.AvroConverter\nvalue.converter.schema.registry.url: " + srcReg.URL() + "\n"
			}
			produced := envProduce(t, ctx, brokers, "rt", n, value)
			cfg := writeFile(t, "sink.yaml", y)
			r := mustRun(t, ctx, ExitOK, "sink", "-c", cfg, "--once", "--log-level", "warn")
			if !strings.Contains(r.out, fmt.Sprintf(" records=%d ", 2*n)) {
				t.Errorf("sink summary: %q", r.out)
			}
			dir := strings.TrimSpace(strings.TrimPrefix(y[strings.Index(y, "store.local.dir: "):strings.Index(y, "store.envelope")], "store.local.dir: "))
			keys := objectKeys(t, dir)
			if len(keys) < 6 {
				t.Errorf("objects %q: want at least 3 per partition (flush.size 4)", keys)
			}
			for _, k := range keys {
				if !strings.HasSuffix(k, tc.ext) || strings.Contains(k, ".keys") || strings.Contains(k, "tombstone") {
					t.Errorf("object %s: want only %s value objects", k, tc.ext)
				}
			}

			args := []string{"source", "-c", cfg, "--topic-rename", "copy_of_$0", "--create-topics", "--log-level", "warn"}
			if tc.registry {
				dstReg, d := startRegistry(t)
				de = d
				args = append(args, "-p", "value.converter.schema.registry.url="+dstReg.URL())
			}
			r = mustRun(t, ctx, ExitOK, args...)
			if !strings.Contains(r.out, fmt.Sprintf(" records=%d ", 2*n)) {
				t.Errorf("source summary: %q", r.out)
			}
			same := func(g, w []byte) string {
				if !bytes.Equal(g, w) || g == nil {
					return fmt.Sprintf("value %q, want %q", g, w)
				}
				return ""
			}
			if tc.registry {
				same = func(g, w []byte) string {
					gt, err := de.Convert(ctx, "copy_of_rt", false, g)
					if err != nil {
						return fmt.Sprintf("decoding with the target registry: %v", err)
					}
					wt, err := ser.Convert(ctx, "rt", false, w)
					if err != nil {
						return err.Error()
					}
					gv, _ := format.AvroNative(gt)
					wv, _ := format.AvroNative(wt)
					if gt.Schema.Version != 1 || !reflect.DeepEqual(gv, wv) {
						return fmt.Sprintf("value %#v (schema version %d), want %#v", gv, gt.Schema.Version, wv)
					}
					return ""
				}
			}
			got := byPartition(consumeAll(t, ctx, brokers, "copy_of_rt", 2*n))
			for p := range int32(2) {
				envCheck(t, p, got[p], produced[p], time.Time{}, same)
			}

			if tc.name == "json" {
				since := time.Now()
				mustRun(t, ctx, ExitOK, "source", "-c", cfg, "--topic-rename", "now_$0", "--create-topics", "--timestamps", "now", "--log-level", "warn")
				got := byPartition(consumeAll(t, ctx, brokers, "now_rt", 2*n))
				for p := range int32(2) {
					envCheck(t, p, got[p], produced[p], since, same)
				}
				r := runCLI(ctx, "source", "-c", cfg, "--topic-rename", "x_$0", "--timestamps", "later")
				if r.code != ExitConfig || !strings.Contains(r.err, `--timestamps: is "later"; want original or now`) {
					t.Errorf("--timestamps later: exit %d, %q", r.code, r.err)
				}
			}
		})
	}
}

// TestRoundTripEnvelopeUntil: an envelope archive written by `sink --once`
// restored with --until between two records' timestamps gives each
// partition the records stamped at or before it (CreateTime: best effort,
// the dry run says so), the summary line reports until= and past_cut=, a
// re-run produces nothing and a full restore then adds exactly the rest.
func TestRoundTripEnvelopeUntil(t *testing.T) {
	const n = 10
	ctx := cliContext(t)
	brokers := startKafka(t, 2, "rt")
	produced := envProduce(t, ctx, brokers, "rt", n, func(p int32, i int) []byte { return fmt.Appendf(nil, "v-%d-%d", p, i) })
	cfg := writeFile(t, "sink.yaml", sinkYAML(brokers, t.TempDir(), "rt", 4)+"store.envelope: true\n")
	mustRun(t, ctx, ExitOK, "sink", "-c", cfg, "--once", "--log-level", "warn")

	// Partition 0 is stamped 04:05:06.789 + i s, partition 1 1000 s later.
	until := "2001-02-03T04:05:11.289Z"
	r := mustRun(t, ctx, ExitOK, "source", "-c", cfg, "--topic-rename", "copy_of_$0", "--dry-run", "--until", until)
	plan := strings.Join(strings.Fields(r.out), " ")
	for _, want := range []string{"point in time: --until " + until, "rt/0 5 5 5 record timestamps, best effort (CreateTime: 0 later",
		"rt/1 0 0 10 record timestamps, best effort"} {
		if !strings.Contains(plan, want) {
			t.Errorf("dry run lacks %q:\n%s", want, r.out)
		}
	}
	args := []string{"source", "-c", cfg, "--topic-rename", "copy_of_$0", "--create-topics", "--log-level", "warn"}
	r = mustRun(t, ctx, ExitOK, append(args, "--until", until)...)
	if !strings.Contains(r.out, " records=5 ") || !strings.Contains(r.out, " until="+until+" past_cut=15") {
		t.Errorf("source summary: %q", r.out)
	}
	got := byPartition(consumeAll(t, ctx, brokers, "copy_of_rt", 5))
	same := func(g, w []byte) string {
		if !bytes.Equal(g, w) {
			return fmt.Sprintf("value %q, want %q", g, w)
		}
		return ""
	}
	envCheck(t, 0, got[0], produced[0][:5], time.Time{}, same)
	if len(got[1]) != 0 {
		t.Errorf("partition 1: %d records restored, want none", len(got[1]))
	}
	r = mustRun(t, ctx, ExitOK, append(args, "--until", until)...)
	if !strings.Contains(r.out, " records=0 ") || !strings.Contains(r.out, " already_present=5 ") {
		t.Errorf("re-run summary: %q", r.out)
	}
	r = mustRun(t, ctx, ExitOK, args...)
	if !strings.Contains(r.out, " records=15 ") || strings.Contains(r.out, "until=") {
		t.Errorf("full restore summary: %q", r.out)
	}
	got = byPartition(consumeAll(t, ctx, brokers, "copy_of_rt", 2*n))
	for p := range int32(2) {
		envCheck(t, p, got[p], produced[p], time.Time{}, same)
	}
}
