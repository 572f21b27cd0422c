package cmd

import (
	"strings"
	"testing"
)

func TestKeyTableComplete(t *testing.T) {
	seen := map[string]bool{}
	for _, s := range configKeys() {
		if strings.TrimSpace(s.doc) == "" {
			t.Errorf("%s: no doc string", s.key)
		}
		if seen[s.key] {
			t.Errorf("%s: listed twice", s.key)
		}
		seen[s.key] = true
		if s.commands == 0 {
			t.Errorf("%s: used by no command", s.key)
		}
		if s.prefix != strings.HasSuffix(s.key, ".") {
			t.Errorf("%s: prefix keys, and only they, end in a dot", s.key)
		}
		if s.key != strings.ToLower(s.key) {
			t.Errorf("%s: keys are lower case", s.key)
		}
		if s.kind == kindInt && s.status == statusActive && s.min >= s.max {
			t.Errorf("%s: bounds %d..%d", s.key, s.min, s.max)
		}
		if s.kind == kindChoice && len(s.choices) == 0 {
			t.Errorf("%s: a choice key without choices", s.key)
		}
		if s.def != "" && s.kind == kindChoice && s.status == statusActive {
			if c, ok := s.matchChoice(s.def); !ok || c.unsupported {
				t.Errorf("%s: default %q is not a supported choice", s.key, s.def)
			}
		}
		if s.required != 0 && s.def != "" {
			t.Errorf("%s: required keys have no default", s.key)
		}
	}
}

// TestDefaultsParse checks that every active default passes its own key's
// validation, by loading a config that sets only the required keys.
func TestDefaultsParse(t *testing.T) {
	st, err := LoadSettings(SettingsSource{Command: CommandSink, Params: []string{
		"name=n", "bootstrap.servers=h:1", "topics=t", "flush.size=1", "s3.bucket.name=b", "format.class=json"}})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := st.Sink(); err != nil {
		t.Fatal(err)
	}
}

func TestConfigReference(t *testing.T) {
	md := ConfigReference(CommandSink)
	for _, want := range []string{
		"## `kafkas3 sink` settings",
		"| key | default | allowed | meaning |",
		"| `flush.size` | required | an integer > 0 | Records per file",
		"| `s3.part.size` | `26214400` | an integer from 5242880 to 2147483647 |",
		"| `format.bytearray.separator` | `\\n` |",
		"`avro` (or `io.confluent.connect.s3.format.avro.AvroFormat`, `AvroFormat`)",
		"`lzo` not supported yet",
		"| `value.converter` |",
		"| `errors.deadletterqueue.topic.name` |",
		"### Recognised, not supported yet",
		"| `store.kafka.keys` | `false` |",
		"### Accepted and ignored",
		"| `consumer.override.*` |",
		"### Refused",
		"| `transforms` |",
		"KAFKAS3_FLUSH_SIZE",
	} {
		if !strings.Contains(md, want) {
			t.Errorf("sink reference lacks %q", want)
		}
	}
	if strings.Contains(md, "s3.poll.interval.ms") {
		t.Error("sink reference lists a source-only key")
	}
	src := ConfigReference(CommandSource)
	if !strings.Contains(src, "| `s3.poll.interval.ms` | `60000` |") || strings.Contains(src, "`flush.size`") {
		t.Error("source reference has the wrong keys")
	}
	// Every table row has four cells: no unescaped pipe in a cell.
	for _, line := range strings.Split(md, "\n") {
		if strings.HasPrefix(line, "| `") {
			cells := strings.Count(strings.ReplaceAll(line, `\|`, ""), "|")
			if cells != 5 && cells != 3 {
				t.Errorf("malformed row %q", line)
			}
		}
	}
}

// TestRequiredKeys checks that the key table's per-command requiredness is
// what the typed parsers enforce: dropping a key the table marks required
// for a command fails that command's parse naming the key, and dropping a
// key it does not mark required does not.
func TestRequiredKeys(t *testing.T) {
	full := map[Command]map[string]string{
		CommandSink: {"name": "n", "bootstrap.servers": "h:1", "topics": "t", "flush.size": "1",
			"s3.bucket.name": "b", "format.class": "json"},
		CommandSource: {"bootstrap.servers": "h:1", "s3.bucket.name": "b", "format.class": "json"},
	}
	// Needed only depending on another key: topics (or topics.regex) and
	// s3.bucket.name (unless store.local.dir). The table leaves them
	// unmarked and says so in their "allowed" text.
	conditional := map[string]bool{"topics": true, "s3.bucket.name": true}
	parse := func(cmd Command, kv map[string]string) error {
		var params []string
		for k, v := range kv {
			params = append(params, k+"="+v)
		}
		st, err := LoadSettings(SettingsSource{Command: cmd, Params: params})
		if err != nil {
			return err
		}
		if cmd == CommandSink {
			_, err = st.Sink()
		} else {
			_, err = st.Source()
		}
		return err
	}
	for cmd, kv := range full {
		if err := parse(cmd, kv); err != nil {
			t.Fatalf("%s with every key: %v", cmd, err)
		}
		for _, s := range configKeys() {
			if s.status != statusActive || s.commands&cmd == 0 {
				continue
			}
			if _, ok := kv[s.key]; !ok {
				if s.required&cmd != 0 {
					t.Errorf("%s: %s is required but the test config lacks it", cmd, s.key)
				}
				continue
			}
			without := map[string]string{}
			for k, v := range kv {
				if k != s.key {
					without[k] = v
				}
			}
			if conditional[s.key] {
				continue
			}
			err := parse(cmd, without)
			missing := err != nil && strings.Contains(err.Error(), s.key+": "+errMissing)
			if want := s.required&cmd != 0; missing != want {
				t.Errorf("%s without %s: err = %v; table says required=%v", cmd, s.key, err, want)
			}
		}
	}
}

func TestConfigReferenceRequiredPerCommand(t *testing.T) {
	sink, src := ConfigReference(CommandSink), ConfigReference(CommandSource)
	for _, want := range []string{
		"| `name` | required |",
		"| `bootstrap.servers` | required |",
		"| `format.class` | required |",
		"Keys that only `kafkas3 source` uses are accepted too, unused, and listed in the same info line",
	} {
		if !strings.Contains(sink, want) {
			t.Errorf("sink reference lacks %q", want)
		}
	}
	for _, want := range []string{
		"| `bootstrap.servers` | — |",
		"The source needs them unless --dry-run",
		"| `format.class` | required |",
		"Keys that only `kafkas3 sink` uses are accepted too, unused, and listed in the same info line",
		"Among them are `name` and `group.id`",
	} {
		if !strings.Contains(src, want) {
			t.Errorf("source reference lacks %q", want)
		}
	}
	// The source's tables do not list the sink's identity keys as settings.
	for _, row := range []string{"| `name` |", "| `group.id` |"} {
		if strings.Contains(src, row) {
			t.Errorf("source reference has the row %q", row)
		}
	}
}
