package cmd

import (
	"context"
	"errors"
	"fmt"
	"strconv"
	"strings"
	"time"

	"github.com/kafkas3/kafkas3/archive"
	"github.com/kafkas3/kafkas3/config"
	"github.com/kafkas3/kafkas3/internal/memlimit"
	"github.com/spf13/cobra"
)

// shutdownGrace bounds how long a stop after SIGINT/SIGTERM may take.
const shutdownGrace = 25 * time.Second

// sinkFlags are the flags of `kafkas3 sink`.
type sinkFlags struct {
	configFlags
	Once bool
	// OnceTimeout is --once-timeout: how long --once waits for a
	// dependency that is down before it exits 1 naming it.
	OnceTimeout time.Duration
	// MetricsTextfile is --metrics-textfile, MetricsPushURL
	// --metrics-push-url: where the metrics go when the run ends.
	MetricsTextfile, MetricsPushURL string
	// Dedicated flags for the most used keys; empty means unset.
	Topics    string
	Bootstrap string
	FlushSize string
	LocalDir  string
	Bucket    string
}

// keyFlags maps the dedicated flags that are set to their keys.
func (f *sinkFlags) keyFlags(k *config.Keys) map[string]string {
	return setFlags(map[string]string{
		k.Topics.Name: f.Topics, k.BootstrapServers.Name: f.Bootstrap, k.FlushSize.Name: f.FlushSize,
		k.StoreLocalDir.Name: f.LocalDir, k.S3BucketName.Name: f.Bucket,
	})
}

func newSinkCmd(streams IO) *cobra.Command { return newSinkCmdRun(streams, runSinkCmd) }

// newSinkCmdRun builds `kafkas3 sink` with run as its behaviour, so tests
// can check the flags apart from it.
func newSinkCmdRun(streams IO, run func(context.Context, *sinkFlags, IO) error) *cobra.Command {
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
			return run(c.Context(), f, streams)
		},
	}
	fl := c.Flags()
	fl.StringVarP(&f.ConfigFile, "config", "c", "", "config file (YAML, JSON, .properties or Connect REST JSON)")
	fl.StringArrayVarP(&f.Params, "param", "p", nil, "set any config key: -p key=value (repeatable)")
	fl.BoolVar(&f.Once, "once", false, "archive up to the end offsets seen at start, complete the final files, commit and exit (for cron)")
	fl.DurationVar(&f.OnceTimeout, "once-timeout", archive.DefaultOnceTimeout,
		"with --once: exit 1 naming the dependency (Kafka, the store, the Schema Registry) that stays unreachable this long (a Go duration: 90s, 10m, 1h30m); without --once outages are retried for ever")
	fl.StringVar(&f.LogLevel, "log-level", "info", "log level: debug, info, warn, error")
	f.logFormatFlag(fl)
	f.telemetryFlags(fl)
	fl.StringVar(&f.MetricsTextfile, "metrics-textfile", "",
		"when the run ends (--once), write the metrics to this file in Prometheus' text format, atomically (node_exporter's textfile collector: a *.prom file in its directory)")
	fl.StringVar(&f.MetricsPushURL, "metrics-push-url", "",
		"when the run ends (--once), push the metrics to this Prometheus Pushgateway (http://pushgateway:9091), job kafkas3_sink, grouped by connector name")
	fl.StringVar(&f.Topics, "topics", "", "topics to archive, comma separated (topics)")
	fl.StringVar(&f.Bootstrap, "bootstrap-servers", "", "Kafka brokers host:port, comma separated (bootstrap.servers)")
	fl.StringVar(&f.FlushSize, "flush-size", "", "records per object (flush.size)")
	fl.StringVar(&f.LocalDir, "local-dir", "", "write to this local directory instead of S3 (store.local.dir)")
	fl.StringVar(&f.Bucket, "bucket", "", "S3 bucket (s3.bucket.name)")
	return c
}

// sinkHeapHeadroom is how far above its live heap the sink lets the Go
// heap grow before collecting (memlimit; GOMEMLIMIT overrides it): one and
// a half times the 32 MiB of fetched records the partition workers may hold
// at once. With the default GOGC alone the heap grows to twice the live
// heap (the 200-partition JSON+gzip bench: about 100 MiB live, 257-283 MiB
// RSS; 189 MiB with this headroom, 198 MiB with 64 MiB).
const sinkHeapHeadroom = 48 << 20

func runSinkCmd(ctx context.Context, f *sinkFlags, streams IO) error {
	settings, log, err := loadSettings(config.Sink, f.configFlags, f.keyFlags(config.NewKeys()), streams)
	if settings == nil {
		return err
	}
	sc, serr := settings.Sink(log)
	if err := config.Join(err, serr); err != nil {
		return err
	}
	if f.OnceTimeout <= 0 {
		return fmt.Errorf("%w: --once-timeout %v: must be positive (a Go duration such as 10m)", ErrConfig, f.OnceTimeout)
	}
	cfg := sc.Archive
	cfg.Once, cfg.OnceTimeout = f.Once, f.OnceTimeout
	store, _, err := sc.Store.Open(ctx, log)
	if err != nil {
		return err
	}
	exp := metricsExport{textfile: f.MetricsTextfile, pushURL: f.MetricsPushURL, grouping: cfg.Name}
	if err := exp.check(); err != nil {
		return err
	}
	store, stopTelemetry, err := observeSink(f.MetricsAddr, exp, &cfg, store, sc.LogInterval, log)
	if err != nil {
		return err
	}
	defer stopTelemetry()
	sink, err := archive.New(cfg, store, log)
	if err != nil {
		return fmt.Errorf("%w: %w", ErrConfig, err)
	}
	defer memlimit.Start(ctx, memlimit.Config{Headroom: sinkHeapHeadroom})()
	if cfg.RotateScheduleInterval > 0 {
		log.Warn("rotate.schedule.interval.ms rotates on the wall clock: a replay after a crash may cut objects differently (weaker than exactly-once)")
	}
	isolation := "read_committed"
	if cfg.ReadUncommitted {
		isolation = "read_uncommitted"
	}
	log.Info("sink starting", "name", cfg.Name, "group", cfg.GroupID, "topics", strings.Join(cfg.Topics, ","),
		"topics.regex", cfg.TopicsRegex, "format", sc.FormatName, "store.envelope", cfg.Envelope, "isolation.level", isolation, "once", f.Once)

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
	if rep := r.sum.LostReport(); rep != "" {
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
