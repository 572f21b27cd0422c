package cmd

import (
	"fmt"
	"io"
	"strconv"
	"strings"
	"text/tabwriter"

	"github.com/kafkas3/kafkas3/config"
	"github.com/spf13/cobra"
)

// commandArg reads the optional [sink|source] argument of config-keys and
// config: the sink when absent.
func commandArg(name string, args []string) (config.Command, error) {
	if len(args) == 0 {
		return config.Sink, nil
	}
	switch args[0] {
	case "sink":
		return config.Sink, nil
	case "source":
		return config.Source, nil
	}
	return 0, fmt.Errorf("%w: %s: %q: want sink or source", ErrConfig, name, args[0])
}

func newConfigKeysCmd(streams IO) *cobra.Command {
	return &cobra.Command{
		Use:       "config-keys [sink|source]",
		Short:     "Print the configuration reference (every key, default and meaning) as Markdown",
		Example:   "  kafkas3 config-keys source > source-keys.md",
		Args:      cobra.MaximumNArgs(1),
		ValidArgs: []string{"sink", "source"},
		RunE: func(_ *cobra.Command, args []string) error {
			which, err := commandArg("config-keys", args)
			if err != nil {
				return err
			}
			_, err = fmt.Fprint(streams.Out, config.Reference(which))
			return err
		},
	}
}

// configOptions are the flags of `kafkas3 config`.
type configOptions struct {
	configFlags
	// Dedicated flags both commands have; empty means unset.
	Bootstrap string
	LocalDir  string
	Bucket    string
}

// keyFlags maps the dedicated flags that are set to their keys.
func (f *configOptions) keyFlags(k *config.Keys) map[string]string {
	return setFlags(map[string]string{
		k.BootstrapServers.Name: f.Bootstrap, k.StoreLocalDir.Name: f.LocalDir, k.S3BucketName.Name: f.Bucket,
	})
}

func newConfigCmd(streams IO) *cobra.Command { return newConfigCmdRun(streams, runConfigCmd) }

// newConfigCmdRun builds `kafkas3 config` with run as its behaviour, so
// tests can check the flags apart from it.
func newConfigCmdRun(streams IO, run func(*configOptions, config.Command, IO) error) *cobra.Command {
	f := &configOptions{}
	c := &cobra.Command{
		Use:   "config --config FILE [sink|source]",
		Short: "Print the effective configuration: every key, its value and where it came from (secrets masked)",
		Long: `config loads a configuration as sink (the default) or source would: the file,
the KAFKAS3_<KEY> environment, -p key=value and the dedicated flags. It prints
every key the command uses with its value and where the value came from
(default, file, environment, -p or flag), then the keys that are set but
ignored. Secret keys (passwords, keys) are shown as ******** and passwords in
URLs are replaced. Then it checks the configuration as the command would and
reports every problem.

Exit codes: 0 the configuration is valid, 2 it has problems.`,
		Example: `  kafkas3 config --config orders.yaml
  kafkas3 config -c orders.yaml source -p s3.poll.interval.ms=5000`,
		Args:      cobra.MaximumNArgs(1),
		ValidArgs: []string{"sink", "source"},
		RunE: func(_ *cobra.Command, args []string) error {
			which, err := commandArg("config", args)
			if err != nil {
				return err
			}
			return run(f, which, streams)
		},
	}
	fl := c.Flags()
	fl.StringVarP(&f.ConfigFile, "config", "c", "", "config file (YAML, JSON, .properties or Connect REST JSON)")
	fl.StringArrayVarP(&f.Params, "param", "p", nil, "set any config key: -p key=value (repeatable)")
	fl.StringVar(&f.Bootstrap, "bootstrap-servers", "", "Kafka brokers host:port, comma separated (bootstrap.servers)")
	fl.StringVar(&f.LocalDir, "local-dir", "", "a local directory instead of S3 (store.local.dir)")
	fl.StringVar(&f.Bucket, "bucket", "", "S3 bucket (s3.bucket.name)")
	fl.StringVar(&f.LogLevel, "log-level", "warn", "log level: debug, info, warn, error")
	f.logFormatFlag(fl)
	return c
}

// runConfigCmd prints the effective configuration, then checks it.
func runConfigCmd(f *configOptions, which config.Command, streams IO) error {
	settings, log, err := loadSettings(which, f.configFlags, f.keyFlags(config.NewKeys()), streams)
	if settings == nil {
		return err
	}
	if werr := writeEffective(streams.Out, settings.Effective()); werr != nil {
		return werr
	}
	var verr error
	if which == config.Sink {
		_, verr = settings.Sink(log)
	} else {
		_, verr = settings.Source(log)
	}
	return config.Join(err, verr)
}

// writeEffective prints the settings as a table: key, value, origin.
func writeEffective(w io.Writer, settings []config.Setting) error {
	tw := tabwriter.NewWriter(w, 0, 4, 2, ' ', 0)
	fmt.Fprintln(tw, "KEY\tVALUE\tFROM")
	for _, s := range settings {
		value, from := displayValue(s.Value), s.Origin.String()
		switch {
		case !s.Set:
			value, from = "(unset)", "-"
		case s.Ignored:
			from += ", ignored"
		}
		fmt.Fprintf(tw, "%s\t%s\t%s\n", s.Key, value, from)
	}
	return tw.Flush()
}

// displayValue quotes a value that would not read as itself in the table
// (empty, surrounding blanks, control characters).
func displayValue(v string) string {
	if v == "" || v != strings.TrimSpace(v) || strings.ContainsAny(v, "\t\n\r\"") {
		return strconv.Quote(v)
	}
	return v
}
