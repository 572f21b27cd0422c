package format

import (
	"crypto/sha256"
	"encoding/binary"
	"errors"
	"fmt"
	"io"
)

// This file holds the Avro container file writer.

// avroMagic opens every Avro container file.
const avroMagic = "Obj\x01"

// avroSync derives a file's sync marker from its codec and schema text.
func avroSync(codec AvroCodec, text string) [16]byte {
	h := sha256.New()
	h.Write([]byte("kafkas3 avro sync\x00"))
	h.Write([]byte(codec.String()))
	h.Write([]byte{0})
	h.Write([]byte(text))
	var s [16]byte
	copy(s[:], h.Sum(nil))
	return s
}

func appendAvroLong(b []byte, v int64) []byte {
	return binary.AppendUvarint(b, uint64(v<<1)^uint64(v>>63))
}

func appendAvroBytes(b []byte, p []byte) []byte {
	b = appendAvroLong(b, int64(len(p)))
	return append(b, p...)
}

func (f *avroFormat) NewWriter(w io.Writer) (RecordWriter, error) {
	if w == nil {
		return nil, errors.New("avro: nil writer")
	}
	return &avroWriter{cfg: f.cfg, w: w}, nil
}

type avroWriter struct {
	cfg     AvroConfig
	w       io.Writer
	schema  *Schema
	datum   *AvroDatum
	sync    [16]byte
	comp    avroCompressor
	block   []byte
	count   int
	out     []byte // compressed block scratch
	blk     []byte // framed block scratch
	err     error  // sticky I/O or compression error
	closed  bool
	started bool
}

func avroWhere(r *Record) string {
	return fmt.Sprintf("topic %q partition %d offset %d", r.Topic, r.Partition, r.Offset)
}

func (aw *avroWriter) Write(r *Record) error {
	if aw.closed {
		return ErrClosed
	}
	if aw.err != nil {
		return aw.err
	}
	if r == nil {
		return errors.New("avro: nil record")
	}
	t := r.ValueTyped
	if t == nil {
		if r.Value == nil {
			return fmt.Errorf("avro: %s: %w", avroWhere(r), ErrNullValue)
		}
		return fmt.Errorf("avro: %s: %w", avroWhere(r), ErrNoSchema)
	}
	if t.Schema == nil || t.Schema.Avro == nil {
		return fmt.Errorf("avro: %s: typed value without a parsed schema: %w", avroWhere(r), ErrNoSchema)
	}
	if !aw.started {
		if err := aw.start(t.Schema); err != nil {
			return err
		}
	} else if !SameAvroSchema(aw.schema, t.Schema) {
		return fmt.Errorf("avro: %s: schema id %d version %d, file has id %d version %d: %w",
			avroWhere(r), t.Schema.ID, t.Schema.Version, aw.schema.ID, aw.schema.Version, ErrSchemaChanged)
	}
	if t.Raw != nil {
		if err := aw.datum.Check(t.Raw); err != nil {
			return fmt.Errorf("avro: %s: value is not one datum of schema id %d: %w", avroWhere(r), t.Schema.ID, err)
		}
		aw.block = append(aw.block, t.Raw...)
	} else {
		out, err := aw.datum.Append(aw.block, t.Native)
		if err != nil {
			return fmt.Errorf("avro: %s: encoding under schema id %d: %w", avroWhere(r), aw.schema.ID, err)
		}
		aw.block = out
	}
	aw.count++
	if len(aw.block) >= aw.cfg.BlockBytes || aw.count >= aw.cfg.BlockRecords {
		return aw.flush()
	}
	return nil
}

func (aw *avroWriter) start(s *Schema) error {
	datum, err := NewAvroDatum(s.Avro)
	if err != nil {
		return fmt.Errorf("avro: schema id %d: %w", s.ID, err)
	}
	comp, err := newAvroCompressor(aw.cfg)
	if err != nil {
		return fmt.Errorf("avro: %w", err)
	}
	text := avroSchemaText(s)
	aw.schema, aw.datum, aw.comp, aw.started = s, datum, comp, true
	aw.sync = avroSync(aw.cfg.Codec, text)
	h := append([]byte(nil), avroMagic...)
	h = appendAvroLong(h, 2)
	h = appendAvroBytes(h, []byte("avro.codec"))
	h = appendAvroBytes(h, []byte(aw.cfg.Codec.String()))
	h = appendAvroBytes(h, []byte("avro.schema"))
	h = appendAvroBytes(h, []byte(text))
	h = appendAvroLong(h, 0)
	h = append(h, aw.sync[:]...)
	return aw.write(h)
}

func (aw *avroWriter) write(p []byte) error {
	if _, err := aw.w.Write(p); err != nil {
		aw.err = fmt.Errorf("avro: write: %w", err)
		return aw.err
	}
	return nil
}

func (aw *avroWriter) flush() error {
	if aw.count == 0 {
		return nil
	}
	body, err := aw.comp.compress(aw.out[:0], aw.block)
	if err != nil {
		aw.err = fmt.Errorf("avro: compress %s block: %w", aw.cfg.Codec, err)
		return aw.err
	}
	blk := appendAvroLong(aw.blk[:0], int64(aw.count))
	blk = appendAvroBytes(blk, body)
	blk = append(blk, aw.sync[:]...)
	aw.out, aw.blk = body[:0], blk[:0]
	aw.block = aw.block[:0]
	aw.count = 0
	return aw.write(blk)
}

func (aw *avroWriter) Close() error {
	if aw.closed {
		return nil
	}
	aw.closed = true
	var err error
	if aw.err == nil {
		err = aw.flush()
	} else {
		err = aw.err
	}
	if aw.comp != nil {
		aw.comp.close()
	}
	return err
}
