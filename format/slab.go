package format

// slabSize is the size of the blocks a slab hands out copies from.
const slabSize = 64 << 10

// slab copies many small values into shared blocks, one allocation per
// block instead of one per value. A value keeps its whole block alive, so
// readers use it for values the caller keeps together (the records of one
// object). Values larger than a quarter block get their own allocation.
//
// A transient slab (Transient) copies nothing: clone returns b itself, so
// the value is only valid as long as b is (until the reader's next Read).
type slab struct {
	block     []byte
	transient bool
}

// clone returns a copy of b that does not alias b. Its capacity is its
// length, so appending to it never writes into the next value.
func (s *slab) clone(b []byte) []byte {
	n := len(b)
	switch {
	case n == 0:
		return []byte{} // empty, not nil: a nil value is a Kafka null
	case s.transient:
		return b[:n:n]
	case n > slabSize/4:
		return append(make([]byte, 0, n), b...)
	}
	if n > cap(s.block)-len(s.block) {
		s.block = make([]byte, 0, slabSize)
	}
	start := len(s.block)
	s.block = append(s.block, b...)
	return s.block[start : start+n : start+n]
}
