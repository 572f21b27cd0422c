//go:build integration

package e2e

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"sort"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/kafkas3/kafkas3/internal/testbed"
)

// fmtValue is record i of partition p for the format test: a JSON object, a
// text that is not JSON, a JSON number and a JSON string, in turn.
func fmtValue(p, i int) string {
	switch i % 4 {
	case 0:
		return fmt.Sprintf(`{"p":%d,"i":%d,"s":"x y\tz"}`, p, i)
	case 1:
		return fmt.Sprintf(`plain text %d/%d with "quotes", a \ backslash & <tags>`, p, i)
	case 2:
		return strconv.Itoa(p*100000 + i)
	default:
		return fmt.Sprintf(`"a json string %d %d"`, p, i)
	}
}

// TestIntegrationSinkFormats (issue 3 items 3 and 4): records produced with
// kcat, archived as bytes+gzip (default layout) and JSON+gzip (custom
// topics.dir, file.delim and pad width, config in Connect's REST JSON),
// downloaded with `aws s3 cp` and decompressed with the system gzip.
func TestIntegrationSinkFormats(t *testing.T) {
	kcat := testbed.Tool(t, "kcat", "apt-get install kcat")
	gzip := testbed.Tool(t, "gzip", "apt-get install gzip")
	b := newBed(t)
	const topic, parts, perPart, flush = "e2e-fmt", 2, 2_500, 1000
	b.k.CreateTopic(t, topic, parts)

	start := time.Now()
	for p := range parts {
		var in bytes.Buffer
		for i := range perPart {
			fmt.Fprintf(&in, "k-%d-%d:%s\n", p, i, fmtValue(p, i))
		}
		ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
		cmd := exec.CommandContext(ctx, kcat, "-P", "-q", "-b", b.k.Addr, "-t", topic, "-p", strconv.Itoa(p), "-K", ":",
			"-X", "enable.idempotence=true", "-X", "message.timeout.ms=30000")
		cmd.Stdin = &in
		out, err := cmd.CombinedOutput()
		cancel()
		if err != nil || len(bytes.TrimSpace(out)) > 0 {
			t.Fatalf("kcat: %v\n%s", err, out)
		}
	}
	t.Logf("kcat produced %d records in %v", parts*perPart, time.Since(start).Round(time.Millisecond))
	if ends := b.endOffsets(t, topic); fmt.Sprint(ends) != fmt.Sprint(perPartition(parts, perPart)) {
		t.Fatalf("end offsets %v after kcat", ends)
	}

	t.Run("BytesGzip", func(t *testing.T) {
		bucket := b.s.CreateBucket(t)
		c := b.sinkConf("e2e-fmt-bytes", topic, bucket).with("flush.size", fmt.Sprint(flush),
			"format.class", "io.confluent.connect.s3.format.bytearray.ByteArrayFormat", "s3.compression.type", "gzip",
			"s3.compression.level", "9")
		sum, _ := runOnce(t, "bytes+gzip --once", c.write(t))
		files := b.download(t, bucket)
		var want []string
		for p := range parts {
			for off := 0; off < perPart; off += flush {
				want = append(want, fmt.Sprintf("topics/%s/partition=%d/%s+%d+%010d.bin.gz", topic, p, topic, p, off))
			}
		}
		checkKeys(t, files, want)
		if sum.objects != int64(len(want)) || sum.records != parts*perPart {
			t.Fatalf("summary %s, want %d objects and %d records", sum.line, len(want), parts*perPart)
		}
		for k, path := range files {
			p, off := keyNumbers(t, k, "+", ".bin.gz")
			var exp bytes.Buffer
			for i := off; i < min(off+flush, perPart); i++ {
				exp.WriteString(fmtValue(p, i) + "\n")
			}
			if got := gunzip(t, gzip, path); !bytes.Equal(got, exp.Bytes()) {
				t.Fatalf("%s: gzip -d gives %d bytes %.120q, want %d bytes %.120q", k, len(got), got, exp.Len(), exp.Bytes())
			}
		}
		t.Logf("%d .bin.gz objects hold exactly the kcat values, in order", len(files))
	})

	t.Run("JSONGzipCustomLayout", func(t *testing.T) {
		bucket := b.s.CreateBucket(t)
		connect := map[string]any{
			"name": "e2e-fmt-json",
			"config": map[string]string{
				"connector.class":                "io.confluent.connect.s3.S3SinkConnector",
				"tasks.max":                      "4",
				"value.converter":                "org.apache.kafka.connect.json.JsonConverter",
				"value.converter.schemas.enable": "false",
				"topics":                         topic,
				"bootstrap.servers":              b.k.Addr,
				"flush.size":                     fmt.Sprint(flush),
				"format.class":                   "io.confluent.connect.s3.format.json.JsonFormat",
				"storage.class":                  "io.confluent.connect.s3.storage.S3Storage",
				"s3.compression.type":            "gzip",
				"topics.dir":                     "archive/kafka",
				"file.delim":                     "~",
				"filename.offset.zero.pad.width": "6",
				"s3.bucket.name":                 bucket,
				"s3.region":                      b.s.Region,
				"store.url":                      b.s.Endpoint,
				"aws.access.key.id":              b.s.AccessKey,
				"aws.secret.access.key":          b.s.SecretKey,
			},
		}
		raw, err := json.Marshal(connect)
		if err != nil {
			t.Fatal(err)
		}
		path := filepath.Join(t.TempDir(), "connector.json")
		if err := os.WriteFile(path, raw, 0o600); err != nil {
			t.Fatal(err)
		}
		sum, p := runOnce(t, "json+gzip --once", path)
		if !strings.Contains(p.stderr(), "connector.class") {
			t.Fatalf("no info line about the ignored Connect keys\n%s", p.logs())
		}
		files := b.download(t, bucket)
		var want []string
		for p := range parts {
			for off := 0; off < perPart; off += flush {
				want = append(want, fmt.Sprintf("archive/kafka/%s/partition=%d/%s~%d~%06d.json.gz", topic, p, topic, p, off))
			}
		}
		checkKeys(t, files, want)
		if sum.objects != int64(len(want)) {
			t.Fatalf("summary %s, want %d objects", sum.line, len(want))
		}
		for k, path := range files {
			p, off := keyNumbers(t, k, "~", ".json.gz")
			lines := strings.Split(strings.TrimSuffix(string(gunzip(t, gzip, path)), "\n"), "\n")
			if n := min(off+flush, perPart) - off; len(lines) != n {
				t.Fatalf("%s: %d lines, want %d", k, len(lines), n)
			}
			for j, line := range lines {
				v := fmtValue(p, off+j)
				if json.Valid([]byte(v)) {
					if line != v {
						t.Fatalf("%s line %d: %q, want the JSON value as is: %q", k, j+1, line, v)
					}
					continue
				}
				var s string
				if err := json.Unmarshal([]byte(line), &s); err != nil || s != v {
					t.Fatalf("%s line %d: %q is not the JSON string of %q (%v)", k, j+1, line, v, err)
				}
			}
		}
		t.Logf("%d .json.gz objects: valid JSON values as is, other values as JSON strings, in order", len(files))
	})
}

// download copies bucket with `aws s3 cp --recursive` and returns the local
// path of every key of the archive (the index objects under indexPrefix are
// left out).
func (b *bed) download(t *testing.T, bucket string) map[string]string {
	t.Helper()
	dir := t.TempDir()
	b.awsCLI(t, "s3", "cp", "--recursive", "--no-progress", "--only-show-errors", "s3://"+bucket+"/", dir)
	files := map[string]string{}
	err := filepath.WalkDir(dir, func(path string, d os.DirEntry, err error) error {
		if err != nil || d.IsDir() {
			return err
		}
		rel, err := filepath.Rel(dir, path)
		if k := filepath.ToSlash(rel); !isIndexKey(k) {
			files[k] = path
		}
		return err
	})
	if err != nil {
		t.Fatal(err)
	}
	return files
}

func checkKeys(t *testing.T, files map[string]string, want []string) {
	t.Helper()
	var got []string
	for k := range files {
		got = append(got, k)
	}
	sort.Strings(got)
	sort.Strings(want)
	if strings.Join(got, "\n") != strings.Join(want, "\n") {
		t.Fatalf("keys:\n%s\nwant:\n%s", strings.Join(got, "\n"), strings.Join(want, "\n"))
	}
}

// keyNumbers returns the partition and start offset in a file name
// <topic><delim><p><delim><offset><ext>.
func keyNumbers(t *testing.T, key, delim, ext string) (int, int) {
	t.Helper()
	name := strings.TrimSuffix(key[strings.LastIndex(key, "/")+1:], ext)
	f := strings.Split(name, delim)
	if len(f) != 3 {
		t.Fatalf("key %s: file name %q", key, name)
	}
	p, err1 := strconv.Atoi(f[1])
	off, err2 := strconv.Atoi(f[2])
	if err1 != nil || err2 != nil {
		t.Fatalf("key %s: file name %q", key, name)
	}
	return p, off
}

// gunzip decompresses path with the system gzip.
func gunzip(t *testing.T, gzip, path string) []byte {
	t.Helper()
	var stderr bytes.Buffer
	cmd := exec.Command(gzip, "-dc", path)
	cmd.Stderr = &stderr
	out, err := cmd.Output()
	if err != nil {
		t.Fatalf("gzip -dc %s: %v\n%s", path, err, stderr.String())
	}
	return out
}
