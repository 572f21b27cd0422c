package cmd

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"strings"
	"text/tabwriter"
	"time"

	"github.com/kafkas3/kafkas3/internal/memlimit"
	"github.com/kafkas3/kafkas3/verify"
	"github.com/spf13/cobra"
)

// verifyFlags are the flags of `kafkas3 verify`.
type verifyFlags struct {
	archiveFlags
	Deep       bool
	AcceptLost bool
	JSON       bool

	// progressEvery is the least time between two --deep progress lines;
	// tests set it to zero.
	progressEvery time.Duration
}

// ErrArchiveProblems is returned (exit 1) when verify found a problem.
var ErrArchiveProblems = errors.New("the archive has problems")

func newVerifyCmd(streams IO) *cobra.Command {
	f := &verifyFlags{progressEvery: progressInterval}
	c := &cobra.Command{
		Use:   "verify --config FILE",
		Short: "Check an archive against its index, without Kafka",
		Long: `verify checks an archive against the archive index the sink writes
(kafkas3.index.prefix, default _kafkas3/) and needs no Kafka. It takes the
sink's (or the source's) config file: store, layout, format and index keys.

Per topic and partition it reports the offsets the index accounts for, and as
problems: gaps (offsets no index entry accounts for, first and last), overlaps
(offsets held by more than one object), objects in the index missing from the
store, objects whose size in the store differs from the index, and objects
under topics.dir with no index entry (for example written by Confluent's
connector, or before the index was enabled). Offsets the sink found lost
before archiving (Kafka deleted them, by retention or DeleteRecords, before
the sink read them; the index records them) are problems too, unless
--accept-lost: then they are listed as accepted.

Plain verify lists the store and compares keys and sizes: it reads no object.
--deep also reads every indexed object: it re-computes its SHA-256 and
compares it with the index, decodes it with format.class (the .keys and
.headers objects with the format of their extension) and checks its record
count and, for envelope objects, each record's offset against the index.
A flipped byte that keeps the size is found only by --deep.

Output: a table per partition and one line per problem, or with --json one
JSON document (docs/archive-tools.md shows its shape). On --deep runs a progress
line goes to stderr every 10 seconds.

Exit codes: 0 the archive is clean, 1 a problem was found (or the store
failed), 2 configuration or flag error.`,
		Example: `  kafkas3 verify --config orders.yaml
  kafkas3 verify -c orders.yaml --topics orders,payments --deep
  kafkas3 verify -c orders.yaml --json | jq '.problems[] | select(.kind == "gap")'`,
		Args: cobra.NoArgs,
		RunE: func(c *cobra.Command, _ []string) error {
			return runVerifyCmd(c.Context(), f, streams)
		},
	}
	fl := c.Flags()
	f.register(fl, "archived topics to check, comma separated (default: every topic of the archive)")
	fl.BoolVar(&f.Deep, "deep", false, "also read every indexed object: its checksums (CRC32C, and SHA-256 where the index has one), decoding, record count and envelope offsets")
	fl.BoolVar(&f.AcceptLost, "accept-lost", false, "list offsets lost before archiving (deleted from Kafka before the sink read them) as accepted, not as problems")
	fl.BoolVar(&f.JSON, "json", false, "print one JSON document instead of the table")
	return c
}

func runVerifyCmd(ctx context.Context, f *verifyFlags, streams IO) error {
	a, err := f.open(ctx, streams)
	if err != nil {
		return err
	}
	sc, rc, topics, store, ident, log := a.sc, a.rc, a.topics, a.store, a.ident, a.log
	cfg := verify.Config{Keys: rc.Keys, Format: rc.Format, IndexPrefix: rc.IndexPrefix, Topics: topics, Deep: f.Deep, AcceptLost: f.AcceptLost,
		Concurrency: rc.ReadConcurrency}
	if f.Deep {
		stderr := stderrFor(f.configFlags, streams, log)
		var last time.Time
		cfg.Progress = func(done, total int, bytes, totalBytes int64) {
			if now := time.Now(); done == total || now.Sub(last) >= f.progressEvery {
				last = now
				fmt.Fprintf(stderr, "kafkas3 verify: read %d/%d objects, %s of %s\n", done, total, formatSize(bytes), formatSize(totalBytes))
			}
		}
	}
	defer memlimit.Start(ctx, memlimit.Config{Headroom: memlimit.ReaderHeadroom})()
	log.Info("verify starting", "archive", ident, "topics.dir", rc.Keys.TopicsDir, "index", rc.IndexPrefix, "deep", f.Deep)
	rep, err := verify.Run(ctx, cfg, store, log)
	if err != nil {
		return fmt.Errorf("verify %s: %w", ident, err)
	}
	noteGenerations(ctx, store, sc.Restore.IndexPrefix, reportTopics(rep, topics), f.Generation, stderrFor(f.configFlags, streams, log), log)
	if f.JSON {
		enc := json.NewEncoder(streams.Out)
		enc.SetIndent("", "  ")
		if err := enc.Encode(rep); err != nil {
			return err
		}
	} else if err := writeVerifyText(streams.Out, rep); err != nil {
		return err
	}
	if !rep.Clean {
		return fmt.Errorf("%w: %d problems in %s (see above)", ErrArchiveProblems, len(rep.Problems), ident)
	}
	return nil
}

// writePruned notes the partitions a prune cut (kafkas3 prune), and the
// objects below a watermark still in the store.
func writePruned(w io.Writer, rep *verify.Report) {
	var cut []string
	for _, p := range rep.Partitions {
		if p.PrunedBelow > 0 {
			cut = append(cut, fmt.Sprintf("%s/%d below %d", p.Topic, p.Partition, p.PrunedBelow))
		}
	}
	if len(cut) > 0 {
		fmt.Fprintf(w, "note: pruned on purpose (kafkas3 prune; not gaps): %s\n", strings.Join(cut, ", "))
	}
	if rep.PrunedLeft > 0 {
		fmt.Fprintf(w, "note: %d objects below a prune watermark are still in the store (Object Lock kept them, or a prune was interrupted: run it again); their records are pruned\n", rep.PrunedLeft)
	}
}

// writeVerifyText prints the report for people: one table row per
// partition, one line per problem, one summary line.
func writeVerifyText(w io.Writer, rep *verify.Report) error {
	tw := tabwriter.NewWriter(w, 0, 4, 2, ' ', 0)
	fmt.Fprintln(tw, "TOPIC\tPARTITION\tOFFSETS\tRECORDS\tABSENT\tLOST\tOBJECTS\tBYTES\tPROBLEMS")
	for _, p := range rep.Partitions {
		fmt.Fprintf(tw, "%s\t%d\t%d..%d\t%d\t%d\t%d\t%d\t%s\t%d\n", p.Topic, p.Partition, p.From, p.Commit-1, p.Records, p.Absent, p.Lost, p.Objects, formatSize(p.Bytes), p.Problems)
	}
	if err := tw.Flush(); err != nil {
		return err
	}
	for _, p := range rep.Problems {
		writeProblem(w, "problem", p)
	}
	for _, p := range rep.Accepted {
		writeProblem(w, "accepted", p)
	}
	writePruned(w, rep)
	if rep.IndexObjects == 0 && rep.Unindexed > 0 {
		fmt.Fprintln(w, "note: no archive index under kafkas3.index.prefix: the archive was written without it (Confluent's connector, kafkas3.index.enabled=false, another prefix), so nothing can be proven")
	}
	mode := fmt.Sprintf("listing and sizes; objects proven by their ETag %d, by the CRC32C the store keeps %d, by size only %d",
		rep.ETagsCompared, rep.ChecksumsCompared, rep.NoChecksum)
	switch {
	case rep.Deep:
		mode = fmt.Sprintf("listing, sizes, checksums and decoding of %d objects (%s)", rep.ObjectsRead, formatSize(rep.BytesRead))
	case !rep.StoreChecksums && rep.ETagsCompared == 0:
		mode = "listing and sizes"
		fmt.Fprintln(w, "note: the store keeps no checksum (a local directory): plain verify compared sizes only; --deep reads every object")
	case rep.NoChecksum > 0:
		fmt.Fprintf(w, "note: %d objects had their size compared only: the store keeps no full-object CRC32C of them (a multipart upload by an older kafkas3 or another tool) or their index entry gives none (v1, SHA-256 only); --deep reads every object\n", rep.NoChecksum)
	}
	verdict := "clean"
	if !rep.Clean {
		verdict = fmt.Sprintf("%d problems", len(rep.Problems))
	}
	if len(rep.Accepted) > 0 {
		verdict += fmt.Sprintf(" (%d accepted: --accept-lost)", len(rep.Accepted))
	}
	_, err := fmt.Fprintf(w, "kafkas3 verify: %s; partitions=%d index_objects=%d unindexed=%d checked: %s\n",
		verdict, len(rep.Partitions), rep.IndexObjects, rep.Unindexed, mode)
	return err
}

// writeProblem prints one problem line: "<what>: <kind> <topic/partition>
// [<key>]: <detail>".
func writeProblem(w io.Writer, what string, p verify.Problem) {
	where := p.Topic
	if p.Partition >= 0 {
		where = fmt.Sprintf("%s/%d", p.Topic, p.Partition)
	}
	if where == "" {
		where = "-"
	}
	line := fmt.Sprintf("%s: %s %s", what, p.Kind, where)
	if p.Key != "" {
		line += fmt.Sprintf(" %q", p.Key)
	}
	fmt.Fprintf(w, "%s: %s\n", line, p.Detail)
}

// formatSize prints n in binary units.
func formatSize(n int64) string {
	const unit = 1024
	if n < unit {
		return fmt.Sprintf("%d B", n)
	}
	div, exp := int64(unit), 0
	for m := n / unit; m >= unit; m /= unit {
		div *= unit
		exp++
	}
	return fmt.Sprintf("%.1f %ciB", float64(n)/float64(div), "KMGTPE"[exp])
}

// reportTopics returns the topics chosen, or else those of the report.
func reportTopics(rep *verify.Report, chosen []string) []string {
	if len(chosen) > 0 {
		return chosen
	}
	var out []string
	for _, p := range rep.Partitions {
		if len(out) == 0 || out[len(out)-1] != p.Topic {
			out = append(out, p.Topic)
		}
	}
	return out
}
