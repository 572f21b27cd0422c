package cmd

import (
	"bytes"
	"context"
	"encoding/base64"
	"encoding/binary"
	"fmt"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"testing"
	"time"

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

// TestSchemasKeepIDs restores with --schema-ids keep: into an empty target
// every schema gets its source id (IMPORT mode, set back to READWRITE) and
// the records come back byte for byte; into a target where one id holds
// another schema the restore stops before producing, naming the subject
// and the id.
func TestSchemasKeepIDs(t *testing.T) {
	ctx := cliContext(t)
	brokers, cfg, _, _, ids := archiveFixture(t, ctx, "keep")
	dst := targetRegistry(t, 0)
	r := mustRun(t, ctx, ExitOK, "source", "-c", cfg, "--topic-rename", "kept", "--create-topics", "--schema-ids", "keep",
		"-p", "value.converter.schema.registry.url="+dst.URL(), "--log-level", "warn")
	if !strings.Contains(r.out, " schemas=4 ") {
		t.Errorf("summary: %q", r.out)
	}
	for subject, want := range map[string]int{"kept-key": ids.key, "com.acme.Address": ids.addr} {
		if got := lookupID(t, dst, subject, 1); got != want {
			t.Errorf("subject %s: id %d, want the source's %d", subject, got, want)
		}
	}
	if got := lookupID(t, dst, "kept-value", 2); got != ids.ref {
		t.Errorf("kept-value version 2: id %d, want %d", got, ids.ref)
	}
	for _, s := range []string{"kept-key", "kept-value", "com.acme.Address"} {
		if m := dst.Mode(s); m != srfake.ModeReadWrite {
			t.Errorf("subject %s left in mode %s", s, m)
		}
	}
	recs := fxRecords(ids)
	for i, rec := range consumeAll(t, ctx, brokers, "kept", len(recs)) {
		if !bytes.Equal(rec.Key, recs[i].Key) || !bytes.Equal(rec.Value, recs[i].Value) {
			t.Errorf("record %d: key %q value %q, want %q %q", i, rec.Key, rec.Value, recs[i].Key, recs[i].Value)
		}
	}

	taken := targetRegistry(t, ids.key) // the key schema's id holds another schema
	r = mustRun(t, ctx, ExitFail, "source", "-c", cfg, "--topic-rename", "refused", "--create-topics", "--schema-ids", "keep",
		"-p", "value.converter.schema.registry.url="+taken.URL(), "--log-level", "warn")
	if want := fmt.Sprintf(`registering schema id %d under subject "refused-key"`, ids.key); !strings.Contains(r.err, want) {
		t.Errorf("refusal: want %q in %s", want, r.err)
	}
	assertNoTopic(t, ctx, brokers, "refused")
}

// TestSchemasRegistryErrors: an unreachable target registry, and one that
// refuses the registration, stop the restore before anything is produced,
// naming the subject; a bad --schema-ids is a config error.
func TestSchemasRegistryErrors(t *testing.T) {
	ctx := cliContext(t)
	brokers, cfg, _, _, _ := archiveFixture(t, ctx, "errors")
	down := targetRegistry(t, 0)
	url := down.URL()
	if err := down.Close(); err != nil {
		t.Fatal(err)
	}
	r := mustRun(t, ctx, ExitFail, "source", "-c", cfg, "--topic-rename", "unreached", "--create-topics",
		"-p", "value.converter.schema.registry.url="+url, "--log-level", "warn")
	if !strings.Contains(r.err, "target schema registry") || !strings.Contains(r.err, `subject "unreached-key"`) {
		t.Errorf("unreachable: %s", r.err)
	}
	assertNoTopic(t, ctx, brokers, "unreached")

	ro := targetRegistry(t, 0)
	if err := ro.SetMode("", srfake.ModeReadOnly); err != nil {
		t.Fatal(err)
	}
	r = mustRun(t, ctx, ExitFail, "source", "-c", cfg, "--topic-rename", "readonly", "--create-topics",
		"-p", "value.converter.schema.registry.url="+ro.URL(), "--log-level", "warn")
	if !strings.Contains(r.err, `under subject "readonly-key"`) || !strings.Contains(r.err, "read-only") {
		t.Errorf("refused: %s", r.err)
	}
	assertNoTopic(t, ctx, brokers, "readonly")

	r = mustRun(t, ctx, ExitConfig, "source", "-c", cfg, "--schema-ids", "maybe", "--dry-run")
	if !strings.Contains(r.err, `--schema-ids: "maybe"; want rewrite or keep`) {
		t.Errorf("bad flag: %s", r.err)
	}
}

// TestSchemasSinkWithoutRegistry: framed-looking values and no registry
// configured never stop the sink: each id is counted and logged once, and
// nothing is recorded.
func TestSchemasSinkWithoutRegistry(t *testing.T) {
	ctx := cliContext(t)
	brokers := startKafka(t, 1, "orders")
	ids := fxIDs{key: 1, value: 2, addr: 3, ref: 4}
	produceRecords(t, ctx, brokers, "orders", fxRecords(ids))
	dir := t.TempDir()
	cfg := writeFile(t, "sink.yaml", schemaSinkYAML(brokers, dir, "noreg", schemaFormats[2].yaml, ""))
	r := mustRun(t, ctx, ExitOK, "sink", "-c", cfg, "--once", "--log-level", "warn")
	if !strings.Contains(r.out, "records=8 ") || !strings.Contains(r.out, "schema_objects=0 unknown_schema_ids=4") {
		t.Errorf("summary: %q", r.out)
	}
	if n := strings.Count(r.err, "no schema registry configured"); n != 4 {
		t.Errorf("%d warnings, want one per id:\n%s", n, r.err)
	}
	if objs := schemaObjects(t, dir, "orders"); len(objs) != 0 {
		t.Errorf("schema objects without a registry: %v", keysOf(objs))
	}
}

// assertNoTopic checks that topic was not created (nothing produced).
func assertNoTopic(t *testing.T, ctx context.Context, brokers, topic string) {
	t.Helper()
	cl, err := kgo.NewClient(kgo.SeedBrokers(strings.Split(brokers, ",")...))
	if err != nil {
		t.Fatal(err)
	}
	defer cl.Close()
	td, err := kadm.NewClient(cl).ListTopics(ctx, topic)
	if err != nil {
		t.Fatal(err)
	}
	if td.Has(topic) {
		t.Errorf("topic %s exists: the restore got past the registry", topic)
	}
}

// TestSchemasTypedAvroArchive: an Avro archive holds decoded values (the
// AvroConverter's), framed again for the target registry at restore (their
// schema is in the objects, not recorded apart), and keys as bytes in a
// .keys object, whose schema the sink records and whose ids the restore
// rewrites.
func TestSchemasTypedAvroArchive(t *testing.T) {
	ctx := cliContext(t)
	brokers := startKafka(t, 1, "orders")
	src, ids := fxSourceRegistry(t, 2)
	var recs []*kgo.Record
	for i := range 5 {
		key := framed(ids.key, string([]byte{4})+fmt.Sprintf("k%d", i)) // Avro string "k<i>"
		recs = append(recs, &kgo.Record{Key: key, Value: framed(ids.value, string([]byte{byte(2 * i)}))})
	}
	produceRecords(t, ctx, brokers, "orders", recs)
	dir := t.TempDir()
	y := schemaSinkYAML(brokers, dir, "typed", "format.class: avro\nstore.kafka.keys: true\nkeys.format.class: avro\n", src.URL())
	y = strings.Replace(y, "value.converter: bytearray\n", "value.converter: avro\n", 1)
	cfg := writeFile(t, "sink.yaml", y)
	r := mustRun(t, ctx, ExitOK, "sink", "-c", cfg, "--once", "--log-level", "warn")
	if !strings.Contains(r.out, "records=5 ") || !strings.Contains(r.out, "schema_objects=1 unknown_schema_ids=0") {
		t.Errorf("sink summary: %q", r.out)
	}
	objs := schemaObjects(t, dir, "orders")
	checkSchemaObject(t, objs, ids.key, `"subjects":[{"subject":"orders-key","version":1}]`)
	if len(objs) != 1 {
		t.Errorf("schema objects: %v, want the key's alone", keysOf(objs))
	}
	dst := targetRegistry(t, 9)
	r = mustRun(t, ctx, ExitOK, "source", "-c", cfg, "--topic-rename", "copy", "--create-topics",
		"-p", "value.converter.schema.registry.url="+dst.URL(), "--log-level", "warn")
	if !strings.Contains(r.out, " schemas=1 ") {
		t.Errorf("source summary: %q", r.out)
	}
	keyID, valueID := lookupID(t, dst, "copy-key", 1), lookupID(t, dst, "copy-value", 1)
	for i, rec := range consumeAll(t, ctx, brokers, "copy", len(recs)) {
		wantKey := framed(keyID, string(recs[i].Key[5:]))
		wantValue := framed(valueID, string(recs[i].Value[5:]))
		if !bytes.Equal(rec.Key, wantKey) || !bytes.Equal(rec.Value, wantValue) {
			t.Errorf("record %d: key %q value %q, want %q %q", i, rec.Key, rec.Value, wantKey, wantValue)
		}
	}
}

// TestSchemasSinkRegistryDown: a source registry that is down fails the
// rotation before its index object and offset commit (a registry outage,
// retried until --once-timeout); once it is back, the next run records
// the schemas and archives everything.
func TestSchemasSinkRegistryDown(t *testing.T) {
	ctx := cliContext(t)
	brokers := startKafka(t, 1, "orders")
	src, ids := fxSourceRegistry(t, 0)
	produceRecords(t, ctx, brokers, "orders", fxRecords(ids))
	dir := t.TempDir()
	cfg := writeFile(t, "sink.yaml", schemaSinkYAML(brokers, dir, "down", schemaFormats[2].yaml, src.URL()))
	src.SetDown(true)
	r := mustRun(t, ctx, ExitFail, "sink", "-c", cfg, "--once", "--once-timeout", "2s", "--log-level", "warn")
	if !strings.Contains(r.err, "recording the schemas of the archived records") {
		t.Errorf("registry down: %s", r.err)
	}
	if objs := schemaObjects(t, dir, "orders"); len(objs) != 0 {
		t.Errorf("schema objects while the registry is down: %v", keysOf(objs))
	}
	if idx, _ := filepath.Glob(filepath.Join(dir, "_kafkas3", "index", "orders", "0", "*")); len(idx) != 0 {
		t.Errorf("index objects written past a failed schema fetch: %v", idx)
	}
	src.SetDown(false)
	r = mustRun(t, ctx, ExitOK, "sink", "-c", cfg, "--once", "--log-level", "warn")
	if !strings.Contains(r.out, "records=8 ") || !strings.Contains(r.out, "schema_objects=4 ") {
		t.Errorf("after the outage: %q", r.out)
	}
	if idx, _ := filepath.Glob(filepath.Join(dir, "_kafkas3", "index", "orders", "0", "*")); len(idx) == 0 {
		t.Errorf("no index objects under the pattern the outage checked")
	}
}

// TestSchemasRefusedCredentialsAndNoTargetRegistry: a source registry that
// refuses the sink's credentials stops the sink at once (no retry until
// --once-timeout); a dry run without a target registry says the archive
// records schemas whose ids would be produced as archived.
func TestSchemasRefusedCredentialsAndNoTargetRegistry(t *testing.T) {
	ctx := cliContext(t)
	brokers := startKafka(t, 1, "orders")
	locked, err := srfake.Start(srfake.Config{User: "u", Password: "p"})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = locked.Close() })
	produceRecords(t, ctx, brokers, "orders", fxRecords(fxIDs{key: 1, value: 2, addr: 3, ref: 4}))
	dir := t.TempDir()
	cfg := writeFile(t, "sink.yaml", schemaSinkYAML(brokers, dir, "refused", schemaFormats[2].yaml, locked.URL()))
	start := time.Now()
	r := mustRun(t, ctx, ExitFail, "sink", "-c", cfg, "--once", "--once-timeout", "60s", "--log-level", "warn")
	if !strings.Contains(r.err, "refuses the credentials") {
		t.Errorf("refused credentials: %s", r.err)
	}
	if d := time.Since(start); d > 30*time.Second {
		t.Errorf("the sink retried refused credentials for %v", d)
	}

	_, cfg2, _, _, _ := archiveFixture(t, ctx, "nodst")
	r = mustRun(t, ctx, ExitOK, "source", "-c", cfg2, "--dry-run", "--topic-rename", "copy", "-p", "value.converter.schema.registry.url=")
	if !strings.Contains(r.out, "schemas: the archive records 4 schema objects for these topics; no target registry") {
		t.Errorf("dry run without a target registry:\n%s", r.out)
	}
}

// TestSchemasFollow: a following restore registers the schemas the sink
// records after its first pass, before it produces their records.
func TestSchemasFollow(t *testing.T) {
	ctx := cliContext(t)
	brokers, cfg, _, src, ids := archiveFixture(t, ctx, "follow")
	dst := targetRegistry(t, 6)
	runCtx, stop := context.WithCancel(ctx)
	defer stop()
	done := make(chan cliResult, 1)
	go func() {
		done <- runCLI(runCtx, "source", "-c", cfg, "--topic-rename", "copy", "--create-topics", "--follow",
			"-p", "s3.poll.interval.ms=50", "-p", "value.converter.schema.registry.url="+dst.URL(), "--log-level", "warn")
	}()
	wait := func(n int64) {
		t.Helper()
		for deadline := time.Now().Add(20 * time.Second); time.Now().Before(deadline); time.Sleep(20 * time.Millisecond) {
			if endOffsetSum(ctx, brokers, "copy") >= n {
				return
			}
		}
		t.Fatalf("copy did not reach %d records", n)
	}
	wait(8)
	const later = `{"type":"record","name":"Later","fields":[{"name":"x","type":"int"}]}`
	laterID, _, err := src.Register("orders-value", "", later)
	if err != nil {
		t.Fatal(err)
	}
	produceRecords(t, ctx, brokers, "orders", []*kgo.Record{{Key: framed(ids.key, "k8"), Value: framed(laterID, "v8")}})
	mustRun(t, ctx, ExitOK, "sink", "-c", cfg, "--once", "--log-level", "warn")
	wait(9)
	stop()
	if r := <-done; r.code != ExitOK {
		t.Fatalf("follow: exit %d\n%s\n%s", r.code, r.out, r.err)
	}
	got := consumeAll(t, ctx, brokers, "copy", 9)
	want := lookupID(t, dst, "copy-value", 3)
	if id := idOf(got[8].Value); id != want || id == laterID {
		t.Errorf("the later record has schema id %d, want the target's %d (source %d)", id, want, laterID)
	}
	if id := idOf(got[8].Key); id != lookupID(t, dst, "copy-key", 1) {
		t.Errorf("the later record's key has schema id %d", id)
	}
}

// TestSchemasCrashBeforeCommit: the schema objects are written, then the
// index object cannot be (the store fails), so nothing is committed; the
// next run rewrites the same schema objects with the same bytes and
// archives everything.
func TestSchemasCrashBeforeCommit(t *testing.T) {
	ctx := cliContext(t)
	brokers := startKafka(t, 1, "orders")
	src, ids := fxSourceRegistry(t, 2)
	produceRecords(t, ctx, brokers, "orders", fxRecords(ids))
	dir := t.TempDir()
	cfg := writeFile(t, "sink.yaml", schemaSinkYAML(brokers, dir, "crash", schemaFormats[2].yaml, src.URL()))
	// A file where the index folder belongs: every index object fails.
	if err := os.MkdirAll(filepath.Join(dir, "_kafkas3"), 0o755); err != nil {
		t.Fatal(err)
	}
	block := filepath.Join(dir, "_kafkas3", "index")
	if err := os.WriteFile(block, []byte("x"), 0o644); err != nil {
		t.Fatal(err)
	}
	mustRun(t, ctx, ExitFail, "sink", "-c", cfg, "--once", "--once-timeout", "2s", "--log-level", "error")
	first := schemaObjects(t, dir, "orders")
	if len(first) != 4 {
		t.Fatalf("schema objects before the failed index object: %v", keysOf(first))
	}
	if err := os.Remove(block); err != nil {
		t.Fatal(err)
	}
	r := mustRun(t, ctx, ExitOK, "sink", "-c", cfg, "--once", "--log-level", "warn")
	if !strings.Contains(r.out, "records=8 ") {
		t.Errorf("after the failure: %q (the first run committed something)", r.out)
	}
	again := schemaObjects(t, dir, "orders")
	if len(again) != len(first) {
		t.Fatalf("schema objects %v, were %v", keysOf(again), keysOf(first))
	}
	for k, b := range first {
		if !bytes.Equal(again[k], b) {
			t.Errorf("%s changed: %s, was %s", k, again[k], b)
		}
	}
}

// TestSchemasErasureList: the erasure list names archived keys; a listed
// framed key is erased (a tombstone under the target's id, counted) or
// dropped, with its id rewritten or not, and a re-run finds the records
// present.
func TestSchemasErasureList(t *testing.T) {
	ctx := cliContext(t)
	brokers, cfg, _, _, ids := archiveFixture(t, ctx, "erase")
	recs := fxRecords(ids)
	list := writeFile(t, "erase.txt", "base64:"+base64.StdEncoding.EncodeToString(recs[2].Key)+"\n")
	for _, action := range []string{"tombstone", "drop"} {
		t.Run(action, func(t *testing.T) {
			dst := targetRegistry(t, 5)
			target := "erased-" + action
			args := []string{"source", "-c", cfg, "--topic-rename", target, "--create-topics", "--exclude-keys-file", list,
				"--exclude-action", action, "-p", "value.converter.schema.registry.url=" + dst.URL(), "--log-level", "warn"}
			r := mustRun(t, ctx, ExitOK, args...)
			n := len(recs)
			if action == "drop" {
				n--
				if !strings.Contains(r.out, " filtered=1") {
					t.Errorf("summary: %q", r.out)
				}
			} else if !strings.Contains(r.out, " erased=1") {
				t.Errorf("summary: %q", r.out)
			}
			keyID := lookupID(t, dst, target+"-key", 1)
			got := consumeAll(t, ctx, brokers, target, n)
			for _, rec := range got {
				if len(rec.Value) >= 5 && rec.Value[0] == 0 && idOf(rec.Value) == ids.value || bytes.Equal(rec.Key, recs[2].Key) {
					t.Errorf("a record with a source id: key %q value %q", rec.Key, rec.Value)
				}
			}
			if action == "tombstone" {
				if want := framed(keyID, "k2"); !bytes.Equal(got[2].Key, want) || got[2].Value != nil {
					t.Errorf("record 2: key %q value %q, want a tombstone of %q", got[2].Key, got[2].Value, want)
				}
			} else if bytes.Equal(got[2].Key[5:], []byte("k2")) {
				t.Errorf("the listed key was produced: %q", got[2].Key)
			}
			r = mustRun(t, ctx, ExitOK, args...)
			if !strings.Contains(r.out, " records=0 ") {
				t.Errorf("re-run: %q", r.out)
			}
		})
	}
}
