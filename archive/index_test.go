package archive

import (
	"bytes"
	"context"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"hash/crc32"
	"log/slog"
	"math/rand/v2"
	"reflect"
	"strings"
	"testing"
	"time"

	"github.com/kafkas3/kafkas3/format"
	"github.com/kafkas3/kafkas3/index"
	"github.com/kafkas3/kafkas3/s3store"
	"github.com/twmb/franz-go/pkg/kadm"
	"github.com/twmb/franz-go/pkg/kgo"
)

func indexConfig(brokers []string, topics ...string) Config {
	cfg := testConfig(brokers, topics...)
	cfg.IndexPrefix = index.DefaultPrefix
	return cfg
}

// loadIndex reads the archive index of store and checks that every entry's
// objects exist with the size and SHA-256 it gives, and that every object
// under topics.dir belongs to exactly one live entry.
func loadIndex(t *testing.T, store s3store.Store) *index.Index {
	t.Helper()
	ix, err := index.Load(context.Background(), store, index.DefaultPrefix, nil)
	if err != nil {
		t.Fatal(err)
	}
	objs := snapshot(t, store)
	seen := map[string]bool{}
	for _, e := range ix.Entries {
		for _, o := range e.Objects {
			body, ok := objs[o.Key]
			if !ok {
				t.Errorf("entry %s: object %s is not in the store", e.Key, o.Key)
				continue
			}
			sum := sha256.Sum256([]byte(body))
			crc := index.FormatCRC32C(crc32.Checksum([]byte(body), crc32.MakeTable(crc32.Castagnoli)))
			if e.V != index.Version || o.Size != int64(len(body)) || o.CRC32C != crc || (o.SHA256 != "" && o.SHA256 != hex.EncodeToString(sum[:])) {
				t.Errorf("object %s: index v%d says %d bytes crc32c %s sha256 %s, store has %d bytes crc32c %s sha256 %x",
					o.Key, e.V, o.Size, o.CRC32C, o.SHA256, len(body), crc, sum)
			}
			if seen[o.Key] {
				t.Errorf("object %s is in two live entries", o.Key)
			}
			seen[o.Key] = true
		}
	}
	for k := range objs {
		if strings.HasPrefix(k, "topics/") && !seen[k] {
			t.Errorf("object %s has no index entry", k)
		}
	}
	return ix
}

// TestIndexDescribesEveryObject archives with keys and headers objects and
// a skipped null: every object is in the index with its size, SHA-256 and
// offsets, one index object per rotation, and the coverage is complete.
func TestIndexDescribesEveryObject(t *testing.T) {
	brokers := newCluster(t, 2, "ix")
	var recs []*kgo.Record
	for p := range int32(2) {
		for i := range 10 {
			r := &kgo.Record{Topic: "ix", Partition: p, Key: fmt.Appendf(nil, "k%d", i), Value: fmt.Appendf(nil, `{"i":%d}`, i),
				Timestamp: time.UnixMilli(1_700_000_000_000 + int64(i)*10)}
			if i == 4 {
				r.Value = nil // ignored: offset 4 is absent from the objects
			}
			recs = append(recs, r)
		}
	}
	produceRecs(t, brokers, recs...)
	store := s3store.NewMemory()
	cfg := indexConfig(brokers, "ix")
	cfg.NullValues = NullIgnore
	cfg.KeysFormat = &PartFormat{Format: format.NewJSON(), Kind: format.KindJSON}
	cfg.HeadersFormat = &PartFormat{Format: format.NewJSON(), Kind: format.KindJSON}
	sum := runSink(t, cfg, store)

	ix := loadIndex(t, store)
	// flush.size 3 over 9 written records per partition: 3 rotations.
	if ix.IndexObjects != 6 || sum.IndexObjects != 6 || len(ix.Entries) != 6 || ix.Superseded != 0 {
		t.Fatalf("index objects %d (summary %d), entries %d, superseded %d; want 6, 6, 6, 0",
			ix.IndexObjects, sum.IndexObjects, len(ix.Entries), ix.Superseded)
	}
	if !strings.HasSuffix(sum.String(), " index_objects=6") {
		t.Errorf("summary line %q", sum)
	}
	e := ix.Entries[1] // partition 0, second object: offsets 3, 5, 6
	want := index.Entry{V: index.Version, Topic: "ix", Partition: 0, Key: "topics/ix/partition=0/ix+0+0000000003.json",
		Runs: []index.Run{{First: 3, Last: 3}, {First: 5, Last: 6}}, Records: 3, From: 3, Commit: 7,
		MinTS: 1_700_000_000_030, MaxTS: 1_700_000_000_060, TopicID: topicIDOf(t, brokers, "ix"),
		MaxRecordBytes: index.RecordSize(2, 7, 0, 0)} // "k3" and {"i":3}, no headers; every record has a key
	got := e
	got.Objects = nil
	if !reflect.DeepEqual(got, want) {
		t.Fatalf("entry\n%+v\nwant\n%+v", got, want)
	}
	var parts []string
	for _, o := range e.Objects {
		parts = append(parts, o.Part+"="+o.Key)
	}
	if w := "=topics/ix/partition=0/ix+0+0000000003.json keys=topics/ix/partition=0/ix+0+0000000003.keys.json headers=topics/ix/partition=0/ix+0+0000000003.headers.json"; strings.Join(parts, " ") != w {
		t.Errorf("objects %s\nwant %s", strings.Join(parts, " "), w)
	}
	for _, p := range index.Analyze(ix.Entries) {
		if !p.Clean() || p.From != 0 || p.Commit != 10 || p.Records != 9 || p.Absent != 1 {
			t.Errorf("partition %d: clean %v from %d commit %d records %d absent %d; want clean 0 10 9 1",
				p.Partition, p.Clean(), p.From, p.Commit, p.Records, p.Absent)
		}
	}

	// A second run resumes at the committed offset: its span starts there.
	produceRecs(t, brokers, &kgo.Record{Topic: "ix", Partition: 1, Key: []byte("k10"), Value: []byte(`{"i":10}`)})
	sum = runSink(t, cfg, store)
	ix = loadIndex(t, store)
	if sum.IndexObjects != 1 {
		t.Fatalf("second run wrote %d index objects, want 1", sum.IndexObjects)
	}
	last := ix.Entries[len(ix.Entries)-1]
	if last.From != 10 || last.Commit != 11 || last.First() != 10 {
		t.Fatalf("second run's entry %+v, want from 10 commit 11", last)
	}
	for _, p := range index.Analyze(ix.Entries) {
		if !p.Clean() {
			t.Errorf("partition %d: gaps %v overlaps %v", p.Partition, p.Gaps, p.Overlaps)
		}
	}
}

// TestIndexOffWritesNone: kafkas3.index.enabled=false writes no index
// object and hashes nothing.
func TestIndexOffWritesNone(t *testing.T) {
	brokers := newCluster(t, 1, "off")
	produce(t, brokers, "off", 1, 0, 7)
	store := s3store.NewMemory()
	s, err := New(testConfig(brokers, "off"), store, nil)
	if err != nil {
		t.Fatal(err)
	}
	var shas []string
	s.OnObject = func(f FileStats) { shas = append(shas, f.SHA256+f.CRC32C) }
	sum, err := s.Run(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	for k := range snapshot(t, store) {
		if strings.HasPrefix(k, index.DefaultPrefix) {
			t.Errorf("index object %s written with the index off", k)
		}
	}
	if sum.IndexObjects != 0 || len(shas) != 3 || shas[0] != "" {
		t.Fatalf("index objects %d, object hashes %q", sum.IndexObjects, shas)
	}
}

// TestIndexReplayRewritesIdenticalBytes: store failures (on data and on
// index objects) and interrupted runs end with an archive, index
// included, byte-identical to a clean run's.
func TestIndexReplayRewritesIdenticalBytes(t *testing.T) {
	brokers := newCluster(t, 3, "d")
	produce(t, brokers, "d", 3, 0, 200)
	clean := s3store.NewMemory()
	cfg := indexConfig(brokers, "d")
	cfg.Name = "clean"
	cfg.FlushSize = 17
	runSink(t, cfg, clean)
	want := asWriter(snapshot(t, clean), cfg.Name, cfg.Name)
	nIndex := 0
	for k := range want {
		if strings.HasPrefix(k, index.Dir(index.DefaultPrefix)) {
			nIndex++
		}
	}
	// 200 records per partition, flush.size 17: 12 rotations.
	if nIndex != 3*12 {
		t.Fatalf("clean run wrote %d index objects, want 36", nIndex)
	}

	t.Run("store failures", func(t *testing.T) {
		c := cfg
		c.Name = "flaky"
		// Each rotation commits one data object, then its index object:
		// the failures hit both kinds.
		flaky := &flakyStore{Store: s3store.NewMemory(), fails: map[int]bool{2: true, 5: true, 9: true}}
		runSink(t, c, flaky)
		if got := asWriter(snapshot(t, flaky.Store), c.Name, cfg.Name); fmt.Sprint(got) != fmt.Sprint(want) {
			t.Fatalf("archive differs from a clean run:\nclean %v\nflaky %v", keysOf(want), keysOf(got))
		}
	})
	t.Run("interrupted", func(t *testing.T) {
		c := cfg
		c.Name = "crashy"
		store := s3store.NewMemory()
		interruptedRuns(t, c, store, rand.New(rand.NewPCG(3, 4)), 5, 12)
		runSink(t, c, store)
		if got := asWriter(snapshot(t, store), c.Name, cfg.Name); fmt.Sprint(got) != fmt.Sprint(want) {
			t.Fatalf("archive differs from a clean run: %d vs %d objects", len(want), len(got))
		}
	})
}

// asWriter renames the index objects of the sink named from in a snapshot
// as the sink named to would have written them: runs of two connector
// names (two groups) differ only in the writer token of their index keys.
// It drops the other objects under the index prefix (topic descriptions,
// named by the wall time).
func asWriter(snap map[string]string, from, to string) map[string]string {
	fw, tw := "-"+index.WriterOf("connect-"+from)+".jsonl", "-"+index.WriterOf("connect-"+to)+".jsonl"
	out := map[string]string{}
	for k, v := range snap {
		if strings.HasPrefix(k, index.DefaultPrefix) && !strings.HasPrefix(k, index.Dir(index.DefaultPrefix)) {
			continue
		}
		if strings.HasPrefix(k, index.DefaultPrefix) {
			k = strings.TrimSuffix(k, fw) + tw
		}
		out[k] = v
	}
	return out
}

// refuseIndex fails every commit of an index object, as a store that
// denies writes under the index's log folder (the start checkpoint,
// under the checkpoints folder, is written).
type refuseIndex struct{ s3store.Store }

func (r refuseIndex) Create(ctx context.Context, key string) (s3store.ObjectWriter, error) {
	w, err := r.Store.Create(ctx, key)
	if err != nil || !strings.HasPrefix(key, index.Dir(index.DefaultPrefix)) {
		return w, err
	}
	return deniedWriter{w}, nil
}

// TestIndexFailureCommitsNothing: when the index object cannot be written,
// the rotation's offset is never committed, though its data objects are
// in the store.
func TestIndexFailureCommitsNothing(t *testing.T) {
	brokers := newCluster(t, 1, "nf")
	produce(t, brokers, "nf", 1, 0, 5)
	mem := s3store.NewMemory()
	cfg := indexConfig(brokers, "nf")
	s, err := New(cfg, refuseIndex{mem}, nil)
	if err != nil {
		t.Fatal(err)
	}
	_, err = s.Run(context.Background())
	if !errors.Is(err, s3store.ErrAccessDenied) || !strings.Contains(err.Error(), index.Key(index.DefaultPrefix, "nf", 0, 3, index.WriterOf("connect-"+cfg.Name))) {
		t.Fatalf("err = %v, want access denied naming the index object", err)
	}
	if _, ok := snapshot(t, mem)["topics/nf/partition=0/nf+0+0000000000.json"]; !ok {
		t.Fatalf("the data object should be stored before its index object")
	}
	cl, err := kgo.NewClient(kgo.SeedBrokers(brokers...))
	if err != nil {
		t.Fatal(err)
	}
	defer cl.Close()
	offs, err := kadm.NewClient(cl).FetchOffsets(context.Background(), "connect-test")
	if err != nil && !strings.Contains(err.Error(), "GROUP_ID_NOT_FOUND") {
		t.Fatal(err)
	}
	if o, ok := offs.Lookup("nf", 0); ok && o.At >= 0 {
		t.Fatalf("offset %d committed without an index object", o.At)
	}
}

// TestIndexTransactionMarkers archives a transactional topic: the commit
// markers are absent offsets inside the spans, never gaps, also when a
// --once run ends on a marker (the restamped index object commits past
// it) and the next run continues from there.
func TestIndexTransactionMarkers(t *testing.T) {
	brokers := newCluster(t, 1, "tx")
	txn := func(from, n int) {
		cl, err := kgo.NewClient(kgo.SeedBrokers(brokers...), kgo.TransactionalID("tx-test"), kgo.RecordPartitioner(kgo.ManualPartitioner()))
		if err != nil {
			t.Fatal(err)
		}
		defer cl.Close()
		ctx := context.Background()
		if err := cl.BeginTransaction(); err != nil {
			t.Fatal(err)
		}
		for i := from; i < from+n; i++ {
			if err := cl.ProduceSync(ctx, &kgo.Record{Topic: "tx", Value: fmt.Appendf(nil, "%d", i)}).FirstErr(); err != nil {
				t.Fatal(err)
			}
		}
		if err := cl.EndTransaction(ctx, kgo.TryCommit); err != nil {
			t.Fatal(err)
		}
	}
	txn(0, 3) // offsets 0-2, marker 3
	txn(3, 2) // offsets 4-5, marker 6
	store := s3store.NewMemory()
	cfg := indexConfig(brokers, "tx")
	cfg.FlushSize = 3
	runSink(t, cfg, store)
	txn(5, 3) // offsets 7-9, marker 10
	runSink(t, cfg, store)

	ix := loadIndex(t, store)
	ps := index.Analyze(ix.Entries)
	if len(ps) != 1 {
		t.Fatalf("%d partitions", len(ps))
	}
	p := ps[0]
	if !p.Clean() || p.From != 0 || p.Commit != 11 || p.Records != 8 || p.Absent != 3 {
		t.Fatalf("coverage: gaps %v overlaps %v from %d commit %d records %d absent %d; want clean, 0, 11, 8, 3",
			p.Gaps, p.Overlaps, p.From, p.Commit, p.Records, p.Absent)
	}
	if ix.Superseded == 0 {
		t.Fatalf("no entry was restamped past a final marker")
	}
	// The group committed past the last marker.
	cl, _ := kgo.NewClient(kgo.SeedBrokers(brokers...))
	defer cl.Close()
	offs, err := kadm.NewClient(cl).FetchOffsets(context.Background(), "connect-test")
	if err != nil {
		t.Fatal(err)
	}
	if o, _ := offs.Lookup("tx", 0); o.At != 11 {
		t.Fatalf("committed %d, want 11", o.At)
	}
	var b bytes.Buffer
	for _, e := range ix.Entries {
		fmt.Fprintf(&b, "%s %v from=%d commit=%d\n", e.Key, e.Runs, e.From, e.Commit)
	}
	t.Logf("entries:\n%s", b.String())
}

// TestIndexSkippedOnlyRuns: offsets that are only skipped (ignored nulls)
// after the last rotation are committed through index objects that
// restamp the last entries with the new commit: from memory, from the
// store when a new run starts with nothing else, and every flush.size
// skipped offsets. The coverage stays without gaps.
func TestIndexSkippedOnlyRuns(t *testing.T) {
	brokers := newCluster(t, 1, "sn")
	produce(t, brokers, "sn", 1, 0, 3) // 0-2: one rotation at flush.size 3
	store := s3store.NewMemory()
	cfg := indexConfig(brokers, "sn")
	cfg.NullValues = NullIgnore
	runSink(t, cfg, store)
	null := func(n int) {
		var recs []*kgo.Record
		for range n {
			recs = append(recs, &kgo.Record{Topic: "sn", Value: nil})
		}
		produceRecs(t, brokers, recs...)
	}
	null(1) // offset 3: a run that reads only a skipped record
	sum := runSink(t, cfg, store)
	if sum.IndexObjects != 1 {
		t.Fatalf("run over one ignored null wrote %d index objects, want 1", sum.IndexObjects)
	}
	null(5) // offsets 4-8: flush.size skipped offsets commit at 7, then 9
	sum = runSink(t, cfg, store)
	if sum.IndexObjects != 2 {
		t.Fatalf("run over five ignored nulls wrote %d index objects, want 2", sum.IndexObjects)
	}
	var keys []string
	for _, k := range keysOf(snapshot(t, store)) {
		if strings.HasPrefix(k, index.Dir(index.DefaultPrefix)) {
			keys = append(keys, strings.TrimSuffix(strings.TrimPrefix(k, "_kafkas3/index/sn/0/000000000000000000"), "-"+index.WriterOf("connect-"+cfg.Name)+".jsonl"))
		}
	}
	if got := strings.Join(keys, " "); got != "03 04 07 09" {
		t.Fatalf("index objects %s, want commits 3, 4, 7 and 9", got)
	}
	ix := loadIndex(t, store)
	if len(ix.Entries) != 1 || ix.Superseded != 3 || ix.Entries[0].From != 0 || ix.Entries[0].Commit != 9 {
		t.Fatalf("entries %+v superseded %d; want the one entry restamped to commit 9", ix.Entries, ix.Superseded)
	}
	p := index.Analyze(ix.Entries)[0]
	if !p.Clean() || p.Commit != 9 || p.Absent != 6 {
		t.Fatalf("coverage: gaps %v commit %d absent %d", p.Gaps, p.Commit, p.Absent)
	}
}

// TestIndexRotateWithoutFiles: a rotation with no open file (only skipped
// records since the last one) goes through restamp, so no offset becomes
// committable without an index object when there is an index to extend;
// with none yet (nothing indexed below) it is committed plainly.
func TestIndexRotateWithoutFiles(t *testing.T) {
	ctx := context.Background()
	store := s3store.NewMemory()
	cfg := indexConfig(nil)
	cfg.FlushSize = 100
	w := newPartitionWriter("t", 0, -1, &cfg, store, slog.New(slog.DiscardHandler))
	if err := w.skip(ctx, 5); err != nil {
		t.Fatal(err)
	}
	if err := w.rotate(ctx); err != nil {
		t.Fatal(err)
	}
	if w.pending != 6 || len(snapshot(t, store)) != 0 {
		t.Fatalf("pending %d, objects %v; want 6 and none (nothing indexed to extend)", w.pending, keysOf(snapshot(t, store)))
	}
	// With an index object written, the same path restamps it.
	w.lastEntries = []index.Entry{{V: 1, Topic: "t", Key: "k", Objects: []index.Object{{Key: "k", SHA256: strings.Repeat("0", 64)}},
		Runs: []index.Run{{First: 6, Last: 6}}, Records: 1, From: 6, Commit: 7}}
	w.from = 7
	if err := w.skip(ctx, 8); err != nil {
		t.Fatal(err)
	}
	if err := w.rotate(ctx); err != nil {
		t.Fatal(err)
	}
	// Before it, the writer's start checkpoint at 7 (checkpoint.Begin).
	wantKeys := []string{
		index.CheckpointKey(index.DefaultPrefix, "t", 0, 7, index.WriterOf(cfg.GroupID)),
		index.Key(index.DefaultPrefix, "t", 0, 9, index.WriterOf(cfg.GroupID)),
	}
	if w.pending != 9 || fmt.Sprint(keysOf(snapshot(t, store))) != fmt.Sprint(wantKeys) {
		t.Fatalf("pending %d, objects %v; want 9, the start checkpoint and the restamped index object", w.pending, keysOf(snapshot(t, store)))
	}
}

// TestIndexAbortedTransactions: the sink reads committed records only, so
// an aborted transaction's records never reach the archive; their offsets
// and the markers are absent in the index, not gaps.
func TestIndexAbortedTransactions(t *testing.T) {
	brokers := abortedTopic(t)
	store := s3store.NewMemory()
	cfg := indexConfig(brokers, "ab")
	cfg.FlushSize = 10
	sum := runSink(t, cfg, store)
	objs := snapshot(t, store)
	if got := objs["topics/ab/partition=0/ab+0+0000000000.json"]; got != "1\n2\n3\n" || sum.Records != 3 {
		t.Fatalf("archive %q (%d records), want the committed records 1, 2, 3 only", got, sum.Records)
	}
	ix := loadIndex(t, store)
	p := index.Analyze(ix.Entries)[0]
	if fmt.Sprint(ix.Entries[0].Runs) != "[0-1 6]" || !p.Clean() || p.Commit != 8 || p.Absent != 5 {
		t.Fatalf("runs %v, gaps %v, commit %d, absent %d; want [0-1 6], none, 8, 5", ix.Entries[0].Runs, p.Gaps, p.Commit, p.Absent)
	}
}

// TestIndexReadUncommitted: with isolation.level=read_uncommitted (Kafka
// Connect's consumer default) the aborted records are archived too, as
// the connector would; only the markers are absent.
func TestIndexReadUncommitted(t *testing.T) {
	brokers := abortedTopic(t)
	store := s3store.NewMemory()
	cfg := indexConfig(brokers, "ab")
	cfg.FlushSize = 10
	cfg.ReadUncommitted = true
	sum := runSink(t, cfg, store)
	objs := snapshot(t, store)
	if got := objs["topics/ab/partition=0/ab+0+0000000000.json"]; got != "1\n2\n\"x\"\n\"y\"\n3\n" || sum.Records != 5 {
		t.Fatalf("archive %q (%d records), want every record 1, 2, x, y, 3", got, sum.Records)
	}
	ix := loadIndex(t, store)
	p := index.Analyze(ix.Entries)[0]
	if fmt.Sprint(ix.Entries[0].Runs) != "[0-1 3-4 6]" || !p.Clean() || p.Commit != 8 {
		t.Fatalf("runs %v, gaps %v, commit %d; want [0-1 3-4 6], none, 8", ix.Entries[0].Runs, p.Gaps, p.Commit)
	}
}

// abortedTopic returns a cluster whose topic "ab" holds a committed
// transaction (offsets 0-1, marker 2), an aborted one (3-4, marker 5) and
// a committed one (6, marker 7).
func abortedTopic(t *testing.T) []string {
	t.Helper()
	brokers := newCluster(t, 1, "ab")
	txn := func(commit kgo.TransactionEndTry, vals ...string) {
		cl, err := kgo.NewClient(kgo.SeedBrokers(brokers...), kgo.TransactionalID("ab-test"), kgo.RecordPartitioner(kgo.ManualPartitioner()))
		if err != nil {
			t.Fatal(err)
		}
		defer cl.Close()
		ctx := context.Background()
		if err := cl.BeginTransaction(); err != nil {
			t.Fatal(err)
		}
		for _, v := range vals {
			if err := cl.ProduceSync(ctx, &kgo.Record{Topic: "ab", Value: []byte(v)}).FirstErr(); err != nil {
				t.Fatal(err)
			}
		}
		if err := cl.EndTransaction(ctx, commit); err != nil {
			t.Fatal(err)
		}
	}
	txn(kgo.TryCommit, "1", "2") // 0-1, marker 2
	txn(kgo.TryAbort, "x", "y")  // 3-4 aborted, marker 5
	txn(kgo.TryCommit, "3")      // 6, marker 7
	return brokers
}

// topicIDOf returns topic's Kafka id as the index records it.
func topicIDOf(t *testing.T, brokers []string, topic string) string {
	t.Helper()
	cl, err := kgo.NewClient(kgo.SeedBrokers(brokers...))
	if err != nil {
		t.Fatal(err)
	}
	defer cl.Close()
	md, err := kadm.NewClient(cl).Metadata(t.Context(), topic)
	if err != nil {
		t.Fatal(err)
	}
	id := index.FormatTopicID(md.Topics[topic].ID)
	if id == "" {
		t.Fatalf("topic %s has no id", topic)
	}
	return id
}

// TestIndexDigestSHA256: kafkas3.index.digest=sha256 (IndexSHA256) gives
// every object's SHA-256 besides its CRC32C (loadIndex checks both
// against the stored bytes); by default the entries give the CRC32C only.
func TestIndexDigestSHA256(t *testing.T) {
	for _, withSHA := range []bool{false, true} {
		topic := fmt.Sprintf("dg%v", withSHA)
		brokers := newCluster(t, 1, topic)
		produce(t, brokers, topic, 1, 0, 7)
		store := s3store.NewMemory()
		cfg := indexConfig(brokers, topic)
		cfg.IndexSHA256 = withSHA
		s, err := New(cfg, store, nil)
		if err != nil {
			t.Fatal(err)
		}
		var stats []FileStats
		s.OnObject = func(f FileStats) { stats = append(stats, f) }
		if _, err := s.Run(context.Background()); err != nil {
			t.Fatal(err)
		}
		ix := loadIndex(t, store)
		if len(ix.Entries) == 0 || len(stats) == 0 {
			t.Fatalf("sha256 %v: %d entries, %d objects", withSHA, len(ix.Entries), len(stats))
		}
		for _, e := range ix.Entries {
			for _, o := range e.Objects {
				if (o.SHA256 != "") != withSHA || o.CRC32C == "" {
					t.Errorf("sha256 %v: object %s has crc32c %q sha256 %q", withSHA, o.Key, o.CRC32C, o.SHA256)
				}
			}
		}
		for _, f := range stats {
			if (f.SHA256 != "") != withSHA || f.CRC32C == "" {
				t.Errorf("sha256 %v: FileStats %+v", withSHA, f)
			}
		}
	}
}
