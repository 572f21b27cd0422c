package restore

import (
	"errors"
	"path/filepath"
	"strings"
	"testing"

	"github.com/kafkas3/kafkas3/convert"
	"github.com/kafkas3/kafkas3/format"
)

// loadParquet stores one Parquet object of n typed records and loads it as
// a restore produces it, with Config.TempDir dir.
func loadParquet(t *testing.T, n int, dir string) (*loadedObject, error) {
	t.Helper()
	pq, err := format.NewParquet(format.ParquetConfig{Codec: "snappy"})
	if err != nil {
		t.Fatal(err)
	}
	if !needsRandomAccess(pq) {
		t.Fatal("needsRandomAccess(parquet) = false")
	}
	_, lo, err := loadTyped(t, pq, n, dir)
	return lo, err
}

// TestParquetLoadsFromATemporaryFile: a restore reads a Parquet object
// from a copy in Config.TempDir (not from the whole object in memory), with
// the same records: a TempDir that does not exist fails the load, and
// that failure is not the object's damage.
func TestParquetLoadsFromATemporaryFile(t *testing.T) {
	const n = 500
	lo, err := loadParquet(t, n, t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	if lo.buf.Len() != n || lo.facts.records != n {
		t.Fatalf("loaded %d records (facts %d), want %d", lo.buf.Len(), lo.facts.records, n)
	}
	for i, rec := range lo.buf.mem {
		if len(rec.Value) < convert.WireHeaderLen || rec.Value[0] != 0 || rec.ValueTyped != nil {
			t.Fatalf("record %d: not framed, or holds its typed form: %x", i, rec.Value)
		}
	}

	_, err = loadParquet(t, n, filepath.Join(t.TempDir(), "missing"))
	if err == nil || !strings.Contains(err.Error(), "temporary file") {
		t.Fatalf("load with a missing TempDir: %v, want an error about the temporary file", err)
	}
	if isDamage(err) || errors.Is(err, ErrDamagedObject) {
		t.Fatalf("a temporary file that cannot be made is reported as damage: %v", err)
	}
}
