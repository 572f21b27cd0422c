package restore

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/kafkas3/kafkas3/format"
	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kfake"
	"github.com/twmb/franz-go/pkg/kgo"
	"github.com/twmb/franz-go/pkg/kmsg"
)

// newFake starts an in-process Kafka and returns it.
func newFake(t *testing.T) *kfake.Cluster {
	t.Helper()
	c, err := kfake.NewCluster(kfake.NumBrokers(1))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(c.Close)
	return c
}

// TestRetryTransientClusterStates restores into a cluster that answers the
// marker fetch with COORDINATOR_NOT_AVAILABLE and COORDINATOR_LOAD_IN_PROGRESS,
// the marker commit with NOT_COORDINATOR, the topic creation with
// NOT_CONTROLLER, the offset listing with UNKNOWN_TOPIC_OR_PARTITION and
// NOT_LEADER_OR_FOLLOWER, and the config description with REQUEST_TIMED_OUT,
// several times each: the run retries and restores everything. A state
// that does not pass fails after RetryTimeout, saying so.
func TestRetryTransientClusterStates(t *testing.T) {
	c := newFake(t)
	brokers := c.ListenAddrs()
	a := newArchive(t, format.NewJSON())
	a.putAt("src", 0, 0, 5)
	a.putAt("src", 1, 0, 5)
	group := MarkerGroup("dst")
	faults := []*kfake.FaultHandle{
		c.Fault(kfake.Fault{Keys: []kmsg.Key{kmsg.OffsetFetch}, Group: group, Err: kerr.CoordinatorNotAvailable, Count: 2}),
		c.Fault(kfake.Fault{Keys: []kmsg.Key{kmsg.OffsetFetch}, Group: group, Err: kerr.CoordinatorLoadInProgress, Count: 1}),
		c.Fault(kfake.Fault{Keys: []kmsg.Key{kmsg.OffsetCommit}, Group: group, Err: kerr.NotCoordinator, Count: 2}),
		c.Fault(kfake.Fault{Keys: []kmsg.Key{kmsg.CreateTopics}, Topic: "dst", Err: kerr.NotController, Count: 1}),
		c.Fault(kfake.Fault{Keys: []kmsg.Key{kmsg.ListOffsets}, Topic: "dst", Err: kerr.UnknownTopicOrPartition, Count: 2}),
		c.Fault(kfake.Fault{Keys: []kmsg.Key{kmsg.ListOffsets}, Topic: "dst", Err: kerr.NotLeaderForPartition, Count: 2}),
		c.Fault(kfake.Fault{Keys: []kmsg.Key{kmsg.DescribeConfigs}, Err: kerr.RequestTimedOut, Count: 2}),
	}
	cfg := baseConfig(brokers, a.f, "src")
	cfg.Rename, cfg.CreateTopics = "dst", true
	// The client's own retries are off, so the restore's are what is tested.
	cfg.KafkaOpts = []kgo.Opt{kgo.RequestRetries(0)}
	sum, err := mustNew(t, cfg, a, nil).Run(testContext(t), nil)
	if err != nil {
		t.Fatal(err)
	}
	for i, f := range faults {
		if f.Hits() == 0 {
			t.Errorf("fault %d was never hit", i)
		}
	}
	if sum.Records != 10 {
		t.Fatalf("restored %d records, want 10", sum.Records)
	}
	got := readTopic(t, brokers, "dst")
	checkOffsets(t, "dst/0", got[0], [2]int{0, 4})
	checkOffsets(t, "dst/1", got[1], [2]int{0, 4})

	// A coordinator that never comes back: bounded.
	c.Fault(kfake.Fault{Keys: []kmsg.Key{kmsg.OffsetFetch}, Group: MarkerGroup("dst2"), Err: kerr.CoordinatorNotAvailable, Count: -1})
	cfg.Rename, cfg.RetryTimeout = "dst2", 700*time.Millisecond
	start := time.Now()
	_, err = mustNew(t, cfg, a, nil).Run(testContext(t), nil)
	if !errors.Is(err, kerr.CoordinatorNotAvailable) || !strings.Contains(err.Error(), "still failing after") || time.Since(start) > 20*time.Second {
		t.Fatalf("err = %v after %v", err, time.Since(start))
	}
	if n := targetRecords(t, brokers, "dst2"); n > 0 {
		t.Fatalf("dst2 holds %d records", n)
	}
}

// TestTransientClassification: what retry retries.
func TestTransientClassification(t *testing.T) {
	for _, err := range []error{kerr.CoordinatorNotAvailable, kerr.NotCoordinator, kerr.CoordinatorLoadInProgress,
		kerr.NotLeaderForPartition, kerr.LeaderNotAvailable, kerr.UnknownTopicOrPartition, kerr.NotController, kerr.RequestTimedOut, syscall.ECONNREFUSED, syscall.EPIPE} {
		if !transient(errors.Join(errors.New("x"), err)) {
			t.Errorf("%v is not transient", err)
		}
	}
	for _, err := range []error{kerr.TopicAuthorizationFailed, kerr.InvalidReplicationFactor, context.Canceled, context.DeadlineExceeded, fmt.Errorf("dial: %w", context.DeadlineExceeded), errors.New("other")} {
		if transient(err) {
			t.Errorf("%v is transient", err)
		}
	}
}

// TestProducerFollowsTargetMaxMessageBytes: 2 MB records restore into a
// target whose max.message.bytes is 3,000,000 (franz-go's default batch
// limit is 1 MB), and a record over a target's 2,000-byte limit is
// reported by topic, partition and offset before anything is produced.
func TestProducerFollowsTargetMaxMessageBytes(t *testing.T) {
	c := newFake(t)
	brokers := c.ListenAddrs()
	if err := c.CreateTopic("big", 1, map[string]string{"max.message.bytes": "3000000"}); err != nil {
		t.Fatal(err)
	}
	if err := c.CreateTopic("small", 2, map[string]string{"max.message.bytes": "2000"}); err != nil {
		t.Fatal(err)
	}
	a := newArchive(t, fullFormat{})
	large := []*format.Record{{Value: []byte("a")}, {Value: bytes.Repeat([]byte("x"), 2<<20)}, {Value: bytes.Repeat([]byte("y"), 2<<20)}}
	a.put("large", 0, 0, large)
	cfg := baseConfig(brokers, a.f, "large")
	cfg.Rename = "big"
	if _, err := mustNew(t, cfg, a, nil).Run(testContext(t), nil); err != nil {
		t.Fatal(err)
	}
	checkValues(t, "big/0", readTopic(t, brokers, "big")[0], large)

	b := newArchive(t, fullFormat{})
	b.put("s", 0, 0, values("v", 0, 3))
	b.put("s", 1, 0, values("v", 0, 3))
	over := values("v", 3, 3)
	over[1].Value = bytes.Repeat([]byte("z"), 5000) // offset 4
	b.put("s", 1, 3, over)
	cfg = baseConfig(brokers, b.f, "s")
	cfg.Rename = "small"
	_, err := mustNew(t, cfg, b, nil).Run(testContext(t), nil)
	if !errors.Is(err, ErrRecordTooLarge) || !strings.Contains(err.Error(), "s/1 offset 4 (") || !strings.Contains(err.Error(), "max.message.bytes=2000") {
		t.Fatalf("err = %v", err)
	}
	if n := targetRecords(t, brokers, "small"); n != 0 {
		t.Fatalf("small holds %d records", n)
	}
}

// TestResumeVerifiesThroughLeaderChanges: the read of the target's last
// records before resuming gets NOT_LEADER_OR_FOLLOWER twice, as after a
// leader change, and still verifies them (franz-go's consumer re-routes
// such fetch errors itself; this keeps it so).
func TestResumeVerifiesThroughLeaderChanges(t *testing.T) {
	c := newFake(t)
	brokers := c.ListenAddrs()
	a := newArchive(t, format.NewJSON())
	a.putAt("src", 0, 0, 10)
	cfg := baseConfig(brokers, a.f, "src")
	cfg.Rename, cfg.CreateTopics = "dst", true
	if _, err := mustNew(t, cfg, a, nil).Run(testContext(t), nil); err != nil {
		t.Fatal(err)
	}
	f := c.Fault(kfake.Fault{Keys: []kmsg.Key{kmsg.Fetch}, Topic: "dst", Err: kerr.NotLeaderForPartition, Count: 2})
	sum, err := mustNew(t, cfg, a, nil).Run(testContext(t), nil)
	if err != nil || sum.AlreadyPresent != 10 || sum.Records != 0 {
		t.Fatalf("%+v, %v", sum, err)
	}
	if f.Hits() == 0 {
		t.Fatal("the fetch fault was never hit")
	}
}
