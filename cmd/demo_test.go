package cmd

import (
	"fmt"
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
