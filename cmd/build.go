package cmd

import (
	"fmt"
	"io"
	"log/slog"
	"os"
	"strings"

	"github.com/kafkas3/kafkas3/config"
)

// configFlags are the flags every command that reads a configuration has.
type configFlags struct {
	ConfigFile string
	Params     []string
	LogLevel   string
	// LogFormat is --log-format: text (also for "") or json.
	LogFormat string
	// MetricsAddr is --metrics-addr (sink and source): "" serves nothing.
	MetricsAddr string
}

// newLogger returns the logger commands write to stderr: text, or JSON
// with format json.
func newLogger(w io.Writer, level, format string) (*slog.Logger, error) {
	var l slog.Level
	if err := l.UnmarshalText([]byte(level)); err != nil {
		return nil, fmt.Errorf("%w: --log-level %q: want debug, info, warn or error", ErrConfig, level)
	}
	opts := &slog.HandlerOptions{Level: l}
	switch format {
	case "", "text":
		return slog.New(slog.NewTextHandler(w, opts)), nil
	case "json":
		return slog.New(slog.NewJSONHandler(w, opts)), nil
	}
	return nil, fmt.Errorf("%w: --log-format %q: want text or json", ErrConfig, format)
}

// loadSettings creates a command's logger, loads its settings (file,
// environment, -p and the dedicated flags) and logs the keys that have no
// effect for this command in one info line. The settings are nil only
// when the file cannot be read (err says why); otherwise err is a problem
// of the flags (--log-level) to report with the settings' own problems,
// which Sink and Source return (so the load's error is not returned here).
func loadSettings(cmd config.Command, cf configFlags, flags map[string]string, streams IO) (*config.Settings, *slog.Logger, error) {
	log, levelErr := newLogger(streams.Err, cf.LogLevel, cf.LogFormat)
	if levelErr != nil {
		log = fallbackLogger(streams.Err, cf)
	}
	levelErr = config.Join(levelErr, checkMetricsAddr(cf.MetricsAddr))
	settings, err := config.Load(config.Input{
		Command: cmd, ConfigFile: cf.ConfigFile, Params: cf.Params, Flags: flags, LookupEnv: os.LookupEnv,
	})
	if settings == nil {
		return nil, nil, config.Join(levelErr, err)
	}
	if ig := settings.Ignored(); len(ig) > 0 {
		log.Info("ignoring keys that only apply inside Kafka Connect or to kafkas3 "+cmd.Other().String(), "keys", strings.Join(ig, ","))
	}
	return settings, log, levelErr
}

// setFlags returns the dedicated flags that are set, by key name.
func setFlags(m map[string]string) map[string]string {
	out := map[string]string{}
	for k, v := range m {
		if v != "" {
			out[k] = v
		}
	}
	return out
}

// fallbackLogger is the logger of flags that name a wrong --log-level or
// --log-format: info level, in the format asked for when that is right.
func fallbackLogger(w io.Writer, cf configFlags) *slog.Logger {
	if log, err := newLogger(w, "info", cf.LogFormat); err == nil {
		return log
	}
	log, _ := newLogger(w, "info", "text")
	return log
}
