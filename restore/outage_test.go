package restore

import (
	"context"
	"errors"
	"fmt"
	"net"
	"sync"
	"sync/atomic"
	"syscall"
	"testing"
	"time"

	"github.com/aws/smithy-go"
	"github.com/kafkas3/kafkas3/convert"
	"github.com/kafkas3/kafkas3/format"
	"github.com/kafkas3/kafkas3/outage"
	"github.com/kafkas3/kafkas3/s3store"
	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kfake"
	"github.com/twmb/franz-go/pkg/kmsg"
)

// switchedCluster is a kfake cluster whose requests close their
// connection while down, as a broker that went away.
func switchedCluster(t *testing.T, n int32, topics ...string) ([]string, *atomic.Bool) {
	t.Helper()
	c, err := kfake.NewCluster(kfake.NumBrokers(1), kfake.SeedTopics(n, topics...))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(c.Close)
	down := new(atomic.Bool)
	c.Control(func(kmsg.Request) (kmsg.Response, error, bool) {
		c.KeepControl()
		if down.Load() {
			return nil, errors.New("broker down"), true
		}
		return nil, nil, false
	})
	return c.ListenAddrs(), down
}

// downStore fails every request as an S3 endpoint that refuses
// connections while down.
type downStore struct {
	s3store.Store
	down atomic.Bool
}

func (s *downStore) fail(op string) error {
	if !s.down.Load() {
		return nil
	}
	return &smithy.OperationError{ServiceID: "S3", OperationName: op,
		Err: &net.OpError{Op: "dial", Net: "tcp", Err: syscall.ECONNREFUSED}}
}

func (s *downStore) List(ctx context.Context, prefix string, fn func(s3store.ObjectInfo) error) error {
	if err := s.fail("ListObjectsV2"); err != nil {
		return err
	}
	return s.Store.List(ctx, prefix, fn)
}

// depStates records the state changes reported to the readiness.
type depStates struct {
	mu     sync.Mutex
	cur    map[outage.Dep]bool
	events []string
}

func (d *depStates) SetUp(dep outage.Dep)            { d.set(dep, "up") }
func (d *depStates) SetDown(dep outage.Dep, _ error) { d.set(dep, "down") }

func (d *depStates) set(dep outage.Dep, state string) {
	d.mu.Lock()
	defer d.mu.Unlock()
	if d.cur == nil {
		d.cur = map[outage.Dep]bool{}
	}
	if was, ok := d.cur[dep]; !ok || was != (state == "up") {
		d.events = append(d.events, state+" "+string(dep))
	}
	d.cur[dep] = state == "up"
}

// waitFollowStates waits up to 30 s for st to have seen want, in order,
// and fails if the follow run (its result on done) stopped meanwhile.
func waitFollowStates(t *testing.T, st *depStates, done <-chan error, want ...string) {
	t.Helper()
	deadline := time.Now().Add(30 * time.Second)
	for !st.has(want...) {
		if time.Now().After(deadline) {
			t.Fatalf("states %v, want %v", st, want)
		}
		time.Sleep(20 * time.Millisecond)
	}
	select {
	case err := <-done:
		t.Fatalf("follow stopped: %v", err)
	default:
	}
}

func (d *depStates) has(want ...string) bool {
	d.mu.Lock()
	defer d.mu.Unlock()
	i := 0
	for _, e := range d.events {
		if i < len(want) && e == want[i] {
			i++
		}
	}
	return i == len(want)
}

func (d *depStates) String() string {
	d.mu.Lock()
	defer d.mu.Unlock()
	return fmt.Sprint(d.events)
}

// TestFollowRidesOutOutages: --follow started while the store is down
// waits for it, then keeps running while the target broker and then the
// store go away, reports each down and up again, and restores every record
// once, in order.
func TestFollowRidesOutOutages(t *testing.T) {
	brokers, brokerDown := switchedCluster(t, 2, "dst")
	a := newArchive(t, format.NewJSON())
	want := bigArchive(t, a, "src", 2, 2, 5)
	cfg := baseConfig(brokers, a.f, "src")
	cfg.Rename, cfg.Follow, cfg.PollInterval, cfg.RetryTimeout = "dst", true, 20*time.Millisecond, 500*time.Millisecond
	st := &depStates{}
	cfg.Health = st
	obs := newRecordingObserver()
	cfg.Observer = obs
	store := &downStore{Store: a.store}
	store.down.Store(true) // down at start: the first plan waits
	done, cancel := startRestore(t, cfg, store)
	defer cancel()
	restored := func(n int) {
		t.Helper()
		deadline := time.Now().Add(30 * time.Second)
		for {
			got := readTopic(t, brokers, "dst")
			if len(got[0])+len(got[1]) >= n {
				return
			}
			if time.Now().After(deadline) {
				t.Fatalf("follow: %d records restored, want %d; states %v", len(got[0])+len(got[1]), n, st)
			}
			time.Sleep(20 * time.Millisecond)
		}
	}
	waitState := func(want ...string) { t.Helper(); waitFollowStates(t, st, done, want...) }
	waitState("down store")
	store.down.Store(false)
	restored(20)

	brokerDown.Store(true)
	more := values("p1-new", 10, 7)
	a.put("src", 1, 10, more)
	want[1] = append(want[1], more...)
	waitState("down store", "up store", "down broker")
	time.Sleep(1500 * time.Millisecond)
	brokerDown.Store(false)
	waitState("down store", "up store", "down broker", "up broker")
	restored(27)

	store.down.Store(true)
	waitState("down store", "up store", "down broker", "up broker", "down store")
	more = values("p0-new", 10, 4)
	a.put("src", 0, 10, more)
	want[0] = append(want[0], more...)
	time.Sleep(1500 * time.Millisecond)
	store.down.Store(false)
	waitState("down store", "up store", "down broker", "up broker", "down store", "up store")
	restored(31)
	time.Sleep(200 * time.Millisecond) // more passes: nothing may be duplicated
	cancel()
	if err := <-done; err != nil && !errors.Is(err, context.Canceled) {
		t.Fatalf("follow stopped with %v", err)
	}
	got := readTopic(t, brokers, "dst")
	checkValues(t, "dst/0", got[0], want[0])
	checkValues(t, "dst/1", got[1], want[1])
	// Each pass run again after the store failed is a store retry: at the
	// start and in the second store outage.
	obs.mu.Lock()
	defer obs.mu.Unlock()
	if obs.retries["store"] < 2 {
		t.Errorf("store retries %d, want at least 2 (%v)", obs.retries["store"], obs.retries)
	}
}

// TestFailedDep: which failures follow mode rides out.
func TestFailedDep(t *testing.T) {
	dial := &net.OpError{Op: "dial", Net: "tcp", Err: syscall.ECONNREFUSED}
	s3dial := &smithy.OperationError{ServiceID: "S3", OperationName: "GetObject", Err: dial}
	for _, c := range []struct {
		err       error
		dep       outage.Dep
		transient bool
	}{
		{fmt.Errorf("produce: %w", dial), outage.Broker, true},
		{fmt.Errorf("list offsets: %w", kerr.NotLeaderForPartition), outage.Broker, true},
		{fmt.Errorf("read object: %w", s3dial), outage.Store, true},
		{fmt.Errorf("%w: fetching the schema: %w", convert.ErrRegistry, dial), outage.Registry, true},
		{fmt.Errorf("%w: %w", convert.ErrRegistry, convert.ErrRegistryAuth), outage.Registry, false},
		{fmt.Errorf("produce: %w", kerr.TopicAuthorizationFailed), "", false},
		{ErrStreamChanged, "", false},
		{context.Canceled, "", false},
	} {
		dep, tr := failedDep(c.err)
		if tr != c.transient || (tr && dep != c.dep) {
			t.Errorf("failedDep(%v) = %q %v, want %q %v", c.err, dep, tr, c.dep, c.transient)
		}
	}
}

// startRestore runs a restore of cfg from store in the background and
// returns the channel of Run's error and the cancel that ends the run.
func startRestore(t *testing.T, cfg Config, store s3store.Store) (<-chan error, context.CancelFunc) {
	t.Helper()
	r, err := New(cfg, store, nil)
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(testContext(t))
	done := make(chan error, 1)
	go func() { _, err := r.Run(ctx, nil); done <- err }()
	return done, cancel
}
