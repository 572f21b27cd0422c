package restore

import (
	"runtime"
	"testing"

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
	a := newArchive(t, avroF)
	recs, _ := typedRecords(t, 0, n)
	key := a.put("orders", 0, 0, recs)
	info, err := a.store.Stat(testContext(t), key)
	if err != nil {
		t.Fatal(err)
	}
	_, enc := startRegistry(t)
	cfg := baseConfig([]string{"localhost:1"}, avroF, "orders")
	cfg.ValueEncoder = enc
	r := mustNew(t, cfg, a, nil)
	lo, err := r.loadObject(testContext(t), Object{Key: key, Size: info.Size}, "copy", 1<<30)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(lo.buf.close)
	return r, lo
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
		if len(rec.Value) < wireFrame || rec.Value[0] != 0 {
			t.Fatalf("buffered record %d is not framed: %x", i, rec.Value)
		}
		sum += recordSize(rec)
	}
	if lo.buf.held != sum || r.mem.used.Load() != sum {
		t.Fatalf("budget: buffer holds %d, restore counts %d, records weigh %d", lo.buf.held, r.mem.used.Load(), sum)
	}
}

// TestLoadedTypedRecordsHeap measures the heap a buffer of 10,000 loaded
// Avro records keeps alive, against what the memory budget counts for it.
func TestLoadedTypedRecordsHeap(t *testing.T) {
	if testing.Short() {
		t.Skip("measures the heap")
	}
	const n = 10000
	r, lo := loadTypedObject(t, n)
	counted := r.mem.used.Load()
	var held, freed runtime.MemStats
	runtime.GC()
	runtime.ReadMemStats(&held)
	lo.buf.close() // drops the buffered records
	runtime.GC()
	runtime.ReadMemStats(&freed)
	heap := int64(held.HeapAlloc) - int64(freed.HeapAlloc)
	t.Logf("%d Avro records buffered: the buffer held %d heap bytes (%d per record), the budget counted %d (%d per record)",
		n, heap, heap/n, counted, counted/n)
	// The records themselves (struct, pointer, framed value) weigh about
	// twice what recordSize counts for such small values; their decoded
	// form (a map per record) weighed several times more.
	if heap > 3*counted {
		t.Errorf("the buffer held %d heap bytes, over 3x the %d bytes the budget counts", heap, counted)
	}
}
