//go:build integration

package e2e

import (
	"bytes"
	"encoding/json"
	"fmt"
	"os/exec"
	"sort"
	"strings"
	"testing"
	"time"

	"github.com/kafkas3/kafkas3/internal/testbed"
)

// zstdReadPy has pyarrow (pyarrow.json, which picks the codec from the
// extension) and DuckDB (read_json) read each .json.zst object named on
// the command line, and prints per object the rows each saw and the
// smallest and largest "i" and the "p" of the values, as JSON.
const zstdReadPy = `import json, sys
import duckdb, pyarrow.json as pj
con = duckdb.connect()
out = {}
for path in sys.argv[1:]:
    t = pj.read_json(path)
    i = t.column("i").to_pylist()
    rows, lo, hi, parts = con.execute(
        "SELECT count(*), min(i), max(i), count(DISTINCT p) FROM read_json(?)", [path]).fetchone()
    out[path] = {"pyarrow_rows": t.num_rows, "pyarrow_min": min(i), "pyarrow_max": max(i),
        "p": t.column("p").to_pylist()[0], "duckdb_rows": rows, "duckdb_min": lo, "duckdb_max": hi, "duckdb_parts": parts}
print(json.dumps(out))`

// zstdPyObject is what zstdReadPy prints for one object.
type zstdPyObject struct {
	PyarrowRows int `json:"pyarrow_rows"`
	PyarrowMin  int `json:"pyarrow_min"`
	PyarrowMax  int `json:"pyarrow_max"`
	P           int `json:"p"`
	DuckDBRows  int `json:"duckdb_rows"`
	DuckDBMin   int `json:"duckdb_min"`
	DuckDBMax   int `json:"duckdb_max"`
	DuckDBParts int `json:"duckdb_parts"`
}

// TestIntegrationSinkZstd (issue 20 item 4): `kafkas3 sink --once` with
// s3.compression.type=zstd writes JSON objects (.json.zst, with their
// .keys.json.zst and .headers.json.zst twins) and bytes objects (.bin.zst,
// level 9, with .keys.bin.zst twins) of one block and of several to
// versitygw; downloaded with the aws CLI, each is one zstd frame (zstd
// -lv) that zstd -t accepts and zstd -dc expands to exactly the records'
// bytes; pyarrow and DuckDB read every JSON object's rows; `kafkas3 verify
// --deep` finds each archive clean, and `kafkas3 source` restores each
// into a new topic where kcat reads every value in order.
func TestIntegrationSinkZstd(t *testing.T) {
	zstdCmd := testbed.Tool(t, "zstd", "apt-get install zstd")
	if err := exec.Command("python3", "-c", "import duckdb, pyarrow").Run(); err != nil {
		t.Fatalf("python3 with duckdb and pyarrow is required (pip install duckdb pyarrow): %v", err)
	}
	b := newBed(t)
	const parts, perPart, flush = 2, 3000, 1400 // objects of about 150 KB (two blocks) and one of 20 KB
	topic := srcUnique("e2e-zstd")
	b.k.CreateTopic(t, topic, parts)
	b.produce(t, topic, parts, 0, perPart, value)
	for _, c := range []struct {
		name, ext string
		kv        []string
	}{
		{"json", ".json.zst", []string{"store.kafka.keys", "true", "keys.format.class", "json",
			"store.kafka.headers", "true", "headers.format.class", "json"}},
		{"bytes", ".bin.zst", []string{"format.class", "bytes", "s3.compression.level", "9",
			"store.kafka.keys", "true", "keys.format.class", "bytes"}},
	} {
		t.Run(c.name, func(t *testing.T) {
			bucket := b.s.CreateBucket(t)
			cfg := b.sinkConf(topic+"-"+c.name, topic, bucket).with(append([]string{"flush.size", fmt.Sprint(flush),
				"s3.compression.type", "zstd"}, c.kv...)...).write(t)
			if sum, _ := runOnce(t, "sink --once "+c.name+"+zstd", cfg); sum.records != parts*perPart {
				t.Fatalf("sink summary %s, want %d records", sum.line, parts*perPart)
			}
			values := zstdCheckObjects(t, b, bucket, topic, zstdCmd, c.ext, flush, perPart)
			if c.name == "json" {
				zstdCheckPython(t, values, flush, perPart)
			}
			if p := startKafkas3(t, "verify --deep", "verify", cfg, "--deep"); p.wait(2*time.Minute) != 0 {
				t.Fatalf("verify --deep: exit code not 0\n%s\n%s", p.stdout(), p.logs())
			}
			target := "copy_of_" + topic + "_" + c.name
			sum, _ := srcRunOK(t, "source", cfg, "--topic-rename", target, "--create-topics")
			if sum.records != parts*perPart || sum.damaged != 0 || sum.gaps != 0 {
				t.Fatalf("source summary %q, want %d records, nothing damaged, no gaps", sum.line, parts*perPart)
			}
			for p := range int32(parts) {
				srcSameValues(t, fmt.Sprintf("kcat %s/%d", target, p), b.srcKcat(t, target, p), srcValues(p, 0, perPart))
			}
		})
	}
}

// zstdCheckObjects downloads bucket and checks every object of topic: the
// keys (value objects at each flush.size with ext, their .keys and
// .headers twins), one zstd frame each (zstd -lv), zstd -t, and, for the
// value objects, zstd -dc giving exactly the values with the format's
// newline. It returns the local paths of the value objects.
func zstdCheckObjects(t *testing.T, b *bed, bucket, topic, zstdCmd, ext string, flush, perPart int) map[string]string {
	t.Helper()
	files := b.download(t, bucket)
	values := map[string]string{}
	twins := 0
	for k, path := range files {
		if !strings.HasSuffix(k, ext) {
			t.Fatalf("object %s is not %s", k, ext)
		}
		out, err := exec.Command(zstdCmd, "-lv", path).CombinedOutput()
		if err != nil || !strings.Contains(string(out), "# Zstandard Frames: 1\n") {
			t.Fatalf("zstd -lv %s: %v, want one frame:\n%s", k, err, out)
		}
		if out, err := exec.Command(zstdCmd, "-q", "-t", path).CombinedOutput(); err != nil {
			t.Fatalf("zstd -t %s: %v\n%s", k, err, out)
		}
		if strings.Contains(k, ".keys.") || strings.Contains(k, ".headers.") {
			twins++
			continue
		}
		values[k] = path
		p, off := keyNumbers(t, k, "+", ext)
		var want bytes.Buffer
		for i := off; i < min(off+flush, perPart); i++ {
			want.Write(value(int32(p), i))
			want.WriteByte('\n')
		}
		got, err := exec.Command(zstdCmd, "-q", "-dc", path).Output()
		if err != nil || !bytes.Equal(got, want.Bytes()) {
			t.Fatalf("zstd -dc %s: %d bytes (%v), want the %d bytes of its values", k, len(got), err, want.Len())
		}
	}
	if perObject := (perPart + flush - 1) / flush; len(values) != 2*perObject || twins == 0 {
		t.Fatalf("%d value objects and %d twins, want %d value objects and their twins", len(values), twins, 2*perObject)
	}
	t.Logf("%d %s objects and %d twins: one zstd frame each, zstd -t and zstd -dc read them", len(values), ext, twins)
	return values
}

// zstdCheckPython has pyarrow and DuckDB read every JSON value object.
func zstdCheckPython(t *testing.T, values map[string]string, flush, perPart int) {
	t.Helper()
	keys := make([]string, 0, len(values))
	paths := make([]string, 0, len(values))
	for k := range values {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	for _, k := range keys {
		paths = append(paths, values[k])
	}
	out, err := exec.Command("python3", append([]string{"-c", zstdReadPy}, paths...)...).Output()
	if err != nil {
		t.Fatalf("python3: %v\n%s", err, out)
	}
	var read map[string]zstdPyObject
	if err := json.Unmarshal(out, &read); err != nil {
		t.Fatalf("python3 output: %v\n%s", err, out)
	}
	for _, k := range keys {
		p, off := keyNumbers(t, k, "+", ".json.zst")
		n := min(off+flush, perPart) - off
		want := zstdPyObject{PyarrowRows: n, PyarrowMin: off, PyarrowMax: off + n - 1, P: p,
			DuckDBRows: n, DuckDBMin: off, DuckDBMax: off + n - 1, DuckDBParts: 1}
		if got := read[values[k]]; got != want {
			t.Errorf("%s: pyarrow and DuckDB read %+v, want %+v", k, got, want)
		}
	}
	t.Logf("pyarrow and DuckDB read the rows of all %d .json.zst objects", len(keys))
}
