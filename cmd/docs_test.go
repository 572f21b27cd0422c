package cmd

import (
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"sort"
	"strings"
	"testing"
)

// docPages are the README and the pages under docs/, by path from the
// repository root.
func docPages(t *testing.T) map[string]string {
	t.Helper()
	paths, err := filepath.Glob("../docs/*.md")
	if err != nil {
		t.Fatal(err)
	}
	out := map[string]string{}
	for _, p := range append(paths, "../README.md") {
		b, err := os.ReadFile(p)
		if err != nil {
			t.Fatal(err)
		}
		out[strings.TrimPrefix(p, "../")] = string(b)
	}
	return out
}

// docsText is every page, for tests that need a text to be somewhere in
// the docs.
func docsText(t *testing.T) string {
	t.Helper()
	pages := docPages(t)
	names := make([]string, 0, len(pages))
	for n := range pages {
		names = append(names, n)
	}
	sort.Strings(names)
	var b strings.Builder
	for _, n := range names {
		b.WriteString(pages[n])
	}
	return b.String()
}

// fenced matches a fenced code block, indented or not (in a list): its
// indentation, language and body.
var fenced = regexp.MustCompile("(?ms)^( *)```([a-z]*)\n(.*?)^ *```")

// dedent strips indent from the start of each line of body.
func dedent(body, indent string) string {
	lines := strings.Split(body, "\n")
	for i, l := range lines {
		lines[i] = strings.TrimPrefix(l, indent)
	}
	return strings.Join(lines, "\n")
}

// headingAnchors returns the anchors GitHub gives a page's headings
// (lower case, punctuation but hyphens and underscores dropped, spaces to
// hyphens, "-1", "-2" for repeats), outside code blocks.
func headingAnchors(page string) map[string]bool {
	out, seen := map[string]bool{}, map[string]int{}
	strip := regexp.MustCompile(`[^\p{L}\p{N}_\- ]`)
	for _, line := range strings.Split(fenced.ReplaceAllString(page, ""), "\n") {
		if !strings.HasPrefix(line, "#") {
			continue
		}
		title := strings.TrimSpace(strings.TrimLeft(line, "#"))
		a := strings.ReplaceAll(strip.ReplaceAllString(strings.ToLower(title), ""), " ", "-")
		if n := seen[a]; n > 0 {
			out[fmt.Sprintf("%s-%d", a, n)] = true
		} else {
			out[a] = true
		}
		seen[a]++
	}
	return out
}

// TestDocsLinks: every relative link of the README and the docs pages
// names a file that exists and, with "#anchor", a heading of it; every
// docs page is linked from the README; the README stays short.
func TestDocsLinks(t *testing.T) {
	pages := docPages(t)
	link := regexp.MustCompile(`\]\(([^)\s]+)\)`)
	linked := map[string]bool{}
	for name, page := range pages {
		for _, m := range link.FindAllStringSubmatch(fenced.ReplaceAllString(page, ""), -1) {
			target := m[1]
			if regexp.MustCompile(`^[a-z]+:`).MatchString(target) {
				continue
			}
			file, anchor, _ := strings.Cut(target, "#")
			path := name
			if file != "" {
				path = filepath.ToSlash(filepath.Clean(filepath.Join(filepath.Dir(name), file)))
			}
			if name == "README.md" {
				linked[path] = true
			}
			body, ok := pages[path]
			if !ok {
				b, err := os.ReadFile("../" + path)
				if err != nil {
					t.Errorf("%s: link %q: no file %s", name, target, path)
					continue
				}
				body = string(b)
			}
			if anchor != "" && !headingAnchors(body)[anchor] {
				t.Errorf("%s: link %q: %s has no heading #%s", name, target, path, anchor)
			}
		}
	}
	for name := range pages {
		if strings.HasPrefix(name, "docs/") && !linked[name] {
			t.Errorf("the README does not link %s", name)
		}
	}
	if n := strings.Count(pages["README.md"], "\n"); n > 300 {
		t.Errorf("the README has %d lines; keep it short (at most 300) and put the rest under docs/", n)
	}
}

// TestDocsExampleConfigs: every example config of the docs (a yaml, json
// or properties block with flush.size, the key every sink config sets) is
// valid for `kafkas3 config`.
func TestDocsExampleConfigs(t *testing.T) {
	ctx := cliContext(t)
	n := 0
	for name, page := range docPages(t) {
		for _, m := range fenced.FindAllStringSubmatch(page, -1) {
			lang, body := m[2], dedent(m[3], m[1])
			ext := map[string]string{"yaml": ".yaml", "json": ".json", "properties": ".properties"}[lang]
			if ext == "" || !strings.Contains(body, "flush.size") {
				continue
			}
			n++
			path := writeFile(t, fmt.Sprintf("example-%d%s", n, ext), body)
			if r := runCLI(ctx, "config", "-c", path); r.code != ExitOK {
				t.Errorf("%s: the example config does not pass kafkas3 config:\n%s\n%s", name, body, r.err)
			}
		}
	}
	if n < 3 {
		t.Fatalf("%d example configs found in the docs; the test checks nothing", n)
	}
}
