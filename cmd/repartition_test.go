package cmd

import (
	"bytes"
	"context"
	"strings"
	"testing"

	"github.com/kafkas3/kafkas3/restore"
)

// TestRepartitionFlags: --repartition and --partitions reach the restore
// config, and every combination that cannot work is refused naming its
// flag and why.
func TestRepartitionFlags(t *testing.T) {
	var got *sourceFlags
	c := newSourceCmdRun(IO{}, func(_ context.Context, f *sourceFlags, _ IO) error { got = f; return nil })
	parseFlags(t, c, "--topics", "t", "--repartition", "murmur2", "--partitions", "12", "--create-topics")
	var cfg restore.Config
	if err := got.apply(&cfg); err != nil {
		t.Fatal(err)
	}
	if cfg.Repartition != restore.RepartitionMurmur2 || cfg.Partitions != 12 || !cfg.CreateTopics {
		t.Fatalf("cfg: repartition %q partitions %d create %v", cfg.Repartition, cfg.Partitions, cfg.CreateTopics)
	}
	for _, c := range []struct {
		f    sourceFlags
		want string
	}{
		{sourceFlags{Repartition: "hash"}, `--repartition: "hash" is not a placement: want murmur2 or roundrobin`},
		{sourceFlags{Partitions: 3, CreateTopics: true}, "--partitions: is set without --repartition"},
		{sourceFlags{Repartition: "roundrobin", Partitions: 3}, "--partitions: is set without --create-topics"},
		{sourceFlags{Repartition: "roundrobin", Partitions: -1, CreateTopics: true}, "--partitions: is -1; want a positive partition count"},
		{sourceFlags{Repartition: "murmur2", RestoreGroups: true}, "--restore-groups: is set together with --repartition: a group's offsets count the records of one source partition"},
		{sourceFlags{Repartition: "murmur2", Follow: true}, "--follow: is set together with --repartition"},
	} {
		f := c.f
		f.Topics, f.RenameRegex = "t", defaultRenameRegex
		var cfg restore.Config
		if err := f.apply(&cfg); err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("%+v: err = %v, want %q", c.f, err, c.want)
		}
	}
}

// TestRepartitionDryRun: the dry run's plan shows the placement and the
// target count.
func TestRepartitionDryRun(t *testing.T) {
	var p restore.Plan
	p.Repartition, p.RepartitionPartitions = restore.RepartitionRoundRobin, 9
	var b bytes.Buffer
	if err := p.WriteText(&b); err != nil {
		t.Fatal(err)
	}
	for _, w := range []string{"repartition: roundrobin: keys ignored, onto 9 partitions (--partitions", "isolation.level=read_committed"} {
		if !strings.Contains(b.String(), w) {
			t.Errorf("plan lacks %q:\n%s", w, b.String())
		}
	}
	p.Repartition, p.RepartitionPartitions = restore.RepartitionMurmur2, 0
	b.Reset()
	if err := p.WriteText(&b); err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(b.String(), "repartition: murmur2: a record with a key goes where Kafka's producer puts it") ||
		!strings.Contains(b.String(), "onto each target's partitions") {
		t.Errorf("plan:\n%s", b.String())
	}
}
