package archive

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/kafkas3/kafkas3/format"
	"github.com/kafkas3/kafkas3/outage"
	"github.com/kafkas3/kafkas3/s3store"
	"github.com/twmb/franz-go/pkg/kadm"
	"github.com/twmb/franz-go/pkg/kfake"
	"github.com/twmb/franz-go/pkg/kgo"
	"github.com/twmb/franz-go/pkg/kmsg"
)

// switchedCluster is a kfake cluster with a power switch: while down, every
// request closes its connection, as a broker that went away.
type switchedCluster struct {
	brokers []string
	down    atomic.Bool
}

func newSwitchedCluster(t *testing.T, partitions int32, topics ...string) *switchedCluster {
	t.Helper()
	c, err := kfake.NewCluster(kfake.NumBrokers(1), kfake.SeedTopics(partitions, topics...))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(c.Close)
	sc := &switchedCluster{brokers: c.ListenAddrs()}
	c.Control(func(kmsg.Request) (kmsg.Response, error, bool) {
		c.KeepControl()
		if sc.down.Load() {
			return nil, errors.New("broker down"), true
		}
		return nil, nil, false
	})
	return sc
}

// states records what the sink reports to its readiness.
type states struct {
	mu     sync.Mutex
	events []string // "down broker", "up broker", ... one per change
	cur    map[outage.Dep]bool
	errs   map[outage.Dep]error
}

func newStates() *states {
	return &states{cur: map[outage.Dep]bool{}, errs: map[outage.Dep]error{}}
}

// startWatchedSink runs a sink of cfg in the background on a memory store,
// with a fresh readiness state as cfg.Health. It returns the state, the
// store, the channel of Run's error and the cancel that ends the run.
func startWatchedSink(t *testing.T, cfg Config) (*states, *s3store.Memory, <-chan error, context.CancelFunc) {
	t.Helper()
	st := newStates()
	cfg.Health = st
	store := s3store.NewMemory()
	s, err := New(cfg, store, slog.New(slog.DiscardHandler))
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() { _, err := s.Run(ctx); done <- err }()
	return st, store, done, cancel
}

func (s *states) SetUp(dep outage.Dep) { s.set(dep, true, nil) }

func (s *states) SetDown(dep outage.Dep, err error) { s.set(dep, false, err) }

func (s *states) set(dep outage.Dep, up bool, err error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if was, ok := s.cur[dep]; !ok || was != up {
		word := "down"
		if up {
			word = "up"
		}
		s.events = append(s.events, word+" "+string(dep))
	}
	s.cur[dep] = up
	if err != nil {
		s.errs[dep] = err
	}
}

// has tells whether the events include want in order (others between).
func (s *states) has(want ...string) bool {
	s.mu.Lock()
	defer s.mu.Unlock()
	i := 0
	for _, e := range s.events {
		if i < len(want) && e == want[i] {
			i++
		}
	}
	return i == len(want)
}

func (s *states) String() string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return fmt.Sprint(s.events, s.errs)
}

// committedAll returns the group's committed offset of each partition of
// topic (-1 when none), or nil when the brokers do not answer.
func committedAll(brokers []string, group, topic string, partitions int32) []int64 {
	cl, err := kgo.NewClient(kgo.SeedBrokers(brokers...))
	if err != nil {
		return nil
	}
	defer cl.Close()
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Second)
	defer cancel()
	offs, err := kadm.NewClient(cl).FetchOffsets(ctx, group)
	if err != nil {
		return nil
	}
	out := make([]int64, partitions)
	for p := range partitions {
		out[p] = -1
		if o, ok := offs.Lookup(topic, p); ok {
			out[p] = o.At
		}
	}
	return out
}

func waitCommitted(t *testing.T, sc *switchedCluster, group, topic string, partitions int32, want int64, st *states) {
	t.Helper()
	deadline := time.Now().Add(60 * time.Second)
	for {
		c := committedAll(sc.brokers, group, topic, partitions)
		ok := c != nil
		for _, o := range c {
			ok = ok && o == want
		}
		if ok {
			return
		}
		if time.Now().After(deadline) {
			t.Fatalf("committed %v, want %d on every partition; states %v", c, want, st)
		}
		time.Sleep(50 * time.Millisecond)
	}
}

func waitState(t *testing.T, st *states, want ...string) {
	t.Helper()
	deadline := time.Now().Add(30 * time.Second)
	for !st.has(want...) {
		if time.Now().After(deadline) {
			t.Fatalf("states %v, want %v in order", st, want)
		}
		time.Sleep(20 * time.Millisecond)
	}
}

// TestSinkRidesOutBrokerOutages: a continuous sink keeps running while the
// broker goes away twice (once idle, once with records just produced),
// reports the brokers down and up again, resumes from the committed
// offsets, and writes the same objects as a clean run.
func TestSinkRidesOutBrokerOutages(t *testing.T) {
	const parts, topic = 3, "o"
	sc := newSwitchedCluster(t, parts, topic)
	produce(t, sc.brokers, topic, parts, 0, 30)
	cfg := testConfig(sc.brokers, topic)
	cfg.Once = false
	st, store, done, cancel := startWatchedSink(t, cfg)
	defer cancel()
	group := DefaultGroupID(cfg.Name)
	waitCommitted(t, sc, group, topic, parts, 30, st)

	for i, n := range []int{0, 30} {
		if n > 0 {
			produce(t, sc.brokers, topic, parts, 30*i, n) // the sink is busy with them as the broker goes
		}
		sc.down.Store(true)
		waitState(t, st, "down broker")
		time.Sleep(2 * time.Second)
		select {
		case err := <-done:
			t.Fatalf("outage %d: the sink stopped: %v", i+1, err)
		default:
		}
		sc.down.Store(false)
		waitState(t, st, "down broker", "up broker")
		produce(t, sc.brokers, topic, parts, 30*(i+1)+n, 30)
		waitCommitted(t, sc, group, topic, parts, int64(30*(i+2)+n), st)
		st.mu.Lock()
		st.events = nil
		st.mu.Unlock()
	}
	cancel()
	if err := <-done; err != nil {
		t.Fatalf("stop: %v", err)
	}

	clean := s3store.NewMemory()
	ccfg := testConfig(sc.brokers, topic)
	ccfg.Name = "clean"
	runSink(t, ccfg, clean)
	want, got := snapshot(t, clean), snapshot(t, store)
	if len(want) != parts*120/3 || fmt.Sprint(want) != fmt.Sprint(got) {
		t.Fatalf("after the outages %d objects %v, clean run %d objects %v", len(got), keysOf(got), len(want), keysOf(want))
	}
}

// downConverter fails like a Schema Registry that cannot be reached while
// down, and passes records through otherwise.
type downConverter struct{ down atomic.Bool }

func (c *downConverter) Convert(_ context.Context, _ string, _ bool, _ []byte) (*format.Typed, error) {
	if c.down.Load() {
		return nil, errors.New(`Get "http://127.0.0.1:1/schemas/ids/1": dial tcp 127.0.0.1:1: connect: connection refused`)
	}
	return nil, nil
}

// TestSinkOnceRegistryDownGivesUp: --once exits within OnceTimeout with an
// error naming the registry, having committed nothing.
func TestSinkOnceRegistryDownGivesUp(t *testing.T) {
	brokers := newCluster(t, 1, "r")
	produce(t, brokers, "r", 1, 0, 6)
	cfg := testConfig(brokers, "r")
	cfg.OnceTimeout = 3 * time.Second
	conv := &downConverter{}
	conv.down.Store(true)
	cfg.ValueConverter = conv
	st := newStates()
	cfg.Health = st
	store := s3store.NewMemory()
	s, _ := New(cfg, store, nil)
	start := time.Now()
	_, err := s.Run(context.Background())
	var ue *outage.UnreachableError
	if !errors.As(err, &ue) || ue.Dep != outage.Registry || !strings.Contains(err.Error(), "Schema Registry") || !strings.Contains(err.Error(), "connection refused") {
		t.Fatalf("want an unreachable error naming the registry and the cause, got %v", err)
	}
	if d := time.Since(start); d < cfg.OnceTimeout || d > cfg.OnceTimeout+10*time.Second {
		t.Fatalf("gave up after %v, want about --once-timeout %v", d, cfg.OnceTimeout)
	}
	if got := snapshot(t, store); len(got) != 0 || committed(t, brokers, DefaultGroupID(cfg.Name), "r") >= 0 {
		t.Fatalf("objects %v written or offsets committed while the registry was down", keysOf(got))
	}
	if !st.has("up broker", "down registry") {
		t.Fatalf("states %v", st)
	}
}

// TestSinkRidesOutRegistryOutage: a continuous sink waits for the registry
// to come back, reports it down and up again, and archives everything
// once.
func TestSinkRidesOutRegistryOutage(t *testing.T) {
	brokers := newCluster(t, 2, "r")
	produce(t, brokers, "r", 2, 0, 9)
	cfg := testConfig(brokers, "r")
	cfg.Once = false
	conv := &downConverter{}
	conv.down.Store(true)
	cfg.ValueConverter = conv
	st, store, done, cancel := startWatchedSink(t, cfg)
	defer cancel()
	waitState(t, st, "down registry")
	time.Sleep(2 * time.Second)
	conv.down.Store(false)
	waitState(t, st, "down registry", "up registry")
	waitFor(t, func() bool { return committed(t, brokers, DefaultGroupID(cfg.Name), "r") == 9 })
	cancel()
	if err := <-done; err != nil {
		t.Fatalf("stop: %v", err)
	}
	clean := s3store.NewMemory()
	ccfg := testConfig(brokers, "r")
	ccfg.Name = "clean"
	runSink(t, ccfg, clean)
	if want, got := snapshot(t, clean), snapshot(t, store); len(want) != 6 || fmt.Sprint(want) != fmt.Sprint(got) {
		t.Fatalf("after the outage %v, clean run %v", keysOf(got), keysOf(want))
	}
}
