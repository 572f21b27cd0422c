package archive

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"math/rand/v2"
	"os"
	"sort"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/kafkas3/kafkas3/format"
	"github.com/kafkas3/kafkas3/outage"
	"github.com/kafkas3/kafkas3/partition"
	"github.com/kafkas3/kafkas3/s3store"
	"github.com/twmb/franz-go/pkg/kadm"
	"github.com/twmb/franz-go/pkg/kfake"
	"github.com/twmb/franz-go/pkg/kgo"
)

func newCluster(t *testing.T, partitions int32, topics ...string) []string {
	t.Helper()
	c, err := kfake.NewCluster(kfake.NumBrokers(1), kfake.SeedTopics(partitions, topics...))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(c.Close)
	return c.ListenAddrs()
}

// produce writes n records per partition with values "<topic>-<p>-<i>".
func produce(t *testing.T, brokers []string, topic string, partitions int32, from, n int) {
	t.Helper()
	cl, err := kgo.NewClient(kgo.SeedBrokers(brokers...), kgo.RecordPartitioner(kgo.ManualPartitioner()))
	if err != nil {
		t.Fatal(err)
	}
	defer cl.Close()
	var recs []*kgo.Record
	for p := range partitions {
		for i := from; i < from+n; i++ {
			recs = append(recs, &kgo.Record{Topic: topic, Partition: p, Key: fmt.Appendf(nil, "k%d", i),
				Value:     fmt.Appendf(nil, `{"p":%d,"i":%d}`, p, i),
				Timestamp: time.UnixMilli(1_700_000_000_000 + int64(i)*1000)})
		}
	}
	if err := cl.ProduceSync(context.Background(), recs...).FirstErr(); err != nil {
		t.Fatal(err)
	}
}

func testConfig(brokers []string, topics ...string) Config {
	return Config{
		Name:        "test",
		Brokers:     brokers,
		Topics:      topics,
		FlushSize:   3,
		Keys:        partition.DefaultKeyConfig(),
		Format:      format.NewJSON(),
		Partitioner: partition.NewDefault(),
		Once:        true,
	}
}

func runSink(t *testing.T, cfg Config, store s3store.Store) Summary {
	t.Helper()
	s, err := New(cfg, store, slog.New(slog.DiscardHandler))
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	sum, err := s.Run(ctx)
	if err != nil {
		t.Fatalf("sink: %v", err)
	}
	return sum
}

// snapshot returns every object's bytes by key.
func snapshot(t *testing.T, store s3store.Store) map[string]string {
	t.Helper()
	out := map[string]string{}
	ctx := context.Background()
	err := store.List(ctx, "", func(oi s3store.ObjectInfo) error {
		rc, err := store.Open(ctx, oi.Key)
		if err != nil {
			return err
		}
		defer rc.Close()
		b, err := io.ReadAll(rc)
		out[oi.Key] = string(b)
		return err
	})
	if err != nil {
		t.Fatal(err)
	}
	return out
}

func keysOf(m map[string]string) []string {
	var ks []string
	for k := range m {
		ks = append(ks, k)
	}
	sort.Strings(ks)
	return ks
}

func TestSinkOnceQuickStart(t *testing.T) {
	brokers := newCluster(t, 1, "s3_topic")
	cl, _ := kgo.NewClient(kgo.SeedBrokers(brokers...))
	for i := 1; i <= 9; i++ {
		if err := cl.ProduceSync(context.Background(), &kgo.Record{Topic: "s3_topic", Value: fmt.Appendf(nil, `{"f1":"value%d"}`, i)}).FirstErr(); err != nil {
			t.Fatal(err)
		}
	}
	cl.Close()
	store := s3store.NewMemory()
	sum := runSink(t, testConfig(brokers, "s3_topic"), store)
	got := snapshot(t, store)
	want := map[string]string{
		"topics/s3_topic/partition=0/s3_topic+0+0000000000.json": "{\"f1\":\"value1\"}\n{\"f1\":\"value2\"}\n{\"f1\":\"value3\"}\n",
		"topics/s3_topic/partition=0/s3_topic+0+0000000003.json": "{\"f1\":\"value4\"}\n{\"f1\":\"value5\"}\n{\"f1\":\"value6\"}\n",
		"topics/s3_topic/partition=0/s3_topic+0+0000000006.json": "{\"f1\":\"value7\"}\n{\"f1\":\"value8\"}\n{\"f1\":\"value9\"}\n",
	}
	if fmt.Sprint(got) != fmt.Sprint(want) {
		t.Fatalf("objects:\n got %q\nwant %q", got, want)
	}
	if sum.Records != 9 || sum.Objects != 3 || sum.Partitions != 1 {
		t.Fatalf("summary %+v", sum)
	}
	// A second --once with no new records writes nothing.
	sum = runSink(t, testConfig(brokers, "s3_topic"), store)
	if sum.Objects != 0 || sum.Records != 0 {
		t.Fatalf("second run wrote %+v", sum)
	}
}

func TestSinkOncePartialThenContinue(t *testing.T) {
	brokers := newCluster(t, 2, "t")
	produce(t, brokers, "t", 2, 0, 10)
	store := s3store.NewMemory()
	cfg := testConfig(brokers, "t")
	cfg.FlushSize = 4
	sum := runSink(t, cfg, store)
	if sum.Records != 20 || sum.Objects != 6 {
		t.Fatalf("summary %+v", sum)
	}
	produce(t, brokers, "t", 2, 10, 2)
	sum = runSink(t, cfg, store)
	if sum.Records != 4 || sum.Objects != 2 {
		t.Fatalf("summary %+v", sum)
	}
	got := keysOf(snapshot(t, store))
	want := []string{
		"topics/t/partition=0/t+0+0000000000.json", "topics/t/partition=0/t+0+0000000004.json",
		"topics/t/partition=0/t+0+0000000008.json", "topics/t/partition=0/t+0+0000000010.json",
		"topics/t/partition=1/t+1+0000000000.json", "topics/t/partition=1/t+1+0000000004.json",
		"topics/t/partition=1/t+1+0000000008.json", "topics/t/partition=1/t+1+0000000010.json",
	}
	if strings.Join(got, "\n") != strings.Join(want, "\n") {
		t.Fatalf("keys:\n%s", strings.Join(got, "\n"))
	}
}

func TestSinkNullValues(t *testing.T) {
	brokers := newCluster(t, 1, "n")
	cl, _ := kgo.NewClient(kgo.SeedBrokers(brokers...))
	defer cl.Close()
	recs := []*kgo.Record{{Topic: "n", Value: []byte(`1`)}, {Topic: "n", Value: nil}, {Topic: "n", Value: []byte(`3`)}}
	if err := cl.ProduceSync(context.Background(), recs...).FirstErr(); err != nil {
		t.Fatal(err)
	}
	cfg := testConfig(brokers, "n")
	s, _ := New(cfg, s3store.NewMemory(), nil)
	_, err := s.Run(context.Background())
	if !errors.Is(err, ErrNullValue) || !strings.Contains(err.Error(), "topic n partition 0 offset 1") {
		t.Fatalf("want null value error naming the offset, got %v", err)
	}
	cfg.NullValues = NullIgnore
	store := s3store.NewMemory()
	sum := runSink(t, cfg, store)
	got := snapshot(t, store)
	if got["topics/n/partition=0/n+0+0000000000.json"] != "1\n3\n" {
		t.Fatalf("got %q", got)
	}
	// The summary says what was dropped.
	if sum.Records != 2 || sum.Skipped != 1 || sum.NullsIgnored != 1 || !strings.Contains(sum.String(), " skipped=1") ||
		!strings.Contains(sum.SkipReport(), "1 null values (behavior.on.null.values=ignore)") {
		t.Fatalf("summary %+v %q %q", sum, sum, sum.SkipReport())
	}
}

// TestSinkSkipsCountedOncePerOffset: bad records and ignored nulls are
// counted in the summary once each, even when store failures make the
// sink replay them from the committed offsets.
func TestSinkSkipsCountedOncePerOffset(t *testing.T) {
	brokers := newCluster(t, 1, "sk")
	var recs []*kgo.Record
	for i := range 40 {
		var v []byte
		if i%5 != 2 {
			v = []byte(fmt.Sprint(i))
		}
		recs = append(recs, &kgo.Record{Topic: "sk", Value: v})
	}
	produceRecs(t, brokers, recs...)
	cfg := testConfig(brokers, "sk")
	cfg.FlushSize = 4
	cfg.NullValues = NullIgnore
	flaky := &flakyStore{Store: s3store.NewMemory(), fails: map[int]bool{2: true, 3: true, 6: true}}
	sum := runSink(t, cfg, flaky)
	if sum.Records != 32 || sum.Skipped != 8 || sum.NullsIgnored != 8 || sum.BadRecords != 0 {
		t.Fatalf("summary %+v", sum)
	}
	if got := sum.SkipReport(); !strings.HasPrefix(got, "8 records were consumed but not archived: 8 null values") {
		t.Fatalf("skip report %q", got)
	}
}

func TestSinkRotateIntervalRecordTime(t *testing.T) {
	brokers := newCluster(t, 1, "r")
	produce(t, brokers, "r", 1, 0, 10) // timestamps 1s apart
	cfg := testConfig(brokers, "r")
	cfg.FlushSize = 100
	cfg.RotateInterval = 3 * time.Second
	store := s3store.NewMemory()
	runSink(t, cfg, store)
	got := keysOf(snapshot(t, store))
	want := "topics/r/partition=0/r+0+0000000000.json topics/r/partition=0/r+0+0000000003.json topics/r/partition=0/r+0+0000000006.json topics/r/partition=0/r+0+0000000009.json"
	if strings.Join(got, " ") != want {
		t.Fatalf("keys %v", got)
	}
}

func TestSinkScheduledRotationClosesIdleFiles(t *testing.T) {
	brokers := newCluster(t, 1, "s")
	produce(t, brokers, "s", 1, 0, 2)
	cfg := testConfig(brokers, "s")
	cfg.Once = false
	cfg.FlushSize = 1000
	cfg.RotateScheduleInterval = 300 * time.Millisecond
	cfg.Timezone = time.UTC
	store := s3store.NewMemory()
	s, _ := New(cfg, store, nil)
	ctx, cancel := context.WithCancel(context.Background())
	var objects atomic.Int64
	s.OnObject = func(FileStats) {
		if objects.Add(1) == 1 {
			cancel()
		}
	}
	go func() { time.Sleep(30 * time.Second); cancel() }()
	if _, err := s.Run(ctx); err != nil {
		t.Fatal(err)
	}
	got := snapshot(t, store)
	if len(got) != 1 || got["topics/s/partition=0/s+0+0000000000.json"] == "" {
		t.Fatalf("scheduled rotation did not close the idle file: %v", keysOf(got))
	}
}

func TestNextBoundary(t *testing.T) {
	ny, err := time.LoadLocation("America/New_York")
	if err != nil {
		t.Skip("no tzdata:", err)
	}
	now := time.Date(2024, 3, 1, 10, 17, 5, 0, ny)
	got := nextBoundary(now, time.Hour, ny)
	if want := time.Date(2024, 3, 1, 11, 0, 0, 0, ny); !got.Equal(want) {
		t.Fatalf("got %v want %v", got, want)
	}
	got = nextBoundary(now, 24*time.Hour, ny)
	if want := time.Date(2024, 3, 2, 0, 0, 0, 0, ny); !got.Equal(want) {
		t.Fatalf("got %v want %v", got, want)
	}
	// As Confluent's getNextTimeAdjustedByDay: counted from the start of
	// the day, capped at 24 hours after it.
	for _, tc := range []struct {
		now      time.Time
		interval time.Duration
		want     time.Time
	}{
		{time.Date(2024, 3, 1, 22, 0, 0, 0, ny), 7 * time.Hour, time.Date(2024, 3, 2, 0, 0, 0, 0, ny)},  // 21:00 + 7h passes midnight
		{time.Date(2024, 3, 1, 10, 0, 0, 0, ny), 48 * time.Hour, time.Date(2024, 3, 2, 0, 0, 0, 0, ny)}, // longer than a day
		{time.Date(2024, 3, 1, 10, 0, 0, 0, ny), 7 * time.Hour, time.Date(2024, 3, 1, 14, 0, 0, 0, ny)},
		// The spring-forward day: 2h steps from 00:00 EST (05:00Z) are
		// 07:00Z, 09:00Z, ..., i.e. 05:00 EDT after 04:30 EDT.
		{time.Date(2024, 3, 10, 4, 30, 0, 0, ny), 2 * time.Hour, time.Date(2024, 3, 10, 9, 0, 0, 0, time.UTC)},
		// A 23-hour day ends 24 hours after its start: 01:00 EDT.
		{time.Date(2024, 3, 10, 20, 0, 0, 0, ny), 24 * time.Hour, time.Date(2024, 3, 11, 5, 0, 0, 0, time.UTC)},
	} {
		if got := nextBoundary(tc.now, tc.interval, ny); !got.Equal(tc.want) {
			t.Errorf("nextBoundary(%v, %v) = %v, want %v", tc.now, tc.interval, got, tc.want.In(ny))
		}
	}
}

// flakyStore fails commits at chosen moments, like an S3 outage.
type flakyStore struct {
	s3store.Store
	mu    sync.Mutex
	fails map[int]bool
	n     int
}

func (f *flakyStore) Create(ctx context.Context, key string) (s3store.ObjectWriter, error) {
	w, err := f.Store.Create(ctx, key)
	if err != nil {
		return nil, err
	}
	return &flakyWriter{ObjectWriter: w, f: f}, nil
}

type flakyWriter struct {
	s3store.ObjectWriter
	f *flakyStore
}

func (w *flakyWriter) Commit(ctx context.Context) error {
	w.f.mu.Lock()
	w.f.n++
	fail := w.f.fails[w.f.n]
	w.f.mu.Unlock()
	if fail {
		_ = w.ObjectWriter.Abort(ctx)
		return errors.New("injected store failure")
	}
	return w.ObjectWriter.Commit(ctx)
}

// ETag passes the store's ETag on, as the sink's own store wrappers do
// (metrics).
func (w *flakyWriter) ETag() string { return w.ObjectWriter.(s3store.ETagger).ETag() }

func TestSinkStoreFailureResumesExactlyOnce(t *testing.T) {
	brokers := newCluster(t, 3, "f")
	produce(t, brokers, "f", 3, 0, 50)
	clean := s3store.NewMemory()
	cfg := testConfig(brokers, "f")
	cfg.Name = "clean"
	cfg.FlushSize = 7
	runSink(t, cfg, clean)

	cfg.Name = "flaky"
	if testing.Verbose() {
		cfg.KafkaOpts = []kgo.Opt{kgo.WithLogger(kgo.BasicLogger(os.Stderr, kgo.LogLevelInfo, nil))}
	}
	flaky := &flakyStore{Store: s3store.NewMemory(), fails: map[int]bool{2: true, 5: true, 11: true}}
	sum := runSink(t, cfg, flaky)
	if sum.Objects < 1 {
		t.Fatalf("summary %+v", sum)
	}
	want, got := snapshot(t, clean), snapshot(t, flaky.Store)
	if fmt.Sprint(want) != fmt.Sprint(got) {
		t.Fatalf("archive differs from a clean run:\nclean %v\nflaky %v", keysOf(want), keysOf(got))
	}
}

// TestSinkInterruptedRunsEqualCleanRun cancels the sink at random moments
// (the in-process stand-in for SIGKILL; the real one is in make
// integration) and checks the final archive is byte-identical to a clean run.
func TestSinkInterruptedRunsEqualCleanRun(t *testing.T) {
	brokers := newCluster(t, 4, "c")
	produce(t, brokers, "c", 4, 0, 500)
	clean := s3store.NewMemory()
	cfg := testConfig(brokers, "c")
	cfg.Name = "clean"
	cfg.FlushSize = 33
	runSink(t, cfg, clean)

	cfg.Name = "crashy"
	store := s3store.NewMemory()
	interruptedRuns(t, cfg, store, rand.New(rand.NewPCG(1, 2)), 5, 10)
	runSink(t, cfg, store)
	want, got := snapshot(t, clean), snapshot(t, store)
	if len(want) == 0 || fmt.Sprint(want) != fmt.Sprint(got) {
		t.Fatalf("archive differs from a clean run: %d vs %d objects", len(want), len(got))
	}
}

// TestSinkZstdInterruptedRunsEqualCleanRun: with JSON+zstd, objects of
// one block and of several (flush.size 150 of 1 KiB records, the last of
// each partition smaller), interrupted runs whose format's encoders served
// other objects before leave an archive byte-identical to a clean run's.
func TestSinkZstdInterruptedRunsEqualCleanRun(t *testing.T) {
	brokers := newCluster(t, 3, "z")
	cl, err := kgo.NewClient(kgo.SeedBrokers(brokers...), kgo.RecordPartitioner(kgo.ManualPartitioner()))
	if err != nil {
		t.Fatal(err)
	}
	var recs []*kgo.Record
	for p := range int32(3) {
		for i := range 400 {
			pad := strings.Repeat(fmt.Sprintf("%03x", i*7919%1000), 400)[:1000]
			recs = append(recs, &kgo.Record{Topic: "z", Partition: p, Value: fmt.Appendf(nil, `{"p":%d,"i":%d,"pad":%q}`, p, i, pad)})
		}
	}
	if err := cl.ProduceSync(context.Background(), recs...).FirstErr(); err != nil {
		t.Fatal(err)
	}
	cl.Close()
	zf, err := format.WithZstd(format.NewJSON(), -1)
	if err != nil {
		t.Fatal(err)
	}
	clean := s3store.NewMemory()
	cfg := testConfig(brokers, "z")
	cfg.Name, cfg.FlushSize, cfg.Format = "clean", 150, zf
	runSink(t, cfg, clean)

	cfg.Name = "crashy"
	store := s3store.NewMemory()
	interruptedRuns(t, cfg, store, rand.New(rand.NewPCG(3, 4)), 4, 10)
	runSink(t, cfg, store)
	want, got := snapshot(t, clean), snapshot(t, store)
	if len(want) != 9 || fmt.Sprint(want) != fmt.Sprint(got) {
		t.Fatalf("archive differs from a clean run: %d vs %d objects", len(want), len(got))
	}
	for k, v := range want {
		if !strings.HasSuffix(k, ".json.zst") || (strings.HasSuffix(k, "0000000000.json.zst") && len(v) < 1000) {
			t.Fatalf("object %s of %d bytes", k, len(v))
		}
	}
}

func TestSinkTwoInstancesSplitPartitions(t *testing.T) {
	brokers := newCluster(t, 4, "g")
	produce(t, brokers, "g", 4, 0, 30)
	clean := s3store.NewMemory()
	cfg := testConfig(brokers, "g")
	cfg.Name = "clean"
	cfg.FlushSize = 5
	runSink(t, cfg, clean)

	cfg.Name = "pair"
	cfg.Once = false
	store := s3store.NewMemory()
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	var total atomic.Int64
	var wg sync.WaitGroup
	sums := make([]Summary, 2)
	for i := range 2 {
		s, _ := New(cfg, store, nil)
		s.OnObject = func(f FileStats) {
			if total.Add(f.Records) == 120 {
				cancel()
			}
		}
		wg.Add(1)
		go func() {
			defer wg.Done()
			sums[i], _ = s.Run(ctx)
		}()
	}
	go func() { time.Sleep(45 * time.Second); cancel() }()
	wg.Wait()
	if sums[0].Partitions+sums[1].Partitions < 4 {
		t.Fatalf("partitions %d + %d", sums[0].Partitions, sums[1].Partitions)
	}
	want, got := snapshot(t, clean), snapshot(t, store)
	if fmt.Sprint(want) != fmt.Sprint(got) || total.Load() != 120 {
		t.Fatalf("two instances archived %d records into %d objects; clean run has %d objects", total.Load(), len(got), len(want))
	}
}

func TestSinkMissingTopic(t *testing.T) {
	brokers := newCluster(t, 1, "exists")
	s, _ := New(testConfig(brokers, "exists", "nope"), s3store.NewMemory(), nil)
	_, err := s.Run(context.Background())
	if err == nil || !strings.Contains(err.Error(), "nope") {
		t.Fatalf("want error naming missing topic, got %v", err)
	}
}

// TestSinkUnreachableBroker: --once gives up on brokers that cannot be
// reached after OnceTimeout (it retries until then), naming the address.
func TestSinkUnreachableBroker(t *testing.T) {
	cfg := testConfig([]string{"127.0.0.1:1"}, "x")
	cfg.OnceTimeout = 3 * time.Second
	s, _ := New(cfg, s3store.NewMemory(), nil)
	start := time.Now()
	_, err := s.Run(context.Background())
	var ue *outage.UnreachableError
	if !errors.As(err, &ue) || ue.Dep != outage.Broker || !strings.Contains(err.Error(), "127.0.0.1:1") || !strings.Contains(err.Error(), "Kafka brokers") {
		t.Fatalf("want an unreachable error naming the brokers and the address, got %v", err)
	}
	if d := time.Since(start); d < cfg.OnceTimeout || d > cfg.OnceTimeout+5*time.Second {
		t.Fatalf("gave up after %v, want about --once-timeout %v", d, cfg.OnceTimeout)
	}
}

var _ = bytes.Equal

// TestSinkRegexPicksUpNewTopics checks that topics.regex matches whole
// names and that a matching topic created while the sink runs is archived.
func TestSinkRegexPicksUpNewTopics(t *testing.T) {
	c, err := kfake.NewCluster(kfake.NumBrokers(1), kfake.SeedTopics(1, "ev-a", "ev-a-copy"))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(c.Close)
	brokers := c.ListenAddrs()
	produce(t, brokers, "ev-a", 1, 0, 2)
	produce(t, brokers, "ev-a-copy", 1, 0, 2) // "ev-." must not match it
	cfg := testConfig(brokers)
	cfg.TopicsRegex = "ev-."
	cfg.Once = false
	cfg.FlushSize = 2
	cfg.KafkaOpts = []kgo.Opt{kgo.MetadataMinAge(100 * time.Millisecond), kgo.MetadataMaxAge(300 * time.Millisecond)}
	store := s3store.NewMemory()
	s, _ := New(cfg, store, nil)
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	var seen sync.Map
	s.OnObject = func(f FileStats) {
		seen.Store(f.Key, true)
		if _, ok := seen.Load("topics/ev-b/partition=0/ev-b+0+0000000000.json"); ok {
			cancel()
		}
	}
	done := make(chan error, 1)
	go func() { _, err := s.Run(ctx); done <- err }()
	// Create the new topic once the sink has archived the first one.
	for {
		if _, ok := seen.Load("topics/ev-a/partition=0/ev-a+0+0000000000.json"); ok {
			break
		}
		select {
		case err := <-done:
			t.Fatalf("sink stopped before archiving ev-a: %v", err)
		case <-ctx.Done():
			t.Fatal("ev-a was not archived")
		case <-time.After(20 * time.Millisecond):
		}
	}
	adm, _ := kgo.NewClient(kgo.SeedBrokers(brokers...))
	defer adm.Close()
	if _, err := kadm.NewClient(adm).CreateTopic(ctx, 1, 1, nil, "ev-b"); err != nil {
		t.Fatal(err)
	}
	produce(t, brokers, "ev-b", 1, 0, 2)
	if err := <-done; err != nil {
		t.Fatal(err)
	}
	got := keysOf(snapshot(t, store))
	want := "topics/ev-a/partition=0/ev-a+0+0000000000.json topics/ev-b/partition=0/ev-b+0+0000000000.json"
	if strings.Join(got, " ") != want {
		t.Fatalf("keys %v, want %s", got, want)
	}
}

// interruptedRuns runs the sink runs times on store, cancelling each run
// (the in-process stand-in for SIGKILL) once a random 1..maxStop objects
// are complete.
func interruptedRuns(t *testing.T, cfg Config, store s3store.Store, rnd *rand.Rand, runs, maxStop int) {
	t.Helper()
	for range runs {
		s, err := New(cfg, store, nil)
		if err != nil {
			t.Fatal(err)
		}
		ctx, cancel := context.WithCancel(context.Background())
		var n atomic.Int64
		stopAt := int64(1 + rnd.IntN(maxStop))
		s.OnObject = func(FileStats) {
			if n.Add(1) == stopAt {
				cancel()
			}
		}
		if _, err := s.Run(ctx); err != nil {
			cancel()
			t.Fatal(err)
		}
		cancel()
	}
}
