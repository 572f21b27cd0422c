package cmd

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"strconv"
	"strings"
	"text/tabwriter"
	"time"

	"github.com/kafkas3/kafkas3/prune"
	"github.com/spf13/cobra"
)

// pruneFlags are the flags of `kafkas3 prune`.
type pruneFlags struct {
	archiveFlags
	Before string
	// KeepDays is each --keep-days: N for every topic, or TOPIC=N.
	KeepDays []string
	DryRun   bool
	JSON     bool
}

func newPruneCmd(streams IO) *cobra.Command {
	f := &pruneFlags{}
	c := &cobra.Command{
		Use:   "prune --config FILE (--before TIME | --keep-days N)",
		Short: "Delete an archive's oldest objects with their index entries, consistently",
		Long: `prune deletes, per topic and partition, the archived objects whose records
are all older than a cut, with their index entries, and needs no Kafka. It
takes the sink's config file (store, layout and index keys) and needs the
archive index.

Per partition it finds the low watermark: the first offset of the first
object holding a record at or after the cut (an object that holds records on
both sides stays whole). It then writes the watermark next to the index
(every reader then treats the offsets below it as pruned on purpose, not as
gaps), deletes the objects below it, then the index objects below it, then
the older watermarks. A crash at any point leaves an archive that verify
reports clean and that the source restores from the watermark on; running
the same command again finishes the job.

Objects the store will not delete (Object Lock retention or a legal hold, a
missing permission) are reported and skipped. On a versioned bucket a delete
leaves a delete marker; a locked version stays until its retention ends.

Run it from cron instead of a bucket lifecycle rule: a rule that expires the
objects of an archive with an index leaves entries that point at missing
objects, which verify and the source report as damage.

Exit codes: 0 done (also with refused objects, listed), 1 the store failed
(run it again), 2 configuration or flag error.`,
		Example: `  kafkas3 prune --config orders.yaml --keep-days 365 --dry-run
  kafkas3 prune -c orders.yaml --keep-days 30 --keep-days audit=3650
  kafkas3 prune -c orders.yaml --topics orders --before 2026-01-01T00:00:00Z`,
		Args: cobra.NoArgs,
		RunE: func(c *cobra.Command, _ []string) error {
			return runPruneCmd(c.Context(), f, streams)
		},
	}
	fl := c.Flags()
	f.register(fl, "archived topics to prune, comma separated (default: every topic of the archive)")
	fl.StringVar(&f.Before, "before", "", "prune the objects whose records are all older than this time: RFC 3339 (2026-01-01T00:00:00Z) or Unix milliseconds")
	fl.StringArrayVar(&f.KeepDays, "keep-days", nil, "prune the objects whose records are all older than this many days (instead of --before): N for every topic, or TOPIC=N for one (repeatable: --keep-days 365 --keep-days audit=3650)")
	fl.BoolVar(&f.DryRun, "dry-run", false, "list what would go (objects, bytes, records, index objects per partition) and delete nothing")
	fl.BoolVar(&f.JSON, "json", false, "print one JSON document instead of the table")
	return c
}

// cuts are the times --before or --keep-days give: the default cut (zero
// when only some topics have one) and the per-topic ones.
func (f *pruneFlags) cuts(now time.Time) (time.Time, map[string]time.Time, error) {
	if f.Before != "" {
		if len(f.KeepDays) > 0 {
			return time.Time{}, nil, fmt.Errorf("%w: --before and --keep-days are both set; want one of them", ErrConfig)
		}
		t, err := parseUntil(f.Before)
		if err != nil {
			return time.Time{}, nil, fmt.Errorf("%w: --before: %v", ErrConfig, err)
		}
		if t.After(now) {
			return time.Time{}, nil, fmt.Errorf("%w: --before %s is in the future: it would prune every object", ErrConfig, f.Before)
		}
		return t, nil, nil
	}
	if len(f.KeepDays) == 0 {
		return time.Time{}, nil, fmt.Errorf("%w: want --before TIME or --keep-days N: what to prune", ErrConfig)
	}
	var all time.Time
	per := map[string]time.Time{}
	for _, kd := range f.KeepDays {
		topic, n, scoped := strings.Cut(kd, "=")
		if !scoped {
			topic, n = "", kd
		}
		days, err := strconv.Atoi(strings.TrimSpace(n))
		if err != nil || days <= 0 || scoped && topic == "" {
			return time.Time{}, nil, fmt.Errorf("%w: --keep-days %q: want a positive number of days, or TOPIC=N", ErrConfig, kd)
		}
		cut := now.Add(-time.Duration(days) * 24 * time.Hour)
		if scoped {
			per[topic] = cut
		} else {
			all = cut
		}
	}
	return all, per, nil
}

func runPruneCmd(ctx context.Context, f *pruneFlags, streams IO) error {
	before, perTopic, err := f.cuts(time.Now())
	if err != nil {
		return err
	}
	a, err := f.open(ctx, streams)
	if err != nil {
		return err
	}
	st, ok := a.store.(prune.Store)
	if !ok {
		return fmt.Errorf("%w: the store of %s cannot delete objects", ErrConfig, a.ident)
	}
	// Check also finds whether the bucket has Object Lock, whose retained
	// objects prune leaves alone.
	if err := st.Check(ctx); err != nil {
		return fmt.Errorf("prune %s: %w", a.ident, err)
	}
	cfg := prune.Config{IndexPrefix: a.rc.IndexPrefix, Topics: a.topics, Before: before, TopicBefore: perTopic, DryRun: f.DryRun, Concurrency: a.rc.ReadConcurrency}
	a.log.Info("prune starting", "archive", a.ident, "index", cfg.IndexPrefix, "before", before.UTC().Format(time.RFC3339), "per_topic", len(perTopic), "dry_run", f.DryRun)
	rep, err := prune.Run(ctx, cfg, st, a.log)
	if errors.Is(err, prune.ErrUnknownTopic) {
		return fmt.Errorf("%w: --keep-days: %w", ErrConfig, err)
	}
	if rep != nil {
		if werr := writePrune(streams.Out, rep, f.JSON); werr != nil && err == nil {
			err = werr
		}
	}
	if err != nil {
		return fmt.Errorf("prune %s: %w", a.ident, err)
	}
	return nil
}

// writePrune prints the report: a table and a summary line, or JSON.
func writePrune(w io.Writer, rep *prune.Report, asJSON bool) error {
	if asJSON {
		enc := json.NewEncoder(w)
		enc.SetIndent("", "  ")
		return enc.Encode(rep)
	}
	tw := tabwriter.NewWriter(w, 0, 4, 2, ' ', 0)
	fmt.Fprintln(tw, "TOPIC\tPARTITION\tBEFORE\tWATERMARK\tOBJECTS\tBYTES\tRECORDS\tINDEX OBJECTS\tREFUSED")
	for _, p := range rep.Partitions {
		fmt.Fprintf(tw, "%s\t%d\t%s\t%d -> %d\t%d\t%s\t%d\t%d\t%d\n", p.Topic, p.Partition, p.Before.UTC().Format(time.RFC3339),
			p.Was, p.Below, p.Objects, formatSize(p.Bytes), p.Records, p.IndexObjects, len(p.Refused))
	}
	if err := tw.Flush(); err != nil {
		return err
	}
	for _, p := range rep.Partitions {
		for _, r := range p.Refused {
			fmt.Fprintf(w, "refused: %s/%d %s: %s\n", p.Topic, p.Partition, r.Key, r.Why)
		}
	}
	objects, bytes, records, indexObjects, refused := rep.Totals()
	what := "pruned"
	if rep.DryRun {
		what = "would prune (dry run)"
	}
	_, err := fmt.Fprintf(w, "kafkas3 prune: %s: partitions=%d objects=%d bytes=%d records=%d index_objects=%d refused=%d\n",
		what, len(rep.Partitions), objects, bytes, records, indexObjects, refused)
	return err
}
