package cmd

import (
	"context"
	"errors"
	"fmt"
	"github.com/kafkas3/kafkas3/config"
	"log/slog"
	"strconv"
	"strings"
	"time"

	"github.com/kafkas3/kafkas3/archive"
	"github.com/kafkas3/kafkas3/partition"
	"github.com/spf13/cobra"
	"github.com/twmb/franz-go/pkg/kgo"
)

// shutdownGrace bounds how long a stop after SIGINT/SIGTERM may take.
const shutdownGrace = 25 * time.Second

// sinkFlags are the flags of `kafkas3 sink`.
type sinkFlags struct {
	ConfigFile string
	Params     []string
	Once       bool
	LogLevel   string
	// Dedicated flags for the most used keys; empty means unset.
	Topics    string
	Bootstrap string
	FlushSize string
	LocalDir  string
	Bucket    string
}

// keyFlags maps the dedicated flags to config keys.
func (f *sinkFlags) keyFlags() map[string]string {
	m := map[string]string{}
	for k, v := range map[string]string{
		"topics": f.Topics, "bootstrap.servers": f.Bootstrap, "flush.size": f.FlushSize,
		"store.local.dir": f.LocalDir, "s3.bucket.name": f.Bucket,
	} {
		if v != "" {
			m[k] = v
		}
	}
	return m
}

func newSinkCmd(streams IO) *cobra.Command {
	f := &sinkFlags{}
	c := &cobra.Command{
		Use:   "sink --config FILE",
		Short: "Archive Kafka topics into S3 or a local directory (Confluent S3 sink layout)",
		Long: `sink consumes Kafka topics in the consumer group connect-<name> and writes them
as objects <topics.dir>/<topic>/partition=<p>/<topic>+<p>+<start offset>.<ext>,
exactly as Confluent's S3 sink connector does, committing a partition's offset
only after every object holding its records is complete.

Confluent's formats hold the value only. store.envelope=true (json, avro or
parquet) writes each record whole instead: partition, offset, timestamp and
its type, key, value and headers, nulls included; kafkas3 source restores
all of it.

The config file may be YAML or JSON with flat Confluent keys, a Kafka Connect
.properties file, or Connect's REST JSON ({"name": ..., "config": {...}}).
Precedence: flags > -p key=value > KAFKAS3_<KEY> environment > file > default.`,
		Example: `  kafkas3 sink --config orders.yaml
  kafkas3 sink --config orders.properties --once
  kafkas3 sink -c orders.json -p flush.size=10000 -p s3.part.size=5242880`,
		Args: cobra.NoArgs,
		RunE: func(c *cobra.Command, _ []string) error {
			return runSinkCmd(c.Context(), f, streams)
		},
	}
	fl := c.Flags()
	fl.StringVarP(&f.ConfigFile, "config", "c", "", "config file (YAML, JSON, .properties or Connect REST JSON)")
	fl.StringArrayVarP(&f.Params, "param", "p", nil, "set any config key: -p key=value (repeatable)")
	fl.BoolVar(&f.Once, "once", false, "archive up to the end offsets seen at start, complete the final files, commit and exit (for cron)")
	fl.StringVar(&f.LogLevel, "log-level", "info", "log level: debug, info, warn, error")
	fl.StringVar(&f.Topics, "topics", "", "topics to archive, comma separated (topics)")
	fl.StringVar(&f.Bootstrap, "bootstrap-servers", "", "Kafka brokers host:port, comma separated (bootstrap.servers)")
	fl.StringVar(&f.FlushSize, "flush-size", "", "records per object (flush.size)")
	fl.StringVar(&f.LocalDir, "local-dir", "", "write to this local directory instead of S3 (store.local.dir)")
	fl.StringVar(&f.Bucket, "bucket", "", "S3 bucket (s3.bucket.name)")
	return c
}

// buildSinkConfig turns validated options into the archive config.
func buildSinkConfig(o *config.SinkOptions, once bool, log *slog.Logger) (archive.Config, error) {
	keys, err := keyConfig(o.LayoutSettings)
	if err != nil {
		return archive.Config{}, err
	}
	fm, err := buildFormat(o.FormatSettings)
	if err != nil {
		return archive.Config{}, err
	}
	kind, err := partition.Lookup(o.Partitioner)
	if err != nil {
		return archive.Config{}, fmt.Errorf("%w: %w", ErrConfig, err)
	}
	pt, err := partition.New(kind)
	if err != nil {
		return archive.Config{}, fmt.Errorf("%w: %w", ErrConfig, err)
	}
	kopts, err := kafkaOpts(o.KafkaSettings)
	if o.SessionTimeout > 0 {
		kopts = append(kopts, kgo.SessionTimeout(o.SessionTimeout))
	}
	if o.GroupInstanceID != "" {
		kopts = append(kopts, kgo.InstanceID(o.GroupInstanceID))
	}
	if err != nil {
		return archive.Config{}, err
	}
	null := archive.NullFail
	switch o.NullValues {
	case config.NullValuesIgnore:
		null = archive.NullIgnore
	case config.NullValuesWrite:
		null = archive.NullWrite
	}
	cfg := archive.Config{
		Name: o.Name, Brokers: o.BootstrapServers, GroupID: o.GroupID,
		Topics: o.Topics, TopicsRegex: o.TopicsRegex,
		FlushSize: int(o.FlushSize), RotateInterval: o.RotateInterval, RotateScheduleInterval: o.RotateScheduleInterval,
		Timezone: o.Location, Keys: keys, Format: fm, Partitioner: pt, NullValues: null,
		Once: once, KafkaOpts: kopts,
		ReadUncommitted: o.IsolationLevel == config.IsolationReadUncommitted,
		Envelope:        o.Envelope,
		Compatibility:   archive.Compatibility(o.SchemaCompatibility),
		Errors: archive.ErrorsConfig{
			Tolerance: archive.Tolerance(o.ErrorsTolerance), DLQTopic: o.DLQTopic,
			DLQReplicationFactor: o.DLQReplicationFactor, DLQContextHeaders: o.DLQContextHeaders, Log: o.ErrorsLog,
		},
	}
	cfg.TombstonePartition = o.TombstonePartition
	if o.IndexEnabled {
		cfg.IndexPrefix = o.IndexPrefix
		cfg.SnapshotInterval, cfg.GroupsRegex = o.SnapshotInterval, o.GroupsRegex
		cfg.TopicCheckInterval = o.TopicCheckInterval
	}
	if o.StoreKeys {
		if cfg.KeysFormat, err = buildPartFormat(keyKeysFormat, o.KeysFormat, o.FormatSettings); err != nil {
			return archive.Config{}, err
		}
	}
	if o.StoreHeaders {
		if cfg.HeadersFormat, err = buildPartFormat("headers.format.class", o.HeadersFormat, o.FormatSettings); err != nil {
			return archive.Config{}, err
		}
	}
	vc, vclass, err := buildConverter("value.converter", o.ValueConverter, log)
	if err != nil {
		return archive.Config{}, err
	}
	if vc != nil {
		cfg.ValueConverter, cfg.ValueConverterClass = sinkConverter{vc}, vclass
	}
	kc, kclass, err := buildConverter("key.converter", o.KeyConverter, log)
	if err != nil {
		return archive.Config{}, err
	}
	if kc != nil {
		cfg.KeyConverter, cfg.KeyConverterClass = sinkConverter{kc}, kclass
	}
	return cfg, nil
}

func runSinkCmd(ctx context.Context, f *sinkFlags, streams IO) error {
	settings, log, err := loadSettings(config.Sink, f.ConfigFile, f.Params, f.keyFlags(), streams, f.LogLevel)
	if err != nil {
		return err
	}
	opts, err := settings.Sink()
	if err != nil {
		return err
	}
	cfg, err := buildSinkConfig(opts, f.Once, log)
	if err != nil {
		return err
	}
	store, _, err := buildStore(ctx, opts.StoreSettings, log)
	if err != nil {
		return err
	}
	sink, err := archive.New(cfg, store, log)
	if err != nil {
		return fmt.Errorf("%w: %w", ErrConfig, err)
	}
	if opts.RotateScheduleInterval > 0 {
		log.Warn("rotate.schedule.interval.ms rotates on the wall clock: a replay after a crash may cut objects differently (weaker than exactly-once)")
	}
	log.Info("sink starting", "name", opts.Name, "group", cfg.GroupID, "topics", strings.Join(opts.Topics, ","),
		"topics.regex", opts.TopicsRegex, "format", opts.Format, "store.envelope", opts.Envelope, "isolation.level", opts.IsolationLevel, "once", f.Once)

	type result struct {
		sum archive.Summary
		err error
	}
	done := make(chan result, 1)
	go func() {
		sum, err := sink.Run(ctx)
		done <- result{sum, err}
	}()
	var r result
	select {
	case r = <-done:
	case <-ctx.Done():
		select {
		case r = <-done:
		case <-time.After(shutdownGrace):
			return errors.New("shutdown did not finish within " + strconv.Itoa(int(shutdownGrace.Seconds())) + "s; open objects were not uploaded, and uncommitted records will be archived again on restart")
		}
	}
	fmt.Fprintf(streams.Out, "kafkas3 sink: %s\n", r.sum)
	if rep := r.sum.SkipReport(); rep != "" {
		log.Warn(rep)
	}
	if r.err != nil {
		return r.err
	}
	if ctx.Err() != nil {
		log.Info("stopped by signal; open objects aborted, completed objects committed")
	}
	return nil
}
