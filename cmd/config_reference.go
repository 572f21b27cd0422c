package cmd

import (
	"fmt"
	"strconv"
	"strings"
)

// ConfigReference renders the key table for cmd as Markdown: a table of the
// keys that take effect (key, default, allowed, meaning), then the Confluent
// keys that are recognised but only accepted at their default, then the
// Kafka Connect keys that are accepted and ignored, then the keys that are
// refused. It is the text behind README's reference and --help-config.
func ConfigReference(cmd Command) string {
	var b strings.Builder
	specs := configKeys()
	section := func(title, intro string, status keyStatus, columns bool) {
		var rows []keySpec
		for _, s := range specs {
			if s.status == status && s.commands&cmd != 0 {
				rows = append(rows, s)
			}
		}
		if len(rows) == 0 {
			return
		}
		fmt.Fprintf(&b, "### %s\n\n%s\n\n", title, intro)
		if columns {
			b.WriteString("| key | default | allowed | meaning |\n| --- | --- | --- | --- |\n")
			for _, s := range rows {
				fmt.Fprintf(&b, "| `%s` | %s | %s | %s |\n", s.key, mdCell(defaultText(s, cmd)), mdCell(allowedText(s)), mdCell(s.doc))
			}
		} else {
			b.WriteString("| key | meaning |\n| --- | --- |\n")
			for _, s := range rows {
				k := s.key
				if s.prefix {
					k += "*"
				}
				fmt.Fprintf(&b, "| `%s` | %s |\n", k, mdCell(s.doc))
			}
		}
		b.WriteString("\n")
	}
	fmt.Fprintf(&b, "## `kafkas3 %s` settings\n\n", cmd)
	b.WriteString("Keys use Confluent's names. Precedence, highest first: dedicated flags, `-p key=value`, " +
		"the environment (`KAFKAS3_` + the key upper-cased with `.` and `-` as `_`, e.g. `KAFKAS3_FLUSH_SIZE`), " +
		"the config file, the default. Files may be YAML or JSON with flat keys, Kafka Connect REST JSON " +
		"(`{\"name\": ..., \"config\": {...}}`) or Java `.properties`.\n\n")
	section("Settings", "These keys take effect.", statusActive, true)
	section("Recognised, not supported yet", "Confluent features this version does not have yet. "+
		"Each is accepted at its default, which changes nothing; any other value is an error.", statusUnsupported, true)
	section("Accepted and ignored", "Kafka Connect settings with no meaning outside Connect. "+
		"They are accepted and listed in one info line.", statusIgnored, false)
	// Keys of the other command are not listed (they would read as if they
	// took effect here); one sentence says what happens to them.
	fmt.Fprintf(&b, "Keys that only `kafkas3 %s` uses are accepted too, unused, and listed in the same info line, "+
		"so one file serves both commands.", otherCommand(cmd))
	if cmd == CommandSource {
		b.WriteString(" Among them are `name` and `group.id`: the source keeps its resume markers " +
			"in the consumer groups `kafkas3-restore-<target topic>`.")
	}
	b.WriteString("\n\n")
	section("Refused", "These would change the archived records, so any value is an error.", statusRejected, false)
	return b.String()
}

// defaultText is the default column: "required" when cmd needs the key.
func defaultText(s keySpec, cmd Command) string {
	switch {
	case s.required&cmd != 0:
		return "required"
	case s.def == "":
		return "—"
	default:
		return "`" + strings.TrimSuffix(strings.TrimPrefix(strconv.Quote(s.def), `"`), `"`) + "`"
	}
}

func allowedText(s keySpec) string {
	if s.allowed != "" {
		return s.allowed
	}
	switch s.kind {
	case kindInt:
		if s.status == statusUnsupported {
			return "integer"
		}
		return intRange(&s)
	case kindBool:
		return "`true`, `false`"
	case kindList:
		return "comma-separated list"
	case kindChoice:
		var parts []string
		for _, c := range s.choices {
			t := "`" + c.name + "`"
			if len(c.aliases) > 0 {
				t += " (or `" + strings.Join(c.aliases, "`, `") + "`)"
			}
			if c.unsupported {
				t += " not supported yet"
			}
			parts = append(parts, t)
		}
		return strings.Join(parts, "; ")
	}
	return "string"
}

// otherCommand is the command that is not cmd.
func otherCommand(cmd Command) Command { return cmdBoth &^ cmd }

// mdCell escapes a table cell.
func mdCell(s string) string {
	s = strings.ReplaceAll(s, "|", `\|`)
	return strings.ReplaceAll(s, "\n", " ")
}
