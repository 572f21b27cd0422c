package format

import (
	"bytes"
	"testing"
)

// TestSlabClone: copies are equal to their source, never alias it or each
// other (appending to one never changes the next), and an empty value
// stays empty, not nil (nil is a Kafka null).
func TestSlabClone(t *testing.T) {
	var s slab
	src := []byte("abcdefgh")
	var got [][]byte
	for i := range 3 * slabSize / len(src) {
		c := s.clone(src[:i%len(src)+1])
		if cap(c) != len(c) {
			t.Fatalf("clone %d: cap %d, len %d", i, cap(c), len(c))
		}
		got = append(got, c)
	}
	src[0] = 'X'
	_ = append(got[0], 'Z') // must not write into got[1]
	for i, c := range got {
		if want := []byte("abcdefgh")[:i%8+1]; !bytes.Equal(c, want) {
			t.Fatalf("clone %d = %q, want %q", i, c, want)
		}
	}
	if e := s.clone(nil); e == nil || len(e) != 0 {
		t.Fatalf("clone of an empty value = %#v, want empty and not nil", e)
	}
	big := bytes.Repeat([]byte("b"), slabSize)
	if c := s.clone(big); !bytes.Equal(c, big) || &c[0] == &big[0] {
		t.Fatal("clone of a large value is not a copy")
	}
}
