package cmd

import (
	"bytes"
	"context"
	"encoding/base64"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"reflect"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/kafkas3/kafkas3/convert"
	"github.com/kafkas3/kafkas3/format"
	"github.com/kafkas3/kafkas3/internal/s3fake"
	"github.com/twmb/avro"
	"github.com/twmb/franz-go/pkg/kgo"
)

// This file proves `kafkas3 cat` against a franz-go dump of the source
// topic (readRecords) for every format the sink writes: records go
// through `kafkas3 sink --once` into a local dir, come back through
// `kafkas3 cat --json`, and each line is compared with the record Kafka
// holds at its offset, for every property the archive keeps.

// catLine is one JSON line of cat.
type catLine struct {
	Topic         string          `json:"topic"`
	Partition     int32           `json:"partition"`
	Offset        int64           `json:"offset"`
	Timestamp     *int64          `json:"timestamp"`
	Key           json.RawMessage `json:"key"`
	KeyEncoding   string          `json:"key_encoding"`
	Value         json.RawMessage `json:"value"`
	ValueEncoding string          `json:"value_encoding"`
	Headers       []struct {
		Key           string          `json:"key"`
		Value         json.RawMessage `json:"value"`
		ValueEncoding string          `json:"value_encoding"`
	} `json:"headers"`
}

// parseCat reads cat's JSON lines, refusing unknown fields.
func parseCat(t *testing.T, out string) []catLine {
	t.Helper()
	var lines []catLine
	for _, l := range strings.Split(strings.TrimSuffix(out, "\n"), "\n") {
		if l == "" {
			continue
		}
		var c catLine
		dec := json.NewDecoder(strings.NewReader(l))
		dec.DisallowUnknownFields()
		if err := dec.Decode(&c); err != nil {
			t.Fatalf("cat line %q: %v", l, err)
		}
		lines = append(lines, c)
	}
	return lines
}

// bytesOf decodes a printed key, value or header value: nil for null.
func bytesOf(t *testing.T, raw json.RawMessage, enc string) []byte {
	t.Helper()
	if string(raw) == "null" {
		return nil
	}
	var s string
	if err := json.Unmarshal(raw, &s); err != nil {
		t.Fatalf("%s is not a JSON string: %v", raw, err)
	}
	if enc == "base64" {
		b, err := base64.StdEncoding.DecodeString(s)
		if err != nil {
			t.Fatalf("%q is not base64: %v", s, err)
		}
		return b
	}
	if enc != "" {
		t.Fatalf("encoding %q for a string", enc)
	}
	return []byte(s)
}

// catKeeps says what an archive keeps of each record.
type catKeeps struct {
	keys, headers, timestamps bool
	nulls                     bool // records with a null value are archived (else skipped by the sink)
	// typed decodes a produced value into the JSON cat prints for it
	// (Avro, Parquet); nil: values are bytes.
	typed func(v []byte) any
}

// checkCat compares cat's lines with the dump, record by record in
// offset order per partition.
func checkCat(t *testing.T, lines []catLine, dump map[int32][]*kgo.Record, k catKeeps) {
	t.Helper()
	var want []*kgo.Record
	for p := range int32(64) {
		for _, r := range dump[p] {
			if r.Value != nil || k.nulls {
				want = append(want, r)
			}
		}
	}
	if len(lines) != len(want) {
		t.Fatalf("cat printed %d records, the topic holds %d to compare", len(lines), len(want))
	}
	for i, l := range lines {
		w := want[i]
		at := fmt.Sprintf("line %d (%d/%d)", i, w.Partition, w.Offset)
		if l.Topic != w.Topic || l.Partition != w.Partition || l.Offset != w.Offset {
			t.Errorf("%s: %s/%d/%d", at, l.Topic, l.Partition, l.Offset)
		}
		switch {
		case k.timestamps && (l.Timestamp == nil || *l.Timestamp != w.Timestamp.UnixMilli()):
			t.Errorf("%s: timestamp %v, want %d", at, l.Timestamp, w.Timestamp.UnixMilli())
		case !k.timestamps && l.Timestamp != nil:
			t.Errorf("%s: timestamp %d from an archive without them", at, *l.Timestamp)
		}
		wantKey := w.Key
		if !k.keys {
			wantKey = nil
		}
		if got := bytesOf(t, l.Key, l.KeyEncoding); !bytes.Equal(got, wantKey) || (got == nil) != (wantKey == nil) {
			t.Errorf("%s: key %q, want %q", at, got, wantKey)
		}
		checkCatValue(t, at, l, w.Value, k)
		if k.headers {
			checkCatHeaders(t, at, l, w.Headers)
		} else if len(l.Headers) != 0 {
			t.Errorf("%s: headers %v from an archive without them", at, l.Headers)
		}
	}
}

func checkCatValue(t *testing.T, at string, l catLine, want []byte, k catKeeps) {
	t.Helper()
	if k.typed == nil || want == nil {
		if got := bytesOf(t, l.Value, l.ValueEncoding); !bytes.Equal(got, want) || (got == nil) != (want == nil) {
			t.Errorf("%s: value %q, want %q", at, got, want)
		}
		return
	}
	var got any
	if err := json.Unmarshal(l.Value, &got); err != nil || l.ValueEncoding != "json" {
		t.Fatalf("%s: value %s (%s): %v", at, l.Value, l.ValueEncoding, err)
	}
	if w := k.typed(want); !reflect.DeepEqual(got, w) {
		t.Errorf("%s: value %v, want %v", at, got, w)
	}
}

func checkCatHeaders(t *testing.T, at string, l catLine, want []kgo.RecordHeader) {
	t.Helper()
	if len(l.Headers) != len(want) {
		t.Errorf("%s: %d headers, want %d", at, len(l.Headers), len(want))
		return
	}
	for j, h := range l.Headers {
		v := bytesOf(t, h.Value, h.ValueEncoding)
		if h.Key != want[j].Key || !bytes.Equal(v, want[j].Value) || (v == nil) != (want[j].Value == nil) {
			t.Errorf("%s: header %d %q=%q, want %q=%q", at, j, h.Key, v, want[j].Key, want[j].Value)
		}
	}
}

// catTypedJSON returns what cat prints for a produced Avro value: Avro's
// JSON of it, decoded.
func catTypedJSON(t *testing.T, ctx context.Context, c *convert.AvroConverter, topic string) func([]byte) any {
	return catTyped(t, ctx, c, topic, false)
}

// catTyped is catTypedJSON for keys (isKey) or values.
func catTyped(t *testing.T, ctx context.Context, c *convert.AvroConverter, topic string, isKey bool) func([]byte) any {
	return func(v []byte) any {
		typed, err := c.Convert(ctx, topic, isKey, v)
		if err != nil {
			t.Fatal(err)
		}
		nat, err := format.AvroNative(typed)
		if err != nil {
			t.Fatal(err)
		}
		js, err := typed.Schema.Avro.EncodeJSON(nat)
		if err != nil {
			t.Fatal(err)
		}
		var out any
		if err := json.Unmarshal(js, &out); err != nil {
			t.Fatal(err)
		}
		return out
	}
}

const catSchema = `{"type":"record","name":"Order","namespace":"ct","fields":[{"name":"p","type":"int"},{"name":"i","type":"long"},` +
	`{"name":"note","type":["null","string"],"default":null},{"name":"tags","type":{"type":"array","items":"string"}}]}`

// catAvroValues returns a value function producing Avro values framed by
// ser, and a decoder of them for checkCat.
func catAvroValues(t *testing.T, ctx context.Context, ser *convert.AvroConverter) func(p int32, i int) []byte {
	parsed, err := avro.Parse(catSchema)
	if err != nil {
		t.Fatal(err)
	}
	schema := &format.Schema{Avro: parsed, Text: catSchema}
	return func(p int32, i int) []byte {
		v := map[string]any{"p": p, "i": int64(i) << 40, "note": nil, "tags": []any{}}
		if i%2 == 1 {
			v["note"], v["tags"] = fmt.Sprintf("n-%d-%d", p, i), []any{"x", "ü"}
		}
		b, err := ser.Encode(ctx, "ct-value", schema, v)
		if err != nil {
			t.Fatal(err)
		}
		return b
	}
}

func TestCatEveryFormat(t *testing.T) {
	const n = 9 // records per partition
	textValue := func(p int32, i int) []byte { return fmt.Appendf(nil, `{"p":%d,"i":%d,"s":"ü \"q\""}`, p, i) }
	binValue := func(p int32, i int) []byte {
		if i%2 == 1 {
			return fmt.Appendf(nil, "v-%d-%d\xff\x00", p, i) // not UTF-8: base64
		}
		return textValue(p, i)
	}
	twins := "store.kafka.keys: true\nstore.kafka.headers: true\nbehavior.on.null.values: write\n"
	for _, tc := range []struct {
		name, class, extra string
		value              func(p int32, i int) []byte
		registry           bool
		keeps              catKeeps
	}{
		{"bytes", "io.confluent.connect.s3.format.bytearray.ByteArrayFormat", "behavior.on.null.values: ignore\n", binValue, false, catKeeps{}},
		{"json", "io.confluent.connect.s3.format.json.JsonFormat", "behavior.on.null.values: ignore\n", textValue, false, catKeeps{}},
		{"json gzip", "io.confluent.connect.s3.format.json.JsonFormat", "behavior.on.null.values: ignore\ns3.compression.type: gzip\n", textValue, false, catKeeps{}},
		{"json zstd", "io.confluent.connect.s3.format.json.JsonFormat", "behavior.on.null.values: ignore\ns3.compression.type: zstd\n", textValue, false, catKeeps{}},
		{"envelope", "io.confluent.connect.s3.format.json.JsonFormat", "store.envelope: true\n", binValue, false,
			catKeeps{keys: true, headers: true, timestamps: true, nulls: true}},
		{"confluent keys headers", "io.confluent.connect.s3.format.json.JsonFormat", twins + "keys.format.class: json\nheaders.format.class: json\n", textValue, false,
			catKeeps{keys: true, headers: true, nulls: true}},
		{"avro", "io.confluent.connect.s3.format.avro.AvroFormat", twins + "keys.format.class: avro\nheaders.format.class: avro\n" +
			"key.converter: org.apache.kafka.connect.storage.StringConverter\n", nil, true, catKeeps{keys: true, headers: true, nulls: true}},
		{"parquet", "io.confluent.connect.s3.format.parquet.ParquetFormat", "behavior.on.null.values: ignore\n", nil, true, catKeeps{}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			ctx := cliContext(t)
			brokers := startKafka(t, 2, "ct")
			dir := t.TempDir()
			y := strings.Replace(sinkYAML(brokers, dir, "ct", 4), "io.confluent.connect.s3.format.json.JsonFormat", tc.class, 1) + tc.extra
			value := tc.value
			if tc.registry {
				reg, ser := startRegistry(t)
				y += "value.converter: io.confluent.connect.avro.AvroConverter\nvalue.converter.schema.registry.url: " + reg.URL() + "\n"
				value = catAvroValues(t, ctx, ser)
				tc.keeps.typed = catTypedJSON(t, ctx, ser, "ct")
			}
			cfg := writeFile(t, "sink.yaml", y)
			rtProduce(t, ctx, brokers, "ct", n, value)
			mustRun(t, ctx, ExitOK, "sink", "-c", cfg, "--once", "--log-level", "warn")
			dump := readRecords(t, ctx, brokers, "ct")
			r := mustRun(t, ctx, ExitOK, "cat", "-c", cfg, "--topic", "ct")
			checkCat(t, parseCat(t, r.out), dump, tc.keeps)
			if r.err != "" {
				t.Errorf("stderr of an indexed cat: %q", r.err)
			}
			// --scan reads the objects without the index: envelopes carry
			// their offsets; other objects' offsets are assumed, and said so.
			r = mustRun(t, ctx, ExitOK, "cat", "-c", cfg, "--topic", "ct", "--scan")
			if !strings.Contains(r.err, "kafkas3 cat: --scan: listed and scanned every object of the topic") {
				t.Errorf("--scan: stderr %q", r.err)
			}
			if assumed := strings.Contains(r.err, "offsets are assumed consecutive"); assumed == tc.keeps.timestamps {
				t.Errorf("--scan of %s: stderr %q", tc.name, r.err)
			}
			if tc.keeps.nulls {
				checkCat(t, parseCat(t, r.out), dump, tc.keeps)
			}
			if tc.name == "json" {
				catUntimed(t, ctx, cfg, dir, dump)
			}
		})
	}
}

// catPick returns the records of dump that keep takes, by partition.
func catPick(dump map[int32][]*kgo.Record, keep func(r *kgo.Record) bool) map[int32][]*kgo.Record {
	out := map[int32][]*kgo.Record{}
	for p, rs := range dump {
		for _, r := range rs {
			if keep(r) {
				out[p] = append(out[p], r)
			}
		}
	}
	return out
}

// catArchiveS3 archives n envelope records per partition of topic ct (2
// partitions, envProduce: keys, headers, timestamps) into the in-process
// S3 fake in objects of 4 records, and returns the config, the fake, the
// data object keys and the dump of the topic.
func catArchiveS3(t *testing.T, ctx context.Context, n int) (string, *s3fake.Server, []string, map[int32][]*kgo.Record) {
	t.Helper()
	fake := s3fake.New()
	t.Cleanup(fake.Close)
	const bucket = "kafkas3-cat"
	fake.CreateBucket(bucket)
	brokers := startKafka(t, 2, "ct")
	envProduce(t, ctx, brokers, "ct", n, func(p int32, i int) []byte { return fmt.Appendf(nil, "v-%d-%d", p, i) })
	cfg := writeFile(t, "sink.yaml", fmt.Sprintf(`name: cat
bootstrap.servers: %s
topics: ct
flush.size: 4
format.class: io.confluent.connect.s3.format.json.JsonFormat
store.envelope: true
store.url: %s
s3.bucket.name: %s
aws.access.key.id: AKFAKE
aws.secret.access.key: fake-secret
`, brokers, fake.URL, bucket))
	mustRun(t, ctx, ExitOK, "sink", "-c", cfg, "--once", "--log-level", "warn")
	var data []string
	for _, k := range fake.Keys(bucket) {
		if strings.HasPrefix(k, "topics/") {
			data = append(data, k)
		}
	}
	if len(data) != 2*((n+3)/4) {
		t.Fatalf("data objects %q, want %d per partition", data, (n+3)/4)
	}
	return cfg, fake, data, readRecords(t, ctx, brokers, "ct")
}

// TestCatSelection proves the selection flags against the dump, and that
// with the index cat opens only the objects that can hold the selection
// (counted GETs of the S3 fake) and stops at --limit.
func TestCatSelection(t *testing.T) {
	ctx := cliContext(t)
	cfg, fake, data, dump := catArchiveS3(t, ctx, 12)
	all := catKeeps{keys: true, headers: true, timestamps: true, nulls: true}
	base := dump[0][0].Timestamp
	obj := func(p, start int) string { return fmt.Sprintf("topics/ct/partition=%d/ct+%d+%010d.json", p, p, start) }
	for _, tc := range []struct {
		name  string
		args  []string
		keep  func(r *kgo.Record) bool
		reads []string // the data objects cat may GET, once each
	}{
		{"everything", nil, func(*kgo.Record) bool { return true }, data},
		{"offsets of one partition", []string{"--partition", "1", "--offset", "5:6"},
			func(r *kgo.Record) bool { return r.Partition == 1 && r.Offset >= 5 && r.Offset <= 6 }, []string{obj(1, 4)}},
		{"from an offset on", []string{"--partition", "0", "--offset", "9:"},
			func(r *kgo.Record) bool { return r.Partition == 0 && r.Offset >= 9 }, []string{obj(0, 8)}},
		{"one offset", []string{"--offset", "3"},
			func(r *kgo.Record) bool { return r.Offset == 3 }, []string{obj(0, 0), obj(1, 0)}},
		{"limit", []string{"--limit", "2"},
			func(r *kgo.Record) bool { return r.Partition == 0 && r.Offset < 2 }, []string{obj(0, 0)}},
		{"time window", []string{"--from", base.Add(9 * time.Second).Format(time.RFC3339Nano), "--until", fmt.Sprint(base.Add(10 * time.Second).UnixMilli())},
			func(r *kgo.Record) bool { return r.Partition == 0 && (r.Offset == 9 || r.Offset == 10) }, []string{obj(0, 8)}},
		{"key", []string{"--key", "key-1-7\n\""},
			func(r *kgo.Record) bool { return string(r.Key) == "key-1-7\n\"" }, data},
		{"key regex", []string{"--key-regex", `key-0-(2|3)\s"`},
			func(r *kgo.Record) bool { return r.Partition == 0 && (r.Offset == 2 || r.Offset == 3) }, data},
		{"header with value", []string{"--header", "ü=✓"},
			func(r *kgo.Record) bool { return len(r.Headers) == 1 }, data},
		{"header name", []string{"--header", "d", "--partition", "1"},
			func(r *kgo.Record) bool { return r.Partition == 1 && len(r.Headers) == 3 }, data[3:]},
	} {
		t.Run(tc.name, func(t *testing.T) {
			gets, heads := fake.CountKeys(s3fake.OpGetObject), fake.CountKeys(s3fake.OpHeadObject)
			r := mustRun(t, ctx, ExitOK, append([]string{"cat", "-c", cfg, "--topic", "ct"}, tc.args...)...)
			checkCat(t, parseCat(t, r.out), catPick(dump, tc.keep), all)
			checkGets(t, tc.name, fake, data, gets, heads, func(k string) int {
				if slices.Contains(tc.reads, k) {
					return 1
				}
				return 0
			})
		})
	}
}

// TestCatOutputAndExitCodes proves -f, --encoding, exit code 1 when
// nothing matched, exit code 2 on usage errors, and the scan of an
// archive without index (which says so and prints the same records).
func TestCatOutputAndExitCodes(t *testing.T) {
	ctx := cliContext(t)
	cfg, _, _, dump := catArchiveS3(t, ctx, 6)
	all := catKeeps{keys: true, headers: true, timestamps: true, nulls: true}

	r := mustRun(t, ctx, ExitOK, "cat", "-c", cfg, "--topic", "ct", "--partition", "0", "--offset", "2:4", "-f", `%t|%p|%o|%T|%k|%K|%s|%S|%h|%%\n`)
	var want strings.Builder
	for _, rec := range dump[0][2:5] {
		var hs []string
		for _, h := range rec.Headers {
			hs = append(hs, h.Key+"="+string(h.Value))
		}
		fmt.Fprintf(&want, "ct|0|%d|%d|%s|%d|%s|%d|%s|%%\n", rec.Offset, rec.Timestamp.UnixMilli(), rec.Key, len(rec.Key), rec.Value, len(rec.Value), strings.Join(hs, ","))
	}
	if r.out != want.String() {
		t.Errorf("-f output:\n%q\nwant\n%q", r.out, want.String())
	}
	r = mustRun(t, ctx, ExitOK, "cat", "-c", cfg, "--topic", "ct", "--offset", "0", "--partition", "0", "-f", `%K %k|\n`)
	if r.out != "-1 |\n" {
		t.Errorf("-f of a null key: %q, want %q", r.out, "-1 |\n")
	}

	// auto: text, and base64 for the header value 00 ff only.
	r = mustRun(t, ctx, ExitOK, "cat", "-c", cfg, "--topic", "ct", "--partition", "0", "--offset", "1")
	if !strings.Contains(r.out, `"value":"v-0-1",`) || !strings.Contains(r.out, `{"key":"d","value":"AP8=","value_encoding":"base64"}`) ||
		!strings.Contains(r.out, `{"key":"d","value":null}`) || !strings.Contains(r.out, `"key":"",`) {
		t.Errorf("--encoding auto: %s", r.out)
	}
	checkCat(t, parseCat(t, r.out), catPick(dump, func(r *kgo.Record) bool { return r.Partition == 0 && r.Offset == 1 }), all)
	r = mustRun(t, ctx, ExitOK, "cat", "-c", cfg, "--topic", "ct", "--encoding", "base64")
	if !strings.Contains(r.out, `"value":"di0wLTE=","value_encoding":"base64"`) {
		t.Errorf("--encoding base64: %s", r.out)
	}
	checkCat(t, parseCat(t, r.out), dump, all)
	r = mustRun(t, ctx, ExitOK, "cat", "-c", cfg, "--topic", "ct", "--encoding", "utf8", "--partition", "0", "--offset", "1")
	if !strings.Contains(r.out, `{"key":"d","value":"\u0000�"}`) {
		t.Errorf("--encoding utf8: %s", r.out)
	}

	r = mustRun(t, ctx, ExitFail, "cat", "-c", cfg, "--topic", "ct", "--key", "nope")
	if r.out != "" || !strings.Contains(r.err, "no record matched") {
		t.Errorf("no match: stdout %q stderr %q", r.out, r.err)
	}
	mustRun(t, ctx, ExitFail, "cat", "-c", cfg, "--topic", "ct", "--offset", "100:")
	for _, bad := range [][]string{
		{"--key", "a", "--key-regex", "b"},
		{"--offset", "5:3"},
		{"--offset", "x"},
		{"--encoding", "hex"},
		{"-f", `%z`},
		{"--key-regex", "("},
		{"--from", "yesterday"},
		{"--limit", "-1"},
		{"--header", "=v"},
		{"--from", "2026-12-02T00:00:00Z", "--until", "2026-12-01T00:00:00Z"},
	} {
		r := mustRun(t, ctx, ExitConfig, append([]string{"cat", "-c", cfg, "--topic", "ct"}, bad...)...)
		if !strings.Contains(r.err, bad[len(bad)-2]) && !strings.Contains(r.err, strings.TrimLeft(bad[0], "-")) {
			t.Errorf("%q: the error does not name the flag: %s", bad, r.err)
		}
	}
	r = mustRun(t, ctx, ExitConfig, "cat", "-c", cfg)
	if !strings.Contains(r.err, "--topic") {
		t.Errorf("without --topic: %s", r.err)
	}

	// Without an index (another prefix), cat lists and scans, and says so.
	r = mustRun(t, ctx, ExitOK, "cat", "-c", cfg, "--topic", "ct", "-p", "kafkas3.index.prefix=elsewhere/")
	if !strings.Contains(r.err, `no archive index for topic "ct"`) || !strings.Contains(r.err, "scanned every object of the topic (4 opened)") {
		t.Errorf("scan: stderr %q", r.err)
	}
	checkCat(t, parseCat(t, r.out), dump, all)
	r = mustRun(t, ctx, ExitOK, "cat", "-c", cfg, "--topic", "ct", "-p", "kafkas3.index.prefix=elsewhere/", "--partition", "1", "--offset", "4:5")
	checkCat(t, parseCat(t, r.out), catPick(dump, func(r *kgo.Record) bool { return r.Partition == 1 && r.Offset >= 4 }), all)
}

// TestCatTypedKeys: Avro record keys (AvroConverter keys, in .keys
// Parquet objects) next to Parquet values print as JSON, both checked
// against the dump decoded with the registry; a tombstone's value is null.
func TestCatTypedKeys(t *testing.T) {
	ctx := cliContext(t)
	const keySchema = `{"type":"record","name":"K","namespace":"ct","fields":[{"name":"p","type":"int"},{"name":"id","type":"string"}]}`
	brokers := startKafka(t, 2, "ck")
	reg, ser := startRegistry(t)
	parsed, err := avro.Parse(keySchema)
	if err != nil {
		t.Fatal(err)
	}
	ks := &format.Schema{Avro: parsed, Text: keySchema}
	values := catAvroValues(t, ctx, ser)
	cl, err := kgo.NewClient(kgo.SeedBrokers(strings.Split(brokers, ",")...), kgo.RecordPartitioner(kgo.ManualPartitioner()))
	if err != nil {
		t.Fatal(err)
	}
	var recs []*kgo.Record
	for p := range int32(2) {
		for i := range 7 {
			k, err := ser.Encode(ctx, "ck-key", ks, map[string]any{"p": p, "id": fmt.Sprintf("id-%d-%d", p, i)})
			if err != nil {
				t.Fatal(err)
			}
			r := &kgo.Record{Topic: "ck", Partition: p, Key: k, Headers: rtHeaders(p, i)}
			if i != 4 {
				r.Value = values(p, i)
			}
			recs = append(recs, r)
		}
	}
	if err := cl.ProduceSync(ctx, recs...).FirstErr(); err != nil {
		t.Fatal(err)
	}
	cl.Close()
	y := strings.Replace(sinkYAML(brokers, t.TempDir(), "ck", 3), "io.confluent.connect.s3.format.json.JsonFormat", "parquet", 1)
	cfg := writeFile(t, "sink.yaml", y+`value.converter: io.confluent.connect.avro.AvroConverter
value.converter.schema.registry.url: `+reg.URL()+`
key.converter: io.confluent.connect.avro.AvroConverter
key.converter.schema.registry.url: `+reg.URL()+`
store.kafka.keys: true
store.kafka.headers: true
keys.format.class: parquet
headers.format.class: parquet
behavior.on.null.values: write
`)
	mustRun(t, ctx, ExitOK, "sink", "-c", cfg, "--once", "--log-level", "warn")
	dump := readRecords(t, ctx, brokers, "ck")
	lines := parseCat(t, mustRun(t, ctx, ExitOK, "cat", "-c", cfg, "--topic", "ck").out)
	keyOf, valueOf := catTyped(t, ctx, ser, "ck", true), catTypedJSON(t, ctx, ser, "ck")
	want := append(append([]*kgo.Record{}, dump[0]...), dump[1]...)
	if len(lines) != len(want) {
		t.Fatalf("cat printed %d records, the topic holds %d", len(lines), len(want))
	}
	for i, l := range lines {
		w := want[i]
		at := fmt.Sprintf("%d/%d", w.Partition, w.Offset)
		var key any
		if err := json.Unmarshal(l.Key, &key); err != nil || l.KeyEncoding != "json" || !reflect.DeepEqual(key, keyOf(w.Key)) || l.Offset != w.Offset {
			t.Errorf("%s: key %s (%s) at offset %d, want %v", at, l.Key, l.KeyEncoding, l.Offset, keyOf(w.Key))
		}
		checkCatValue(t, at, l, w.Value, catKeeps{typed: valueOf})
		checkCatHeaders(t, at, l, w.Headers)
	}
}

// catUntimed: records of plain objects carry no timestamp; --from/--until
// take them by their index entry's time range (and say so), and without
// the index (--scan) leave them out (and say so: nothing matched, exit 1).
func catUntimed(t *testing.T, ctx context.Context, cfg, dir string, dump map[int32][]*kgo.Record) {
	t.Helper()
	at := dump[0][5].Timestamp
	from, until := at.Add(-time.Second).UnixMilli(), at.UnixMilli()
	held := map[[2]int64]bool{}
	for _, e := range loadLocal(t, dir).Entries {
		if e.MaxTS >= from && e.MinTS <= until {
			for i := range e.Records {
				held[[2]int64{int64(e.Partition), e.Offset(i)}] = true
			}
		}
	}
	if len(held) == 0 || len(held) == len(dump[0])+len(dump[1]) {
		t.Fatalf("the window takes %d records: the test needs some, not all", len(held))
	}
	args := []string{"cat", "-c", cfg, "--topic", "ct", "--from", fmt.Sprint(from), "--until", fmt.Sprint(until)}
	r := mustRun(t, ctx, ExitOK, args...)
	if !strings.Contains(r.err, fmt.Sprintf("kafkas3 cat: %d records carry no timestamp of their own (no store.envelope): --from/--until took them by their objects' time range", len(held))) {
		t.Errorf("--from/--until of a plain archive: stderr %q", r.err)
	}
	checkCat(t, parseCat(t, r.out), catPick(dump, func(r *kgo.Record) bool { return held[[2]int64{int64(r.Partition), r.Offset}] }), catKeeps{})
	r = mustRun(t, ctx, ExitFail, append(args, "--scan")...)
	if !strings.Contains(r.err, "records carry no timestamp of their own, nor their objects in an index: --from/--until left them out") || r.out != "" {
		t.Errorf("--from/--until of a plain archive with --scan: stdout %q stderr %q", r.out, r.err)
	}
}

// TestCatDamagedObject: an object that does not decode to its end, or
// that is gone, stops cat with exit 1 naming it, after the records before
// it.
func TestCatDamagedObject(t *testing.T) {
	_, dir, cfg := verifyArchive(t)
	const victim = "topics/orders/partition=1/orders+1+0000000006.json"
	if err := os.Truncate(filepath.Join(dir, filepath.FromSlash(victim)), 10); err != nil {
		t.Fatal(err)
	}
	r := mustRun(t, cliContext(t), ExitFail, "cat", "-c", cfg, "--topic", "orders", "--partition", "1")
	if !strings.Contains(r.err, victim) || !strings.Contains(r.err, "damaged archive object") {
		t.Errorf("stderr %q does not name the damaged object", r.err)
	}
	lines := parseCat(t, r.out)
	if len(lines) != 6 || lines[5].Offset != 5 {
		t.Errorf("printed %d records before the damaged object (offsets 6-8), want offsets 0-5: %s", len(lines), r.out)
	}
	remove(t, dir, victim)
	r = mustRun(t, cliContext(t), ExitFail, "cat", "-c", cfg, "--topic", "orders", "--partition", "1", "--offset", "7")
	if !strings.Contains(r.err, `an object of "`+victim+`" is in the archive index (offsets 6-8) but not in the store`) || r.out != "" {
		t.Errorf("a missing object: stdout %q stderr %q", r.out, r.err)
	}
	mustRun(t, cliContext(t), ExitOK, "cat", "-c", cfg, "--topic", "orders", "--partition", "1", "--offset", "9")
}
