package s3store

import (
	"bufio"
	"bytes"
	"testing"
)

// TestBufferPoolBoundsLargeBuffers: a store's first maxBigSpoolBuffers
// objects get a large spool buffer and the next ones a small one; a large
// buffer given back goes to the next object, writing to that object's
// writer only and without the bytes the last object left unflushed; a
// small one given back changes nothing.
func TestBufferPoolBoundsLargeBuffers(t *testing.T) {
	var p bufferPool
	var dst [maxBigSpoolBuffers]bytes.Buffer
	var bws []*bufio.Writer
	for i := range dst {
		bw := p.get(&dst[i])
		if bw.Size() != bigSpoolBufferSize {
			t.Fatalf("object %d got a buffer of %d bytes, want %d", i, bw.Size(), bigSpoolBufferSize)
		}
		bws = append(bws, bw)
	}
	var over bytes.Buffer
	small := p.get(&over)
	if small.Size() != spoolBufferSize {
		t.Fatalf("object past the budget got %d bytes, want %d", small.Size(), spoolBufferSize)
	}
	p.put(small)
	if p.out != maxBigSpoolBuffers || len(p.free) != 0 {
		t.Fatalf("after a small buffer came back: %d out, %d free", p.out, len(p.free))
	}
	_, _ = bws[0].WriteString("left behind")
	p.put(bws[0])
	var next bytes.Buffer
	bw := p.get(&next)
	if bw != bws[0] {
		t.Fatal("the large buffer given back was not reused")
	}
	_, _ = bw.WriteString("x")
	if err := bw.Flush(); err != nil || next.String() != "x" || dst[0].Len() != 0 {
		t.Fatalf("reused buffer wrote %q to its new object (err %v) and %q to the old one", next.String(), err, dst[0].String())
	}
	if p.out != maxBigSpoolBuffers {
		t.Fatalf("%d large buffers out, want %d", p.out, maxBigSpoolBuffers)
	}
}
