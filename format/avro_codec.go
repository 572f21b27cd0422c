package format

import (
	"bytes"
	"compress/bzip2"
	"encoding/binary"
	"errors"
	"fmt"
	"hash/crc32"
	"io"

	dsbzip2 "github.com/dsnet/compress/bzip2"
	"github.com/klauspost/compress/flate"
	"github.com/klauspost/compress/snappy"
	"github.com/klauspost/compress/zstd"
)

// This file holds the block codecs of Avro container files (avro.codec):
// the compressors the writer uses and the decompression the reader does.

type avroCompressor interface {
	compress(dst, src []byte) ([]byte, error)
	close()
}

type avroNullComp struct{}

func (avroNullComp) compress(dst, src []byte) ([]byte, error) { return append(dst, src...), nil }
func (avroNullComp) close()                                   {}

type avroDeflateComp struct {
	fw  *flate.Writer
	out *bytes.Buffer
}

func (c *avroDeflateComp) compress(dst, src []byte) ([]byte, error) {
	c.out.Reset()
	c.fw.Reset(c.out)
	if _, err := c.fw.Write(src); err != nil {
		return dst, err
	}
	if err := c.fw.Close(); err != nil {
		return dst, err
	}
	return append(dst, c.out.Bytes()...), nil
}
func (c *avroDeflateComp) close() {}

type avroSnappyComp struct{}

func (avroSnappyComp) compress(dst, src []byte) ([]byte, error) {
	dst = append(dst, snappy.Encode(nil, src)...)
	return binary.BigEndian.AppendUint32(dst, crc32.ChecksumIEEE(src)), nil
}
func (avroSnappyComp) close() {}

type avroBzip2Comp struct{ out bytes.Buffer }

func (c *avroBzip2Comp) compress(dst, src []byte) ([]byte, error) {
	c.out.Reset()
	zw, err := dsbzip2.NewWriter(&c.out, &dsbzip2.WriterConfig{Level: dsbzip2.DefaultCompression})
	if err != nil {
		return dst, err
	}
	if _, err := zw.Write(src); err != nil {
		return dst, err
	}
	if err := zw.Close(); err != nil {
		return dst, err
	}
	return append(dst, c.out.Bytes()...), nil
}
func (c *avroBzip2Comp) close() {}

type avroZstdComp struct{ enc *zstd.Encoder }

func (c *avroZstdComp) compress(dst, src []byte) ([]byte, error) {
	return c.enc.EncodeAll(src, dst), nil
}
func (c *avroZstdComp) close() { _ = c.enc.Close() }

func newAvroCompressor(cfg AvroConfig) (avroCompressor, error) {
	switch cfg.Codec {
	case AvroCodecNull:
		return avroNullComp{}, nil
	case AvroCodecDeflate:
		level := cfg.Level
		if level == -1 {
			level = 6
		}
		out := new(bytes.Buffer)
		fw, err := flate.NewWriter(out, level)
		if err != nil {
			return nil, err
		}
		return &avroDeflateComp{fw: fw, out: out}, nil
	case AvroCodecSnappy:
		return avroSnappyComp{}, nil
	case AvroCodecBzip2:
		return &avroBzip2Comp{}, nil
	case AvroCodecZstandard:
		level := cfg.Level
		if level <= 0 {
			level = 3
		}
		enc, err := zstd.NewWriter(nil, zstd.WithEncoderConcurrency(1),
			zstd.WithEncoderLevel(zstd.EncoderLevelFromZstd(level)))
		if err != nil {
			return nil, err
		}
		return &avroZstdComp{enc: enc}, nil
	}
	return nil, fmt.Errorf("%w: %s %v", ErrInvalidConfig, KeyAvroCodec, cfg.Codec)
}

// avroDecompress decompresses one block of codec, refusing output over max.
func avroDecompress(codec string, src []byte, max int) ([]byte, error) {
	limited := func(r io.Reader) ([]byte, error) {
		b, err := io.ReadAll(io.LimitReader(r, int64(max)+1))
		if err != nil {
			return nil, err
		}
		if len(b) > max {
			return nil, fmt.Errorf("block decompresses to over %d bytes", max)
		}
		return b, nil
	}
	switch codec {
	case "null":
		return src, nil
	case "deflate":
		fr := flate.NewReader(bytes.NewReader(src))
		defer fr.Close()
		return limited(fr)
	case "snappy":
		if len(src) < 4 {
			return nil, errors.New("snappy block shorter than its checksum")
		}
		body, sum := src[:len(src)-4], binary.BigEndian.Uint32(src[len(src)-4:])
		n, err := snappy.DecodedLen(body)
		if err != nil {
			return nil, err
		}
		if n > max {
			return nil, fmt.Errorf("block decompresses to over %d bytes", max)
		}
		out, err := snappy.Decode(nil, body)
		if err != nil {
			return nil, err
		}
		if crc32.ChecksumIEEE(out) != sum {
			return nil, errors.New("snappy block checksum mismatch")
		}
		return out, nil
	case "bzip2":
		return limited(bzip2.NewReader(bytes.NewReader(src)))
	case "zstandard":
		dec, err := zstd.NewReader(nil, zstd.WithDecoderConcurrency(1), zstd.WithDecoderMaxMemory(uint64(max)))
		if err != nil {
			return nil, err
		}
		defer dec.Close()
		return dec.DecodeAll(src, nil)
	}
	return nil, fmt.Errorf("unsupported avro.codec %q", codec)
}
