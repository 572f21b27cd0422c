package cmd

import (
	"strings"
	"testing"

	"github.com/twmb/franz-go/pkg/kadm"
	"github.com/twmb/franz-go/pkg/kgo"
	"github.com/twmb/franz-go/pkg/kmsg"
)

// TestSourceCmdCreateTopicsWithConfigs: sink --once records the topic's
// configs; source --dry-run shows how the target would be created; source
// --create-topics creates it with them, --topic-config overriding one.
func TestSourceCmdCreateTopicsWithConfigs(t *testing.T) {
	ctx := cliContext(t)
	brokers := startKafka(t, 1)
	cl, err := kgo.NewClient(kgo.SeedBrokers(strings.Split(brokers, ",")...))
	if err != nil {
		t.Fatal(err)
	}
	defer cl.Close()
	adm := kadm.NewClient(cl)
	if _, err := adm.CreateTopic(ctx, 3, 1, map[string]*string{
		"retention.ms": kadm.StringPtr("86400000"), "max.message.bytes": kadm.StringPtr("2000000"),
		"message.timestamp.type": kadm.StringPtr("LogAppendTime"),
	}, "orders"); err != nil {
		t.Fatal(err)
	}
	produceJSON(t, ctx, brokers, "orders", 3, 9)
	dir := t.TempDir()
	cfg := writeFile(t, "sink.yaml", sinkYAML(brokers, dir, "orders", 2))
	mustRun(t, ctx, ExitOK, "sink", "-c", cfg, "--once", "--log-level", "warn")

	args := []string{"source", "-c", cfg, "--topic-rename", "copy_of_$0", "--create-topics", "--topic-config", "retention.ms=-1", "--log-level", "warn"}
	r := mustRun(t, ctx, ExitOK, append(args, "--dry-run")...)
	for _, want := range []string{
		"topic configuration: orders archived at ",
		"3 partitions, replication factor 1, configs max.message.bytes=2000000,message.timestamp.type=LogAppendTime,retention.ms=86400000",
		"copy_of_orders  missing: --create-topics would create it  3 partitions, replication factor 1, configs max.message.bytes=2000000,message.timestamp.type=LogAppendTime,retention.ms=-1",
	} {
		if !strings.Contains(r.out, want) {
			t.Errorf("dry run lacks %q:\n%s", want, r.out)
		}
	}
	r = mustRun(t, ctx, ExitOK, args...)
	if !strings.Contains(r.out, " records=9 ") {
		t.Errorf("source summary: %q", r.out)
	}
	rcs, err := adm.DescribeTopicConfigs(ctx, "copy_of_orders")
	if err != nil {
		t.Fatal(err)
	}
	got := map[string]string{}
	for _, c := range rcs[0].Configs {
		if c.Source == kmsg.ConfigSourceDynamicTopicConfig {
			got[c.Key] = c.MaybeValue()
		}
	}
	if got["retention.ms"] != "-1" || got["max.message.bytes"] != "2000000" || got["message.timestamp.type"] != "LogAppendTime" || len(got) != 3 {
		t.Fatalf("copy_of_orders configs %v", got)
	}
	// The target exists now: the plan compares it, with the override as a difference.
	r = mustRun(t, ctx, ExitOK, append(args, "--dry-run")...)
	if !strings.Contains(r.out, "differs: copy_of_orders retention.ms: archived 86400000, target -1") {
		t.Errorf("dry run of an existing target:\n%s", r.out)
	}
}
