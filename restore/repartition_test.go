package restore

import (
	"bytes"
	"context"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"regexp"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/kafkas3/kafkas3/format"
	"github.com/kafkas3/kafkas3/s3store"
	"github.com/twmb/franz-go/pkg/kadm"
	"github.com/twmb/franz-go/pkg/kgo"
)

// murmur2Golden are values of Kafka's Utils.murmur2 (as Java ints): the
// cases of Kafka's own UtilsTest.testMurmur2, and keys of every length
// mod 4; internal/e2e's TestIntegrationMurmur2Oracle computes them all
// again with Kafka's jar on the test bed's JVM.
var murmur2Golden = []struct {
	key  string
	hash int32
}{
	{"21", -973932308},
	{"foobar", -790332482},
	{"a-little-bit-long-string", -985981536},
	{"a-little-bit-longer-string", -1486304829},
	{"lkjh234lh9fiuh90y23oiuhsafujhadof229phr9h19h89h8", -58897971},
	{"abc", 479470107},
}

func TestMurmur2Golden(t *testing.T) {
	for _, c := range murmur2Golden {
		if got := int32(Murmur2([]byte(c.key))); got != c.hash {
			t.Errorf("Murmur2(%q) = %d, Kafka's Utils.murmur2 gives %d", c.key, got, c.hash)
		}
	}
}

// TestMurmur2MatchesKgo compares the placement with franz-go's own port of
// Kafka's default partitioner (kgo.StickyKeyPartitioner with its Kafka
// hasher), over keys of every length from 0 to 40 bytes and partition
// counts 1..64.
func TestMurmur2MatchesKgo(t *testing.T) {
	kp := kgo.StickyKeyPartitioner(nil).ForTopic("t")
	for l := range 41 {
		key := make([]byte, l)
		for i := range key {
			key[i] = byte(l*31 + i*7 + 200) // bytes over 127 too (Java's signed bytes)
		}
		for n := int32(1); n <= 64; n++ {
			want := kp.Partition(&kgo.Record{Key: key}, int(n))
			if got := RepartitionMurmur2.Place(key, 3, 17, n); got != int32(want) {
				t.Fatalf("key of %d bytes on %d partitions: placed on %d, kgo's Kafka partitioner says %d", l, n, got, want)
			}
		}
	}
}

func TestPlaceRoundRobin(t *testing.T) {
	for idx := range int64(20) {
		want := int32((5 + idx) % 7)
		if got := RepartitionRoundRobin.Place([]byte("k"), 5, idx, 7); got != want {
			t.Fatalf("roundrobin: record %d of source partition 5 on 7 partitions went to %d, want %d", idx, got, want)
		}
		if got := RepartitionMurmur2.Place(nil, 5, idx, 7); got != want {
			t.Fatalf("murmur2, no key: record %d of source partition 5 on 7 partitions went to %d, want %d", idx, got, want)
		}
	}
}

// keyedArchive writes parts source partitions of objs objects of per
// records each in fullFormat: keys k0..k(keys-1) (every fifth record has
// none), a header naming the record, and a timestamp.
func keyedArchive(t *testing.T, a *archive, topic string, parts int32, objs, per, keys int) map[int32][]*format.Record {
	want := map[int32][]*format.Record{}
	base := time.UnixMilli(1_700_000_000_000)
	for p := range parts {
		for o := range objs {
			recs := make([]*format.Record, per)
			for i := range recs {
				n := o*per + i
				rec := &format.Record{
					Value:     fmt.Appendf(nil, "p%d-%d", p, n),
					Headers:   []format.Header{{Key: "n", Value: fmt.Appendf(nil, "%d/%d", p, n)}},
					Timestamp: base.Add(time.Duration(int(p)*1_000_000+n) * time.Millisecond),
				}
				if n%5 != 0 {
					rec.Key = fmt.Appendf(nil, "k%d", (n*7+int(p))%keys)
				}
				recs[i] = rec
			}
			a.put(topic, p, int64(o*per), recs)
			want[p] = append(want[p], recs...)
		}
	}
	return want
}

// readCommitted reads topic with isolation.level=read_committed until it
// has total records, then a while longer to find any extra one.
func readCommitted(t *testing.T, brokers []string, topic string, total int) map[int32][]*kgo.Record {
	t.Helper()
	cl, err := kgo.NewClient(kgo.SeedBrokers(brokers...), kgo.ConsumeTopics(topic),
		kgo.FetchIsolationLevel(kgo.ReadCommitted()), kgo.ConsumeResetOffset(kgo.NewOffset().AtStart()))
	if err != nil {
		t.Fatal(err)
	}
	defer cl.Close()
	out := map[int32][]*kgo.Record{}
	got := 0
	ctx := testContext(t)
	var extra context.Context
	for {
		pctx := ctx
		if got >= total {
			if extra == nil {
				var cancel context.CancelFunc
				extra, cancel = context.WithTimeout(ctx, 500*time.Millisecond)
				defer cancel()
			}
			pctx = extra
		}
		fs := cl.PollFetches(pctx)
		if pctx.Err() != nil {
			if got < total {
				t.Fatalf("read %s: got %d of %d records", topic, got, total)
			}
			return out
		}
		fs.EachError(func(_ string, p int32, err error) {
			if !errors.Is(err, context.DeadlineExceeded) {
				t.Fatalf("fetch %s/%d: %v", topic, p, err)
			}
		})
		fs.EachRecord(func(r *kgo.Record) {
			out[r.Partition] = append(out[r.Partition], r)
			got++
		})
	}
}

// checkPlacement asserts that the target partitions hold every archived
// record exactly once, where m places it on n partitions: each target
// partition's records of one source partition are exactly that source
// partition's records placed there, in source order, with their key,
// value, headers and timestamp.
func checkPlacement(t *testing.T, got map[int32][]*kgo.Record, want map[int32][]*format.Record, m Repartition, n int32) {
	t.Helper()
	for tp := range got {
		if tp >= n {
			t.Fatalf("records in partition %d of a %d-partition target", tp, n)
		}
	}
	for src, recs := range want {
		expect := map[int32][]*format.Record{}
		for i, rec := range recs {
			p := m.Place(rec.Key, src, int64(i), n)
			expect[p] = append(expect[p], rec)
		}
		for tp := range n {
			var have []*kgo.Record
			for _, r := range got[tp] {
				if bytes.HasPrefix(r.Value, fmt.Appendf(nil, "p%d-", src)) {
					have = append(have, r)
				}
			}
			if len(have) != len(expect[tp]) {
				t.Fatalf("target partition %d holds %d records of source partition %d, want %d", tp, len(have), src, len(expect[tp]))
			}
			for i, w := range expect[tp] {
				if !sameRecord(have[i], w) || (!w.Timestamp.IsZero() && have[i].Timestamp.UnixMilli() != w.Timestamp.UnixMilli()) {
					t.Fatalf("target partition %d, record %d of source partition %d: got key %q value %q headers %v ts %v, want key %q value %q headers %v ts %v",
						tp, i, src, have[i].Key, have[i].Value, have[i].Headers, have[i].Timestamp, w.Key, w.Value, w.Headers, w.Timestamp)
				}
			}
		}
	}
}

func TestRepartitionPlacement(t *testing.T) {
	for _, c := range []struct {
		m          Repartition
		from, into int32
	}{{RepartitionMurmur2, 4, 7}, {RepartitionMurmur2, 6, 3}, {RepartitionRoundRobin, 3, 5}} {
		t.Run(fmt.Sprintf("%s %d to %d", c.m, c.from, c.into), func(t *testing.T) {
			brokers := newCluster(t, c.into, "dst")
			a := newArchive(t, fullFormat{})
			want := keyedArchive(t, a, "src", c.from, 3, 200, 37)
			cfg := baseConfig(brokers, a.f, "src")
			cfg.Rename, cfg.Repartition, cfg.TxnRecords = "dst", c.m, 70
			sum, err := mustNew(t, cfg, a, nil).Run(testContext(t), nil)
			if err != nil {
				t.Fatal(err)
			}
			total := int(c.from) * 600
			if sum.Records != int64(total) || sum.AlreadyPresent != 0 {
				t.Fatalf("summary %+v, want %d records", sum, total)
			}
			checkPlacement(t, readCommitted(t, brokers, "dst", total), want, c.m, c.into)
			// Run again: nothing to do.
			sum, err = mustNew(t, cfg, a, nil).Run(testContext(t), nil)
			if err != nil || sum.Records != 0 || sum.AlreadyPresent != int64(total) {
				t.Fatalf("second run: %+v, %v; want nothing produced, %d already present", sum, err, total)
			}
		})
	}
}

// TestRepartitionResumeAfterCancel cancels repartitioning runs in the
// middle of objects, with transactions open and records in flight, and
// runs again: every record lands exactly once, in its place and order.
func TestRepartitionResumeAfterCancel(t *testing.T) {
	brokers := newCluster(t, 5, "dst")
	a := newArchive(t, fullFormat{})
	want := keyedArchive(t, a, "src", 3, 8, 250, 23) // 24 objects, 6,000 records
	cfg := baseConfig(brokers, a.f, "src")
	cfg.Rename, cfg.Repartition, cfg.TxnRecords = "dst", RepartitionMurmur2, 100
	cfg.Parallelism = 2
	cfg.KafkaOpts = []kgo.Opt{kgo.ProducerLinger(0)}
	var produced int64
	for _, at := range []int64{24 + 4, 24 + 9, 24 + 7} {
		ctx, cancel := context.WithCancel(testContext(t))
		store := &cancelStore{Store: a.store, n: at, cancel: cancel}
		r, err := New(cfg, store, nil)
		if err != nil {
			t.Fatal(err)
		}
		sum, err := r.Run(ctx, nil)
		cancel()
		if err == nil {
			t.Fatalf("run cancelled at open %d finished", at)
		}
		t.Logf("cancelled at open %d: committed %d, already present %d", at, sum.Records, sum.AlreadyPresent)
		produced += sum.Records
	}
	if produced == 0 {
		t.Fatal("no cancelled run committed anything: the cancels missed the produce phase")
	}
	sum, err := mustNew(t, cfg, a, nil).Run(testContext(t), nil)
	if err != nil {
		t.Fatal(err)
	}
	if sum.AlreadyPresent != produced || sum.Records+sum.AlreadyPresent != 6000 {
		t.Fatalf("final run: %+v; want %d already present (committed before) and %d produced", sum, produced, 6000-produced)
	}
	checkPlacement(t, readCommitted(t, brokers, "dst", 6000), want, RepartitionMurmur2, 5)
}

func TestRepartitionRefusals(t *testing.T) {
	brokers := newCluster(t, 2, "two", "plain")
	a := newArchive(t, format.NewJSON())
	bigArchive(t, a, "src", 4, 1, 10)
	cfg := baseConfig(brokers, a.f, "src")
	for _, c := range []struct {
		name string
		set  func(*Config)
		want string
	}{
		{"partitions without repartition", func(c *Config) { c.Partitions = 3; c.CreateTopics = true }, "--partitions 3 sets the partition count of a target restored with --repartition"},
		{"partitions without create-topics", func(c *Config) { c.Partitions = 3; c.Repartition = RepartitionMurmur2 }, "pass --create-topics"},
		{"restore-groups", func(c *Config) { c.Repartition = RepartitionRoundRobin; c.RestoreGroups = true }, "offsets count records of one source partition"},
		{"follow", func(c *Config) { c.Repartition = RepartitionMurmur2; c.Follow = true }, "--follow with --repartition"},
	} {
		cfg := cfg
		c.set(&cfg)
		if _, err := New(cfg, a.store, nil); !errors.Is(err, ErrInvalidConfig) || !strings.Contains(err.Error(), c.want) {
			t.Errorf("%s: err = %v, want ErrInvalidConfig saying %q", c.name, err, c.want)
		}
	}
	run := func(cfg Config) error {
		_, err := mustNew(t, cfg, a, nil).Run(testContext(t), nil)
		return err
	}
	// Fewer partitions without --repartition: refused, suggesting it.
	cfg.Rename = "two"
	if err := run(cfg); !errors.Is(err, ErrTooFewPartitions) || !strings.Contains(err.Error(), "--repartition murmur2") {
		t.Fatalf("4 partitions into 2: err = %v, want ErrTooFewPartitions suggesting --repartition", err)
	}
	// --partitions disagreeing with an existing target: refused, naming both.
	rc := cfg
	rc.Repartition, rc.CreateTopics, rc.Partitions = RepartitionMurmur2, true, 5
	if err := run(rc); !errors.Is(err, ErrInvalidConfig) || !strings.Contains(err.Error(), "--partitions 5") || !strings.Contains(err.Error(), `"two" exists with 2 partitions`) {
		t.Fatalf("--partitions 5 into a 2-partition target: err = %v", err)
	}
	// A repartitioned target refuses a plain restore and another placement.
	rc.Partitions = 0
	if err := run(rc); err != nil {
		t.Fatal(err)
	}
	// --create-topics --partitions sets the count; a plain restore of the
	// same count is refused there too.
	four := rc
	four.Rename, four.Partitions = "four", 4
	if err := run(four); err != nil {
		t.Fatal(err)
	}
	if n := len(readCommitted(t, brokers, "four", 40)); n != 4 {
		t.Fatalf("--partitions 4 made a target whose records are on %d partitions", n)
	}
	if d, err := newAdmin(t, brokers).ListTopics(testContext(t), "four"); err != nil || len(d["four"].Partitions) != 4 {
		t.Fatalf("--create-topics --partitions 4 made %d partitions (%v)", len(d["four"].Partitions), err)
	}
	plain := cfg
	plain.Rename = "four"
	if err := run(plain); !errors.Is(err, ErrMarkerMismatch) || !strings.Contains(err.Error(), "--repartition murmur2") {
		t.Fatalf("plain restore into a repartitioned target: err = %v", err)
	}
	rc.Repartition = RepartitionRoundRobin
	if err := run(rc); !errors.Is(err, ErrMarkerMismatch) || !strings.Contains(err.Error(), "placed by murmur2 on 2 partitions") {
		t.Fatalf("roundrobin into a murmur2 target: err = %v", err)
	}
	// A target restored without --repartition refuses a repartitioning one.
	a2 := newArchive(t, format.NewJSON())
	bigArchive(t, a2, "src", 2, 1, 10)
	pc := baseConfig(brokers, a2.f, "src")
	pc.Rename = "plain"
	if _, err := mustNew(t, pc, a2, nil).Run(testContext(t), nil); err != nil {
		t.Fatal(err)
	}
	pc.Repartition = RepartitionMurmur2
	if _, err := mustNew(t, pc, a2, nil).Run(testContext(t), nil); !errors.Is(err, ErrMarkerMismatch) || !strings.Contains(err.Error(), "without --repartition") {
		t.Fatalf("repartitioning restore into a plain restore's target: err = %v", err)
	}
}

// TestRepartitionFilteredResume: with a filter, positions count the kept
// records; cancelled runs and a final one restore each kept record once,
// placed by its index among the kept ones, and count the others as
// filtered.
func TestRepartitionFilteredResume(t *testing.T) {
	brokers := newCluster(t, 4, "dst")
	a := newArchive(t, fullFormat{})
	all := keyedArchive(t, a, "src", 3, 6, 200, 23)
	cfg := baseConfig(brokers, a.f, "src")
	cfg.Rename, cfg.Repartition, cfg.TxnRecords = "dst", RepartitionMurmur2, 40
	cfg.Filter.KeyRegex = regexp.MustCompile(`^(?:k1.*)$`)
	cfg.Parallelism = 1
	cfg.KafkaOpts = []kgo.Opt{kgo.ProducerLinger(0)}
	want := map[int32][]*format.Record{}
	kept := 0
	for p, recs := range all {
		for _, r := range recs {
			if cfg.Filter.KeyRegex.Match(r.Key) && r.Key != nil {
				want[p] = append(want[p], r)
				kept++
			}
		}
	}
	for _, at := range []int64{18 + 3, 18 + 8} {
		ctx, cancel := context.WithCancel(testContext(t))
		r, err := New(cfg, &cancelStore{Store: a.store, n: at, cancel: cancel}, nil)
		if err != nil {
			t.Fatal(err)
		}
		if _, err := r.Run(ctx, nil); err == nil {
			t.Fatalf("run cancelled at open %d finished", at)
		}
		cancel()
	}
	sum, err := mustNew(t, cfg, a, nil).Run(testContext(t), nil)
	if err != nil {
		t.Fatal(err)
	}
	if sum.AlreadyPresent == 0 || sum.Records+sum.AlreadyPresent != int64(kept) || sum.Filtered != int64(3*1200-kept) {
		t.Fatalf("final run: %+v; want some already present, %d kept in all, %d filtered", sum, kept, 3*1200-kept)
	}
	checkPlacement(t, readCommitted(t, brokers, "dst", kept), want, RepartitionMurmur2, 4)
}

// blockStore blocks the n-th object opened until release is closed,
// closing blocked when it gets there.
type blockStore struct {
	s3store.Store
	n                int64
	opens            atomic.Int64
	blocked, release chan struct{}
}

func (b *blockStore) Open(ctx context.Context, key string) (io.ReadCloser, error) {
	if b.opens.Add(1) == b.n {
		close(b.blocked)
		<-b.release
	}
	return b.Store.Open(ctx, key)
}

// TestRepartitionFencesEarlierRun: a run still alive (stuck reading the
// store, a transaction open) while another restores the same target is
// fenced by it: the later run restores everything exactly once, and the
// earlier one fails when it goes on, without adding a record.
func TestRepartitionFencesEarlierRun(t *testing.T) {
	brokers := newCluster(t, 3, "dst")
	a := newArchive(t, fullFormat{})
	want := keyedArchive(t, a, "src", 2, 6, 150, 11)
	cfg := baseConfig(brokers, a.f, "src")
	cfg.Rename, cfg.Repartition, cfg.TxnRecords = "dst", RepartitionRoundRobin, 1000
	cfg.Parallelism = 2
	cfg.PrefetchBytes = 0 // one object ahead
	cfg.KafkaOpts = []kgo.Opt{kgo.ProducerLinger(0)}
	bs := &blockStore{Store: a.store, n: 12 + 5, blocked: make(chan struct{}), release: make(chan struct{})}
	zombie, err := New(cfg, bs, nil)
	if err != nil {
		t.Fatal(err)
	}
	zerr := make(chan error, 1)
	go func() {
		_, err := zombie.Run(testContext(t), nil)
		zerr <- err
	}()
	<-bs.blocked
	sum, err := mustNew(t, cfg, a, nil).Run(testContext(t), nil)
	if err != nil {
		t.Fatal(err)
	}
	close(bs.release)
	if err := <-zerr; err == nil {
		t.Fatal("the fenced run finished without an error")
	} else {
		t.Logf("fenced run: %v; later run: %+v", err, sum)
	}
	checkPlacement(t, readCommitted(t, brokers, "dst", 1800), want, RepartitionRoundRobin, 3)
}

// TestRepartitionRecreatedTarget: a target deleted and created again is
// restored from the start, each record once: the broker drops the
// committed positions of a deleted topic, and a position that survives is
// refused by its topic id (positionMeta.TopicID), never taken for records
// the new topic holds.
func TestRepartitionRecreatedTarget(t *testing.T) {
	brokers := newCluster(t, 3, "dst")
	a := newArchive(t, format.NewJSON())
	want := bigArchive(t, a, "src", 2, 1, 10)
	cfg := baseConfig(brokers, a.f, "src")
	cfg.Rename, cfg.Repartition = "dst", RepartitionRoundRobin
	if _, err := mustNew(t, cfg, a, nil).Run(testContext(t), nil); err != nil {
		t.Fatal(err)
	}
	adm := newAdmin(t, brokers)
	if _, err := adm.DeleteTopics(testContext(t), "dst"); err != nil {
		t.Fatal(err)
	}
	if _, err := adm.CreateTopic(testContext(t), 3, 1, nil, "dst"); err != nil {
		t.Fatal(err)
	}
	sum, err := mustNew(t, cfg, a, nil).Run(testContext(t), nil)
	if err != nil {
		if !errors.Is(err, ErrForeignWrite) || !strings.Contains(err.Error(), "deleted and created again") {
			t.Fatalf("re-run into a recreated target: err = %v", err)
		}
		t.Logf("the broker kept the positions: refused (%v)", err)
		return
	}
	if sum.Records != 20 || sum.AlreadyPresent != 0 {
		t.Fatalf("re-run into a recreated target: %+v, want all 20 records restored", sum)
	}
	checkPlacement(t, readCommitted(t, brokers, "dst", 20), want, RepartitionRoundRobin, 3)
}

// TestPositionTopicID: a position committed for another topic id of the
// target is refused, naming the recreation.
func TestPositionTopicID(t *testing.T) {
	brokers := newCluster(t, 1, "dst")
	a := newArchive(t, format.NewJSON())
	cfg := baseConfig(brokers, a.f, "src")
	cfg.Repartition = RepartitionMurmur2
	r := mustNew(t, cfg, a, nil)
	adm := newAdmin(t, brokers)
	d, err := adm.ListTopics(testContext(t), "dst")
	if err != nil {
		t.Fatal(err)
	}
	tx := &txnStream{id: PositionGroup("dst", 0), target: "dst", topicID: d["dst"].ID, partitions: 1}
	meta := func(id [16]byte) string {
		b, _ := json.Marshal(positionMeta{Tool: positionTool, Archive: cfg.Identity, Source: "src", Partition: 0,
			Placement: "murmur2", Partitions: 1, TopicID: hex.EncodeToString(id[:])})
		return string(b)
	}
	tx.meta = meta(tx.topicID)
	var os kadm.Offsets
	os.Add(kadm.Offset{Topic: "dst", Partition: 0, At: 7, LeaderEpoch: -1, Metadata: meta([16]byte{1, 2, 3})})
	if err := adm.CommitAllOffsets(testContext(t), tx.id, os); err != nil {
		t.Fatal(err)
	}
	if _, err := r.readPosition(testContext(t), adm, tx); !errors.Is(err, ErrForeignWrite) || !strings.Contains(err.Error(), "deleted and created again") {
		t.Fatalf("position of another topic id: err = %v", err)
	}
	os = nil
	os.Add(kadm.Offset{Topic: "dst", Partition: 0, At: 7, LeaderEpoch: -1, Metadata: tx.meta})
	if err := adm.CommitAllOffsets(testContext(t), tx.id, os); err != nil {
		t.Fatal(err)
	}
	if pos, err := r.readPosition(testContext(t), adm, tx); err != nil || pos != 7 {
		t.Fatalf("own position: %d, %v; want 7", pos, err)
	}
}

// TestRepartitionCommitsBeforeSlowLoad: a stream whose next object takes
// longer than txnLoadWait to load commits its open transaction first, so
// the records before it are committed (and visible to read_committed
// consumers) while the store is slow, and no transaction outlives the
// broker's timeout on a slow store.
func TestRepartitionCommitsBeforeSlowLoad(t *testing.T) {
	brokers := newCluster(t, 2, "dst")
	a := newArchive(t, fullFormat{})
	want := keyedArchive(t, a, "src", 1, 6, 150, 7)
	cfg := baseConfig(brokers, a.f, "src")
	cfg.Rename, cfg.Repartition, cfg.TxnRecords = "dst", RepartitionMurmur2, 100_000
	cfg.Parallelism = 1
	cfg.PrefetchBytes = 0                                                                                   // one object ahead
	bs := &blockStore{Store: a.store, n: 6 + 4, blocked: make(chan struct{}), release: make(chan struct{})} // the plan's proof opens the 6 objects first
	r, err := New(cfg, bs, nil)
	if err != nil {
		t.Fatal(err)
	}
	done := make(chan error, 1)
	go func() {
		_, err := r.Run(testContext(t), nil)
		done <- err
	}()
	<-bs.blocked
	adm := newAdmin(t, brokers)
	var pos int64
	waitFor := time.Now().Add(10 * time.Second)
	for pos == 0 && time.Now().Before(waitFor) {
		time.Sleep(100 * time.Millisecond)
		resps, err := adm.FetchOffsets(testContext(t), PositionGroup("dst", 0))
		if err == nil {
			if o, ok := resps.Lookup("dst", 0); ok {
				pos = o.At
			}
		}
	}
	close(bs.release)
	if err := <-done; err != nil {
		t.Fatal(err)
	}
	if pos != 450 {
		t.Fatalf("while the 4th object loaded, the committed position was %d, want 450 (the first 3 objects)", pos)
	}
	checkPlacement(t, readCommitted(t, brokers, "dst", 900), want, RepartitionMurmur2, 2)
}

// TestRepartitionShards: two shards, one after the other, each fan out
// their own source partitions into the target the first creates with
// --partitions; together every record lands once, in place; a shard with
// another --partitions is refused.
func TestRepartitionShards(t *testing.T) {
	brokers := newCluster(t, 1)
	a := newArchive(t, fullFormat{})
	want := keyedArchive(t, a, "src", 5, 2, 100, 13)
	cfg := baseConfig(brokers, a.f, "src")
	cfg.Rename, cfg.Repartition, cfg.CreateTopics, cfg.Partitions = "dst", RepartitionMurmur2, true, 3
	var records int64
	for i := range 2 {
		c := cfg
		c.Shard = Shard{Index: i, Count: 2}
		sum, err := mustNew(t, c, a, nil).Run(testContext(t), nil)
		if err != nil {
			t.Fatalf("shard %d/2: %v", i, err)
		}
		records += sum.Records
	}
	if records != 1000 {
		t.Fatalf("the shards restored %d records, want 1000", records)
	}
	checkPlacement(t, readCommitted(t, brokers, "dst", 1000), want, RepartitionMurmur2, 3)
	c := cfg
	c.Partitions, c.Shard = 4, Shard{Index: 1, Count: 2}
	if _, err := mustNew(t, c, a, nil).Run(testContext(t), nil); !errors.Is(err, ErrInvalidConfig) || !strings.Contains(err.Error(), "exists with 3 partitions") {
		t.Fatalf("a shard with --partitions 4: err = %v", err)
	}
	// Unsharded, the same command produces nothing.
	sum, err := mustNew(t, cfg, a, nil).Run(testContext(t), nil)
	if err != nil || sum.Records != 0 || sum.AlreadyPresent != 1000 {
		t.Fatalf("unsharded run after the shards: %+v, %v", sum, err)
	}
}

// TestRepartitionUntil: --until cuts each source partition's stream
// before it fans out; a full restore afterwards continues it exactly, and
// a cut before what the target holds stops the stream naming its group.
func TestRepartitionUntil(t *testing.T) {
	f := mustFormat(t, format.Config{Kind: format.KindJSON, Envelope: true})
	a := newArchive(t, f)
	p0 := stamped(0, format.TimestampLogAppendTime, seq(0, 10), []int64{0, 1000, 2000, 3000, 4000, 5000, 6000, 7000, 8000, 9000})
	p1 := stamped(1, format.TimestampLogAppendTime, seq(0, 4), []int64{500, 2500, 4500, 6500})
	a.put("src", 0, 0, p0[:3])
	a.put("src", 0, 3, p0[3:7])
	a.put("src", 0, 7, p0[7:])
	a.put("src", 1, 0, p1)
	brokers := newCluster(t, 1)
	cfg := baseConfig(brokers, format.NewJSON(), "src")
	cfg.Rename, cfg.CreateTopics, cfg.Partitions, cfg.Repartition = "dst", true, 3, RepartitionRoundRobin
	cut := cfg
	cut.Until = time.UnixMilli(4500)
	sum, err := mustNew(t, cut, a, nil).Run(testContext(t), nil)
	if err != nil || sum.Records != 8 {
		t.Fatalf("--until run: %+v, %v; want the 5 + 3 records before the cut", sum, err)
	}
	checkPlacement(t, readCommitted(t, brokers, "dst", 8), map[int32][]*format.Record{0: p0[:5], 1: p1[:3]}, RepartitionRoundRobin, 3)
	sum, err = mustNew(t, cfg, a, nil).Run(testContext(t), nil)
	if err != nil || sum.Records != 6 || sum.AlreadyPresent != 8 {
		t.Fatalf("full run after the cut: %+v, %v; want 6 more records, 8 already present", sum, err)
	}
	checkPlacement(t, readCommitted(t, brokers, "dst", 14), map[int32][]*format.Record{0: p0, 1: p1}, RepartitionRoundRobin, 3)
	_, err = mustNew(t, cut, a, nil).Run(testContext(t), nil)
	// Both source partitions hold more than the cut lets through: the
	// first stream to see it names its position group.
	if !errors.Is(err, ErrForeignWrite) || !strings.Contains(err.Error(), PositionGroup("dst", 0)) && !strings.Contains(err.Error(), PositionGroup("dst", 1)) {
		t.Fatalf("a cut before what the target holds: err = %v", err)
	}
}

// TestRepartitionedTargetRefusesGroups: group offsets are never
// translated into a repartitioned target: the dry run's and the run's
// --restore-groups are refused, and no group is committed.
func TestRepartitionedTargetRefusesGroups(t *testing.T) {
	brokers := newCluster(t, 2, "dst")
	a := groupsArchive(t)
	cfg := indexedConfig(brokers, a)
	cfg.Repartition = RepartitionRoundRobin
	if _, err := mustNew(t, cfg, a, nil).Run(testContext(t), nil); err != nil {
		t.Fatal(err)
	}
	gc := groupsConfig(brokers, a)
	dry := gc
	dry.DryRun = true
	r := mustNew(t, dry, a, nil)
	plan, err := r.Plan(testContext(t))
	if err != nil {
		t.Fatal(err)
	}
	if _, err := r.DryRunGroups(testContext(t), newAdmin(t, brokers), plan); !errors.Is(err, ErrMarkerMismatch) || !strings.Contains(err.Error(), "placed by --repartition roundrobin") {
		t.Fatalf("dry run --restore-groups into a repartitioned target: err = %v", err)
	}
	if _, err := mustNew(t, gc, a, nil).Run(testContext(t), nil); !errors.Is(err, ErrMarkerMismatch) {
		t.Fatalf("--restore-groups into a repartitioned target: err = %v", err)
	}
	if got := committedGroup(t, brokers, "restored-mid", "dst"); len(got) != 0 {
		t.Fatalf("a group was committed into a repartitioned target: %v", got)
	}
}

// TestRepartitionSkipExpired: --skip-expired with --repartition leaves
// out the records older than the target's retention, at the cutoff the
// first run fixed in the marker: cancelled runs, a retention changed
// meanwhile, and a final run leave every kept record once, in place; a run
// without the flag is refused.
func TestRepartitionSkipExpired(t *testing.T) {
	brokers := newCluster(t, 1)
	adm := newAdmin(t, brokers)
	week := fmt.Sprint(int64(7 * 24 * time.Hour / time.Millisecond))
	if _, err := adm.CreateTopic(testContext(t), 3, 1, map[string]*string{"retention.ms": &week}, "dst"); err != nil {
		t.Fatal(err)
	}
	a := newArchive(t, fullFormat{})
	all, old := expiryArchive(t, a, time.Now())
	cfg := baseConfig(brokers, a.f, "src")
	cfg.Rename, cfg.Parallelism, cfg.Repartition, cfg.SkipExpired, cfg.TxnRecords = "dst", 2, RepartitionMurmur2, true, 250
	cfg.KafkaOpts = []kgo.Opt{kgo.ProducerLinger(0)}
	want := map[int32][]*format.Record{}
	kept := 0
	for p, recs := range all {
		for _, rec := range recs {
			if time.Since(rec.Timestamp) < 24*time.Hour {
				want[p] = append(want[p], rec)
				kept++
			}
		}
	}
	for _, at := range []int64{40 + 14, 40 + 28} { // the proof opens the 40 objects first
		ctx, cancel := context.WithCancel(testContext(t))
		r, err := New(cfg, &cancelStore{Store: a.store, n: at, cancel: cancel}, nil)
		if err != nil {
			t.Fatal(err)
		}
		if _, err := r.Run(ctx, nil); err == nil {
			t.Fatalf("run cancelled at open %d finished", at)
		}
		cancel()
	}
	setRetention(t, adm, fmt.Sprint(int64(60*24*time.Hour/time.Millisecond)))
	without := cfg
	without.SkipExpired = false
	if _, err := mustNew(t, without, a, nil).Run(testContext(t), nil); !errors.Is(err, ErrInvalidConfig) || !strings.Contains(err.Error(), "began with --skip-expired") {
		t.Fatalf("a run without --skip-expired after one with it: err = %v", err)
	}
	sum, err := mustNew(t, cfg, a, nil).Run(testContext(t), nil)
	if err != nil {
		t.Fatal(err)
	}
	if sum.Expired != old || sum.Records+sum.AlreadyPresent != int64(kept) || sum.AlreadyPresent == 0 {
		t.Fatalf("final run: %+v; want %d expired, %d kept in all, some already present", sum, old, kept)
	}
	checkPlacement(t, readCommitted(t, brokers, "dst", kept), want, RepartitionMurmur2, 3)
}
