package schemas

import (
	"bytes"
	"testing"
)

func TestWireID(t *testing.T) {
	for _, tc := range []struct {
		in   []byte
		id   int
		want bool
	}{
		{[]byte{0, 0, 0, 0, 7, 'x'}, 7, true},
		{[]byte{0, 0, 0, 1, 0}, 256, true},
		{[]byte{0, 0, 0, 0, 7}, 7, true}, // an empty body
		{[]byte{0, 0, 0, 7}, 0, false},   // too short
		{[]byte{1, 0, 0, 0, 7}, 0, false},
		{[]byte{0, 0, 0, 0, 0}, 0, false},         // id 0: no registry gives it
		{[]byte{0, 0x80, 0, 0, 1, 'x'}, 0, false}, // above int32
		{nil, 0, false},
	} {
		id, ok := WireID(tc.in)
		if id != tc.id || ok != tc.want {
			t.Errorf("WireID(%x) = %d, %v; want %d, %v", tc.in, id, ok, tc.id, tc.want)
		}
	}
}

func TestMapRewrite(t *testing.T) {
	m := Map{7: {9, SideValue | SideKey}, 3: {3, SideValue | SideKey}, 5: {6, SideValue}}
	in := []byte{0, 0, 0, 0, 7, 'a', 'b'}
	orig := bytes.Clone(in)
	out, unknown := m.Rewrite(in, SideValue)
	if unknown || !bytes.Equal(out, []byte{0, 0, 0, 0, 9, 'a', 'b'}) {
		t.Errorf("Rewrite = %x, %v", out, unknown)
	}
	if !bytes.Equal(in, orig) {
		t.Errorf("Rewrite changed its input: %x", in)
	}
	same := []byte{0, 0, 0, 0, 3, 'c'}
	if out, unknown := m.Rewrite(same, SideValue); unknown || &out[0] != &same[0] {
		t.Errorf("an id mapped to itself: %x %v, want the input itself", out, unknown)
	}
	other := []byte{0, 0, 0, 0, 8, 'c'}
	if out, unknown := m.Rewrite(other, SideValue); !unknown || !bytes.Equal(out, other) {
		t.Errorf("an unknown id: %x %v, want the input and unknown", out, unknown)
	}
	for _, plain := range [][]byte{nil, []byte("hello"), {0, 1}} {
		if out, unknown := m.Rewrite(plain, SideValue); unknown || !bytes.Equal(out, plain) {
			t.Errorf("Rewrite(%q) = %q, %v", plain, out, unknown)
		}
	}
	if out, unknown := Map(nil).Rewrite(in, SideValue); !unknown || !bytes.Equal(out, in) {
		t.Errorf("nil map: %x %v", out, unknown)
	}
	// Id 5 is a value schema's: a key whose bytes read as id 5 (a
	// big-endian long) is not rewritten, but counted.
	key := []byte{0, 0, 0, 0, 5, 0, 0, 1}
	if out, unknown := m.Rewrite(key, SideKey); !unknown || !bytes.Equal(out, key) {
		t.Errorf("a key that looks framed with a value schema's id: %x %v, want it as it is, unknown", out, unknown)
	}
	if out, _ := m.Rewrite(key, SideValue); !bytes.Equal(out, []byte{0, 0, 0, 0, 6, 0, 0, 1}) {
		t.Errorf("a value of id 5: %x, want id 6", out)
	}
}

func TestSidesOf(t *testing.T) {
	for _, c := range []struct {
		subjects []string
		want     Side
	}{
		{[]string{"orders-value"}, SideValue},
		{[]string{"orders-key"}, SideKey},
		{[]string{"orders-key", "payments-value"}, SideKey | SideValue},
		{[]string{"com.acme.Order"}, SideKey | SideValue},
		{nil, SideKey | SideValue},
	} {
		if got := SidesOf(c.subjects); got != c.want {
			t.Errorf("SidesOf(%q) = %b, want %b", c.subjects, got, c.want)
		}
	}
}
