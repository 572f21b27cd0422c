package main

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

func TestScanListsLongFunctionsOnly(t *testing.T) {
	dir := t.TempDir()
	long := "package p\n\nfunc long() {\n" + strings.Repeat("\t_ = 1\n", 80) + "}\n"
	table := "package p\n\nfunc table() []int {\n\treturn []int{\n" + strings.Repeat("\t\t1,\n", 90) + "\t}\n}\n"
	short := "package p\n\nfunc short() {}\n"
	for name, body := range map[string]string{"long.go": long, "table.go": table, "short.go": short, "long_test.go": long} {
		if err := os.WriteFile(filepath.Join(dir, name), []byte(body), 0o600); err != nil {
			t.Fatal(err)
		}
	}
	got, err := scan(dir, 80)
	if err != nil {
		t.Fatal(err)
	}
	if len(got) != 1 || !strings.Contains(got[0], "long.go:3: func long is 82 lines") {
		t.Errorf("scan = %q, want only long.go's long (82 lines)", got)
	}
}
