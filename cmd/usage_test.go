package cmd

import (
	"io"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/spf13/cobra"
)

// Mistakes in how a command is called exit 2 (as the README says) and say
// what was probably meant.
func TestUsageErrorsExit2WithAHint(t *testing.T) {
	existing := filepath.Join(t.TempDir(), "orders")
	if err := os.WriteFile(existing, []byte("name=x\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct {
		args []string
		want string
	}{
		{[]string{"sink", "cfg.properties"}, `sink: unexpected argument "cfg.properties"; did you mean --config cfg.properties?`},
		{[]string{"source", "orders.yaml"}, `source: unexpected argument "orders.yaml"; did you mean --config orders.yaml?`},
		{[]string{"verify", existing}, `verify: unexpected argument "` + existing + `"; did you mean --config ` + existing + `?`},
		{[]string{"sink", "a", "b"}, `sink: unexpected arguments ["a" "b"]; see 'kafkas3 sink --help'`},
		{[]string{"demo", "now"}, `demo: unexpected argument "now"; see 'kafkas3 demo --help'`},
		{[]string{"version", "x"}, `version: unexpected argument "x"`},
		{[]string{"snk"}, `unknown command "snk"; did you mean "sink"?`},
		{[]string{"restore"}, `unknown command "restore"; run 'kafkas3 --help' for the commands`},
		{[]string{"sink", "--no-such-flag"}, "unknown flag: --no-such-flag"},
	} {
		r := mustRun(t, cliContext(t), ExitConfig, tc.args...)
		if !strings.Contains(r.err, tc.want) {
			t.Errorf("kafkas3 %s: stderr %q, want it to contain %q", strings.Join(tc.args, " "), r.err, tc.want)
		}
	}
}

// The root command alone prints its help and succeeds.
func TestRootWithoutArgumentsPrintsHelp(t *testing.T) {
	r := mustRun(t, cliContext(t), ExitOK)
	if !strings.Contains(r.out, "Available Commands:") {
		t.Errorf("stdout: %s", r.out)
	}
}

// TestEveryCommandHasAnExample: kafkas3 --help and each command's help
// show an example of the common case (cobra's Example), as gh does.
func TestEveryCommandHasAnExample(t *testing.T) {
	root := NewRootCmd(IO{Out: io.Discard, Err: io.Discard})
	var walk func(c *cobra.Command)
	walk = func(c *cobra.Command) {
		if c.Name() == "completion" || c.Name() == "help" {
			return // cobra's own
		}
		if !strings.Contains(c.Example, "kafkas3 ") {
			t.Errorf("%q has no example", c.CommandPath())
		}
		var out strings.Builder
		c.SetOut(&out)
		if err := c.Help(); err != nil {
			t.Fatal(err)
		}
		if !strings.Contains(out.String(), "Examples:\n"+c.Example) {
			t.Errorf("the help of %q does not show its example:\n%s", c.CommandPath(), out.String())
		}
		for _, sub := range c.Commands() {
			walk(sub)
		}
	}
	walk(root)
}
