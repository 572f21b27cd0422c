package archive

import (
	"bytes"
	"context"
	"log/slog"
	"reflect"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/kafkas3/kafkas3/index"
	"github.com/kafkas3/kafkas3/s3store"
	"github.com/twmb/franz-go/pkg/kadm"
	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kfake"
	"github.com/twmb/franz-go/pkg/kgo"
	"github.com/twmb/franz-go/pkg/kmsg"
)

// configCluster starts a kfake cluster of brokers brokers and creates
// topic with partitions, replication factor rf and configs, and returns
// the cluster and an admin client.
func configCluster(t *testing.T, brokers int, topic string, partitions int32, rf int16, configs map[string]*string) (*kfake.Cluster, *kadm.Client) {
	t.Helper()
	c, err := kfake.NewCluster(kfake.NumBrokers(brokers))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(c.Close)
	cl, err := kgo.NewClient(kgo.SeedBrokers(c.ListenAddrs()...))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(cl.Close)
	adm := kadm.NewClient(cl)
	if _, err := adm.CreateTopic(context.Background(), partitions, rf, configs, topic); err != nil {
		t.Fatal(err)
	}
	return c, adm
}

// topicDescs returns the stored descriptions of topic, oldest first.
func topicDescs(t *testing.T, store s3store.Store, topic string) []*index.Topic {
	t.Helper()
	var out []*index.Topic
	objs := snapshot(t, store)
	for _, k := range keysOf(objs) {
		if !strings.HasPrefix(k, index.TopicsDir(index.DefaultPrefix)+topic+"/") {
			continue
		}
		d, err := index.DecodeTopic(k, strings.NewReader(objs[k]))
		if err != nil {
			t.Fatal(err)
		}
		if want := index.TopicKey(index.DefaultPrefix, topic, d.TimeMs, index.WriterOf("connect-test")); k != want {
			t.Fatalf("description key %s, want %s", k, want)
		}
		out = append(out, d)
	}
	return out
}

// TestTopicDescriptionRecorded: the sink records the partition count, the
// replication factor and exactly the configs set on the topic (not the
// broker defaults nor a dynamic broker config); a run with no change
// writes nothing; a changed config and added partitions are recorded.
func TestTopicDescriptionRecorded(t *testing.T) {
	ctx := context.Background()
	c, adm := configCluster(t, 2, "tc", 3, 2, map[string]*string{
		"cleanup.policy": kadm.StringPtr("compact"), "retention.ms": kadm.StringPtr("86400000"),
		"max.message.bytes": kadm.StringPtr("2000000"), "message.timestamp.type": kadm.StringPtr("LogAppendTime"),
	})
	// A dynamic broker config that applies to topics is not the topic's.
	if _, err := adm.AlterBrokerConfigs(ctx, []kadm.AlterConfig{{Name: "log.retention.bytes", Value: kadm.StringPtr("123456")}}); err != nil {
		t.Fatal(err)
	}
	brokers := c.ListenAddrs()
	produce(t, brokers, "tc", 3, 0, 2)
	store := s3store.NewMemory()
	cfg := indexConfig(brokers, "tc")
	runSink(t, cfg, store)
	ds := topicDescs(t, store, "tc")
	want := map[string]string{"cleanup.policy": "compact", "retention.ms": "86400000",
		"max.message.bytes": "2000000", "message.timestamp.type": "LogAppendTime"}
	if len(ds) != 1 || ds[0].Partitions != 3 || ds[0].ReplicationFactor != 2 || !reflect.DeepEqual(ds[0].Configs, want) {
		t.Fatalf("descriptions %+v; want one: 3 partitions, replication factor 2, configs %v", ds, want)
	}
	if ds[0].TimeMs < time.Now().Add(-time.Minute).UnixMilli() {
		t.Fatalf("time_ms %d is not the wall time", ds[0].TimeMs)
	}

	// No change: nothing written, by this sink or a new one (read from the store).
	before := snapshot(t, store)
	produce(t, brokers, "tc", 3, 2, 1)
	runSink(t, cfg, store)
	if ds := topicDescs(t, store, "tc"); len(ds) != 1 {
		t.Fatalf("a run with no change wrote %d descriptions, want 1 in all", len(ds))
	}
	for k, v := range before {
		if after := snapshot(t, store)[k]; strings.HasPrefix(k, index.TopicsDir(index.DefaultPrefix)) && after != v {
			t.Fatalf("description %s was rewritten", k)
		}
	}

	// A change is recorded, in a new object, also by a --once run that
	// has no record to archive.
	if _, err := adm.AlterTopicConfigs(ctx, []kadm.AlterConfig{{Op: kadm.SetConfig, Name: "segment.bytes", Value: kadm.StringPtr("1048576")}}, "tc"); err != nil {
		t.Fatal(err)
	}
	time.Sleep(2 * time.Millisecond) // a new wall time
	if sum := runSink(t, cfg, store); sum.Records != 0 {
		t.Fatalf("archived %d records, want none", sum.Records)
	}
	want["segment.bytes"] = "1048576"
	if ds := topicDescs(t, store, "tc"); len(ds) != 2 || !reflect.DeepEqual(ds[1].Configs, want) {
		t.Fatalf("a --once run with nothing to archive: descriptions %+v, want a second one with segment.bytes", ds)
	}

	if _, err := adm.AlterTopicConfigs(ctx, []kadm.AlterConfig{{Op: kadm.SetConfig, Name: "retention.ms", Value: kadm.StringPtr("1000")}}, "tc"); err != nil {
		t.Fatal(err)
	}
	if _, err := adm.CreatePartitions(ctx, 1, "tc"); err != nil {
		t.Fatal(err)
	}
	time.Sleep(2 * time.Millisecond)
	produce(t, brokers, "tc", 3, 3, 1)
	runSink(t, cfg, store)
	ds = topicDescs(t, store, "tc")
	want["retention.ms"] = "1000"
	if len(ds) != 3 || !reflect.DeepEqual(ds[2].Configs, want) || ds[2].Partitions != 4 || ds[0].Configs["retention.ms"] != "86400000" {
		t.Fatalf("after the change: %+v; want a third description with retention.ms=1000 and 4 partitions", ds)
	}
	if d, err := index.LatestTopic(ctx, store, index.DefaultPrefix, "tc"); err != nil || !d.Same(ds[2]) {
		t.Fatalf("latest %+v, %v", d, err)
	}
}

// TestTopicDescriptionEveryInterval: a sink that runs until stopped finds
// a config change at its next check.
func TestTopicDescriptionEveryInterval(t *testing.T) {
	c, adm := configCluster(t, 1, "ti", 1, 1, nil)
	cfg := indexConfig(c.ListenAddrs(), "ti")
	cfg.Once = false
	cfg.TopicCheckInterval = 50 * time.Millisecond
	_, store, done, cancel := startWatchedSink(t, cfg)
	defer func() {
		cancel()
		if err := <-done; err != nil {
			t.Errorf("sink: %v", err)
		}
	}()
	waitFor(t, func() bool { return len(topicDescs(t, store, "ti")) == 1 })
	if ds := topicDescs(t, store, "ti"); len(ds[0].Configs) != 0 {
		t.Fatalf("configs %v of a topic that sets none", ds[0].Configs)
	}
	time.Sleep(200 * time.Millisecond) // several checks, no change
	if n := len(topicDescs(t, store, "ti")); n != 1 {
		t.Fatalf("%d descriptions without a change, want 1", n)
	}
	if _, err := adm.AlterTopicConfigs(context.Background(), []kadm.AlterConfig{{Op: kadm.SetConfig, Name: "segment.ms", Value: kadm.StringPtr("60000")}}, "ti"); err != nil {
		t.Fatal(err)
	}
	waitFor(t, func() bool {
		ds := topicDescs(t, store, "ti")
		return len(ds) == 2 && ds[1].Configs["segment.ms"] == "60000"
	})
}

func waitFor(t *testing.T, cond func() bool) {
	t.Helper()
	deadline := time.Now().Add(20 * time.Second)
	for !cond() {
		if time.Now().After(deadline) {
			t.Fatal("condition not met within 20 s")
		}
		time.Sleep(20 * time.Millisecond)
	}
}

// syncBuffer is a log destination safe for concurrent writes.
type syncBuffer struct {
	mu sync.Mutex
	b  bytes.Buffer
}

func (s *syncBuffer) Write(p []byte) (int, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.Write(p)
}

func (s *syncBuffer) String() string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.String()
}

// TestTopicDescriptionDenied: a broker that refuses DescribeConfigs
// (missing ACLs) gives one warning, however often the sink checks, and
// archiving goes on.
func TestTopicDescriptionDenied(t *testing.T) {
	c, _ := configCluster(t, 1, "td", 1, 1, nil)
	c.ControlKey(int16(kmsg.DescribeConfigs), func(kr kmsg.Request) (kmsg.Response, error, bool) {
		c.KeepControl()
		req := kr.(*kmsg.DescribeConfigsRequest)
		resp := req.ResponseKind().(*kmsg.DescribeConfigsResponse)
		for _, r := range req.Resources {
			rr := kmsg.NewDescribeConfigsResponseResource()
			rr.ResourceName, rr.ResourceType = r.ResourceName, r.ResourceType
			rr.ErrorCode = kerr.TopicAuthorizationFailed.Code
			resp.Resources = append(resp.Resources, rr)
		}
		return resp, nil, true
	})
	brokers := c.ListenAddrs()
	produce(t, brokers, "td", 1, 0, 6)
	store := s3store.NewMemory()
	cfg := indexConfig(brokers, "td")
	cfg.Once = false
	cfg.TopicCheckInterval = 20 * time.Millisecond
	var logs syncBuffer
	s, err := New(cfg, store, slog.New(slog.NewTextHandler(&logs, nil)))
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() { _, err := s.Run(ctx); done <- err }()
	waitFor(t, func() bool {
		_, ok := snapshot(t, store)["topics/td/partition=0/td+0+0000000003.json"]
		return ok
	})
	time.Sleep(200 * time.Millisecond)
	cancel()
	if err := <-done; err != nil {
		t.Fatalf("sink: %v", err)
	}
	if n := strings.Count(logs.String(), "cannot record the archived topics"); n != 1 {
		t.Fatalf("%d warnings about the missing ACLs, want 1:\n%s", n, logs.String())
	}
	if ds := topicDescs(t, store, "td"); len(ds) != 0 {
		t.Fatalf("descriptions %+v without DescribeConfigs", ds)
	}
}

// TestTopicDescriptionOneTopicDenied: a broker that refuses DescribeConfigs
// on one of the archived topics only: the others are recorded, and one
// warning names the refused topic.
func TestTopicDescriptionOneTopicDenied(t *testing.T) {
	c, adm := configCluster(t, 1, "ok", 1, 1, map[string]*string{"retention.ms": kadm.StringPtr("1000")})
	if _, err := adm.CreateTopic(context.Background(), 1, 1, nil, "secret"); err != nil {
		t.Fatal(err)
	}
	c.ControlKey(int16(kmsg.DescribeConfigs), func(kr kmsg.Request) (kmsg.Response, error, bool) {
		c.KeepControl()
		req := kr.(*kmsg.DescribeConfigsRequest)
		for _, r := range req.Resources {
			if r.ResourceName == "secret" {
				resp := req.ResponseKind().(*kmsg.DescribeConfigsResponse)
				for _, r := range req.Resources {
					rr := kmsg.NewDescribeConfigsResponseResource()
					rr.ResourceName, rr.ResourceType = r.ResourceName, r.ResourceType
					if r.ResourceName == "secret" {
						rr.ErrorCode = kerr.TopicAuthorizationFailed.Code
					}
					resp.Resources = append(resp.Resources, rr)
				}
				return resp, nil, true
			}
		}
		return nil, nil, false
	})
	store := s3store.NewMemory()
	cfg := indexConfig(c.ListenAddrs(), "ok", "secret")
	var logs syncBuffer
	s, err := New(cfg, store, slog.New(slog.NewTextHandler(&logs, nil)))
	if err != nil {
		t.Fatal(err)
	}
	if _, err := s.Run(context.Background()); err != nil {
		t.Fatal(err)
	}
	if ds := topicDescs(t, store, "ok"); len(ds) != 1 || ds[0].Configs["retention.ms"] != "1000" {
		t.Fatalf("descriptions of ok: %+v", ds)
	}
	if ds := topicDescs(t, store, "secret"); len(ds) != 0 {
		t.Fatalf("descriptions of secret: %+v", ds)
	}
	if n := strings.Count(logs.String(), "cannot record the archived topics"); n != 1 || !strings.Contains(logs.String(), "topics secret:") {
		t.Fatalf("%d warnings, want one naming secret:\n%s", n, logs.String())
	}
}
