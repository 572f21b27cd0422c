package format

import (
	"errors"
	"fmt"
	"io"

	"github.com/parquet-go/parquet-go"
	"github.com/twmb/avro"
)

// parquetReadBatch is how many rows the reader asks parquet-go for at once.
const parquetReadBatch = 64

// parquetReader yields the records of one Parquet file.
type parquetReader struct {
	file   *parquet.File
	tree   *pqNode
	schema *Schema

	groups []parquet.RowGroup
	group  int
	rows   parquet.Rows
	buf    []parquet.Row
	n, i   int
	read   int64
	cols   [][]parquet.Value
	pos    []int
	failed error
}

// recoverParquet turns a panic inside parquet-go (which can panic on
// malformed input) into an error.
func recoverParquet(err *error) {
	if p := recover(); p != nil {
		if perr, ok := p.(error); ok {
			*err = fmt.Errorf("%w: %w", errCorrupt, perr)
			return
		}
		*err = fmt.Errorf("%w: %v", errCorrupt, p)
	}
}

func newParquetReader(ra io.ReaderAt, size int64) (_ RecordReader, err error) {
	defer recoverParquet(&err)
	f, err := parquet.OpenFile(ra, size, parquet.SkipPageIndex(true), parquet.SkipBloomFilters(true))
	if err != nil {
		return nil, fmt.Errorf("parquet: %w: %w", errCorrupt, err)
	}
	if err := checkLz4RawPages(ra, size, f); err != nil {
		return nil, fmt.Errorf("parquet: %w", err)
	}
	text, ok := f.Lookup(ParquetAvroSchemaKey)
	if !ok {
		return nil, fmt.Errorf("parquet: the file has no %q metadata; kafkas3 reads Parquet files that carry their Avro schema (as Confluent's sink and kafkas3 write them): %w",
			ParquetAvroSchemaKey, ErrNotSupported)
	}
	as, err := avro.Parse(text)
	if err != nil {
		return nil, fmt.Errorf("parquet: %w: the Avro schema in %s: %w", errCorrupt, ParquetAvroSchemaKey, err)
	}
	tree, _, err := parquetTree(as)
	if err != nil {
		return nil, err
	}
	if err := tree.checkFileSchema(f.Schema()); err != nil {
		return nil, fmt.Errorf("parquet: %w", err)
	}
	return &parquetReader{
		file:   f,
		tree:   tree,
		schema: &Schema{Avro: as, Text: text},
		groups: f.RowGroups(),
		buf:    make([]parquet.Row, parquetReadBatch),
		cols:   make([][]parquet.Value, tree.numLeaves()),
		pos:    make([]int, tree.numLeaves()),
	}, nil
}

func (r *parquetReader) Read() (rec *Record, err error) {
	if r.failed != nil {
		return nil, r.failed
	}
	defer func() {
		if err != nil && !errors.Is(err, io.EOF) {
			r.failed = err
			if r.rows != nil {
				_ = r.rows.Close()
				r.rows = nil
			}
		}
	}()
	defer recoverParquet(&err)
	for r.i >= r.n {
		if err := r.fill(); err != nil {
			return nil, err
		}
	}
	row := r.buf[r.i]
	r.i++
	r.read++
	for c := range r.cols {
		r.cols[c] = r.cols[c][:0]
		r.pos[c] = 0
	}
	for _, v := range row {
		c := v.Column()
		if c < 0 || c >= len(r.cols) {
			return nil, fmt.Errorf("parquet: row %d: %w: column index %d", r.read-1, errCorrupt, c)
		}
		r.cols[c] = append(r.cols[c], v)
	}
	a := assembler{cols: r.cols, pos: r.pos}
	native, err := a.read(r.tree, 0, 0)
	if err != nil {
		return nil, fmt.Errorf("parquet: row %d: %w", r.read-1, err)
	}
	for c := range r.cols {
		if r.pos[c] != len(r.cols[c]) {
			return nil, fmt.Errorf("parquet: row %d: %w: column %d has %d values, the record used %d", r.read-1, errCorrupt, c, len(r.cols[c]), r.pos[c])
		}
	}
	raw, err := r.schema.Avro.Encode(native)
	if err != nil {
		return nil, fmt.Errorf("parquet: row %d does not fit the file's Avro schema: %w", r.read-1, err)
	}
	return &Record{
		Value:      raw,
		ValueTyped: &Typed{Schema: r.schema, Raw: raw, Native: native},
	}, nil
}

// fill reads the next batch of rows, moving to the next row group as
// needed; it returns io.EOF after the last.
func (r *parquetReader) fill() error {
	for {
		if r.rows == nil {
			if r.group >= len(r.groups) {
				return io.EOF
			}
			r.rows = r.groups[r.group].Rows()
			r.group++
		}
		n, err := r.rows.ReadRows(r.buf)
		r.n, r.i = n, 0
		if errors.Is(err, io.EOF) || (err == nil && n == 0) {
			_ = r.rows.Close()
			r.rows = nil
			if n > 0 {
				return nil
			}
			continue
		}
		if err != nil {
			return fmt.Errorf("parquet: reading rows: %w: %w", errCorrupt, err)
		}
		return nil
	}
}
