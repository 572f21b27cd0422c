package schemas

import (
	"encoding/binary"
	"math"
)

// WireHeaderLen is the length of Confluent's wire-format header: magic
// byte 0 and a 4-byte big-endian schema id.
const WireHeaderLen = 5

// WireID returns the schema id of b when b looks framed in Confluent's
// wire format: at least WireHeaderLen bytes, the first 0, and an id that
// fits an int32 (registries give ids from 1 to 2^31-1).
func WireID(b []byte) (int, bool) {
	if len(b) < WireHeaderLen || b[0] != 0 {
		return 0, false
	}
	id := binary.BigEndian.Uint32(b[1:WireHeaderLen])
	if id == 0 || id > math.MaxInt32 {
		return 0, false
	}
	return int(id), true
}

// Map maps the schema ids of one topic's archived records (the source
// registry's) to the target registry's.
type Map map[int]int

// Rewrite returns b with the target id of its schema: b itself when b is
// not framed or its id maps to itself, a new slice when the id changes
// (b is never modified: the archive's bytes may be read again). unknown
// reports a framed-looking b whose id the map does not hold; b is then
// returned as it is.
func (m Map) Rewrite(b []byte) (out []byte, unknown bool) {
	id, ok := WireID(b)
	if !ok {
		return b, false
	}
	to, ok := m[id]
	if !ok {
		return b, true
	}
	if to == id {
		return b, false
	}
	out = make([]byte, len(b))
	copy(out, b)
	binary.BigEndian.PutUint32(out[1:WireHeaderLen], uint32(to))
	return out, false
}
