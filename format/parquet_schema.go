package format

import (
	"errors"
	"fmt"
	"reflect"
	"strings"

	"github.com/parquet-go/parquet-go"
	"github.com/parquet-go/parquet-go/compress"
	"github.com/parquet-go/parquet-go/encoding"
	"github.com/twmb/avro"
)

// pqKind is the shape of a node of the Parquet tree derived from Avro.
type pqKind uint8

const (
	pqLeaf pqKind = iota
	pqRecord
	pqList
	pqMap
)

// leafKind says how a leaf's Avro value maps to a Parquet value.
type leafKind uint8

const (
	lkBool leafKind = iota + 1
	lkInt
	lkLong
	lkFloat
	lkDouble
	lkString
	lkEnum
	lkBytes
	lkFixed
	lkUUIDFixed
	lkDate
	lkTimeMillis
	lkTimeMicros
	lkTsMillis
	lkTsMicros
	lkTsNanos
	lkDecimalBytes
	lkDecimalFixed
)

// pqNode is one node of the Parquet schema derived from an Avro schema. It
// drives both shredding (Avro value -> column values with levels) and
// assembly (column values -> Avro value).
//
// Layout, as parquet-avro writes it with the standard (3-level) lists:
//
//	record field   [optional|required] <type> name
//	array          group name (LIST) { repeated group list { element } }
//	map            group name (MAP) { repeated group key_value { required binary key (STRING); value } }
//	[null, T]      optional T
type pqNode struct {
	name     string
	path     string // dotted path for errors
	optional bool
	kind     pqKind
	leaf     leafKind
	size     int // fixed size
	scale    int // decimal scale
	fields   []*pqNode
	node     parquet.Node

	col              int // leaf column index
	firstCol, endCol int // leaf column range [firstCol, endCol)
	maxDef, maxRep   int // levels of a leaf
}

// parquetTree derives the Parquet tree of an Avro record schema. It returns
// the tree and the record's (short) name, the Parquet schema's name.
func parquetTree(s *avro.Schema) (*pqNode, string, error) {
	root := s.Root().ExpandReferences()
	if root.Type != "record" && root.Type != "error" {
		return nil, "", fmt.Errorf("parquet: the value schema is %s, not a record: %w (Parquet files hold records)", describeAvro(root), ErrNotSupported)
	}
	t, err := buildPQ(root, root.Name, "")
	if err != nil {
		return nil, "", err
	}
	col := 0
	t.number(&col, 0, 0)
	name := root.Name
	if i := strings.LastIndexByte(name, '.'); i >= 0 {
		name = name[i+1:]
	}
	return t, name, nil
}

func describeAvro(n *avro.SchemaNode) string {
	if n.Type == "union" {
		var b []string
		for _, br := range n.Branches {
			b = append(b, describeAvro(&br))
		}
		return "[" + strings.Join(b, ", ") + "]"
	}
	if n.LogicalType != "" {
		return n.Type + "/" + n.LogicalType
	}
	return n.Type
}

func fieldErr(path string, n *avro.SchemaNode, why string) error {
	if path == "" {
		path = "(root)"
	}
	return fmt.Errorf("parquet: field %s: %s %s: %w", path, describeAvro(n), why, ErrNotSupported)
}

// buildPQ derives the Parquet node of the Avro node n (field name, dotted
// path for errors): a nullable union, a group (record, list, map) or a
// leaf.
func buildPQ(n *avro.SchemaNode, name, path string) (*pqNode, error) {
	switch n.Type {
	case "union":
		return buildPQUnion(n, name, path)
	case "record", "error", "array", "map":
		return buildPQGroup(n, name, path)
	}
	return buildPQLeaf(n, name, path)
}

// buildPQUnion maps [null, T] to an optional T and [T] to T; other unions
// are not supported.
func buildPQUnion(n *avro.SchemaNode, name, path string) (*pqNode, error) {
	var nonNull []*avro.SchemaNode
	for i := range n.Branches {
		if n.Branches[i].Type != "null" {
			nonNull = append(nonNull, &n.Branches[i])
		}
	}
	switch {
	case len(nonNull) == 1 && len(n.Branches) == 2:
		t, err := buildPQ(nonNull[0], name, path)
		if err != nil {
			return nil, err
		}
		t.optional = true
		t.node = parquet.Optional(t.node)
		return t, nil
	case len(nonNull) == 1 && len(n.Branches) == 1:
		return buildPQ(nonNull[0], name, path)
	}
	return nil, fieldErr(path, n, "is a union Parquet cannot hold (only [null, T] unions are)")
}

// buildPQGroup maps a record to a group of its fields, an array to a
// list, a map to a map of string keys.
func buildPQGroup(n *avro.SchemaNode, name, path string) (*pqNode, error) {
	t := &pqNode{name: name, path: path}
	child := func(c string) string {
		if path == "" {
			return c
		}
		return path + "." + c
	}
	switch n.Type {
	case "record", "error":
		g := &pqGroup{}
		for i := range n.Fields {
			f := &n.Fields[i]
			c, err := buildPQ(&f.Type, f.Name, child(f.Name))
			if err != nil {
				return nil, err
			}
			t.fields = append(t.fields, c)
			g.fields = append(g.fields, &pqField{Node: c.node, name: f.Name})
		}
		if len(g.fields) == 0 {
			return nil, fieldErr(path, n, "has no fields (Parquet groups need at least one)")
		}
		t.kind, t.node = pqRecord, g
		return t, nil
	case "array":
		if n.Items == nil {
			return nil, fieldErr(path, n, "has no items")
		}
		e, err := buildPQ(n.Items, "element", path+"[]")
		if err != nil {
			return nil, err
		}
		t.kind, t.fields, t.node = pqList, []*pqNode{e}, parquet.List(e.node)
		return t, nil
	case "map":
		if n.Values == nil {
			return nil, fieldErr(path, n, "has no values")
		}
		k := &pqNode{name: "key", path: path + "{key}", kind: pqLeaf, leaf: lkString, node: parquet.String()}
		v, err := buildPQ(n.Values, "value", path+"{}")
		if err != nil {
			return nil, err
		}
		t.kind, t.fields, t.node = pqMap, []*pqNode{k, v}, parquet.Map(k.node, v.node)
		return t, nil
	}
	return nil, fieldErr(path, n, "is not a group")
}

// buildPQLeaf maps a primitive, enum or fixed Avro type (with its logical
// type) to a Parquet leaf.
func buildPQLeaf(n *avro.SchemaNode, name, path string) (*pqNode, error) {
	t := &pqNode{name: name, path: path}
	t.kind = pqLeaf
	lt := n.LogicalType
	switch {
	case n.Type == "boolean":
		t.leaf, t.node = lkBool, parquet.Leaf(parquet.BooleanType)
	case n.Type == "int" && lt == "date":
		t.leaf, t.node = lkDate, parquet.Date()
	case n.Type == "int" && lt == "time-millis":
		t.leaf, t.node = lkTimeMillis, parquet.Time(parquet.Millisecond)
	case n.Type == "int":
		t.leaf, t.node = lkInt, parquet.Leaf(parquet.Int32Type)
	case n.Type == "long" && lt == "time-micros":
		t.leaf, t.node = lkTimeMicros, parquet.Time(parquet.Microsecond)
	case n.Type == "long" && (lt == "timestamp-millis" || lt == "local-timestamp-millis"):
		t.leaf, t.node = lkTsMillis, parquet.TimestampAdjusted(parquet.Millisecond, lt == "timestamp-millis")
	case n.Type == "long" && (lt == "timestamp-micros" || lt == "local-timestamp-micros"):
		t.leaf, t.node = lkTsMicros, parquet.TimestampAdjusted(parquet.Microsecond, lt == "timestamp-micros")
	case n.Type == "long" && (lt == "timestamp-nanos" || lt == "local-timestamp-nanos"):
		t.leaf, t.node = lkTsNanos, parquet.TimestampAdjusted(parquet.Nanosecond, lt == "timestamp-nanos")
	case n.Type == "long":
		t.leaf, t.node = lkLong, parquet.Leaf(parquet.Int64Type)
	case n.Type == "float":
		t.leaf, t.node = lkFloat, parquet.Leaf(parquet.FloatType)
	case n.Type == "double":
		t.leaf, t.node = lkDouble, parquet.Leaf(parquet.DoubleType)
	case n.Type == "string":
		t.leaf, t.node = lkString, parquet.String()
	case n.Type == "enum":
		t.leaf, t.node = lkEnum, parquet.Enum()
	case n.Type == "bytes" && lt == "decimal":
		t.leaf, t.scale, t.node = lkDecimalBytes, n.Scale, parquet.Decimal(n.Scale, n.Precision, parquet.ByteArrayType)
	case n.Type == "bytes":
		t.leaf, t.node = lkBytes, parquet.Leaf(parquet.ByteArrayType)
	case n.Type == "fixed" && n.Size <= 0:
		return nil, fieldErr(path, n, "has size 0")
	case n.Type == "fixed" && lt == "decimal":
		t.leaf, t.scale, t.size = lkDecimalFixed, n.Scale, n.Size
		t.node = parquet.Decimal(n.Scale, n.Precision, parquet.FixedLenByteArrayType(n.Size))
	case n.Type == "fixed" && lt == "uuid" && n.Size == 16:
		t.leaf, t.size, t.node = lkUUIDFixed, n.Size, parquet.Leaf(parquet.FixedLenByteArrayType(n.Size))
	case n.Type == "fixed":
		t.leaf, t.size, t.node = lkFixed, n.Size, parquet.Leaf(parquet.FixedLenByteArrayType(n.Size))
	case n.Type == "null":
		return nil, fieldErr(path, n, "is a null type, which Parquet cannot hold")
	default:
		return nil, fieldErr(path, n, "is a recursive or unknown type, which Parquet cannot hold")
	}
	return t, nil
}

// number assigns leaf column indexes (in schema order) and levels.
func (t *pqNode) number(col *int, def, rep int) {
	if t.optional {
		def++
	}
	t.firstCol = *col
	switch t.kind {
	case pqLeaf:
		t.col, t.maxDef, t.maxRep = *col, def, rep
		*col++
	case pqRecord:
		for _, f := range t.fields {
			f.number(col, def, rep)
		}
	case pqList, pqMap:
		for _, f := range t.fields {
			f.number(col, def+1, rep+1)
		}
	}
	t.endCol = *col
}

func (t *pqNode) numLeaves() int { return t.endCol - t.firstCol }

// leaves returns the leaf nodes in column order.
func (t *pqNode) leaves(out []*pqNode) []*pqNode {
	if t.kind == pqLeaf {
		return append(out, t)
	}
	for _, f := range t.fields {
		out = f.leaves(out)
	}
	return out
}

// leafPaths returns each leaf's Parquet column path.
func (t *pqNode) leafPaths(prefix []string, out [][]string) [][]string {
	switch t.kind {
	case pqLeaf:
		return append(out, append(append([]string(nil), prefix...), t.name))
	case pqRecord:
		p := prefix
		if t.path != "" { // not the root
			p = append(append([]string(nil), prefix...), t.name)
		}
		for _, f := range t.fields {
			out = f.leafPaths(p, out)
		}
	case pqList:
		p := append(append([]string(nil), prefix...), t.name, "list")
		out = t.fields[0].leafPaths(p, out)
	case pqMap:
		p := append(append([]string(nil), prefix...), t.name, "key_value")
		for _, f := range t.fields {
			out = f.leafPaths(p, out)
		}
	}
	return out
}

// pqGroup is a Parquet group whose fields keep the Avro field order
// (parquet.Group sorts its fields by name; parquet-avro keeps Avro's order).
type pqGroup struct {
	fields []parquet.Field
}

// pqField is a named field of a pqGroup.
type pqField struct {
	parquet.Node
	name string
}

func (f *pqField) Name() string { return f.name }

func (f *pqField) Value(base reflect.Value) reflect.Value {
	if base.Kind() == reflect.Interface && !base.IsNil() {
		base = base.Elem()
	}
	if base.Kind() == reflect.Map && base.Type().Key().Kind() == reflect.String {
		return base.MapIndex(reflect.ValueOf(f.name).Convert(base.Type().Key()))
	}
	return reflect.Value{}
}

func (g *pqGroup) ID() int { return 0 }
func (g *pqGroup) String() string {
	var b strings.Builder
	_ = parquet.PrintSchema(&b, "group", g)
	return b.String()
}
func (g *pqGroup) Type() parquet.Type          { return parquet.Group{}.Type() }
func (g *pqGroup) Optional() bool              { return false }
func (g *pqGroup) Repeated() bool              { return false }
func (g *pqGroup) Required() bool              { return true }
func (g *pqGroup) Leaf() bool                  { return false }
func (g *pqGroup) Fields() []parquet.Field     { return g.fields }
func (g *pqGroup) Encoding() encoding.Encoding { return nil }
func (g *pqGroup) Compression() compress.Codec { return nil }
func (g *pqGroup) GoType() reflect.Type        { return g.group().GoType() }
func (g *pqGroup) group() parquet.Group        { return groupOf(g.fields) }
func groupOf(fields []parquet.Field) parquet.Group {
	m := make(parquet.Group, len(fields))
	for _, f := range fields {
		m[f.Name()] = f
	}
	return m
}

var _ parquet.Node = (*pqGroup)(nil)

// errCorrupt is wrapped by reader errors about malformed files.
var errCorrupt = errors.New("malformed parquet file")

// checkFileSchema verifies that the file's columns are the ones t derives
// from the Avro schema: same paths, physical types and levels.
func (t *pqNode) checkFileSchema(s *parquet.Schema) error {
	paths := t.leafPaths(nil, nil)
	leaves := t.leaves(nil)
	cols := s.Columns()
	if len(cols) != len(paths) {
		return fmt.Errorf("%w: %d columns, the Avro schema in %s gives %d", errCorrupt, len(cols), ParquetAvroSchemaKey, len(paths))
	}
	for i, p := range paths {
		if strings.Join(cols[i], ".") != strings.Join(p, ".") {
			return fmt.Errorf("%w: column %d is %s, the Avro schema in %s gives %s (kafkas3 reads the standard LIST and MAP layouts)",
				errCorrupt, i, strings.Join(cols[i], "."), ParquetAvroSchemaKey, strings.Join(p, "."))
		}
		lc, ok := s.Lookup(cols[i]...)
		if !ok {
			return fmt.Errorf("%w: column %s not found", errCorrupt, strings.Join(cols[i], "."))
		}
		want := leaves[i].node.Type()
		if lc.ColumnIndex != i || lc.MaxDefinitionLevel != leaves[i].maxDef || lc.MaxRepetitionLevel != leaves[i].maxRep ||
			lc.Node.Type().Kind() != want.Kind() || lc.Node.Type().Length() != want.Length() {
			return fmt.Errorf("%w: column %s is %v (definition level %d, repetition level %d), the Avro schema gives %v (%d, %d)",
				errCorrupt, strings.Join(cols[i], "."), lc.Node.Type(), lc.MaxDefinitionLevel, lc.MaxRepetitionLevel,
				want, leaves[i].maxDef, leaves[i].maxRep)
		}
	}
	return nil
}
