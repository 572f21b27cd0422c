package cmd

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"os/signal"
	"path/filepath"
	"runtime"
	"runtime/debug"
	"strings"
	"syscall"

	"github.com/kafkas3/kafkas3/config"
	"github.com/spf13/cobra"
)

// Exit codes, mapped in one place.
const (
	ExitOK     = 0
	ExitFail   = 1
	ExitConfig = 2
)

// ErrConfig marks an error in the user's configuration or flags (exit code 2).
var ErrConfig = config.ErrConfig

// Build information, set with -ldflags "-X github.com/kafkas3/kafkas3/cmd.version=..." by the Makefile.
var (
	version = "dev"
	commit  = ""
)

// IO bundles the streams a command writes to, so tests can capture them.
type IO struct {
	Out io.Writer
	Err io.Writer
}

// Main runs the CLI with os.Args and returns the process exit code.
func Main() int {
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	return Run(ctx, os.Args[1:], IO{Out: os.Stdout, Err: os.Stderr})
}

// Run executes the CLI with args and returns the exit code.
func Run(ctx context.Context, args []string, streams IO) int {
	root := NewRootCmd(streams)
	root.SetArgs(args)
	ran, err := root.ExecuteContextC(ctx)
	if err == nil {
		return ExitOK
	}
	code := ExitFail
	if errors.Is(err, ErrConfig) || isUsageError(err) {
		code = ExitConfig
	}
	if ran != nil && jsonLogs(ran) {
		log, _ := newLogger(streams.Err, "error", "json")
		log.Error("kafkas3: "+err.Error(), "exit_code", code)
		return code
	}
	fmt.Fprintf(streams.Err, "kafkas3: %v\n", err)
	return code
}

// jsonLogs tells whether the command that ran was given --log-format json,
// so that its error at exit is a JSON log line too.
func jsonLogs(c *cobra.Command) bool {
	f := c.Flags().Lookup("log-format")
	return f != nil && f.Value.String() == "json"
}

// NewRootCmd builds the command tree.
func NewRootCmd(streams IO) *cobra.Command {
	root := &cobra.Command{
		Use:   "kafkas3",
		Short: "Archive Kafka topics to S3 and restore them",
		Long: `kafkas3 archives Kafka topics into S3, any S3-compatible store or a local
directory, in the object layout of Confluent's S3 sink connector, exactly once,
and restores such archives into Kafka with keys, headers, timestamps and order.`,
		SilenceUsage:  true,
		SilenceErrors: true,
	}
	root.SetOut(streams.Out)
	root.SetErr(streams.Err)
	root.SetFlagErrorFunc(func(_ *cobra.Command, err error) error {
		return fmt.Errorf("%w: %w", ErrConfig, err)
	})
	root.AddCommand(newVersionCmd(streams), newSinkCmd(streams), newSourceCmd(streams), newDemoCmd(streams), newConfigKeysCmd(streams), newConfigCmd(streams), newVerifyCmd(streams), newIndexCmd(streams), newPruneCmd(streams))
	// Without a RunE, cobra reports `kafkas3 snk` as a plain error (exit 1);
	// with one, an unknown command is a usage error like any other.
	root.Args = cobra.ArbitraryArgs
	root.SuggestionsMinimumDistance = 2
	root.RunE = func(c *cobra.Command, args []string) error {
		if len(args) == 0 {
			return c.Help()
		}
		return unknownCommand(c, args[0])
	}
	for _, c := range root.Commands() {
		usageArgs(c)
	}
	return root
}

// usageError is a mistake in how a command was called: exit code 2.
type usageError struct{ msg string }

func (e *usageError) Error() string { return e.msg }

// UsageError marks the error for isUsageError.
func (e *usageError) UsageError() bool { return true }

func isUsageError(err error) bool {
	var u interface{ UsageError() bool }
	return errors.As(err, &u) && u.UsageError()
}

// unknownCommand is the usage error for `kafkas3 NAME` with no such
// command, with cobra's suggestions.
func unknownCommand(root *cobra.Command, name string) error {
	msg := fmt.Sprintf("unknown command %q; run 'kafkas3 --help' for the commands", name)
	if s := root.SuggestionsFor(name); len(s) > 0 {
		msg = fmt.Sprintf("unknown command %q; did you mean %q?", name, s[0])
	}
	return &usageError{msg: msg}
}

// usageArgs makes every positional-argument error of c (and its
// subcommands) a usage error, exit 2, and says what was probably meant:
// the commands that read a configuration take it as --config FILE, so a
// lone argument that looks like a config file gets that hint.
func usageArgs(c *cobra.Command) {
	for _, sub := range c.Commands() {
		usageArgs(sub)
	}
	check := c.Args
	if check == nil {
		return
	}
	c.Args = func(cmd *cobra.Command, args []string) error {
		err := check(cmd, args)
		if err == nil {
			return nil
		}
		name := strings.TrimPrefix(cmd.CommandPath(), "kafkas3 ")
		msg := fmt.Sprintf("%s: unexpected argument %q", name, args[0])
		if len(args) > 1 {
			msg = fmt.Sprintf("%s: unexpected arguments %q", name, args)
		}
		if len(args) == 1 && cmd.Flags().Lookup("config") != nil && looksLikeConfigFile(args[0]) {
			msg += fmt.Sprintf("; did you mean --config %s?", args[0])
		} else {
			msg += fmt.Sprintf("; see 'kafkas3 %s --help'", name)
		}
		return &usageError{msg: msg}
	}
}

// looksLikeConfigFile reports whether arg names an existing file or has the
// extension of a config file kafkas3 reads.
func looksLikeConfigFile(arg string) bool {
	switch strings.ToLower(filepath.Ext(arg)) {
	case ".properties", ".yaml", ".yml", ".json", ".conf", ".cfg":
		return true
	}
	fi, err := os.Stat(arg)
	return err == nil && fi.Mode().IsRegular()
}

func newVersionCmd(streams IO) *cobra.Command {
	return &cobra.Command{
		Use:   "version",
		Short: "Print version, commit and Go version",
		Args:  cobra.NoArgs,
		RunE: func(*cobra.Command, []string) error {
			v, c := version, commit
			if bi, ok := debug.ReadBuildInfo(); ok && c == "" {
				for _, s := range bi.Settings {
					if s.Key == "vcs.revision" {
						c = s.Value
					}
				}
			}
			if c == "" {
				c = "unknown"
			}
			fmt.Fprintf(streams.Out, "kafkas3 %s\ncommit %s\n%s %s/%s\n", v, c, runtime.Version(), runtime.GOOS, runtime.GOARCH)
			return nil
		},
	}
}
