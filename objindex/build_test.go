package objindex

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"reflect"
	"strings"
	"testing"

	"github.com/kafkas3/kafkas3/format"
	"github.com/kafkas3/kafkas3/index"
	"github.com/kafkas3/kafkas3/partition"
	"github.com/kafkas3/kafkas3/s3store"
)

const prefix = "_kafkas3/"

func put(t *testing.T, st s3store.Store, key string, data []byte) {
	t.Helper()
	ctx := context.Background()
	w, err := st.Create(ctx, key)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := w.Write(data); err != nil {
		t.Fatal(err)
	}
	if err := w.Commit(ctx); err != nil {
		t.Fatal(err)
	}
}

// encoded returns the bytes of records in f, record i with offsets[i].
func encoded(t *testing.T, f format.Format, offsets ...int64) []byte {
	t.Helper()
	var b bytes.Buffer
	w, err := f.NewWriter(&b)
	if err != nil {
		t.Fatal(err)
	}
	for _, o := range offsets {
		rec := &format.Record{Topic: "orders", Offset: o, Key: []byte(fmt.Sprintf(`"k%d"`, o)), Value: []byte(fmt.Sprintf(`{"n":%d}`, o))}
		if err := w.Write(rec); err != nil {
			t.Fatal(err)
		}
	}
	if err := w.Close(); err != nil {
		t.Fatal(err)
	}
	return b.Bytes()
}

func envelopes(t *testing.T) format.Format {
	t.Helper()
	f, err := format.NewEnvelope(format.NewJSON(), format.KindJSON)
	if err != nil {
		t.Fatal(err)
	}
	return f
}

// archive writes the objects of partition 0 of "orders": an envelope
// object at 0 holding offsets 0, 1 and 3, plain ones at 5 with 3 records
// and its .keys object and at 8 with one, a lone .headers object and a key
// of another extension.
func archive(t *testing.T, st s3store.Store) {
	const dir = "topics/orders/partition=0/orders+0+"
	put(t, st, dir+"0000000000.json", encoded(t, envelopes(t), 0, 1, 3))
	put(t, st, dir+"0000000005.json", encoded(t, format.NewJSON(), 5, 6, 7))
	put(t, st, dir+"0000000005.keys.json", []byte("\"k5\"\n\"k6\"\n\"k7\"\n"))
	put(t, st, dir+"0000000008.json", encoded(t, format.NewJSON(), 8))
	put(t, st, dir+"0000000020.headers.json", []byte("[]\n"))
	put(t, st, dir+"0000000030.txt", []byte("x"))
}

func options() Options {
	return Options{Prefix: prefix, Keys: partition.DefaultKeyConfig(), Format: format.NewJSON(), Concurrency: 3}
}

// snapshot returns every object under the index prefix.
func snapshot(t *testing.T, st s3store.Store) map[string]string {
	t.Helper()
	out := map[string]string{}
	err := st.List(context.Background(), prefix, func(info s3store.ObjectInfo) error {
		rc, err := st.Open(context.Background(), info.Key)
		if err != nil {
			return err
		}
		defer rc.Close()
		b, err := io.ReadAll(rc)
		out[info.Key] = string(b)
		return err
	})
	if err != nil {
		t.Fatal(err)
	}
	return out
}

// TestBuildFromObjects: the entries of an envelope object (its offsets,
// a hole included), plain ones (offsets from their names), one with its
// .keys object; one index object per commit and a
// checkpoint under the rebuild's writer; the same archive gives the same
// bytes; a second Build finds the partition indexed.
func TestBuildFromObjects(t *testing.T) {
	ctx := context.Background()
	st := s3store.NewMemory()
	archive(t, st)
	var progress []int
	opt := options()
	opt.Progress = func(done, total int) { progress = append(progress, done, total) }
	res, err := Build(ctx, st, opt)
	if err != nil {
		t.Fatal(err)
	}
	if fmt.Sprint(res.Partitions) != "[orders/0]" || res.Objects != 3 || res.IndexObjects != 3 || len(res.Checkpoints) != 1 ||
		res.Skipped[SkipHeadersOnly] != 1 || res.Skipped[SkipOtherExtension] != 1 || fmt.Sprint(progress) != "[1 3 2 3 3 3]" {
		t.Fatalf("Build = %+v, progress %v", res, progress)
	}
	ix, err := index.Load(ctx, st, prefix, nil)
	if err != nil {
		t.Fatal(err)
	}
	var got []string
	for _, e := range ix.Entries {
		got = append(got, fmt.Sprintf("%s %v %d [%d,%d) env=%v tomb=%v parts=%d", e.Key, e.Runs, e.Records, e.From, e.Commit, e.Envelope, e.Tombstone, len(e.Objects)))
	}
	want := []string{
		"topics/orders/partition=0/orders+0+0000000000.json [0-1 3] 3 [0,4) env=true tomb=false parts=1",
		"topics/orders/partition=0/orders+0+0000000005.json [5-7] 3 [5,8) env=false tomb=false parts=2",
		"topics/orders/partition=0/orders+0+0000000008.json [8] 1 [8,9) env=false tomb=false parts=1",
	}
	if !reflect.DeepEqual(got, want) || ix.Checkpoints != 1 || ix.FullListings != 0 || ix.Assumed != 2 {
		t.Fatalf("entries\n%s\nwant\n%s\n(%d checkpoints, %d full listings, %d assumed; want 1, 0, 2)",
			strings.Join(got, "\n"), strings.Join(want, "\n"), ix.Checkpoints, ix.FullListings, ix.Assumed)
	}
	for k := range snapshot(t, st) {
		if !strings.Contains(k, "-"+Writer()+".") {
			t.Fatalf("%s is not the rebuild writer's", k)
		}
	}
	// Offset 4 lies between two objects: a gap, not claimed as read.
	if ps := index.Analyze(ix.Entries); len(ps) != 1 || fmt.Sprint(ps[0].Gaps) != "[4]" {
		t.Fatalf("Analyze = %+v, want the gap 4", ps)
	}
	other := s3store.NewMemory()
	archive(t, other)
	if _, err := Build(ctx, other, options()); err != nil {
		t.Fatal(err)
	}
	if a, b := snapshot(t, st), snapshot(t, other); !reflect.DeepEqual(a, b) {
		t.Fatalf("two builds of one archive differ:\n%v\n%v", a, b)
	}
	again, err := Build(ctx, st, options())
	if err != nil || len(again.Partitions) != 0 || again.Indexed != 1 {
		t.Fatalf("a second Build = %+v, %v; want the partition left alone", again, err)
	}
}

// TestBuildSHA256AndDryRun: --digest sha256 adds the SHA-256; a dry run
// lists the partition and writes nothing.
func TestBuildSHA256AndDryRun(t *testing.T) {
	ctx := context.Background()
	st := s3store.NewMemory()
	archive(t, st)
	opt := options()
	opt.DryRun = true
	if res, err := Build(ctx, st, opt); err != nil || fmt.Sprint(res.Partitions) != "[orders/0]" || len(snapshot(t, st)) != 0 {
		t.Fatalf("dry run = %+v, %v, wrote %v", res, err, snapshot(t, st))
	}
	opt.DryRun, opt.SHA256 = false, true
	if _, err := Build(ctx, st, opt); err != nil {
		t.Fatal(err)
	}
	ix, err := index.Load(ctx, st, prefix, nil)
	if err != nil {
		t.Fatal(err)
	}
	for _, e := range ix.Entries {
		for _, o := range e.Objects {
			if len(o.SHA256) != 64 || o.CRC32C == "" {
				t.Fatalf("object %s: crc32c %q sha256 %q", o.Key, o.CRC32C, o.SHA256)
			}
		}
	}
}

// failOpen fails the reads of one key.
type failOpen struct {
	s3store.Store
	key string
}

func (f failOpen) Open(ctx context.Context, key string) (io.ReadCloser, error) {
	if key == f.key {
		return nil, errors.New("store down")
	}
	return f.Store.Open(ctx, key)
}

// TestBuildErrorsNameTheObject: an object that does not decode, or that
// the store does not give, fails the build naming it; nothing of its
// partition is written.
func TestBuildErrorsNameTheObject(t *testing.T) {
	ctx := context.Background()
	const bad = "topics/orders/partition=0/orders+0+0000000000.json"
	st := s3store.NewMemory()
	archive(t, st)
	// An envelope line, then a line that is not one.
	put(t, st, bad, append(encoded(t, envelopes(t), 0), []byte("{\"n\":1}\n")...))
	if _, err := Build(ctx, st, options()); err == nil || !strings.Contains(err.Error(), fmt.Sprintf("%q", bad)) {
		t.Fatalf("err = %v, want one naming %s", err, bad)
	}
	const keys = "topics/orders/partition=0/orders+0+0000000005.keys.json"
	st = s3store.NewMemory()
	archive(t, st)
	if _, err := Build(ctx, failOpen{st, keys}, options()); err == nil || !strings.Contains(err.Error(), fmt.Sprintf("%q", keys)) {
		t.Fatalf("err = %v, want one naming %s", err, keys)
	}
	if s := snapshot(t, st); len(s) != 0 {
		t.Fatalf("wrote %v", s)
	}
}

// TestBuildRefusesUnderivableOffsets: objects without envelopes in two
// folders of one partition, or a tombstone object, leave the partition
// without an index (their records need not be consecutive offsets);
// envelope objects in two folders are indexed.
func TestBuildRefusesUnderivableOffsets(t *testing.T) {
	ctx := context.Background()
	for _, tc := range []struct {
		name string
		keys map[string][]byte
		why  string
	}{
		{"two folders", map[string][]byte{
			"topics/orders/a=1/orders+0+0000000000.json": encoded(t, format.NewJSON(), 0, 1),
			"topics/orders/a=2/orders+0+0000000001.json": encoded(t, format.NewJSON(), 1),
		}, "orders/0: 2 objects without envelopes in 2 folders"},
		{"a tombstone object", map[string][]byte{
			"topics/orders/partition=0/orders+0+0000000000.json":      encoded(t, format.NewJSON(), 0, 1),
			"topics/orders/partition=0/orders+0+0000000002.keys.json": []byte("\"k\"\n"),
		}, "orders/0: 1 tombstone objects"},
		{"envelopes in two folders", map[string][]byte{
			"topics/orders/a=1/orders+0+0000000000.json": encoded(t, envelopes(t), 0, 2),
			"topics/orders/a=2/orders+0+0000000001.json": encoded(t, envelopes(t), 1),
		}, ""},
	} {
		st := s3store.NewMemory()
		for k, b := range tc.keys {
			put(t, st, k, b)
		}
		res, err := Build(ctx, st, options())
		if err != nil {
			t.Fatalf("%s: %v", tc.name, err)
		}
		wrote := len(snapshot(t, st)) > 0
		switch {
		case tc.why == "" && (len(res.Underivable) != 0 || !wrote || res.Objects != 2):
			t.Fatalf("%s: %+v, wrote %v; want the partition indexed", tc.name, res, wrote)
		case tc.why != "" && (len(res.Underivable) != 1 || !strings.HasPrefix(res.Underivable[0], tc.why) || wrote):
			t.Fatalf("%s: %+v, wrote %v; want %q and nothing written", tc.name, res, wrote, tc.why)
		}
	}
}
