package scale

import (
	"context"
	"fmt"
	"io"
	"math"
	"os"
	"path/filepath"
	"runtime"
	"runtime/metrics"
	"runtime/pprof"
	"slices"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"syscall"
	"testing"
	"time"

	"github.com/kafkas3/kafkas3/format"
	"github.com/kafkas3/kafkas3/index"
	"github.com/kafkas3/kafkas3/inspect"
	"github.com/kafkas3/kafkas3/internal/memlimit"
	"github.com/kafkas3/kafkas3/partition"
	"github.com/kafkas3/kafkas3/prune"
	"github.com/kafkas3/kafkas3/restore"
	"github.com/kafkas3/kafkas3/verify"
)

// envInt reads a positive integer from the environment, def when unset.
func envInt(tb testing.TB, name string, def int) int {
	v := os.Getenv(name)
	if v == "" {
		return def
	}
	n, err := strconv.Atoi(v)
	if err != nil || n <= 0 {
		tb.Fatalf("%s=%q: want a positive integer", name, v)
	}
	return n
}

// step is one measured operation on the archive.
type step struct {
	name string
	run  func(ctx context.Context) (any, error)
}

// result is what measure saw of one step.
type result struct {
	wall              time.Duration
	cpu               time.Duration // the process's CPU time (user and system: every goroutine's, the GC's and the sampler's)
	lists, gets, head int64
	peakHeap          uint64 // highest HeapInuse sampled, less the baseline
	peakLive          uint64 // highest live heap (as the last collection marked it) sampled, less the baseline
	retained          uint64 // HeapInuse after a GC with the step's result live, less the baseline
}

// measure runs s against st, sampling HeapInuse and the live heap every
// 20 ms. The baselines are HeapInuse and the live heap after a GC before
// the step (the simulated store itself), so the figures are the step's
// own. The step runs under memlimit with the headroom kafkas3 verify runs
// with (memlimit.ReaderHeadroom), as the commands do: without it, GOGC
// would let the step's garbage grow to the size of the store's own heap
// (about 1 GiB at 10^6 objects), which no kafkas3 process has.
func measure(ctx context.Context, st *simStore, s step) (result, error) {
	runtime.GC()
	var ms runtime.MemStats
	runtime.ReadMemStats(&ms)
	base := ms.HeapInuse
	live := []metrics.Sample{{Name: "/gc/heap/live:bytes"}}
	metrics.Read(live)
	baseLive := live[0].Value.Uint64()
	l0, g0, h0 := st.counts()
	var peak, peakLive uint64
	mctx, stopMem := context.WithCancel(ctx)
	defer stopMem()
	go memlimit.Run(mctx, memlimit.Config{Headroom: memlimit.ReaderHeadroom, Every: 10 * time.Millisecond})
	done := make(chan struct{})
	var wg sync.WaitGroup
	wg.Add(1)
	go func() {
		defer wg.Done()
		tick := time.NewTicker(20 * time.Millisecond)
		defer tick.Stop()
		for {
			var m runtime.MemStats
			runtime.ReadMemStats(&m)
			peak = max(peak, m.HeapInuse)
			metrics.Read(live)
			peakLive = max(peakLive, live[0].Value.Uint64())
			select {
			case <-done:
				return
			case <-tick.C:
			}
		}
	}()
	start, cpu0 := time.Now(), cpuTime()
	out, err := s.run(ctx)
	wall, cpu := time.Since(start), cpuTime()-cpu0
	stopMem()
	close(done)
	wg.Wait()
	runtime.GC()
	runtime.ReadMemStats(&ms)
	if dir := os.Getenv("KAFKAS3_SIM_HEAPPROFILE"); dir != "" {
		writeHeapProfile(dir, s.name)
	}
	runtime.KeepAlive(out)
	l1, g1, h1 := st.counts()
	return result{wall: wall, cpu: cpu, lists: l1 - l0, gets: g1 - g0, head: h1 - h0,
		peakHeap: sub(peak, base), peakLive: sub(peakLive, baseLive), retained: sub(ms.HeapInuse, base)}, err
}

// writeHeapProfile writes the heap profile (what is live, the step's
// result included) to dir/<step>.heap, for go tool pprof -sample_index=inuse_space.
func writeHeapProfile(dir, step string) {
	f, err := os.Create(filepath.Join(dir, step+".heap"))
	if err != nil {
		return
	}
	defer f.Close()
	_ = pprof.Lookup("heap").WriteTo(f, 0)
}

// cpuTime is the process's CPU time so far (0 if the system cannot say).
func cpuTime() time.Duration {
	var ru syscall.Rusage
	if err := syscall.Getrusage(syscall.RUSAGE_SELF, &ru); err != nil {
		return 0
	}
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
}

func sub(a, b uint64) uint64 {
	if a < b {
		return 0
	}
	return a - b
}

// steps are the three reads of the archive: the index alone, plain
// verify, and the restore's plan (what `source --dry-run` runs; it needs
// no broker).
func steps(st *simStore, keys partition.KeyConfig, f format.Format, n, parts int) []step {
	return []step{
		{"index.Load", func(ctx context.Context) (any, error) {
			return index.LoadWith(ctx, st, index.DefaultPrefix, nil, index.LoadOptions{})
		}},
		{"verify.Run", func(ctx context.Context) (any, error) {
			rep, err := verify.Run(ctx, verify.Config{Keys: keys, Format: f, IndexPrefix: index.DefaultPrefix}, st, nil)
			switch {
			case err != nil:
			case len(rep.Problems) > 0:
				err = fmt.Errorf("verify found %d problems, first %+v", len(rep.Problems), rep.Problems[0])
			case rep.ETagsCompared == 0 || rep.ChecksumsCompared+rep.NoChecksum > 0:
				// Every entry records the ETag the store lists: no HEAD.
				err = fmt.Errorf("verify proved %d objects by ETag, %d by stored checksum, %d by size only; want all by ETag",
					rep.ETagsCompared, rep.ChecksumsCompared, rep.NoChecksum)
			}
			return rep, err
		}},
		{"inspect.List", lsStep(st, keys)},
		{"restore.Records", catStep(st, keys, f, n, parts)},
		{"prune.Run", pruneStep(st, n, parts)},
		{"restore.Plan", planStep(st, keys, f, true)},
		{"restore.Plan(proof)", planStep(st, keys, f, false)},
	}
}

// dataOpens counts the Opens of data objects (under topics/) of a
// simStore.
type dataOpens struct {
	*simStore
	n atomic.Int64
}

func (d *dataOpens) Open(ctx context.Context, key string) (io.ReadCloser, error) {
	if strings.HasPrefix(key, "topics/") {
		d.n.Add(1)
	}
	return d.simStore.Open(ctx, key)
}

// lsStep is `kafkas3 ls --timeline hour`: the index alone, no data
// object opened, every record counted.
func lsStep(st *simStore, keys partition.KeyConfig) func(ctx context.Context) (any, error) {
	return func(ctx context.Context) (any, error) {
		ds := &dataOpens{simStore: st}
		parts, err := inspect.List(ctx, inspect.Config{Keys: keys, IndexPrefix: index.DefaultPrefix, Bucket: time.Hour}, ds)
		if err != nil {
			return nil, err
		}
		var records, buckets int64
		for _, p := range parts {
			records += p.Records
			for _, b := range p.Timeline {
				buckets += b.Records
			}
		}
		if n := int64(len(st.objs)) / 2; records != buckets || ds.n.Load() != 0 {
			err = fmt.Errorf("ls: %d records, %d in the timeline, %d data objects opened (of about %d)", records, buckets, ds.n.Load(), n)
		}
		return parts, err
	}
}

// catStep is `kafkas3 cat --partition 0 --offset <last 10>`: the
// partition's index and the 10 objects that hold them, no other.
func catStep(st *simStore, keys partition.KeyConfig, f format.Format, objects, parts int) func(ctx context.Context) (any, error) {
	return func(ctx context.Context) (any, error) {
		ds := &dataOpens{simStore: st}
		r, err := restore.New(restore.Config{Brokers: []string{"127.0.0.1:9"}, Topics: []string{topic}, Keys: keys, Format: f,
			IndexPrefix: index.DefaultPrefix}, ds, nil)
		if err != nil {
			return nil, err
		}
		last := int64(objects/parts) - 1 // partition 0's last offset (build)
		if objects%parts > 0 {
			last++
		}
		var got []int64
		res, err := r.Records(ctx, restore.Selection{Topic: topic, Partitions: []int32{0}, FirstOffset: last - 9, LastOffset: math.MaxInt64},
			func(rec *format.Record) error {
				got = append(got, rec.Offset)
				return nil
			})
		if err == nil && (len(got) != 10 || got[0] != last-9 || ds.n.Load() != 10 || !res.Indexed) {
			err = fmt.Errorf("cat: offsets %v, %d data objects opened, indexed %v; want the last 10 of %d, 10 opened", got, ds.n.Load(), res.Indexed, last)
		}
		return res, err
	}
}

// pruneStep is `kafkas3 prune --dry-run` cutting every partition in the
// middle of its records' time: the index alone, no data object opened,
// each partition's watermark at its middle offset.
func pruneStep(st *simStore, objects, parts int) func(ctx context.Context) (any, error) {
	return func(ctx context.Context) (any, error) {
		ds := &dataOpens{simStore: st}
		mid := int64(objects / parts / 2)
		rep, err := prune.Run(ctx, prune.Config{IndexPrefix: index.DefaultPrefix, Before: time.UnixMilli(stampOf(mid)), DryRun: true}, ds, nil)
		if err != nil {
			return nil, err
		}
		for _, p := range rep.Partitions {
			if p.Below != mid {
				return rep, fmt.Errorf("prune: %s/%d watermark %d, want %d", p.Topic, p.Partition, p.Below, mid)
			}
		}
		if len(rep.Partitions) != parts || ds.n.Load() != 0 {
			err = fmt.Errorf("prune: %d partitions, %d data objects opened; want %d, none", len(rep.Partitions), ds.n.Load(), parts)
		}
		return rep, err
	}
}

// planStep is the restore's plan: with readOnce, a restore's (kafkas3
// source: the index and what the store says of each object, no object
// read), else the whole-archive proof of --prove-first and --dry-run.
func planStep(st *simStore, keys partition.KeyConfig, f format.Format, readOnce bool) func(ctx context.Context) (any, error) {
	return func(ctx context.Context) (any, error) {
		r, err := restore.New(restore.Config{Brokers: []string{"127.0.0.1:9"}, Topics: []string{topic}, Keys: keys, Format: f,
			IndexPrefix: index.DefaultPrefix, ReadOnce: readOnce}, st, nil)
		if err != nil {
			return nil, err
		}
		plan, err := r.Plan(ctx)
		if err == nil && plan.Objects() == 0 {
			err = fmt.Errorf("plan has no objects")
		}
		return plan, err
	}
}

// run builds the archive and measures every step, reporting each as a
// line of the log and as benchmark metrics.
func run(tb testing.TB, n, parts int, latency time.Duration) {
	keys := partition.DefaultKeyConfig()
	f, err := format.NewBytes(format.DefaultBytesConfig())
	if err != nil {
		tb.Fatal(err)
	}
	t0 := time.Now()
	st, err := build(n, parts, keys, f.Extension())
	if err != nil {
		tb.Fatal(err)
	}
	tb.Logf("built %d objects in %d partitions (%d keys) in %s", n, parts, len(st.objs), time.Since(t0).Round(time.Millisecond))
	st.latency = latency
	ctx := context.Background()
	only := os.Getenv("KAFKAS3_SIM_STEPS")
	for _, s := range steps(st, keys, f, n, parts) {
		if only != "" && !slices.Contains(strings.Split(only, ","), s.name) {
			continue
		}
		r, err := measure(ctx, st, s)
		if err != nil {
			tb.Fatalf("%s: %v", s.name, err)
		}
		tb.Logf("%-12s objects=%d wall=%s cpu=%s LIST=%d GET=%d HEAD=%d peak_heap=%dMiB peak_live=%dMiB retained=%dMiB",
			s.name, n, r.wall.Round(time.Millisecond), r.cpu.Round(time.Millisecond), r.lists, r.gets, r.head, r.peakHeap>>20, r.peakLive>>20, r.retained>>20)
		if b, ok := tb.(*testing.B); ok {
			b.ReportMetric(r.wall.Seconds(), s.name+"-s")
			b.ReportMetric(float64(r.peakHeap>>20), s.name+"-peakMiB")
		}
	}
}

// TestSmall runs the simulation on a small archive without latency, so
// `make test` keeps it compiling and correct in well under a second.
func TestSmall(t *testing.T) {
	run(t, 2_000, 10, 0)
}

// BenchmarkArchive is issue 19 item 7's simulation: the archive of
// KAFKAS3_SIM_OBJECTS objects (default 1,000,000) in KAFKAS3_SIM_PARTITIONS
// partitions (default 100) behind KAFKAS3_SIM_LATENCY_MS per request
// (default 20). KAFKAS3_SIM_STEPS, a comma-separated list of step names
// (index.Load, verify.Run, restore.Plan, restore.Plan(proof)), runs only those. It runs only
// with -bench; -short caps it at 10,000 objects.
func BenchmarkArchive(b *testing.B) {
	n := envInt(b, "KAFKAS3_SIM_OBJECTS", 1_000_000)
	parts := envInt(b, "KAFKAS3_SIM_PARTITIONS", 100)
	lat := time.Duration(envInt(b, "KAFKAS3_SIM_LATENCY_MS", 20)) * time.Millisecond
	if testing.Short() {
		n = min(n, 10_000)
	}
	for range b.N {
		run(b, n, parts, lat)
	}
}
