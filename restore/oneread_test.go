package restore

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/kafkas3/kafkas3/format"
	"github.com/kafkas3/kafkas3/index"
	"github.com/kafkas3/kafkas3/s3store"
	"github.com/twmb/franz-go/pkg/kadm"
	"github.com/twmb/franz-go/pkg/kgo"
)

// readOnceConfig is indexedConfig restoring with one read per object
// (kafkas3 source's default).
func readOnceConfig(brokers []string, a *archive) Config {
	cfg := indexedConfig(brokers, a)
	cfg.ReadOnce = true
	return cfg
}

// editIndex rewrites the index object of topic/p at commit with fn
// applied to each of its entries.
func (a *archive) editIndex(topic string, p int32, commit int64, fn func(e *index.Entry)) {
	a.t.Helper()
	key := index.Key(index.DefaultPrefix, topic, p, commit, "")
	rc, err := a.store.Open(context.Background(), key)
	if err != nil {
		a.t.Fatal(err)
	}
	entries, err := index.Decode(key, rc)
	rc.Close()
	if err != nil {
		a.t.Fatal(err)
	}
	for i := range entries {
		fn(&entries[i])
	}
	b, err := index.Encode(entries)
	if err != nil {
		a.t.Fatal(err)
	}
	a.putRaw(key, func(w io.Writer) { w.Write(b) })
}

// read returns the bytes of key.
func (a *archive) read(key string) []byte {
	a.t.Helper()
	rc, err := a.store.Open(context.Background(), key)
	if err != nil {
		a.t.Fatal(err)
	}
	defer rc.Close()
	b, err := io.ReadAll(rc)
	if err != nil {
		a.t.Fatal(err)
	}
	return b
}

// threeIndexed writes src/0 as three indexed objects of 5 records
// (offsets 0..14) and returns their keys.
func threeIndexed(a *archive) []string {
	var keys []string
	for i, start := range []int{0, 5, 10} {
		keys = append(keys, a.putAt("src", 0, start, 5))
		a.writeIndex("src", 0, int64(start+5), indexed{key: keys[i], runs: []index.Run{{First: int64(start), Last: int64(start + 4)}}, from: int64(start)})
	}
	return keys
}

// TestOneReadDamageFoundAtProduction: with one read per object, an object
// whose bytes differ from its index entry at the same size (a flipped
// byte: only the CRC32C, or the SHA-256, tells) on a store that shows no
// ETag and keeps no checksum (blindStore: a local directory, or bit rot
// at rest on any store) passes the plan; reading
// it to produce it finds the damage, and the run stops before anything
// of it is produced, naming the object, the partition and its first
// offset, with the records before it restored. Once the object is
// repaired, a re-run resumes exactly: the target then holds every offset
// once, in order.
func TestOneReadDamageFoundAtProduction(t *testing.T) {
	for _, digest := range []string{"", "sha256", "v1"} {
		t.Run("digest "+digest, func(t *testing.T) {
			brokers := newCluster(t, 1)
			a := newArchive(t, format.NewJSON())
			a.digest = digest
			a.blind = true // the store cannot tell: only the read finds the damage
			keys := threeIndexed(a)
			orig := a.read(keys[1])
			a.damage(keys[1], flip)
			cfg := readOnceConfig(brokers, a)
			cfg.KafkaOpts = []kgo.Opt{kgo.ProducerLinger(0)}
			var log logBuffer
			sum, err := mustNew(t, cfg, a, &log).Run(testContext(t), nil)
			if !errors.Is(err, ErrDamagedObject) || !strings.Contains(err.Error(), fmt.Sprintf("stopped before object %q (source src/0, first offset 5)", keys[1])) {
				t.Fatalf("err = %v, want the damaged object %q named", err, keys[1])
			}
			if len(sum.DamagedFound) != 1 || sum.DamagedFound[0] != keys[1] || !strings.Contains(sum.String(), "damaged objects found while restoring: 1") {
				t.Fatalf("summary %+v", sum)
			}
			if !strings.Contains(log.String(), "checking the archive from its index; each object is read once, when it is restored") {
				t.Fatalf("log does not say the mode:\n%s", log.String())
			}
			checkOffsets(t, "dst/0 after the damage", readTopic(t, brokers, "dst")[0], [2]int{0, 4})
			a.putRaw(keys[1], func(w io.Writer) { w.Write(orig) })
			sum, err = mustNew(t, cfg, a, nil).Run(testContext(t), nil)
			if err != nil || sum.AlreadyPresent != 5 || sum.Records != 10 {
				t.Fatalf("re-run after the repair: %+v, %v", sum, err)
			}
			checkOffsets(t, "dst/0", readTopic(t, brokers, "dst")[0], [2]int{0, 14})
		})
	}
}

// TestOneReadDamageNothingPartial: damage found in the second half of an
// object (a flipped byte near its end) still produces nothing of that
// object: it is decoded and checked in full before its first record.
func TestOneReadDamageNothingPartial(t *testing.T) {
	brokers := newCluster(t, 1)
	a := newArchive(t, format.NewJSON())
	a.blind = true
	keys := threeIndexed(a)
	a.damage(keys[2], func(b []byte) []byte { b[len(b)-3] ^= 0x01; return b })
	_, err := mustNew(t, readOnceConfig(brokers, a), a, nil).Run(testContext(t), nil)
	if !errors.Is(err, ErrDamagedObject) || !strings.Contains(err.Error(), keys[2]) || !strings.Contains(err.Error(), "first offset 10") {
		t.Fatalf("err = %v", err)
	}
	checkOffsets(t, "dst/0", readTopic(t, brokers, "dst")[0], [2]int{0, 9})
}

// TestOneReadRefusesBeforeProducing: what the index and the listing show
// without a download stops the run before anything is produced: an
// object deleted after the sink, one of another size (truncated), an
// offset no entry accounts for.
func TestOneReadRefusesBeforeProducing(t *testing.T) {
	for _, tc := range []struct {
		name    string
		setup   func(a *archive, keys []string)
		wantErr error
		want    string
	}{
		{"deleted", func(a *archive, keys []string) { a.delete(keys[1]) }, ErrDamagedObject, "but not in the store"},
		{"truncated", func(a *archive, keys []string) { a.damage(keys[1], truncate) }, ErrDamagedObject, "the archive index says"},
		{"deleted index object", func(a *archive, keys []string) {
			a.delete(index.Key(index.DefaultPrefix, "src", 0, 10, ""))
			a.delete(keys[1])
		}, ErrGaps, "no index entry accounts for them"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			brokers := newCluster(t, 1)
			a := newArchive(t, format.NewJSON())
			keys := threeIndexed(a)
			tc.setup(a, keys)
			store := &countingStore{Store: a.store}
			r, err := New(readOnceConfig(brokers, a), store, nil)
			if err != nil {
				t.Fatal(err)
			}
			_, err = r.Run(testContext(t), nil)
			if !errors.Is(err, tc.wantErr) || !strings.Contains(err.Error(), tc.want) || !strings.Contains(err.Error(), "nothing was produced") {
				t.Fatalf("err = %v, want %v (%q)", err, tc.wantErr, tc.want)
			}
			if n := targetRecords(t, brokers, "dst"); n != -1 {
				t.Fatalf("target holds %d records (-1: absent)", n)
			}
			if n := store.dataOpens(); n != 0 {
				t.Fatalf("the refused run read %d data objects, want none", n)
			}
		})
	}
}

// TestOneReadProveFirst: without ReadOnce (--prove-first), a flipped byte
// is found by the whole-archive proof and nothing is produced; a dry run
// with ReadOnce is the same full check.
func TestOneReadProveFirst(t *testing.T) {
	brokers := newCluster(t, 1)
	a := newArchive(t, format.NewJSON())
	keys := threeIndexed(a)
	a.damage(keys[1], flip)
	cfg := indexedConfig(brokers, a) // ReadOnce false: --prove-first
	var log logBuffer
	_, err := mustNew(t, cfg, a, &log).Run(testContext(t), nil)
	if !errors.Is(err, ErrDamagedObject) || !strings.Contains(err.Error(), "nothing was produced") || !strings.Contains(err.Error(), keys[1]) {
		t.Fatalf("err = %v", err)
	}
	if n := targetRecords(t, brokers, "dst"); n != -1 {
		t.Fatalf("target holds %d records (-1: absent)", n)
	}
	if !strings.Contains(log.String(), "checking the archive before restoring: reading every new object once") {
		t.Fatalf("log does not say the mode:\n%s", log.String())
	}
	cfg = readOnceConfig(brokers, a)
	cfg.DryRun = true
	sum, err := mustNew(t, cfg, a, nil).Run(testContext(t), nil)
	if !errors.Is(err, ErrDamagedObject) || sum.ObjectsSkipped != 1 {
		t.Fatalf("dry run: %+v, %v", sum, err)
	}
}

// countingStore counts the opens (GETs) and stats (HEADs) of each key.
type countingStore struct {
	s3store.Store
	mu           sync.Mutex
	opens, stats map[string]int
}

func (c *countingStore) Open(ctx context.Context, key string) (io.ReadCloser, error) {
	c.mu.Lock()
	if c.opens == nil {
		c.opens = map[string]int{}
	}
	c.opens[key]++
	c.mu.Unlock()
	return c.Store.Open(ctx, key)
}

func (c *countingStore) Stat(ctx context.Context, key string) (s3store.ObjectInfo, error) {
	c.mu.Lock()
	if c.stats == nil {
		c.stats = map[string]int{}
	}
	c.stats[key]++
	c.mu.Unlock()
	return c.Store.Stat(ctx, key)
}

// dataOpens counts the opens of archive objects (not the index's).
func (c *countingStore) dataOpens() int {
	c.mu.Lock()
	defer c.mu.Unlock()
	n := 0
	for k, v := range c.opens {
		if !strings.HasPrefix(k, index.DefaultPrefix) {
			n += v
		}
	}
	return n
}

// TestOneReadGetsEachObjectOnce: an indexed archive of 2 partitions × 3
// objects, each with .keys and .headers twins, restored with one read per
// object opens (GETs) each of its 18 data objects exactly once and stats
// (HEADs) none; with the whole-archive proof (--prove-first) every object
// is opened twice.
func TestOneReadGetsEachObjectOnce(t *testing.T) {
	a := newArchive(t, format.NewJSON())
	var data []string
	want := map[int32][]*format.Record{}
	for p := range int32(2) {
		for o := range 3 {
			start := o * 4
			vkey := a.putAt("src", p, start, 4)
			base := strings.TrimSuffix(vkey, ".json")
			a.putRaw(base+".keys.json", func(w io.Writer) {
				for i := range 4 {
					fmt.Fprintf(w, "\"k-%d-%d\"\n", p, start+i)
				}
			})
			a.putRaw(base+".headers.json", func(w io.Writer) {
				for i := range 4 {
					fmt.Fprintf(w, "[{\"key\":\"h\",\"value\":\"%d\"}]\n", start+i)
				}
			})
			a.writeIndex("src", p, int64(start+4), indexed{key: vkey, runs: []index.Run{{First: int64(start), Last: int64(start + 3)}}, from: int64(start)})
			data = append(data, vkey, base+".keys.json", base+".headers.json")
			for i := range 4 {
				want[p] = append(want[p], &format.Record{Key: fmt.Appendf(nil, "k-%d-%d", p, start+i), Value: fmt.Appendf(nil, "v-%d", start+i),
					Headers: []format.Header{{Key: "h", Value: fmt.Appendf(nil, "%d", start+i)}}})
			}
		}
	}
	for _, once := range []bool{true, false} {
		t.Run(map[bool]string{true: "one read", false: "prove first"}[once], func(t *testing.T) {
			brokers := newCluster(t, 2)
			cfg := indexedConfig(brokers, a)
			cfg.ReadOnce = once
			store := &countingStore{Store: a.store}
			r, err := New(cfg, store, nil)
			if err != nil {
				t.Fatal(err)
			}
			if sum, err := r.Run(testContext(t), nil); err != nil || sum.Records != 24 {
				t.Fatalf("%+v, %v", sum, err)
			}
			got := readTopic(t, brokers, "dst")
			for p := range int32(2) {
				checkFull(t, fmt.Sprintf("dst/%d", p), got[p], want[p])
			}
			gets := store.dataOpens()
			t.Logf("%d GETs of %d data objects (value objects and twins), %d HEADs", gets, len(data), len(store.stats))
			wantGets := len(data)
			if !once {
				wantGets = 2 * len(data) // the proof, then the production
			}
			if gets != wantGets {
				t.Fatalf("%d GETs of data objects, want %d; opens %v", gets, wantGets, store.opens)
			}
			for _, k := range data {
				if once && store.opens[k] != 1 {
					t.Fatalf("%q opened %d times, want once", k, store.opens[k])
				}
				if store.stats[k] != 0 {
					t.Fatalf("%q stat %d times, want never", k, store.stats[k])
				}
			}
		})
	}
}

// checkFull compares key, value and headers of each record.
func checkFull(t *testing.T, what string, got []*kgo.Record, want []*format.Record) {
	t.Helper()
	if len(got) != len(want) {
		t.Fatalf("%s: %d records, want %d", what, len(got), len(want))
	}
	for i, w := range want {
		g := got[i]
		ok := bytes.Equal(g.Key, w.Key) && bytes.Equal(g.Value, w.Value) && len(g.Headers) == len(w.Headers)
		for j := 0; ok && j < len(w.Headers); j++ {
			ok = g.Headers[j].Key == w.Headers[j].Key && bytes.Equal(g.Headers[j].Value, w.Headers[j].Value)
		}
		if !ok {
			t.Fatalf("%s record %d: key %q value %q headers %v, want %q %q %v", what, i, g.Key, g.Value, g.Headers, w.Key, w.Value, w.Headers)
		}
	}
}

// TestOneReadRecordSizesFromEntries: entries that record their largest
// record (max_record_bytes) refuse one too large for the target before
// anything is produced; entries without it (an older sink's) are checked
// when the object is read: the records before it are restored, nothing of
// it, and the error names the object, partition and offset.
func TestOneReadRecordSizesFromEntries(t *testing.T) {
	for _, recorded := range []bool{true, false} {
		t.Run(map[bool]string{true: "recorded", false: "older entries"}[recorded], func(t *testing.T) {
			c := newFake(t)
			brokers := c.ListenAddrs()
			if err := c.CreateTopic("dst", 1, map[string]string{"max.message.bytes": "2000"}); err != nil {
				t.Fatal(err)
			}
			a := newArchive(t, format.NewJSON())
			keys := threeIndexed(a)
			big := offsetValues("v", 5, 5)
			big[2].Value = []byte("\"" + strings.Repeat("z", 5000) + "\"") // offset 7
			a.put("src", 0, 5, big)
			a.writeIndex("src", 0, 10, indexed{key: keys[1], runs: []index.Run{{First: 5, Last: 9}}, from: 5})
			if recorded {
				for _, commit := range []int64{5, 10, 15} {
					a.editIndex("src", 0, commit, func(e *index.Entry) {
						e.MaxRecordBytes = index.RecordSize(0, 8, 0, 0)
						if e.Key == keys[1] {
							e.MaxRecordBytes = index.RecordSize(0, 5002, 0, 0)
						}
					})
				}
			}
			cfg := readOnceConfig(brokers, a)
			cfg.CreateTopics = false
			_, err := mustNew(t, cfg, a, nil).Run(testContext(t), nil)
			if !errors.Is(err, ErrRecordTooLarge) || !strings.Contains(err.Error(), keys[1]) || !strings.Contains(err.Error(), "src/0") {
				t.Fatalf("err = %v", err)
			}
			if recorded {
				if !strings.Contains(err.Error(), "nothing was produced") || !strings.Contains(err.Error(), "src/0 offset 5..9 (the index entry does not say which)") {
					t.Fatalf("err = %v, want the refusal before producing", err)
				}
				if n := targetRecords(t, brokers, "dst"); n != 0 {
					t.Fatalf("dst holds %d records", n)
				}
				return
			}
			if !strings.Contains(err.Error(), "src/0 offset 7 is") || !strings.Contains(err.Error(), "nothing of the object was produced") {
				t.Fatalf("err = %v, want offset 7 named at production", err)
			}
			checkOffsets(t, "dst/0", readTopic(t, brokers, "dst")[0], [2]int{0, 4})
		})
	}
}

// TestOneReadNullKeys: records without a key bound for a compacted target
// are refused before anything is produced when the entries count them
// (null_keys), and, with entries that do not (an older sink's), when
// their object is read: nothing of it produced.
func TestOneReadNullKeys(t *testing.T) {
	for _, recorded := range []bool{true, false} {
		t.Run(map[bool]string{true: "recorded", false: "older entries"}[recorded], func(t *testing.T) {
			brokers := newCluster(t, 1)
			adm := newAdmin(t, brokers)
			if _, err := adm.CreateTopic(testContext(t), 1, 1, map[string]*string{"cleanup.policy": kadm.StringPtr("compact")}, "dst"); err != nil {
				t.Fatal(err)
			}
			a := newArchive(t, format.NewJSON())
			keys := threeIndexed(a)
			if recorded {
				for _, commit := range []int64{5, 10, 15} {
					a.editIndex("src", 0, commit, func(e *index.Entry) {
						e.MaxRecordBytes, e.NullKeys = index.RecordSize(0, 8, 0, 0), e.Records
					})
				}
			}
			_, err := mustNew(t, readOnceConfig(brokers, a), a, nil).Run(testContext(t), nil)
			if !errors.Is(err, ErrCompactedNullKey) || !strings.Contains(err.Error(), keys[0]) {
				t.Fatalf("err = %v", err)
			}
			if recorded && !strings.Contains(err.Error(), "nothing was produced") {
				t.Fatalf("err = %v, want the refusal before producing", err)
			}
			if !recorded && !strings.Contains(err.Error(), "src/0 offset 0") {
				t.Fatalf("err = %v, want src/0 offset 0 named", err)
			}
			if n := targetRecords(t, brokers, "dst"); n != 0 {
				t.Fatalf("dst holds %d records", n)
			}
		})
	}
}

// TestOneReadResumeAfterCancel: one-read restores cancelled in the middle
// of an object (the cancelStore's n-th open: with one read, the plan
// opens only the index objects) each leave an exact prefix; the final run
// completes the archive with no duplicates.
func TestOneReadResumeAfterCancel(t *testing.T) {
	brokers := newCluster(t, 4, "dst")
	a := newArchive(t, format.NewJSON())
	want := map[int32][]*format.Record{}
	for p := range int32(4) {
		for o := range 10 {
			recs := values(fmt.Sprintf("p%d", p), o*500, 500)
			key := a.put("src", p, int64(o*500), recs)
			a.writeIndex("src", p, int64(o*500+500), indexed{key: key, runs: []index.Run{{First: int64(o * 500), Last: int64(o*500 + 499)}}, from: int64(o * 500)})
			want[p] = append(want[p], recs...)
		}
	}
	cfg := readOnceConfig(brokers, a)
	cfg.CreateTopics = false
	cfg.Parallelism = 2
	cfg.KafkaOpts = []kgo.Opt{kgo.ProducerLinger(0), kgo.MaxBufferedRecords(300)}
	// The plan opens the 40 index objects; the restore then opens each
	// object it does not skip once (a re-run skips those restored whole).
	held := cancelRuns(t, cfg, a, brokers, want, 40+5, 40+12, 40+14)
	sum, err := mustNew(t, cfg, a, nil).Run(testContext(t), nil)
	if err != nil || sum.AlreadyPresent != int64(held) || sum.Records != int64(20000-held) {
		t.Fatalf("final run %+v after %d held: %v", sum, held, err)
	}
	got := readTopic(t, brokers, "dst")
	for p := range int32(4) {
		checkValues(t, fmt.Sprintf("dst/%d", p), got[p], want[p])
	}
}

// TestOneReadDamageStopsEveryPartition: damage found in one partition's
// object stops the run; every partition then holds an exact prefix of its
// stream (the damaged one up to the object before), and after the repair
// a re-run completes each exactly.
func TestOneReadDamageStopsEveryPartition(t *testing.T) {
	brokers := newCluster(t, 2, "dst")
	a := newArchive(t, format.NewJSON())
	a.blind = true
	want := map[int32][]*format.Record{}
	var damaged string
	for p := range int32(2) {
		for o := range 4 {
			recs := values(fmt.Sprintf("p%d", p), o*200, 200)
			key := a.put("src", p, int64(o*200), recs)
			a.writeIndex("src", p, int64(o*200+200), indexed{key: key, runs: []index.Run{{First: int64(o * 200), Last: int64(o*200 + 199)}}, from: int64(o * 200)})
			want[p] = append(want[p], recs...)
			if p == 0 && o == 2 {
				damaged = key
			}
		}
	}
	orig := a.read(damaged)
	a.damage(damaged, flip)
	cfg := readOnceConfig(brokers, a)
	cfg.CreateTopics = false
	cfg.KafkaOpts = []kgo.Opt{kgo.ProducerLinger(0)}
	_, err := mustNew(t, cfg, a, nil).Run(testContext(t), nil)
	if !errors.Is(err, ErrDamagedObject) || !strings.Contains(err.Error(), damaged) || !strings.Contains(err.Error(), "dst/0 stopped before object") {
		t.Fatalf("err = %v", err)
	}
	held := checkPrefix(t, brokers, "dst", want)
	if got := len(readTopic(t, brokers, "dst")[0]); got > 400 {
		t.Fatalf("dst/0 holds %d records, past the damaged object at 400", got)
	}
	a.putRaw(damaged, func(w io.Writer) { w.Write(orig) })
	sum, err := mustNew(t, cfg, a, nil).Run(testContext(t), nil)
	if err != nil || sum.AlreadyPresent != int64(held) || sum.Records != int64(1600-held) {
		t.Fatalf("re-run after the repair: %+v (held %d), %v", sum, held, err)
	}
	got := readTopic(t, brokers, "dst")
	for p := range int32(2) {
		checkValues(t, fmt.Sprintf("dst/%d", p), got[p], want[p])
	}
}

// TestReadsOnceOnlyWhereSafe: one read per object needs Config.ReadOnce
// and behavior.on.error=fail, and is off for a dry run, AllowGaps and
// Until, whose plans read every object.
func TestReadsOnceOnlyWhereSafe(t *testing.T) {
	a := newArchive(t, format.NewJSON())
	for _, tc := range []struct {
		name string
		set  func(c *Config)
		want bool
	}{
		{"read once", func(*Config) {}, true},
		{"prove first", func(c *Config) { c.ReadOnce = false }, false},
		{"dry run", func(c *Config) { c.DryRun = true }, false},
		{"ignore", func(c *Config) { c.OnError = OnErrorIgnore }, false},
		{"log", func(c *Config) { c.OnError = OnErrorLog }, false},
		{"allow gaps", func(c *Config) { c.AllowGaps = true }, false},
		{"until", func(c *Config) { c.Until = time.Now() }, false},
	} {
		cfg := readOnceConfig([]string{"localhost:9092"}, a)
		tc.set(&cfg)
		if got := mustNew(t, cfg, a, nil).readsOnce(); got != tc.want {
			t.Errorf("%s: readsOnce %v, want %v", tc.name, got, tc.want)
		}
	}
}

// checksumCounting is a countingStore that also keeps checksums (an
// s3store.Checksummer, as S3 is) and counts the HEADs asking for them.
type checksumCounting struct {
	*countingStore
	cs    s3store.Checksummer
	heads map[string]int
}

func (c *checksumCounting) StoredCRC32C(ctx context.Context, key string) (string, bool, error) {
	c.mu.Lock()
	if c.heads == nil {
		c.heads = map[string]int{}
	}
	c.heads[key]++
	c.mu.Unlock()
	return c.cs.StoredCRC32C(ctx, key)
}

// TestOneReadStoreToldRewrite: what the store says without a download
// decides whether the one-read plan takes an object's entry at its word.
// An object written again after the sink wrote it (a flipped byte, put
// again: the listing's ETag and the store's CRC32C differ from the
// entry's) is read by the plan and refused before anything is produced,
// as without one read; no other object is read. An entry whose ETag
// differs but whose CRC32C the store confirms (the same bytes written
// again under another ETag) is taken at its word after one HEAD, and
// every object is read once.
func TestOneReadStoreToldRewrite(t *testing.T) {
	run := func(t *testing.T, a *archive) (*checksumCounting, Summary, error) {
		brokers := newCluster(t, 1)
		store := &checksumCounting{countingStore: &countingStore{Store: a.store}, cs: a.store}
		r, err := New(readOnceConfig(brokers, a), store, nil)
		if err != nil {
			t.Fatal(err)
		}
		sum, err := r.Run(testContext(t), nil)
		if err == nil {
			checkOffsets(t, "dst/0", readTopic(t, brokers, "dst")[0], [2]int{0, 14})
		}
		return store, sum, err
	}
	t.Run("other bytes", func(t *testing.T) {
		a := newArchive(t, format.NewJSON())
		keys := threeIndexed(a)
		a.damage(keys[1], flip)
		store, _, err := run(t, a)
		if !errors.Is(err, ErrDamagedObject) || !strings.Contains(err.Error(), "nothing was produced") || !strings.Contains(err.Error(), keys[1]) {
			t.Fatalf("err = %v, want %q refused before anything is produced", err, keys[1])
		}
		// No other object was opened: nothing was produced.
		if n := store.dataOpens(); n != 1 || store.opens[keys[1]] != 1 {
			t.Errorf("%d data objects read (%v), want only %q, once", n, store.opens, keys[1])
		}
		if store.heads[keys[1]] != 1 || len(store.heads) != 1 {
			t.Errorf("HEADs %v, want one of %q", store.heads, keys[1])
		}
	})
	t.Run("same bytes, other ETag", func(t *testing.T) {
		a := newArchive(t, format.NewJSON())
		keys := threeIndexed(a)
		a.editIndex("src", 0, 10, func(e *index.Entry) { e.Objects[0].ETag = "0123456789abcdef0123456789abcdef" })
		store, sum, err := run(t, a)
		if err != nil || sum.Records != 15 {
			t.Fatalf("%+v, %v", sum, err)
		}
		for _, k := range keys {
			if store.opens[k] != 1 {
				t.Errorf("%q read %d times, want once (opens %v)", k, store.opens[k], store.opens)
			}
		}
		if store.heads[keys[1]] != 1 || len(store.heads) != 1 {
			t.Errorf("HEADs %v, want one of %q", store.heads, keys[1])
		}
	})
}

// TestPlanByPartitionIsOnePlan: a plan is made one partition at a time, a
// few at once (planner), each partition's index entries let go once its
// plan is made; however many at once, with one read or the proof, the
// plan is the same: records, gaps, damaged objects (one deleted from the
// store) and objects without an entry, partition by partition.
func TestPlanByPartitionIsOnePlan(t *testing.T) {
	brokers := newCluster(t, 4)
	a := newArchive(t, format.NewJSON())
	var gone string
	for p := range int32(4) {
		for i, start := range []int{0, 5, 10} {
			key := a.putAt("src", p, start, 5)
			a.writeIndex("src", p, int64(start+5), indexed{key: key, runs: []index.Run{{First: int64(start), Last: int64(start + 4)}}, from: int64(start)})
			if p == 2 && i == 1 {
				gone = key
			}
		}
	}
	a.putAt("src", 3, 15, 5) // no entry: read by the plan
	a.delete(gone)
	var plans []string
	for _, atOnce := range []int{-1, 1, 2, 8} {
		cfg := readOnceConfig(brokers, a)
		cfg.ReadOnce = atOnce > 0 // -1: the proof's plan
		r := mustNew(t, cfg, a, nil)
		r.partitionsAtOnce = max(atOnce, 0)
		plan, err := r.Plan(testContext(t))
		if err != nil {
			t.Fatal(err)
		}
		var b strings.Builder
		if err := plan.WriteText(&b); err != nil {
			t.Fatal(err)
		}
		for _, o := range plan.objects() {
			if o.entry != nil {
				t.Fatalf("%d at once: %q still holds its index entry after the plan", atOnce, o.Key)
			}
		}
		plans = append(plans, b.String())
	}
	for i := range plans {
		if plans[i] != plans[0] {
			t.Fatalf("the plan differs:\n%s\nfrom:\n%s", plans[i], plans[0])
		}
	}
	if !strings.Contains(plans[0], gone) {
		t.Fatalf("the plan does not name the deleted object %q:\n%s", gone, plans[0])
	}
}
