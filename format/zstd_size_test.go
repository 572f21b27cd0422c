package format

import (
	"bytes"
	"io"
	"runtime"
	"testing"
	"time"
)

// TestZstdSizeAgainstGzip compares JSON+zstd and bytes+zstd objects of the
// benchmark's vocabulary JSON and of random letters (1.5 MB of each, as
// TestGzipSizeAgainstOneStream) with this package's gzip at level 6 (the
// size of gzip's default, -1) and logs sizes and single-core speeds for
// the README. Each bound is the measured ratio when this was written, with
// a little room, so that a change of library or options that makes zstd
// larger fails here:
//
//   - letters: every zstd level but the fastest is within 0.2% of gzip
//     level 6, and levels 6..8 (SpeedBetterCompression) are smaller;
//   - vocabulary (random words from a list of 90; deflate's lazy matching
//     finds their 3..10-byte repeats, which zstd's fast match finders
//     skip): -1 and 3..5 are 18% larger than gzip level 6, 6..8 14%
//     larger, and only 9 (SpeedBestCompression, 35 MiB per open object)
//     is smaller. The reference zstd needs level 12 to match gzip -6
//     there.
func TestZstdSizeAgainstGzip(t *testing.T) {
	bounds := map[string]map[int]float64{
		"vocabulary": {-1: 1.19, 1: 1.25, 6: 1.145, 9: 1.0},
		"letters":    {-1: 1.002, 1: 1.03, 6: 1.0, 9: 1.008},
	}
	kinds := map[string][][]byte{"vocabulary": vocabularyValues(1500), "letters": letterValues(1500)}
	formats := map[string]Format{"json": NewJSON(), "bytes": mustBytes(t, "\n", ".bin")}
	for kind, values := range kinds {
		for name, inner := range formats {
			plain := writeAllRecords(t, inner, values...)
			ref, gzipTook := timedWrite(t, mustGzip(t, inner, 6), values)
			def, defTook := timedWrite(t, mustGzip(t, inner, -1), values)
			t.Logf("%s %s: %d bytes; gzip level 6 %d (%.0f MB/s), gzip level -1 %d (%.0f MB/s)", kind, name, len(plain),
				len(ref), mbps(len(plain), gzipTook), len(def), mbps(len(plain), defTook))
			for level, bound := range bounds[kind] {
				got, took := timedWrite(t, mustZstd(t, inner, level), values)
				ratio := float64(len(got)) / float64(len(ref))
				t.Logf("%s %s zstd level %d: %d bytes (%+.2f%% against gzip level 6, %.0f MB/s)",
					kind, name, level, len(got), 100*(ratio-1), mbps(len(plain), took))
				if ratio > bound {
					t.Errorf("%s %s zstd level %d: %d bytes, %.4f times gzip level 6's %d; the bound is %.3f",
						kind, name, level, len(got), ratio, len(ref), bound)
				}
			}
		}
	}
}

// timedWrite writes values with f and returns the object and how long
// that took (the best of three runs).
func timedWrite(t *testing.T, f Format, values [][]byte) ([]byte, time.Duration) {
	t.Helper()
	var data []byte
	best := time.Duration(1 << 62)
	for range 3 {
		start := time.Now()
		data = writeAllRecords(t, f, values...)
		best = min(best, time.Since(start))
	}
	return data, best
}

func mbps(n int, d time.Duration) float64 { return float64(n) / 1e6 / d.Seconds() }

// TestZstdMemoryPerObject measures the heap an open JSON+zstd object
// holds (the figures of WithZstd's doc and the README): past one block it
// holds its own encoder, whose size depends on the level; within one block
// only its input; and a reader its decoder. The bounds are the measured
// figures with room.
func TestZstdMemoryPerObject(t *testing.T) {
	if testing.Short() {
		t.Skip("allocates up to 150 MiB")
	}
	input := writeAllRecords(t, NewJSON(), vocabularyValues(300)...) // 300 KiB: past two blocks
	for _, c := range []struct {
		level, objects int
		input          []byte
		maxKiB         int64
	}{
		{-1, zstdStreamEncoders, input, 2600},
		{1, zstdStreamEncoders, input, 1500},
		{6, zstdStreamEncoders, input, 5600},
		{9, 3, input, 37 << 10},
		{-1, 64, input[:100<<10], 140}, // within one block
	} {
		f := mustZstd(t, NewJSON(), c.level)
		per := heapPerObject(t, c.objects, func() io.Closer {
			zs := &zstdStream{z: f.(*zstdFormat), w: io.Discard}
			if _, err := zs.Write(c.input); err != nil {
				t.Fatal(err)
			}
			return zs
		})
		t.Logf("level %d, %d KiB written: %d KiB per open object", c.level, len(c.input)>>10, per>>10)
		if per>>10 > c.maxKiB {
			t.Errorf("level %d, %d KiB written: %d KiB per open object, want at most %d", c.level, len(c.input)>>10, per>>10, c.maxKiB)
		}
	}
}

// TestZstdMemoryBounded: 200 objects of one format open at once, each
// past two blocks (the sink's 200 partitions), hold at most
// zstdStreamEncoders encoders of their own (TestZstdMemoryPerObject's
// 2,600 KiB each at the default level) and, each of the others, its
// temporary file's buffer and little else: the format's heap does not
// grow by an encoder per object. Without the bound on encoders it is
// about 2.2 MiB per object (440 MiB).
func TestZstdMemoryBounded(t *testing.T) {
	if testing.Short() {
		t.Skip("allocates about 30 MiB")
	}
	const objects = 200
	input := writeAllRecords(t, NewJSON(), vocabularyValues(300)...) // 300 KiB: past two blocks
	f := mustZstd(t, NewJSON(), -1)
	per := heapPerObject(t, objects, func() io.Closer {
		zs := &zstdStream{z: f.(*zstdFormat), w: io.Discard}
		if _, err := zs.Write(input); err != nil {
			t.Fatal(err)
		}
		return zs
	})
	total := per * objects
	bound := int64(zstdStreamEncoders*2600+objects*(zstdFileBuffer>>10+16)) << 10
	t.Logf("%d open objects: %d KiB in all, %d KiB per object", objects, total>>10, per>>10)
	if total > bound {
		t.Errorf("%d open objects hold %d KiB, want at most %d KiB (%d encoders and a file buffer per object)",
			objects, total>>10, bound>>10, zstdStreamEncoders)
	}
}

// TestZstdReaderMemory measures the heap an open JSON+zstd reader holds
// (its decoder: the frame's window and a block), for the README.
func TestZstdReaderMemory(t *testing.T) {
	z := mustZstd(t, NewJSON(), -1)
	data := writeAllRecords(t, z, vocabularyValues(600)...)
	per := heapPerObject(t, 16, func() io.Closer {
		r, err := z.NewReader(bytes.NewReader(data))
		if err != nil {
			t.Fatal(err)
		}
		if _, err := r.Read(); err != nil {
			t.Fatal(err)
		}
		return openReader{r}
	})
	t.Logf("reader: %d KiB per open object", per>>10)
	if per>>10 > 1200 {
		t.Errorf("reader: %d KiB per open object, want at most 1200", per>>10)
	}
}

// heapPerObject opens n objects with open and returns the live heap they
// hold each, then closes them.
func heapPerObject(t *testing.T, n int, open func() io.Closer) int64 {
	t.Helper()
	var before, after runtime.MemStats
	runtime.GC()
	runtime.GC() // sync.Pool victims go at the second collection
	runtime.ReadMemStats(&before)
	objects := make([]io.Closer, n)
	for i := range objects {
		objects[i] = open()
	}
	runtime.GC()
	runtime.GC()
	runtime.ReadMemStats(&after)
	for _, o := range objects {
		if err := o.Close(); err != nil {
			t.Fatal(err)
		}
	}
	return (int64(after.HeapAlloc) - int64(before.HeapAlloc)) / int64(n)
}

// openReader keeps a reader open (referenced) until Close.
type openReader struct{ RecordReader }

func (openReader) Close() error { return nil }
