package restore

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"log/slog"
	"sync"
	"testing"
	"time"

	"github.com/kafkas3/kafkas3/format"
	"github.com/kafkas3/kafkas3/partition"
	"github.com/kafkas3/kafkas3/s3store"
	"github.com/twmb/franz-go/pkg/kadm"
	"github.com/twmb/franz-go/pkg/kfake"
	"github.com/twmb/franz-go/pkg/kgo"
)

// newCluster starts an in-process Kafka with the given topics of n
// partitions each.
func newCluster(t *testing.T, n int32, topics ...string) []string {
	t.Helper()
	opts := []kfake.Opt{kfake.NumBrokers(1)}
	if len(topics) > 0 {
		opts = append(opts, kfake.SeedTopics(n, topics...))
	}
	c, err := kfake.NewCluster(opts...)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(c.Close)
	return c.ListenAddrs()
}

func testContext(t *testing.T) context.Context {
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	t.Cleanup(cancel)
	return ctx
}

// logBuffer is a slog handler target that tests can read.
type logBuffer struct {
	mu sync.Mutex
	b  bytes.Buffer
}

func (l *logBuffer) Write(p []byte) (int, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.b.Write(p)
}

func (l *logBuffer) String() string {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.b.String()
}

func (l *logBuffer) logger() *slog.Logger {
	return slog.New(slog.NewTextHandler(l, &slog.HandlerOptions{Level: slog.LevelDebug}))
}

// archive writes archive objects for tests.
type archive struct {
	t     testing.TB
	store *s3store.Memory
	keys  partition.KeyConfig
	f     format.Format
	// digest is what the index entries writeIndex writes give: "" the
	// CRC32C (v2, as the sink writes by default), "sha256" the CRC32C and
	// the SHA-256 (v2, kafkas3.index.digest=sha256), "v1" the SHA-256 in a
	// v1 entry (an older kafkas3's).
	digest string
	// blind restores through blindStore: a store that shows no ETag and
	// keeps no checksum, so damage is found only by reading.
	blind bool
}

// blindStore is a store that lists no ETag and keeps no checksum (it is
// not an s3store.Checksummer), as a local directory: damage in it is
// found only by reading the object, as bit rot at rest is on any store.
type blindStore struct{ s3store.Store }

func (b blindStore) List(ctx context.Context, prefix string, fn func(s3store.ObjectInfo) error) error {
	return b.Store.List(ctx, prefix, func(info s3store.ObjectInfo) error {
		info.ETag = ""
		return fn(info)
	})
}

func newArchive(t testing.TB, f format.Format) *archive {
	return &archive{t: t, store: s3store.NewMemory(), keys: partition.DefaultKeyConfig(), f: f}
}

// put writes one object of topic/p starting at offset start.
func (a *archive) put(topic string, p int32, start int64, recs []*format.Record) string {
	a.t.Helper()
	key := a.keys.ObjectKey(partition.ObjectName{
		Topic: topic, Encoded: fmt.Sprintf("partition=%d", p), Partition: p, StartOffset: start, Ext: a.f.Extension(),
	})
	return a.putRecords(key, recs)
}

// putRecords stores recs under key in the archive's format and returns key.
func (a *archive) putRecords(key string, recs []*format.Record) string {
	a.t.Helper()
	a.putRaw(key, func(w io.Writer) {
		rw, err := a.f.NewWriter(w)
		if err != nil {
			a.t.Fatal(err)
		}
		for _, r := range recs {
			if err := rw.Write(r); err != nil {
				a.t.Fatal(err)
			}
		}
		if err := rw.Close(); err != nil {
			a.t.Fatal(err)
		}
	})
	return key
}

func (a *archive) putRaw(key string, fill func(w io.Writer)) {
	a.t.Helper()
	ctx := context.Background()
	w, err := a.store.Create(ctx, key)
	if err != nil {
		a.t.Fatal(err)
	}
	fill(w)
	if err := w.Commit(ctx); err != nil {
		a.t.Fatal(err)
	}
}

// values makes n value-only records <prefix>-<i> (plain text).
func values(prefix string, from, n int) []*format.Record {
	out := make([]*format.Record, n)
	for i := range out {
		out[i] = &format.Record{Value: fmt.Appendf(nil, "%s-%d", prefix, from+i)}
	}
	return out
}

// readTopic reads everything topic holds (from each log start), by partition.
func readTopic(t *testing.T, brokers []string, topic string) map[int32][]*kgo.Record {
	t.Helper()
	ctx := testContext(t)
	adm := newAdmin(t, brokers)
	ends, err := adm.ListEndOffsets(ctx, topic)
	if err != nil {
		t.Fatal(err)
	}
	starts, err := adm.ListStartOffsets(ctx, topic)
	if err != nil {
		t.Fatal(err)
	}
	parts := map[int32]kgo.Offset{}
	var total int64
	ends.Each(func(o kadm.ListedOffset) {
		s, _ := starts.Lookup(topic, o.Partition)
		if o.Err != nil || s.Err != nil {
			t.Fatalf("offsets of %s/%d: %v %v", topic, o.Partition, o.Err, s.Err)
		}
		parts[o.Partition] = kgo.NewOffset().AtStart()
		total += o.Offset - s.Offset
	})
	out := map[int32][]*kgo.Record{}
	if total == 0 {
		return out
	}
	cl, err := kgo.NewClient(kgo.SeedBrokers(brokers...), kgo.ConsumePartitions(map[string]map[int32]kgo.Offset{topic: parts}))
	if err != nil {
		t.Fatal(err)
	}
	defer cl.Close()
	var got int64
	for got < total {
		fs := cl.PollFetches(ctx)
		if ctx.Err() != nil {
			t.Fatalf("read %s: got %d of %d records", topic, got, total)
		}
		fs.EachError(func(_ string, p int32, err error) { t.Fatalf("fetch %s/%d: %v", topic, p, err) })
		fs.EachRecord(func(r *kgo.Record) {
			out[r.Partition] = append(out[r.Partition], r)
			got++
		})
	}
	return out
}

func newAdmin(t *testing.T, brokers []string) *kadm.Client {
	t.Helper()
	cl, err := kgo.NewClient(kgo.SeedBrokers(brokers...))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(cl.Close)
	return kadm.NewClient(cl)
}

// produce writes records to topic/p by hand (a foreign writer).
func produce(t *testing.T, brokers []string, topic string, p int32, vals ...string) {
	t.Helper()
	cl, err := kgo.NewClient(kgo.SeedBrokers(brokers...), kgo.RecordPartitioner(kgo.ManualPartitioner()))
	if err != nil {
		t.Fatal(err)
	}
	defer cl.Close()
	for _, v := range vals {
		if err := cl.ProduceSync(testContext(t), &kgo.Record{Topic: topic, Partition: p, Value: []byte(v)}).FirstErr(); err != nil {
			t.Fatal(err)
		}
	}
}

// checkValues asserts that recs hold exactly the values want, in order.
func checkValues(t *testing.T, what string, recs []*kgo.Record, want []*format.Record) {
	t.Helper()
	if len(recs) != len(want) {
		t.Fatalf("%s: %d records, want %d", what, len(recs), len(want))
	}
	for i := range want {
		if !bytes.Equal(recs[i].Value, want[i].Value) {
			t.Fatalf("%s: record %d (offset %d) is %q, want %q", what, i, recs[i].Offset, recs[i].Value, want[i].Value)
		}
	}
}

// fullFormat is a test format that round-trips every field a Record can
// hold, including nil versus empty keys, values and header values.
type fullFormat struct{}

func (fullFormat) Extension() string { return ".full" }

func (fullFormat) NewWriter(w io.Writer) (format.RecordWriter, error) {
	return &fullWriter{enc: json.NewEncoder(w)}, nil
}

func (fullFormat) NewReader(r io.Reader) (format.RecordReader, error) {
	sc := bufio.NewScanner(r)
	sc.Buffer(nil, 64<<20)
	return &fullReader{sc: sc}, nil
}

type fullLine struct {
	Key     []byte
	Value   []byte
	Headers []format.Header
	TS      int64
}

type fullWriter struct{ enc *json.Encoder }

func (w *fullWriter) Write(r *format.Record) error {
	l := fullLine{Key: r.Key, Value: r.Value, Headers: r.Headers}
	if !r.Timestamp.IsZero() {
		l.TS = r.Timestamp.UnixMilli()
	}
	return w.enc.Encode(l)
}

func (w *fullWriter) Close() error { return nil }

type fullReader struct{ sc *bufio.Scanner }

func (r *fullReader) Read() (*format.Record, error) {
	if !r.sc.Scan() {
		if err := r.sc.Err(); err != nil {
			return nil, err
		}
		return nil, io.EOF
	}
	var l fullLine
	if err := json.Unmarshal(r.sc.Bytes(), &l); err != nil {
		return nil, err
	}
	rec := &format.Record{Key: l.Key, Value: l.Value, Headers: l.Headers}
	if l.TS != 0 {
		rec.Timestamp = time.UnixMilli(l.TS)
	}
	return rec, nil
}

// openLog is a store that records which keys were opened, in order.
type openLog struct {
	s3store.Store
	mu   sync.Mutex
	keys []string
	// onOpen, when set, is called with each key and how many times it has
	// been opened, this time included.
	onOpen func(key string, n int)
}

func (o *openLog) Open(ctx context.Context, key string) (io.ReadCloser, error) {
	o.mu.Lock()
	o.keys = append(o.keys, key)
	o.mu.Unlock()
	if o.onOpen != nil {
		o.onOpen(key, o.count(key))
	}
	return o.Store.Open(ctx, key)
}

func (o *openLog) count(key string) int {
	o.mu.Lock()
	defer o.mu.Unlock()
	n := 0
	for _, k := range o.keys {
		if k == key {
			n++
		}
	}
	return n
}

// objects returns every object of the plan, in plan order.
func (p *Plan) objects() []*Object {
	var objs []*Object
	for ti := range p.Topics {
		t := &p.Topics[ti]
		for pi := range t.Parts {
			for oi := range t.Parts[pi].Objects {
				objs = append(objs, &t.Parts[pi].Objects[oi])
			}
		}
	}
	return objs
}
