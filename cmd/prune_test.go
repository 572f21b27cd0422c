package cmd

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/kafkas3/kafkas3/internal/s3fake"
	"github.com/kafkas3/kafkas3/prune"
	"github.com/kafkas3/kafkas3/s3store"
	"github.com/twmb/franz-go/pkg/kgo"
)

// producePrunable produces 30 records to each of 2 partitions of topic:
// the first 15 of each stamped 40 days ago, the others an hour ago. It
// returns the values by partition.
func producePrunable(t *testing.T, ctx context.Context, brokers, topic string) map[int32][]string {
	t.Helper()
	cl, err := kgo.NewClient(kgo.SeedBrokers(strings.Split(brokers, ",")...), kgo.RecordPartitioner(kgo.ManualPartitioner()))
	if err != nil {
		t.Fatal(err)
	}
	defer cl.Close()
	want := map[int32][]string{}
	now := time.Now()
	var recs []*kgo.Record
	for i := range 30 {
		ts := now.Add(-time.Hour)
		if i < 15 {
			ts = now.Add(-40 * 24 * time.Hour)
		}
		for p := range int32(2) {
			v := fmt.Sprintf(`{"p":%d,"i":%d}`, p, i)
			recs = append(recs, &kgo.Record{Topic: topic, Partition: p, Value: []byte(v), Timestamp: ts.Add(time.Duration(i) * time.Millisecond)})
			want[p] = append(want[p], v)
		}
	}
	if err := cl.ProduceSync(ctx, recs...).FirstErr(); err != nil {
		t.Fatal(err)
	}
	return want
}

// prunableArchive archives producePrunable's records (5 an object: 6
// objects a partition, the first 3 wholly 40 days old) into a local
// directory and returns the config.
func prunableArchive(t *testing.T, ctx context.Context) (brokers, cfg, dir string, want map[int32][]string) {
	t.Helper()
	brokers = startKafka(t, 2, "orders")
	want = producePrunable(t, ctx, brokers, "orders")
	dir = t.TempDir()
	cfg = writeFile(t, "sink.yaml", sinkYAML(brokers, dir, "orders", 5))
	mustRun(t, ctx, ExitOK, "sink", "-c", cfg, "--once", "--log-level", "warn")
	return brokers, cfg, dir, want
}

// checkPruned requires verify to report the archive in dir clean, each
// partition with a watermark pruned below 15, and a restore of it to give
// exactly the records from offset 15 on of those, every record of the
// others.
func checkPruned(t *testing.T, ctx context.Context, brokers, cfg, dir, target string, want map[int32][]string) {
	t.Helper()
	r := mustRun(t, ctx, ExitOK, "verify", "-c", cfg)
	if !strings.Contains(r.out, "kafkas3 verify: clean") {
		t.Fatalf("verify after the prune:\n%s", r.out)
	}
	mustRun(t, ctx, ExitOK, "source", "-c", cfg, "--topic-rename", target, "--create-topics", "--log-level", "warn")
	got := readTopic(t, ctx, brokers, target)
	for p := range int32(2) {
		w := want[p]
		if _, err := os.Stat(filepath.Join(dir, fmt.Sprintf("_kafkas3/checkpoints/orders/%d/pruned-%020d.json", p, 15))); err == nil {
			w = w[15:]
			if note := fmt.Sprintf("orders/%d below 15", p); !strings.Contains(r.out, note) {
				t.Fatalf("verify does not note %q:\n%s", note, r.out)
			}
		}
		if !slices.Equal(got[p], w) {
			t.Fatalf("%s/%d restored %q, want %q", target, p, got[p], w)
		}
	}
}

// TestPruneCmd: --dry-run lists what would go and deletes nothing; the
// prune deletes the 3 objects of each partition whose records are all
// older than 30 days, writes the watermarks, and leaves an archive that
// verify reports clean (the offsets below 15 pruned on purpose) and that
// restores exactly the records from 15 on. A second prune has nothing
// to do; --before and --keep-days together are a usage error.
func TestPruneCmd(t *testing.T) {
	ctx := cliContext(t)
	brokers, cfg, dir, want := prunableArchive(t, ctx)
	all := allKeys(t, dir)

	r := mustRun(t, ctx, ExitOK, "prune", "-c", cfg, "--keep-days", "30", "--dry-run")
	if !strings.Contains(r.out, "would prune (dry run)") || !strings.Contains(r.out, "partitions=2 objects=6 ") || !strings.Contains(r.out, " records=30 ") {
		t.Fatalf("dry run:\n%s", r.out)
	}
	// Per topic: orders' own cut (50 days: older than every record) finds
	// nothing, over the default.
	for _, args := range [][]string{{"--keep-days", "30", "--keep-days", "orders=50"}} {
		r = mustRun(t, ctx, ExitOK, append([]string{"prune", "-c", cfg, "--dry-run"}, args...)...)
		if !strings.Contains(r.out, "partitions=0 objects=0") {
			t.Fatalf("dry run with %v:\n%s", args, r.out)
		}
	}
	for _, c := range []struct {
		args []string
		want string
	}{
		{[]string{"--keep-days", "30", "--keep-days", "ordrs=50"}, `a cut is set for topic "ordrs", which the archive index under "_kafkas3/" does not hold`},
		{[]string{"--topics", "orders", "--keep-days", "other=50"}, `a cut is set for topic "other", which --topics leaves out`},
		{[]string{"--before", time.Now().Add(time.Hour).UTC().Format(time.RFC3339)}, "is in the future"},
	} {
		if r = mustRun(t, ctx, ExitConfig, append([]string{"prune", "-c", cfg}, c.args...)...); !strings.Contains(r.err, c.want) {
			t.Fatalf("prune %v: %s", c.args, r.err)
		}
	}
	if got := allKeys(t, dir); !slices.Equal(got, all) {
		t.Fatalf("a refused prune changed the archive")
	}
	for _, bad := range []string{"0", "x", "=5", "orders=-1"} {
		if r = mustRun(t, ctx, ExitConfig, "prune", "-c", cfg, "--keep-days", bad); !strings.Contains(r.err, "--keep-days "+strconv.Quote(bad)) {
			t.Fatalf("--keep-days %s: %s", bad, r.err)
		}
	}
	if got := allKeys(t, dir); !slices.Equal(got, all) {
		t.Fatalf("the dry run changed the archive")
	}

	r = mustRun(t, ctx, ExitOK, "prune", "-c", cfg, "--keep-days", "30")
	if !strings.Contains(r.out, "kafkas3 prune: pruned: partitions=2 objects=6 ") || !strings.Contains(r.out, "refused=0") {
		t.Fatalf("prune:\n%s", r.out)
	}
	left := allKeys(t, dir)
	for p := range 2 {
		for _, start := range []int{0, 5, 10} {
			if k := fmt.Sprintf("topics/orders/partition=%d/orders+%d+%010d.json", p, p, start); slices.Contains(left, k) {
				t.Errorf("%s is still there", k)
			}
		}
		if k := fmt.Sprintf("_kafkas3/checkpoints/orders/%d/pruned-%020d.json", p, 15); !slices.Contains(left, k) {
			t.Errorf("no watermark %s", k)
		}
	}
	checkPruned(t, ctx, brokers, cfg, dir, "pruned_orders", want)
	if r := mustRun(t, ctx, ExitOK, "verify", "-c", cfg); !strings.Contains(r.out, "pruned on purpose (kafkas3 prune; not gaps): orders/0 below 15, orders/1 below 15") {
		t.Fatalf("verify does not note the pruned partitions:\n%s", r.out)
	}

	if r := mustRun(t, ctx, ExitOK, "ls", "-c", cfg, "--json"); !strings.Contains(r.out, `"pruned_below": 15`) || !strings.Contains(r.out, `"pruned"`) {
		t.Fatalf("ls does not show the pruned partitions:\n%s", r.out)
	}
	// Pruned whole (every record older than the cut): ls still lists it.
	whole := mustRun(t, ctx, ExitOK, "prune", "-c", cfg, "--before", time.Now().Format(time.RFC3339))
	if !strings.Contains(whole.out, "partitions=2 objects=6 ") {
		t.Fatalf("a prune of everything:\n%s", whole.out)
	}
	if r := mustRun(t, ctx, ExitOK, "ls", "-c", cfg, "--json", "--topics", "orders"); strings.Count(r.out, `"pruned_below": 30`) != 2 {
		t.Fatalf("ls of a partition pruned whole:\n%s", r.out)
	}
	r = mustRun(t, ctx, ExitOK, "prune", "-c", cfg, "--keep-days", "30")
	if !strings.Contains(r.out, "partitions=0 objects=0") {
		t.Fatalf("a second prune:\n%s", r.out)
	}
	r = mustRun(t, ctx, ExitConfig, "prune", "-c", cfg, "--keep-days", "30", "--before", "2026-01-01T00:00:00Z")
	if !strings.Contains(r.err, "--before and --keep-days are both set") {
		t.Fatalf("both cuts: %s", r.err)
	}
}

// budgetStore is a local store that carries out only budget changes
// (each object created, each key deleted), then fails: a crash at that
// point of a prune.
type budgetStore struct {
	*s3store.Local
	mu     sync.Mutex
	budget int
}

var errCrash = errors.New("crash")

func (b *budgetStore) Create(ctx context.Context, key string) (s3store.ObjectWriter, error) {
	b.mu.Lock()
	defer b.mu.Unlock()
	if b.budget == 0 {
		return nil, errCrash
	}
	b.budget--
	return b.Local.Create(ctx, key)
}

func (b *budgetStore) Delete(ctx context.Context, keys []string) (map[string]error, error) {
	b.mu.Lock()
	defer b.mu.Unlock()
	n := min(b.budget, len(keys))
	b.budget -= n
	refused, err := b.Local.Delete(ctx, keys[:n])
	if err == nil && n < len(keys) {
		err = errCrash
	}
	return refused, err
}

// copyTree copies the directory src to a new temporary directory.
func copyTree(t *testing.T, src string) string {
	t.Helper()
	dst := t.TempDir()
	err := filepath.WalkDir(src, func(p string, d os.DirEntry, err error) error {
		if err != nil {
			return err
		}
		rel, _ := filepath.Rel(src, p)
		if d.IsDir() {
			return os.MkdirAll(filepath.Join(dst, rel), 0o755)
		}
		b, err := os.ReadFile(p)
		if err != nil {
			return err
		}
		return os.WriteFile(filepath.Join(dst, rel), b, 0o644)
	})
	if err != nil {
		t.Fatal(err)
	}
	return dst
}

// TestPruneCrashAtEveryStep: a prune stopped after each of its changes
// in turn (the watermark, every key deleted) leaves an archive that
// verify reports clean and that restores exactly the records from the
// watermark on; a second run finishes it, leaving the same keys as a
// prune that was never stopped.
func TestPruneCrashAtEveryStep(t *testing.T) {
	ctx := cliContext(t)
	brokers, _, dir, want := prunableArchive(t, ctx)
	run := func(st prune.Store) error {
		_, err := prune.Run(ctx, prune.Config{IndexPrefix: "_kafkas3/", Before: time.Now().Add(-30 * 24 * time.Hour)}, st, nil)
		return err
	}
	local := func(d string) *s3store.Local {
		st, err := s3store.NewLocal(s3store.LocalConfig{Dir: d}, nil)
		if err != nil {
			t.Fatal(err)
		}
		return st
	}
	clean := copyTree(t, dir)
	counting := &budgetStore{Local: local(clean), budget: 1 << 30}
	if err := run(counting); err != nil {
		t.Fatal(err)
	}
	steps := 1<<30 - counting.budget
	wantKeys := allKeys(t, clean)
	if steps < 10 {
		t.Fatalf("a prune made %d changes; the archive is too small to test", steps)
	}
	for m := range steps {
		d := copyTree(t, dir)
		if err := run(&budgetStore{Local: local(d), budget: m}); !errors.Is(err, errCrash) {
			t.Fatalf("stopped after %d changes: err = %v", m, err)
		}
		cfg := writeFile(t, fmt.Sprintf("sink-%d.yaml", m), sinkYAML(brokers, d, "orders", 5))
		checkPruned(t, ctx, brokers, cfg, d, fmt.Sprintf("crash_%d", m), want)
		if err := run(local(d)); err != nil {
			t.Fatalf("re-run after %d changes: %v", m, err)
		}
		if got := allKeys(t, d); !slices.Equal(got, wantKeys) {
			t.Fatalf("re-run after %d changes left\n%s\nwant\n%s", m, strings.Join(got, "\n"), strings.Join(wantKeys, "\n"))
		}
	}
}

// refusingStore refuses to delete one key, as a store does for an object
// under Object Lock retention.
type refusingStore struct {
	*s3store.Local
	key string
}

func (r refusingStore) Delete(ctx context.Context, keys []string) (map[string]error, error) {
	var rest []string
	refused := map[string]error{}
	for _, k := range keys {
		if k == r.key {
			refused[k] = fmt.Errorf("%w: AccessDenied: object is WORM protected", s3store.ErrAccessDenied)
			continue
		}
		rest = append(rest, k)
	}
	more, err := r.Local.Delete(ctx, rest)
	for k, e := range more {
		refused[k] = e
	}
	return refused, err
}

// TestPruneLeavesWhatTheStoreKeeps: an object the store will not delete
// (Object Lock) is reported and left; verify is clean and notes it, and
// the restore leaves it out: its records were pruned.
func TestPruneLeavesWhatTheStoreKeeps(t *testing.T) {
	ctx := cliContext(t)
	brokers, cfg, dir, want := prunableArchive(t, ctx)
	locked := "topics/orders/partition=0/orders+0+0000000005.json"
	st, err := s3store.NewLocal(s3store.LocalConfig{Dir: dir}, nil)
	if err != nil {
		t.Fatal(err)
	}
	rep, err := prune.Run(ctx, prune.Config{IndexPrefix: "_kafkas3/", Before: time.Now().Add(-30 * 24 * time.Hour)}, refusingStore{st, locked}, nil)
	if err != nil {
		t.Fatal(err)
	}
	var out strings.Builder
	if err := writePrune(&out, rep, false); err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(out.String(), "refused: orders/0 "+locked+": access denied: AccessDenied: object is WORM protected") || !strings.Contains(out.String(), "refused=1") {
		t.Fatalf("the report does not name the refused object:\n%s", out.String())
	}
	if !slices.Contains(allKeys(t, dir), locked) {
		t.Fatalf("%s was deleted", locked)
	}
	checkPruned(t, ctx, brokers, cfg, dir, "locked_orders", want)
	if r := mustRun(t, ctx, ExitOK, "verify", "-c", cfg); !strings.Contains(r.out, "note: 1 objects below a prune watermark are still in the store") {
		t.Fatalf("verify does not note the object left:\n%s", r.out)
	}
}

// TestPruneWORMBucket: on a bucket with Object Lock, whose objects the
// sink wrote under two days of retention, a prune deletes nothing under
// retention (a delete would only hide it behind a delete marker): each
// object is reported as refused, naming until when; the watermark is
// written, verify is clean and the restore starts at it.
func TestPruneWORMBucket(t *testing.T) {
	ctx := cliContext(t)
	fake := s3fake.New()
	t.Cleanup(fake.Close)
	const bucket = "kafkas3-worm-prune"
	fake.CreateBucket(bucket)
	fake.SetObjectLock(bucket, "GOVERNANCE", 1)
	brokers := startKafka(t, 2, "orders")
	want := producePrunable(t, ctx, brokers, "orders")
	cfg := writeFile(t, "worm.yaml", strings.Replace(fakeS3SinkYAML("wormprune", "orders", brokers, fake.URL, bucket,
		"s3.object.lock.mode: GOVERNANCE\ns3.object.lock.retain.days: 2\n"), "flush.size: 20", "flush.size: 5", 1))
	mustRun(t, ctx, ExitOK, "sink", "-c", cfg, "--once", "--log-level", "warn")
	before := fake.Keys(bucket)
	r := mustRun(t, ctx, ExitOK, "prune", "-c", cfg, "--keep-days", "30")
	if !strings.Contains(r.out, "refused: orders/0 topics/orders/partition=0/orders+0+0000000000.json: under Object Lock retention until ") ||
		!strings.Contains(r.out, "partitions=2 objects=6 ") {
		t.Fatalf("prune on a WORM bucket:\n%s", r.out)
	}
	after := fake.Keys(bucket)
	for _, k := range before {
		if !slices.Contains(after, k) {
			t.Errorf("%s was deleted under retention", k)
		}
	}
	r = mustRun(t, ctx, ExitOK, "verify", "-c", cfg)
	if !strings.Contains(r.out, "kafkas3 verify: clean") || !strings.Contains(r.out, "orders/0 below 15") {
		t.Fatalf("verify:\n%s", r.out)
	}
	// Once the retention has ended, the next prune deletes them, but the
	// one still retained; a prune after that deletes nothing again (each
	// delete on a bucket with versioning would add a delete marker).
	held := "topics/orders/partition=1/orders+1+0000000010.json"
	for _, k := range before {
		if k != held {
			fake.SetRetention(bucket, k, "", "")
		}
	}
	r = mustRun(t, ctx, ExitOK, "prune", "-c", cfg, "--keep-days", "30")
	if !strings.Contains(r.out, "refused=1") || slices.Contains(fake.Keys(bucket), "topics/orders/partition=0/orders+0+0000000000.json") {
		t.Fatalf("a prune after the retention ended:\n%s", r.out)
	}
	deletes := fake.Count(s3fake.OpDeleteObjects)
	r = mustRun(t, ctx, ExitOK, "prune", "-c", cfg, "--keep-days", "30")
	if !strings.Contains(r.out, "refused=1") || fake.Count(s3fake.OpDeleteObjects) != deletes {
		t.Fatalf("a prune with only a retained object left sent %d DeleteObjects:\n%s", fake.Count(s3fake.OpDeleteObjects)-deletes, r.out)
	}
	fake.SetRetention(bucket, held, "", "")
	r = mustRun(t, ctx, ExitOK, "prune", "-c", cfg, "--keep-days", "30")
	if !strings.Contains(r.out, "refused=0") || slices.Contains(fake.Keys(bucket), held) {
		t.Fatalf("a prune after the last retention ended:\n%s", r.out)
	}
	mustRun(t, ctx, ExitOK, "source", "-c", cfg, "--topic-rename", "worm_$0", "--create-topics", "--log-level", "warn")
	got := readTopic(t, ctx, brokers, "worm_orders")
	for p := range int32(2) {
		if !slices.Equal(got[p], want[p][15:]) {
			t.Fatalf("worm_orders/%d restored %q, want %q", p, got[p], want[p][15:])
		}
	}
}
