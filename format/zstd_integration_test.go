//go:build integration

package format

import (
	"bytes"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
)

// zstdPyCheck reads one .json.zst object with pyarrow (its zstd input
// stream, and pyarrow.json, which picks the codec from the extension) and
// DuckDB's read_json, and prints what each saw as JSON.
const zstdPyCheck = `import hashlib, json, sys
import duckdb, pyarrow as pa, pyarrow.json as pj
path = sys.argv[1]
with pa.CompressedInputStream(pa.OSFile(path), "zstd") as f:
    raw = f.read()
table = pj.read_json(path)
rows, ids = duckdb.connect().execute("SELECT count(*), sum(id) FROM read_json(?)", [path]).fetchone()
print(json.dumps({"sha256": hashlib.sha256(raw).hexdigest(), "pyarrow_rows": table.num_rows,
    "pyarrow_ids": sum(table.column("id").to_pylist()), "duckdb_rows": rows, "duckdb_ids": int(ids)}))`

// TestZstdToolsIntegration has the zstd command (zstd -t, zstd -dc, and
// zstd -l, which counts frames), pyarrow and DuckDB read JSON+zstd objects
// of every level of the table, and an object without records: each must
// be one frame holding exactly the records' bytes.
func TestZstdToolsIntegration(t *testing.T) {
	zstdCmd, err := exec.LookPath("zstd")
	if err != nil {
		t.Fatalf("the zstd command is required (apt-get install zstd): %v", err)
	}
	if err := exec.Command("python3", "-c", "import duckdb, pyarrow").Run(); err != nil {
		t.Fatalf("python3 with duckdb and pyarrow is required (pip install duckdb pyarrow): %v", err)
	}
	values := vocabularyValues(3000) // 3 MB: many blocks
	var ids int
	for i := range values {
		ids += i
	}
	plain := writeAllRecords(t, NewJSON(), values...)
	sum := sha256.Sum256(plain)
	want := hex.EncodeToString(sum[:])
	dir := t.TempDir()
	for _, level := range []int{-1, 0, 1, 3, 6, 9} {
		path := filepath.Join(dir, "object.json.zst")
		if err := os.WriteFile(path, writeAllRecords(t, mustZstd(t, NewJSON(), level), values...), 0o600); err != nil {
			t.Fatal(err)
		}
		zstdCLI(t, zstdCmd, path, plain)
		out, err := exec.Command("python3", "-c", zstdPyCheck, path).Output()
		if err != nil {
			t.Fatalf("level %d: python3: %v\n%s", level, err, out)
		}
		var got struct {
			SHA256      string `json:"sha256"`
			PyarrowRows int    `json:"pyarrow_rows"`
			PyarrowIDs  int    `json:"pyarrow_ids"`
			DuckDBRows  int    `json:"duckdb_rows"`
			DuckDBIDs   int    `json:"duckdb_ids"`
		}
		if err := json.Unmarshal(out, &got); err != nil {
			t.Fatalf("level %d: %v: %s", level, err, out)
		}
		if got.SHA256 != want || got.PyarrowRows != len(values) || got.PyarrowIDs != ids ||
			got.DuckDBRows != len(values) || got.DuckDBIDs != ids {
			t.Errorf("level %d: python read %+v; want sha256 %s, %d rows with ids summing to %d", level, got, want, len(values), ids)
		}
	}
	path := filepath.Join(dir, "empty.json.zst")
	if err := os.WriteFile(path, writeAllRecords(t, mustZstd(t, NewJSON(), -1)), 0o600); err != nil {
		t.Fatal(err)
	}
	zstdCLI(t, zstdCmd, path, nil)
}

// zstdCLI checks path with zstd -t, zstd -dc (it must give want) and zstd
// -lv (one frame).
func zstdCLI(t *testing.T, zstdCmd, path string, want []byte) {
	t.Helper()
	if out, err := exec.Command(zstdCmd, "-q", "-t", path).CombinedOutput(); err != nil {
		t.Fatalf("zstd -t %s: %v\n%s", path, err, out)
	}
	got, err := exec.Command(zstdCmd, "-q", "-dc", path).Output()
	if err != nil || !bytes.Equal(got, want) {
		t.Fatalf("zstd -dc %s gave %d bytes (%v), want the %d bytes written", path, len(got), err, len(want))
	}
	out, err := exec.Command(zstdCmd, "-lv", path).CombinedOutput()
	if err != nil || !strings.Contains(string(out), "# Zstandard Frames: 1\n") {
		t.Fatalf("zstd -lv %s: %v, want one frame:\n%s", path, err, out)
	}
}
