package restore

import (
	"testing"

	"github.com/kafkas3/kafkas3/convert"
	"github.com/kafkas3/kafkas3/format"
)

// loadTypedObject stores one Avro object of n typed records (typedValueSchema)
// and loads it as a restore produces it (Restorer.loadObject, values framed
// for a fake registry), returning the restorer and the loaded object.
func loadTypedObject(t *testing.T, n int) (*Restorer, *loadedObject) {
	t.Helper()
	avroF, err := format.NewAvro(format.AvroConfig{})
	if err != nil {
		t.Fatal(err)
	}
	r, lo, err := loadTyped(t, avroF, n, "")
	if err != nil {
		t.Fatal(err)
	}
	return r, lo
}

// loadTyped stores one object of format f holding n typed records and
// loads it as a restore produces it (values framed for a fake registry),
// with Config.TempDir tempDir.
func loadTyped(t *testing.T, f format.Format, n int, tempDir string) (*Restorer, *loadedObject, error) {
	t.Helper()
	a := newArchive(t, f)
	recs, _ := typedRecords(t, 0, n)
	key := a.put("orders", 0, 0, recs)
	info, err := a.store.Stat(testContext(t), key)
	if err != nil {
		t.Fatal(err)
	}
	_, enc := startRegistry(t)
	cfg := baseConfig([]string{"localhost:1"}, f, "orders")
	cfg.ValueEncoder, cfg.TempDir = enc, tempDir
	r := mustNew(t, cfg, a, nil)
	lo, err := r.loadObject(testContext(t), Object{Key: key, Size: info.Size}, "copy", 1<<30)
	if lo != nil {
		t.Cleanup(lo.buf.close)
	}
	return r, lo, err
}

// TestLoadedTypedRecordsDropTypedForm: once a typed value is framed for the
// target registry, the buffered record holds the framed bytes only, not the
// decoded form (ValueTyped's Raw and Native), which recordSize does not
// count; so the memory budget counts what the buffer holds.
func TestLoadedTypedRecordsDropTypedForm(t *testing.T) {
	const n = 1000
	r, lo := loadTypedObject(t, n)
	if lo.buf.Spilled() || int64(len(lo.buf.mem)) != n {
		t.Fatalf("buffered %d records in memory (spilled %v), want %d", len(lo.buf.mem), lo.buf.Spilled(), n)
	}
	var sum int64
	for i, rec := range lo.buf.mem {
		if rec.ValueTyped != nil || rec.KeyTyped != nil {
			t.Fatalf("buffered record %d still holds its typed form (value %v, key %v)", i, rec.ValueTyped != nil, rec.KeyTyped != nil)
		}
		if len(rec.Value) < convert.WireHeaderLen || rec.Value[0] != 0 {
			t.Fatalf("buffered record %d is not framed: %x", i, rec.Value)
		}
		sum += recordSize(rec)
	}
	if lo.buf.held != sum || r.mem.used.Load() != sum {
		t.Fatalf("budget: buffer holds %d, restore counts %d, records weigh %d", lo.buf.held, r.mem.used.Load(), sum)
	}
}
