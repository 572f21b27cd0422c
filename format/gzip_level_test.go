package format

import (
	"bytes"
	"sync"
	"testing"
)

// TestGzipDefaultLevelPicks checks how level -1 picks between levels 1 and
// 6: on the vocabulary data (level 1 is 20-30% larger) every chunk is level
// 6's, byte for byte what level 6 writes; on random letters (level 1 within
// 2.5%) the chunks between samples are level 1's, so the object is larger
// than level 6's, smaller than level 1's (the samples are level 6's) and
// within 3% of one level-6 stream.
func TestGzipDefaultLevelPicks(t *testing.T) {
	vocabulary := vocabularyValues(6000) // about 47 chunks
	def := writeAllRecords(t, mustGzip(t, NewJSON(), -1), vocabulary...)
	six := writeAllRecords(t, mustGzip(t, NewJSON(), 6), vocabulary...)
	if !bytes.Equal(def, six) {
		t.Errorf("vocabulary: level -1 wrote %d bytes, not level 6's %d bytes", len(def), len(six))
	}

	letters := letterValues(6000)
	def = writeAllRecords(t, mustGzip(t, NewJSON(), -1), letters...)
	six = writeAllRecords(t, mustGzip(t, NewJSON(), 6), letters...)
	one := writeAllRecords(t, mustGzip(t, NewJSON(), 1), letters...)
	ref := oneGzipStream(t, writeAllRecords(t, NewJSON(), letters...), 6)
	t.Logf("letters: -1 %d bytes, level 6 %d, level 1 %d, one level-6 stream %d", len(def), len(six), len(one), ref)
	if !(len(six) < len(def) && len(def) < len(one)) {
		t.Errorf("letters: level -1 wrote %d bytes, want between level 6's %d and level 1's %d", len(def), len(six), len(one))
	}
	if float64(len(def)) > gzipSizeBound*float64(ref) {
		t.Errorf("letters: level -1 wrote %d bytes, over 3%% above one level-6 stream (%d)", len(def), ref)
	}
	if got := gunzipStd(t, def); !bytes.Equal(got, writeAllRecords(t, NewJSON(), letters...)) {
		t.Error("letters: level -1's object does not read back as the records")
	}
}

// TestGzipDefaultLevelFollowsTheData checks that level -1 goes back to
// level 6 soon after the data stop suiting level 1: 5 MiB of random letters
// followed by 5 MiB of vocabulary JSON stays within 3% of one level-6
// stream (with samples only every 32 chunks, up to 4 MiB of the vocabulary
// data would go at level 1, 25% larger, and the object would be about 5%
// over), and so does the reverse order.
func TestGzipDefaultLevelFollowsTheData(t *testing.T) {
	letters, vocabulary := letterValues(5000), vocabularyValues(5000)
	for name, values := range map[string][][]byte{
		"letters then vocabulary": append(append([][]byte{}, letters...), vocabulary...),
		"vocabulary then letters": append(append([][]byte{}, vocabulary...), letters...),
	} {
		got := writeAllRecords(t, mustGzip(t, NewJSON(), -1), values...)
		plain := writeAllRecords(t, NewJSON(), values...)
		ref := oneGzipStream(t, plain, 6)
		t.Logf("%s: %d bytes, one level-6 stream %d (%+.2f%%)", name, len(got), ref, 100*(float64(len(got))/float64(ref)-1))
		if float64(len(got)) > gzipSizeBound*float64(ref) {
			t.Errorf("%s: %d bytes, over 3%% above one level-6 stream (%d)", name, len(got), ref)
		}
		if !bytes.Equal(gunzipStd(t, got), plain) {
			t.Errorf("%s: the object does not read back as the records", name)
		}
	}
}

// TestGzipSharedEncoders checks that the compressors a format reuses across
// chunks and objects carry nothing from one chunk to another: objects
// written concurrently through one format (more writers than compressors)
// are byte for byte those written alone through a fresh format, at every
// level that reuses one (1, and -1 on letters) and at 6.
func TestGzipSharedEncoders(t *testing.T) {
	sets := [][][]byte{letterValues(1500), vocabularyValues(1500), letterValues(700), vocabularyValues(900)}
	for _, level := range []int{-1, 1, 6} {
		want := make([][]byte, len(sets))
		for i, values := range sets {
			want[i] = writeAllRecords(t, mustGzip(t, NewJSON(), level), values...)
		}
		shared := mustGzip(t, NewJSON(), level)
		got := make([][]byte, 2*len(sets))
		var wg sync.WaitGroup
		for i := range got {
			wg.Go(func() { got[i] = writeAllRecords(t, shared, sets[i%len(sets)]...) })
		}
		wg.Wait()
		for i := range got {
			if !bytes.Equal(got[i], want[i%len(sets)]) {
				t.Errorf("level %d: object %d written with others differs from it written alone (%d and %d bytes)",
					level, i, len(got[i]), len(want[i%len(sets)]))
			}
		}
	}
}
