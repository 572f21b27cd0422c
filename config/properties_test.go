package config

import (
	"reflect"
	"strings"
	"testing"
	"unicode/utf8"
)

func TestParseProperties(t *testing.T) {
	tests := []struct {
		name string
		in   string
		want [][2]string
	}{
		{"separators", "a=1\nb:2\nc 3\nd = 4\ne : 5\nf\t\f6\n", [][2]string{{"a", "1"}, {"b", "2"}, {"c", "3"}, {"d", "4"}, {"e", "5"}, {"f", "6"}}},
		{"comments and blanks", "# c\n! c\n  # indented comment\n\n   \na=1\n", [][2]string{{"a", "1"}}},
		{"comment with backslash does not continue", "# c \\\na=1\n", [][2]string{{"a", "1"}}},
		{"key only", "alone\nempty=\n", [][2]string{{"alone", ""}, {"empty", ""}}},
		{"value keeps trailing blanks and later separators", "a = b = c: d  \n", [][2]string{{"a", "b = c: d  "}}},
		{"double separator", "a==b\na: =b\n", [][2]string{{"a", "=b"}, {"a", "=b"}}},
		{"continuation", "a=one \\\n    two\\\n  three\n", [][2]string{{"a", "one twothree"}}},
		{"continuation line starting with #", "a=x\\\n#y\n", [][2]string{{"a", "x#y"}}},
		{"even backslashes do not continue", "a=x\\\\\nb=y\n", [][2]string{{"a", `x\`}, {"b", "y"}}},
		{"backslash at end of input", "a=x\\", [][2]string{{"a", "x"}}},
		{"continuation then blank line ends it", "a=x\\\n   \nb=y\n", [][2]string{{"a", "x"}, {"b", "y"}}},
		{"escapes", `a=\t\n\r\f\\\b\=\:\ \#\!` + "\n", [][2]string{{"a", "\t\n\r\f\\b=: #!"}}},
		{"escaped separators in key", `my\ key\=x\:y=v` + "\n", [][2]string{{"my key=x:y", "v"}}},
		{"unicode escapes", `a=\u0041\u00e9\u20AC` + "\n", [][2]string{{"a", "Aé€"}}},
		{"surrogate pair", `a=\uD83D\uDE00` + "\n", [][2]string{{"a", "😀"}}},
		{"lone surrogate", `a=\uD83Dx` + "\n", [][2]string{{"a", "\uFFFDx"}}},
		{"CRLF and CR line ends", "a=1\r\nb=2\rc=3", [][2]string{{"a", "1"}, {"b", "2"}, {"c", "3"}}},
		{"CRLF continuation", "a=1\\\r\n  2\r\n", [][2]string{{"a", "12"}}},
		{"BOM", "\ufeffa=1\n", [][2]string{{"a", "1"}}},
		{"UTF-8 text", "a=grüße\n", [][2]string{{"a", "grüße"}}},
		{"Latin-1 fallback", "a=gr\xfc\xdfe\n", [][2]string{{"a", "grüße"}}},
		{"duplicates kept in order", "a=1\na=2\n", [][2]string{{"a", "1"}, {"a", "2"}}},
		{"separator escape in value", `path=C\:\\dir` + "\n", [][2]string{{"path", `C:\dir`}}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			props, err := parseProperties([]byte(tc.in))
			if err != nil {
				t.Fatal(err)
			}
			var got [][2]string
			for _, p := range props {
				got = append(got, [2]string{p.key, p.value})
			}
			if !reflect.DeepEqual(got, tc.want) {
				t.Errorf("got %q\nwant %q", got, tc.want)
			}
		})
	}
}

func TestParsePropertiesLineNumbers(t *testing.T) {
	props, err := parseProperties([]byte("# c\na=1\\\n 2\nb=3\n"))
	if err != nil {
		t.Fatal(err)
	}
	if len(props) != 2 || props[0].line != 2 || props[1].line != 4 {
		t.Errorf("got %+v", props)
	}
}

func TestParsePropertiesMalformedUnicode(t *testing.T) {
	for _, in := range []string{`a=\u12`, `a=\u12G4`, `a=x\u`, `k\uZZZZ=v`} {
		_, err := parseProperties([]byte("ok=1\n" + in + "\n"))
		if err == nil || !strings.Contains(err.Error(), "line 2") || !strings.Contains(err.Error(), "malformed") {
			t.Errorf("%q: err = %v, want a malformed-escape error on line 2", in, err)
		}
	}
}

func FuzzParseProperties(f *testing.F) {
	for _, s := range []string{
		"a=1\n", "a\\\n b", "\\u0041=\\uD83D\\uDE00", "# c\n!c\n", "a:b c", "\\", "\\u", "\r\n\r", "\xff\xfe=\x00",
	} {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, data []byte) {
		props, err := parseProperties(data)
		if err != nil {
			return
		}
		for _, p := range props {
			if !utf8.ValidString(p.key) || !utf8.ValidString(p.value) {
				t.Errorf("invalid UTF-8 in %q=%q", p.key, p.value)
			}
			if p.line < 1 {
				t.Errorf("line %d", p.line)
			}
		}
	})
}
