package cmd

import (
	"os"
	"strings"
	"testing"

	"github.com/kafkas3/kafkas3/config"
)

// TestREADMEConfigReference keeps the configuration reference
// (docs/config.md) equal to the key table. Run with KAFKAS3_UPDATE_README=1
// to rewrite it.
func TestREADMEConfigReference(t *testing.T) {
	const begin, end = "<!-- BEGIN CONFIG REFERENCE -->\n", "<!-- END CONFIG REFERENCE -->"
	path := "../docs/config.md"
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	s := string(b)
	i, j := strings.Index(s, begin), strings.Index(s, end)
	if i < 0 || j < i {
		t.Fatalf("docs/config.md lacks the %q and %q markers", begin, end)
	}
	want := "\n" + config.Reference(config.Sink) + "\n" + config.Reference(config.Source) + "\n"
	got := s[i+len(begin) : j]
	if got == want {
		return
	}
	if os.Getenv("KAFKAS3_UPDATE_README") == "1" {
		if err := os.WriteFile(path, []byte(s[:i+len(begin)]+want+s[j:]), 0o644); err != nil {
			t.Fatal(err)
		}
		return
	}
	t.Fatal("docs/config.md is out of date; run: KAFKAS3_UPDATE_README=1 go test ./cmd -run TestREADMEConfigReference")
}
