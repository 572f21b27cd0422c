package format

import (
	"bytes"
	"errors"
	"fmt"
	"io"
	"os"
	"strings"

	"github.com/parquet-go/parquet-go"
	"github.com/parquet-go/parquet-go/compress"
)

// Parquet config keys and metadata; errors name them.
const (
	// KeyParquetCodec is Confluent's parquet.codec setting.
	KeyParquetCodec = "parquet.codec"
	// ParquetAvroSchemaKey is the file key-value metadata entry holding the
	// Avro schema JSON, as parquet-avro (and so Confluent's sink) writes it.
	ParquetAvroSchemaKey = "parquet.avro.schema"
	// parquetCreatedBy is written as the file's created_by. It is fixed so
	// that the same records give byte-identical files.
	parquetCreatedBy = "kafkas3 (parquet-go v0.32.0)"
)

// Parquet defaults: the row group bounds keep the writer's memory bounded
// (parquet-go buffers a whole row group before writing it out), and the
// read bound keeps NewReader from buffering an unbounded object.
const (
	DefaultParquetCodec           = "snappy"
	DefaultParquetRowGroupRecords = 100_000
	DefaultParquetRowGroupBytes   = 32 << 20
	DefaultParquetMaxReadBytes    = 1 << 30
)

// parquetCodec is a parquet.codec value kafkas3 writes, with Confluent's
// extension for it.
type parquetCodec struct {
	name, ext string
	codec     compress.Codec
}

// parquetCodecs lists the parquet.codec values kafkas3 writes.
func parquetCodecs() []parquetCodec {
	return []parquetCodec{
		{"none", ".parquet", &parquet.Uncompressed},
		{"snappy", ".snappy.parquet", &parquet.Snappy},
		{"gzip", ".gz.parquet", &parquet.Gzip},
		{"zstd", ".zstd.parquet", &parquet.Zstd},
		{"lz4_raw", ".lz4raw.parquet", &parquet.Lz4Raw},
		{"brotli", ".br.parquet", &parquet.Brotli},
	}
}

// ParquetCodecs returns the parquet.codec values NewParquet accepts.
func ParquetCodecs() []string {
	names := make([]string, len(parquetCodecs()))
	for i, c := range parquetCodecs() {
		names[i] = c.name
	}
	return names
}

// ParquetConfig configures the Parquet format.
type ParquetConfig struct {
	// Codec is parquet.codec: none, snappy, gzip, zstd, lz4_raw or brotli
	// (case-insensitive). Empty means snappy, Confluent's default.
	// Confluent's lz4 (Hadoop-framed LZ4) and lzo are not supported.
	Codec string
	// RowGroupRecords bounds the records in one row group; 0 means
	// DefaultParquetRowGroupRecords.
	RowGroupRecords int64
	// RowGroupBytes bounds the estimated uncompressed bytes buffered for one
	// row group; 0 means DefaultParquetRowGroupBytes. A row group is written
	// out as soon as either bound is reached.
	RowGroupBytes int64
	// MaxReadBytes bounds how much of an object NewReader buffers in memory
	// when its io.Reader is not also an io.ReaderAt with a Size method;
	// 0 means DefaultParquetMaxReadBytes.
	MaxReadBytes int64
	// SpoolDir holds the temp files in which a row group's encoded pages
	// wait until the row group is written ("" means os.TempDir()). Keeping
	// them on disk instead of the heap keeps memory flat with many open
	// Parquet files; the files are unlinked at once, so nothing is left
	// behind if the process is killed. The output bytes do not depend on it.
	SpoolDir string
}

// spoolBuffers is a parquet.BufferPool of unlinked temp files.
type spoolBuffers struct{ dir string }

func (b spoolBuffers) GetBuffer() io.ReadWriteSeeker {
	f, err := os.CreateTemp(b.dir, "kafkas3-parquet-*")
	if err != nil {
		return errBuffer{err}
	}
	if err := os.Remove(f.Name()); err != nil {
		_ = f.Close()
		return errBuffer{err}
	}
	return f
}

func (b spoolBuffers) PutBuffer(buf io.ReadWriteSeeker) {
	if f, ok := buf.(*os.File); ok {
		_ = f.Close()
	}
}

// errBuffer fails every call with the error that kept a spool file from
// being made.
type errBuffer struct{ err error }

func (e errBuffer) Read([]byte) (int, error)       { return 0, e.err }
func (e errBuffer) Write([]byte) (int, error)      { return 0, e.err }
func (e errBuffer) Seek(int64, int) (int64, error) { return 0, e.err }

// Parquet is Confluent's io.confluent.connect.s3.format.parquet.ParquetFormat:
// one Parquet file per object, its schema derived from the Avro schema of
// the records' values (Record.ValueTyped), the Avro schema kept in the
// file's key-value metadata under "parquet.avro.schema".
type Parquet struct {
	codecName       string
	ext             string
	codec           compress.Codec
	rowGroupRecords int64
	rowGroupBytes   int64
	maxReadBytes    int64
	spoolDir        string
}

// NewParquet returns the Parquet format cfg describes (a *Parquet). A codec kafkas3 does
// not write gives an error naming parquet.codec, the value and the allowed
// values; it wraps ErrNotSupported for Confluent codecs kafkas3 lacks (lz4,
// lzo) and ErrInvalidConfig otherwise.
func NewParquet(cfg ParquetConfig) (Format, error) {
	name := strings.ToLower(strings.TrimSpace(cfg.Codec))
	if name == "" {
		name = DefaultParquetCodec
	}
	allowed := strings.Join(ParquetCodecs(), ", ")
	p := &Parquet{
		rowGroupRecords: cfg.RowGroupRecords,
		rowGroupBytes:   cfg.RowGroupBytes,
		maxReadBytes:    cfg.MaxReadBytes,
		spoolDir:        cfg.SpoolDir,
	}
	for _, c := range parquetCodecs() {
		if c.name == name {
			p.codecName, p.ext, p.codec = c.name, c.ext, c.codec
		}
	}
	switch {
	case p.codec != nil:
	case name == "lz4":
		return nil, fmt.Errorf("%s %q (Hadoop-framed LZ4) is %w; use lz4_raw; allowed: %s",
			KeyParquetCodec, cfg.Codec, ErrNotSupported, allowed)
	case name == "lzo":
		return nil, fmt.Errorf("%s %q is %w (Confluent cannot write it either); allowed: %s",
			KeyParquetCodec, cfg.Codec, ErrNotSupported, allowed)
	default:
		return nil, fmt.Errorf("%w: %s %q; allowed: %s", ErrInvalidConfig, KeyParquetCodec, cfg.Codec, allowed)
	}
	switch {
	case p.rowGroupRecords < 0:
		return nil, fmt.Errorf("%w: parquet row group records %d must not be negative", ErrInvalidConfig, p.rowGroupRecords)
	case p.rowGroupBytes < 0:
		return nil, fmt.Errorf("%w: parquet row group bytes %d must not be negative", ErrInvalidConfig, p.rowGroupBytes)
	case p.maxReadBytes < 0:
		return nil, fmt.Errorf("%w: parquet max read bytes %d must not be negative", ErrInvalidConfig, p.maxReadBytes)
	}
	if p.rowGroupRecords == 0 {
		p.rowGroupRecords = DefaultParquetRowGroupRecords
	}
	if p.rowGroupBytes == 0 {
		p.rowGroupBytes = DefaultParquetRowGroupBytes
	}
	if p.maxReadBytes == 0 {
		p.maxReadBytes = DefaultParquetMaxReadBytes
	}
	return p, nil
}

// Codec returns the parquet.codec value in use ("snappy", "none", ...).
func (p *Parquet) Codec() string { return p.codecName }

// Extension returns Confluent's extension for the codec: ".snappy.parquet",
// ".gz.parquet", ".zstd.parquet", ".lz4raw.parquet", ".br.parquet", or
// ".parquet" for none.
func (p *Parquet) Extension() string { return p.ext }

// NewWriter starts a Parquet file on w. The file's schema is that of the
// first record's ValueTyped. Records are buffered per row group; Close
// writes the last row group and the footer. A writer closed without any
// record writes nothing (a Parquet file needs a schema).
func (p *Parquet) NewWriter(w io.Writer) (RecordWriter, error) {
	if w == nil {
		return nil, errors.New("parquet: nil io.Writer")
	}
	return &parquetWriter{p: p, out: w}, nil
}

// parquetWriter writes one Parquet file.
type parquetWriter struct {
	p      *Parquet
	out    io.Writer
	schema *Schema // the file's schema, from the first record
	tree   *pqNode // derived from schema
	w      *parquet.GenericWriter[any]
	rows   int64 // records in the current row group
	bytes  int64 // estimated bytes in the current row group
	total  int64
	closed bool
	failed error
	rowBuf []parquet.Row
	cols   [][]parquet.Value
}

func (w *parquetWriter) Write(r *Record) error {
	if w.closed {
		return ErrClosed
	}
	if w.failed != nil {
		return fmt.Errorf("parquet: writer failed earlier: %w", w.failed)
	}
	if r == nil {
		return errors.New("parquet: nil record")
	}
	t := r.ValueTyped
	if t == nil || t.Schema == nil || t.Schema.Avro == nil {
		if r.Value == nil {
			return fmt.Errorf("parquet: %s-%d offset %d: %w", r.Topic, r.Partition, r.Offset, ErrNullValue)
		}
		return fmt.Errorf("parquet: %s-%d offset %d has no schema: the Parquet format needs schema-aware values; set value.converter to io.confluent.connect.avro.AvroConverter (or JsonConverter with value.converter.schemas.enable=true)",
			r.Topic, r.Partition, r.Offset)
	}
	if w.schema == nil {
		if err := w.open(t.Schema); err != nil {
			return err
		}
	} else if !sameSchema(w.schema, t.Schema) {
		return fmt.Errorf("parquet: %s-%d offset %d: schema id %d version %d, file has id %d version %d: %w",
			r.Topic, r.Partition, r.Offset, t.Schema.ID, t.Schema.Version, w.schema.ID, w.schema.Version, ErrSchemaChanged)
	}
	native := t.Native
	if native == nil {
		if t.Raw == nil {
			return fmt.Errorf("parquet: %s-%d offset %d: typed value has neither Native nor Raw", r.Topic, r.Partition, r.Offset)
		}
		if _, err := t.Schema.Avro.Decode(t.Raw, &native); err != nil {
			return fmt.Errorf("parquet: %s-%d offset %d: decoding the Avro value: %w", r.Topic, r.Partition, r.Offset, err)
		}
	}
	for i := range w.cols {
		w.cols[i] = w.cols[i][:0]
	}
	size, err := w.tree.shred(native, w.cols)
	if err != nil {
		return fmt.Errorf("parquet: %s-%d offset %d: %w", r.Topic, r.Partition, r.Offset, err)
	}
	row := w.rowBuf[0][:0]
	for _, c := range w.cols {
		row = append(row, c...)
	}
	w.rowBuf[0] = row
	if _, err := w.w.WriteRows(w.rowBuf); err != nil {
		w.failed = err
		return fmt.Errorf("parquet: %s-%d offset %d: %w", r.Topic, r.Partition, r.Offset, err)
	}
	w.rows++
	w.total++
	w.bytes += size
	if w.rows >= w.p.rowGroupRecords || w.bytes >= w.p.rowGroupBytes {
		if err := w.w.Flush(); err != nil {
			w.failed = err
			return fmt.Errorf("parquet: writing a row group: %w", err)
		}
		w.rows, w.bytes = 0, 0
	}
	return nil
}

// open derives the Parquet schema from s and starts the file.
func (w *parquetWriter) open(s *Schema) error {
	tree, name, err := parquetTree(s.Avro)
	if err != nil {
		return err
	}
	text := s.Text
	if text == "" {
		text = s.Avro.String()
	}
	cfg := parquet.DefaultWriterConfig()
	cfg.CreatedBy = parquetCreatedBy
	cfg.Compression = w.p.codec
	cfg.MaxRowsPerRowGroup = w.p.rowGroupRecords
	cfg.KeyValueMetadata = map[string]string{ParquetAvroSchemaKey: text}
	cfg.ColumnPageBuffers = spoolBuffers{dir: w.p.spoolDir}
	cfg.Schema = parquet.NewSchema(name, tree.node)
	w.w = parquet.NewGenericWriter[any](w.out, cfg)
	w.schema, w.tree = s, tree
	w.cols = make([][]parquet.Value, tree.numLeaves())
	w.rowBuf = make([]parquet.Row, 1)
	return nil
}

func (w *parquetWriter) Close() error {
	if w.closed {
		return nil
	}
	w.closed = true
	if w.w == nil {
		return nil
	}
	if w.failed != nil {
		return fmt.Errorf("parquet: writer failed earlier: %w", w.failed)
	}
	if err := w.w.Close(); err != nil {
		return fmt.Errorf("parquet: closing the file: %w", err)
	}
	return nil
}

// sameSchema reports whether a and b are the same schema: the same
// pointer, the same registry id, or the same schema JSON.
func sameSchema(a, b *Schema) bool {
	if a == b {
		return true
	}
	if a.ID != 0 && b.ID != 0 {
		return a.ID == b.ID
	}
	return a.Avro.String() == b.Avro.String()
}

// NewReader reads a Parquet file written by NewWriter (or by any writer
// that stores the Avro schema under "parquet.avro.schema" and lays out
// nested data as Parquet's LIST and MAP specifications say). Parquet needs
// random access to its footer: when r is an io.ReaderAt with a Size method
// (*bytes.Reader, *os.File after Stat, ...) it is read in place, otherwise
// the whole object is buffered in memory, up to MaxReadBytes.
func (p *Parquet) NewReader(r io.Reader) (RecordReader, error) {
	ra, size, err := p.readerAt(r)
	if err != nil {
		return nil, err
	}
	return newParquetReader(ra, size)
}

type sizedReaderAt interface {
	io.ReaderAt
	Size() int64
}

func (p *Parquet) readerAt(r io.Reader) (io.ReaderAt, int64, error) {
	if r == nil {
		return nil, 0, errors.New("parquet: nil io.Reader")
	}
	if s, ok := r.(sizedReaderAt); ok {
		return s, s.Size(), nil
	}
	b, err := io.ReadAll(io.LimitReader(r, p.maxReadBytes+1))
	if err != nil {
		return nil, 0, fmt.Errorf("parquet: reading the object: %w", err)
	}
	if int64(len(b)) > p.maxReadBytes {
		return nil, 0, fmt.Errorf("parquet: object larger than the %d bytes the reader buffers", p.maxReadBytes)
	}
	return bytes.NewReader(b), int64(len(b)), nil
}
