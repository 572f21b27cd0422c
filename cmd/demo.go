package cmd

import (
	"context"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"log/slog"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"time"

	"github.com/kafkas3/kafkas3/archive"
	"github.com/kafkas3/kafkas3/convert"
	"github.com/kafkas3/kafkas3/format"
	"github.com/kafkas3/kafkas3/index"
	"github.com/kafkas3/kafkas3/internal/srfake"
	"github.com/kafkas3/kafkas3/partition"
	"github.com/kafkas3/kafkas3/restore"
	"github.com/kafkas3/kafkas3/s3store"
	"github.com/spf13/cobra"
	"github.com/twmb/avro"
	"github.com/twmb/franz-go/pkg/kfake"
	"github.com/twmb/franz-go/pkg/kgo"
)

// demoOptions are the flags of `kafkas3 demo`.
type demoOptions struct {
	Dir     string
	Format  string // avro (default) or json
	Verbose bool
}

func newDemoCmd(streams IO) *cobra.Command {
	opts := demoOptions{}
	c := &cobra.Command{
		Use:   "demo",
		Short: "Run the quick start on an in-process broker, schema registry and a local directory",
		Long: `demo reproduces Confluent's S3 sink quick start. It starts an in-process Kafka
broker and an in-process Schema Registry (Confluent's REST API on 127.0.0.1),
produces the nine quick-start records {"f1":"value1"} … {"f1":"value9"} to
s3_topic as Avro in Confluent's wire format, with the quick-start schema
  {"type":"record","name":"myrecord","fields":[{"name":"f1","type":"string"}]}
archives them as the connector would with
  value.converter=io.confluent.connect.avro.AvroConverter
  format.class=io.confluent.connect.s3.format.avro.AvroFormat  flush.size=3
into a local directory, and prints every object key with its records decoded.

It then closes the loop: it restores the archive of s3_topic into
copy_of_s3_topic on the same broker, as
  kafkas3 source --topic-rename 'copy_of_$0' --create-topics
would (values re-framed for the registry under copy_of_s3_topic-value), and
prints the restored records (partition, offset, value) read back from
copy_of_s3_topic.

--format json runs the same with JSON values and JsonFormat (.json objects).
It needs no network and no configuration.`,
		Example: `  kafkas3 demo
  kafkas3 demo --format json --dir /tmp/kafkas3-demo`,
		Args: cobra.NoArgs,
		RunE: func(c *cobra.Command, _ []string) error {
			return runDemo(c.Context(), opts, streams)
		},
	}
	c.Flags().StringVar(&opts.Dir, "dir", "kafkas3-demo", "local directory that receives the archive")
	c.Flags().StringVar(&opts.Format, "format", "avro", "archive format: avro (Avro values with a schema registry) or json")
	c.Flags().BoolVarP(&opts.Verbose, "verbose", "v", false, "log what the sink does")
	return c
}

const demoTopic = "s3_topic"

// demoStepTimeout bounds the archive and the restore step of the demo.
const demoStepTimeout = time.Minute

// demoSchema is the quick start's value schema.
const demoSchema = `{"type":"record","name":"myrecord","fields":[{"name":"f1","type":"string"}]}`

// demoRun is what differs between the Avro and the JSON demo.
type demoRun struct {
	format    format.Format
	converter *convert.AvroConverter // nil for JSON
	schema    *format.Schema         // nil for JSON
}

func runDemo(ctx context.Context, opts demoOptions, streams IO) error {
	out := streams.Out
	log := slog.New(slog.DiscardHandler)
	if opts.Verbose {
		log = slog.New(slog.NewTextHandler(streams.Err, &slog.HandlerOptions{Level: slog.LevelDebug}))
	}
	run, closeRun, err := newDemoRun(opts.Format, log, out)
	if err != nil {
		return err
	}
	defer closeRun()

	cluster, err := kfake.NewCluster(kfake.NumBrokers(1), kfake.SeedTopics(1, demoTopic))
	if err != nil {
		return fmt.Errorf("start in-process broker: %w", err)
	}
	defer cluster.Close()
	brokers := cluster.ListenAddrs()

	if err := demoProduce(ctx, brokers, run); err != nil {
		return err
	}
	if run.converter != nil {
		fmt.Fprintf(out, "produced 9 Avro records (Confluent wire format, subject %s-value) to %s on an in-process broker\n", demoTopic, demoTopic)
	} else {
		fmt.Fprintf(out, "produced 9 records to %s on an in-process broker\n", demoTopic)
	}

	dir, err := filepath.Abs(opts.Dir)
	if err != nil {
		return err
	}
	cleared, err := prepareDemoDir(dir)
	if err != nil {
		return err
	}
	if cleared {
		fmt.Fprintf(out, "removed the archive of an earlier demo run from %s\n", dir)
	}
	store, err := s3store.NewLocal(s3store.LocalConfig{Dir: dir}, log)
	if err != nil {
		return err
	}
	keys := partition.DefaultKeyConfig()
	if err := demoArchive(ctx, run, brokers, store, keys, log, out, dir); err != nil {
		return err
	}
	return demoRestore(ctx, run, brokers, store, keys, log, out, dir)
}

// newDemoRun sets up the --format of the demo: for avro an in-process
// schema registry (stopped by the returned func) and the AvroConverter.
func newDemoRun(name string, log *slog.Logger, out io.Writer) (demoRun, func(), error) {
	var run demoRun
	switch strings.ToLower(strings.TrimSpace(name)) {
	case "avro":
		reg, err := srfake.Start(srfake.Config{Logger: log})
		if err != nil {
			return run, nil, fmt.Errorf("start in-process schema registry: %w", err)
		}
		fail := func(err error) (demoRun, func(), error) { reg.Close(); return run, nil, err }
		if run.converter, err = convert.NewAvro(convert.Config{Kind: convert.KindAvro,
			KeyPrefix: "value.converter.", SchemaRegistryURL: reg.URL(), Logger: log}); err != nil {
			return fail(err)
		}
		parsed, err := avro.Parse(demoSchema)
		if err != nil {
			return fail(err)
		}
		run.schema = &format.Schema{Avro: parsed, Text: demoSchema}
		if run.format, err = format.NewAvro(format.AvroConfig{}); err != nil {
			return fail(err)
		}
		fmt.Fprintf(out, "schema registry listening on %s\n", reg.URL())
		return run, func() { reg.Close() }, nil
	case "json":
		run.format = format.NewJSON()
		return run, func() {}, nil
	}
	return run, nil, fmt.Errorf("%w: --format %q; allowed: avro, json", ErrConfig, name)
}

// demoArchive archives demoTopic into store as the connector would
// (flush.size=3, --once) and prints every object with its records.
func demoArchive(ctx context.Context, run demoRun, brokers []string, store s3store.Store, keys partition.KeyConfig, log *slog.Logger, out io.Writer, dir string) error {
	acfg := archive.Config{
		Name:        "s3-sink",
		Brokers:     brokers,
		Topics:      []string{demoTopic},
		FlushSize:   3,
		Keys:        keys,
		Format:      run.format,
		Partitioner: partition.NewDefault(),
		Once:        true,
	}
	if run.converter != nil {
		acfg.ValueConverter = run.converter
		acfg.ValueConverterClass = convert.KindAvro.ClassName()
	}
	sink, err := archive.New(acfg, store, log)
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
	fmt.Fprintf(out, "archived into %s: %s\n\n", dir, sum)
	return printObjects(ctx, out, store, keys.TopicPrefix(demoTopic), run.format)
}

// demoRestore restores the archive of demoTopic into demoCopyTopic on the
// same broker and prints the restored records.
func demoRestore(ctx context.Context, run demoRun, brokers []string, store s3store.Store, keys partition.KeyConfig, log *slog.Logger, out io.Writer, dir string) error {
	// Restore s3_topic into copy_of_s3_topic, as
	// `kafkas3 source --topic-rename 'copy_of_$0' --create-topics` does.
	rcfg := restore.Config{
		Brokers:       brokers,
		Topics:        []string{demoTopic},
		Rename:        "copy_of_$0",
		RenameRegex:   regexp.MustCompile(defaultRenameRegex),
		Keys:          keys,
		Format:        run.format,
		ArchiveTopics: []string{demoTopic}, // what the sink above archives: the feedback-loop guard
		CreateTopics:  true,
		Identity:      sourceIdentity("file://"+dir, keys.TopicsDir),
	}
	if run.converter != nil {
		rcfg.ValueEncoder = run.converter
	}
	r, err := restore.New(rcfg, store, log)
	if err != nil {
		return err
	}
	rctx, cancel := context.WithTimeout(ctx, demoStepTimeout)
	defer cancel()
	rsum, err := r.Run(rctx, nil)
	if err != nil {
		return fmt.Errorf("restore: %w", err)
	}
	fmt.Fprintf(out, "restored %s into %s: %s\n\n", demoTopic, demoCopyTopic, summaryFields(rsum))
	return printTopic(ctx, out, brokers, demoCopyTopic, 9, run.show)
}

// show renders a restored value: as is for JSON; for Avro, decoded from the
// wire format against the registry, as Avro JSON with the schema id and
// its version under the topic's value subject (0 if not registered there).
func (d demoRun) show(ctx context.Context, topic string, v []byte) (string, error) {
	if d.converter == nil {
		return string(v), nil
	}
	t, err := d.converter.Convert(ctx, topic, false, v)
	if err != nil {
		return "", err
	}
	s, err := avroJSON(t)
	if err != nil {
		return "", err
	}
	return fmt.Sprintf("%s (schema id %d, %s v%d)", s, t.Schema.ID, convert.SubjectName(topic, false), t.Schema.Version), nil
}

// avroJSON renders a typed value as Avro's JSON encoding.
func avroJSON(t *format.Typed) (string, error) {
	native, err := format.AvroNative(t)
	if err != nil {
		return "", err
	}
	b, err := t.Schema.Avro.EncodeJSON(native)
	if err != nil {
		return "", err
	}
	return string(b), nil
}

const demoCopyTopic = "copy_of_" + demoTopic

// printTopic consumes topic from the start until want records arrived and
// prints each record's partition, offset and value, as show renders it.
func printTopic(ctx context.Context, out io.Writer, brokers []string, topic string, want int,
	show func(ctx context.Context, topic string, v []byte) (string, error)) error {
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
		var serr error
		fs.EachRecord(func(rec *kgo.Record) {
			v, err := show(cctx, topic, rec.Value)
			if err != nil && serr == nil {
				serr = fmt.Errorf("read %s: offset %d: %w", topic, rec.Offset, err)
			}
			fmt.Fprintf(out, "    partition=%d offset=%d value=%s\n", rec.Partition, rec.Offset, v)
			n++
		})
		if serr != nil {
			return serr
		}
	}
	return nil
}

// demoProduce produces the nine quick-start records: JSON text, or Avro in
// Confluent's wire format (the schema registered under s3_topic-value over
// the registry's REST API, as a producer's serializer does).
func demoProduce(ctx context.Context, brokers []string, run demoRun) error {
	cl, err := kgo.NewClient(kgo.SeedBrokers(brokers...))
	if err != nil {
		return err
	}
	defer cl.Close()
	pctx, cancel := context.WithTimeout(ctx, 30*time.Second)
	defer cancel()
	recs := make([]*kgo.Record, 9)
	for i := range recs {
		v := fmt.Appendf(nil, `{"f1":"value%d"}`, i+1)
		if run.converter != nil {
			var err error
			v, err = run.converter.Encode(pctx, convert.SubjectName(demoTopic, false), run.schema,
				map[string]any{"f1": fmt.Sprintf("value%d", i+1)})
			if err != nil {
				return fmt.Errorf("encode demo record %d: %w", i+1, err)
			}
		}
		recs[i] = &kgo.Record{Topic: demoTopic, Value: v}
	}
	if err := cl.ProduceSync(pctx, recs...).FirstErr(); err != nil {
		return fmt.Errorf("produce demo records: %w", err)
	}
	return nil
}

// printObjects lists every object under prefix and prints its key and
// contents: JSON lines as stored, Avro records decoded to Avro JSON (what
// avro-tools tojson prints).
func printObjects(ctx context.Context, out io.Writer, store s3store.Store, prefix string, f format.Format) error {
	return store.List(ctx, prefix, func(oi s3store.ObjectInfo) error {
		rc, err := store.Open(ctx, oi.Key)
		if err != nil {
			return err
		}
		defer rc.Close()
		fmt.Fprintf(out, "%s\n", oi.Key)
		if f.Extension() != ".avro" {
			b, err := io.ReadAll(rc)
			if err != nil {
				return fmt.Errorf("read %s: %w", oi.Key, err)
			}
			for _, line := range strings.SplitAfter(string(b), "\n") {
				if line != "" {
					fmt.Fprintf(out, "    %s", line)
				}
			}
			fmt.Fprintln(out)
			return nil
		}
		rd, err := f.NewReader(rc)
		if err != nil {
			return fmt.Errorf("read %s: %w", oi.Key, err)
		}
		for {
			rec, err := rd.Read()
			if errors.Is(err, io.EOF) {
				break
			}
			if err != nil {
				return fmt.Errorf("read %s: %w", oi.Key, err)
			}
			s, err := avroJSON(rec.ValueTyped)
			if err != nil {
				return fmt.Errorf("read %s: %w", oi.Key, err)
			}
			fmt.Fprintf(out, "    %s\n", s)
		}
		fmt.Fprintln(out)
		return nil
	})
}

// prepareDemoDir makes dir ready for a fresh demo archive, so the demo never
// prints or restores the objects of an earlier run (a --format json run
// after the default Avro one would otherwise show the .avro objects). A
// missing or empty dir is fine. A dir that holds only what a demo writes
// (topics/ and _kafkas3/) is an earlier demo's archive: it is removed and
// cleared is true. Anything else in dir is left alone and is a usage error,
// so the demo never deletes files it did not write.
func prepareDemoDir(dir string) (cleared bool, err error) {
	entries, err := os.ReadDir(dir)
	if errors.Is(err, fs.ErrNotExist) {
		return false, nil
	}
	if err != nil {
		return false, err
	}
	ours := map[string]bool{partition.DefaultKeyConfig().TopicsDir: true, strings.TrimSuffix(index.DefaultPrefix, "/"): true}
	for _, e := range entries {
		if !e.IsDir() || !ours[e.Name()] {
			return false, fmt.Errorf("%w: --dir %s holds %q, which no demo wrote; give the demo a new or empty directory", ErrConfig, dir, e.Name())
		}
	}
	for _, e := range entries {
		if err := os.RemoveAll(filepath.Join(dir, e.Name())); err != nil {
			return false, fmt.Errorf("removing the earlier demo archive: %w", err)
		}
	}
	return len(entries) > 0, nil
}
