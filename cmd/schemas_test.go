package cmd

import (
	"bytes"
	"context"
	"encoding/binary"
	"fmt"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"testing"

	"github.com/kafkas3/kafkas3/index"
	"github.com/kafkas3/kafkas3/internal/srfake"
	"github.com/twmb/franz-go/pkg/kadm"
	"github.com/twmb/franz-go/pkg/kgo"
	"github.com/twmb/franz-go/pkg/sr"
)

// Schemas of the fixture: a key schema, a value schema, an address type
// and an order schema that references it.
const (
	fxKeySchema   = `{"type":"record","name":"OrderKey","fields":[{"name":"k","type":"string"}]}`
	fxValueSchema = `{"type":"record","name":"Order","fields":[{"name":"id","type":"long"}]}`
	fxAddrSchema  = `{"type":"record","name":"Address","namespace":"com.acme","fields":[{"name":"street","type":"string"}]}`
	fxRefSchema   = `{"type":"record","name":"Shipment","fields":[{"name":"to","type":"com.acme.Address"}]}`
	fxUnknownID   = 999
)

// fxIDs are a source registry's ids of the fixture's schemas.
type fxIDs struct{ key, value, addr, ref int }

// fxSourceRegistry starts the source registry with filler schemas first,
// so its ids differ from a fresh target's.
func fxSourceRegistry(t *testing.T, filler int) (*srfake.Server, fxIDs) {
	t.Helper()
	reg, _ := startRegistry(t)
	for i := range filler {
		if _, _, err := reg.Register(fmt.Sprintf("filler-%d", i), "", fmt.Sprintf(`{"type":"fixed","name":"f%d","size":%d}`, i, i+1)); err != nil {
			t.Fatal(err)
		}
	}
	var ids fxIDs
	var err error
	must := func(id, _ int, e error) int {
		if e != nil {
			err = e
		}
		return id
	}
	ids.key = must(reg.Register("orders-key", "", fxKeySchema))
	ids.value = must(reg.Register("orders-value", "", fxValueSchema))
	ids.addr = must(reg.Register("com.acme.Address", "", fxAddrSchema))
	ids.ref = must(reg.Register("orders-value", "", fxRefSchema, srfake.Reference{Name: "com.acme.Address", Subject: "com.acme.Address", Version: 1}))
	if err != nil {
		t.Fatal(err)
	}
	return reg, ids
}

// framed is body in Confluent's wire format with schema id.
func framed(id int, body string) []byte {
	return append(binary.BigEndian.AppendUint32([]byte{0}, uint32(id)), body...)
}

// fxRecords are the fixture's records: framed keys and values of both
// value schemas, a value framed with an id no registry knows, and a plain
// value.
func fxRecords(ids fxIDs) []*kgo.Record {
	var recs []*kgo.Record
	for i := range 6 {
		id := ids.value
		if i%2 == 1 {
			id = ids.ref
		}
		recs = append(recs, &kgo.Record{Key: framed(ids.key, fmt.Sprintf("k%d", i)), Value: framed(id, fmt.Sprintf("v%d", i))})
	}
	recs = append(recs, &kgo.Record{Key: []byte("plain"), Value: framed(fxUnknownID, "not-framed")})
	recs = append(recs, &kgo.Record{Key: []byte("plain"), Value: []byte("hello")})
	return recs
}

func produceRecords(t *testing.T, ctx context.Context, brokers, topic string, recs []*kgo.Record) {
	t.Helper()
	cl, err := kgo.NewClient(kgo.SeedBrokers(strings.Split(brokers, ",")...), kgo.DefaultProduceTopic(topic))
	if err != nil {
		t.Fatal(err)
	}
	defer cl.Close()
	if err := cl.ProduceSync(ctx, recs...).FirstErr(); err != nil {
		t.Fatal(err)
	}
}

// schemaObjects returns the schema objects under dir's index prefix for
// topic, by key.
func schemaObjects(t *testing.T, dir, topic string) map[string][]byte {
	t.Helper()
	out := map[string][]byte{}
	root := filepath.Join(dir, filepath.FromSlash(index.SchemaTopicDir(index.DefaultPrefix, topic)))
	ents, err := os.ReadDir(root)
	if err != nil && !os.IsNotExist(err) {
		t.Fatal(err)
	}
	for _, e := range ents {
		b, err := os.ReadFile(filepath.Join(root, e.Name()))
		if err != nil {
			t.Fatal(err)
		}
		out[e.Name()] = b
	}
	return out
}

// schemaFormats are the sink configs the schema tests archive with.
var schemaFormats = []struct{ name, yaml string }{
	{"bytes", "format.class: bytearray\nformat.bytearray.separator: \"|SEP|\"\nstore.kafka.keys: true\nkeys.format.class: avro\n"},
	{"json", "format.class: json\nstore.kafka.keys: true\nkeys.format.class: json\n"},
	{"envelope-json", "format.class: json\nstore.envelope: true\n"},
	{"envelope-avro", "format.class: avro\nstore.envelope: true\n"},
}

func schemaSinkYAML(brokers, dir, name, formatYAML, registry string) string {
	y := strings.Replace(sinkYAML(brokers, dir, "orders", 4), "format.class: io.confluent.connect.s3.format.json.JsonFormat\n", formatYAML, 1)
	y = strings.Replace(y, "name: test-sink", "name: "+name, 1)
	y += "value.converter: bytearray\nkey.converter: bytearray\n"
	if registry != "" {
		y += "value.converter.schema.registry.url: " + registry + "\n"
	}
	return y
}

// TestSchemasTravelWithTheArchive archives framed keys and values in each
// format, checks the schema objects (once per id, references included,
// the unknown id counted), and restores them with --topic-rename into a
// target registry that already holds other schemas: every framed key and
// value comes back with the target's id, referenced schemas registered
// first, subjects renamed; the unknown id and the plain value untouched.
func TestSchemasTravelWithTheArchive(t *testing.T) {
	for _, tc := range schemaFormats {
		t.Run(tc.name, func(t *testing.T) {
			ctx := cliContext(t)
			brokers := startKafka(t, 1, "orders")
			src, ids := fxSourceRegistry(t, 3)
			recs := fxRecords(ids)
			produceRecords(t, ctx, brokers, "orders", recs)
			dir := t.TempDir()
			cfg := writeFile(t, "sink.yaml", schemaSinkYAML(brokers, dir, "schemas-"+tc.name, tc.yaml, src.URL()))
			r := mustRun(t, ctx, ExitOK, "sink", "-c", cfg, "--once", "--log-level", "warn")
			if !strings.Contains(r.out, "records=8 ") || !strings.Contains(r.out, "schema_objects=4 unknown_schema_ids=1") {
				t.Errorf("sink summary: %q", r.out)
			}
			if !strings.Contains(r.err, fmt.Sprintf("schema_id=%d", fxUnknownID)) {
				t.Errorf("the unknown id is not logged: %s", r.err)
			}
			// Once per id, though two rotations name the same ids.
			for _, id := range []int{ids.key, ids.value, ids.ref, fxUnknownID} {
				if n := src.Requests("GET", fmt.Sprintf("/schemas/ids/%d", id)); n != 1 {
					t.Errorf("GET /schemas/ids/%d: %d requests, want 1", id, n)
				}
			}
			objs := schemaObjects(t, dir, "orders")
			if len(objs) != 4 {
				t.Fatalf("schema objects: %v", keysOf(objs))
			}
			checkSchemaObject(t, objs, ids.ref, `"subjects":[{"subject":"orders-value","version":2}],"references":[{"name":"com.acme.Address","subject":"com.acme.Address","version":1,"id":`+fmt.Sprint(ids.addr)+`}]`)
			checkSchemaObject(t, objs, ids.key, `"subjects":[{"subject":"orders-key","version":1}]`)

			dst, _ := startRegistry(t)
			for i := range 7 { // other schemas first: the target's ids differ
				if _, _, err := dst.Register(fmt.Sprintf("other-%d", i), "", fmt.Sprintf(`{"type":"enum","name":"e%d","symbols":["A"]}`, i)); err != nil {
					t.Fatal(err)
				}
			}
			r = mustRun(t, ctx, ExitOK, sourceArgs(tc.yaml, "-c", cfg, "--topic-rename", "copy", "--create-topics",
				"-p", "value.converter.schema.registry.url="+dst.URL(), "--log-level", "warn")...)
			if !strings.Contains(r.out, " schemas=4 unknown_schema_ids=1") {
				t.Errorf("source summary: %q", r.out)
			}
			tid := map[int]int{}
			for subject, src := range map[string]int{"copy-key": ids.key, "com.acme.Address": ids.addr} {
				tid[src] = lookupID(t, dst, subject, 1)
			}
			tid[ids.value] = lookupID(t, dst, "copy-value", 1)
			tid[ids.ref] = lookupID(t, dst, "copy-value", 2)
			for src, dstID := range tid {
				if src == dstID {
					t.Fatalf("source id %d is the target's too: the test proves nothing", src)
				}
			}
			got := consumeAll(t, ctx, brokers, "copy", len(recs))
			for i, rec := range got {
				wantKey, wantValue := recs[i].Key, recs[i].Value
				if i < 6 {
					wantKey = framed(tid[ids.key], fmt.Sprintf("k%d", i))
					wantValue = framed(tid[idOf(recs[i].Value)], fmt.Sprintf("v%d", i))
				}
				if !bytes.Equal(rec.Key, wantKey) || !bytes.Equal(rec.Value, wantValue) {
					t.Errorf("record %d: key %q value %q, want %q %q", i, rec.Key, rec.Value, wantKey, wantValue)
				}
			}
		})
	}
}

// sourceArgs is `kafkas3 source` with args; an Avro archive's source needs
// the AvroConverter (or none) as value.converter.
func sourceArgs(formatYAML string, args ...string) []string {
	out := append([]string{"source"}, args...)
	if strings.Contains(formatYAML, "format.class: avro") {
		out = append(out, "-p", "value.converter=avro")
	}
	return out
}

func keysOf(m map[string][]byte) []string {
	var out []string
	for k := range m {
		out = append(out, k)
	}
	sort.Strings(out)
	return out
}

func idOf(b []byte) int { return int(binary.BigEndian.Uint32(b[1:5])) }

// checkSchemaObject checks that the schema object of id holds part.
func checkSchemaObject(t *testing.T, objs map[string][]byte, id int, part string) {
	t.Helper()
	for k, b := range objs {
		if strings.HasPrefix(k, fmt.Sprintf("%010d-", id)) {
			if !strings.Contains(string(b), part) {
				t.Errorf("schema object %s = %s, want it to hold %s", k, b, part)
			}
			return
		}
	}
	t.Errorf("no schema object of id %d: %v", id, keysOf(objs))
}

// lookupID is the id of subject's version in reg.
func lookupID(t *testing.T, reg *srfake.Server, subject string, version int) int {
	t.Helper()
	cl, err := newTestSR(reg.URL())
	if err != nil {
		t.Fatal(err)
	}
	ss, err := cl.SchemaByVersion(context.Background(), subject, version)
	if err != nil {
		t.Fatalf("target registry: subject %q version %d: %v", subject, version, err)
	}
	return ss.ID
}

// deleteGroup deletes a consumer group, so the next sink run replays.
func deleteGroup(t *testing.T, ctx context.Context, brokers, group string) {
	t.Helper()
	cl, err := kgo.NewClient(kgo.SeedBrokers(strings.Split(brokers, ",")...))
	if err != nil {
		t.Fatal(err)
	}
	defer cl.Close()
	if _, err := kadm.NewClient(cl).DeleteGroup(ctx, group); err != nil {
		t.Fatal(err)
	}
}

func newTestSR(url string) (*sr.Client, error) { return sr.NewClient(sr.URLs(url)) }

// archiveFixture archives the fixture's records with the envelope (JSON)
// and returns the brokers, the sink config, the archive and the source
// registry's ids.
func archiveFixture(t *testing.T, ctx context.Context, name string) (brokers, cfg, dir string, src *srfake.Server, ids fxIDs) {
	t.Helper()
	brokers = startKafka(t, 1, "orders")
	src, ids = fxSourceRegistry(t, 3)
	produceRecords(t, ctx, brokers, "orders", fxRecords(ids))
	dir = t.TempDir()
	cfg = writeFile(t, "sink.yaml", schemaSinkYAML(brokers, dir, name, schemaFormats[2].yaml, src.URL()))
	mustRun(t, ctx, ExitOK, "sink", "-c", cfg, "--once", "--log-level", "warn")
	return brokers, cfg, dir, src, ids
}

// targetRegistry starts a target registry holding n other schemas.
func targetRegistry(t *testing.T, n int) *srfake.Server {
	t.Helper()
	dst, _ := startRegistry(t)
	for i := range n {
		if _, _, err := dst.Register(fmt.Sprintf("other-%d", i), "", fmt.Sprintf(`{"type":"enum","name":"e%d","symbols":["A"]}`, i)); err != nil {
			t.Fatal(err)
		}
	}
	return dst
}

// TestSchemasSinkReplaySameBytes replays the archive (the group deleted):
// the schema objects are written again under the same keys with the same
// bytes. A schema the registry lists under one more subject since is
// recorded beside the first object, never over it, and a restore merges
// the two.
func TestSchemasSinkReplaySameBytes(t *testing.T) {
	ctx := cliContext(t)
	brokers, cfg, dir, src, ids := archiveFixture(t, ctx, "replay")
	before := schemaObjects(t, dir, "orders")
	deleteGroup(t, ctx, brokers, "connect-replay")
	r := mustRun(t, ctx, ExitOK, "sink", "-c", cfg, "--once", "--log-level", "warn")
	if !strings.Contains(r.out, "records=8 ") || !strings.Contains(r.out, "schema_objects=4 ") {
		t.Errorf("replay summary: %q", r.out)
	}
	after := schemaObjects(t, dir, "orders")
	if len(after) != len(before) {
		t.Fatalf("replay: %v, before %v", keysOf(after), keysOf(before))
	}
	for k, b := range before {
		if !bytes.Equal(after[k], b) {
			t.Errorf("replay rewrote %s: %s, was %s", k, after[k], b)
		}
	}
	// The value schema is now also listed under another subject.
	if _, _, err := src.Register("legacy-value", "", fxValueSchema); err != nil {
		t.Fatal(err)
	}
	deleteGroup(t, ctx, brokers, "connect-replay")
	mustRun(t, ctx, ExitOK, "sink", "-c", cfg, "--once", "--log-level", "warn")
	third := schemaObjects(t, dir, "orders")
	if len(third) != len(before)+1 {
		t.Fatalf("after the registry changed: %v", keysOf(third))
	}
	for k, b := range before {
		if !bytes.Equal(third[k], b) {
			t.Errorf("%s was overwritten: %s, was %s", k, third[k], b)
		}
	}
	dst := targetRegistry(t, 5)
	r = mustRun(t, ctx, ExitOK, "source", "-c", cfg, "--topic-rename", "copy", "--create-topics",
		"-p", "value.converter.schema.registry.url="+dst.URL(), "--log-level", "warn")
	if !strings.Contains(r.out, " schemas=4 ") {
		t.Errorf("source summary: %q", r.out)
	}
	got := consumeAll(t, ctx, brokers, "copy", 8)
	if want := lookupID(t, dst, "copy-value", 1); idOf(got[0].Value) != want || want == ids.value {
		t.Errorf("record 0 has id %d, want the target's %d (source %d)", idOf(got[0].Value), want, ids.value)
	}
}

// TestSchemasDryRunAndResume lists the schemas in a dry run (would
// register, then the target ids), and a second restore finds every record
// present: its exactly-once check compares the target with the records as
// rewritten. Into the same topic with another target registry (other ids)
// the check finds the records different and stops before producing.
func TestSchemasDryRunAndResume(t *testing.T) {
	ctx := cliContext(t)
	brokers, cfg, _, _, ids := archiveFixture(t, ctx, "dryrun")
	dst := targetRegistry(t, 7)
	args := []string{"source", "-c", cfg, "--topic-rename", "copy", "-p", "value.converter.schema.registry.url=" + dst.URL()}
	r := mustRun(t, ctx, ExitOK, append(args, "--dry-run")...)
	for _, want := range []string{
		"schemas (4), registered in the target registry before producing:",
		fmt.Sprintf(`copy: subject "com.acme.Address" version 1 AVRO: source id %d, would register`, ids.addr),
		fmt.Sprintf(`copy: subject "copy-value" version 2 AVRO: source id %d, would register`, ids.ref),
		fmt.Sprintf(`copy: subject "copy-key" version 1 AVRO: source id %d, would register`, ids.key),
	} {
		if !strings.Contains(r.out, want) {
			t.Errorf("dry run lacks %q:\n%s", want, r.out)
		}
	}
	if n := len(mustSubjects(t, dst)); n != 7 {
		t.Errorf("the dry run registered schemas: %d subjects", n)
	}
	mustRun(t, ctx, ExitOK, append(args, "--create-topics", "--log-level", "warn")...)
	r = mustRun(t, ctx, ExitOK, append(args, "--dry-run")...)
	if want := fmt.Sprintf(`copy: subject "copy-value" version 2 AVRO: source id %d, target id %d`, ids.ref, lookupID(t, dst, "copy-value", 2)); !strings.Contains(r.out, want) {
		t.Errorf("dry run after the restore lacks %q:\n%s", want, r.out)
	}
	r = mustRun(t, ctx, ExitOK, append(args, "--log-level", "warn")...)
	if !strings.Contains(r.out, " records=0 ") || !strings.Contains(r.out, "already_present=8 ") {
		t.Errorf("second restore: %q", r.out)
	}
	other := targetRegistry(t, 11)
	r = mustRun(t, ctx, ExitFail, "source", "-c", cfg, "--topic-rename", "copy", "-p", "value.converter.schema.registry.url="+other.URL(), "--log-level", "warn")
	if !strings.Contains(r.err, "does not hold archived record") {
		t.Errorf("restore with other ids into the same topic: %s", r.err)
	}
	if n := len(consumeAll(t, ctx, brokers, "copy", 8)); n != 8 {
		t.Errorf("copy holds %d records", n)
	}
}

func mustSubjects(t *testing.T, reg *srfake.Server) []string {
	t.Helper()
	cl, err := newTestSR(reg.URL())
	if err != nil {
		t.Fatal(err)
	}
	s, err := cl.Subjects(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	return s
}
