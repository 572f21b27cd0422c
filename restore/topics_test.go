package restore

import (
	"bytes"
	"context"
	"errors"
	"io"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/kafkas3/kafkas3/format"
	"github.com/kafkas3/kafkas3/index"
	"github.com/twmb/franz-go/pkg/kadm"
	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kfake"
	"github.com/twmb/franz-go/pkg/kmsg"
)

// describeTopic stores a topic description of topic in the archive, as the
// sink records it.
func (a *archive) describeTopic(topic string, partitions int32, rf int16, configs map[string]string) {
	a.t.Helper()
	d := &index.Topic{V: 1, Topic: topic, TimeMs: 1_700_000_000_000, Partitions: partitions, ReplicationFactor: rf, Configs: configs}
	b, err := index.EncodeTopic(d)
	if err != nil {
		a.t.Fatal(err)
	}
	a.putRaw(index.TopicKey(index.DefaultPrefix, topic, d.TimeMs, index.WriterOf("connect-x")), func(w io.Writer) { w.Write(b) })
}

// topicConfigs returns the configs set on topic itself
// (DYNAMIC_TOPIC_CONFIG), its partition count and replication factor.
func topicConfigs(t *testing.T, adm *kadm.Client, topic string) (map[string]string, int, int) {
	t.Helper()
	ctx := testContext(t)
	td, err := adm.ListTopics(ctx, topic)
	if err != nil || td[topic].Err != nil {
		t.Fatalf("describe %s: %v %v", topic, err, td[topic].Err)
	}
	rf := 0
	for _, p := range td[topic].Partitions {
		rf = max(rf, len(p.Replicas))
	}
	rcs, err := adm.DescribeTopicConfigs(ctx, topic)
	if err != nil {
		t.Fatal(err)
	}
	out := map[string]string{}
	for _, c := range rcs[0].Configs {
		if c.Source == kmsg.ConfigSourceDynamicTopicConfig && c.Value != nil {
			out[c.Key] = *c.Value
		}
	}
	return out, len(td[topic].Partitions), rf
}

func newFakeN(t *testing.T, brokers int) *kfake.Cluster {
	t.Helper()
	c, err := kfake.NewCluster(kfake.NumBrokers(brokers))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(c.Close)
	return c
}

// TestCreateTopicsFromDescription: --create-topics creates the target with
// the archived partition count (above the archive's highest partition),
// replication factor and configs; --topic-config overrides one;
// --replication-factor above the brokers is capped with a warning.
func TestCreateTopicsFromDescription(t *testing.T) {
	c := newFakeN(t, 3)
	brokers := c.ListenAddrs()
	a := newArchive(t, format.NewJSON())
	a.putAt("src", 0, 0, 3)
	a.putAt("src", 1, 0, 3)
	a.describeTopic("src", 4, 2, map[string]string{"cleanup.policy": "delete", "retention.ms": "86400000", "max.message.bytes": "2000000"})
	cfg := baseConfig(brokers, a.f, "src")
	cfg.Rename, cfg.CreateTopics, cfg.IndexPrefix = "dst", true, index.DefaultPrefix
	cfg.TopicConfigs = map[string]string{"retention.ms": "-1"}
	sum, err := mustNew(t, cfg, a, nil).Run(testContext(t), nil)
	if err != nil {
		t.Fatal(err)
	}
	if sum.Records != 6 {
		t.Fatalf("restored %d records, want 6", sum.Records)
	}
	adm := newAdmin(t, brokers)
	got, parts, rf := topicConfigs(t, adm, "dst")
	want := map[string]string{"cleanup.policy": "delete", "retention.ms": "-1", "max.message.bytes": "2000000"}
	if parts != 4 || rf != 2 || !mapsEqual(got, want) {
		t.Fatalf("dst: %d partitions, replication factor %d, configs %v; want 4, 2, %v", parts, rf, got, want)
	}

	// --replication-factor 5 on 3 brokers: capped, with a warning.
	cfg.Rename, cfg.ReplicationFactor, cfg.TopicConfigs = "dst2", 5, nil
	var log logBuffer
	if _, err := mustNew(t, cfg, a, &log).Run(testContext(t), nil); err != nil {
		t.Fatal(err)
	}
	got, parts, rf = topicConfigs(t, adm, "dst2")
	if parts != 4 || rf != 3 || got["retention.ms"] != "86400000" {
		t.Fatalf("dst2: %d partitions, replication factor %d, configs %v; want 4, 3 (capped), the archived configs", parts, rf, got)
	}
	if !strings.Contains(log.String(), "capped at the number of brokers") || !strings.Contains(log.String(), "replication_factor=5") {
		t.Fatalf("no warning about the capped replication factor:\n%s", log.String())
	}
}

func mapsEqual(a, b map[string]string) bool {
	if len(a) != len(b) {
		return false
	}
	for k, v := range a {
		if w, ok := b[k]; !ok || w != v {
			return false
		}
	}
	return true
}

// TestCreateTopicsWithoutDescription: an archive without a topic
// description (older kafkas3, Confluent's) is restored as before: the
// archive's partition count, the broker's defaults, and a warning.
func TestCreateTopicsWithoutDescription(t *testing.T) {
	c := newFakeN(t, 1)
	brokers := c.ListenAddrs()
	a := newArchive(t, format.NewJSON())
	a.putAt("src", 2, 0, 2)
	cfg := baseConfig(brokers, a.f, "src")
	cfg.Rename, cfg.CreateTopics, cfg.IndexPrefix = "dst", true, index.DefaultPrefix
	var log logBuffer
	if _, err := mustNew(t, cfg, a, &log).Run(testContext(t), nil); err != nil {
		t.Fatal(err)
	}
	got, parts, _ := topicConfigs(t, newAdmin(t, brokers), "dst")
	if parts != 3 || len(got) != 0 {
		t.Fatalf("dst: %d partitions, configs %v; want 3 and none", parts, got)
	}
	if !strings.Contains(log.String(), "the archive has no description of the topic") {
		t.Fatalf("no warning about the missing description:\n%s", log.String())
	}
}

// rejectConfig makes the cluster refuse every creation (validate only or
// not) that sets key=value, as a broker refuses an invalid config, and
// counts the creations that were not validate only.
func rejectConfig(c *kfake.Cluster, key, value string, created *int) {
	c.ControlKey(int16(kmsg.CreateTopics), func(kr kmsg.Request) (kmsg.Response, error, bool) {
		c.KeepControl()
		req := kr.(*kmsg.CreateTopicsRequest)
		for _, rt := range req.Topics {
			for _, rc := range rt.Configs {
				if rc.Name == key && rc.Value != nil && *rc.Value == value {
					resp := req.ResponseKind().(*kmsg.CreateTopicsResponse)
					st := kmsg.NewCreateTopicsResponseTopic()
					st.Topic = rt.Topic
					st.ErrorCode = kerr.InvalidConfig.Code
					msg := "Invalid value " + value + " for configuration " + key
					st.ErrorMessage = &msg
					resp.Topics = append(resp.Topics, st)
					return resp, nil, true
				}
			}
		}
		if !req.ValidateOnly {
			*created++
		}
		return nil, nil, false
	})
}

// TestCreateTopicsRejectedConfig: a config the cluster refuses is reported
// by name (archived or --topic-config) before any topic is created or any
// record produced, also for the other, valid, target.
func TestCreateTopicsRejectedConfig(t *testing.T) {
	c := newFakeN(t, 1)
	brokers := c.ListenAddrs()
	var created int
	rejectConfig(c, "cleanup.policy", "bogus", &created)
	a := newArchive(t, format.NewJSON())
	a.putAt("a", 0, 0, 3)
	a.putAt("b", 0, 0, 3)
	a.describeTopic("a", 1, 1, map[string]string{"retention.ms": "1000"})
	a.describeTopic("b", 1, 1, map[string]string{"cleanup.policy": "bogus", "retention.ms": "1000"})
	cfg := baseConfig(brokers, a.f, "a", "b")
	cfg.RenameRegex, cfg.Rename = regexp.MustCompile(".*"), "copy_$0"
	cfg.CreateTopics, cfg.IndexPrefix = true, index.DefaultPrefix
	_, err := mustNew(t, cfg, a, nil).Run(testContext(t), nil)
	if !errors.Is(err, ErrTopicConfig) || !strings.Contains(err.Error(), `target topic "copy_b": config cleanup.policy="bogus" (archived) refused`) ||
		strings.Contains(err.Error(), "retention.ms") || strings.Contains(err.Error(), `"copy_a"`) {
		t.Fatalf("err = %v; want ErrTopicConfig naming copy_b's archived cleanup.policy only", err)
	}
	if !errors.Is(err, kerr.InvalidConfig) {
		t.Errorf("err = %v; want the cluster's refusal (INVALID_CONFIG) in the chain", err)
	}
	t.Logf("refused: %v", err)
	// The override is named as such; one that fixes the config restores.
	cfg.TopicConfigs = map[string]string{"cleanup.policy": "bogus"}
	_, err = mustNew(t, cfg, a, nil).Run(testContext(t), nil)
	if !errors.Is(err, ErrTopicConfig) || !strings.Contains(err.Error(), `config cleanup.policy="bogus" (--topic-config) refused`) ||
		!strings.Contains(err.Error(), `"copy_a"`) {
		t.Fatalf("err = %v; want both targets refused for the --topic-config", err)
	}
	adm := newAdmin(t, brokers)
	td, err := adm.ListTopics(testContext(t))
	if err != nil {
		t.Fatal(err)
	}
	if created != 0 || td.Has("copy_a") || td.Has("copy_b") {
		t.Fatalf("%d topics created (%v) after a refused config", created, td.Names())
	}
	cfg.TopicConfigs = map[string]string{"cleanup.policy": "delete"}
	if sum, err := mustNew(t, cfg, a, nil).Run(testContext(t), nil); err != nil || sum.Records != 6 {
		t.Fatalf("with a valid override: %d records, %v", sum.Records, err)
	}
	if got, _, _ := topicConfigs(t, adm, "copy_b"); got["cleanup.policy"] != "delete" || got["retention.ms"] != "1000" {
		t.Fatalf("copy_b configs %v", got)
	}
}

// TestDryRunComparesTargets: the dry run lists, per target, how a missing
// one would be created and how an existing one differs from the archived
// description (partition count, each config), and says when the archive
// has no description or no cluster is given.
func TestDryRunComparesTargets(t *testing.T) {
	c := newFakeN(t, 1)
	brokers := c.ListenAddrs()
	adm := newAdmin(t, brokers)
	ctx := testContext(t)
	if _, err := adm.CreateTopic(ctx, 2, 1, map[string]*string{"retention.ms": kadm.StringPtr("5000"), "segment.ms": kadm.StringPtr("60000")}, "same"); err != nil {
		t.Fatal(err)
	}
	if _, err := adm.CreateTopic(ctx, 1, 1, nil, "old"); err != nil {
		t.Fatal(err)
	}
	a := newArchive(t, format.NewJSON())
	a.putAt("same", 0, 0, 1)
	a.putAt("new", 0, 0, 1)
	a.putAt("old", 0, 0, 1)
	a.describeTopic("same", 3, 1, map[string]string{"retention.ms": "1000", "cleanup.policy": "delete"})
	a.describeTopic("new", 2, 3, map[string]string{"segment.ms": "1000"})
	cfg := baseConfig(brokers, a.f, "same", "new", "old")
	cfg.CreateTopics, cfg.IndexPrefix, cfg.DryRun, cfg.AllowSameTopic = true, index.DefaultPrefix, true, true
	r := mustNew(t, cfg, a, nil)
	plan, err := r.Plan(ctx)
	if err != nil {
		t.Fatal(err)
	}
	var out bytes.Buffer
	if err := r.WriteTargetPlan(ctx, &out, plan); err != nil {
		t.Fatal(err)
	}
	text := out.String()
	t.Logf("dry run:\n%s", text)
	for _, want := range []string{
		"topic configuration: same archived at 2023-11-14T22:13:20Z: 3 partitions, replication factor 1, configs cleanup.policy=delete,retention.ms=1000",
		"topic configuration: old: no archived topic description",
		"missing: --create-topics would create it  2 partitions, replication factor 1 (archived 3, capped at the number of brokers), configs segment.ms=1000",
		"old     exists",
		"not compared: the archive has no topic description",
		"same    exists",
		"3 differences (listed below)",
		"differs: same partitions: archived 3, target 2",
		"differs: same retention.ms: archived 1000, target 5000",
		"differs: same segment.ms: archived (not set), target 60000",
	} {
		if !strings.Contains(text, want) {
			t.Errorf("dry run text lacks %q:\n%s", want, text)
		}
	}
	if strings.Contains(text, "cleanup.policy: archived") {
		t.Errorf("a config equal on both sides (cleanup.policy=delete, the default) is listed:\n%s", text)
	}

	// A run warns about the differences of existing targets, once.
	var log logBuffer
	run := cfg
	run.DryRun = false
	if _, err := mustNew(t, run, a, &log).Run(ctx, nil); err != nil {
		t.Fatal(err)
	}
	if n := strings.Count(log.String(), "differs from the archived topic description"); n != 1 ||
		!strings.Contains(log.String(), "partitions: archived 3, target 2; retention.ms: archived 1000, target 5000; segment.ms: archived (not set), target 60000") {
		t.Fatalf("%d warnings about the differences:\n%s", n, log.String())
	}

	cfg.Brokers = nil
	r = mustNew(t, cfg, a, nil)
	out.Reset()
	if err := r.WriteTargetPlan(context.Background(), &out, plan); err != nil || !strings.Contains(out.String(), "targets not compared: no bootstrap.servers") {
		t.Fatalf("without brokers: %v\n%s", err, out.String())
	}
}

// TestDescriptionAtUntil: with --until the description in force then is
// used (the latest at or before it); without, the latest.
func TestDescriptionAtUntil(t *testing.T) {
	a := newArchive(t, format.NewJSON())
	for _, d := range []struct {
		ms int64
		v  string
	}{{1000, "1"}, {3000, "3"}} {
		b, _ := index.EncodeTopic(&index.Topic{V: 1, Topic: "src", TimeMs: d.ms, Partitions: 1, ReplicationFactor: 1, Configs: map[string]string{"retention.ms": d.v}})
		a.putRaw(index.TopicKey(index.DefaultPrefix, "src", d.ms, ""), func(w io.Writer) { w.Write(b) })
	}
	for until, want := range map[int64]string{0: "3", 2000: "1", 3000: "3", 500: "1"} {
		cfg := baseConfig(nil, a.f, "src")
		cfg.IndexPrefix, cfg.DryRun = index.DefaultPrefix, true
		if until > 0 {
			cfg.Until = time.UnixMilli(until)
		}
		r := mustNew(t, cfg, a, nil)
		plan := &Plan{Topics: []TopicPlan{{Source: "src", Target: "src"}}}
		if err := r.describeArchived(context.Background(), plan); err != nil {
			t.Fatal(err)
		}
		if d := plan.Topics[0].Described; d == nil || d.Configs["retention.ms"] != want {
			t.Errorf("--until %d: description %+v, want retention.ms=%s", until, d, want)
		}
	}
}

// TestCompactedTargetNullKeys: records without a key bound for a compacted
// target (the archived cleanup.policy of a topic about to be created, or
// an existing target's) are refused by name before the topic is created
// or anything produced; --topic-config cleanup.policy=delete restores.
func TestCompactedTargetNullKeys(t *testing.T) {
	c := newFakeN(t, 1)
	brokers := c.ListenAddrs()
	a := newArchive(t, format.NewJSON())
	a.putAt("src", 0, 0, 3) // values only: no keys
	a.describeTopic("src", 1, 1, map[string]string{"cleanup.policy": "compact"})
	cfg := baseConfig(brokers, a.f, "src")
	cfg.Rename, cfg.CreateTopics, cfg.IndexPrefix = "dst", true, index.DefaultPrefix
	_, err := mustNew(t, cfg, a, nil).Run(testContext(t), nil)
	if !errors.Is(err, ErrCompactedNullKey) || !strings.Contains(err.Error(), `src/0 offset 0 (object "topics/src/partition=0/src+0+0000000000.json")`) ||
		!strings.Contains(err.Error(), "3 archived records have no key") {
		t.Fatalf("err = %v; want ErrCompactedNullKey naming src/0 offset 0", err)
	}
	adm := newAdmin(t, brokers)
	if td, _ := adm.ListTopics(testContext(t)); td.Has("dst") {
		t.Fatal("dst was created")
	}
	// An existing compacted target: refused, nothing produced.
	if _, err := adm.CreateTopic(testContext(t), 1, 1, map[string]*string{"cleanup.policy": kadm.StringPtr("compact,delete")}, "dst2"); err != nil {
		t.Fatal(err)
	}
	cfg.Rename = "dst2"
	if _, err := mustNew(t, cfg, a, nil).Run(testContext(t), nil); !errors.Is(err, ErrCompactedNullKey) {
		t.Fatalf("existing compacted target: err = %v", err)
	}
	if n := targetRecords(t, brokers, "dst2"); n != 0 {
		t.Fatalf("dst2 holds %d records", n)
	}
	cfg.Rename, cfg.TopicConfigs = "dst", map[string]string{"cleanup.policy": "delete"}
	if sum, err := mustNew(t, cfg, a, nil).Run(testContext(t), nil); err != nil || sum.Records != 3 {
		t.Fatalf("with cleanup.policy=delete: %d records, %v", sum.Records, err)
	}
}

// TestCreateTopicsMinInsyncAboveReplicas: an archived min.insync.replicas
// above the replication factor the topic gets (capped on a smaller
// cluster) is refused by name before anything is created; an override
// restores.
func TestCreateTopicsMinInsyncAboveReplicas(t *testing.T) {
	c := newFakeN(t, 1)
	brokers := c.ListenAddrs()
	a := newArchive(t, format.NewJSON())
	a.putAt("src", 0, 0, 2)
	a.describeTopic("src", 1, 3, map[string]string{"min.insync.replicas": "2"})
	cfg := baseConfig(brokers, a.f, "src")
	cfg.Rename, cfg.CreateTopics, cfg.IndexPrefix = "dst", true, index.DefaultPrefix
	_, err := mustNew(t, cfg, a, nil).Run(testContext(t), nil)
	if !errors.Is(err, ErrTopicConfig) || !strings.Contains(err.Error(), `config min.insync.replicas="2" (archived) needs 2 in-sync replicas, the topic gets replication factor 1, capped from 3`) {
		t.Fatalf("err = %v", err)
	}
	if td, _ := newAdmin(t, brokers).ListTopics(testContext(t)); td.Has("dst") {
		t.Fatal("dst was created")
	}
	cfg.TopicConfigs = map[string]string{"min.insync.replicas": "1"}
	if sum, err := mustNew(t, cfg, a, nil).Run(testContext(t), nil); err != nil || sum.Records != 2 {
		t.Fatalf("with the override: %d records, %v", sum.Records, err)
	}
}
