package format

import (
	"bytes"
	"encoding/binary"
	"errors"
	"fmt"
	"io"
	"strings"
	"sync"
	"testing"

	"github.com/klauspost/compress/zstd"
)

func mustZstd(t testing.TB, f Format, level int) Format {
	t.Helper()
	z, err := WithZstd(f, level)
	if err != nil {
		t.Fatalf("WithZstd(level %d): %v", level, err)
	}
	return z
}

// unzstd decompresses data with a default klauspost decoder (not the
// format's own reader).
func unzstd(t *testing.T, data []byte) []byte {
	t.Helper()
	zr, err := zstd.NewReader(bytes.NewReader(data))
	if err != nil {
		t.Fatalf("zstd: %v", err)
	}
	defer zr.Close()
	out, err := io.ReadAll(zr)
	if err != nil {
		t.Fatalf("zstd: %v", err)
	}
	return out
}

// zstdFrames walks data as zstd frames (RFC 8878: frame header, blocks up
// to the last one, optional checksum) and returns how many there are; it
// fails the test when data is not exactly whole frames.
func zstdFrames(t *testing.T, data []byte) int {
	t.Helper()
	frames := 0
	for len(data) > 0 {
		var h zstd.Header
		if err := h.Decode(data); err != nil {
			t.Fatalf("frame %d: header: %v", frames, err)
		}
		rest := data[h.HeaderSize:]
		for last := false; !last; {
			if len(rest) < 3 {
				t.Fatalf("frame %d: cut in a block header", frames)
			}
			bh := uint32(rest[0]) | uint32(rest[1])<<8 | uint32(rest[2])<<16
			size := int(bh >> 3)
			if (bh>>1)&3 == 1 { // RLE: one byte repeated size times
				size = 1
			}
			if len(rest) < 3+size {
				t.Fatalf("frame %d: cut in a block", frames)
			}
			rest, last = rest[3+size:], bh&1 == 1
		}
		if h.HasCheckSum {
			if len(rest) < 4 {
				t.Fatalf("frame %d: cut in the checksum", frames)
			}
			rest = rest[4:]
		}
		data = rest
		frames++
	}
	return frames
}

func TestZstdExtension(t *testing.T) {
	if ext := mustZstd(t, NewJSON(), -1).Extension(); ext != ".json.zst" {
		t.Errorf("json+zstd extension = %q", ext)
	}
	if ext := mustZstd(t, mustBytes(t, "\n", ".bin"), -1).Extension(); ext != ".bin.zst" {
		t.Errorf("bytes+zstd extension = %q", ext)
	}
}

// TestZstdLevelTable checks s3.compression.level's mapping onto the
// encoder's levels (the table in zstdLevel and the README).
func TestZstdLevelTable(t *testing.T) {
	want := map[int]zstd.EncoderLevel{
		-1: zstd.SpeedDefault,
		0:  zstd.SpeedFastest, 1: zstd.SpeedFastest, 2: zstd.SpeedFastest,
		3: zstd.SpeedDefault, 4: zstd.SpeedDefault, 5: zstd.SpeedDefault,
		6: zstd.SpeedBetterCompression, 7: zstd.SpeedBetterCompression, 8: zstd.SpeedBetterCompression,
		9: zstd.SpeedBestCompression,
	}
	for level, w := range want {
		if got, err := zstdLevel(level); err != nil || got != w {
			t.Errorf("level %d: %v, %v; want %v", level, got, err, w)
		}
	}
	for _, level := range []int{-2, -3, 10, 22} {
		_, err := WithZstd(NewJSON(), level)
		if !errors.Is(err, ErrInvalidConfig) || !strings.Contains(err.Error(), KeyCompressionLevel) {
			t.Errorf("WithZstd(level %d) = %v, want error naming %s", level, err, KeyCompressionLevel)
		}
	}
}

// TestZstdLevels round-trips records at every level, reads the objects
// with a plain zstd decoder, and writes them twice to the same bytes.
func TestZstdLevels(t *testing.T) {
	small := bs(`{"f1":"value1"}`, `{"f1":"value2"}`, `{"f1":"value3"}`, "text", "")
	sets := map[string][][]byte{"small": small, "large": vocabularyValues(400)}
	for name, values := range sets {
		plain := writeAllRecords(t, NewJSON(), values...)
		for level := -1; level <= 9; level++ {
			z := mustZstd(t, NewJSON(), level)
			data := writeAllRecords(t, z, values...)
			if got := unzstd(t, data); !bytes.Equal(got, plain) {
				t.Errorf("%s level %d: zstd read %d bytes, want the %d written", name, level, len(got), len(plain))
			}
			if got, err := readAllValues(z, data); err != nil || !equalValues(got, values) {
				t.Errorf("%s level %d: round trip %d values, %v", name, level, len(got), err)
			}
			if again := writeAllRecords(t, z, values...); !bytes.Equal(again, data) {
				t.Errorf("%s level %d: output differs between runs", name, level)
			}
			if n := zstdFrames(t, data); n != 1 {
				t.Errorf("%s level %d: %d frames, want 1", name, level, n)
			}
		}
	}
}

func TestZstdBytes(t *testing.T) {
	z := mustZstd(t, mustBytes(t, "\n", ".bin"), 6)
	data := writeAllRecords(t, z, bs("a", "", "b")...)
	if got := unzstd(t, data); string(got) != "a\n\nb\n" {
		t.Errorf("zstd read %q", got)
	}
	if got, err := readAllValues(z, data); err != nil || !equalValues(got, bs("a", "", "b")) {
		t.Errorf("round trip %q, %v", got, err)
	}
}

// TestZstdOneFrame checks that objects of every length against the block
// size are one zstd frame that holds exactly the records' bytes, and that
// they are the frame one zstd.Encoder stream with the format's options
// writes (the format holds small objects itself, then streams).
func TestZstdOneFrame(t *testing.T) {
	f := mustZstd(t, mustBytes(t, "\n", ".bin"), -1)
	for _, n := range []int{1, 1000, zstdBlock - 1, zstdBlock, zstdBlock + 1, 3 * zstdBlock, 3*zstdBlock + 77, zstdWindow + 5} {
		// One value of n-1 bytes plus the separator: the object holds
		// exactly n bytes.
		value := []byte(strings.Repeat(fmt.Sprintf("%09d ", n), n/10+1)[:n-1])
		data := writeAllRecords(t, f, value)
		if frames := zstdFrames(t, data); frames != 1 {
			t.Fatalf("%d bytes: %d frames", n, frames)
		}
		if got := unzstd(t, data); !bytes.Equal(got, append(bytes.Clone(value), '\n')) {
			t.Fatalf("%d bytes: the frame holds %d bytes, want %d", n, len(got), n)
		}
		var ref bytes.Buffer
		enc, err := zstd.NewWriter(&ref, f.(*zstdFormat).options()...)
		if err != nil {
			t.Fatal(err)
		}
		for _, p := range [][]byte{value, {'\n'}} {
			if _, err := enc.Write(p); err != nil {
				t.Fatal(err)
			}
		}
		if err := enc.Close(); err != nil {
			t.Fatal(err)
		}
		if !bytes.Equal(data, ref.Bytes()) {
			t.Errorf("%d bytes: %d bytes, one encoder stream writes %d", n, len(data), ref.Len())
		}
	}
}

// TestZstdDeterministic (exactly-once: a replay rewrites the same bytes)
// checks that objects written concurrently through one format (more than
// its shared and kept encoders, objects above and below one block, at the
// levels of each encoder) are byte for byte those written alone through a
// fresh format, and that a format whose encoders served other objects
// before writes the same bytes again.
func TestZstdDeterministic(t *testing.T) {
	sets := [][][]byte{letterValues(1500), vocabularyValues(1500), letterValues(70), vocabularyValues(90),
		vocabularyValues(300), bs("a", "b")}
	for _, level := range []int{-1, 1, 6, 9} {
		want := make([][]byte, len(sets))
		for i, values := range sets {
			want[i] = writeAllRecords(t, mustZstd(t, NewJSON(), level), values...)
		}
		shared := mustZstd(t, NewJSON(), level)
		got := make([][]byte, 3*len(sets))
		var wg sync.WaitGroup
		for i := range got {
			wg.Go(func() { got[i] = writeAllRecords(t, shared, sets[i%len(sets)]...) })
		}
		wg.Wait()
		// Again, one at a time in reverse order, on the used encoders.
		for i := len(sets) - 1; i >= 0; i-- {
			got = append(got, writeAllRecords(t, shared, sets[i]...))
		}
		for i, g := range got {
			j := i % len(sets)
			if i >= 3*len(sets) {
				j = len(sets) - 1 - (i - 3*len(sets))
			}
			if !bytes.Equal(g, want[j]) {
				t.Errorf("level %d: object %d (set %d) differs from it written alone (%d and %d bytes)", level, i, j, len(g), len(want[j]))
			}
		}
	}
}

// TestZstdManyOpenObjects: more objects open at once, past one block,
// than a format has encoders for (zstdStreamEncoders): those without one
// wait in a temporary file and are compressed at Close. Written
// interleaved (a value to each in turn, as a sink's partitions are), each
// object is byte for byte the frame it is written alone, whichever path
// it took, and reads back.
func TestZstdManyOpenObjects(t *testing.T) {
	const n = zstdStreamEncoders + 5
	values := vocabularyValues(400) // about 400 KiB: past three blocks
	f := mustZstd(t, NewJSON(), -1)
	want := writeAllRecords(t, mustZstd(t, NewJSON(), -1), values...)
	bufs := make([]bytes.Buffer, n)
	ws := make([]RecordWriter, n)
	for i := range ws {
		w, err := f.NewWriter(&bufs[i])
		if err != nil {
			t.Fatal(err)
		}
		ws[i] = w
	}
	for _, v := range values {
		for _, w := range ws {
			if err := w.Write(&Record{Value: v}); err != nil {
				t.Fatal(err)
			}
		}
	}
	files := 0
	for _, w := range ws {
		if w.(*zstdWriter).zw.file != nil {
			files++
		}
	}
	if files != n-zstdStreamEncoders {
		t.Fatalf("%d objects wait in a file, want %d", files, n-zstdStreamEncoders)
	}
	for i, w := range ws {
		if err := w.Close(); err != nil {
			t.Fatal(err)
		}
		if !bytes.Equal(bufs[i].Bytes(), want) {
			t.Errorf("object %d: %d bytes, written alone %d", i, bufs[i].Len(), len(want))
		}
	}
	if got := unzstd(t, bufs[n-1].Bytes()); !bytes.Equal(got, unzstd(t, want)) {
		t.Error("the last object does not read back")
	}
}

func TestZstdEmptyObject(t *testing.T) {
	z := mustZstd(t, NewJSON(), -1)
	data := writeAllRecords(t, z) // no records: still a zstd frame
	if n := zstdFrames(t, data); n != 1 {
		t.Fatalf("%d frames, want 1", n)
	}
	if got := unzstd(t, data); len(got) != 0 {
		t.Errorf("zstd read %q from an object without records", got)
	}
	if got, err := readAllValues(z, data); err != nil || len(got) != 0 {
		t.Errorf("read %q, %v; want no records", got, err)
	}
	// An empty object is not a zstd frame.
	if _, err := readAllValues(z, nil); err == nil || !strings.Contains(err.Error(), "zstd") {
		t.Errorf("empty object: %v, want a zstd error", err)
	}
}

// TestZstdFrames reads objects of several frames (zstd -c a b writes
// them) and skippable frames, as zstd -d does.
func TestZstdFrames(t *testing.T) {
	z := mustZstd(t, NewJSON(), -1)
	data := writeAllRecords(t, z, bs("one", "two")...)
	data = append(data, writeAllRecords(t, z, bs(`{"n":3}`, "four")...)...)
	skippable := binary.LittleEndian.AppendUint32(nil, 0x184D2A50)
	skippable = binary.LittleEndian.AppendUint32(skippable, 3)
	data = append(data, append(skippable, "abc"...)...)
	got, err := readAllValues(z, data)
	if err != nil || !equalValues(got, bs("one", "two", `{"n":3}`, "four")) {
		t.Errorf("read %q, %v", got, err)
	}
}

// TestZstdCorrupt: damaged objects give a "zstd:" error (the restore and
// verify name the object), never a panic or a clean end; so does a frame
// whose window is larger than the reader takes.
func TestZstdCorrupt(t *testing.T) {
	z := mustZstd(t, NewJSON(), -1)
	values := make([][]byte, 200)
	for i := range values {
		values[i] = []byte(strings.Repeat("abcdefgh", i) + fmt.Sprint(i))
	}
	data := writeAllRecords(t, z, values...)
	var wide bytes.Buffer
	enc, err := zstd.NewWriter(&wide, zstd.WithWindowSize(16<<20), zstd.WithEncoderConcurrency(1))
	if err != nil {
		t.Fatal(err)
	}
	if _, err := enc.Write(writeAllRecords(t, NewJSON(), vocabularyValues(300)...)); err != nil {
		t.Fatal(err)
	}
	if err := enc.Close(); err != nil {
		t.Fatal(err)
	}
	cases := map[string][]byte{
		"not zstd":      []byte("{\"f1\":\"value1\"}\n"),
		"truncated":     data[:len(data)/2],
		"no checksum":   data[:len(data)-4],
		"bad checksum":  flip(data, len(data)-2),
		"bad body":      flip(data, len(data)/2),
		"trailing junk": append(bytes.Clone(data), "junk"...),
		"wide window":   wide.Bytes(),
	}
	if _, err := readAllValues(z, wide.Bytes()); err == nil || !strings.Contains(err.Error(), "8 MiB") {
		t.Errorf("wide window: %v, want an error naming the 8 MiB limit", err)
	}
	for name, bad := range cases {
		_, err := readAllValues(z, bad)
		if err == nil || !strings.Contains(err.Error(), "zstd: ") {
			t.Errorf("%s: %v, want a zstd: error", name, err)
		}
	}
	// Cut anywhere, an object never reads as complete.
	for i := range len(data) {
		if _, err := readAllValues(z, data[:i]); err == nil {
			t.Fatalf("cut at %d of %d bytes: read without error", i, len(data))
		}
	}
	// The decoders the format kept through all this read whole objects.
	for range 3 {
		if got, err := readAllValues(z, data); err != nil || !equalValues(got, values) {
			t.Fatalf("after the damaged objects: %d values, %v", len(got), err)
		}
	}
}

func FuzzZstdJSONReader(f *testing.F) {
	z, err := WithZstd(NewJSON(), -1)
	if err != nil {
		f.Fatal(err)
	}
	f.Add(writeAllRecords(f, z, bs(`{"f1":"value1"}`, "text", "\xff")...))
	f.Add(writeAllRecords(f, z))
	many := make([][]byte, 300) // 150 KB: two blocks, compressed small
	for i := range many {
		many[i] = fmt.Appendf(nil, `{"i":%d,"s":"%s"}`, i, strings.Repeat("ab", 250))
	}
	f.Add(writeAllRecords(f, z, many...))
	f.Add([]byte{0x28, 0xb5, 0x2f, 0xfd, 0x20, 0, 1, 0, 0})
	f.Add([]byte("plain"))
	f.Fuzz(func(t *testing.T, data []byte) {
		got, err := readAllValues(z, data)
		if err != nil {
			return // errors are fine; panics and hangs are not
		}
		// What was read writes and reads back to itself.
		back, err := readAllValues(z, writeAllRecords(t, z, got...))
		if err != nil || !equalValues(back, got) {
			t.Fatalf("values %q rewrite and read as %q, %v", got, back, err)
		}
	})
}

// failingWriter fails every write.
type failingWriter struct{}

func (failingWriter) Write([]byte) (int, error) { return 0, errors.New("store down") }

// TestZstdAbortedObjectsGiveBackTheirEncoders: objects past one block that
// are discarded (an aborted object) or whose writes failed give back their
// encoder slot at Discard or Close, so the next objects past one block
// still get an encoder of their own, never a temporary file, however many
// were aborted before.
func TestZstdAbortedObjectsGiveBackTheirEncoders(t *testing.T) {
	values := vocabularyValues(400)
	f := mustZstd(t, NewJSON(), -1)
	for round := range 3 * zstdStreamEncoders {
		var buf bytes.Buffer
		var out io.Writer = &buf
		if round%2 == 1 {
			out = failingWriter{}
		}
		w, err := f.NewWriter(out)
		if err != nil {
			t.Fatal(err)
		}
		for _, v := range values {
			if err := w.Write(&Record{Value: v}); err != nil {
				break
			}
		}
		if w.(*zstdWriter).zw.file != nil {
			t.Fatalf("round %d: the object waits in a temporary file: an earlier object kept its encoder slot", round)
		}
		if round%2 == 0 {
			Discard(w)
		} else if err := w.Close(); err == nil {
			t.Fatalf("round %d: Close of an object whose writes failed gave no error", round)
		}
	}
}
