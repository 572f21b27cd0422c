package cmd

import (
	"context"
	"fmt"
	"io"
	"log/slog"
	"path/filepath"
	"regexp"
	"strings"
	"time"

	"github.com/kafkas3/kafkas3/archive"
	"github.com/kafkas3/kafkas3/format"
	"github.com/kafkas3/kafkas3/partition"
	"github.com/kafkas3/kafkas3/restore"
	"github.com/kafkas3/kafkas3/s3store"
	"github.com/spf13/cobra"
	"github.com/twmb/franz-go/pkg/kfake"
	"github.com/twmb/franz-go/pkg/kgo"
)

// demoOptions are the flags of `kafkas3 demo`.
type demoOptions struct {
	Dir     string
	Verbose bool
}

func newDemoCmd(streams IO) *cobra.Command {
	opts := demoOptions{}
	c := &cobra.Command{
		Use:   "demo",
		Short: "Run the quick start on an in-process broker and a local directory",
		Long: `demo starts an in-process Kafka broker, produces the nine quick-start records
{"f1":"value1"} … {"f1":"value9"} to s3_topic, archives them with flush.size=3 in
JSON into a local directory, and prints every object key with its contents.

It then closes the loop: it restores the archive of s3_topic into
copy_of_s3_topic on the same broker, as
  kafkas3 source --topic-rename 'copy_of_$0' --create-topics
would, and prints the restored records (partition, offset, value) read back
from copy_of_s3_topic.

It needs no network and no configuration.`,
		Args: cobra.NoArgs,
		RunE: func(c *cobra.Command, _ []string) error {
			return runDemo(c.Context(), opts, streams)
		},
	}
	c.Flags().StringVar(&opts.Dir, "dir", "kafkas3-demo", "local directory that receives the archive")
	c.Flags().BoolVarP(&opts.Verbose, "verbose", "v", false, "log what the sink does")
	return c
}

const demoTopic = "s3_topic"

// demoStepTimeout bounds the archive and the restore step of the demo.
const demoStepTimeout = time.Minute

func runDemo(ctx context.Context, opts demoOptions, streams IO) error {
	log := slog.New(slog.DiscardHandler)
	if opts.Verbose {
		log = slog.New(slog.NewTextHandler(streams.Err, &slog.HandlerOptions{Level: slog.LevelDebug}))
	}
	cluster, err := kfake.NewCluster(kfake.NumBrokers(1), kfake.SeedTopics(1, demoTopic))
	if err != nil {
		return fmt.Errorf("start in-process broker: %w", err)
	}
	defer cluster.Close()
	brokers := cluster.ListenAddrs()

	if err := demoProduce(ctx, brokers); err != nil {
		return err
	}
	fmt.Fprintf(streams.Out, "produced 9 records to %s on an in-process broker\n", demoTopic)

	dir, err := filepath.Abs(opts.Dir)
	if err != nil {
		return err
	}
	store, err := s3store.NewLocal(s3store.LocalConfig{Dir: dir}, log)
	if err != nil {
		return err
	}
	keys := partition.DefaultKeyConfig()
	sink, err := archive.New(archive.Config{
		Name:        "s3-sink",
		Brokers:     brokers,
		Topics:      []string{demoTopic},
		FlushSize:   3,
		Keys:        keys,
		Format:      format.NewJSON(),
		Partitioner: partition.NewDefault(),
		Once:        true,
	}, store, log)
	if err != nil {
		return err
	}
	// The sink stops cleanly (nil error) when its context ends, so a
	// deadline turns a stuck archive step into an error instead of a hang.
	sctx, cancel := context.WithTimeout(ctx, demoStepTimeout)
	sum, err := sink.Run(sctx)
	cancel()
	if err != nil {
		return err
	}
	if sctx.Err() != nil && sum.Records < 9 {
		if ctx.Err() != nil {
			return ctx.Err()
		}
		return fmt.Errorf("archiving %s did not finish within %v (archived %d of 9 records)", demoTopic, demoStepTimeout, sum.Records)
	}
	fmt.Fprintf(streams.Out, "archived into %s: %s\n\n", dir, sum)
	if err := printObjects(ctx, streams.Out, store, keys.TopicPrefix(demoTopic)); err != nil {
		return err
	}

	// Restore s3_topic into copy_of_s3_topic, as
	// `kafkas3 source --topic-rename 'copy_of_$0' --create-topics` does.
	r, err := restore.New(restore.Config{
		Brokers:       brokers,
		Topics:        []string{demoTopic},
		Rename:        "copy_of_$0",
		RenameRegex:   regexp.MustCompile(defaultRenameRegex),
		Keys:          keys,
		Format:        format.NewJSON(),
		ArchiveTopics: []string{demoTopic}, // what the sink above archives: the feedback-loop guard
		CreateTopics:  true,
		Identity:      sourceIdentity("file://"+dir, keys.TopicsDir),
	}, store, log)
	if err != nil {
		return err
	}
	rctx, cancel := context.WithTimeout(ctx, demoStepTimeout)
	defer cancel()
	rsum, err := r.Run(rctx, nil)
	if err != nil {
		return fmt.Errorf("restore: %w", err)
	}
	fmt.Fprintf(streams.Out, "restored %s into %s: %s\n\n", demoTopic, demoCopyTopic, summaryFields(rsum))
	return printTopic(ctx, streams.Out, brokers, demoCopyTopic, 9)
}

const demoCopyTopic = "copy_of_" + demoTopic

// printTopic consumes topic from the start until want records arrived and
// prints each record's partition, offset and value.
func printTopic(ctx context.Context, out io.Writer, brokers []string, topic string, want int) error {
	cl, err := kgo.NewClient(kgo.SeedBrokers(brokers...), kgo.ConsumeTopics(topic),
		kgo.ConsumeResetOffset(kgo.NewOffset().AtStart()))
	if err != nil {
		return err
	}
	defer cl.Close()
	cctx, cancel := context.WithTimeout(ctx, 30*time.Second)
	defer cancel()
	fmt.Fprintf(out, "%s:\n", topic)
	for n := 0; n < want; {
		fs := cl.PollFetches(cctx)
		if err := cctx.Err(); err != nil {
			return fmt.Errorf("read %s: %d of %d records: %w", topic, n, want, err)
		}
		if err := fs.Err(); err != nil {
			return fmt.Errorf("read %s: %w", topic, err)
		}
		fs.EachRecord(func(rec *kgo.Record) {
			fmt.Fprintf(out, "    partition=%d offset=%d value=%s\n", rec.Partition, rec.Offset, rec.Value)
			n++
		})
	}
	return nil
}

func demoProduce(ctx context.Context, brokers []string) error {
	cl, err := kgo.NewClient(kgo.SeedBrokers(brokers...))
	if err != nil {
		return err
	}
	defer cl.Close()
	recs := make([]*kgo.Record, 9)
	for i := range recs {
		recs[i] = &kgo.Record{Topic: demoTopic, Value: fmt.Appendf(nil, `{"f1":"value%d"}`, i+1)}
	}
	pctx, cancel := context.WithTimeout(ctx, 30*time.Second)
	defer cancel()
	if err := cl.ProduceSync(pctx, recs...).FirstErr(); err != nil {
		return fmt.Errorf("produce demo records: %w", err)
	}
	return nil
}

// printObjects lists every object under prefix and prints its key and contents.
func printObjects(ctx context.Context, out io.Writer, store s3store.Store, prefix string) error {
	return store.List(ctx, prefix, func(oi s3store.ObjectInfo) error {
		rc, err := store.Open(ctx, oi.Key)
		if err != nil {
			return err
		}
		defer rc.Close()
		b, err := io.ReadAll(rc)
		if err != nil {
			return fmt.Errorf("read %s: %w", oi.Key, err)
		}
		fmt.Fprintf(out, "%s\n", oi.Key)
		for _, line := range strings.SplitAfter(string(b), "\n") {
			if line != "" {
				fmt.Fprintf(out, "    %s", line)
			}
		}
		fmt.Fprintln(out)
		return nil
	})
}
