package schemas

import (
	"encoding/binary"
	"math"
	"strings"
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
// registry's) to the target registry's, each with the sides it frames.
type Map map[int]Mapped

// Mapped is a source id's target id and the sides of a record (key,
// value) that its schema frames, as its subjects say (SidesOf).
type Mapped struct {
	ID    int
	Sides Side
}

// Side is a side of a record: its key or its value.
type Side uint8

// The sides.
const (
	SideValue Side = 1 << iota
	SideKey
)

// SidesOf returns the sides a schema registered under subjects frames:
// the key for a "<topic>-key" subject, the value for "<topic>-value", both
// for any other subject (RecordNameStrategy's, a referenced type's) or
// none. A key that only looks framed (a big-endian long starting with 0)
// is then never taken for a value schema's record, and the other way
// round.
func SidesOf(subjects []string) Side {
	if len(subjects) == 0 {
		return SideValue | SideKey
	}
	var sides Side
	for _, s := range subjects {
		switch {
		case strings.HasSuffix(s, "-key"):
			sides |= SideKey
		case strings.HasSuffix(s, "-value"):
			sides |= SideValue
		default:
			sides |= SideValue | SideKey
		}
	}
	return sides
}

// Rewrite returns b, a record's side, with the target id of its schema:
// b itself when b is not framed or its id maps to itself, a new slice
// when the id changes (b is never modified: the archive's bytes may be
// read again). unknown reports a framed-looking b whose id the map does
// not hold for that side; b is then returned as it is.
func (m Map) Rewrite(b []byte, side Side) (out []byte, unknown bool) {
	id, ok := WireID(b)
	if !ok {
		return b, false
	}
	to, ok := m[id]
	if !ok || to.Sides&side == 0 {
		return b, true
	}
	if to.ID == id {
		return b, false
	}
	out = make([]byte, len(b))
	copy(out, b)
	binary.BigEndian.PutUint32(out[1:WireHeaderLen], uint32(to.ID))
	return out, false
}
