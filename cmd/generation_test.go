package cmd

import (
	"strings"
	"testing"
	"time"

	"github.com/twmb/franz-go/pkg/kadm"
	"github.com/twmb/franz-go/pkg/kgo"
)

// recreate deletes topic and creates it again with parts partitions.
func recreate(t *testing.T, brokers, topic string, parts int32) {
	t.Helper()
	cl, err := kgo.NewClient(kgo.SeedBrokers(strings.Split(brokers, ",")...))
	if err != nil {
		t.Fatal(err)
	}
	defer cl.Close()
	adm := kadm.NewClient(cl)
	if _, err := adm.DeleteTopic(t.Context(), topic); err != nil {
		t.Fatal(err)
	}
	for deadline := time.Now().Add(10 * time.Second); ; time.Sleep(50 * time.Millisecond) {
		resp, err := adm.CreateTopic(t.Context(), parts, 1, nil, topic)
		if err == nil && resp.Err == nil {
			return
		}
		if time.Now().After(deadline) {
			t.Fatalf("create %s again: %v %v", topic, err, resp.Err)
		}
	}
}

// TestGenerationsCmd archives a topic, recreates it and archives the new
// one as generation 2 (kafkas3.topic.recreated=new-generation): verify and
// source read generation 1 by default, noting the newer one, and
// generation 2 with --generation 2; the default mode stops the topic with
// exit 1.
func TestGenerationsCmd(t *testing.T) {
	ctx := cliContext(t)
	brokers := startKafka(t, 1, "orders")
	produceJSON(t, ctx, brokers, "orders", 1, 6)
	dir := t.TempDir()
	cfg := writeFile(t, "sink.yaml", sinkYAML(brokers, dir, "orders", 2))
	mustRun(t, ctx, ExitOK, "sink", "-c", cfg, "--once", "--log-level", "warn")
	recreate(t, brokers, "orders", 1)
	produceJSON(t, ctx, brokers, "orders", 1, 3)

	r := mustRun(t, ctx, ExitFail, "sink", "-c", cfg, "--once", "--log-level", "warn")
	if !strings.Contains(r.err, "topic orders was deleted and created again") || !strings.Contains(r.err, "partition 0 up to offset 5") {
		t.Fatalf("sink in the default mode: %s", r.err)
	}
	r = mustRun(t, ctx, ExitOK, "sink", "-c", cfg, "--once", "--log-level", "warn", "-p", "kafkas3.topic.recreated=new-generation")
	if !strings.Contains(r.out, "records=3 objects=2") {
		t.Fatalf("new generation's summary: %s", r.out)
	}

	r = mustRun(t, ctx, ExitOK, "verify", "-c", cfg)
	if !strings.Contains(r.out, "orders  0          0..5     6 ") || !strings.Contains(r.err, "the archive also holds generation 2") ||
		!strings.Contains(r.err, "pass --generation 2") {
		t.Errorf("verify of generation 1:\n%s\n%s", r.out, r.err)
	}
	r = mustRun(t, ctx, ExitOK, "verify", "-c", cfg, "--generation", "2")
	if !strings.Contains(r.out, "orders  0          0..2     3 ") || strings.Contains(r.err, "also holds") {
		t.Errorf("verify of generation 2:\n%s\n%s", r.out, r.err)
	}
	r = mustRun(t, ctx, ExitOK, "source", "-c", cfg, "--topic-rename", "copy_$0", "--dry-run", "--generation", "2")
	if !strings.Contains(r.out, "total: 1 topics, 1 partitions, 2 objects,") {
		t.Errorf("dry run of generation 2:\n%s", r.out)
	}
	r = mustRun(t, ctx, ExitOK, "source", "-c", cfg, "--topic-rename", "copy_$0", "--dry-run")
	if !strings.Contains(r.out, "total: 1 topics, 1 partitions, 3 objects,") || !strings.Contains(r.err, "also holds generation 2") {
		t.Errorf("dry run of generation 1:\n%s\n%s", r.out, r.err)
	}
	mustRun(t, ctx, ExitConfig, "verify", "-c", cfg, "--generation", "-1")
	mustRun(t, ctx, ExitConfig, "source", "-c", cfg, "--generation", "-2", "--dry-run")
}
