package cmd

import (
	"bytes"
	"context"
	"io"
	"os"
	"reflect"
	"strings"
	"testing"
	"time"

	"github.com/kafkas3/kafkas3/config"
	"github.com/kafkas3/kafkas3/restore"
	"github.com/spf13/cobra"
)

// parseFlags runs c's flag parsing on args, with the behaviour replaced.
func parseFlags(t *testing.T, c *cobra.Command, args ...string) {
	t.Helper()
	c.SetArgs(args)
	c.SetOut(io.Discard)
	c.SetErr(io.Discard)
	if err := c.ExecuteContext(context.Background()); err != nil {
		t.Fatalf("%v: %v", args, err)
	}
}

func TestSinkFlags(t *testing.T) {
	var got *sinkFlags
	c := newSinkCmdRun(IO{}, func(_ context.Context, f *sinkFlags, _ IO) error { got = f; return nil })
	parseFlags(t, c, "-c", "s.yaml", "-p", "a=1", "--param", "b=2", "--once", "--once-timeout", "1m30s", "--log-level", "debug",
		"--topics", "t1,t2", "--bootstrap-servers", "h:1", "--flush-size", "5", "--local-dir", "/d", "--bucket", "bk",
		"--log-format", "json", "--metrics-addr", "127.0.0.1:9464")
	want := &sinkFlags{configFlags: configFlags{ConfigFile: "s.yaml", Params: []string{"a=1", "b=2"}, LogLevel: "debug", LogFormat: "json", MetricsAddr: "127.0.0.1:9464"},
		Once: true, OnceTimeout: 90 * time.Second, Topics: "t1,t2", Bootstrap: "h:1", FlushSize: "5", LocalDir: "/d", Bucket: "bk"}
	if !reflect.DeepEqual(got, want) {
		t.Errorf("flags %+v, want %+v", got, want)
	}
	k := config.NewKeys()
	if m := got.keyFlags(k); !reflect.DeepEqual(m, map[string]string{"topics": "t1,t2", "bootstrap.servers": "h:1",
		"flush.size": "5", "store.local.dir": "/d", "s3.bucket.name": "bk"}) {
		t.Errorf("keyFlags = %v", m)
	}
	// Defaults: info text logs, no metrics server, and no key set by a flag.
	c = newSinkCmdRun(IO{}, func(_ context.Context, f *sinkFlags, _ IO) error { got = f; return nil })
	parseFlags(t, c)
	if got.LogLevel != "info" || got.LogFormat != "text" || got.MetricsAddr != "" || len(got.keyFlags(k)) != 0 || got.Once || got.OnceTimeout != 10*time.Minute {
		t.Errorf("defaults %+v", got)
	}
}

func TestSourceFlags(t *testing.T) {
	var got *sourceFlags
	c := newSourceCmdRun(IO{}, func(_ context.Context, f *sourceFlags, _ IO) error { got = f; return nil })
	parseFlags(t, c, "-c", "s.yaml", "-p", "a=1", "--topics", "o", "--topics-regex", "x.*", "--topic-rename", "c_$0",
		"--topic-rename-regex", "o.*", "--dry-run", "--follow", "--create-topics", "--replication-factor", "2",
		"--topic-config", "retention.ms=-1", "--topic-config", "cleanup.policy=compact", "--timestamps", "now",
		"--until", "2026-12-01T11:00:00Z", "--restore-groups", "--group-rename", "a=b", "--allow-same-topic", "--allow-gaps",
		"--allow-unknown-order", "--bootstrap-servers", "h:1", "--local-dir", "/d", "--bucket", "bk", "--log-level", "warn",
		"--log-format", "json", "--metrics-addr", ":9464", "--generation", "3", "--max-bytes-per-sec", "50MiB", "--max-records-per-sec", "2500",
		"--exclude-keys-file", "gdpr.txt", "--exclude-action", "tombstone", "--schema-ids", "keep")
	want := &sourceFlags{configFlags: configFlags{ConfigFile: "s.yaml", Params: []string{"a=1"}, LogLevel: "warn", LogFormat: "json", MetricsAddr: ":9464"},
		Topics: "o", TopicsRegex: "x.*", Rename: "c_$0", RenameRegex: "o.*", DryRun: true, Follow: true, CreateTopics: true,
		ReplicationFactor: 2, TopicConfigs: []string{"retention.ms=-1", "cleanup.policy=compact"}, AllowSameTopic: true, AllowGaps: true,
		AllowUnknownOrder: true, Timestamps: "now", Until: "2026-12-01T11:00:00Z", RestoreGroups: true, GroupRename: "a=b",
		Bootstrap: "h:1", LocalDir: "/d", Bucket: "bk", Generation: 3, MaxBytesPerSec: "50MiB", MaxRecordsPerSec: 2500,
		ExcludeKeysFile: "gdpr.txt", ExcludeAction: "tombstone", SchemaIDs: "keep"}
	if !reflect.DeepEqual(got, want) {
		t.Errorf("flags %+v\nwant  %+v", got, want)
	}
	if m := got.keyFlags(config.NewKeys()); !reflect.DeepEqual(m, map[string]string{"bootstrap.servers": "h:1", "store.local.dir": "/d", "s3.bucket.name": "bk"}) {
		t.Errorf("keyFlags = %v", m)
	}
	c = newSourceCmdRun(IO{}, func(_ context.Context, f *sourceFlags, _ IO) error { got = f; return nil })
	parseFlags(t, c)
	if got.RenameRegex != defaultRenameRegex || got.SchemaIDs != "rewrite" || got.Timestamps != "original" || got.LogLevel != "info" || got.LogFormat != "text" || got.MetricsAddr != "" {
		t.Errorf("defaults %+v", got)
	}
}

// TestByteRates: --max-bytes-per-sec's units, into the restore's
// Config.MaxBytesPerSec with --max-records-per-sec.
func TestByteRates(t *testing.T) {
	for in, want := range map[string]float64{"1000": 1000, "10MB": 10e6, "10 MB/s": 10e6, "50MiB": 50 << 20, "2.5GB": 2.5e9, "64KiB": 64 << 10, "7B": 7} {
		got, err := parseByteRate(in)
		if err != nil || got != want {
			t.Errorf("parseByteRate(%q) = %v, %v; want %v", in, got, err, want)
		}
	}
	for _, in := range []string{"", "MB", "-1MB", "1TB", "1e400"} {
		if _, err := parseByteRate(in); err == nil {
			t.Errorf("parseByteRate(%q) took it", in)
		}
	}
	f := &sourceFlags{MaxBytesPerSec: "10MB", MaxRecordsPerSec: 500, Timestamps: "original", Topics: "orders", RenameRegex: defaultRenameRegex}
	var cfg restore.Config
	if err := f.apply(&cfg); err != nil {
		t.Fatal(err)
	}
	if cfg.MaxBytesPerSec != 10e6 || cfg.MaxRecordsPerSec != 500 {
		t.Fatalf("Config rates %v, %v; want 1e7, 500", cfg.MaxBytesPerSec, cfg.MaxRecordsPerSec)
	}
}

// TestSourceFlagsUnknownOrderAlias: --allow-unknown-order and its old
// name --allow-unproven-order set the same switch, which apply hands to
// the restore (Config.AllowUnknownOrder); the old name is hidden from the
// help and its use notes on stderr that it is deprecated.
func TestSourceFlagsUnknownOrderAlias(t *testing.T) {
	for _, tc := range []struct {
		args []string
		want bool
		note bool
	}{
		{nil, false, false},
		{[]string{"--allow-unknown-order"}, true, false},
		{[]string{"--allow-unproven-order"}, true, true},
		{[]string{"--allow-unproven-order=false"}, false, true},
	} {
		var got *sourceFlags
		var stderr bytes.Buffer
		c := newSourceCmdRun(IO{Out: io.Discard, Err: &stderr}, func(_ context.Context, f *sourceFlags, _ IO) error { got = f; return nil })
		parseFlags(t, c, append([]string{"--topics", "o", "--topic-rename", "c_$0"}, tc.args...)...)
		var cfg restore.Config
		if err := got.apply(&cfg); err != nil {
			t.Fatalf("%v: apply: %v", tc.args, err)
		}
		note := strings.Contains(stderr.String(), "--allow-unproven-order is deprecated, use --allow-unknown-order")
		if got.AllowUnknownOrder != tc.want || cfg.AllowUnknownOrder != tc.want || note != tc.note {
			t.Errorf("%v: flag %v, config %v, deprecation note %v (stderr %q); want %v, note %v",
				tc.args, got.AllowUnknownOrder, cfg.AllowUnknownOrder, note, stderr.String(), tc.want, tc.note)
		}
	}
	usage := newSourceCmdRun(IO{}, nil).UsageString()
	if !strings.Contains(usage, "--allow-unknown-order") || strings.Contains(usage, "unproven") {
		t.Errorf("help shows the old name, or not the new one:\n%s", usage)
	}
}

func TestConfigFlags(t *testing.T) {
	var got *configOptions
	var which config.Command
	c := newConfigCmdRun(IO{}, func(f *configOptions, cmd config.Command, _ IO) error { got, which = f, cmd; return nil })
	parseFlags(t, c, "-c", "s.yaml", "source", "-p", "a=1", "--bucket", "bk", "--local-dir", "/d", "--bootstrap-servers", "h:1")
	want := &configOptions{configFlags: configFlags{ConfigFile: "s.yaml", Params: []string{"a=1"}, LogLevel: "warn", LogFormat: "text"},
		Bootstrap: "h:1", LocalDir: "/d", Bucket: "bk"}
	if !reflect.DeepEqual(got, want) || which != config.Source {
		t.Errorf("flags %+v for %v, want %+v for source", got, which, want)
	}
	parseFlags(t, c, "-c", "s.yaml")
	if which != config.Sink {
		t.Errorf("default command %v, want sink", which)
	}
	c.SetArgs([]string{"both"})
	if err := c.Execute(); err == nil {
		t.Error("config both: no error")
	}
}

// TestKeyList: --exclude-keys-file's lines: text, base64: for other
// bytes, a trailing \r dropped, empty lines skipped; a bad base64 line is
// named.
func TestKeyList(t *testing.T) {
	dir := t.TempDir()
	path := dir + "/keys.txt"
	if err := os.WriteFile(path, []byte("user-1\r\n\nuser 2\nbase64:AAH/\nbase64:\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	keys, err := readKeyList(path)
	if err != nil {
		t.Fatal(err)
	}
	want := map[string]struct{}{"user-1": {}, "user 2": {}, "\x00\x01\xff": {}, "": {}}
	if !reflect.DeepEqual(keys, want) {
		t.Fatalf("keys %q, want %q", keys, want)
	}
	if err := os.WriteFile(path, []byte("ok\nbase64:%%%\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	if _, err := readKeyList(path); err == nil || !strings.Contains(err.Error(), "line 2") {
		t.Fatalf("bad base64: %v, want an error naming line 2", err)
	}
	if err := os.WriteFile(path, []byte("\n\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	if _, err := readKeyList(path); err == nil {
		t.Fatal("an empty list was taken")
	}
}
