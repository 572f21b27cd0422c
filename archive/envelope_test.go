package archive

import (
	"bytes"
	"fmt"
	"math/rand/v2"
	"reflect"
	"sort"
	"strings"
	"testing"
	"time"

	"github.com/kafkas3/kafkas3/format"
	"github.com/kafkas3/kafkas3/index"
	"github.com/kafkas3/kafkas3/s3store"
	"github.com/twmb/franz-go/pkg/kgo"
)

func envelopeFormat(t *testing.T, kind format.Kind) format.Format {
	t.Helper()
	f, err := format.New(format.Config{Kind: kind, Envelope: true})
	if err != nil {
		t.Fatal(err)
	}
	return f
}

// sortedKeys returns the keys of m in order.
func sortedKeys[V any](m map[string]V) []string {
	ks := make([]string, 0, len(m))
	for k := range m {
		ks = append(ks, k)
	}
	sort.Strings(ks)
	return ks
}

// TestSinkEnvelopeKeepsEverything: with store.envelope, tombstones and nil
// keys are ordinary records (behavior.on.null.values stays at fail), and
// every property of every record is in the objects, in offset order:
// partition, offset, timestamp, key, value and headers, nil and empty apart.
func TestSinkEnvelopeKeepsEverything(t *testing.T) {
	for _, kind := range []format.Kind{format.KindJSON, format.KindAvro, format.KindParquet} {
		t.Run(kind.String(), func(t *testing.T) {
			brokers := newCluster(t, 2, "env")
			var recs []*kgo.Record
			for i := range 8 {
				r := &kgo.Record{Topic: "env", Partition: int32(i % 2), Value: fmt.Appendf(nil, "v%d\n", i),
					Timestamp: time.UnixMilli(int64(1_000_000 * i))}
				switch i % 4 {
				case 0:
					r.Key = []byte("k")
					r.Headers = []kgo.RecordHeader{{Key: "d", Value: []byte("1")}, {Key: "d", Value: nil}, {Key: "e", Value: []byte{}}}
				case 1: // nil key, no headers
				case 2:
					r.Key, r.Value = []byte{}, nil // tombstone
				case 3:
					r.Key, r.Value = []byte{0xff}, []byte{}
				}
				recs = append(recs, r)
			}
			produceRecs(t, brokers, recs...)
			cfg := testConfig(brokers, "env")
			cfg.Format, cfg.Envelope = envelopeFormat(t, kind), true
			store := s3store.NewMemory()
			sum := runSink(t, cfg, store)
			if sum.Records != 8 {
				t.Fatalf("summary %v, want 8 records", sum)
			}
			got := readObjects(t, store, cfg.Format)
			var back []*format.Record
			for _, k := range sortedKeys(got) {
				back = append(back, got[k]...)
			}
			if len(back) != 8 {
				t.Fatalf("%d records in %d objects, want 8", len(back), len(got))
			}
			sort.SliceStable(back, func(i, j int) bool {
				return back[i].Offset*2+int64(back[i].Partition) < back[j].Offset*2+int64(back[j].Partition)
			})
			for i, w := range recs {
				g := back[i]
				if g.Partition != w.Partition || g.Offset != int64(i/2) || g.Timestamp.UnixMilli() != w.Timestamp.UnixMilli() ||
					g.TimestampType != format.TimestampCreate {
					t.Errorf("record %d: partition %d offset %d ts %v, want %d %d %v", i, g.Partition, g.Offset, g.Timestamp, w.Partition, i/2, w.Timestamp)
				}
				if !bytes.Equal(g.Key, w.Key) || (g.Key == nil) != (w.Key == nil) || !bytes.Equal(g.Value, w.Value) || (g.Value == nil) != (w.Value == nil) {
					t.Errorf("record %d: key %q value %q, want %q %q (nil apart)", i, g.Key, g.Value, w.Key, w.Value)
				}
				if len(g.Headers) != len(w.Headers) {
					t.Fatalf("record %d: %d headers, want %d", i, len(g.Headers), len(w.Headers))
				}
				for j, h := range w.Headers {
					if g.Headers[j].Key != h.Key || !bytes.Equal(g.Headers[j].Value, h.Value) || (g.Headers[j].Value == nil) != (h.Value == nil) {
						t.Errorf("record %d header %d: %+v, want %+v", i, j, g.Headers[j], h)
					}
				}
			}
		})
	}
}

// TestSinkEnvelopeTypedRotation: with the AvroConverter, typed values are
// a nested field of their schema; a tombstone fits a typed file, a file
// that a tombstone started holds bytes envelopes and the next typed value
// rotates, and a new value schema rotates (schema.compatibility NONE).
func TestSinkEnvelopeTypedRotation(t *testing.T) {
	for _, kind := range []format.Kind{format.KindAvro, format.KindParquet} {
		t.Run(kind.String(), func(t *testing.T) {
			brokers := newCluster(t, 1, "t")
			conv, id1, id2 := registry(t)
			vals := [][]byte{
				nil,
				wire(t, id1, userV1, user(1, "a")),
				nil,
				wire(t, id1, userV1, user(3, "c")),
				wire(t, id2, userV2, user2(4, "d", "e")),
			}
			produceValues(t, brokers, "t", vals...)
			cfg := testConfig(brokers, "t")
			cfg.FlushSize = 100
			cfg.Format, cfg.Envelope, cfg.ValueConverter = envelopeFormat(t, kind), true, conv
			store := s3store.NewMemory()
			if sum := runSink(t, cfg, store); sum.Records != 5 || sum.Objects != 3 {
				t.Fatalf("summary %v, want 5 records in 3 objects", sum)
			}
			plain, err := format.New(format.Config{Kind: kind})
			if err != nil {
				t.Fatal(err)
			}
			raw := readObjects(t, store, plain)
			got := readObjects(t, store, cfg.Format)
			wantSchemas := []string{format.EnvelopeSchemaText(""), format.EnvelopeSchemaText(userV1), format.EnvelopeSchemaText(userV2)}
			wantCounts := []int{1, 3, 1}
			for i, k := range sortedKeys(got) {
				if !strings.Contains(k, fmt.Sprintf("+%010d.", []int{0, 1, 4}[i])) {
					t.Errorf("object %d is %s", i, k)
				}
				if s := raw[k][0].ValueTyped.Schema.Text; s != wantSchemas[i] {
					t.Errorf("%s: schema %s, want %s", k, s, wantSchemas[i])
				}
				if len(got[k]) != wantCounts[i] {
					t.Fatalf("%s: %d records, want %d", k, len(got[k]), wantCounts[i])
				}
				for _, r := range got[k] {
					if vals[r.Offset] == nil {
						if r.Value != nil || r.ValueTyped != nil {
							t.Errorf("%s offset %d: tombstone came back as %q", k, r.Offset, r.Value)
						}
						continue
					}
					if r.ValueTyped == nil || !bytes.Equal(r.ValueTyped.Raw, vals[r.Offset][5:]) {
						t.Errorf("%s offset %d: typed value %+v, want the Avro bytes of the record", k, r.Offset, r.ValueTyped)
					}
				}
			}
		})
	}
}

// TestSinkEnvelopeRefusesParallelObjects: the envelope holds keys and
// headers, so .keys/.headers objects are refused. (Typed JSON is a format,
// format.NewTypedJSON, that an envelope format replaces: format's
// TestNewJSONTyped checks the envelope keeps typed values as their bytes.)
func TestSinkEnvelopeRefusesParallelObjects(t *testing.T) {
	for name, mod := range map[string]func(*Config){
		"keys":    func(c *Config) { c.KeysFormat = &PartFormat{Format: format.NewJSON(), Kind: format.KindJSON} },
		"headers": func(c *Config) { c.HeadersFormat = &PartFormat{Format: format.NewJSON(), Kind: format.KindJSON} },
	} {
		cfg := testConfig([]string{"localhost:1"}, "t")
		cfg.Format, cfg.Envelope = envelopeFormat(t, format.KindJSON), true
		mod(&cfg)
		if _, err := New(cfg, s3store.NewMemory(), nil); err == nil || !strings.Contains(err.Error(), "store.envelope") {
			t.Errorf("%s: %v, want an error naming store.envelope", name, err)
		}
	}
}

// TestSinkEnvelopeIndexFlag: the archive index entries of envelope objects
// say envelope=true (the source then expects envelopes there), and those
// of plain objects false.
func TestSinkEnvelopeIndexFlag(t *testing.T) {
	for _, envelope := range []bool{true, false} {
		brokers := newCluster(t, 1, "ix")
		produce(t, brokers, "ix", 1, 0, 5)
		cfg := testConfig(brokers, "ix")
		cfg.IndexPrefix = "_kafkas3/"
		if envelope {
			cfg.Format, cfg.Envelope = envelopeFormat(t, format.KindJSON), true
		}
		store := s3store.NewMemory()
		runSink(t, cfg, store)
		n := 0
		for k, body := range snapshot(t, store) {
			if !strings.HasPrefix(k, index.Dir(cfg.IndexPrefix)) {
				continue
			}
			entries, err := index.Decode(k, strings.NewReader(body))
			if err != nil {
				t.Fatal(err)
			}
			for _, e := range entries {
				n++
				if e.Envelope != envelope {
					t.Errorf("%s: entry of %s says envelope=%v, want %v", k, e.Key, e.Envelope, envelope)
				}
			}
		}
		if n != 2 {
			t.Errorf("envelope=%v: %d index entries, want 2 (flush.size 3, 5 records)", envelope, n)
		}
	}
}

// TestSinkEnvelopeSchemaCompatibility: schema.compatibility works inside
// the envelope as without it: with BACKWARD, v1 values after v2 are
// projected into the v2 file (the default fills the new field) instead of
// rotating.
func TestSinkEnvelopeSchemaCompatibility(t *testing.T) {
	brokers := newCluster(t, 1, "t")
	conv, id1, id2 := registry(t)
	produceValues(t, brokers, "t",
		wire(t, id1, userV1, user(0, "a")),
		wire(t, id2, userV2, user2(1, "b", "b@x")),
		wire(t, id1, userV1, user(2, "c")))
	cfg := testConfig(brokers, "t")
	cfg.FlushSize = 100
	cfg.Format, cfg.Envelope, cfg.ValueConverter, cfg.Compatibility = envelopeFormat(t, format.KindAvro), true, conv, CompatBackward
	store := s3store.NewMemory()
	runSink(t, cfg, store)
	got := readObjects(t, store, cfg.Format)
	second := got["topics/t/partition=0/t+0+0000000001.avro"]
	if len(got) != 2 || len(second) != 2 {
		t.Fatalf("objects %v, want v1 at 0 and v2 (with a projected v1) at 1", sortedKeys(got))
	}
	for i, want := range []map[string]any{user2(1, "b", "b@x"), user2(2, "c", "none")} {
		r := second[i]
		if r.ValueTyped == nil || r.ValueTyped.Schema.Text != userV2 {
			t.Fatalf("record %d: typed %+v, want schema v2", i, r.ValueTyped)
		}
		if v := native(t, r); !reflect.DeepEqual(v, any(want)) {
			t.Errorf("record %d: %#v, want %#v", i, v, want)
		}
	}
}

// TestSinkEnvelopeInterruptedRunsEqualCleanRun: envelope objects and
// their index are deterministic, so runs cancelled at random moments (the
// in-process stand-in for SIGKILL) followed by --once leave an archive
// byte-identical to a clean run, in json, avro and parquet.
func TestSinkEnvelopeInterruptedRunsEqualCleanRun(t *testing.T) {
	for _, kind := range []format.Kind{format.KindJSON, format.KindAvro, format.KindParquet} {
		t.Run(kind.String(), func(t *testing.T) {
			brokers := newCluster(t, 3, "ec")
			base := time.UnixMilli(1_577_836_800_000)
			var recs []*kgo.Record
			for p := range int32(3) {
				for i := range 150 {
					r := &kgo.Record{Topic: "ec", Partition: p, Key: fmt.Appendf(nil, "k%d", i), Value: fmt.Appendf(nil, "v%d-%d", p, i),
						Timestamp: base.Add(time.Duration(i) * time.Second)}
					switch i % 5 {
					case 0:
						r.Key = nil
					case 1:
						r.Value = nil
					case 2:
						r.Headers = []kgo.RecordHeader{{Key: "h"}, {Key: "h", Value: []byte{}}}
					}
					recs = append(recs, r)
				}
			}
			produceRecs(t, brokers, recs...)
			cfg := indexConfig(brokers, "ec")
			cfg.Format, cfg.Envelope = envelopeFormat(t, kind), true
			cfg.Name = "clean"
			cfg.FlushSize = 20
			clean := s3store.NewMemory()
			runSink(t, cfg, clean)

			c := cfg
			c.Name = "crashy"
			store := s3store.NewMemory()
			interruptedRuns(t, c, store, rand.New(rand.NewPCG(5, 6)), 4, 8)
			runSink(t, c, store)
			want, got := asWriter(snapshot(t, clean), cfg.Name, cfg.Name), asWriter(snapshot(t, store), c.Name, cfg.Name)
			if len(want) < 2*3*8 || fmt.Sprint(want) != fmt.Sprint(got) {
				t.Fatalf("archive differs from a clean run: %d vs %d objects\nclean %v\ngot   %v", len(want), len(got), sortedKeys(want), sortedKeys(got))
			}
		})
	}
}
