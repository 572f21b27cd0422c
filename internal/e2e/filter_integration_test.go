//go:build integration

package e2e

import (
	"bytes"
	"context"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/twmb/franz-go/pkg/kgo"
)

// TestIntegrationSourceEraseFilterRate (issue 21, items 2 and 3, on the
// test bed): an archive of keyed records (the envelope keeps keys) is
// restored three ways. (1) With --exclude-keys-file: every record of a
// listed key comes back as a tombstone of its key, in its place, every
// other one as produced, read back record by record; the summary says
// erased=N. (2) With --key-regex and --max-records-per-sec: only the
// matching records come back, in order, at no more than the rate (the
// run takes at least the time the rate gives them); filtered=N. (3) With
// --exclude-action drop: the listed keys' records do not come back.
func TestIntegrationSourceEraseFilterRate(t *testing.T) {
	b := newBed(t)
	const perPart = 300
	topic := srcUnique("src-erase")
	b.k.CreateTopic(t, topic, 2)
	b.produce(t, topic, 2, 0, perPart, value)
	bucket := b.s.CreateBucket(t)
	cfg := b.sinkConf(topic, topic, bucket).with("flush.size", "100", "store.envelope", "true").write(t)
	runOnce(t, "sink --once", cfg)

	// 1. Tombstones of the listed keys.
	listed := map[string]bool{}
	var list strings.Builder
	for i := 0; i < perPart; i += 7 {
		k := string(key(int32(i%2), i))
		listed[k] = true
		fmt.Fprintln(&list, k)
	}
	path := filepath.Join(t.TempDir(), "erase.txt")
	if err := os.WriteFile(path, []byte(list.String()), 0o600); err != nil {
		t.Fatal(err)
	}
	target := "erased_" + topic
	_, p := srcRunOK(t, "erase", cfg, "--topic-rename", "erased_$0", "--create-topics", "--exclude-keys-file", path)
	erased := 0
	for part := range int32(2) {
		got := b.readKeyed(t, target, part)
		if len(got) != perPart {
			t.Fatalf("%s/%d holds %d records, want %d", target, part, len(got), perPart)
		}
		for i, r := range got {
			k := key(part, i)
			want := value(part, i)
			if listed[string(k)] {
				want = nil
				erased++
			}
			if !bytes.Equal(r.Key, k) || !bytes.Equal(r.Value, want) || (r.Value == nil) != (want == nil) {
				t.Fatalf("%s/%d record %d: key %q value %.40q, want %q %.40q", target, part, i, r.Key, r.Value, k, want)
			}
		}
	}
	if !strings.Contains(p.stdout(), fmt.Sprintf(" erased=%d", erased)) {
		t.Fatalf("the summary does not say erased=%d:\n%s", erased, p.stdout())
	}

	// 2. A key filter at a rate.
	target = "only0_" + topic
	const rate = 100
	_, p = srcRunOK(t, "key regex at a rate", cfg, "--topic-rename", "only0_$0", "--create-topics",
		"--key-regex", "k-0-.*", "--max-records-per-sec", fmt.Sprint(rate))
	got := b.readKeyed(t, target, 0)
	if len(got) != perPart || len(b.readKeyed(t, target, 1)) != 0 {
		t.Fatalf("%s holds %d and %d records, want %d and 0", target, len(got), len(b.readKeyed(t, target, 1)), perPart)
	}
	if took, least := p.ended.Sub(p.started), time.Duration(float64(perPart-rate/10)/rate*float64(time.Second)); took < least {
		t.Fatalf("%d records at %d a second took %v, less than %v", perPart, rate, took, least)
	}
	if !strings.Contains(p.stdout(), fmt.Sprintf(" filtered=%d", perPart)) {
		t.Fatalf("the summary does not say filtered=%d:\n%s", perPart, p.stdout())
	}

	// 3. Dropping the listed keys.
	target = "dropped_" + topic
	srcRunOK(t, "drop", cfg, "--topic-rename", "dropped_$0", "--create-topics", "--exclude-keys-file", path, "--exclude-action", "drop")
	for part := range int32(2) {
		var want [][]byte
		for i := range perPart {
			if !listed[string(key(part, i))] {
				want = append(want, value(part, i))
			}
		}
		var vals [][]byte
		for _, r := range b.readKeyed(t, target, part) {
			vals = append(vals, r.Value)
		}
		srcSameValues(t, fmt.Sprintf("%s/%d", target, part), vals, want)
	}
}

// readKeyed reads every record of topic/p, keys and values.
func (b *bed) readKeyed(t *testing.T, topic string, p int32) []*kgo.Record {
	t.Helper()
	end := b.srcEnds(t, topic)[p]
	if end == 0 {
		return nil
	}
	cl, err := b.k.NewClient(kgo.ConsumePartitions(map[string]map[int32]kgo.Offset{topic: {p: kgo.NewOffset().AtStart()}}))
	if err != nil {
		t.Fatal(err)
	}
	defer cl.Close()
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	var out []*kgo.Record
	for int64(len(out)) < end {
		fs := cl.PollFetches(ctx)
		if err := fs.Err0(); err != nil {
			t.Fatalf("read %s/%d: %v", topic, p, err)
		}
		out = append(out, fs.Records()...)
	}
	return out
}
