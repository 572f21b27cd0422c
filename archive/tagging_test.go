package archive

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"maps"
	"strings"
	"testing"

	"github.com/kafkas3/kafkas3/format"
	"github.com/kafkas3/kafkas3/s3store"
	"github.com/twmb/franz-go/pkg/kgo"
)

// refusingTagger is a memory store whose Tag always fails as the S3 store
// fails on a 403.
type refusingTagger struct{ *s3store.Memory }

func (refusingTagger) Tag(context.Context, string, map[string]string) error {
	return fmt.Errorf("%w: not allowed to s3:PutObjectTagging", s3store.ErrAccessDenied)
}

// tagRecords produces value and tombstone records to topic tg: value
// files at offsets 0 and 3-4, tombstone keys files at 1-2 and 5.
func tagRecords(t *testing.T) []string {
	t.Helper()
	brokers := newCluster(t, 1, "tg")
	v := func(s string) []byte { return []byte(s) }
	produceRecs(t, brokers,
		&kgo.Record{Topic: "tg", Key: v("a"), Value: v("1")},
		&kgo.Record{Topic: "tg", Key: v("b"), Value: nil},
		&kgo.Record{Topic: "tg", Key: v("c"), Value: nil},
		&kgo.Record{Topic: "tg", Key: v("d"), Value: v("4")},
		&kgo.Record{Topic: "tg", Key: v("e"), Value: v("5")},
		&kgo.Record{Topic: "tg", Key: v("f"), Value: nil},
	)
	return brokers
}

func tagConfig(brokers []string) Config {
	cfg := testConfig(brokers, "tg")
	cfg.FlushSize = 10
	cfg.NullValues = NullWrite
	cfg.KeysFormat = &PartFormat{Format: format.NewJSON(), Kind: format.KindJSON}
	cfg.Tagging = TaggingConfig{Enabled: true, Extra: map[string]string{"team": "data"}}
	return cfg
}

// TestSinkTagsObjects: with s3.object.tagging each value object is tagged
// with its first and last offset and record count (and the extra pairs),
// as Confluent's connector tags it; a tombstone file's .keys object, its
// only object, is tagged too; the .keys objects of value files are not.
func TestSinkTagsObjects(t *testing.T) {
	brokers := tagRecords(t)
	store := s3store.NewMemory()
	runSink(t, tagConfig(brokers), store)
	tags := func(start, end, count int) map[string]string {
		return map[string]string{"startOffset": fmt.Sprint(start), "endOffset": fmt.Sprint(end), "recordCount": fmt.Sprint(count), "team": "data"}
	}
	want := map[string]map[string]string{
		"topics/tg/partition=0/tg+0+0000000000.json":      tags(0, 0, 1),
		"topics/tg/partition=0/tg+0+0000000000.keys.json": nil,
		"topics/tg/tombstone/tg+0+0000000001.keys.json":   tags(1, 2, 2),
		"topics/tg/partition=0/tg+0+0000000003.json":      tags(3, 4, 2),
		"topics/tg/partition=0/tg+0+0000000003.keys.json": nil,
		"topics/tg/tombstone/tg+0+0000000005.keys.json":   tags(5, 5, 1),
	}
	got := snapshot(t, store)
	if len(got) != len(want) {
		t.Fatalf("objects %v", keysOf(got))
	}
	for key, w := range want {
		if g := store.Tags(key); !maps.Equal(g, w) {
			t.Errorf("%s: tags %v, want %v", key, g, w)
		}
	}
}

// TestSinkTaggingErrors: a tag request that fails is logged and ignored
// by default (the objects are complete, the offsets committed); with
// FailOnError the run fails naming the object and commits nothing (a
// refused tag request is access denied, which the sink does not retry).
func TestSinkTaggingErrors(t *testing.T) {
	brokers := tagRecords(t)
	var logs strings.Builder
	cfg := tagConfig(brokers)
	s, err := New(cfg, refusingTagger{s3store.NewMemory()}, slog.New(slog.NewTextHandler(&logs, nil)))
	if err != nil {
		t.Fatal(err)
	}
	if _, err := s.Run(t.Context()); err != nil {
		t.Fatalf("ignore: %v", err)
	}
	if !strings.Contains(logs.String(), "not tagged") || !strings.Contains(logs.String(), "tg+0+0000000003.json") {
		t.Errorf("no warning naming the untagged object:\n%s", logs.String())
	}
	if c := committed(t, brokers, "connect-test", "tg"); c != 6 {
		t.Errorf("ignore: committed %d, want 6", c)
	}

	cfg.GroupID = "fail-group"
	cfg.Tagging.FailOnError = true
	s, err = New(cfg, refusingTagger{s3store.NewMemory()}, nil)
	if err != nil {
		t.Fatal(err)
	}
	_, err = s.Run(t.Context())
	var se *StoreError
	if !errors.As(err, &se) || !strings.Contains(err.Error(), "tg+0+0000000000.json") || !strings.Contains(err.Error(), "PutObjectTagging") {
		t.Fatalf("fail: err = %v", err)
	}
	if c := committed(t, brokers, "fail-group", "tg"); c > 0 {
		t.Errorf("fail: committed %d, want nothing", c)
	}
}
