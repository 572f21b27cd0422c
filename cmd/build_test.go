package cmd

import (
	"errors"
	"log/slog"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/kafkas3/kafkas3/config"
)

// TestSinkIsolationLevel: the isolation level reaches the archive config
// (read_committed unless a key says read_uncommitted).
func TestSinkIsolationLevel(t *testing.T) {
	for _, tc := range []struct {
		params []string
		want   bool
	}{
		{nil, false},
		{[]string{"isolation.level=read_uncommitted"}, true},
		{[]string{"consumer.override.isolation.level=read_uncommitted"}, true},
		{[]string{"isolation.level=read_uncommitted", "consumer.override.isolation.level=read_committed"}, false},
	} {
		st, err := config.Load(config.Input{Command: config.Sink, ConfigFile: writeFile(t, "c.yaml", minimalYAML), Params: tc.params})
		if err != nil {
			t.Fatal(err)
		}
		o, err := st.Sink()
		if err != nil {
			t.Fatal(err)
		}
		cfg, err := buildSinkConfig(o, true, slog.New(slog.DiscardHandler))
		if err != nil {
			t.Fatal(err)
		}
		if cfg.TopicCheckInterval != 5*time.Minute {
			t.Errorf("TopicCheckInterval %v, want kafkas3.topics.check.interval.ms's default 5m", cfg.TopicCheckInterval)
		}
		if cfg.ReadUncommitted != tc.want {
			t.Errorf("%v: ReadUncommitted %v, want %v", tc.params, cfg.ReadUncommitted, tc.want)
		}
	}
}

func TestBuildSourceConfig(t *testing.T) {
	o, err := loadSource(t, "format.class: json\nstore.local.dir: /a\nbootstrap.servers: h:1\ntopics: orders,payments\n")
	if err != nil {
		t.Fatal(err)
	}
	// Default: restore the file's topics; guard the same topics.
	cfg, err := buildSourceConfig(o, &sourceFlags{RenameRegex: defaultRenameRegex})
	if err != nil {
		t.Fatal(err)
	}
	if !slices.Equal(cfg.Topics, []string{"orders", "payments"}) || !slices.Equal(cfg.ArchiveTopics, cfg.Topics) ||
		cfg.TopicsRegex != nil || cfg.Rename != "" || cfg.Format == nil || cfg.Keys.TopicsDir != "topics" ||
		cfg.PollInterval != time.Minute || cfg.OnError != "fail" || cfg.BatchSize != 200 {
		t.Errorf("cfg = %+v", cfg)
	}
	// --topics-regex replaces the file's selection, not the guard.
	cfg, err = buildSourceConfig(o, &sourceFlags{TopicsRegex: "pay.*", Rename: "x-$0", RenameRegex: defaultRenameRegex, CreateTopics: true})
	if err != nil {
		t.Fatal(err)
	}
	if cfg.Topics != nil || cfg.TopicsRegex.String() != "pay.*" || cfg.Rename != "x-$0" || !cfg.CreateTopics ||
		!slices.Equal(cfg.ArchiveTopics, []string{"orders", "payments"}) {
		t.Errorf("cfg = %+v", cfg)
	}
	// A dry run needs no brokers; a restore does.
	o.BootstrapServers = nil
	if _, err := buildSourceConfig(o, &sourceFlags{DryRun: true}); err != nil {
		t.Errorf("dry run without brokers: %v", err)
	}
	if _, err := buildSourceConfig(o, &sourceFlags{}); !errors.Is(err, config.ErrConfig) || !strings.Contains(err.Error(), "bootstrap.servers") {
		t.Errorf("restore without brokers: %v", err)
	}
	// Problems are reported together.
	_, err = buildSourceConfig(o, &sourceFlags{Topics: "a,b c", TopicsRegex: "(", RenameRegex: "["})
	for _, w := range []string{`--topics: has "b c"`, "--topics-regex: is set together with --topics", `--topic-rename-regex: "[" does not compile`, "bootstrap.servers"} {
		if err == nil || !strings.Contains(err.Error(), w) {
			t.Errorf("err lacks %q: %v", w, err)
		}
	}
}

const minimalYAML = `name: n
bootstrap.servers: b:9092
topics: t
flush.size: 10
s3.bucket.name: bkt
format.class: json
`

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
func loadSource(t *testing.T, body string, params ...string) (*config.SourceOptions, error) {
	t.Helper()
	st, err := config.Load(config.Input{Command: config.Source, ConfigFile: writeFile(t, "c.yaml", body), Params: params})
	if err != nil {
		return nil, err
	}
	return st.Source()
}
