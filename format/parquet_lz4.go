package format

import (
	"bytes"
	"fmt"
	"io"

	"github.com/parquet-go/parquet-go"
	"github.com/parquet-go/parquet-go/encoding/thrift"
	pqformat "github.com/parquet-go/parquet-go/format"
	"github.com/pierrec/lz4/v4"
)

// maxParquetPageBytes bounds the uncompressed size of one page the reader
// accepts.
const maxParquetPageBytes = 1 << 30

// checkLz4RawPages decompresses every LZ4_RAW page of f into a buffer of
// the size its header declares, and fails on the first that does not
// decompress. parquet-go's LZ4_RAW decoder retries a failing block with an
// ever larger buffer, so a corrupt page would exhaust memory instead of
// returning an error; this check runs first so it never sees one.
func checkLz4RawPages(ra io.ReaderAt, size int64, f *parquet.File) error {
	md := f.Metadata()
	for g := range md.RowGroups {
		for c := range md.RowGroups[g].Columns {
			m := &md.RowGroups[g].Columns[c].MetaData
			if m.Codec != pqformat.Lz4Raw {
				continue
			}
			start := m.DataPageOffset
			if m.DictionaryPageOffset > 0 && m.DictionaryPageOffset < start {
				start = m.DictionaryPageOffset
			}
			if start < 0 || m.TotalCompressedSize < 0 || m.TotalCompressedSize > size || start > size-m.TotalCompressedSize {
				return fmt.Errorf("%w: row group %d column %d: chunk [%d, +%d) outside the %d-byte file",
					errCorrupt, g, c, start, m.TotalCompressedSize, size)
			}
			chunk := make([]byte, m.TotalCompressedSize)
			if _, err := ra.ReadAt(chunk, start); err != nil {
				return fmt.Errorf("%w: row group %d column %d: %w", errCorrupt, g, c, err)
			}
			if err := checkLz4RawChunk(chunk); err != nil {
				return fmt.Errorf("row group %d column %d: %w", g, c, err)
			}
		}
	}
	return nil
}

func checkLz4RawChunk(chunk []byte) error {
	var proto thrift.CompactProtocol
	for len(chunk) > 0 {
		br := bytes.NewReader(chunk)
		var h pqformat.PageHeader
		if err := thrift.NewDecoder(proto.NewReader(br)).Decode(&h); err != nil {
			return fmt.Errorf("%w: page header: %w", errCorrupt, err)
		}
		chunk = chunk[len(chunk)-br.Len():]
		if h.CompressedPageSize < 0 || int(h.CompressedPageSize) > len(chunk) ||
			h.UncompressedPageSize < 0 || h.UncompressedPageSize > maxParquetPageBytes {
			return fmt.Errorf("%w: page sizes %d/%d", errCorrupt, h.CompressedPageSize, h.UncompressedPageSize)
		}
		body := chunk[:h.CompressedPageSize]
		chunk = chunk[h.CompressedPageSize:]
		uncompressed := int(h.UncompressedPageSize)
		if v2, ok := h.DataPageHeaderV2.Get(); ok {
			levels := int(v2.DefinitionLevelsByteLength) + int(v2.RepetitionLevelsByteLength)
			if v2.DefinitionLevelsByteLength < 0 || v2.RepetitionLevelsByteLength < 0 || levels > len(body) || levels > uncompressed {
				return fmt.Errorf("%w: page level sizes", errCorrupt)
			}
			if compressed, set := v2.IsCompressed.Get(); set && !compressed {
				continue
			}
			body, uncompressed = body[levels:], uncompressed-levels
		}
		if len(body) == 0 && uncompressed == 0 {
			continue
		}
		n, err := lz4.UncompressBlock(body, make([]byte, uncompressed))
		if err != nil || n != uncompressed {
			return fmt.Errorf("%w: LZ4_RAW page does not decompress to its declared %d bytes", errCorrupt, uncompressed)
		}
	}
	return nil
}
