package convert

import (
	"bytes"
	"context"
	"encoding/base64"
	"encoding/json"
	"errors"
	"fmt"
	"math"
	"math/big"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/twmb/avro"

	"github.com/kafkas3/kafkas3/format"
)

// Connect's logical type names.
const (
	connectDate      = "org.apache.kafka.connect.data.Date"
	connectTime      = "org.apache.kafka.connect.data.Time"
	connectTimestamp = "org.apache.kafka.connect.data.Timestamp"
	connectDecimal   = "org.apache.kafka.connect.data.Decimal"
	// Confluent's AvroData names unnamed structs ConnectDefault,
	// ConnectDefault2, ... in this namespace, and gives decimals this
	// precision when the Connect schema has none.
	connectDefaultName      = "ConnectDefault"
	connectDefaultNamespace = "io.confluent.connect.avro"
	connectDecimalPrecision = "connect.decimal.precision"
	defaultDecimalPrecision = 64
	maxJSONSchemaCache      = 1024
	maxConnectDepth         = 64
)

// JSONConverter is Connect's JsonConverter. With schemas.enable it turns
// the {"schema", "payload"} envelope into an Avro schema (ID 0, Text the
// generated schema) and a value with both Native and Raw set, so the Avro
// writer's fast path applies to it too. Without, values are schemaless.
// It is safe for concurrent use.
type JSONConverter struct {
	schemas bool

	mu    sync.Mutex
	cache map[string]*jsonEntry // compact Connect schema JSON -> entry
}

type jsonEntry struct {
	connect *connectSchema
	schema  *format.Schema
	datum   *format.AvroDatum
}

// NewJSON returns a JsonConverter; only cfg.SchemasEnable matters.
func NewJSON(cfg Config) *JSONConverter {
	return &JSONConverter{schemas: cfg.SchemasEnable, cache: map[string]*jsonEntry{}}
}

// connectSchema is Connect's JSON schema format.
type connectSchema struct {
	Type       string            `json:"type"`
	Optional   bool              `json:"optional"`
	Name       string            `json:"name"`
	Version    int               `json:"version"`
	Doc        string            `json:"doc"`
	Parameters map[string]string `json:"parameters"`
	Default    json.RawMessage   `json:"default"`
	Field      string            `json:"field"`
	Fields     []*connectSchema  `json:"fields"`
	Items      *connectSchema    `json:"items"`
	Keys       *connectSchema    `json:"keys"`
	Values     *connectSchema    `json:"values"`
}

// Convert decodes a JsonConverter value. With schemas.enable=false, or
// for an envelope whose schema is null, it returns nil (schemaless). An
// envelope whose payload is null returns nil too (a null value).
func (c *JSONConverter) Convert(_ context.Context, topic string, isKey bool, data []byte) (*format.Typed, error) {
	if data == nil || !c.schemas {
		return nil, nil
	}
	bad := func(format string, args ...any) error {
		return fmt.Errorf("json converter: topic %q %s: %w: "+format, append([]any{topic, part(isKey), ErrBadData}, args...)...)
	}
	var env map[string]json.RawMessage
	if err := json.Unmarshal(data, &env); err != nil {
		return nil, bad("with schemas.enable=true the value must be a JSON object with \"schema\" and \"payload\": %w", err)
	}
	rawSchema, okS := env["schema"]
	payload, okP := env["payload"]
	if !okS || !okP || len(env) != 2 {
		return nil, bad("with schemas.enable=true the value must have exactly the fields \"schema\" and \"payload\"")
	}
	if isJSONNull(rawSchema) {
		return nil, nil
	}
	e, err := c.entry(rawSchema)
	if err != nil {
		return nil, bad("%w", err)
	}
	if isJSONNull(payload) {
		if !e.connect.Optional {
			return nil, bad("null payload for a required schema")
		}
		return nil, nil
	}
	dec := json.NewDecoder(bytes.NewReader(payload))
	dec.UseNumber()
	var p any
	if err := dec.Decode(&p); err != nil {
		return nil, bad("payload: %w", err)
	}
	native, err := connectValue(e.connect, p, "payload", 0)
	if err != nil {
		return nil, bad("%w", err)
	}
	raw, err := e.datum.Append(nil, native)
	if err != nil {
		return nil, bad("%w", err)
	}
	return &format.Typed{Schema: e.schema, Raw: raw, Native: native}, nil
}

func isJSONNull(b json.RawMessage) bool { return string(bytes.TrimSpace(b)) == "null" }

func (c *JSONConverter) entry(rawSchema json.RawMessage) (*jsonEntry, error) {
	var compact bytes.Buffer
	if err := json.Compact(&compact, rawSchema); err != nil {
		return nil, fmt.Errorf("schema: %w", err)
	}
	key := compact.String()
	c.mu.Lock()
	e, ok := c.cache[key]
	c.mu.Unlock()
	if ok {
		return e, nil
	}
	var cs connectSchema
	if err := json.Unmarshal(compact.Bytes(), &cs); err != nil {
		return nil, fmt.Errorf("schema: %w", err)
	}
	avroJSON, err := (&avroFromConnect{defined: map[string]bool{}}).schema(&cs, 0)
	if err != nil {
		return nil, fmt.Errorf("schema: %w", err)
	}
	text, err := json.Marshal(avroJSON)
	if err != nil {
		return nil, fmt.Errorf("schema: %w", err)
	}
	parsed, err := avro.Parse(string(text))
	if err != nil {
		return nil, fmt.Errorf("schema: derived Avro schema does not parse: %w", err)
	}
	d, err := format.NewAvroDatum(parsed)
	if err != nil {
		return nil, fmt.Errorf("schema: %w", err)
	}
	e = &jsonEntry{connect: &cs, schema: &format.Schema{Avro: parsed, Text: string(text), Version: cs.Version}, datum: d}
	c.mu.Lock()
	if len(c.cache) >= maxJSONSchemaCache {
		clear(c.cache)
	}
	c.cache[key] = e
	c.mu.Unlock()
	return e, nil
}

// validAvroName reports whether s is a valid Avro full name: dot-separated
// names of [A-Za-z_][A-Za-z0-9_]*.
func validAvroName(s string) bool {
	for part := range strings.SplitSeq(s, ".") {
		if part == "" {
			return false
		}
		for i, c := range part {
			letter := c == '_' || c >= 'A' && c <= 'Z' || c >= 'a' && c <= 'z'
			if !letter && (i == 0 || c < '0' || c > '9') {
				return false
			}
		}
	}
	return true
}

// avroFromConnect maps Connect schemas to Avro schema JSON the way
// Confluent's AvroData does for the common cases.
type avroFromConnect struct {
	unnamed int
	defined map[string]bool
}

func (a *avroFromConnect) schema(cs *connectSchema, depth int) (any, error) {
	t, err := a.nonNull(cs, depth)
	if err != nil {
		return nil, err
	}
	if cs.Optional {
		return []any{"null", t}, nil
	}
	return t, nil
}

func (a *avroFromConnect) nonNull(cs *connectSchema, depth int) (any, error) {
	if depth > maxConnectDepth {
		return nil, errors.New("schema nested too deep")
	}
	switch cs.Type {
	case "array":
		if cs.Items == nil {
			return nil, errors.New("array schema without items")
		}
		it, err := a.schema(cs.Items, depth+1)
		if err != nil {
			return nil, err
		}
		return map[string]any{"type": "array", "items": it}, nil
	case "map":
		if cs.Keys == nil || cs.Values == nil {
			return nil, errors.New("map schema without keys or values")
		}
		if cs.Keys.Type != "string" || cs.Keys.Optional {
			return nil, fmt.Errorf("map keys of type %s are not supported (only required string keys)", cs.Keys.Type)
		}
		v, err := a.schema(cs.Values, depth+1)
		if err != nil {
			return nil, err
		}
		return map[string]any{"type": "map", "values": v}, nil
	case "struct":
		return a.record(cs, depth)
	}
	return primitiveAvro(cs)
}

// primitiveAvro maps a Connect primitive schema (with its logical type:
// Date, Time, Timestamp, Decimal) to Avro.
func primitiveAvro(cs *connectSchema) (any, error) {
	logical := func(typ string, extra map[string]any) any {
		m := map[string]any{"type": typ}
		for k, v := range extra {
			m[k] = v
		}
		return m
	}
	switch cs.Type {
	case "int8", "int16":
		return "int", nil
	case "int32":
		switch cs.Name {
		case connectDate:
			return logical("int", map[string]any{"logicalType": "date"}), nil
		case connectTime:
			return logical("int", map[string]any{"logicalType": "time-millis"}), nil
		}
		return "int", nil
	case "int64":
		if cs.Name == connectTimestamp {
			return logical("long", map[string]any{"logicalType": "timestamp-millis"}), nil
		}
		return "long", nil
	case "float", "double", "boolean", "string":
		return cs.Type, nil
	case "bytes":
		if cs.Name == connectDecimal {
			scale, prec, err := decimalParams(cs)
			if err != nil {
				return nil, err
			}
			return logical("bytes", map[string]any{"logicalType": "decimal", "precision": prec, "scale": scale}), nil
		}
		return "bytes", nil
	}
	return nil, fmt.Errorf("unknown Connect schema type %q", cs.Type)
}

// record maps a Connect struct to an Avro record (a reference to it when
// it was defined earlier in the schema). An unnamed struct is Confluent's
// ConnectDefault, numbered from the second on.
func (a *avroFromConnect) record(cs *connectSchema, depth int) (any, error) {
	name := cs.Name
	if name == "" {
		a.unnamed++
		name = connectDefaultNamespace + "." + connectDefaultName
		if a.unnamed > 1 {
			name += strconv.Itoa(a.unnamed)
		}
	}
	if !validAvroName(name) {
		return nil, fmt.Errorf("struct name %q is not a valid Avro name", name)
	}
	if a.defined[name] {
		return name, nil // defined earlier in this schema: a reference
	}
	a.defined[name] = true
	fields := make([]any, 0, len(cs.Fields))
	seen := map[string]bool{}
	for _, f := range cs.Fields {
		if f == nil || !validAvroName(f.Field) || bytes.ContainsRune([]byte(f.Field), '.') {
			return nil, fmt.Errorf("struct %s: bad field name %v", name, f)
		}
		if seen[f.Field] {
			return nil, fmt.Errorf("struct %s: duplicate field %q", name, f.Field)
		}
		seen[f.Field] = true
		ft, err := a.schema(f, depth+1)
		if err != nil {
			return nil, fmt.Errorf("field %s: %w", f.Field, err)
		}
		af := map[string]any{"name": f.Field, "type": ft}
		if f.Optional {
			af["default"] = nil
		}
		if f.Doc != "" {
			af["doc"] = f.Doc
		}
		fields = append(fields, af)
	}
	rec := map[string]any{"type": "record", "name": name, "fields": fields}
	if cs.Doc != "" {
		rec["doc"] = cs.Doc
	}
	return rec, nil
}

func decimalParams(cs *connectSchema) (scale, prec int, err error) {
	s, ok := cs.Parameters["scale"]
	if !ok {
		return 0, 0, errors.New("decimal schema without the scale parameter")
	}
	scale, err = strconv.Atoi(s)
	if err != nil || scale < 0 {
		return 0, 0, fmt.Errorf("decimal scale %q", s)
	}
	prec = defaultDecimalPrecision
	if p, ok := cs.Parameters[connectDecimalPrecision]; ok {
		prec, err = strconv.Atoi(p)
		if err != nil || prec < 1 {
			return 0, 0, fmt.Errorf("decimal precision %q", p)
		}
	}
	if scale > prec {
		return 0, 0, fmt.Errorf("decimal scale %d over precision %d", scale, prec)
	}
	return scale, prec, nil
}

// connectValue converts a JSON payload (decoded with UseNumber) under cs to
// twmb/avro's Go representation of the derived Avro schema (what decoding
// the Avro bytes gives: int32, int64, float32, float64, time.Time, ...).
func connectValue(cs *connectSchema, v any, path string, depth int) (any, error) {
	if depth > maxConnectDepth {
		return nil, errors.New("payload nested too deep")
	}
	if v == nil {
		if cs.Optional {
			return nil, nil
		}
		return nil, fmt.Errorf("%s: null for a required %s", path, cs.Type)
	}
	switch cs.Type {
	case "int8", "int16", "int32", "int64":
		return connectInteger(cs, v, path)
	case "array":
		return connectArray(cs, v, path, depth)
	case "map":
		return connectMap(cs, v, path, depth)
	case "struct":
		return connectStruct(cs, v, path, depth)
	}
	return connectScalar(cs, v, path)
}

// connectInteger converts an integer payload, range-checked for its type,
// with the Date, Time and Timestamp logical types.
func connectInteger(cs *connectSchema, v any, path string) (any, error) {
	n, ok := v.(json.Number)
	if !ok {
		return nil, fmt.Errorf("%s: want an integer, got %T", path, v)
	}
	lo, hi := int64(math.MinInt64), int64(math.MaxInt64)
	switch cs.Type {
	case "int8":
		lo, hi = math.MinInt8, math.MaxInt8
	case "int16":
		lo, hi = math.MinInt16, math.MaxInt16
	case "int32":
		lo, hi = math.MinInt32, math.MaxInt32
	}
	i, err := strconv.ParseInt(string(n), 10, 64)
	if err != nil || i < lo || i > hi {
		return nil, fmt.Errorf("%s: %s is not a %s", path, n, cs.Type)
	}
	switch {
	case cs.Type == "int64" && cs.Name == connectTimestamp:
		return time.UnixMilli(i).UTC(), nil
	case cs.Type == "int64":
		return i, nil
	case cs.Type == "int32" && cs.Name == connectDate:
		return time.Unix(i*86400, 0).UTC(), nil
	case cs.Type == "int32" && cs.Name == connectTime:
		return time.Duration(i) * time.Millisecond, nil
	}
	return int32(i), nil
}

// connectScalar converts a float, double, boolean, string or bytes
// (Decimal included) payload.
func connectScalar(cs *connectSchema, v any, path string) (any, error) {
	switch cs.Type {
	case "float", "double":
		n, ok := v.(json.Number)
		if !ok {
			return nil, fmt.Errorf("%s: want a number, got %T", path, v)
		}
		f, err := strconv.ParseFloat(string(n), 64)
		if err != nil {
			return nil, fmt.Errorf("%s: %s: %w", path, n, err)
		}
		if cs.Type == "float" {
			return float32(f), nil
		}
		return f, nil
	case "boolean":
		b, ok := v.(bool)
		if !ok {
			return nil, fmt.Errorf("%s: want a boolean, got %T", path, v)
		}
		return b, nil
	case "string":
		s, ok := v.(string)
		if !ok {
			return nil, fmt.Errorf("%s: want a string, got %T", path, v)
		}
		return s, nil
	case "bytes":
		if cs.Name == connectDecimal {
			return decimalValue(cs, v, path)
		}
		s, ok := v.(string)
		if !ok {
			return nil, fmt.Errorf("%s: want base64 bytes, got %T", path, v)
		}
		b, err := base64.StdEncoding.DecodeString(s)
		if err != nil {
			return nil, fmt.Errorf("%s: bad base64: %w", path, err)
		}
		return b, nil
	}
	return nil, fmt.Errorf("%s: unknown Connect schema type %q", path, cs.Type)
}

func connectArray(cs *connectSchema, v any, path string, depth int) (any, error) {
	arr, ok := v.([]any)
	if !ok {
		return nil, fmt.Errorf("%s: want an array, got %T", path, v)
	}
	out := make([]any, len(arr))
	for i, x := range arr {
		y, err := connectValue(cs.Items, x, fmt.Sprintf("%s[%d]", path, i), depth+1)
		if err != nil {
			return nil, err
		}
		out[i] = y
	}
	return out, nil
}

func connectMap(cs *connectSchema, v any, path string, depth int) (any, error) {
	m, ok := v.(map[string]any)
	if !ok {
		return nil, fmt.Errorf("%s: want an object, got %T", path, v)
	}
	out := make(map[string]any, len(m))
	for k, x := range m {
		y, err := connectValue(cs.Values, x, path+"."+k, depth+1)
		if err != nil {
			return nil, err
		}
		out[k] = y
	}
	return out, nil
}

// connectStruct converts an object payload field by field; a missing
// field takes its default.
func connectStruct(cs *connectSchema, v any, path string, depth int) (any, error) {
	m, ok := v.(map[string]any)
	if !ok {
		return nil, fmt.Errorf("%s: want an object, got %T", path, v)
	}
	out := make(map[string]any, len(cs.Fields))
	for _, f := range cs.Fields {
		x, present := m[f.Field]
		if !present && len(f.Default) > 0 && !isJSONNull(f.Default) {
			dec := json.NewDecoder(bytes.NewReader(f.Default))
			dec.UseNumber()
			if err := dec.Decode(&x); err != nil {
				return nil, fmt.Errorf("%s.%s: default: %w", path, f.Field, err)
			}
		}
		y, err := connectValue(f, x, path+"."+f.Field, depth+1)
		if err != nil {
			return nil, err
		}
		out[f.Field] = y
	}
	return out, nil
}

// decimalValue reads a Connect decimal payload: base64 of the unscaled
// two's-complement big-endian integer (decimal.format=BASE64, the
// default) or a JSON number (NUMERIC).
func decimalValue(cs *connectSchema, v any, path string) (any, error) {
	scale, _, err := decimalParams(cs)
	if err != nil {
		return nil, fmt.Errorf("%s: %w", path, err)
	}
	switch x := v.(type) {
	case string:
		b, err := base64.StdEncoding.DecodeString(x)
		if err != nil {
			return nil, fmt.Errorf("%s: bad base64 decimal: %w", path, err)
		}
		return avro.RatFromBytes(b, scale), nil
	case json.Number:
		r, ok := new(big.Rat).SetString(string(x))
		if !ok {
			return nil, fmt.Errorf("%s: bad decimal %s", path, x)
		}
		unscaled := new(big.Rat).Mul(r, new(big.Rat).SetInt(new(big.Int).Exp(big.NewInt(10), big.NewInt(int64(scale)), nil)))
		if !unscaled.IsInt() {
			return nil, fmt.Errorf("%s: %s has more than %d decimal places", path, x, scale)
		}
		return r, nil
	}
	return nil, fmt.Errorf("%s: want a decimal, got %T", path, v)
}
