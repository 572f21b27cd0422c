package format

import (
	"bytes"
	"encoding/base64"
	"math"
	"time"
)

// The JSON envelope at bytes speed. A line in the form AppendEnvelopeLine
// writes (no whitespace, the keys in order, numbers as plain integers,
// bytes as base64 of the standard alphabet or null, header keys without
// escapes or control characters) is decoded by decodeEnvelopeFast: one
// pass over the line, no reflection, one allocation per record and per
// non-null bytes field. Any other line, valid or not, is left to
// decodeEnvelopeLine's general reader, which accepts any JSON layout of
// the same members and names what is wrong. The fast reader accepts only
// lines the general one accepts, and decodes them to the same record
// (FuzzEnvelopeFastIsGeneral).

// envCursor walks one envelope line.
type envCursor struct {
	p  []byte
	ok bool
}

// lit consumes s, or fails.
func (c *envCursor) lit(s string) {
	if c.ok && len(c.p) >= len(s) && string(c.p[:len(s)]) == s {
		c.p = c.p[len(s):]
		return
	}
	c.ok = false
}

// int consumes a JSON integer in its plain form ("0", or an optional
// minus and digits without a leading zero) of at most 18 digits, so it
// fits an int64.
func (c *envCursor) int() int64 {
	if !c.ok {
		return 0
	}
	neg := len(c.p) > 0 && c.p[0] == '-'
	i := 0
	if neg {
		i = 1
	}
	start := i
	var n int64
	for i < len(c.p) && c.p[i] >= '0' && c.p[i] <= '9' {
		n = n*10 + int64(c.p[i]-'0')
		i++
	}
	digits := i - start
	if digits == 0 || digits > 18 || (c.p[start] == '0' && (digits > 1 || neg)) {
		c.ok = false
		return 0
	}
	c.p = c.p[i:]
	if neg {
		return -n
	}
	return n
}

// plainString consumes a JSON string without escapes or control
// characters and returns its bytes (in the line).
func (c *envCursor) plainString() []byte {
	c.lit(`"`)
	if !c.ok {
		return nil
	}
	for i, b := range c.p {
		switch {
		case b == '"':
			s := c.p[:i]
			c.p = c.p[i+1:]
			return s
		case b == '\\' || b < 0x20:
			c.ok = false
			return nil
		}
	}
	c.ok = false
	return nil
}

// b64 consumes null (nil) or a string of base64 of the standard
// alphabet, padded, and returns its bytes (non-nil).
func (c *envCursor) b64() []byte {
	if !c.ok {
		return nil
	}
	if bytes.HasPrefix(c.p, []byte("null")) {
		c.p = c.p[4:]
		return nil
	}
	s := c.plainString()
	if !c.ok {
		return nil
	}
	out := make([]byte, base64.StdEncoding.DecodedLen(len(s)))
	n, err := base64.StdEncoding.Strict().Decode(out, s)
	if err != nil {
		c.ok = false
		return nil
	}
	return out[:n]
}

// decodeEnvelopeFast decodes line when it is in the form
// AppendEnvelopeLine writes; ok is false otherwise (the line may still be
// a valid envelope in another layout, or a bad one).
func decodeEnvelopeFast(line []byte) (r *Record, ok bool) {
	c := envCursor{p: line, ok: true}
	r = &Record{}
	c.lit(`{"partition":`)
	p := c.int()
	c.lit(`,"offset":`)
	r.Offset = c.int()
	c.lit(`,"timestamp":`)
	ts := c.int()
	c.lit(`,"timestamp_type":`)
	tt := c.plainString()
	c.lit(`,"key":`)
	r.Key = c.b64()
	c.lit(`,"value":`)
	r.Value = c.b64()
	c.lit(`,"headers":[`)
	for n := 0; c.ok && (len(c.p) == 0 || c.p[0] != ']'); n++ {
		if n > 0 {
			c.lit(",")
		}
		c.lit(`{"key":`)
		k := c.plainString()
		c.lit(`,"value":`)
		v := c.b64()
		c.lit("}")
		if c.ok {
			r.Headers = append(r.Headers, Header{Key: string(k), Value: v})
		}
	}
	c.lit("]}")
	if !c.ok || len(c.p) != 0 || p < 0 || p > math.MaxInt32 {
		return nil, false
	}
	t, err := ParseTimestampType(string(tt))
	if err != nil {
		return nil, false
	}
	r.Partition, r.Timestamp, r.TimestampType = int32(p), time.UnixMilli(ts), t
	return r, true
}
