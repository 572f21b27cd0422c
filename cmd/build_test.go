package cmd

import (
	"errors"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/kafkas3/kafkas3/config"
	"github.com/kafkas3/kafkas3/restore"
)

func TestBuildSourceConfig(t *testing.T) {
	o, err := loadSource(t, "format.class: json\nstore.local.dir: /a\nbootstrap.servers: h:1\ntopics: orders,payments\n")
	if err != nil {
		t.Fatal(err)
	}
	build := func(f *sourceFlags) (restore.Config, error) {
		cfg := o.Restore
		err := f.apply(&cfg)
		if !f.DryRun {
			err = config.Join(err, o.NeedBrokers())
		}
		return cfg, err
	}
	// Default: restore the file's topics; guard the same topics.
	cfg, err := build(&sourceFlags{RenameRegex: defaultRenameRegex})
	if err != nil {
		t.Fatal(err)
	}
	if !slices.Equal(cfg.Topics, []string{"orders", "payments"}) || !slices.Equal(cfg.ArchiveTopics, cfg.Topics) ||
		cfg.TopicsRegex != nil || cfg.Rename != "" || cfg.Format == nil || cfg.Keys.TopicsDir != "topics" ||
		cfg.PollInterval != time.Minute || cfg.OnError != "fail" || cfg.BatchSize != 200 {
		t.Errorf("cfg = %+v", cfg)
	}
	// --topics-regex replaces the file's selection, not the guard.
	cfg, err = build(&sourceFlags{TopicsRegex: "pay.*", Rename: "x-$0", RenameRegex: defaultRenameRegex, CreateTopics: true})
	if err != nil {
		t.Fatal(err)
	}
	if cfg.Topics != nil || cfg.TopicsRegex.String() != "pay.*" || cfg.Rename != "x-$0" || !cfg.CreateTopics ||
		!slices.Equal(cfg.ArchiveTopics, []string{"orders", "payments"}) {
		t.Errorf("cfg = %+v", cfg)
	}
	// A dry run needs no brokers; a restore does.
	o.Restore.Brokers = nil
	if _, err := build(&sourceFlags{DryRun: true}); err != nil {
		t.Errorf("dry run without brokers: %v", err)
	}
	if _, err := build(&sourceFlags{}); !errors.Is(err, config.ErrConfig) || !strings.Contains(err.Error(), "bootstrap.servers") {
		t.Errorf("restore without brokers: %v", err)
	}
	// Problems are reported together.
	_, err = build(&sourceFlags{Topics: "a,b c", TopicsRegex: "(", RenameRegex: "["})
	for _, w := range []string{`--topics: has "b c"`, "--topics-regex: is set together with --topics", `--topic-rename-regex: "[" does not compile`, "bootstrap.servers"} {
		if err == nil || !strings.Contains(err.Error(), w) {
			t.Errorf("err lacks %q: %v", w, err)
		}
	}
}

// writeFile writes a config file into a temp dir and returns its path.
func writeFile(t *testing.T, name, body string) string {
	t.Helper()
	p := filepath.Join(t.TempDir(), name)
	if err := os.WriteFile(p, []byte(body), 0o600); err != nil {
		t.Fatal(err)
	}
	return p
}

// loadSource loads body as the source's config file.
func loadSource(t *testing.T, body string, params ...string) (*config.SourceConfig, error) {
	t.Helper()
	st, err := config.Load(config.Input{Command: config.Source, ConfigFile: writeFile(t, "c.yaml", body), Params: params})
	if err != nil {
		return nil, err
	}
	return st.Source(nil)
}
