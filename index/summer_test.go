package index

import (
	"crypto/sha256"
	"encoding/hex"
	"hash/crc32"
	"testing"
)

// TestSummer: the object of bytes written in pieces has their size,
// CRC32C and, only when asked, SHA-256.
func TestSummer(t *testing.T) {
	data := []byte("the quick brown fox jumps over the lazy dog")
	sha := sha256.Sum256(data)
	want := Object{Key: "k", Part: PartKeys, Size: int64(len(data)),
		CRC32C: FormatCRC32C(crc32.Checksum(data, crc32.MakeTable(crc32.Castagnoli))), SHA256: hex.EncodeToString(sha[:])}
	for _, withSHA := range []bool{false, true} {
		s := NewSummer(withSHA)
		s.Write(data[:10])
		s.Write(data[10:])
		w := want
		if !withSHA {
			w.SHA256 = ""
		}
		if got := s.Object("k", PartKeys); got != w {
			t.Errorf("sha256 %v: %+v, want %+v", withSHA, got, w)
		}
	}
}
