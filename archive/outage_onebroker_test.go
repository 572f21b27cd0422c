package archive

import (
	"context"
	"errors"
	"fmt"
	"sync/atomic"
	"testing"
	"time"

	"github.com/kafkas3/kafkas3/s3store"
	"github.com/twmb/franz-go/pkg/kfake"
	"github.com/twmb/franz-go/pkg/kgo"
	"github.com/twmb/franz-go/pkg/kmsg"
)

// TestSinkRidesOutOneBrokerOutage (issue 13, item 2): in a cluster of
// three brokers, one of them (not the group's coordinator, the leader of
// two of the topic's six partitions) goes away twice while a continuous
// sink runs (its requests close their connection). The sink keeps
// running, archives and commits what the other brokers lead meanwhile,
// takes up the lost broker's partitions when it is back, and writes the
// same objects as a clean run.
func TestSinkRidesOutOneBrokerOutage(t *testing.T) {
	const parts, topic = 6, "ob"
	c, err := kfake.NewCluster(kfake.NumBrokers(3), kfake.SeedTopics(parts, topic))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(c.Close)
	cfg := testConfig(c.ListenAddrs(), topic)
	cfg.Once = false
	group := DefaultGroupID(cfg.Name)
	coord := c.CoordinatorFor(group)
	victim := (coord + 1) % 3
	var mine, others []int32
	for p := range int32(parts) {
		leader := coord
		if p < 2 {
			leader, mine = victim, append(mine, p)
		} else {
			others = append(others, p)
		}
		if err := c.MoveTopicPartition(topic, p, leader); err != nil {
			t.Fatal(err)
		}
	}
	var down atomic.Bool
	var refused atomic.Int64
	c.Control(func(kmsg.Request) (kmsg.Response, error, bool) {
		c.KeepControl()
		if down.Load() && c.CurrentNode() == victim {
			refused.Add(1)
			return nil, errors.New("broker down"), true
		}
		return nil, nil, false
	})
	sc := &switchedCluster{brokers: c.ListenAddrs()}
	produce(t, sc.brokers, topic, parts, 0, 30)
	st, store, done, cancel := startWatchedSink(t, cfg)
	defer cancel()
	waitCommitted(t, sc, group, topic, parts, 30, st)

	for i := range 2 {
		from := 30 * (i + 1)
		down.Store(true)
		produceTo(t, sc.brokers, topic, others, from, 30)
		deadline := time.Now().Add(60 * time.Second)
		for !committedAt(sc.brokers, group, topic, others, int64(from+30)) {
			select {
			case err := <-done:
				t.Fatalf("outage %d of broker %d: the sink stopped: %v", i+1, victim, err)
			default:
			}
			if time.Now().After(deadline) {
				t.Fatalf("outage %d of broker %d: partitions %v of the other brokers not committed to %d: %v; states %v",
					i+1, victim, others, from+30, committedAll(sc.brokers, group, topic, parts), st)
			}
			time.Sleep(50 * time.Millisecond)
		}
		down.Store(false)
		produceTo(t, sc.brokers, topic, mine, from, 30)
		waitCommitted(t, sc, group, topic, parts, int64(from+30), st)
	}
	cancel()
	if err := <-done; err != nil {
		t.Fatalf("stop: %v", err)
	}
	if refused.Load() == 0 {
		t.Fatalf("broker %d refused no request: the outages were not seen", victim)
	}
	t.Logf("broker %d refused %d requests in its outages", victim, refused.Load())
	clean := s3store.NewMemory()
	ccfg := testConfig(sc.brokers, topic)
	ccfg.Name = "clean"
	runSink(t, ccfg, clean)
	want, got := snapshot(t, clean), snapshot(t, store)
	if len(want) != parts*90/3 || fmt.Sprint(want) != fmt.Sprint(got) {
		t.Fatalf("after the outages of broker %d: %d objects %v, clean run %d objects %v", victim, len(got), keysOf(got), len(want), keysOf(want))
	}
}

// produceTo writes records from..from+n-1 (as produce does) to each of
// partitions.
func produceTo(t *testing.T, brokers []string, topic string, partitions []int32, from, n int) {
	t.Helper()
	cl, err := kgo.NewClient(kgo.SeedBrokers(brokers...), kgo.RecordPartitioner(kgo.ManualPartitioner()),
		kgo.DisableIdempotentWrite()) // a producer ID could be asked of the broker that is down
	if err != nil {
		t.Fatal(err)
	}
	defer cl.Close()
	var recs []*kgo.Record
	for _, p := range partitions {
		for i := from; i < from+n; i++ {
			recs = append(recs, &kgo.Record{Topic: topic, Partition: p, Key: fmt.Appendf(nil, "k%d", i),
				Value:     fmt.Appendf(nil, `{"p":%d,"i":%d}`, p, i),
				Timestamp: time.UnixMilli(1_700_000_000_000 + int64(i)*1000)})
		}
	}
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	if err := cl.ProduceSync(ctx, recs...).FirstErr(); err != nil {
		t.Fatal(err)
	}
}

// committedAt reports whether group's committed offset is want on each of
// partitions.
func committedAt(brokers []string, group, topic string, partitions []int32, want int64) bool {
	var n int32
	for _, p := range partitions {
		n = max(n, p+1)
	}
	c := committedAll(brokers, group, topic, n)
	for _, p := range partitions {
		if c == nil || c[p] != want {
			return false
		}
	}
	return true
}
