package format

import (
	"bytes"
	"encoding/binary"
	"errors"
	"fmt"
	"math"
	"slices"
	"strings"

	"github.com/twmb/avro"
)

// This file holds AvroDatum: structural checks and the deterministic
// (canonical) encoding of Avro datums.

// AvroDatum checks and encodes datums of one Avro schema. Build it once
// per schema with NewAvroDatum; it is safe for concurrent use.
type AvroDatum struct {
	schema *avro.Schema
	root   *avroNode
}

// NewAvroDatum compiles s for Check and Append.
func NewAvroDatum(s *avro.Schema) (*AvroDatum, error) {
	if s == nil {
		return nil, errors.New("avro: nil schema")
	}
	c := &avroCompiler{named: map[string]*avroNode{}}
	root, err := c.compile(s.Root(), "")
	if err != nil {
		return nil, err
	}
	return &AvroDatum{schema: s, root: root}, nil
}

// Check reports whether raw is exactly one datum of the schema, checking
// structure only (lengths, varints, union branches, enum ordinals; not
// UTF-8). It does not allocate. Errors wrap ErrBadAvro.
func (d *AvroDatum) Check(raw []byte) error {
	budget := avroItemBudget(len(raw))
	rest, err := avroSkip(d.root, raw, 0, &budget)
	if err == nil && len(rest) != 0 {
		err = fmt.Errorf("%d bytes left after the datum", len(rest))
	}
	if err != nil {
		return fmt.Errorf("%w: %w", ErrBadAvro, err)
	}
	return nil
}

// Append appends the Avro binary encoding of v to dst. Unlike
// avro.Schema.AppendEncode, the output is deterministic: map entries are
// written sorted by key in a single block (Go map order is random), so
// the same value always gives the same bytes. Errors wrap ErrBadAvro; on
// error dst is returned unchanged.
func (d *AvroDatum) Append(dst []byte, v any) ([]byte, error) {
	if !d.root.hasMap {
		out, err := d.schema.AppendEncode(dst, v)
		if err != nil {
			return dst, fmt.Errorf("%w: %w", ErrBadAvro, err)
		}
		return out, nil
	}
	enc, err := d.schema.Encode(v)
	if err != nil {
		return dst, fmt.Errorf("%w: %w", ErrBadAvro, err)
	}
	budget := avroItemBudget(len(enc))
	out, rest, err := avroCanon(d.root, dst, enc, 0, &budget)
	if err == nil && len(rest) != 0 {
		err = errors.New("encoder left trailing bytes")
	}
	if err != nil {
		return dst, fmt.Errorf("%w: %w", ErrBadAvro, err)
	}
	return out, nil
}

type avroKind uint8

const (
	avroKNull avroKind = iota
	avroKFixedLen
	avroKVarint
	avroKBytes
	avroKEnum
	avroKArray
	avroKMap
	avroKRecord
	avroKUnion
)

// avroNode is a compiled schema node.
type avroNode struct {
	kind     avroKind
	n        int64 // fixed length, or enum symbol count
	elem     *avroNode
	children []*avroNode // record fields or union branches
	hasMap   bool        // a map occurs at or under this node
}

type avroCompiler struct {
	named map[string]*avroNode
}

func avroFullName(name, ns string) string {
	if strings.Contains(name, ".") || ns == "" {
		return name
	}
	return ns + "." + name
}

func (c *avroCompiler) compile(n *avro.SchemaNode, ns string) (*avroNode, error) {
	if n.Namespace != "" {
		ns = n.Namespace
	}
	switch n.Type {
	case "null":
		return &avroNode{kind: avroKNull}, nil
	case "boolean":
		return &avroNode{kind: avroKFixedLen, n: 1}, nil
	case "int", "long":
		return &avroNode{kind: avroKVarint}, nil
	case "float":
		return &avroNode{kind: avroKFixedLen, n: 4}, nil
	case "double":
		return &avroNode{kind: avroKFixedLen, n: 8}, nil
	case "string", "bytes":
		return &avroNode{kind: avroKBytes}, nil
	case "fixed":
		nd := &avroNode{kind: avroKFixedLen, n: int64(n.Size)}
		c.named[avroFullName(n.Name, ns)] = nd
		return nd, nil
	case "enum":
		nd := &avroNode{kind: avroKEnum, n: int64(len(n.Symbols))}
		c.named[avroFullName(n.Name, ns)] = nd
		return nd, nil
	case "array", "map":
		elem := n.Items
		nd := &avroNode{kind: avroKArray}
		if n.Type == "map" {
			elem, nd.kind, nd.hasMap = n.Values, avroKMap, true
		}
		if elem == nil {
			return nil, fmt.Errorf("%s without element schema", n.Type)
		}
		e, err := c.compile(elem, ns)
		if err != nil {
			return nil, err
		}
		nd.elem = e
		nd.hasMap = nd.hasMap || e.hasMap
		return nd, nil
	case "record", "error":
		nd := &avroNode{kind: avroKRecord}
		c.named[avroFullName(n.Name, ns)] = nd
		for i := range n.Fields {
			f, err := c.compile(&n.Fields[i].Type, ns)
			if err != nil {
				return nil, err
			}
			nd.children = append(nd.children, f)
			nd.hasMap = nd.hasMap || f.hasMap
		}
		return nd, nil
	case "union":
		nd := &avroNode{kind: avroKUnion}
		for i := range n.Branches {
			b, err := c.compile(&n.Branches[i], ns)
			if err != nil {
				return nil, err
			}
			nd.children = append(nd.children, b)
			nd.hasMap = nd.hasMap || b.hasMap
		}
		return nd, nil
	}
	// A reference to a named type defined earlier (possibly an enclosing
	// record, for recursive schemas; such a record's hasMap may be
	// incomplete, which only costs the map sorting under the recursion).
	for _, name := range []string{n.Type, avroFullName(n.Type, ns)} {
		if nd, ok := c.named[name]; ok {
			return nd, nil
		}
	}
	return nil, fmt.Errorf("unknown Avro type %q", n.Type)
}

const maxAvroDepth = 256

// avroItemBudget is how many array and map items a datum of n bytes may
// hold in all: one per byte plus a margin for zero-byte items.
func avroItemBudget(n int) int64 { return int64(n) + 1<<16 }

var errAvroShort = errors.New("datum truncated")

func avroReadLong(src []byte) (int64, []byte, error) {
	u, n := binary.Uvarint(src)
	if n <= 0 {
		if n == 0 {
			return 0, nil, errAvroShort
		}
		return 0, nil, errors.New("varint overflows 64 bits")
	}
	return int64(u>>1) ^ -int64(u&1), src[n:], nil
}

func avroSkipN(src []byte, n int64) ([]byte, error) {
	if n < 0 {
		return nil, fmt.Errorf("negative length %d", n)
	}
	if int64(len(src)) < n {
		return nil, errAvroShort
	}
	return src[n:], nil
}

// avroBlockCount reads an array or map block header: the item count (a
// negative count is followed by the block's byte size, which we skip).
func avroBlockCount(src []byte, budget *int64) (int64, []byte, error) {
	cnt, src, err := avroReadLong(src)
	if err != nil {
		return 0, nil, err
	}
	if cnt < 0 {
		if cnt == math.MinInt64 {
			return 0, nil, errors.New("bad block count")
		}
		cnt = -cnt
		if _, src, err = avroReadLong(src); err != nil {
			return 0, nil, err
		}
	}
	// Every item but a zero-byte one takes a byte: the budget (the datum's
	// length plus a margin for zero-byte items) bounds the items of all
	// arrays and maps of a datum, so hostile counts cannot spin.
	if cnt > *budget {
		return 0, nil, fmt.Errorf("block count %d exceeds the data", cnt)
	}
	*budget -= cnt
	return cnt, src, nil
}

// avroSkip advances past one datum of nd.
func avroSkip(nd *avroNode, src []byte, depth int, budget *int64) ([]byte, error) {
	if depth > maxAvroDepth {
		return nil, errors.New("nesting too deep")
	}
	switch nd.kind {
	case avroKNull:
		return src, nil
	case avroKFixedLen:
		return avroSkipN(src, nd.n)
	case avroKVarint:
		_, rest, err := avroReadLong(src)
		return rest, err
	case avroKBytes:
		l, rest, err := avroReadLong(src)
		if err != nil {
			return nil, err
		}
		return avroSkipN(rest, l)
	case avroKEnum:
		i, rest, err := avroReadLong(src)
		if err != nil {
			return nil, err
		}
		if i < 0 || i >= nd.n {
			return nil, fmt.Errorf("enum index %d out of range", i)
		}
		return rest, nil
	case avroKArray, avroKMap:
		for {
			cnt, rest, err := avroBlockCount(src, budget)
			if err != nil {
				return nil, err
			}
			src = rest
			if cnt == 0 {
				return src, nil
			}
			for range cnt {
				if nd.kind == avroKMap {
					l, rest, err := avroReadLong(src)
					if err != nil {
						return nil, err
					}
					if src, err = avroSkipN(rest, l); err != nil {
						return nil, err
					}
				}
				if src, err = avroSkip(nd.elem, src, depth+1, budget); err != nil {
					return nil, err
				}
			}
		}
	case avroKRecord:
		var err error
		for _, f := range nd.children {
			if src, err = avroSkip(f, src, depth+1, budget); err != nil {
				return nil, err
			}
		}
		return src, nil
	case avroKUnion:
		i, rest, err := avroReadLong(src)
		if err != nil {
			return nil, err
		}
		if i < 0 || i >= int64(len(nd.children)) {
			return nil, fmt.Errorf("union branch %d out of range", i)
		}
		return avroSkip(nd.children[i], rest, depth+1, budget)
	}
	return nil, fmt.Errorf("bad node kind %d", nd.kind)
}

// avroCanon appends the canonical form of one datum of nd from src to dst:
// arrays and maps in a single block, map entries sorted by key (stable for
// equal keys). It returns the rest of src.
func avroCanon(nd *avroNode, dst, src []byte, depth int, budget *int64) ([]byte, []byte, error) {
	if !nd.hasMap && nd.kind != avroKArray {
		rest, err := avroSkip(nd, src, depth, budget)
		if err != nil {
			return nil, nil, err
		}
		return append(dst, src[:len(src)-len(rest)]...), rest, nil
	}
	if depth > maxAvroDepth {
		return nil, nil, errors.New("nesting too deep")
	}
	switch nd.kind {
	case avroKRecord:
		var err error
		for _, f := range nd.children {
			if dst, src, err = avroCanon(f, dst, src, depth+1, budget); err != nil {
				return nil, nil, err
			}
		}
		return dst, src, nil
	case avroKUnion:
		i, rest, err := avroReadLong(src)
		if err != nil {
			return nil, nil, err
		}
		if i < 0 || i >= int64(len(nd.children)) {
			return nil, nil, fmt.Errorf("union branch %d out of range", i)
		}
		dst = append(dst, src[:len(src)-len(rest)]...)
		return avroCanon(nd.children[i], dst, rest, depth+1, budget)
	case avroKArray, avroKMap:
		type entry struct{ key, val []byte }
		var items []entry
		for {
			cnt, rest, err := avroBlockCount(src, budget)
			if err != nil {
				return nil, nil, err
			}
			src = rest
			if cnt == 0 {
				break
			}
			for range cnt {
				var e entry
				if nd.kind == avroKMap {
					l, rest, err := avroReadLong(src)
					if err != nil {
						return nil, nil, err
					}
					after, err := avroSkipN(rest, l)
					if err != nil {
						return nil, nil, err
					}
					e.key, src = rest[:l], after
				}
				if e.val, src, err = avroCanon(nd.elem, nil, src, depth+1, budget); err != nil {
					return nil, nil, err
				}
				items = append(items, e)
			}
		}
		if nd.kind == avroKMap {
			slices.SortStableFunc(items, func(a, b entry) int { return bytes.Compare(a.key, b.key) })
		}
		if len(items) > 0 {
			dst = appendAvroLong(dst, int64(len(items)))
			for _, e := range items {
				if nd.kind == avroKMap {
					dst = appendAvroBytes(dst, e.key)
				}
				dst = append(dst, e.val...)
			}
		}
		return appendAvroLong(dst, 0), src, nil
	}
	return nil, nil, fmt.Errorf("bad node kind %d", nd.kind)
}
