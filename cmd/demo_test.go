package cmd

import (
	"fmt"
	"strings"
	"testing"
)

func TestDemoArchivesAndRestores(t *testing.T) {
	ctx := cliContext(t)
	dir := t.TempDir()
	r := mustRun(t, ctx, ExitOK, "demo", "--dir", dir)

	keys := []string{
		"topics/s3_topic/partition=0/s3_topic+0+0000000000.json",
		"topics/s3_topic/partition=0/s3_topic+0+0000000003.json",
		"topics/s3_topic/partition=0/s3_topic+0+0000000006.json",
	}
	last := -1
	for _, k := range keys {
		i := strings.Index(r.out, k+"\n")
		if i < 0 || i < last {
			t.Errorf("output lacks %s in order:\n%s", k, r.out)
		}
		last = i
	}
	if got := objectKeys(t, dir); strings.Join(got, ",") != strings.Join(keys, ",") {
		t.Errorf("objects in %s: %q", dir, got)
	}
	if !strings.Contains(r.out, "restored s3_topic into copy_of_s3_topic: topics=1 partitions=1 objects=3 records=9 ") {
		t.Errorf("no restore summary:\n%s", r.out)
	}
	// The nine restored records, in order, after the copy_of_s3_topic header.
	_, restored, ok := strings.Cut(r.out, "\ncopy_of_s3_topic:\n")
	if !ok {
		t.Fatalf("no restored records:\n%s", r.out)
	}
	var want strings.Builder
	for i := range 9 {
		fmt.Fprintf(&want, "    partition=0 offset=%d value={\"f1\":\"value%d\"}\n", i, i+1)
	}
	if restored != want.String() {
		t.Errorf("restored records:\n%s\nwant:\n%s", restored, want.String())
	}
}
