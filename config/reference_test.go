package config

import (
	"strings"
	"testing"
)

func TestKeyTableComplete(t *testing.T) {
	seen := map[string]bool{}
	for _, s := range NewKeys().All() {
		if strings.TrimSpace(s.Doc) == "" {
			t.Errorf("%s: no doc string", s.Name)
		}
		if seen[s.Name] {
			t.Errorf("%s: listed twice", s.Name)
		}
		seen[s.Name] = true
		if s.Commands == 0 {
			t.Errorf("%s: used by no command", s.Name)
		}
		if s.Prefix != strings.HasSuffix(s.Name, ".") {
			t.Errorf("%s: prefix keys, and only they, end in a dot", s.Name)
		}
		if s.Name != strings.ToLower(s.Name) {
			t.Errorf("%s: keys are lower case", s.Name)
		}
		if s.Kind == KindInt && s.Status == Active && s.Min >= s.Max {
			t.Errorf("%s: bounds %d..%d", s.Name, s.Min, s.Max)
		}
		if s.Kind == KindChoice && len(s.Choices) == 0 {
			t.Errorf("%s: a choice key without choices", s.Name)
		}
		if s.Default != "" && s.Kind == KindChoice && s.Status == Active {
			if c, ok := s.Match(s.Default); !ok || c.Unsupported {
				t.Errorf("%s: default %q is not a supported choice", s.Name, s.Default)
			}
		}
		if s.Required != 0 && s.Default != "" {
			t.Errorf("%s: required keys have no default", s.Name)
		}
	}
}

// TestDefaultsParse checks that every active default passes its own key's
// validation, by loading a config that sets only the required keys.
func TestDefaultsParse(t *testing.T) {
	st, err := Load(Input{Command: Sink, Params: []string{
		"name=n", "bootstrap.servers=h:1", "topics=t", "flush.size=1", "s3.bucket.name=bkt", "format.class=json"}})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := st.Sink(nil); err != nil {
		t.Fatal(err)
	}
}

func TestReference(t *testing.T) {
	md := Reference(Sink)
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
		"### Rules between keys",
		"- rotate.schedule.interval.ms needs timezone\n",
	} {
		if !strings.Contains(md, want) {
			t.Errorf("sink reference lacks %q", want)
		}
	}
	if strings.Contains(md, "s3.poll.interval.ms") {
		t.Error("sink reference lists a source-only key")
	}
	src := Reference(Source)
	if strings.Contains(src, "rotate.schedule.interval.ms needs timezone") || !strings.Contains(src, "- the source takes at most one of topics and topics.regex\n") {
		t.Error("source reference has the wrong rules")
	}
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
		Sink: {"name": "n", "bootstrap.servers": "h:1", "topics": "t", "flush.size": "1",
			"s3.bucket.name": "bkt", "format.class": "json"},
		Source: {"bootstrap.servers": "h:1", "s3.bucket.name": "bkt", "format.class": "json"},
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
		st, err := Load(Input{Command: cmd, Params: params})
		if err != nil {
			return err
		}
		if cmd == Sink {
			_, err = st.Sink(nil)
		} else {
			_, err = st.Source(nil)
		}
		return err
	}
	for cmd, kv := range full {
		if err := parse(cmd, kv); err != nil {
			t.Fatalf("%s with every key: %v", cmd, err)
		}
		for _, s := range NewKeys().All() {
			if s.Status != Active || s.Commands&cmd == 0 {
				continue
			}
			if _, ok := kv[s.Name]; !ok {
				if s.Required&cmd != 0 {
					t.Errorf("%s: %s is required but the test config lacks it", cmd, s.Name)
				}
				continue
			}
			without := map[string]string{}
			for k, v := range kv {
				if k != s.Name {
					without[k] = v
				}
			}
			if conditional[s.Name] {
				continue
			}
			err := parse(cmd, without)
			missing := err != nil && strings.Contains(err.Error(), s.Name+": "+errMissing)
			if want := s.Required&cmd != 0; missing != want {
				t.Errorf("%s without %s: err = %v; table says required=%v", cmd, s.Name, err, want)
			}
		}
	}
}

func TestConfigReferenceRequiredPerCommand(t *testing.T) {
	sink, src := Reference(Sink), Reference(Source)
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
