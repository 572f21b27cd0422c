package cmd

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"os/signal"
	"runtime"
	"runtime/debug"
	"syscall"

	"github.com/spf13/cobra"
)

// Exit codes, mapped in one place.
const (
	ExitOK     = 0
	ExitFail   = 1
	ExitConfig = 2
)

// ErrConfig marks an error in the user's configuration or flags (exit code 2).
var ErrConfig = errors.New("configuration error")

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
	err := root.ExecuteContext(ctx)
	if err == nil {
		return ExitOK
	}
	fmt.Fprintf(streams.Err, "kafkas3: %v\n", err)
	if errors.Is(err, ErrConfig) || isUsageError(err) {
		return ExitConfig
	}
	return ExitFail
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
	root.AddCommand(newVersionCmd(streams), newSinkCmd(streams), newSourceCmd(streams), newDemoCmd(streams), newConfigKeysCmd(streams), newVerifyCmd(streams))
	return root
}

func isUsageError(err error) bool {
	var u interface{ UsageError() bool }
	return errors.As(err, &u) && u.UsageError()
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
