package cmd

import (
	"context"
	"fmt"
	"io"
	"log/slog"
	"net"
	"net/url"
	"strings"
	"time"

	"github.com/kafkas3/kafkas3/archive"
	"github.com/kafkas3/kafkas3/health"
	"github.com/kafkas3/kafkas3/metrics"
	"github.com/kafkas3/kafkas3/restore"
	"github.com/kafkas3/kafkas3/s3store"
	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/push"
	"github.com/spf13/pflag"
	"github.com/twmb/franz-go/pkg/kgo"
)

// sourceStallAfter is how long a restore pass may advance nothing (no
// object done, no 512 records acknowledged) before /readyz says its
// progress is down.
const sourceStallAfter = 2 * time.Minute

// telemetryFlags registers --metrics-addr on fl (the sink's and the
// source's).
func (cf *configFlags) telemetryFlags(fl *pflag.FlagSet) {
	fl.StringVar(&cf.MetricsAddr, "metrics-addr", "", "serve Prometheus metrics on http://HOST:PORT/metrics, with /healthz (alive) and /readyz (connected and making progress); off by default")
}

// logFormatFlag registers --log-format on fl.
func (cf *configFlags) logFormatFlag(fl *pflag.FlagSet) {
	fl.StringVar(&cf.LogFormat, "log-format", "text", "log format: text or json (one JSON object per line, errors at exit included)")
}

// checkMetricsAddr reports a --metrics-addr that is not host:port.
func checkMetricsAddr(addr string) error {
	if addr == "" {
		return nil
	}
	if _, _, err := net.SplitHostPort(addr); err != nil {
		return fmt.Errorf("%w: --metrics-addr %q: want HOST:PORT (127.0.0.1:9464, :9464): %w", ErrConfig, addr, err)
	}
	return nil
}

// telemetry is a run's readiness and metrics registry and, with
// --metrics-addr, the server of both.
type telemetry struct {
	ready *health.Readiness
	reg   *prometheus.Registry
	srv   *metrics.Server
	stop  chan struct{}
	// export is where the metrics go when the run ends, and log where a
	// failure to send them is told.
	export metricsExport
	log    *slog.Logger
}

// metricsExport is where a sink run's metrics go when it ends: a file in
// Prometheus' text format (--metrics-textfile, for node_exporter's
// textfile collector) and a Pushgateway (--metrics-push-url), so a cron
// job's figures outlive it.
type metricsExport struct {
	textfile, pushURL string
	grouping          string // the connector name, the push's grouping label
}

// check refuses a push URL that is not http(s)://host[:port][/path].
func (e metricsExport) check() error {
	if e.pushURL == "" {
		return nil
	}
	u, err := url.Parse(e.pushURL)
	if err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" {
		return fmt.Errorf("%w: --metrics-push-url %q: want http://HOST:PORT of a Prometheus Pushgateway", ErrConfig, e.pushURL)
	}
	return nil
}

// send writes and pushes reg's metrics as e says; each failure is logged
// as an error naming the file or URL (the run's own exit code stands).
func (e metricsExport) send(reg *prometheus.Registry, log *slog.Logger) {
	if e.textfile != "" {
		if err := prometheus.WriteToTextfile(e.textfile, reg); err != nil {
			log.Error("cannot write the metrics textfile", "path", e.textfile, "err", err)
		} else {
			log.Info("metrics written", "path", e.textfile)
		}
	}
	if e.pushURL != "" {
		err := push.New(e.pushURL, "kafkas3_sink").Grouping("connector", e.grouping).Gatherer(reg).Push()
		if err != nil {
			log.Error("cannot push the metrics", "url", e.pushURL, "err", err)
		} else {
			log.Info("metrics pushed", "url", e.pushURL, "job", "kafkas3_sink", "connector", e.grouping)
		}
	}
}

// startTelemetry builds the readiness (expecting the brokers and the
// store) and the registry, and serves them on addr unless it is empty.
func startTelemetry(addr string, log *slog.Logger) (*telemetry, error) {
	t := &telemetry{ready: health.NewReadiness(log), reg: prometheus.NewRegistry(), stop: make(chan struct{}), log: log}
	t.ready.Expect(health.Broker)
	t.ready.Expect(health.Store)
	if err := metrics.RegisterProcess(t.reg, t.ready); err != nil {
		return nil, err
	}
	if addr == "" {
		return t, nil
	}
	srv, err := metrics.Listen(addr, t.reg, t.ready, log)
	if err != nil {
		return nil, err
	}
	t.srv = srv
	go srv.Serve()
	log.Info("serving metrics", "url", "http://"+srv.Addr()+"/metrics", "healthz", "/healthz", "readyz", "/readyz")
	return t, nil
}

// close stops the interval loops and the server.
func (t *telemetry) close() {
	close(t.stop)
	t.export.send(t.reg, t.log)
	if t.srv != nil {
		t.srv.Close()
	}
}

// observeSink starts the sink's telemetry: cfg reports to its metrics and
// its readiness (Config.Health), the
// returned store is measured, and the progress line is logged every
// interval. The returned func stops it all.
func observeSink(addr string, exp metricsExport, cfg *archive.Config, store s3store.Store, interval time.Duration, log *slog.Logger) (s3store.Store, func(), error) {
	t, err := startTelemetry(addr, log)
	if err != nil {
		return nil, nil, err
	}
	t.export = exp
	obs, err := metrics.NewSink(t.reg, t.ready)
	if err != nil {
		t.close()
		return nil, nil, err
	}
	cfg.Observer, cfg.Health = obs, t.ready
	cfg.KafkaOpts = append(cfg.KafkaOpts, kgo.WithHooks(obs.SinkHooks()))
	if interval <= 0 {
		interval = 30 * time.Second
	}
	go obs.Report(t.stop, interval, log)
	return obs.Store(store), t.close, nil
}

// observeSource starts the source's telemetry: cfg reports to its
// metrics and its readiness (Config.Health), the returned store sets the store's readiness, and wrap gives
// the run's progress to the metrics too. The returned func stops it all.
func observeSource(addr string, cfg *restore.Config, store s3store.Store, log *slog.Logger) (s3store.Store, func(restore.Progress) restore.Progress, func(), error) {
	t, err := startTelemetry(addr, log)
	if err != nil {
		return nil, nil, nil, err
	}
	obs, err := metrics.NewSource(t.reg, t.ready)
	if err == nil {
		var hooks *metrics.KafkaHooks
		if hooks, err = obs.SourceHooks(t.reg); err == nil {
			cfg.KafkaOpts = append(cfg.KafkaOpts, kgo.WithHooks(hooks))
		}
	}
	if err != nil {
		t.close()
		return nil, nil, nil, err
	}
	cfg.Observer, cfg.Health = obs, t.ready
	go obs.Watch(t.stop, sourceStallAfter)
	return obs.Store(store), obs.Progress, t.close, nil
}

// logWriter writes each line given to it as a log record, for the lines
// a command writes to stderr itself (restore progress, warnings) when
// --log-format is json: then every line on stderr is JSON. A line with
// WARNING is logged at warn level, others at info.
type logWriter struct{ log *slog.Logger }

func (w logWriter) Write(p []byte) (int, error) {
	for _, line := range strings.Split(strings.TrimRight(string(p), "\n"), "\n") {
		level := slog.LevelInfo
		if strings.Contains(line, "WARNING") {
			level = slog.LevelWarn
		}
		w.log.Log(context.Background(), level, line)
	}
	return len(p), nil
}

// stderrFor is where a command writes its own stderr lines: streams.Err,
// or with --log-format json the logger.
func stderrFor(cf configFlags, streams IO, log *slog.Logger) io.Writer {
	if cf.LogFormat == "json" {
		return logWriter{log: log}
	}
	return streams.Err
}
