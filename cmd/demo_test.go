package cmd

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

func TestDemoArchivesAndRestores(t *testing.T) {
	for _, tc := range []struct {
		name, ext string
		args      []string
		object    func(i int) string // one archived record as printed
		restored  func(i int) string // one restored value as printed
	}{
		{
			name: "avro (default)", ext: ".avro",
			object: func(i int) string { return fmt.Sprintf(`{"f1":"value%d"}`, i) },
			// Restored values are framed for the registry under
			// copy_of_s3_topic-value: the same schema, so the same id.
			restored: func(i int) string { return fmt.Sprintf(`{"f1":"value%d"} (schema id 1, copy_of_s3_topic-value v1)`, i) },
		},
		{
			name: "json", ext: ".json", args: []string{"--format", "json"},
			object:   func(i int) string { return fmt.Sprintf(`{"f1":"value%d"}`, i) },
			restored: func(i int) string { return fmt.Sprintf(`{"f1":"value%d"}`, i) },
		},
	} {
		t.Run(tc.name, func(t *testing.T) {
			ctx := cliContext(t)
			dir := t.TempDir()
			r := mustRun(t, ctx, ExitOK, append([]string{"demo", "--dir", dir}, tc.args...)...)

			keys := []string{
				"topics/s3_topic/partition=0/s3_topic+0+0000000000" + tc.ext,
				"topics/s3_topic/partition=0/s3_topic+0+0000000003" + tc.ext,
				"topics/s3_topic/partition=0/s3_topic+0+0000000006" + tc.ext,
			}
			// Each key, in order, followed by its three records.
			last := -1
			for n, k := range keys {
				var block strings.Builder
				fmt.Fprintf(&block, "%s\n", k)
				for i := range 3 {
					fmt.Fprintf(&block, "    %s\n", tc.object(3*n+i+1))
				}
				i := strings.Index(r.out, block.String())
				if i < 0 || i < last {
					t.Errorf("output lacks, in order:\n%s\ngot:\n%s", block.String(), r.out)
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
				fmt.Fprintf(&want, "    partition=0 offset=%d value=%s\n", i, tc.restored(i+1))
			}
			if restored != want.String() {
				t.Errorf("restored records:\n%s\nwant:\n%s", restored, want.String())
			}
		})
	}
}

func TestDemoRejectsUnknownFormat(t *testing.T) {
	r := mustRun(t, cliContext(t), ExitConfig, "demo", "--dir", t.TempDir(), "--format", "parquet")
	if !strings.Contains(r.err, `--format "parquet"`) {
		t.Errorf("stderr: %s", r.err)
	}
}

// A second demo run in the same directory shows and restores only its own
// objects: the default Avro run, then --format json, must not print the
// .avro objects of the first (they are binary).
func TestDemoSecondRunShowsOnlyItsOwnObjects(t *testing.T) {
	ctx := cliContext(t)
	dir := t.TempDir()
	mustRun(t, ctx, ExitOK, "demo", "--dir", dir)
	r := mustRun(t, ctx, ExitOK, "demo", "--dir", dir, "--format", "json")
	if strings.Contains(r.out, ".avro") {
		t.Errorf("the json run printed the earlier run's objects:\n%s", r.out)
	}
	if !strings.Contains(r.out, "removed the archive of an earlier demo run from "+dir) {
		t.Errorf("the json run did not say it removed the earlier archive:\n%s", r.out)
	}
	for _, k := range objectKeys(t, dir) {
		if !strings.HasSuffix(k, ".json") {
			t.Errorf("object %s of the earlier run is still in %s", k, dir)
		}
	}
	if !strings.Contains(r.out, "restored s3_topic into copy_of_s3_topic: topics=1 partitions=1 objects=3 records=9 ") {
		t.Errorf("the json run restored more than its own three objects:\n%s", r.out)
	}
}

// The demo deletes only what a demo wrote: a directory holding anything
// else is refused (exit 2) and left as it was.
func TestDemoRefusesDirectoryWithOtherFiles(t *testing.T) {
	dir := t.TempDir()
	keep := filepath.Join(dir, "notes.txt")
	if err := os.WriteFile(keep, []byte("mine"), 0o600); err != nil {
		t.Fatal(err)
	}
	r := mustRun(t, cliContext(t), ExitConfig, "demo", "--dir", dir)
	if !strings.Contains(r.err, `holds "notes.txt", which no demo wrote`) {
		t.Errorf("stderr: %s", r.err)
	}
	if b, err := os.ReadFile(keep); err != nil || string(b) != "mine" {
		t.Errorf("notes.txt = %q, %v; want it untouched", b, err)
	}
}
