//go:build integration

package format

import (
	"encoding/hex"
	"encoding/json"
	"fmt"
	"math/big"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/twmb/avro"
)

// TestParquetPyarrowIntegration writes the rich sample with every codec
// and has pyarrow (an independent Parquet implementation) read the files:
// the values, codecs, created_by and stored Avro schema must be what was
// written.
func TestParquetPyarrowIntegration(t *testing.T) {
	if err := exec.Command("python3", "-c", "import pyarrow").Run(); err != nil {
		t.Fatalf("python3 with pyarrow is required for this integration test: %v", err)
	}
	s := mustRichSchema(t)
	values := richValues(t, s)
	dir := t.TempDir()
	// pyarrow names Parquet's LZ4_RAW "LZ4" (Arrow's lz4 is the raw block
	// format; the Hadoop-framed one it calls LZ4_HADOOP).
	wantCodec := map[string]string{"none": "UNCOMPRESSED", "snappy": "SNAPPY", "gzip": "GZIP", "zstd": "ZSTD",
		"lz4_raw": "LZ4", "brotli": "BROTLI"}
	var paths []string
	for _, codec := range ParquetCodecs() {
		p := mustParquet(t, ParquetConfig{Codec: codec, RowGroupRecords: 2})
		var recs []*Record
		for i := range 5 {
			recs = append(recs, typedRecord(s, values[i%len(values)], int64(i)))
		}
		path := filepath.Join(dir, "t+0+0000000000"+p.Extension())
		if err := os.WriteFile(path, writeParquet(t, p, recs), 0o644); err != nil {
			t.Fatal(err)
		}
		paths = append(paths, path)
	}
	out, err := exec.Command("python3", append([]string{"../testdata/parquet/check.py"}, paths...)...).Output()
	if err != nil {
		if ee, ok := err.(*exec.ExitError); ok {
			t.Fatalf("check.py: %v\n%s", err, ee.Stderr)
		}
		t.Fatal(err)
	}
	var got map[string]struct {
		Codecs     []string
		CreatedBy  string `json:"created_by"`
		RowGroups  int    `json:"row_groups"`
		AvroSchema string `json:"avro_schema"`
		Rows       []any
	}
	if err := json.Unmarshal(out, &got); err != nil {
		t.Fatalf("check.py output: %v\n%s", err, out)
	}
	root := s.Avro.Root().ExpandReferences()
	for i, codec := range ParquetCodecs() {
		f, ok := got[paths[i]]
		if !ok {
			t.Fatalf("%s: not in pyarrow's output", paths[i])
		}
		if len(f.Codecs) != 1 || f.Codecs[0] != wantCodec[codec] {
			t.Errorf("%s: pyarrow sees codecs %v, want %s", codec, f.Codecs, wantCodec[codec])
		}
		if f.CreatedBy != parquetCreatedBy || f.AvroSchema != richSchemaText || f.RowGroups != 3 {
			t.Errorf("%s: created_by %q, %d row groups, avro schema stored: %v", codec, f.CreatedBy, f.RowGroups, f.AvroSchema == richSchemaText)
		}
		if len(f.Rows) != 5 {
			t.Fatalf("%s: pyarrow read %d rows, want 5", codec, len(f.Rows))
		}
		for r, row := range f.Rows {
			want := canonAny(t, pyExpect(t, root, values[r%len(values)]))
			if g := canonAny(t, row); g != want {
				t.Errorf("%s row %d:\npyarrow %s\n   want %s", codec, r, g, want)
			}
		}
	}
	if t.Failed() {
		return
	}
	t.Logf("pyarrow read %d files (%s), 5 rows each, all values equal", len(paths), strings.Join(ParquetCodecs(), ", "))
}

func canonAny(t *testing.T, v any) string {
	t.Helper()
	b, err := json.Marshal(v)
	if err != nil {
		t.Fatal(err)
	}
	var x any
	if err := json.Unmarshal(b, &x); err != nil {
		t.Fatal(err)
	}
	b, _ = json.Marshal(x)
	return string(b)
}

// pyExpect renders an Avro value the way check.py renders pyarrow's.
func pyExpect(t *testing.T, n *avro.SchemaNode, v any) any {
	t.Helper()
	if n.Type == "union" {
		if v == nil {
			return nil
		}
		for i := range n.Branches {
			if n.Branches[i].Type != "null" {
				return pyExpect(t, &n.Branches[i], v)
			}
		}
	}
	switch n.Type {
	case "record":
		m := v.(map[string]any)
		out := map[string]any{}
		for i := range n.Fields {
			out[n.Fields[i].Name] = pyExpect(t, &n.Fields[i].Type, m[n.Fields[i].Name])
		}
		return out
	case "array":
		out := []any{}
		for _, x := range v.([]any) {
			out = append(out, pyExpect(t, n.Items, x))
		}
		return out
	case "map":
		out := map[string]any{}
		for k, x := range v.(map[string]any) {
			out[k] = pyExpect(t, n.Values, x)
		}
		return out
	}
	switch n.LogicalType {
	case "date":
		return v.(time.Time).Format(time.DateOnly)
	case "timestamp-millis", "timestamp-micros":
		return v.(time.Time).UnixMicro()
	case "decimal":
		return v.(*big.Rat).FloatString(n.Scale)
	}
	switch n.Type {
	case "bytes", "fixed":
		return "hex:" + hex.EncodeToString(v.([]byte))
	case "enum": // Arrow reads Parquet ENUM as binary
		return "hex:" + hex.EncodeToString([]byte(v.(string)))
	case "int", "long", "float", "double", "boolean", "string":
		return v
	}
	t.Fatalf("pyExpect: unhandled %s", n.Type)
	return fmt.Sprint(v)
}
