package restore

import (
	"bytes"
	"encoding/binary"
	"testing"

	"github.com/kafkas3/kafkas3/format"
)

// TestAppendSpillRecordInPlace: a record is encoded as its length prefix
// and its body, the prefix as short as the body allows (a body of 127
// bytes or less takes one byte, a longer one more), after what dst held,
// and without allocating when dst has room.
func TestAppendSpillRecordInPlace(t *testing.T) {
	for _, size := range []int{0, 100, 200, 70000} {
		rec := &format.Record{Offset: 42, Key: []byte("key"), Value: bytes.Repeat([]byte{'v'}, size),
			Timestamp: timeAt(5), TimestampType: 1, Headers: []format.Header{{Key: "h", Value: []byte("x")}, {Key: "n"}}}
		b := appendSpillRecord([]byte("before"), rec)
		if !bytes.HasPrefix(b, []byte("before")) {
			t.Fatalf("value of %d bytes: dst's bytes not kept: %q", size, b[:6])
		}
		n, k := binary.Uvarint(b[6:])
		if k <= 0 || k != len(binary.AppendUvarint(nil, n)) || int(n) != len(b)-6-k {
			t.Fatalf("value of %d bytes: prefix %d (%d bytes) for a body of %d bytes", size, n, k, len(b)-6-k)
		}
		got, err := decodeSpillRecord(b[6+k:])
		if err != nil || got.Offset != 42 || !bytes.Equal(got.Value, rec.Value) || string(got.Key) != "key" ||
			!got.Timestamp.Equal(rec.Timestamp) || got.TimestampType != 1 || len(got.Headers) != 2 ||
			string(got.Headers[0].Value) != "x" || got.Headers[1].Value != nil {
			t.Fatalf("value of %d bytes: decoded %+v, %v", size, got, err)
		}
		dst := make([]byte, 0, len(b)+binary.MaxVarintLen64)
		if allocs := testing.AllocsPerRun(10, func() { dst = appendSpillRecord(dst[:0], rec) }); allocs != 0 {
			t.Errorf("value of %d bytes: %v allocations with room in dst", size, allocs)
		}
	}
}
