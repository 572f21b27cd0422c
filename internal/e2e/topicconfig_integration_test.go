//go:build integration

package e2e

import (
	"context"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/twmb/franz-go/pkg/kadm"
	"github.com/twmb/franz-go/pkg/kmsg"
)

// topicOwnConfigs returns the configs set on topic itself
// (DYNAMIC_TOPIC_CONFIG, as the admin API reports them), its partition
// count and its replication factor.
func (b *bed) topicOwnConfigs(t *testing.T, adm *kadm.Client, topic string) (map[string]string, int, int) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
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
	rc, err := rcs.On(topic, nil)
	if err != nil || rc.Err != nil {
		t.Fatalf("describe configs of %s: %v %v", topic, err, rc.Err)
	}
	out := map[string]string{}
	for _, c := range rc.Configs {
		if c.Source == kmsg.ConfigSourceDynamicTopicConfig {
			out[c.Key] = c.MaybeValue()
		}
	}
	return out, len(td[topic].Partitions), rf
}

// TestIntegrationTopicConfigsRestored (issue 9 item 1): the sink records a
// topic's partition count, replication factor and topic-level configs on
// real Kafka; the dry run shows them; a config the broker rejects
// (--topic-config cleanup.policy=bogus) is reported by name with nothing
// created or produced; --create-topics creates the target with the
// archived configs and one --topic-config override (checked with the
// admin API), --replication-factor above the brokers is capped with a
// warning; a later config change is recorded and the plan lists how the
// existing target differs.
func TestIntegrationTopicConfigsRestored(t *testing.T) {
	b := newBed(t)
	cl, err := b.k.NewClient()
	if err != nil {
		t.Fatal(err)
	}
	defer cl.Close()
	adm := kadm.NewClient(cl)
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Minute)
	defer cancel()

	topic := srcUnique("e2e-topiccfg")
	archived := map[string]string{
		"cleanup.policy":         "compact",
		"retention.ms":           "86400000",
		"max.message.bytes":      "2000000",
		"min.insync.replicas":    "1",
		"message.timestamp.type": "LogAppendTime",
		"segment.bytes":          "1048576",
		"compression.type":       "producer",
	}
	ptrs := map[string]*string{}
	for k, v := range archived {
		ptrs[k] = kadm.StringPtr(v)
	}
	if _, err := adm.CreateTopic(ctx, 3, 1, ptrs, topic); err != nil {
		t.Fatal(err)
	}
	// compression.type=producer is Kafka's default value, set on the topic:
	// the topic sets it, so it is archived too.
	if got, _, _ := b.topicOwnConfigs(t, adm, topic); len(got) != len(archived) {
		t.Fatalf("source topic configs %v, want %v", got, archived)
	}
	const perPart = 10
	b.produce(t, topic, 3, 0, perPart, value)
	bucket := b.s.CreateBucket(t)
	// A compacted target refuses records without keys: the envelope keeps them.
	cfg := b.sinkConf("e2e-topiccfg-"+topic, topic, bucket).with("flush.size", "4", "store.envelope", "true").write(t)
	if sum, _ := runOnce(t, "sink --once", cfg); sum.records != 3*perPart {
		t.Fatalf("sink summary %s", sum.line)
	}

	target := topic + "-restored"
	rename := []string{"--topic-rename", target}

	// The plan shows the archived description and how the target would be created.
	p, code := srcRun(t, "source --dry-run", cfg, 2*time.Minute, append(rename, "--dry-run", "--create-topics")...)
	if code != 0 {
		t.Fatalf("dry run: exit %d\n%s", code, p.logs())
	}
	wantConfigs := "configs cleanup.policy=compact,compression.type=producer,max.message.bytes=2000000,message.timestamp.type=LogAppendTime,min.insync.replicas=1,retention.ms=86400000,segment.bytes=1048576"
	for _, want := range []string{
		"topic configuration: " + topic + " archived at ",
		"3 partitions, replication factor 1, " + wantConfigs,
		target + "  missing: --create-topics would create it  3 partitions, replication factor 1, " + wantConfigs,
	} {
		if !strings.Contains(p.stdout(), want) {
			t.Errorf("dry run lacks %q:\n%s", want, p.stdout())
		}
	}

	// A config the broker rejects: named, nothing created, nothing produced.
	p, code = srcRun(t, "source rejected config", cfg, 2*time.Minute,
		append(rename, "--create-topics", "--topic-config", "cleanup.policy=bogus")...)
	if code == 0 || !strings.Contains(p.stderr(), `config cleanup.policy="bogus" (--topic-config) refused`) ||
		!strings.Contains(p.stderr(), "nothing was created or produced") {
		t.Fatalf("rejected config: exit %d\n%s", code, p.logs())
	}
	if n := b.srcTopicPartitions(t, target); n != -1 {
		t.Fatalf("target %s exists (%d partitions) after a rejected config", target, n)
	}
	t.Logf("rejected: %s", strings.TrimSpace(p.stderr()[strings.LastIndex(strings.TrimSpace(p.stderr()), "\n")+1:]))

	// An archive of values only (no keys) into the compacted target: refused
	// by name before the topic is created.
	bucketV := b.s.CreateBucket(t)
	cfgV := b.sinkConf("e2e-topiccfg-v-"+topic, topic, bucketV).with("flush.size", "4").write(t)
	runOnce(t, "sink --once values only", cfgV)
	p, code = srcRun(t, "source values only into compact", cfgV, 2*time.Minute, append(rename, "--create-topics")...)
	if code == 0 || !strings.Contains(p.stderr(), "compacts (cleanup.policy), and 30 archived records have no key (nothing was produced)") {
		t.Fatalf("values only into a compacted target: exit %d\n%s", code, p.logs())
	}
	if n := b.srcTopicPartitions(t, target); n != -1 {
		t.Fatalf("target %s exists (%d partitions) after the refusal", target, n)
	}

	// The restore: archived configs, one override, the replication factor capped.
	sum, p := srcRunOK(t, "source --create-topics", cfg,
		append(rename, "--create-topics", "--topic-config", "retention.ms=-1", "--replication-factor", "3")...)
	if sum.records != 3*perPart {
		t.Fatalf("source summary %s", sum.line)
	}
	if !strings.Contains(p.stderr(), "capped at the number of brokers") {
		t.Errorf("no warning about the capped replication factor:\n%s", p.logs())
	}
	got, parts, rf := b.topicOwnConfigs(t, adm, target)
	want := map[string]string{}
	for k, v := range archived {
		want[k] = v
	}
	want["retention.ms"] = "-1"
	if parts != 3 || rf != 1 || fmt.Sprint(got) != fmt.Sprint(want) {
		t.Fatalf("target %s: %d partitions, replication factor %d, configs %v\nwant 3, 1, %v", target, parts, rf, got, want)
	}
	for pt := range int32(3) {
		if n := len(b.srcKcat(t, target, pt)); n != perPart {
			t.Fatalf("target %s[%d] holds %d records, want %d", target, pt, n, perPart)
		}
	}

	// A change on the source topic is recorded by the next run, and the
	// plan lists how the existing target differs.
	if _, err := adm.AlterTopicConfigs(ctx, []kadm.AlterConfig{{Op: kadm.SetConfig, Name: "retention.ms", Value: kadm.StringPtr("3600000")}}, topic); err != nil {
		t.Fatal(err)
	}
	runOnce(t, "sink --once after the change", cfg)
	p, code = srcRun(t, "source --dry-run existing", cfg, 2*time.Minute, append(rename, "--dry-run")...)
	if code != 0 {
		t.Fatalf("dry run: exit %d\n%s", code, p.logs())
	}
	for _, want := range []string{
		"retention.ms=3600000",
		target + "  exists",
		"differs: " + target + " retention.ms: archived 3600000, target -1",
	} {
		if !strings.Contains(p.stdout(), want) {
			t.Errorf("dry run of the existing target lacks %q:\n%s", want, p.stdout())
		}
	}
	if strings.Contains(p.stdout(), "differs: "+target+" cleanup.policy") || strings.Contains(p.stdout(), "differs: "+target+" partitions") {
		t.Errorf("dry run lists equal settings as differences:\n%s", p.stdout())
	}
}
