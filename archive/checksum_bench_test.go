package archive

import (
	"crypto/sha256"
	"io"
	"testing"
)

// BenchmarkIndexChecksum measures what the archive index's checksum costs
// the sink per byte written (countingWriter over 32 KiB writes, the size
// of the S3 writer's spool buffer): SHA-256 (v1 entries, and
// kafkas3.index.digest=sha256), CRC32C (v2's default), both, and nothing
// (the index off). CPU seconds per GB = 1 / (the reported MB/s / 1000).
func BenchmarkIndexChecksum(b *testing.B) {
	buf := make([]byte, 32<<10)
	for i := range buf {
		buf[i] = byte(i*7 + i>>9)
	}
	for _, bc := range []struct {
		name     string
		crc, sha bool
	}{{"none", false, false}, {"crc32c", true, false}, {"sha256", false, true}, {"crc32c+sha256", true, true}} {
		b.Run(bc.name, func(b *testing.B) {
			cw := &countingWriter{w: io.Discard, crc: bc.crc}
			if bc.sha {
				cw.sha = sha256.New()
			}
			b.SetBytes(int64(len(buf)))
			for b.Loop() {
				if _, err := cw.Write(buf); err != nil {
					b.Fatal(err)
				}
			}
			if bc.crc && cw.crcText() == "" || bc.sha && cw.shaText() == "" {
				b.Fatal("no checksum")
			}
		})
	}
}
