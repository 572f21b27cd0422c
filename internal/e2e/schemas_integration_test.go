//go:build integration

package e2e

import (
	"context"
	"fmt"
	"reflect"
	"strings"
	"testing"
	"time"

	"github.com/twmb/avro"
	"github.com/twmb/franz-go/pkg/kgo"
	"github.com/twmb/franz-go/pkg/sr"

	"github.com/kafkas3/kafkas3/internal/srfake"
)

// The registry of these tests is internal/srfake served over loopback
// HTTP: Apicurio Registry (io.apicurio:apicurio-registry-app, which speaks
// Confluent's API) cannot be assembled from Maven Central here: its jar is
// a library that Quarkus's build turns into an application, and the
// modules it needs (apicurio-registry-schema-util-provider 3.3.3 and
// 2.6.13.Final, apicurio-registry-contracts-rules 3.3.3) are not served.

const (
	schemaOrder = `{"type":"record","name":"Order","namespace":"shop","fields":[
		{"name":"id","type":"long"},{"name":"item","type":"string"},{"name":"note","type":["null","string"],"default":null}]}`
	schemaOrderKey = `{"type":"record","name":"OrderKey","namespace":"shop","fields":[{"name":"id","type":"long"}]}`
)

// avroSerde returns a Serde that encodes and decodes map values of
// schema text under id.
func avroSerde(t *testing.T, id int, text string) *sr.Serde {
	t.Helper()
	s, err := avro.Parse(text)
	if err != nil {
		t.Fatal(err)
	}
	serde := sr.NewSerde()
	serde.Register(id, map[string]any{},
		sr.EncodeFn(func(v any) ([]byte, error) { return s.Encode(v) }),
		sr.DecodeFn(func(b []byte, v any) error {
			rest, err := s.Decode(b, v)
			if err == nil && len(rest) != 0 {
				err = fmt.Errorf("%d bytes left over", len(rest))
			}
			return err
		}))
	return serde
}

// registerOver registers text under subject through reg's HTTP API, as a
// producer's serializer does, and returns the id.
func registerOver(t *testing.T, ctx context.Context, reg *srfake.Server, subject, text string) int {
	t.Helper()
	cl, err := sr.NewClient(sr.URLs(reg.URL()))
	if err != nil {
		t.Fatal(err)
	}
	id, err := cl.RegisterSchema(ctx, subject, sr.Schema{Schema: text}, -1, -1)
	if err != nil {
		t.Fatal(err)
	}
	return id
}

// fillRegistry registers n unrelated schemas, so ids differ between
// registries.
func fillRegistry(t *testing.T, ctx context.Context, reg *srfake.Server, n int) {
	t.Helper()
	for i := range n {
		registerOver(t, ctx, reg, fmt.Sprintf("other-%d", i), fmt.Sprintf(`{"type":"enum","name":"E%d","symbols":["A"]}`, i))
	}
}

// orderValue is the value of record i of partition p.
func orderValue(p int32, i int) map[string]any {
	v := map[string]any{"id": int64(p)*1000 + int64(i), "item": fmt.Sprintf("item ü %d/%d", p, i), "note": nil}
	if i%3 == 0 {
		v["note"] = fmt.Sprintf("note %d", i)
	}
	return v
}

// targetSerdes are decoders for what landed: one Serde per schema id,
// built from the target registry's answer for that id.
type targetSerdes struct {
	t  *testing.T
	cl *sr.Client
	by map[int]*sr.Serde
}

func (ts *targetSerdes) decode(ctx context.Context, b []byte) (map[string]any, int) {
	ts.t.Helper()
	if len(b) < 5 || b[0] != 0 {
		ts.t.Fatalf("not in the wire format: %x", b)
	}
	id := int(b[1])<<24 | int(b[2])<<16 | int(b[3])<<8 | int(b[4])
	serde, ok := ts.by[id]
	if !ok {
		s, err := ts.cl.SchemaByID(ctx, id)
		if err != nil {
			ts.t.Fatalf("target registry: schema id %d: %v", id, err)
		}
		serde = avroSerde(ts.t, id, s.Schema)
		ts.by[id] = serde
	}
	v := map[string]any{}
	if err := serde.Decode(b, &v); err != nil {
		ts.t.Fatalf("decoding with schema id %d: %v", id, err)
	}
	return v, id
}

// TestIntegrationSchemasTravel produces Avro keys and values framed by the
// Go sr serde against a source registry, archives them with `kafkas3 sink
// --once` (the envelope, values as bytes), and restores them with
// `kafkas3 source --topic-rename` into a target registry that already
// holds other schemas: a consumer decoding with the sr serde against the
// target registry reads back every value and key, under target ids that
// differ from the source's. With --schema-ids keep into an empty registry
// the ids are the source's. The archive verifies clean.
func TestIntegrationSchemasTravel(t *testing.T) {
	b := newBed(t)
	topic := srcUnique("e2e-schemas")
	const parts, perPart = 2, 40
	b.k.CreateTopic(t, topic, parts)
	ctx, cancel := context.WithTimeout(context.Background(), 4*time.Minute)
	defer cancel()

	srcReg := typedRegistry(t)
	fillRegistry(t, ctx, srcReg, 4)
	valueID := registerOver(t, ctx, srcReg, topic+"-value", schemaOrder)
	keyID := registerOver(t, ctx, srcReg, topic+"-key", schemaOrderKey)
	values, keys := avroSerde(t, valueID, schemaOrder), avroSerde(t, keyID, schemaOrderKey)
	cl := b.k.Client(t, kgo.RecordPartitioner(kgo.ManualPartitioner()))
	for p := range int32(parts) {
		var recs []*kgo.Record
		for i := range perPart {
			k, err := keys.Encode(map[string]any{"id": int64(p)*1000 + int64(i)})
			if err != nil {
				t.Fatal(err)
			}
			v, err := values.Encode(orderValue(p, i))
			if err != nil {
				t.Fatal(err)
			}
			recs = append(recs, &kgo.Record{Topic: topic, Partition: p, Key: k, Value: v})
		}
		if err := cl.ProduceSync(ctx, recs...).FirstErr(); err != nil {
			t.Fatal(err)
		}
	}

	bucket := b.s.CreateBucket(t)
	c := b.sinkConf("e2e-schemas-"+topic, topic, bucket).with("flush.size", "25", "store.envelope", "true",
		"value.converter", "org.apache.kafka.connect.converters.ByteArrayConverter",
		"key.converter", "org.apache.kafka.connect.converters.ByteArrayConverter",
		"value.converter.schema.registry.url", srcReg.URL())
	sinkCfg := c.write(t)
	sum, p := runOnce(t, "sink --once", sinkCfg)
	if sum.records != parts*perPart || !strings.Contains(p.stdout(), "schema_objects=2 unknown_schema_ids=0") {
		t.Fatalf("sink summary %s", p.stdout())
	}
	schemaKeys := 0
	for k := range b.snapshot(t, bucket) {
		if strings.HasPrefix(k, indexPrefix+"schemas/"+topic+"/") {
			schemaKeys++
		}
	}
	if schemaKeys != 2 {
		t.Errorf("%d schema objects in the bucket, want 2", schemaKeys)
	}
	verifyClean(t, "archive with schemas", sinkCfg, parts*perPart)

	for _, tc := range []struct {
		name, ids string
		filler    int
	}{{"rewrite", "rewrite", 9}, {"keep", "keep", 0}} {
		t.Run(tc.name, func(t *testing.T) {
			dstReg := typedRegistry(t)
			fillRegistry(t, ctx, dstReg, tc.filler)
			target := topic + "-" + tc.name
			srcRunOK(t, tc.name+" restore", sinkCfg, "--topic-rename", target, "--create-topics", "--schema-ids", tc.ids,
				"-p", "value.converter.schema.registry.url="+dstReg.URL())
			dcl, err := sr.NewClient(sr.URLs(dstReg.URL()))
			if err != nil {
				t.Fatal(err)
			}
			ts := &targetSerdes{t: t, cl: dcl, by: map[int]*sr.Serde{}}
			n := 0
			for _, rec := range consumeTopic(t, b, target, parts*perPart) {
				v, vid := ts.decode(ctx, rec.Value)
				k, kid := ts.decode(ctx, rec.Key)
				i := int(v["id"].(int64) % 1000)
				if want := orderValue(rec.Partition, i); !reflect.DeepEqual(v, want) {
					t.Errorf("partition %d record %d: value %v, want %v", rec.Partition, i, v, want)
				}
				if k["id"] != v["id"] {
					t.Errorf("partition %d: key %v for value %v", rec.Partition, k, v)
				}
				keep := tc.ids == "keep"
				if (vid == valueID) != keep || (kid == keyID) != keep {
					t.Errorf("%s: value id %d (source %d), key id %d (source %d)", tc.name, vid, valueID, kid, keyID)
				}
				n++
			}
			if n != parts*perPart {
				t.Errorf("%d records decoded, want %d", n, parts*perPart)
			}
			subjects, err := dcl.Subjects(ctx)
			if err != nil {
				t.Fatal(err)
			}
			for _, s := range []string{target + "-value", target + "-key"} {
				if !contains(subjects, s) {
					t.Errorf("target registry subjects %v lack %s", subjects, s)
				}
			}
		})
	}
}

func contains(list []string, s string) bool {
	for _, x := range list {
		if x == s {
			return true
		}
	}
	return false
}

// consumeTopic reads n records of topic from the start.
func consumeTopic(t *testing.T, b *bed, topic string, n int) []*kgo.Record {
	t.Helper()
	cl := b.k.Client(t, kgo.ConsumeTopics(topic), kgo.ConsumeResetOffset(kgo.NewOffset().AtStart()))
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
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
