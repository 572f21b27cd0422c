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

	"github.com/kafkas3/kafkas3/config"
	"github.com/kafkas3/kafkas3/inspect"
	"github.com/spf13/cobra"
)

// lsFlags are the flags of `kafkas3 ls`.
type lsFlags struct {
	archiveFlags
	JSON     bool
	Timeline string
	By       string
}

// ErrNothingArchived is returned (exit 1) when ls finds nothing of a
// topic asked for, or nothing at all.
var ErrNothingArchived = errors.New("nothing archived")

func newLsCmd(streams IO) *cobra.Command {
	f := &lsFlags{}
	c := &cobra.Command{
		Use:   "ls --config FILE",
		Short: "List what an archive holds per topic and partition, without Kafka",
		Long: `ls prints per topic and partition what an archive holds: the offsets
(first..last), the record count, the first and last record timestamps, the
objects and their bytes, the format (the value objects' extension, +keys
and +headers for their parallel objects, tombstones: for tombstone objects),
whether they hold envelopes, when the partition was last archived (the
newest index object or checkpoint) and its problems in one word: gaps
(offsets no index entry accounts for), lost (offsets Kafka deleted before
the sink read them), overlaps (offsets held by two objects). It takes the
sink's (or the source's) config file.

ls reads the archive index (kafkas3.index.prefix) only: its checkpoints and
the index objects after them, one partition at a time; it reads no data
object. Topics under topics.dir without an index (Confluent's connector,
kafkas3.index.enabled=false) are listed instead: objects, bytes, format
and the lowest start offset of their names; records and times are unknown
there ("no index"). kafkas3 verify checks what ls shows; kafkas3 cat prints
records.

--timeline hour|day adds a line per partition: records (or --by bytes) per
hour or day, UTC, from the first to the last, as a bar of eight heights,
"·" for none. An object's records are spread evenly over the hours or days
its timestamps span.

--json prints one JSON document ({"partitions":[...]}) for scripts, with
the timeline's buckets under --timeline.

Exit codes: 0 listed, 1 a topic of --topics holds nothing (or the store
failed), 2 configuration or flag error.`,
		Example: `  kafkas3 ls --config orders.yaml
  kafkas3 ls -c orders.yaml --topics orders --timeline hour
  kafkas3 ls -c orders.yaml --json | jq '.partitions[] | select(.problems != [])'`,
		Args: cobra.NoArgs,
		RunE: func(c *cobra.Command, _ []string) error {
			return runLsCmd(c.Context(), f, streams)
		},
	}
	fl := c.Flags()
	f.register(fl, "archived topics to list, comma separated (default: every topic of the archive)")
	fl.BoolVar(&f.JSON, "json", false, "print one JSON document instead of the table")
	fl.StringVar(&f.Timeline, "timeline", "", "add a timeline per partition: hour or day")
	fl.StringVar(&f.By, "by", "records", "what the timeline counts: records or bytes")
	return c
}

func runLsCmd(ctx context.Context, f *lsFlags, streams IO) error {
	var errs flagProblems
	var bucket time.Duration
	switch strings.TrimSpace(f.Timeline) {
	case "":
	case "hour":
		bucket = time.Hour
	case "day":
		bucket = 24 * time.Hour
	default:
		errs.bad("--timeline", "is %q; want hour or day", f.Timeline)
	}
	if f.By != "records" && f.By != "bytes" {
		errs.bad("--by", "is %q; want records or bytes", f.By)
	}
	if err := config.Join(errs...); err != nil {
		return err
	}
	a, err := f.open(ctx, streams)
	if err != nil {
		return err
	}
	parts, err := inspect.List(ctx, inspect.Config{Keys: a.rc.Keys, IndexPrefix: a.rc.IndexPrefix, Topics: a.topics, Bucket: bucket,
		Concurrency: a.rc.ReadConcurrency}, a.store)
	if err != nil {
		return fmt.Errorf("ls %s: %w", a.ident, err)
	}
	if f.JSON {
		enc := json.NewEncoder(streams.Out)
		enc.SetIndent("", "  ")
		if err := enc.Encode(struct {
			Partitions []inspect.Partition `json:"partitions"`
		}{append([]inspect.Partition{}, parts...)}); err != nil {
			return err
		}
	} else if err := writeLsText(streams.Out, parts, f.By == "bytes", bucket); err != nil {
		return err
	}
	return lsMissing(a.topics, parts, a.ident)
}

// lsMissing is the error for the topics of --topics that ls found
// nothing of (or for an archive without anything).
func lsMissing(topics []string, parts []inspect.Partition, ident string) error {
	seen := map[string]bool{}
	for _, p := range parts {
		seen[p.Topic] = true
	}
	var missing []string
	for _, t := range topics {
		if !seen[t] {
			missing = append(missing, t)
		}
	}
	switch {
	case len(missing) > 0:
		return fmt.Errorf("%w: %s has neither index entries nor objects of %q", ErrNothingArchived, ident, missing)
	case len(parts) == 0:
		return fmt.Errorf("%w: %s holds no archived topic under its index prefix or topics.dir", ErrNothingArchived, ident)
	}
	return nil
}

// writeLsText prints the table, then the timelines.
func writeLsText(w io.Writer, parts []inspect.Partition, byBytes bool, bucket time.Duration) error {
	tw := tabwriter.NewWriter(w, 0, 4, 2, ' ', 0)
	fmt.Fprintln(tw, "TOPIC\tPARTITION\tOFFSETS\tRECORDS\tFIRST RECORD\tLAST RECORD\tOBJECTS\tBYTES\tFORMAT\tENVELOPE\tLAST ARCHIVED\tPROBLEMS")
	for _, p := range parts {
		offsets, records, problems := fmt.Sprintf("%d..%d", p.FirstOffset, p.LastOffset), strconv.FormatInt(p.Records, 10), strings.Join(p.Problems, ",")
		envelope := p.Envelope
		if !p.Indexed {
			offsets, records, problems, envelope = fmt.Sprintf("%d..?", p.FirstOffset), "?", "no index", "?"
		}
		if problems == "" {
			problems = "-"
		}
		fmt.Fprintf(tw, "%s\t%d\t%s\t%s\t%s\t%s\t%d\t%s\t%s\t%s\t%s\t%s\n", p.Topic, p.Partition, offsets, records,
			lsTime(p.FirstTime), lsTime(p.LastTime), p.Objects, formatSize(p.Bytes), lsFormat(p), envelope, lsTime(p.Written), problems)
	}
	if err := tw.Flush(); err != nil {
		return err
	}
	return writeTimelines(w, parts, byBytes, bucket)
}

func lsTime(t *time.Time) string {
	if t == nil {
		return "-"
	}
	return t.UTC().Format(time.RFC3339)
}

// lsFormat is a partition's formats with its parallel parts: "json.gz+keys+headers".
func lsFormat(p inspect.Partition) string {
	s := strings.Join(p.Formats, ",")
	for _, part := range p.Parts {
		s += "+" + part
	}
	return s
}

// bars are the timeline's heights, lowest first.
var bars = []rune("▁▂▃▄▅▆▇█")

// writeTimelines prints one line per partition with a timeline:
// "<topic>/<partition> <first bucket> <bars> <last bucket> max <n>".
func writeTimelines(w io.Writer, parts []inspect.Partition, byBytes bool, bucket time.Duration) error {
	what := "records"
	if byBytes {
		what = "bytes"
	}
	header := false
	for _, p := range parts {
		if len(p.Timeline) == 0 {
			continue
		}
		if !header {
			fmt.Fprintf(w, "\ntimeline: %s per bucket, UTC, %s none\n", what, "·")
			header = true
		}
		var top int64
		for _, b := range p.Timeline {
			top = max(top, bucketValue(b, byBytes))
		}
		var sb strings.Builder
		for _, b := range p.Timeline {
			v := bucketValue(b, byBytes)
			if v == 0 {
				sb.WriteRune('·')
				continue
			}
			sb.WriteRune(bars[(v*int64(len(bars))-1)/top])
		}
		layout := "2006-01-02T15"
		if bucket >= 24*time.Hour {
			layout = "2006-01-02"
		}
		first, last := p.Timeline[0].Start.Format(layout), p.Timeline[len(p.Timeline)-1].Start.Format(layout)
		if _, err := fmt.Fprintf(w, "%s/%d  %s %s %s  max %d\n", p.Topic, p.Partition, first, sb.String(), last, top); err != nil {
			return err
		}
	}
	return nil
}

func bucketValue(b inspect.Bucket, byBytes bool) int64 {
	if byBytes {
		return b.Bytes
	}
	return b.Records
}
