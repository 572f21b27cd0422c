package format

import "encoding/binary"

// jsonMaxDepth is the nesting depth past which encoding/json's Valid
// refuses a value (its scanner's maxNestingDepth).
const jsonMaxDepth = 10000

// validJSON reports whether b is exactly one JSON value with optional
// whitespace around it. It accepts exactly what encoding/json's Valid
// accepts (FuzzValidJSON checks them against each other), the nesting
// limit of 10,000 included (bytes of invalid UTF-8 inside strings are
// accepted, as there), without allocating for values nested less than 64
// deep.
func validJSON(b []byte) bool {
	v := jsonValidator{b: b}
	return v.run()
}

// jsonValidator walks one JSON text. The open containers, '[' or '{', are
// the first depth of small followed by more.
type jsonValidator struct {
	b     []byte
	i     int
	depth int
	small [64]byte
	more  []byte
}

// push opens a container.
func (v *jsonValidator) push(c byte) {
	if v.depth < len(v.small) {
		v.small[v.depth] = c
	} else {
		v.more = append(v.more[:v.depth-len(v.small)], c)
	}
	v.depth++
}

// top is the innermost open container.
func (v *jsonValidator) top() byte {
	if v.depth <= len(v.small) {
		return v.small[v.depth-1]
	}
	return v.more[v.depth-1-len(v.small)]
}

// run checks the whole text: a value, then nothing but whitespace.
func (v *jsonValidator) run() bool {
	for {
		// Expecting a value.
		v.space()
		opened, ok := v.value()
		if !ok {
			return false
		}
		if opened {
			if v.top() == '{' && !v.member() {
				return false
			}
			continue
		}
		// After a value: close containers, or go on to the next element.
		next, ok := v.after()
		if !ok || !next {
			return ok
		}
	}
}

// after follows a complete value: it closes the containers that end there
// and consumes the ',' (and for an object the next key and colon) before
// the next value. next is false at the end of the text.
func (v *jsonValidator) after() (next, ok bool) {
	for {
		v.space()
		if v.depth == 0 {
			return false, v.i == len(v.b)
		}
		if v.i == len(v.b) {
			return false, false
		}
		c, top := v.b[v.i], v.top()
		switch {
		case c == ',' && top == '[':
			v.i++
			return true, true
		case c == ',' && top == '{':
			v.i++
			return true, v.member()
		case c == ']' && top == '[' || c == '}' && top == '{':
			v.i++
			v.depth--
		default:
			return false, false
		}
	}
}

// space skips JSON whitespace.
func (v *jsonValidator) space() {
	for v.i < len(v.b) {
		switch v.b[v.i] {
		case ' ', '\t', '\r', '\n':
			v.i++
		default:
			return
		}
	}
}

// value checks the scalar at v.i, or an empty container, or opens the
// container there (opened).
func (v *jsonValidator) value() (opened, ok bool) {
	if v.i == len(v.b) {
		return false, false
	}
	switch c := v.b[v.i]; c {
	case '"':
		return false, v.str()
	case '[', '{':
		if v.depth >= jsonMaxDepth {
			return false, false
		}
		v.i++
		v.space()
		if v.i < len(v.b) && v.b[v.i] == c+2 { // ']' is '['+2, '}' is '{'+2
			v.i++
			return false, true
		}
		v.push(c)
		return true, true
	case 't':
		return false, v.literal("true")
	case 'f':
		return false, v.literal("false")
	case 'n':
		return false, v.literal("null")
	default:
		return false, v.number()
	}
}

// member checks an object member's key and its colon.
func (v *jsonValidator) member() bool {
	v.space()
	if v.i == len(v.b) || v.b[v.i] != '"' || !v.str() {
		return false
	}
	v.space()
	if v.i == len(v.b) || v.b[v.i] != ':' {
		return false
	}
	v.i++
	return true
}

// literal checks true, false or null.
func (v *jsonValidator) literal(lit string) bool {
	if len(v.b)-v.i < len(lit) || string(v.b[v.i:v.i+len(lit)]) != lit {
		return false
	}
	v.i += len(lit)
	return true
}

// str checks the string starting at the '"' at v.i.
func (v *jsonValidator) str() bool {
	b := v.b
	i := v.i + 1
	for {
		i = plainString(b, i)
		if i == len(b) {
			return false
		}
		switch b[i] {
		case '"':
			v.i = i + 1
			return true
		case '\\':
			if i+1 == len(b) {
				return false
			}
			switch b[i+1] {
			case '"', '\\', '/', 'b', 'f', 'n', 'r', 't':
				i += 2
			case 'u':
				if _, ok := hex4(b, i+2); !ok {
					return false
				}
				i += 6
			default:
				return false
			}
		default: // a control character
			return false
		}
	}
}

// number checks -?(0|[1-9][0-9]*)(\.[0-9]+)?([eE][+-]?[0-9]+)?.
func (v *jsonValidator) number() bool {
	b, i := v.b, v.i
	if i < len(b) && b[i] == '-' {
		i++
	}
	switch {
	case i < len(b) && b[i] == '0':
		i++
	case i < len(b) && b[i] >= '1' && b[i] <= '9':
		i = digits(b, i+1)
	default:
		return false
	}
	if i < len(b) && b[i] == '.' {
		if i+1 >= len(b) || !isDigit(b[i+1]) {
			return false
		}
		i = digits(b, i+1)
	}
	if i < len(b) && (b[i] == 'e' || b[i] == 'E') {
		i++
		if i < len(b) && (b[i] == '+' || b[i] == '-') {
			i++
		}
		if i >= len(b) || !isDigit(b[i]) {
			return false
		}
		i = digits(b, i)
	}
	v.i = i
	return true
}

// digits returns the index of the first byte at or after i that is not a
// decimal digit.
func digits(b []byte, i int) int {
	for i < len(b) && isDigit(b[i]) {
		i++
	}
	return i
}

func isDigit(c byte) bool { return c >= '0' && c <= '9' }

// Byte-wise constants for plainString (one byte repeated in a word).
const (
	ones    = 0x0101010101010101
	highs   = 0x8080808080808080
	quotes  = '"' * ones
	slashes = '\\' * ones
)

// plainString returns the index of the first byte at or after i that a
// JSON string cannot hold as it is: '"', '\\' or a control character
// (below 0x20), or len(b). It tests eight bytes at a time: (x - n*ones) &^
// x & highs is not zero exactly when a byte of x is below n (n <= 128),
// and x^quotes has a zero byte exactly where x has a '"'.
func plainString(b []byte, i int) int {
	for ; i+8 <= len(b); i += 8 {
		x := binary.LittleEndian.Uint64(b[i:])
		q, s := x^quotes, x^slashes
		if ((x-0x20*ones)&^x|(q-ones)&^q|(s-ones)&^s)&highs != 0 {
			break
		}
	}
	for i < len(b) && b[i] >= 0x20 && b[i] != '"' && b[i] != '\\' {
		i++
	}
	return i
}
