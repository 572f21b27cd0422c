package restore

import (
	"hash/fnv"
	"testing"
)

// TestListPrintIsFNV: the fingerprint's in-place hash is FNV-1a of key,
// a zero byte, ETag and the size's 8 little-endian bytes.
func TestListPrintIsFNV(t *testing.T) {
	for _, c := range []struct {
		key, etag string
		size      int64
	}{{"topics/t/partition=0/t+0+0000000000.json", `"9b2cf535f27731c974343645a3985328"`, 1 << 20}, {"", "", 0}, {"k", "", -1}} {
		h := fnv.New64a()
		h.Write([]byte(c.key))
		h.Write([]byte{0})
		h.Write([]byte(c.etag))
		var b [8]byte
		for i := range b {
			b[i] = byte(c.size >> (8 * i))
		}
		h.Write(b[:])
		var p listPrint
		p.add(c.key, c.etag, c.size)
		if p.sum != h.Sum64() || p.n != 1 || p.bytes != c.size {
			t.Fatalf("%q: sum %x n %d bytes %d, want %x 1 %d", c.key, p.sum, p.n, p.bytes, h.Sum64(), c.size)
		}
	}
}
