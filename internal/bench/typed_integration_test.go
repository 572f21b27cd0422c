//go:build integration

package bench

import (
	"bytes"
	"encoding/binary"
	"errors"
	"fmt"
	"io"
	"math"
	"regexp"
	"strconv"
	"strings"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/s3"
	"github.com/twmb/avro"

	"github.com/kafkas3/kafkas3/format"
	"github.com/kafkas3/kafkas3/internal/srfake"
)

// Typed formats: a topic of Avro records in the Confluent wire format,
// archived through the AvroConverter as Avro (the fast path: the records'
// Avro bytes are appended to the file unchanged) and as Parquet.
const (
	defaultAvroBytes = 256 << 20 // Avro data set: 256 MiB of values
	avroBytesEnv     = "KAFKAS3_BENCH_AVRO_BYTES"
	avroTopic        = "bench_avro"

	fmtAvro        = "avro"
	fmtAvroSnappy  = "avro+snappy"
	fmtParquet     = "parquet+snappy"
	avroConverter  = "io.confluent.connect.avro.AvroConverter"
	wireHeaderSize = 5 // magic byte + 4-byte schema id
)

// eventSchema is the Avro schema of the kindAvro data set: scalars, a
// logical type, a nullable union and a long text field, so Parquet gets
// several column types.
const eventSchema = `{"type":"record","name":"Event","namespace":"kafkas3.bench","fields":[` +
	`{"name":"id","type":"long"},` +
	`{"name":"user","type":"string"},` +
	`{"name":"event","type":"string"},` +
	`{"name":"ts","type":{"type":"long","logicalType":"timestamp-millis"}},` +
	`{"name":"amount","type":"double"},` +
	`{"name":"country","type":["null","string"],"default":null},` +
	`{"name":"text","type":"string"}]}`

// typedFormat reports whether f is written through the AvroConverter.
func typedFormat(f string) bool {
	return f == fmtAvro || f == fmtAvroSnappy || f == fmtParquet
}

// avroValue appends record i of a kindAvro data set: the wire header, then
// the Avro binary encoding of an eventSchema record whose text field is
// sized so the whole value is exactly ValueSize bytes.
func (g *generator) avroValue(dst []byte, i int64) []byte {
	start := len(dst)
	dst = append(dst, 0)
	dst = binary.BigEndian.AppendUint32(dst, g.d.SchemaID)
	dst = binary.AppendVarint(dst, i) // Avro long: zigzag varint, as encoding/binary
	var num [24]byte
	user := strconv.AppendInt(append(num[:0], "user-"...), i%9973, 10)
	dst = appendAvroBytes(dst, user)
	dst = appendAvroBytes(dst, []byte(g.words[i%int64(len(g.words))]))
	dst = binary.AppendVarint(dst, 1_700_000_000_000+i)
	dst = binary.LittleEndian.AppendUint64(dst, math.Float64bits(float64(i%100000)/100))
	if i%4 == 0 {
		dst = binary.AppendVarint(dst, 0) // union branch null
	} else {
		dst = binary.AppendVarint(dst, 1)
		dst = appendAvroBytes(dst, []byte(g.words[(i/7)%int64(len(g.words))]))
	}
	room := g.d.ValueSize - (len(dst) - start)
	body := g.bodies[(uint64(i)*2654435761)%bodyPool]
	for k := 1; k <= 3; k++ { // length prefix of k bytes
		n := room - k
		if n >= 0 && varintLen(int64(n)) == k {
			return append(binary.AppendVarint(dst, int64(n)), body[:n]...)
		}
	}
	// Unreachable for ValueSize >= 128: the fields above take under 80 bytes.
	return append(binary.AppendVarint(dst, 0), make([]byte, room-1)...)
}

func appendAvroBytes(dst, b []byte) []byte {
	return append(binary.AppendVarint(dst, int64(len(b))), b...)
}

func varintLen(n int64) int {
	var b [binary.MaxVarintLen64]byte
	return binary.PutVarint(b[:], n)
}

// checkEventValue decodes a wire-format value of record i under schema and
// checks its header and id field.
func checkEventValue(schema *avro.Schema, id uint32, v []byte, i int64) error {
	if len(v) < wireHeaderSize || v[0] != 0 || binary.BigEndian.Uint32(v[1:]) != id {
		return fmt.Errorf("record %d: bad wire header % x", i, v[:min(len(v), wireHeaderSize)])
	}
	var rec any
	rest, err := schema.Decode(v[wireHeaderSize:], &rec)
	if err != nil {
		return fmt.Errorf("record %d: %w", i, err)
	}
	if len(rest) != 0 {
		return fmt.Errorf("record %d: %d bytes after the datum", i, len(rest))
	}
	return checkEventID(rec, i)
}

func checkEventID(rec any, i int64) error {
	m, ok := rec.(map[string]any)
	if !ok {
		return fmt.Errorf("record %d: decoded %T, want a record", i, rec)
	}
	if got, ok := m["id"].(int64); !ok || got != i {
		return fmt.Errorf("record %d: id field is %v (%T)", i, m["id"], m["id"])
	}
	return nil
}

// typedRows loads the Avro topic and measures the raw consume of it, the
// Avro sink (fast path) with the null and snappy codecs and the Parquet
// sink, with ratios against that topic's raw consume rate. It returns the
// Avro data set (whose archives the restore rows restore).
func (e *env) typedRows() dataset {
	d := e.avroSet(envSize(e.b, avroBytesEnv, defaultAvroBytes))
	raw1 := e.consumeRow("raw consume of the Avro topic (1 of 2)", d)
	limit1 := e.limitRow("limit: consume + aws-sdk-go-v2 upload of the Avro topic (1 of 2)", d, mainFlushSize, 0, false)
	rows := []*row{
		e.sinkRow("sink avro (null codec) --once, AvroConverter fast path", d, fmtAvro, mainFlushSize, 0, false),
		e.sinkRow("sink avro (snappy codec) --once, AvroConverter fast path", d, fmtAvroSnappy, mainFlushSize, 0, false),
		e.sinkRow("sink parquet (snappy) --once, AvroConverter", d, fmtParquet, mainFlushSize, 0, false),
	}
	limit2 := e.limitRow("limit: consume + aws-sdk-go-v2 upload of the Avro topic (2 of 2)", d, mainFlushSize, 0, false)
	raw2 := e.consumeRow("raw consume of the Avro topic (2 of 2)", d)
	rate := (raw1.rate() + raw2.rate()) / 2
	limit := meanBaseline("consume + upload of the Avro topic (mean)", limit1, limit2)
	for _, r := range rows {
		r.setRatio(rate, "raw consume of the Avro topic (mean)")
		r.limit = limit
	}
	return d
}

// avroSet starts the in-process Schema Registry, registers eventSchema and
// creates and loads the Avro topic with n bytes of values.
func (e *env) avroSet(n int64) dataset {
	reg, err := srfake.Start(srfake.Config{})
	if err != nil {
		e.b.Fatal(err)
	}
	e.b.Cleanup(func() { _ = reg.Close() })
	e.registryURL = reg.URL()
	id, _, err := reg.Register(avroTopic+"-value", "AVRO", eventSchema)
	if err != nil {
		e.b.Fatalf("register %s-value: %v", avroTopic, err)
	}
	d := dataset{Kind: kindAvro, Topic: avroTopic, Partitions: mainPartitions, Records: n / valueSize,
		ValueSize: valueSize, SchemaID: uint32(id)}
	schema, err := avro.Parse(eventSchema)
	if err != nil {
		e.b.Fatal(err)
	}
	g, err := newGenerator(d)
	if err != nil {
		e.b.Fatal(err)
	}
	for _, i := range []int64{0, 1, 3, 4, 1000, d.Records - 1} {
		v := g.value(nil, i)
		if len(v) != valueSize {
			e.b.Fatalf("Avro record %d is %d bytes, want %d", i, len(v), valueSize)
		}
		if err := checkEventValue(schema, d.SchemaID, v, i); err != nil {
			e.b.Fatalf("Avro generator: %v", err)
		}
	}
	e.facts.add("Avro data set", fmt.Sprintf("%d records of %d B (%s) in %d partitions, Confluent wire format (schema id %d, "+
		"in-process registry on loopback), record of 7 fields (long, strings, timestamp-millis, double, nullable string, "+
		"a vocabulary text field)", d.Records, valueSize, human(d.Bytes()), d.Partitions, id))

	e.createTopic(d.Topic, d.Partitions)
	e.produceRow("load: franz-go idempotent producer, Avro topic", d, "")
	return d
}

// typedConfig returns the config keys of typed format f.
func (e *env) typedConfig(f string) map[string]string {
	keys := map[string]string{
		"value.converter":                     avroConverter,
		"value.converter.schema.registry.url": e.registryURL,
	}
	switch f {
	case fmtAvro:
		keys["format.class"] = "avro"
		keys["avro.codec"] = "null"
	case fmtAvroSnappy:
		keys["format.class"] = "avro"
		keys["avro.codec"] = "snappy"
	case fmtParquet:
		keys["format.class"] = "parquet"
		keys["parquet.codec"] = "snappy"
	}
	return keys
}

// checkTypedObjects reads back every object a typed sink run wrote and
// checks that together they hold every record of d, each record's id
// matching its partition and offset. It returns a note for the table.
func (e *env) checkTypedObjects(name string, d dataset, f, bucket string, objs []object) string {
	if len(objs) == 0 {
		e.b.Fatalf("%s: bucket %s holds no objects", name, bucket)
	}
	var (
		rf  format.Format
		err error
	)
	if f == fmtParquet {
		rf, err = format.NewParquet(format.ParquetConfig{Codec: "snappy"})
	} else {
		rf, err = format.NewAvro(format.AvroConfig{}) // the reader takes the codec from the file
	}
	if err != nil {
		e.b.Fatal(err)
	}
	// Partition and start offset from an object key.
	objectKeyRE := regexp.MustCompile(`\+(\d+)\+(\d+)\.[^/]*$`)
	var total int64
	cl := e.s3.Client()
	for _, o := range objs {
		if !strings.HasSuffix(o.key, rf.Extension()) {
			e.b.Fatalf("%s: object %s does not end in %s", name, o.key, rf.Extension())
		}
		m := objectKeyRE.FindStringSubmatch(o.key)
		if m == nil {
			e.b.Fatalf("%s: object key %s has no partition and offset", name, o.key)
		}
		p, _ := strconv.ParseInt(m[1], 10, 32)
		off, _ := strconv.ParseInt(m[2], 10, 64)
		out, err := cl.GetObject(e.ctx, &s3.GetObjectInput{Bucket: aws.String(bucket), Key: aws.String(o.key)})
		if err != nil {
			e.b.Fatalf("%s: get %s: %v", name, o.key, err)
		}
		body, err := io.ReadAll(out.Body)
		_ = out.Body.Close()
		if err != nil {
			e.b.Fatalf("%s: read %s: %v", name, o.key, err)
		}
		rr, err := rf.NewReader(bytes.NewReader(body))
		if err != nil {
			e.b.Fatalf("%s: open %s: %v", name, o.key, err)
		}
		for k := int64(0); ; k++ {
			r, err := rr.Read()
			if errors.Is(err, io.EOF) {
				break
			}
			if err != nil {
				e.b.Fatalf("%s: %s record %d: %v", name, o.key, k, err)
			}
			v, err := format.AvroNative(r.ValueTyped)
			if err == nil {
				// Record i of d is at offset i / partitions of partition i % partitions.
				err = checkEventID(v, (off+k)*int64(d.Partitions)+p)
			}
			if err != nil {
				e.b.Fatalf("%s: %s record %d: %v", name, o.key, k, err)
			}
			total++
		}
	}
	if total != d.Records {
		e.b.Fatalf("%s: the %d objects hold %d records, want %d", name, len(objs), total, d.Records)
	}
	return fmt.Sprintf(", read back: %d records, every id at its partition and offset", total)
}
