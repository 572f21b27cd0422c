package config

import (
	"fmt"
	"strconv"
	"strings"
)

// Reference renders the key table for cmd as Markdown: a table of the
// keys that take effect (key, default, allowed, meaning), then the Confluent
// keys that are recognised but only accepted at their default, then the
// Kafka Connect keys that are accepted and ignored, then the keys that are
// refused. It is the text behind docs/config.md and --help-config.
func Reference(cmd Command) string {
	var b strings.Builder
	specs := NewKeys().All()
	section := func(title, intro string, status Status, columns bool) {
		var rows []*Spec
		for _, s := range specs {
			if s.Status == status && s.Commands&cmd != 0 {
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
				fmt.Fprintf(&b, "| `%s` | %s | %s | %s |\n", s.Name, mdCell(defaultText(s, cmd)), mdCell(allowedText(s)), mdCell(docText(s)))
			}
		} else {
			b.WriteString("| key | meaning |\n| --- | --- |\n")
			for _, s := range rows {
				k := s.Name
				if s.Prefix {
					k += "*"
				}
				fmt.Fprintf(&b, "| `%s` | %s |\n", k, mdCell(docText(s)))
			}
		}
		b.WriteString("\n")
	}
	fmt.Fprintf(&b, "## `kafkas3 %s` settings\n\n", cmd)
	b.WriteString("Keys use Confluent's names. Precedence, highest first: dedicated flags, `-p key=value`, " +
		"the environment (`KAFKAS3_` + the key upper-cased with `.` and `-` as `_`, e.g. `KAFKAS3_FLUSH_SIZE`), " +
		"the config file, the default. Files may be YAML or JSON with flat keys, Kafka Connect REST JSON " +
		"(`{\"name\": ..., \"config\": {...}}`) or Java `.properties`.\n\n")
	section("Settings", "These keys take effect.", Active, true)
	section("Recognised, not supported yet", "Confluent features this version does not have yet. "+
		"Each is accepted at its default, which changes nothing; any other value is an error.", Unsupported, true)
	section("Accepted and ignored", "Kafka Connect settings with no meaning outside Connect. "+
		"They are accepted and listed in one info line.", Ignored, false)
	// Keys of the other command are not listed (they would read as if they
	// took effect here); one sentence says what happens to them.
	fmt.Fprintf(&b, "Keys that only `kafkas3 %s` uses are accepted too, unused, and listed in the same info line, "+
		"so one file serves both commands.", cmd.Other())
	if cmd == Source {
		b.WriteString(" Among them are `name` and `group.id`: the source keeps its resume markers " +
			"in the consumer groups `kafkas3-restore-<target topic>`.")
	}
	b.WriteString("\n\n")
	section("Refused", "These would change the archived records, so any value is an error.", Rejected, false)
	writeRules(&b, cmd)
	return b.String()
}

// writeRules lists the rules between keys that apply to cmd (rules.go).
func writeRules(b *strings.Builder, cmd Command) {
	b.WriteString("### Rules between keys\n\nChecked together with every other problem, in one run.\n\n")
	for _, r := range rules(NewKeys()) {
		if r.cmds&cmd != 0 {
			fmt.Fprintf(b, "- %s\n", mdCell(r.says))
		}
	}
	b.WriteString("\n")
}

// defaultText is the default column: "required" when cmd needs the key.
func defaultText(s *Spec, cmd Command) string {
	switch {
	case s.Required&cmd != 0:
		return "required"
	case s.Default == "":
		return "—"
	default:
		return "`" + strings.TrimSuffix(strings.TrimPrefix(strconv.Quote(s.Default), `"`), `"`) + "`"
	}
}

func allowedText(s *Spec) string {
	if s.Allowed != "" {
		return s.Allowed
	}
	switch s.Kind {
	case KindInt:
		if s.Status == Unsupported {
			return "integer"
		}
		return intRange(s)
	case KindBool:
		return "`true`, `false`"
	case KindList:
		return "comma-separated list"
	case KindChoice:
		var parts []string
		for _, c := range s.Choices {
			t := "`" + c.Name + "`"
			if len(c.Aliases) > 0 {
				t += " (or `" + strings.Join(c.Aliases, "`, `") + "`)"
			}
			if c.Unsupported {
				t += " not supported yet"
			}
			parts = append(parts, t)
		}
		return strings.Join(parts, "; ")
	}
	return "string"
}

// mdCell escapes a table cell.
func mdCell(s string) string {
	s = strings.ReplaceAll(s, "|", `\|`)
	return strings.ReplaceAll(s, "\n", " ")
}

// docText is a key's meaning, with a note on secret keys.
func docText(s *Spec) string {
	doc := s.Doc
	if len(s.AlsoNamed) > 0 {
		doc += " Also accepted as " + strings.Join(s.AlsoNamed, ", ") + "."
	}
	if s.Secret {
		doc += " Secret: never shown (masked in errors, logs and kafkas3 config)."
	}
	return doc
}
