package cmd

import (
	"context"
	"fmt"
	"time"

	"github.com/kafkas3/kafkas3/checkpoint"
	"github.com/spf13/cobra"
)

// indexRebuildFlags are the flags of `kafkas3 index rebuild`.
type indexRebuildFlags struct {
	archiveFlags
	DryRun bool

	// progressEvery is the least time between two progress lines; tests
	// set it to zero.
	progressEvery time.Duration
}

// newIndexCmd is `kafkas3 index`, the archive index's maintenance.
func newIndexCmd(streams IO) *cobra.Command {
	c := &cobra.Command{
		Use:   "index",
		Short: "Maintain the archive index",
		Args:  cobra.NoArgs,
	}
	c.AddCommand(newIndexRebuildCmd(streams))
	return c
}

func newIndexRebuildCmd(streams IO) *cobra.Command {
	f := &indexRebuildFlags{progressEvery: progressInterval}
	c := &cobra.Command{
		Use:   "rebuild --config FILE",
		Short: "Write the archive index's checkpoints from its log",
		Long: `index rebuild writes the checkpoints of the archive index
(<kafkas3.index.prefix>checkpoints/) from its log (the index objects under
<kafkas3.index.prefix>index/): for every topic, partition and writer (every
sink group that wrote there, and an older kafkas3's log without writers),
one checkpoint holding every entry of the writer's index objects. kafkas3
verify and the source then read each partition's checkpoints and the index
objects after them instead of every index object. Use it on an archive
written before checkpoints, or by a sink with
kafkas3.index.checkpoint.interval=0.

It reads each writer's newest checkpoint and the index objects after it, so
running it again writes nothing new (idempotent); it needs no Kafka and
takes the sink's (or the source's) config file. Requests run in parallel,
at most kafkas3.read.concurrency (default 64) at a time. Progress goes to
stderr every 10 seconds.

Exit codes: 0 done, 1 the store failed or the index is malformed (the error
names the object), 2 configuration or flag error.`,
		Example: `  kafkas3 index rebuild --config orders.yaml
  kafkas3 index rebuild -c orders.yaml --topics orders,payments --dry-run`,
		Args: cobra.NoArgs,
		RunE: func(c *cobra.Command, _ []string) error {
			return runIndexRebuild(c.Context(), f, streams)
		},
	}
	fl := c.Flags()
	f.register(fl, "archived topics to rebuild, comma separated (default: every topic of the index)")
	fl.BoolVar(&f.DryRun, "dry-run", false, "list the checkpoints that would be written; write nothing")
	return c
}

func runIndexRebuild(ctx context.Context, f *indexRebuildFlags, streams IO) error {
	a, err := f.open(ctx, streams)
	if err != nil {
		return err
	}
	store, ident, log, prefix, topics := a.store, a.ident, a.log, a.rc.IndexPrefix, a.topics
	stderr := stderrFor(f.configFlags, streams, log)
	var last time.Time
	opt := checkpoint.RebuildOptions{Prefix: prefix, Topics: topics, DryRun: f.DryRun, Concurrency: a.rc.ReadConcurrency,
		Progress: func(done, total, written int) {
			if now := time.Now(); done == total || now.Sub(last) >= f.progressEvery {
				last = now
				fmt.Fprintf(stderr, "kafkas3 index rebuild: %d/%d partitions, %d checkpoints\n", done, total, written)
			}
		}}
	res, err := checkpoint.Rebuild(ctx, store, opt)
	if err != nil {
		return fmt.Errorf("index rebuild %s: %w", ident, err)
	}
	verb := "wrote"
	if f.DryRun {
		verb = "would write"
	}
	for _, w := range res.Written {
		fmt.Fprintf(streams.Out, "%s %s\n", verb, w)
	}
	fmt.Fprintf(streams.Out, "kafkas3 index rebuild: partitions=%d checkpoints=%d index_objects_read=%d (%s)\n",
		res.Partitions, len(res.Written), res.Read, verb)
	return nil
}
