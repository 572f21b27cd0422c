package cmd

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/twmb/franz-go/pkg/kgo"
)

// TestSinkCmdKeysHeadersTombstones runs `kafkas3 sink` with store.kafka.keys,
// store.kafka.headers (JSON) and behavior.on.null.values=write, and checks
// the parallel objects and the tombstone folder.
func TestSinkCmdKeysHeadersTombstones(t *testing.T) {
	ctx := cliContext(t)
	brokers := startKafka(t, 1, "kv")
	cl, err := kgo.NewClient(kgo.SeedBrokers(strings.Split(brokers, ",")...))
	if err != nil {
		t.Fatal(err)
	}
	h := func(v string) []kgo.RecordHeader {
		return []kgo.RecordHeader{{Key: "h", Value: []byte(v)}, {Key: "h", Value: nil}}
	}
	recs := []*kgo.Record{
		{Topic: "kv", Key: []byte("a"), Value: []byte(`{"v":1}`), Headers: h("1")},
		{Topic: "kv", Key: []byte("b"), Value: []byte(`{"v":2}`), Headers: h("2")},
		{Topic: "kv", Key: []byte("c"), Value: nil, Headers: h("3")},
		{Topic: "kv", Key: []byte("d"), Value: []byte(`{"v":4}`), Headers: h("4")},
	}
	err = cl.ProduceSync(ctx, recs...).FirstErr()
	cl.Close()
	if err != nil {
		t.Fatal(err)
	}
	dir := t.TempDir()
	cfg := writeFile(t, "sink.yaml", sinkYAML(brokers, dir, "kv", 10)+`store.kafka.keys: true
store.kafka.headers: true
keys.format.class: io.confluent.connect.s3.format.json.JsonFormat
headers.format.class: json
behavior.on.null.values: write
tombstone.encoded.partition: deleted
`)
	r := mustRun(t, ctx, ExitOK, "sink", "-c", cfg, "--once", "--log-level", "warn")
	if !strings.Contains(r.out, " records=4 objects=8 ") {
		t.Errorf("summary: %q", r.out)
	}
	hdr := func(v string) string { return `[{"key":"h","value":"` + v + `"},{"key":"h","value":null}]` + "\n" }
	want := map[string]string{
		"topics/kv/partition=0/kv+0+0000000000.json":         "{\"v\":1}\n{\"v\":2}\n",
		"topics/kv/partition=0/kv+0+0000000000.keys.json":    "\"a\"\n\"b\"\n",
		"topics/kv/partition=0/kv+0+0000000000.headers.json": hdr("1") + hdr("2"),
		"topics/kv/deleted/kv+0+0000000002.keys.json":        "\"c\"\n",
		"topics/kv/deleted/kv+0+0000000002.headers.json":     hdr("3"),
		"topics/kv/partition=0/kv+0+0000000003.json":         "{\"v\":4}\n",
		"topics/kv/partition=0/kv+0+0000000003.keys.json":    "\"d\"\n",
		"topics/kv/partition=0/kv+0+0000000003.headers.json": hdr("4"),
	}
	got := objectKeys(t, dir)
	if len(got) != len(want) {
		t.Fatalf("objects: %q", got)
	}
	for _, k := range got {
		b, err := os.ReadFile(filepath.Join(dir, k))
		if err != nil {
			t.Fatal(err)
		}
		if w, ok := want[k]; !ok || string(b) != w {
			t.Errorf("%s: got %q, want %q", k, b, w)
		}
	}
}
