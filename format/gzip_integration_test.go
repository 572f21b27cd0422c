//go:build integration

package format

import (
	"bytes"
	"crypto/sha256"
	"encoding/hex"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
)

// TestGzipToolsIntegration has gzip -d and Python's gzip module (zlib)
// read objects that mix level-1 and level-6 chunks (level -1 on letters
// then vocabulary JSON), and objects of every explicit level: each must
// decompress to exactly the records' bytes, as one gzip member.
func TestGzipToolsIntegration(t *testing.T) {
	values := append(letterValues(3000), vocabularyValues(3000)...)
	plain := writeAllRecords(t, NewJSON(), values...)
	sum := sha256.Sum256(plain)
	want := hex.EncodeToString(sum[:])
	dir := t.TempDir()
	for _, level := range []int{-1, 0, 1, 6, 9} {
		data := writeAllRecords(t, mustGzip(t, NewJSON(), level), values...)
		path := filepath.Join(dir, "object.json.gz")
		if err := os.WriteFile(path, data, 0o600); err != nil {
			t.Fatal(err)
		}
		got, err := exec.Command("gzip", "-dc", path).Output()
		if err != nil || !bytes.Equal(got, plain) {
			t.Errorf("level %d: gzip -dc gave %d bytes (%v), want the %d bytes written", level, len(got), err, len(plain))
		}
		// zlib.decompressobj with wbits 31 reads one gzip member and
		// keeps what follows in unused_data: nothing may follow.
		py := `import hashlib, sys, zlib
d = zlib.decompressobj(31)
out = d.decompress(open(sys.argv[1], "rb").read()) + d.flush()
assert d.eof and not d.unused_data, "not exactly one gzip member"
print(hashlib.sha256(out).hexdigest())`
		out, err := exec.Command("python3", "-c", py, path).CombinedOutput()
		if err != nil || strings.TrimSpace(string(out)) != want {
			t.Errorf("level %d: python3 zlib: %s (%v), want sha256 %s", level, out, err, want)
		}
	}
}
