package archive

import (
	"bytes"
	"context"
	"encoding/binary"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"reflect"
	"sort"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/kafkas3/kafkas3/convert"
	"github.com/kafkas3/kafkas3/format"
	"github.com/kafkas3/kafkas3/internal/srfake"
	"github.com/kafkas3/kafkas3/s3store"
	"github.com/twmb/avro"
	"github.com/twmb/franz-go/pkg/kadm"
	"github.com/twmb/franz-go/pkg/kgo"
)

const (
	userV1 = `{"type":"record","name":"User","namespace":"t","fields":[{"name":"id","type":"long"},{"name":"name","type":"string"}]}`
	userV2 = `{"type":"record","name":"User","namespace":"t","fields":[{"name":"id","type":"long"},{"name":"name","type":"string"},{"name":"email","type":"string","default":"none"}]}`
)

// adapted is a convert.Converter as cmd adapts it: bad data matches ErrBadData.
type adapted struct{ c convert.Converter }

func (a adapted) Convert(ctx context.Context, topic string, isKey bool, data []byte) (*format.Typed, error) {
	t, err := a.c.Convert(ctx, topic, isKey, data)
	if errors.Is(err, convert.ErrBadData) {
		return nil, BadData(err)
	}
	return t, err
}

// registry starts srfake with userV1 and userV2 registered under t-value
// and returns an AvroConverter on it plus the two ids.
func registry(t *testing.T) (Converter, int, int) {
	t.Helper()
	srv, err := srfake.Start(srfake.Config{})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = srv.Close() })
	c, err := convert.New(convert.Config{Kind: convert.KindAvro, SchemaRegistryURL: srv.URL()})
	if err != nil {
		t.Fatal(err)
	}
	id1, id2 := register(t, srv.URL(), userV1), register(t, srv.URL(), userV2)
	return adapted{c}, id1, id2
}

func register(t *testing.T, url, schema string) int {
	t.Helper()
	c, err := convert.NewAvro(convert.Config{Kind: convert.KindAvro, SchemaRegistryURL: url})
	if err != nil {
		t.Fatal(err)
	}
	s, err := avro.Parse(schema)
	if err != nil {
		t.Fatal(err)
	}
	id, err := c.Register(context.Background(), "t-value", &format.Schema{Avro: s, Text: schema})
	if err != nil {
		t.Fatal(err)
	}
	return id
}

// wire frames a user in the Confluent wire format under schema id.
func wire(t *testing.T, id int, schema string, v map[string]any) []byte {
	t.Helper()
	b, err := avro.MustParse(schema).Encode(v)
	if err != nil {
		t.Fatal(err)
	}
	h := []byte{0, 0, 0, 0, 0}
	binary.BigEndian.PutUint32(h[1:], uint32(id))
	return append(h, b...)
}

func produceValues(t *testing.T, brokers []string, topic string, values ...[]byte) {
	t.Helper()
	cl, err := kgo.NewClient(kgo.SeedBrokers(brokers...), kgo.RecordPartitioner(kgo.ManualPartitioner()))
	if err != nil {
		t.Fatal(err)
	}
	defer cl.Close()
	var recs []*kgo.Record
	for i, v := range values {
		recs = append(recs, &kgo.Record{Topic: topic, Key: fmt.Appendf(nil, "k%d", i), Value: v,
			Headers:   []kgo.RecordHeader{{Key: "h", Value: []byte("v")}},
			Timestamp: time.UnixMilli(1_700_000_000_000 + int64(i))})
	}
	if err := cl.ProduceSync(context.Background(), recs...).FirstErr(); err != nil {
		t.Fatal(err)
	}
}

// readObjects returns each object's records, read with f.
func readObjects(t *testing.T, store s3store.Store, f format.Format) map[string][]*format.Record {
	t.Helper()
	out := map[string][]*format.Record{}
	for k, body := range snapshot(t, store) {
		rr, err := f.NewReader(strings.NewReader(body))
		if err != nil {
			t.Fatalf("%s: %v", k, err)
		}
		for {
			r, err := rr.Read()
			if err == io.EOF {
				break
			}
			if err != nil {
				t.Fatalf("%s: %v", k, err)
			}
			out[k] = append(out[k], r)
		}
	}
	return out
}

func user(id int64, name string) map[string]any { return map[string]any{"id": id, "name": name} }

func user2(id int64, name, email string) map[string]any {
	return map[string]any{"id": id, "name": name, "email": email}
}

func native(t *testing.T, r *format.Record) any {
	t.Helper()
	v, err := format.AvroNative(r.ValueTyped)
	if err != nil {
		t.Fatal(err)
	}
	return v
}

func TestSinkAvroConverterToAvroAndParquet(t *testing.T) {
	avroFmt, err := format.NewAvro(format.AvroConfig{Codec: format.AvroCodecSnappy})
	if err != nil {
		t.Fatal(err)
	}
	pq, err := format.NewParquet(format.ParquetConfig{})
	if err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct {
		f    format.Format
		keys []string
	}{
		{avroFmt, []string{"topics/t/partition=0/t+0+0000000000.avro", "topics/t/partition=0/t+0+0000000003.avro"}},
		{pq, []string{"topics/t/partition=0/t+0+0000000000.snappy.parquet", "topics/t/partition=0/t+0+0000000003.snappy.parquet"}},
	} {
		t.Run(tc.f.Extension(), func(t *testing.T) {
			brokers := newCluster(t, 1, "t")
			conv, id1, _ := registry(t)
			var vals [][]byte
			for i := range 5 {
				vals = append(vals, wire(t, id1, userV1, user(int64(i), fmt.Sprintf("n%d", i))))
			}
			produceValues(t, brokers, "t", vals...)
			cfg := testConfig(brokers, "t")
			cfg.Format, cfg.ValueConverter = tc.f, conv
			store := s3store.NewMemory()
			sum := runSink(t, cfg, store)
			if sum.Records != 5 || sum.Objects != 2 {
				t.Fatalf("summary %v", sum)
			}
			got := readObjects(t, store, tc.f)
			ks := make([]string, 0, len(got))
			for k := range got {
				ks = append(ks, k)
			}
			sort.Strings(ks)
			if !reflect.DeepEqual(ks, tc.keys) {
				t.Fatalf("keys %v, want %v", ks, tc.keys)
			}
			i := 0
			for _, k := range ks {
				for _, r := range got[k] {
					want := map[string]any{"id": int64(i), "name": fmt.Sprintf("n%d", i)}
					if v := native(t, r); !reflect.DeepEqual(v, want) {
						t.Fatalf("%s record %d: %#v, want %#v", k, i, v, want)
					}
					i++
				}
			}
		})
	}
}

func TestSinkSchemaCompatibility(t *testing.T) {
	avroFmt, err := format.NewAvro(format.AvroConfig{})
	if err != nil {
		t.Fatal(err)
	}
	type obj struct {
		start  int
		n      int
		schema string
	}
	for _, tc := range []struct {
		mode Compatibility
		want []obj
	}{
		{CompatNone, []obj{{0, 2, userV1}, {2, 1, userV2}, {3, 1, userV1}, {4, 1, userV2}}},
		{CompatBackward, []obj{{0, 2, userV1}, {2, 3, userV2}}},
		{CompatFull, []obj{{0, 2, userV1}, {2, 3, userV2}}},
		{CompatForward, []obj{{0, 5, userV1}}},
	} {
		t.Run(string(tc.mode), func(t *testing.T) {
			brokers := newCluster(t, 1, "t")
			conv, id1, id2 := registry(t)
			produceValues(t, brokers, "t",
				wire(t, id1, userV1, user(0, "a")),
				wire(t, id1, userV1, user(1, "b")),
				wire(t, id2, userV2, user2(2, "c", "c@x")),
				wire(t, id1, userV1, user(3, "d")),
				wire(t, id2, userV2, user2(4, "e", "e@x")))
			cfg := testConfig(brokers, "t")
			cfg.FlushSize = 100
			cfg.Format, cfg.ValueConverter, cfg.Compatibility = avroFmt, conv, tc.mode
			store := s3store.NewMemory()
			runSink(t, cfg, store)
			got := readObjects(t, store, avroFmt)
			if len(got) != len(tc.want) {
				t.Fatalf("%d objects %v, want %d", len(got), keysOfRecs(got), len(tc.want))
			}
			for _, o := range tc.want {
				k := fmt.Sprintf("topics/t/partition=0/t+0+%010d.avro", o.start)
				recs := got[k]
				if len(recs) != o.n {
					t.Fatalf("%s: %d records, want %d (objects %v)", k, len(recs), o.n, keysOfRecs(got))
				}
				for j, r := range recs {
					if r.ValueTyped.Schema.Text != o.schema {
						t.Fatalf("%s: schema %s, want %s", k, r.ValueTyped.Schema.Text, o.schema)
					}
					id := int64(o.start + j)
					name := string(rune('a' + id))
					var want map[string]any
					switch {
					case o.schema == userV1:
						want = map[string]any{"id": id, "name": name}
					case id%2 == 0: // written as v2
						want = map[string]any{"id": id, "name": name, "email": name + "@x"}
					default: // v1 projected to v2: the default
						want = map[string]any{"id": id, "name": name, "email": "none"}
					}
					if v := native(t, r); !reflect.DeepEqual(v, want) {
						t.Fatalf("%s record %d: %#v, want %#v", k, j, v, want)
					}
				}
			}
		})
	}
}

func keysOfRecs(m map[string][]*format.Record) []string {
	var ks []string
	for k := range m {
		ks = append(ks, k)
	}
	sort.Strings(ks)
	return ks
}

// runSinkErr runs a sink expected to fail.
func runSinkErr(t *testing.T, cfg Config, store s3store.Store) error {
	t.Helper()
	s, err := New(cfg, store, slog.New(slog.DiscardHandler))
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	_, err = s.Run(ctx)
	if ctx.Err() != nil {
		t.Fatal("sink did not stop")
	}
	return err
}

func committed(t *testing.T, brokers []string, group, topic string) int64 {
	t.Helper()
	cl, err := kgo.NewClient(kgo.SeedBrokers(brokers...))
	if err != nil {
		t.Fatal(err)
	}
	defer cl.Close()
	offs, err := kadm.NewClient(cl).FetchOffsets(context.Background(), group)
	if err != nil {
		t.Fatal(err)
	}
	o, ok := offs.Lookup(topic, 0)
	if !ok {
		return -1
	}
	return o.At
}

func TestSinkSchemaSwitchIsAnError(t *testing.T) {
	brokers := newCluster(t, 1, "t")
	produceValues(t, brokers, "t",
		[]byte(`{"schema":{"type":"string"},"payload":"x"}`),
		[]byte(`{"schema":null,"payload":"y"}`))
	cfg := testConfig(brokers, "t")
	cfg.ValueConverter = adapted{convert.NewJSON(convert.Config{SchemasEnable: true})}
	cfg.Format = format.NewTypedJSON()
	err := runSinkErr(t, cfg, s3store.NewMemory())
	var bad *BadRecordError
	if !errors.As(err, &bad) || !errors.Is(err, ErrSchemaSwitch) || bad.Offset != 1 ||
		!strings.Contains(err.Error(), "topic t partition 0 offset 1") {
		t.Fatalf("err = %v", err)
	}
}

func TestSinkToleranceNoneStopsAtBadRecord(t *testing.T) {
	avroFmt, _ := format.NewAvro(format.AvroConfig{})
	brokers := newCluster(t, 1, "t")
	conv, id1, _ := registry(t)
	var vals [][]byte
	for i := range 6 {
		vals = append(vals, wire(t, id1, userV1, user(int64(i), "n")))
	}
	vals[4] = []byte("not avro")
	produceValues(t, brokers, "t", vals...)
	cfg := testConfig(brokers, "t")
	cfg.FlushSize = 2
	cfg.Format, cfg.ValueConverter = avroFmt, conv
	store := s3store.NewMemory()
	err := runSinkErr(t, cfg, store)
	var bad *BadRecordError
	if !errors.As(err, &bad) || bad.Offset != 4 || bad.Stage != StageValueConverter ||
		!strings.Contains(err.Error(), "topic t partition 0 offset 4") {
		t.Fatalf("err = %v", err)
	}
	if c := committed(t, brokers, "connect-test", "t"); c > 4 || c < 0 {
		t.Fatalf("committed %d, want <= 4", c)
	}
	if got := keysOf(snapshot(t, store)); len(got) != 2 {
		t.Fatalf("objects %v, want the two before the bad record", got)
	}
}

func TestSinkDeadLetterQueue(t *testing.T) {
	avroFmt, _ := format.NewAvro(format.AvroConfig{})
	brokers := newCluster(t, 1, "t")
	conv, id1, _ := registry(t)
	vals := [][]byte{
		wire(t, id1, userV1, user(0, "a")),
		[]byte("bad-1"), // not the wire format
		wire(t, id1, userV1, user(2, "c")),
		append(wire(t, id1, userV1, user(3, "d"))[:5], 0xff), // truncated datum
		wire(t, id1, userV1, user(4, "e")),
	}
	produceValues(t, brokers, "t", vals...)
	cfg := testConfig(brokers, "t")
	cfg.FlushSize = 2
	cfg.Format, cfg.ValueConverter, cfg.ValueConverterClass = avroFmt, conv, "io.confluent.connect.avro.AvroConverter"
	cfg.Errors = ErrorsConfig{Tolerance: ToleranceAll, DLQTopic: "dlq", DLQContextHeaders: true, Log: true}
	store := s3store.NewMemory()
	sum := runSink(t, cfg, store)
	if sum.Records != 3 || sum.Skipped != 2 || sum.BadRecords != 2 || sum.DLQ != 2 || !strings.Contains(sum.SkipReport(), "2 sent to the dead letter queue") {
		t.Fatalf("summary %+v %q", sum, sum.SkipReport())
	}
	got := readObjects(t, store, avroFmt)
	if ks := keysOfRecs(got); !reflect.DeepEqual(ks, []string{"topics/t/partition=0/t+0+0000000000.avro", "topics/t/partition=0/t+0+0000000004.avro"}) {
		t.Fatalf("objects %v", ks)
	}
	if c := committed(t, brokers, "connect-test", "t"); c != 5 {
		t.Fatalf("committed %d, want 5", c)
	}
	// The DLQ holds the two bad records, unchanged, with context headers.
	cl, err := kgo.NewClient(kgo.SeedBrokers(brokers...), kgo.ConsumeTopics("dlq"), kgo.ConsumeResetOffset(kgo.NewOffset().AtStart()))
	if err != nil {
		t.Fatal(err)
	}
	defer cl.Close()
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	var dlq []*kgo.Record
	for len(dlq) < 2 && ctx.Err() == nil {
		cl.PollFetches(ctx).EachRecord(func(r *kgo.Record) { dlq = append(dlq, r) })
	}
	if len(dlq) != 2 {
		t.Fatalf("%d DLQ records, want 2", len(dlq))
	}
	for i, off := range []int64{1, 3} {
		r := dlq[i]
		if !bytes.Equal(r.Value, vals[off]) || string(r.Key) != fmt.Sprintf("k%d", off) {
			t.Fatalf("DLQ record %d: key %q value %q", i, r.Key, r.Value)
		}
		h := map[string]string{}
		for _, x := range r.Headers {
			h[x.Key] = string(x.Value)
		}
		want := map[string]string{"h": "v", HeaderErrTopic: "t", HeaderErrPartition: "0", HeaderErrOffset: fmt.Sprint(off),
			HeaderErrStage: StageValueConverter, HeaderErrClass: "io.confluent.connect.avro.AvroConverter",
			HeaderErrExceptionClass: dataExceptionClass, HeaderErrConnector: "test", HeaderErrTaskID: "0"}
		for k, v := range want {
			if h[k] != v {
				t.Fatalf("DLQ record %d header %s = %q, want %q (all %v)", i, k, h[k], v, h)
			}
		}
		if h[HeaderErrMessage] == "" {
			t.Fatalf("DLQ record %d has no exception message", i)
		}
	}
}

func TestSinkToleranceAllWithoutDLQSkips(t *testing.T) {
	avroFmt, _ := format.NewAvro(format.AvroConfig{})
	brokers := newCluster(t, 1, "t")
	conv, id1, _ := registry(t)
	produceValues(t, brokers, "t", []byte("bad"), wire(t, id1, userV1, user(1, "b")))
	cfg := testConfig(brokers, "t")
	cfg.Format, cfg.ValueConverter = avroFmt, conv
	cfg.Errors = ErrorsConfig{Tolerance: ToleranceAll}
	store := s3store.NewMemory()
	sum := runSink(t, cfg, store)
	if sum.Records != 1 || sum.Skipped != 1 || sum.BadRecords != 1 || sum.DLQ != 0 ||
		!strings.HasPrefix(sum.SkipReport(), "1 records were consumed but not archived: 1 bad records (errors.tolerance=all)") {
		t.Fatalf("summary %+v %q", sum, sum.SkipReport())
	}
	if ks := keysOf(snapshot(t, store)); !reflect.DeepEqual(ks, []string{"topics/t/partition=0/t+0+0000000001.avro"}) {
		t.Fatalf("objects %v", ks)
	}
}

// flakyConverter fails with a registry-style error the first n calls.
type flakyConverter struct {
	Converter
	fails atomic.Int32
}

func (f *flakyConverter) Convert(ctx context.Context, topic string, isKey bool, data []byte) (*format.Typed, error) {
	if f.fails.Add(-1) >= 0 {
		return nil, errors.New("schema registry: connection refused")
	}
	return f.Converter.Convert(ctx, topic, isKey, data)
}

func TestSinkRegistryFailureIsRetriedNotDeadLettered(t *testing.T) {
	avroFmt, _ := format.NewAvro(format.AvroConfig{})
	brokers := newCluster(t, 1, "t")
	conv, id1, _ := registry(t)
	produceValues(t, brokers, "t", wire(t, id1, userV1, user(0, "a")), wire(t, id1, userV1, user(1, "b")))
	fc := &flakyConverter{Converter: conv}
	fc.fails.Store(1)
	cfg := testConfig(brokers, "t")
	cfg.Format, cfg.ValueConverter = avroFmt, fc
	cfg.Errors = ErrorsConfig{Tolerance: ToleranceAll, DLQTopic: "dlq"}
	store := s3store.NewMemory()
	sum := runSink(t, cfg, store)
	if sum.Records != 2 {
		t.Fatalf("summary %v: the record that met the registry failure was not archived", sum)
	}
	cl, _ := kgo.NewClient(kgo.SeedBrokers(brokers...))
	defer cl.Close()
	ends, err := kadm.NewClient(cl).ListEndOffsets(context.Background(), "dlq")
	if err != nil {
		t.Fatal(err)
	}
	if o, _ := ends.Lookup("dlq", 0); o.Offset != 0 {
		t.Fatalf("DLQ has %d records, want 0", o.Offset)
	}
}

func TestSinkTypedJSON(t *testing.T) {
	brokers := newCluster(t, 1, "t")
	conv, id1, id2 := registry(t)
	produceValues(t, brokers, "t", wire(t, id1, userV1, user(1, "a\"b")), wire(t, id2, userV2, user2(2, "c", "e")))
	cfg := testConfig(brokers, "t")
	cfg.ValueConverter, cfg.Format = conv, format.NewTypedJSON()
	store := s3store.NewMemory()
	runSink(t, cfg, store)
	got := snapshot(t, store)
	want := map[string]string{
		"topics/t/partition=0/t+0+0000000000.json": `{"id":1,"name":"a\"b"}` + "\n",
		"topics/t/partition=0/t+0+0000000001.json": `{"id":2,"name":"c","email":"e"}` + "\n",
	}
	if !reflect.DeepEqual(got, want) {
		t.Fatalf("objects %q, want %q", got, want)
	}
}
