package format

import (
	"encoding/json"
	"fmt"
	"math"
	"math/big"
	"reflect"
	"slices"
	"strconv"
	"time"

	"github.com/parquet-go/parquet-go"
)

// shred turns a record value (twmb/avro's Go representation) into column
// values with repetition and definition levels, appended to cols (one
// slice per leaf column). It returns an estimate of the bytes added.
func (t *pqNode) shred(v any, cols [][]parquet.Value) (int64, error) {
	var size int64
	err := t.emit(v, 0, 0, 0, cols, &size)
	return size, err
}

// emit appends v's column values at repetition level r and definition
// level d (depth is the repetition depth of t) and adds their estimated
// size to size.
func (t *pqNode) emit(v any, r, d, depth int, cols [][]parquet.Value, size *int64) error {
	if t.optional {
		if isNil(v) {
			t.nulls(r, d, cols)
			*size += int64(t.numLeaves())
			return nil
		}
		d++
	} else if isNil(v) {
		return fmt.Errorf("field %s: null for a non-nullable %s", t.display(), t.describe())
	}
	switch t.kind {
	case pqLeaf:
		return t.emitLeaf(v, r, d, cols, size)
	case pqRecord:
		return t.emitRecord(v, r, d, depth, cols, size)
	case pqList:
		return t.emitList(v, r, d, depth, cols, size)
	case pqMap:
		return t.emitMap(v, r, d, depth, cols, size)
	}
	return nil
}

func (t *pqNode) emitLeaf(v any, r, d int, cols [][]parquet.Value, size *int64) error {
	pv, err := t.leafValue(v)
	if err != nil {
		return fmt.Errorf("field %s: %w", t.display(), err)
	}
	*size += 8
	if k := pv.Kind(); k == parquet.ByteArray || k == parquet.FixedLenByteArray {
		*size += int64(len(pv.ByteArray()))
	}
	cols[t.col] = append(cols[t.col], pv.Level(r, d, t.col))
	return nil
}

func (t *pqNode) emitRecord(v any, r, d, depth int, cols [][]parquet.Value, size *int64) error {
	m, ok := v.(map[string]any)
	if !ok {
		return fmt.Errorf("field %s: a record needs map[string]any, got %T", t.display(), v)
	}
	for _, f := range t.fields {
		if err := f.emit(m[f.name], r, d, depth, cols, size); err != nil {
			return err
		}
	}
	return nil
}

// emitList emits the items of an array; an empty one is a null list.
func (t *pqNode) emitList(v any, r, d, depth int, cols [][]parquet.Value, size *int64) error {
	items, ok := v.([]any)
	if !ok {
		rv := reflect.ValueOf(v)
		if rv.Kind() != reflect.Slice && rv.Kind() != reflect.Array || rv.Type().Elem().Kind() == reflect.Uint8 {
			return fmt.Errorf("field %s: an array needs a slice, got %T", t.display(), v)
		}
		items = make([]any, rv.Len())
		for i := range items {
			items[i] = rv.Index(i).Interface()
		}
	}
	if len(items) == 0 {
		t.nulls(r, d, cols)
		*size += int64(t.numLeaves())
		return nil
	}
	for i, it := range items {
		rr := r
		if i > 0 {
			rr = depth + 1
		}
		if err := t.fields[0].emit(it, rr, d+1, depth+1, cols, size); err != nil {
			return err
		}
	}
	return nil
}

// emitMap emits the entries of a map in key order; an empty one is a null
// map.
func (t *pqNode) emitMap(v any, r, d, depth int, cols [][]parquet.Value, size *int64) error {
	m, ok := v.(map[string]any)
	if !ok {
		rv := reflect.ValueOf(v)
		if rv.Kind() != reflect.Map || rv.Type().Key().Kind() != reflect.String {
			return fmt.Errorf("field %s: a map needs map[string]any, got %T", t.display(), v)
		}
		m = make(map[string]any, rv.Len())
		for it := rv.MapRange(); it.Next(); {
			m[it.Key().String()] = it.Value().Interface()
		}
	}
	if len(m) == 0 {
		t.nulls(r, d, cols)
		*size += int64(t.numLeaves())
		return nil
	}
	keys := make([]string, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	slices.Sort(keys) // Avro maps are unordered; sorting keeps files deterministic
	kn, vn := t.fields[0], t.fields[1]
	for i, k := range keys {
		rr := r
		if i > 0 {
			rr = depth + 1
		}
		cols[kn.col] = append(cols[kn.col], parquet.ByteArrayValue([]byte(k)).Level(rr, d+1, kn.col))
		*size += 8 + int64(len(k))
		if err := vn.emit(m[k], rr, d+1, depth+1, cols, size); err != nil {
			return err
		}
	}
	return nil
}

// nulls appends a null at levels (r, d) to every leaf column under t.
func (t *pqNode) nulls(r, d int, cols [][]parquet.Value) {
	for c := t.firstCol; c < t.endCol; c++ {
		cols[c] = append(cols[c], parquet.NullValue().Level(r, d, c))
	}
}

func (t *pqNode) display() string {
	if t.path == "" {
		return "(root)"
	}
	return t.path
}

func (t *pqNode) describe() string {
	switch t.kind {
	case pqRecord:
		return "record"
	case pqList:
		return "array"
	case pqMap:
		return "map"
	}
	return "value"
}

func isNil(v any) bool {
	if v == nil {
		return true
	}
	switch rv := reflect.ValueOf(v); rv.Kind() {
	case reflect.Pointer, reflect.Map, reflect.Slice, reflect.Interface:
		// An empty (non-nil) slice or map is a value; a nil pointer is null.
		return rv.Kind() == reflect.Pointer && rv.IsNil()
	}
	return false
}

// leafValue converts one Avro value to the Parquet value of leaf t.
func (t *pqNode) leafValue(v any) (parquet.Value, error) {
	var pv parquet.Value
	var ok bool
	var err error
	switch t.leaf {
	case lkBool, lkInt, lkLong, lkFloat, lkDouble:
		pv, ok, err = t.numberValue(v)
	case lkDate, lkTimeMillis, lkTimeMicros, lkTsMillis, lkTsMicros, lkTsNanos:
		pv, ok, err = t.timeValue(v)
	default:
		pv, ok, err = t.bytesValue(v)
	}
	if ok || err != nil {
		return pv, err
	}
	return parquet.Value{}, fmt.Errorf("cannot write a %T as Parquet %v", v, t.node.Type())
}

// numberValue converts a boolean, int, long, float or double; ok is false
// when v has no such value.
func (t *pqNode) numberValue(v any) (pv parquet.Value, ok bool, err error) {
	switch t.leaf {
	case lkBool:
		if b, ok := v.(bool); ok {
			return parquet.BooleanValue(b), true, nil
		}
	case lkInt:
		if n, ok := toInt64(v); ok {
			if n < math.MinInt32 || n > math.MaxInt32 {
				return parquet.Value{}, false, fmt.Errorf("%d overflows an int", n)
			}
			return parquet.Int32Value(int32(n)), true, nil
		}
	case lkLong:
		if n, ok := toInt64(v); ok {
			return parquet.Int64Value(n), true, nil
		}
	case lkFloat:
		if f, ok := toFloat64(v); ok {
			return parquet.FloatValue(float32(f)), true, nil
		}
	case lkDouble:
		if f, ok := toFloat64(v); ok {
			return parquet.DoubleValue(f), true, nil
		}
	}
	return parquet.Value{}, false, nil
}

// bytesValue converts a string, enum, bytes, fixed or decimal; ok is false
// when v has no such value.
func (t *pqNode) bytesValue(v any) (pv parquet.Value, ok bool, err error) {
	switch t.leaf {
	case lkString, lkEnum:
		switch s := v.(type) {
		case string:
			return parquet.ByteArrayValue([]byte(s)), true, nil
		case []byte:
			return parquet.ByteArrayValue(s), true, nil
		case [16]byte: // a uuid
			return parquet.ByteArrayValue([]byte(formatUUID(s))), true, nil
		}
	case lkBytes:
		switch b := v.(type) {
		case []byte:
			return parquet.ByteArrayValue(b), true, nil
		case string:
			return parquet.ByteArrayValue([]byte(b)), true, nil
		}
	case lkFixed, lkUUIDFixed:
		b, ok := toBytes(v)
		if ok {
			if len(b) != t.size {
				return parquet.Value{}, false, fmt.Errorf("%d bytes for a fixed of size %d", len(b), t.size)
			}
			return parquet.FixedLenByteArrayValue(b), true, nil
		}
	case lkDecimalBytes, lkDecimalFixed:
		b, err := t.decimalBytes(v)
		if err != nil {
			return parquet.Value{}, false, err
		}
		if t.leaf == lkDecimalFixed {
			return parquet.FixedLenByteArrayValue(b), true, nil
		}
		return parquet.ByteArrayValue(b), true, nil
	}
	return parquet.Value{}, false, nil
}

// timeValue converts a date, time or timestamp (a time.Time or
// time.Duration, or its number); ok is false when v has no such value.
func (t *pqNode) timeValue(v any) (pv parquet.Value, ok bool, err error) {
	switch t.leaf {
	case lkDate:
		if tm, ok := v.(time.Time); ok {
			days := floorDiv(tm.Unix(), 86400)
			if days < math.MinInt32 || days > math.MaxInt32 {
				return parquet.Value{}, false, fmt.Errorf("date %v out of range", tm)
			}
			return parquet.Int32Value(int32(days)), true, nil
		}
		if n, ok := toInt64(v); ok && n >= math.MinInt32 && n <= math.MaxInt32 {
			return parquet.Int32Value(int32(n)), true, nil
		}
	case lkTimeMillis:
		if d, ok := v.(time.Duration); ok {
			return parquet.Int32Value(int32(d / time.Millisecond)), true, nil
		}
		if n, ok := toInt64(v); ok && n >= math.MinInt32 && n <= math.MaxInt32 {
			return parquet.Int32Value(int32(n)), true, nil
		}
	case lkTimeMicros:
		if d, ok := v.(time.Duration); ok {
			return parquet.Int64Value(int64(d / time.Microsecond)), true, nil
		}
		if n, ok := toInt64(v); ok {
			return parquet.Int64Value(n), true, nil
		}
	case lkTsMillis, lkTsMicros, lkTsNanos:
		if tm, ok := v.(time.Time); ok {
			switch t.leaf {
			case lkTsMillis:
				return parquet.Int64Value(tm.UnixMilli()), true, nil
			case lkTsMicros:
				return parquet.Int64Value(tm.UnixMicro()), true, nil
			}
			return parquet.Int64Value(tm.UnixNano()), true, nil
		}
		if n, ok := toInt64(v); ok {
			return parquet.Int64Value(n), true, nil
		}
	}
	return parquet.Value{}, false, nil
}

func floorDiv(a, b int64) int64 {
	q := a / b
	if a%b != 0 && (a < 0) != (b < 0) {
		q--
	}
	return q
}

func toInt64(v any) (int64, bool) {
	switch n := v.(type) {
	case int32:
		return int64(n), true
	case int64:
		return n, true
	case int:
		return int64(n), true
	case int8:
		return int64(n), true
	case int16:
		return int64(n), true
	case uint8:
		return int64(n), true
	case uint16:
		return int64(n), true
	case uint32:
		return int64(n), true
	case uint64:
		if n <= math.MaxInt64 {
			return int64(n), true
		}
	case uint:
		if uint64(n) <= math.MaxInt64 {
			return int64(n), true
		}
	case float64:
		if n == math.Trunc(n) && n >= -(1<<63) && n < 1<<63 {
			return int64(n), true
		}
	case float32:
		return toInt64(float64(n))
	case json.Number:
		i, err := n.Int64()
		return i, err == nil
	}
	return 0, false
}

func toFloat64(v any) (float64, bool) {
	switch n := v.(type) {
	case float64:
		return n, true
	case float32:
		return float64(n), true
	case json.Number:
		f, err := n.Float64()
		return f, err == nil
	}
	if i, ok := toInt64(v); ok {
		return float64(i), true
	}
	return 0, false
}

func toBytes(v any) ([]byte, bool) {
	switch b := v.(type) {
	case []byte:
		return b, true
	case string:
		return []byte(b), true
	}
	rv := reflect.ValueOf(v)
	if rv.Kind() == reflect.Array && rv.Type().Elem().Kind() == reflect.Uint8 {
		b := make([]byte, rv.Len())
		reflect.Copy(reflect.ValueOf(b), rv)
		return b, true
	}
	return nil, false
}

func formatUUID(u [16]byte) string {
	const hex = "0123456789abcdef"
	b := make([]byte, 0, 36)
	for i, c := range u {
		if i == 4 || i == 6 || i == 8 || i == 10 {
			b = append(b, '-')
		}
		b = append(b, hex[c>>4], hex[c&15])
	}
	return string(b)
}

// decimalBytes returns the big-endian two's complement unscaled value of
// a decimal (Avro's and Parquet's encoding), sign-extended to the fixed
// size for fixed decimals.
func (t *pqNode) decimalBytes(v any) ([]byte, error) {
	var r *big.Rat
	switch d := v.(type) {
	case *big.Rat:
		if d == nil {
			return nil, fmt.Errorf("nil decimal")
		}
		r = d
	case big.Rat:
		r = &d
	case []byte: // already the unscaled two's complement
		return t.sizeDecimal(d)
	case float64:
		r = new(big.Rat)
		if r.SetFloat64(d) == nil {
			return nil, fmt.Errorf("decimal %v is not finite", d)
		}
	case string:
		var ok bool
		if r, ok = new(big.Rat).SetString(d); !ok {
			return nil, fmt.Errorf("decimal %q is not a number", d)
		}
	case json.Number:
		var ok bool
		if r, ok = new(big.Rat).SetString(string(d)); !ok {
			return nil, fmt.Errorf("decimal %q is not a number", string(d))
		}
	default:
		return nil, fmt.Errorf("cannot write a %T as a decimal", v)
	}
	scaled := new(big.Rat).Mul(r, new(big.Rat).SetInt(new(big.Int).Exp(big.NewInt(10), big.NewInt(int64(t.scale)), nil)))
	if !scaled.IsInt() {
		return nil, fmt.Errorf("decimal %s has more than %d digits after the point", r.FloatString(t.scale+3), t.scale)
	}
	return t.sizeDecimal(twosComplement(scaled.Num()))
}

func (t *pqNode) sizeDecimal(b []byte) ([]byte, error) {
	if t.leaf != lkDecimalFixed {
		return b, nil
	}
	if len(b) > t.size {
		return nil, fmt.Errorf("decimal needs %d bytes, the fixed holds %d", len(b), t.size)
	}
	out := make([]byte, t.size)
	if len(b) > 0 && b[0]&0x80 != 0 {
		for i := range out {
			out[i] = 0xff
		}
	}
	copy(out[t.size-len(b):], b)
	return out, nil
}

// twosComplement returns the minimal big-endian two's complement of n.
func twosComplement(n *big.Int) []byte {
	switch n.Sign() {
	case 0:
		return []byte{0}
	case 1:
		b := n.Bytes()
		if b[0]&0x80 != 0 {
			b = append([]byte{0}, b...)
		}
		return b
	}
	// -n = ^(n-1): two's complement of |n|.
	m := new(big.Int).Sub(new(big.Int).Neg(n), big.NewInt(1))
	b := m.Bytes()
	for i := range b {
		b[i] = ^b[i]
	}
	if len(b) == 0 || b[0]&0x80 == 0 {
		b = append([]byte{0xff}, b...)
	}
	return b
}

// fromTwosComplement parses a big-endian two's complement integer.
func fromTwosComplement(b []byte) *big.Int {
	n := new(big.Int).SetBytes(b)
	if len(b) > 0 && b[0]&0x80 != 0 {
		n.Sub(n, new(big.Int).Lsh(big.NewInt(1), uint(len(b))*8))
	}
	return n
}

// leafNative converts a Parquet value of leaf t to twmb/avro's Go
// representation.
func (t *pqNode) leafNative(v parquet.Value) (any, error) {
	switch t.leaf {
	case lkBool:
		return v.Boolean(), nil
	case lkInt:
		return v.Int32(), nil
	case lkLong:
		return v.Int64(), nil
	case lkFloat:
		return v.Float(), nil
	case lkDouble:
		return v.Double(), nil
	case lkString, lkEnum:
		return string(v.ByteArray()), nil
	case lkBytes:
		return slices.Clone(v.ByteArray()), nil
	case lkFixed, lkUUIDFixed:
		b := v.ByteArray()
		if len(b) != t.size {
			return nil, fmt.Errorf("%w: field %s: %d bytes for a fixed of size %d", errCorrupt, t.display(), len(b), t.size)
		}
		if t.leaf == lkUUIDFixed {
			var u [16]byte
			copy(u[:], b)
			return u, nil
		}
		return slices.Clone(b), nil
	case lkDate:
		return time.Unix(int64(v.Int32())*86400, 0).UTC(), nil
	case lkTimeMillis:
		return time.Duration(v.Int32()) * time.Millisecond, nil
	case lkTimeMicros:
		return time.Duration(v.Int64()) * time.Microsecond, nil
	case lkTsMillis:
		return time.UnixMilli(v.Int64()).UTC(), nil
	case lkTsMicros:
		return time.UnixMicro(v.Int64()).UTC(), nil
	case lkTsNanos:
		return time.Unix(0, v.Int64()).UTC(), nil
	case lkDecimalBytes, lkDecimalFixed:
		b := v.ByteArray()
		if len(b) == 0 || len(b) > 4096 {
			return nil, fmt.Errorf("%w: field %s: decimal of %d bytes", errCorrupt, t.display(), len(b))
		}
		den := new(big.Int).Exp(big.NewInt(10), big.NewInt(int64(t.scale)), nil)
		return new(big.Rat).SetFrac(fromTwosComplement(b), den), nil
	}
	return nil, fmt.Errorf("%w: field %s: leaf kind %s", errCorrupt, t.display(), strconv.Itoa(int(t.leaf)))
}

// assembler rebuilds record values from one row's column values.
type assembler struct {
	cols [][]parquet.Value
	pos  []int
}

func (a *assembler) peek(col int) (parquet.Value, error) {
	if a.pos[col] >= len(a.cols[col]) {
		return parquet.Value{}, fmt.Errorf("%w: column %d ends early", errCorrupt, col)
	}
	return a.cols[col][a.pos[col]], nil
}

func (a *assembler) next(col int) (parquet.Value, error) {
	v, err := a.peek(col)
	if err == nil {
		a.pos[col]++
	}
	return v, err
}

// more reports whether column col continues with another repetition at
// level rep.
func (a *assembler) more(col, rep int) bool {
	return a.pos[col] < len(a.cols[col]) && a.cols[col][a.pos[col]].RepetitionLevel() == rep
}

// skip consumes the null marker (definition level <= d) of every column
// under t.
func (a *assembler) skip(t *pqNode, d int) error {
	for c := t.firstCol; c < t.endCol; c++ {
		v, err := a.next(c)
		if err != nil {
			return err
		}
		if v.DefinitionLevel() > d {
			return fmt.Errorf("%w: field %s: column %d defined where its parent is null", errCorrupt, t.display(), c)
		}
	}
	return nil
}

// read rebuilds the value of t; d is the definition level of t's parent,
// depth its repetition depth.
func (a *assembler) read(t *pqNode, d, depth int) (any, error) {
	if t.optional {
		v, err := a.peek(t.firstCol)
		if err != nil {
			return nil, err
		}
		if v.DefinitionLevel() <= d {
			return nil, a.skip(t, d)
		}
		d++
	}
	switch t.kind {
	case pqLeaf:
		v, err := a.next(t.col)
		if err != nil {
			return nil, err
		}
		if v.IsNull() || v.DefinitionLevel() != t.maxDef {
			return nil, fmt.Errorf("%w: field %s: null in a required column", errCorrupt, t.display())
		}
		return t.leafNative(v)
	case pqRecord:
		m := make(map[string]any, len(t.fields))
		for _, f := range t.fields {
			x, err := a.read(f, d, depth)
			if err != nil {
				return nil, err
			}
			m[f.name] = x
		}
		return m, nil
	case pqList, pqMap:
		first := t.fields[0].firstCol
		v, err := a.peek(first)
		if err != nil {
			return nil, err
		}
		if v.DefinitionLevel() <= d {
			if err := a.skip(t, d); err != nil {
				return nil, err
			}
			if t.kind == pqMap {
				return map[string]any{}, nil
			}
			return []any{}, nil
		}
		var items []any
		var m map[string]any
		if t.kind == pqMap {
			m = map[string]any{}
		}
		for {
			if t.kind == pqList {
				x, err := a.read(t.fields[0], d+1, depth+1)
				if err != nil {
					return nil, err
				}
				items = append(items, x)
			} else {
				k, err := a.read(t.fields[0], d+1, depth+1)
				if err != nil {
					return nil, err
				}
				x, err := a.read(t.fields[1], d+1, depth+1)
				if err != nil {
					return nil, err
				}
				m[k.(string)] = x
			}
			if !a.more(first, depth+1) {
				break
			}
		}
		if t.kind == pqMap {
			return m, nil
		}
		return items, nil
	}
	return nil, fmt.Errorf("%w: field %s: unknown node", errCorrupt, t.display())
}
