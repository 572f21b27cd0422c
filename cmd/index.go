package cmd

import (
	"context"
	"fmt"
	"io"
	"sort"
	"strings"
	"time"

	"github.com/kafkas3/kafkas3/checkpoint"
	"github.com/kafkas3/kafkas3/config"
	"github.com/kafkas3/kafkas3/objindex"
	"github.com/spf13/cobra"
)

// indexRebuildFlags are the flags of `kafkas3 index rebuild`.
type indexRebuildFlags struct {
	archiveFlags
	DryRun bool
	// FromObjects is --from-objects: index the partitions without any
	// index from their objects (objindex.Build) first.
	FromObjects bool
	// Digest is --digest: "sha256" adds the SHA-256 to the entries
	// --from-objects writes.
	Digest string

	// progressEvery is the least time between two progress lines; tests
	// set it to zero.
	progressEvery time.Duration
}

// newIndexCmd is `kafkas3 index`, the archive index's maintenance.
func newIndexCmd(streams IO) *cobra.Command {
	c := &cobra.Command{
		Use:     "index",
		Short:   "Maintain the archive index",
		Example: "  kafkas3 index rebuild --config orders.yaml",
		Args:    cobra.NoArgs,
	}
	c.AddCommand(newIndexRebuildCmd(streams))
	return c
}

func newIndexRebuildCmd(streams IO) *cobra.Command {
	f := &indexRebuildFlags{progressEvery: progressInterval}
	c := &cobra.Command{
		Use:   "rebuild --config FILE",
		Short: "Write the archive index's checkpoints from its log, or the index from the objects",
		Long: `index rebuild writes the checkpoints of the archive index
(<kafkas3.index.prefix>checkpoints/) from its log (the index objects under
<kafkas3.index.prefix>index/): for every topic, partition and writer (every
sink group that wrote there, and an older kafkas3's log without writers),
one checkpoint holding every entry of the writer's index objects. kafkas3
verify and the source then read each partition's checkpoints and only the
index objects after the lowest of them instead of every index object. Use
it on an archive written by an older kafkas3 (before checkpoints, or
before start checkpoints), and again after a sink of an older kafkas3
wrote into the same bucket.

With --from-objects it first indexes every partition under topics.dir that
has data objects but no index at all (an archive written by Confluent's S3
sink connector, or by kafkas3 with kafkas3.index.enabled=false): it reads
each object once (value, .keys and .headers), checksums it (CRC32C; with
--digest sha256 the SHA-256 too) and decodes it with format.class to count
its records. An envelope object's records give their offsets; any other
object's records are taken to hold consecutive offsets from the start
offset its name gives (exact for topics without compaction or
transactions). A partition whose objects without envelopes lie in more
than one folder (a field or time partitioner), or that has tombstone
objects, is left without an index ("left without an index: ..."): their
records need not be consecutive offsets. It writes one index object per
object (per commit) and a checkpoint per partition under the fixed writer
of the group name "kafkas3 index rebuild --from-objects" (its entries
without "envelope" have assumed offsets); the same objects give the same
bytes. Offsets between objects that no object holds show as gaps in
kafkas3 verify. Partitions that have index objects are left to the
checkpoint rebuild.

It reads each writer's newest checkpoint and the index objects after it, so
running it again writes nothing new (idempotent); it needs no Kafka and
takes the sink's (or the source's) config file. Requests run in parallel,
at most kafkas3.read.concurrency (default 64) at a time. Progress goes to
stderr every 10 seconds.

Exit codes: 0 done, 1 the store failed or the index is malformed (the error
names the object), 2 configuration or flag error.`,
		Example: `  kafkas3 index rebuild --config orders.yaml
  kafkas3 index rebuild -c orders.yaml --topics orders,payments --dry-run
  kafkas3 index rebuild -c confluent-archive.yaml --from-objects`,
		Args: cobra.NoArgs,
		RunE: func(c *cobra.Command, _ []string) error {
			return runIndexRebuild(c.Context(), f, streams)
		},
	}
	fl := c.Flags()
	f.register(fl, "archived topics to rebuild, comma separated (default: every topic of the index)")
	fl.BoolVar(&f.DryRun, "dry-run", false, "list the checkpoints that would be written (and, with --from-objects, the partitions that would be indexed); write nothing")
	fl.BoolVar(&f.FromObjects, "from-objects", false, "first index the partitions that have objects under topics.dir but no index, from the objects themselves")
	fl.StringVar(&f.Digest, "digest", "crc32c", "with --from-objects, the checksums of each object: crc32c, or sha256 for the SHA-256 too (as kafkas3.index.digest)")
	return c
}

func runIndexRebuild(ctx context.Context, f *indexRebuildFlags, streams IO) error {
	if f.Digest != "crc32c" && f.Digest != "sha256" {
		var errs flagProblems
		errs.bad("--digest", "is %q: crc32c or sha256", f.Digest)
		return config.Join(errs...)
	}
	a, err := f.open(ctx, streams)
	if err != nil {
		return err
	}
	store, ident, log, prefix, topics := a.store, a.ident, a.log, a.rc.IndexPrefix, a.topics
	stderr := stderrFor(f.configFlags, streams, log)
	if f.FromObjects {
		if err := runFromObjects(ctx, f, a, streams, stderr); err != nil {
			return fmt.Errorf("index rebuild --from-objects %s: %w", ident, err)
		}
	}
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

// runFromObjects is --from-objects: objindex.Build, its progress on stderr
// and its result on stdout.
func runFromObjects(ctx context.Context, f *indexRebuildFlags, a *openedArchive, streams IO, stderr io.Writer) error {
	var last time.Time
	opt := objindex.Options{Prefix: a.rc.IndexPrefix, Keys: a.rc.Keys, Format: a.rc.Format, Topics: a.topics,
		SHA256: f.Digest == "sha256", Concurrency: a.rc.ReadConcurrency, DryRun: f.DryRun,
		Progress: func(done, total int) {
			if now := time.Now(); done == total || now.Sub(last) >= f.progressEvery {
				last = now
				fmt.Fprintf(stderr, "kafkas3 index rebuild --from-objects: %d/%d objects read\n", done, total)
			}
		}}
	res, err := objindex.Build(ctx, a.store, opt)
	verb := "indexed"
	if f.DryRun {
		verb = "would index"
	}
	for _, p := range res.Partitions {
		fmt.Fprintf(streams.Out, "%s %s from its objects\n", verb, p)
	}
	for _, why := range res.Underivable {
		fmt.Fprintf(streams.Out, "left without an index: %s\n", why)
	}
	if err != nil {
		return err
	}
	skipped := make([]string, 0, len(res.Skipped))
	for reason, n := range res.Skipped {
		skipped = append(skipped, fmt.Sprintf("%s: %d", reason, n))
	}
	sort.Strings(skipped)
	fmt.Fprintf(streams.Out, "kafkas3 index rebuild --from-objects: partitions=%d already_indexed=%d underivable=%d objects=%d index_objects=%d checkpoints=%d skipped=[%s] (%s)\n",
		len(res.Partitions), res.Indexed, len(res.Underivable), res.Objects, res.IndexObjects, len(res.Checkpoints), strings.Join(skipped, ", "), verb)
	return nil
}
