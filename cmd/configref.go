package cmd

import (
	"fmt"
	"github.com/kafkas3/kafkas3/config"

	"github.com/spf13/cobra"
)

func newConfigKeysCmd(streams IO) *cobra.Command {
	return &cobra.Command{
		Use:       "config-keys [sink|source]",
		Short:     "Print the configuration reference (every key, default and meaning) as Markdown",
		Args:      cobra.MaximumNArgs(1),
		ValidArgs: []string{"sink", "source"},
		RunE: func(_ *cobra.Command, args []string) error {
			which := config.Sink
			if len(args) == 1 {
				switch args[0] {
				case "sink":
				case "source":
					which = config.Source
				default:
					return fmt.Errorf("%w: config-keys: %q: want sink or source", ErrConfig, args[0])
				}
			}
			_, err := fmt.Fprint(streams.Out, config.Reference(which))
			return err
		},
	}
}
