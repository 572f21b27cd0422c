package format

import (
	"encoding/base64"
	"encoding/json"
	"fmt"
	"io"
	"math"
	"math/big"
	"sort"
	"strconv"
	"strings"
	"time"

	"github.com/twmb/avro"
)

// NewTypedJSON is Confluent's JsonFormat behind a schema-aware converter
// (AvroConverter, JsonConverter with schemas): a record whose value has a
// schema (Record.ValueTyped) is written as the JSON Connect's
// JsonConverter with schemas.enable=false renders (see connectJSON);
// any other record as NewJSON writes it. Extension and reader are
// NewJSON's. New builds it for KindJSON.
func NewTypedJSON() Format { return typedJSONFormat{} }

type typedJSONFormat struct{ jsonFormat }

func (f typedJSONFormat) NewWriter(w io.Writer) (RecordWriter, error) {
	jw, err := f.jsonFormat.NewWriter(w)
	if err != nil {
		return nil, err
	}
	return &typedJSONWriter{jw: jw, render: newConnectJSON()}, nil
}

// typedJSONWriter renders a typed value into buf and writes a copy of the
// record with that value.
type typedJSONWriter struct {
	jw     RecordWriter
	render *connectJSON
	buf    []byte
}

func (tw *typedJSONWriter) Write(r *Record) error {
	if r == nil || r.ValueTyped == nil {
		return tw.jw.Write(r)
	}
	buf, err := tw.render.appendValue(tw.buf[:0], r.ValueTyped)
	if err != nil {
		return fmt.Errorf("rendering the typed value as JSON: %w", err)
	}
	tw.buf = buf
	rendered := *r
	rendered.Value = buf
	return tw.jw.Write(&rendered)
}

func (tw *typedJSONWriter) Close() error { return tw.jw.Close() }

// connectJSON renders typed values the way Confluent's JsonFormat writes a
// value that a schema-aware converter produced: Connect's JsonConverter
// with schemas.enable=false. Records and maps become JSON objects (record
// fields in schema order, map keys sorted so output is deterministic),
// arrays JSON arrays, bytes and fixed base64 strings, enums and strings
// JSON strings. A nullable union is its value or null; another union is
// Connect's union struct, an object with one member per branch, named by
// the branch's type, all null but the one taken. Logical types follow
// Connect: date is days since the epoch, time-millis milliseconds of the
// day, timestamp-millis milliseconds since the epoch, decimal the base64
// of its unscaled two's-complement bytes (decimal.format=BASE64);
// timestamp-micros and time-micros stay plain longs, uuid a string.
// Floats are written as Java prints them (1.0, 1.0E21); NaN and infinities,
// which JSON cannot hold, as the strings "NaN", "Infinity", "-Infinity".
type connectJSON struct {
	trees map[*avro.Schema]*jsonTree
}

type jsonTree struct {
	root  *avro.SchemaNode
	named map[string]*avro.SchemaNode
}

func newConnectJSON() *connectJSON { return &connectJSON{trees: map[*avro.Schema]*jsonTree{}} }

// appendValue appends the JSON of t's value to dst.
func (c *connectJSON) appendValue(dst []byte, t *Typed) ([]byte, error) {
	if t.Schema == nil || t.Schema.Avro == nil {
		return dst, fmt.Errorf("typed value without a parsed schema")
	}
	v, err := AvroNative(t)
	if err != nil {
		return dst, err
	}
	tr := c.trees[t.Schema.Avro]
	if tr == nil {
		tr = &jsonTree{root: t.Schema.Avro.Root(), named: map[string]*avro.SchemaNode{}}
		collectNamed(tr.root, tr.named, 0)
		c.trees[t.Schema.Avro] = tr
	}
	return tr.append(dst, tr.root, v, 0)
}

func fullName(n *avro.SchemaNode) string {
	if strings.Contains(n.Name, ".") || n.Namespace == "" {
		return n.Name
	}
	return n.Namespace + "." + n.Name
}

func collectNamed(n *avro.SchemaNode, m map[string]*avro.SchemaNode, depth int) {
	if depth > maxJSONDepth {
		return
	}
	switch n.Type {
	case "record", "error", "enum", "fixed":
		if _, ok := m[fullName(n)]; !ok {
			m[fullName(n)] = n
		}
	}
	for i := range n.Fields {
		collectNamed(&n.Fields[i].Type, m, depth+1)
	}
	if n.Items != nil {
		collectNamed(n.Items, m, depth+1)
	}
	if n.Values != nil {
		collectNamed(n.Values, m, depth+1)
	}
	for i := range n.Branches {
		collectNamed(&n.Branches[i], m, depth+1)
	}
}

const maxJSONDepth = 256

// deref returns the definition a name-reference node points at.
func (tr *jsonTree) deref(n *avro.SchemaNode) (*avro.SchemaNode, error) {
	switch n.Type {
	case "null", "boolean", "int", "long", "float", "double", "bytes", "string",
		"record", "error", "enum", "fixed", "array", "map", "union":
		return n, nil
	}
	if d, ok := tr.named[n.Type]; ok {
		return d, nil
	}
	for name, d := range tr.named {
		if strings.HasSuffix(name, "."+n.Type) {
			return d, nil
		}
	}
	return nil, fmt.Errorf("unknown named type %q", n.Type)
}

func (tr *jsonTree) append(dst []byte, n *avro.SchemaNode, v any, depth int) ([]byte, error) {
	if depth > maxJSONDepth {
		return dst, fmt.Errorf("value nested deeper than %d", maxJSONDepth)
	}
	n, err := tr.deref(n)
	if err != nil {
		return dst, err
	}
	if n.Type == "union" {
		return tr.appendUnion(dst, n, v, depth)
	}
	if v == nil {
		return append(dst, "null"...), nil
	}
	switch n.Type {
	case "record", "error":
		m, ok := v.(map[string]any)
		if !ok {
			return dst, fmt.Errorf("record %s: value is %T, not map[string]any", n.Name, v)
		}
		dst = append(dst, '{')
		for i := range n.Fields {
			f := &n.Fields[i]
			if i > 0 {
				dst = append(dst, ',')
			}
			dst = appendMarshaledString(dst, f.Name)
			dst = append(dst, ':')
			if dst, err = tr.append(dst, &f.Type, m[f.Name], depth+1); err != nil {
				return dst, fmt.Errorf("%s.%s: %w", n.Name, f.Name, err)
			}
		}
		return append(dst, '}'), nil
	case "array":
		a, ok := v.([]any)
		if !ok {
			return dst, fmt.Errorf("array: value is %T, not []any", v)
		}
		dst = append(dst, '[')
		for i, x := range a {
			if i > 0 {
				dst = append(dst, ',')
			}
			if dst, err = tr.append(dst, n.Items, x, depth+1); err != nil {
				return dst, err
			}
		}
		return append(dst, ']'), nil
	case "map":
		m, ok := v.(map[string]any)
		if !ok {
			return dst, fmt.Errorf("map: value is %T, not map[string]any", v)
		}
		keys := make([]string, 0, len(m))
		for k := range m {
			keys = append(keys, k)
		}
		sort.Strings(keys)
		dst = append(dst, '{')
		for i, k := range keys {
			if i > 0 {
				dst = append(dst, ',')
			}
			dst = appendMarshaledString(dst, k)
			dst = append(dst, ':')
			if dst, err = tr.append(dst, n.Values, m[k], depth+1); err != nil {
				return dst, err
			}
		}
		return append(dst, '}'), nil
	}
	return appendScalar(dst, n, v)
}

// appendUnion writes a nullable union as its value, any other union as
// Connect's union struct.
func (tr *jsonTree) appendUnion(dst []byte, n *avro.SchemaNode, v any, depth int) ([]byte, error) {
	var nonNull []*avro.SchemaNode
	for i := range n.Branches {
		if n.Branches[i].Type != "null" {
			nonNull = append(nonNull, &n.Branches[i])
		}
	}
	if v == nil {
		return append(dst, "null"...), nil
	}
	if len(nonNull) == 1 {
		return tr.append(dst, nonNull[0], v, depth+1)
	}
	taken := -1
	for i, b := range nonNull {
		d, err := tr.deref(b)
		if err != nil {
			return dst, err
		}
		if branchAccepts(d, v) {
			taken = i
			break
		}
	}
	if taken < 0 {
		return dst, fmt.Errorf("union: no branch holds a %T", v)
	}
	dst = append(dst, '{')
	for i, b := range nonNull {
		if i > 0 {
			dst = append(dst, ',')
		}
		d, _ := tr.deref(b)
		name := d.Type
		switch d.Type {
		case "record", "error", "enum", "fixed":
			name = d.Name
			if j := strings.LastIndexByte(name, '.'); j >= 0 {
				name = name[j+1:]
			}
		}
		dst = appendMarshaledString(dst, name)
		dst = append(dst, ':')
		if i != taken {
			dst = append(dst, "null"...)
			continue
		}
		var err error
		if dst, err = tr.append(dst, d, v, depth+1); err != nil {
			return dst, err
		}
	}
	return append(dst, '}'), nil
}

// branchAccepts reports whether v, as twmb/avro decodes it, belongs to
// branch d.
func branchAccepts(d *avro.SchemaNode, v any) bool {
	switch v.(type) {
	case bool:
		return d.Type == "boolean"
	case int32:
		return d.Type == "int" && d.LogicalType == ""
	case int64:
		return d.Type == "long" && d.LogicalType == "" || d.Type == "long" && (d.LogicalType == "time-micros" || d.LogicalType == "timestamp-nanos")
	case float32:
		return d.Type == "float"
	case float64:
		return d.Type == "double"
	case string:
		return d.Type == "string" || d.Type == "enum"
	case []byte:
		return (d.Type == "bytes" || d.Type == "fixed") && d.LogicalType != "decimal"
	case *big.Rat:
		return d.LogicalType == "decimal"
	case time.Time:
		return d.LogicalType == "date" || strings.HasPrefix(d.LogicalType, "timestamp") || strings.HasPrefix(d.LogicalType, "local-timestamp")
	case time.Duration:
		return strings.HasPrefix(d.LogicalType, "time-")
	case map[string]any:
		return d.Type == "record" || d.Type == "error" || d.Type == "map"
	case []any:
		return d.Type == "array"
	}
	return false
}

func appendScalar(dst []byte, n *avro.SchemaNode, v any) ([]byte, error) {
	switch x := v.(type) {
	case bool:
		return strconv.AppendBool(dst, x), nil
	case int32:
		return strconv.AppendInt(dst, int64(x), 10), nil
	case int64:
		return strconv.AppendInt(dst, x, 10), nil
	case float32:
		return appendJavaFloat(dst, float64(x), 32), nil
	case float64:
		return appendJavaFloat(dst, x, 64), nil
	case string:
		return appendMarshaledString(dst, x), nil
	case []byte:
		return appendBase64(dst, x), nil
	case time.Time:
		switch {
		case n.LogicalType == "date":
			return strconv.AppendInt(dst, int64(math.Floor(float64(x.Unix())/86400)), 10), nil
		case strings.HasSuffix(n.LogicalType, "-micros"):
			return strconv.AppendInt(dst, x.UnixMicro(), 10), nil
		case strings.HasSuffix(n.LogicalType, "-nanos"):
			return strconv.AppendInt(dst, x.UnixNano(), 10), nil
		}
		return strconv.AppendInt(dst, x.UnixMilli(), 10), nil
	case time.Duration:
		if n.LogicalType == "time-micros" {
			return strconv.AppendInt(dst, x.Microseconds(), 10), nil
		}
		return strconv.AppendInt(dst, x.Milliseconds(), 10), nil
	case *big.Rat:
		return appendDecimal(dst, x, n.Scale)
	}
	return dst, fmt.Errorf("%s: cannot write a %T as JSON", n.Type, v)
}

// appendDecimal writes the base64 of the unscaled value's minimal
// big-endian two's-complement bytes, as Connect's Decimal does.
func appendDecimal(dst []byte, r *big.Rat, scale int) ([]byte, error) {
	num := new(big.Int).Mul(r.Num(), new(big.Int).Exp(big.NewInt(10), big.NewInt(int64(scale)), nil))
	unscaled, rem := new(big.Int).QuoRem(num, r.Denom(), new(big.Int))
	if rem.Sign() != 0 {
		return dst, fmt.Errorf("decimal %s does not fit scale %d", r.RatString(), scale)
	}
	return appendBase64(dst, twosComplement(unscaled)), nil
}

func appendBase64(dst, b []byte) []byte {
	dst = append(dst, '"')
	dst = base64.StdEncoding.AppendEncode(dst, b)
	return append(dst, '"')
}

func appendMarshaledString(dst []byte, s string) []byte {
	b, _ := json.Marshal(s) // a string always marshals
	return append(dst, b...)
}

// appendJavaFloat writes f as Java's Float/Double.toString does (what
// Connect's JSON serializer writes): decimal notation with at least one
// fractional digit for 1e-3 <= |f| < 1e7, else d.dddE±n.
func appendJavaFloat(dst []byte, f float64, bits int) []byte {
	switch {
	case math.IsNaN(f):
		return append(dst, `"NaN"`...)
	case math.IsInf(f, 1):
		return append(dst, `"Infinity"`...)
	case math.IsInf(f, -1):
		return append(dst, `"-Infinity"`...)
	}
	if a := math.Abs(f); a == 0 || (a >= 1e-3 && a < 1e7) {
		s := strconv.FormatFloat(f, 'f', -1, bits)
		if !strings.Contains(s, ".") {
			s += ".0"
		}
		return append(dst, s...)
	}
	s := strconv.FormatFloat(f, 'E', -1, bits) // 1.5E+21
	mant, exp, _ := strings.Cut(s, "E")
	if !strings.Contains(mant, ".") {
		mant += ".0"
	}
	exp = strings.TrimPrefix(exp, "+")
	if strings.HasPrefix(exp, "-") {
		exp = "-" + strings.TrimLeft(exp[1:], "0")
	} else {
		exp = strings.TrimLeft(exp, "0")
	}
	return append(append(append(dst, mant...), 'E'), exp...)
}
