package archive

import (
	"bytes"
	"context"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"io"
	"log/slog"
	"maps"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/kafkas3/kafkas3/index"
	"github.com/kafkas3/kafkas3/s3store"
	"github.com/twmb/franz-go/pkg/kadm"
	"github.com/twmb/franz-go/pkg/kgo"
)

// recreateTopic deletes topic and creates it again with partitions
// partitions (a new topic id, offsets from 0).
func recreateTopic(t *testing.T, brokers []string, topic string, partitions int32) {
	t.Helper()
	cl, err := kgo.NewClient(kgo.SeedBrokers(brokers...))
	if err != nil {
		t.Fatal(err)
	}
	defer cl.Close()
	adm := kadm.NewClient(cl)
	ctx := t.Context()
	if _, err := adm.DeleteTopic(ctx, topic); err != nil {
		t.Fatal(err)
	}
	deadline := time.Now().Add(10 * time.Second)
	for {
		resp, err := adm.CreateTopic(ctx, partitions, 1, nil, topic)
		if err == nil && resp.Err == nil {
			return
		}
		if time.Now().After(deadline) {
			t.Fatalf("create topic %s again: %v %v", topic, err, resp.Err)
		}
		time.Sleep(50 * time.Millisecond)
	}
}

// runSinkLog runs a sink and returns its summary, error and log.
func runSinkLog(t *testing.T, cfg Config, store s3store.Store) (Summary, string, error) {
	t.Helper()
	var logBuf bytes.Buffer
	s, err := New(cfg, store, slog.New(slog.NewTextHandler(&logBuf, nil)))
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	sum, err := s.Run(ctx)
	if ctx.Err() != nil {
		t.Fatal("sink did not stop")
	}
	return sum, logBuf.String(), err
}

// TestRecreatedTopicStops archives a topic, deletes and creates it again
// with fewer records, and runs the sink again: by default it stops
// archiving that topic (exit error naming the topic, both ids and the
// archived offsets), archives the other topic, and leaves every archived
// object and index object byte-identical.
func TestRecreatedTopicStops(t *testing.T) {
	brokers := newCluster(t, 1, "recr", "other")
	produce(t, brokers, "recr", 1, 0, 10)
	produce(t, brokers, "other", 1, 0, 3)
	store := s3store.NewMemory()
	cfg := indexConfig(brokers, "recr", "other")
	runSink(t, cfg, store)
	oldID := topicIDOf(t, brokers, "recr")
	before := snapshot(t, store)
	d, err := index.LatestTopic(t.Context(), store, index.DefaultPrefix, "recr")
	if err != nil || d == nil || d.TopicID != oldID {
		t.Fatalf("description %+v (%v), want topic id %s", d, err, oldID)
	}

	recreateTopic(t, brokers, "recr", 1)
	produce(t, brokers, "recr", 1, 100, 4)
	produce(t, brokers, "other", 1, 3, 3)
	newID := topicIDOf(t, brokers, "recr")
	sum, log, err := runSinkLog(t, cfg, store)
	var re *RecreatedError
	if !errors.As(err, &re) || re.Topic != "recr" {
		t.Fatalf("sink error %v, want a *RecreatedError for recr\n%s", err, log)
	}
	for _, want := range []string{"topic recr was deleted and created again", oldID, newID, "partition 0 up to offset 9", "kafkas3.topic.recreated=new-generation"} {
		if !strings.Contains(err.Error(), want) {
			t.Errorf("error %q does not name %q", err, want)
		}
	}
	if sum.Records != 3 {
		t.Errorf("records %d, want other's 3", sum.Records)
	}
	after := snapshot(t, store)
	for k, v := range before {
		if after[k] != v {
			t.Errorf("object %s changed", k)
		}
	}
	for k := range after {
		if _, ok := before[k]; !ok && strings.Contains(k, "recr") {
			t.Errorf("new object %s of the stopped topic", k)
		}
	}
	// Kafka dropped the group's offsets with the old topic; nothing was
	// committed for the new one.
	if got := committed(t, brokers, "connect-test", "recr"); got != -1 {
		t.Errorf("recr committed %d, want nothing", got)
	}
}

// TestRecreatedTopicNewGeneration archives the recreated topic as
// generation 2 beside the old one: the old objects stay byte-identical,
// the new ones keep Confluent's names under topics/generation=2/, with an
// index of their own, and a later run goes on in generation 2.
func TestRecreatedTopicNewGeneration(t *testing.T) {
	brokers := newCluster(t, 1, "recr")
	produce(t, brokers, "recr", 1, 0, 10)
	store := s3store.NewMemory()
	cfg := indexConfig(brokers, "recr")
	cfg.NewGeneration = true
	runSink(t, cfg, store)
	before := snapshot(t, store)

	recreateTopic(t, brokers, "recr", 1)
	produce(t, brokers, "recr", 1, 100, 4)
	newID := topicIDOf(t, brokers, "recr")
	sum := runSink(t, cfg, store)
	if sum.Records != 4 {
		t.Fatalf("records %d, want the new topic's 4", sum.Records)
	}
	after := snapshot(t, store)
	for k, v := range before {
		if after[k] != v {
			t.Errorf("object %s changed", k)
		}
	}
	for _, k := range []string{"topics/generation=2/recr/partition=0/recr+0+0000000000.json", "topics/generation=2/recr/partition=0/recr+0+0000000003.json"} {
		if _, ok := after[k]; !ok {
			t.Errorf("no object %s; have %v", k, keysOf(after))
		}
	}
	ix2, err := index.Load(t.Context(), store, index.GenerationPrefix(index.DefaultPrefix, 2), nil)
	if err != nil {
		t.Fatal(err)
	}
	if len(ix2.Entries) != 2 || ix2.Entries[0].TopicID != newID || ix2.Entries[0].From != 0 {
		t.Fatalf("generation 2 index %+v, want 2 entries of topic id %s from 0", ix2.Entries, newID)
	}
	ix1, err := index.Load(t.Context(), store, index.DefaultPrefix, nil)
	if err != nil {
		t.Fatal(err)
	}
	if len(ix1.Entries) != 4 {
		t.Fatalf("generation 1 index has %d entries, want the old 4", len(ix1.Entries))
	}
	d, err := index.LatestTopic(t.Context(), store, index.DefaultPrefix, "recr")
	if err != nil || d == nil || d.Gen() != 2 || d.TopicID != newID {
		t.Fatalf("latest description %+v (%v), want generation 2 of %s", d, err, newID)
	}
	if d2, err := index.LatestTopic(t.Context(), store, index.GenerationPrefix(index.DefaultPrefix, 2), "recr"); err != nil || d2 == nil || d2.TopicID != newID {
		t.Fatalf("generation 2's own description %+v (%v)", d2, err)
	}

	// The next run goes on in generation 2.
	produce(t, brokers, "recr", 1, 104, 3)
	if sum := runSink(t, cfg, store); sum.Records != 3 {
		t.Fatalf("third run archived %d records, want 3", sum.Records)
	}
	if _, ok := snapshot(t, store)["topics/generation=2/recr/partition=0/recr+0+0000000004.json"]; !ok {
		t.Errorf("third run did not write generation 2's object at offset 4")
	}
}

// TestRecreatedTopicWithoutIDs handles an archive written before topic
// ids were recorded (no topic description, entries without topic_id): the
// first run records the id; a topic created again, whose group offsets
// Kafka deleted with the old topic, is refused at its first object, whose
// bytes differ from the archived one, before anything is overwritten.
func TestRecreatedTopicWithoutIDs(t *testing.T) {
	brokers := newCluster(t, 1, "old")
	produce(t, brokers, "old", 1, 0, 9)
	cfg := indexConfig(brokers, "old")
	store := legacyArchive(t, cfg)
	before := snapshot(t, store)
	recreateTopic(t, brokers, "old", 1)
	produce(t, brokers, "old", 1, 50, 4)
	_, log, err := runSinkLog(t, cfg, store)
	var oe *OverwriteError
	if !errors.As(err, &oe) || oe.Key != "topics/old/partition=0/old+0+0000000000.json" ||
		!strings.Contains(err.Error(), "without a topic id (an archive written before kafkas3 recorded topic ids") {
		t.Fatalf("sink error %v\n%s", err, log)
	}
	after := snapshot(t, store)
	for k, v := range before {
		if after[k] != v {
			t.Errorf("object %s changed", k)
		}
	}
	for k := range after {
		if _, ok := before[k]; !ok && !strings.HasPrefix(k, index.TopicsDir(cfg.IndexPrefix)) {
			t.Errorf("new object %s", k) // only the description recording the id is new
		}
	}
}

// TestLegacyArchiveRecordsID resumes an archive written before topic ids
// were recorded: the run records the id in the description and entries.
func TestLegacyArchiveRecordsID(t *testing.T) {
	brokers := newCluster(t, 1, "leg")
	produce(t, brokers, "leg", 1, 0, 9)
	cfg := indexConfig(brokers, "leg")
	store := legacyArchive(t, cfg)
	produce(t, brokers, "leg", 1, 9, 3)
	runSink(t, cfg, store)
	id := topicIDOf(t, brokers, "leg")
	d, err := index.LatestTopic(t.Context(), store, index.DefaultPrefix, "leg")
	if err != nil || d == nil || d.TopicID != id {
		t.Fatalf("description %+v (%v), want topic id %s", d, err, id)
	}
	ix, err := index.Load(t.Context(), store, index.DefaultPrefix, nil)
	if err != nil {
		t.Fatal(err)
	}
	last := ix.Entries[len(ix.Entries)-1]
	if last.First() != 9 || last.TopicID != id || ix.Entries[0].TopicID != "" {
		t.Fatalf("entries %+v", ix.Entries)
	}
}

// legacyArchive archives cfg's topic and returns a copy of the archive as
// an older kafkas3 wrote it: no topic descriptions, no topic ids, v1
// entries (SHA-256, no CRC32C).
func legacyArchive(t *testing.T, cfg Config) s3store.Store {
	t.Helper()
	objs := snapshot(t, func() s3store.Store { st := s3store.NewMemory(); runSink(t, cfg, st); return st }())
	store := s3store.NewMemory()
	for k, v := range objs {
		if strings.HasPrefix(k, index.TopicsDir(cfg.IndexPrefix)) {
			continue
		}
		if strings.HasPrefix(k, index.Dir(cfg.IndexPrefix)) {
			entries, err := index.Decode(k, strings.NewReader(v))
			if err != nil {
				t.Fatal(err)
			}
			for i := range entries {
				entries[i].TopicID, entries[i].V = "", index.Version1
				for j := range entries[i].Objects {
					o := &entries[i].Objects[j]
					sum := sha256.Sum256([]byte(objs[o.Key]))
					o.CRC32C, o.SHA256 = "", hex.EncodeToString(sum[:])
				}
			}
			b, err := index.Encode(entries)
			if err != nil {
				t.Fatal(err)
			}
			v = string(b)
		}
		if err := putObject(t.Context(), store, k, []byte(v)); err != nil {
			t.Fatal(err)
		}
	}
	return store
}

// TestOverwriteRefused runs two sinks of different groups and flush.size
// into one store: the second stops before it writes a key the first
// wrote, naming the object, and nothing of the first changes.
func TestOverwriteRefused(t *testing.T) {
	brokers := newCluster(t, 1, "col")
	produce(t, brokers, "col", 1, 0, 10)
	store := s3store.NewMemory()
	a := indexConfig(brokers, "col")
	runSink(t, a, store)
	before := snapshot(t, store)
	b := indexConfig(brokers, "col")
	b.Name, b.GroupID, b.FlushSize = "other", "connect-other", 5
	_, _, err := runSinkLog(t, b, store)
	var oe *OverwriteError
	if !errors.As(err, &oe) || oe.Key != "topics/col/partition=0/col+0+0000000000.json" {
		t.Fatalf("second sink: %v, want an *OverwriteError of col+0+0000000000.json", err)
	}
	for _, want := range []string{"refusing to overwrite object", "offsets 0-2", "another sink's consumer group", "offsets from 0"} {
		if !strings.Contains(err.Error(), want) {
			t.Errorf("error %q does not say %q", err, want)
		}
	}
	if after := snapshot(t, store); !maps.Equal(before, after) {
		t.Errorf("the store changed: %v", keysOf(after))
	}
}

// TestReplayOverwriteAllowed lets a sink rewrite its own uncommitted
// objects (the replay after a crash): the index objects it wrote past its
// committed offset name them as its own.
func TestReplayOverwriteAllowed(t *testing.T) {
	brokers := newCluster(t, 1, "rp")
	produce(t, brokers, "rp", 1, 0, 9)
	store := s3store.NewMemory()
	cfg := indexConfig(brokers, "rp")
	runSink(t, cfg, store)
	want := snapshot(t, store)
	// Forget the commits: as after a crash between upload and commit.
	cl, err := kgo.NewClient(kgo.SeedBrokers(brokers...))
	if err != nil {
		t.Fatal(err)
	}
	defer cl.Close()
	if _, err := kadm.NewClient(cl).DeleteGroup(t.Context(), "connect-test"); err != nil {
		t.Fatal(err)
	}
	runSink(t, cfg, store)
	if got := snapshot(t, store); !maps.Equal(want, got) {
		t.Errorf("replay changed the archive")
	}
}

// TestReplayOverV1Entries replays, with the same group, records that an
// older kafkas3 archived with v1 entries (SHA-256 only, no topic id): the
// sink computes the SHA-256 of the objects that replace them, finds the
// same bytes, and rewrites them unchanged, writing v2 entries.
func TestReplayOverV1Entries(t *testing.T) {
	brokers := newCluster(t, 1, "rv1")
	produce(t, brokers, "rv1", 1, 0, 9)
	cfg := indexConfig(brokers, "rv1")
	store := legacyArchive(t, cfg)
	before := snapshot(t, store)
	cl, err := kgo.NewClient(kgo.SeedBrokers(brokers...))
	if err != nil {
		t.Fatal(err)
	}
	defer cl.Close()
	if _, err := kadm.NewClient(cl).DeleteGroup(t.Context(), "connect-test"); err != nil {
		t.Fatal(err)
	}
	if sum := runSink(t, cfg, store); sum.Records != 9 {
		t.Fatalf("replay archived %d records, want 9", sum.Records)
	}
	after := snapshot(t, store)
	for k, v := range before {
		if strings.HasPrefix(k, "topics/") && after[k] != v {
			t.Errorf("object %s changed", k)
		}
	}
	ix := loadIndex(t, store)
	for _, e := range ix.Entries {
		if e.V != index.Version || e.Objects[0].SHA256 == "" {
			t.Errorf("entry %s: v%d sha256 %q; want a v2 entry that kept the SHA-256 it compared", e.Key, e.V, e.Objects[0].SHA256)
		}
	}
}

// TestRecreatedWhileRunning deletes and creates the topic again while a
// continuous sink archives it and another topic: the sink stops the
// recreated topic (logged, returned when it stops) without writing over
// the archived objects, and goes on archiving the other topic; with
// new-generation it archives the new topic as generation 2 while running.
func TestRecreatedWhileRunning(t *testing.T) {
	for _, newGen := range []bool{false, true} {
		t.Run(map[bool]string{false: "fail", true: "new-generation"}[newGen], func(t *testing.T) {
			brokers := newCluster(t, 1, "live", "side")
			produce(t, brokers, "live", 1, 0, 9)
			cfg := indexConfig(brokers, "live", "side")
			cfg.Once, cfg.NewGeneration = false, newGen
			cfg.TopicCheckInterval = 200 * time.Millisecond
			store := s3store.NewMemory()
			var logBuf syncBuffer
			done, cancel := runInBackground(t, cfg, store, slog.New(slog.NewTextHandler(&logBuf, nil)))
			waitFor(t, func() bool { return committedSoft(brokers, "connect-test", "live") == 9 })
			before := snapshot(t, store)

			recreateTopic(t, brokers, "live", 1)
			produce(t, brokers, "live", 1, 100, 6)
			produce(t, brokers, "side", 1, 0, 3)
			if newGen {
				waitFor(t, func() bool {
					_, ok := snapshot(t, store)["topics/generation=2/live/partition=0/live+0+0000000003.json"]
					return ok
				})
			} else {
				waitFor(t, func() bool { return strings.Contains(logBuf.String(), "archiving of a topic stopped") })
			}
			waitFor(t, func() bool { return committedSoft(brokers, "connect-test", "side") == 3 })
			cancel()
			err := <-done
			var re *RecreatedError
			if newGen != (err == nil) || (!newGen && !errors.As(err, &re)) {
				t.Fatalf("sink returned %v\n%s", err, logBuf.String())
			}
			after := snapshot(t, store)
			for k, v := range before {
				if strings.HasPrefix(k, "topics/live/") || strings.HasPrefix(k, index.Dir(index.DefaultPrefix)) {
					if after[k] != v {
						t.Errorf("object %s changed", k)
					}
				}
			}
			for k := range after {
				if _, ok := before[k]; !ok && strings.HasPrefix(k, "topics/live/") {
					t.Errorf("new object %s in generation 1", k)
				}
			}
		})
	}
}

// committedSoft returns group's committed offset of topic's partition 0,
// or -1 when there is none (yet) or the request fails.
func committedSoft(brokers []string, group, topic string) int64 {
	cl, err := kgo.NewClient(kgo.SeedBrokers(brokers...))
	if err != nil {
		return -1
	}
	defer cl.Close()
	offs, err := kadm.NewClient(cl).FetchOffsets(context.Background(), group)
	if err != nil {
		return -1
	}
	if o, ok := offs.Lookup(topic, 0); ok && o.Err == nil {
		return o.At
	}
	return -1
}

// countingStore counts the listings and reads of a store.
type countingStore struct {
	s3store.Store
	mu     sync.Mutex
	lists  []string // prefix and after of each listing
	opened []string
}

func (c *countingStore) Open(ctx context.Context, key string) (io.ReadCloser, error) {
	c.mu.Lock()
	c.opened = append(c.opened, key)
	c.mu.Unlock()
	return c.Store.Open(ctx, key)
}

func (c *countingStore) List(ctx context.Context, prefix string, fn func(s3store.ObjectInfo) error) error {
	return c.ListAfter(ctx, prefix, "", fn)
}

func (c *countingStore) ListAfter(ctx context.Context, prefix, after string, fn func(s3store.ObjectInfo) error) error {
	c.mu.Lock()
	c.lists = append(c.lists, prefix+" after "+after)
	c.mu.Unlock()
	return s3store.ListAfter(ctx, c.Store, prefix, after, fn)
}

// TestOverwriteCheckCost resumes an archive of 40 objects in 2 partitions:
// the no-overwrite check lists each partition's index once, after the
// committed offset, and reads no object.
func TestOverwriteCheckCost(t *testing.T) {
	brokers := newCluster(t, 2, "cost")
	produce(t, brokers, "cost", 2, 0, 60)
	mem := s3store.NewMemory()
	cfg := indexConfig(brokers, "cost")
	runSink(t, cfg, mem)
	produce(t, brokers, "cost", 2, 60, 6)
	st := &countingStore{Store: mem}
	if sum := runSink(t, cfg, st); sum.Records != 12 || sum.Objects != 4 {
		t.Fatalf("second run %s", sum)
	}
	var guard []string
	for _, l := range st.lists {
		if strings.HasPrefix(l, index.Dir(cfg.IndexPrefix)) {
			guard = append(guard, l)
		}
	}
	slices.Sort(guard)
	want := []string{
		"_kafkas3/index/cost/0/ after _kafkas3/index/cost/0/00000000000000000060~",
		"_kafkas3/index/cost/1/ after _kafkas3/index/cost/1/00000000000000000060~",
	}
	if !slices.Equal(guard, want) {
		t.Errorf("index listings %q, want %q", guard, want)
	}
	for _, k := range st.opened {
		if strings.HasPrefix(k, index.Dir(cfg.IndexPrefix)) || strings.HasPrefix(k, "topics/") {
			t.Errorf("read %s", k)
		}
	}
}

// TestRegexTopicAdopted: a topic that starts matching topics.regex while
// the sink runs gets its identity at its assignment, so its first index
// entries record its id.
func TestRegexTopicAdopted(t *testing.T) {
	brokers := newCluster(t, 1, "rx-a")
	produce(t, brokers, "rx-a", 1, 0, 3)
	cfg := indexConfig(brokers)
	cfg.Topics, cfg.TopicsRegex, cfg.Once = nil, "rx-.*", false
	cfg.KafkaOpts = []kgo.Opt{kgo.MetadataMaxAge(100 * time.Millisecond), kgo.MetadataMinAge(100 * time.Millisecond)}
	store := s3store.NewMemory()
	done, cancel := runInBackground(t, cfg, store, slog.New(slog.DiscardHandler))
	waitFor(t, func() bool { return committedSoft(brokers, "connect-test", "rx-a") == 3 })

	cl, err := kgo.NewClient(kgo.SeedBrokers(brokers...))
	if err != nil {
		t.Fatal(err)
	}
	defer cl.Close()
	if _, err := kadm.NewClient(cl).CreateTopic(t.Context(), 1, 1, nil, "rx-b"); err != nil {
		t.Fatal(err)
	}
	produce(t, brokers, "rx-b", 1, 0, 3)
	waitFor(t, func() bool { return committedSoft(brokers, "connect-test", "rx-b") == 3 })
	cancel()
	if err := <-done; err != nil {
		t.Fatal(err)
	}
	ix, err := index.Load(t.Context(), store, index.DefaultPrefix, []string{"rx-b"})
	if err != nil {
		t.Fatal(err)
	}
	id := topicIDOf(t, brokers, "rx-b")
	if len(ix.Entries) != 1 || ix.Entries[0].TopicID != id {
		t.Fatalf("rx-b entries %+v, want one with topic id %s", ix.Entries, id)
	}
}

// runInBackground runs a sink of cfg until cancel (or 60 s); done gets
// Run's error.
func runInBackground(t *testing.T, cfg Config, store s3store.Store, log *slog.Logger) (<-chan error, context.CancelFunc) {
	t.Helper()
	s, err := New(cfg, store, log)
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	t.Cleanup(cancel)
	done := make(chan error, 1)
	go func() { _, err := s.Run(ctx); done <- err }()
	return done, cancel
}
