package index

import (
	"bytes"
	"context"
	"errors"
	"reflect"
	"strings"
	"testing"

	"github.com/kafkas3/kafkas3/s3store"
)

func topicDesc() *Topic {
	return &Topic{V: 1, Topic: "orders", TimeMs: 1_700_000_000_123, Partitions: 3, ReplicationFactor: 2,
		Configs: map[string]string{"retention.ms": "86400000", "cleanup.policy": "compact", "max.message.bytes": "2000000"}}
}

// TestTopicEncodeDeterministic: fixed field order, sorted configs, one
// line; the same description gives the same bytes and decodes back.
func TestTopicEncodeDeterministic(t *testing.T) {
	d := topicDesc()
	b, err := EncodeTopic(d)
	if err != nil {
		t.Fatal(err)
	}
	want := `{"v":1,"topic":"orders","time_ms":1700000000123,"partitions":3,"replication_factor":2,` +
		`"configs":{"cleanup.policy":"compact","max.message.bytes":"2000000","retention.ms":"86400000"}}` + "\n"
	if string(b) != want {
		t.Fatalf("encoded\n%s\nwant\n%s", b, want)
	}
	for range 20 {
		if b2, _ := EncodeTopic(topicDesc()); !bytes.Equal(b, b2) {
			t.Fatal("two encodings of one description differ")
		}
	}
	key := TopicKey(DefaultPrefix, "orders", d.TimeMs, WriterOf("connect-x"))
	got, err := DecodeTopic(key, bytes.NewReader(b))
	if err != nil || !reflect.DeepEqual(got, d) {
		t.Fatalf("decoded %+v, %v; want %+v", got, err, d)
	}
	empty := &Topic{V: 1, Topic: "t", Partitions: 1, ReplicationFactor: 1, Configs: map[string]string{}}
	if b, _ := EncodeTopic(empty); !strings.Contains(string(b), `"configs":{}`) {
		t.Fatalf("a topic without configs encodes as %s, want configs {}", b)
	}
}

func TestTopicKeyRoundTrip(t *testing.T) {
	w := WriterOf("connect-x")
	key := TopicKey("backups/ix/", "a.b-c_d", 42, w)
	if key != "backups/ix/topics/a.b-c_d/00000000000000000042-"+w+".json" {
		t.Fatalf("key %s", key)
	}
	k, err := ParseTopicKey(key)
	if err != nil || k != (TopicKeyName{Topic: "a.b-c_d", TimeMs: 42, Writer: w}) {
		t.Fatalf("parsed %+v, %v", k, err)
	}
	if k, err := ParseTopicKey(TopicKey("_kafkas3/", "t", 7, "")); err != nil || k.Writer != "" || k.TimeMs != 7 {
		t.Fatalf("key without writer: %+v, %v", k, err)
	}
	for _, bad := range []string{
		"_kafkas3/topics/t/00000000000000000042-" + w + ".jsonl",
		"_kafkas3/topics/t/42-" + w + ".json",
		"_kafkas3/topics/t/0000000000000000004x-" + w + ".json",
		"_kafkas3/topics/t/00000000000000000042-XYZ.json",
		"_kafkas3/index/t/00000000000000000042.json",
		"_kafkas3/topics/bad topic/00000000000000000042.json",
		"_kafkas3/topics/t/99999999999999999999.json",
	} {
		if _, err := ParseTopicKey(bad); !errors.Is(err, ErrMalformed) {
			t.Errorf("ParseTopicKey(%q) = %v, want ErrMalformed", bad, err)
		}
	}
}

func TestTopicDecodeRejects(t *testing.T) {
	key := TopicKey(DefaultPrefix, "orders", 1_700_000_000_123, "")
	good, _ := EncodeTopic(topicDesc())
	for name, data := range map[string]string{
		"no newline":    strings.TrimSuffix(string(good), "\n"),
		"unknown field": strings.Replace(string(good), `"v":1`, `"v":1,"x":2`, 1),
		"version":       strings.Replace(string(good), `"v":1`, `"v":2`, 1),
		"other topic":   strings.Replace(string(good), `"topic":"orders"`, `"topic":"other"`, 1),
		"other time":    strings.Replace(string(good), `1700000000123`, `1700000000124`, 1),
		"no partitions": strings.Replace(string(good), `"partitions":3`, `"partitions":0`, 1),
		"no rf":         strings.Replace(string(good), `"replication_factor":2`, `"replication_factor":0`, 1),
		"no configs":    strings.Replace(string(good), `,"configs":{"cleanup.policy":"compact","max.message.bytes":"2000000","retention.ms":"86400000"}`, ``, 1),
		"empty key":     strings.Replace(string(good), `"cleanup.policy"`, `""`, 1),
		"trailing data": strings.TrimSuffix(string(good), "\n") + "{}\n",
		"empty":         "",
	} {
		if _, err := DecodeTopic(key, strings.NewReader(data)); !errors.Is(err, ErrMalformed) {
			t.Errorf("%s: DecodeTopic = %v, want ErrMalformed", name, err)
		}
	}
}

// TestLatestTopic: the description with the highest time wins, whatever
// the writer; none gives nil; a bad object fails naming its key.
func TestLatestTopic(t *testing.T) {
	ctx := context.Background()
	st := s3store.NewMemory()
	if d, err := LatestTopic(ctx, st, DefaultPrefix, "orders"); d != nil || err != nil {
		t.Fatalf("empty store: %+v, %v", d, err)
	}
	for i, ms := range []int64{100, 300, 200} {
		d := topicDesc()
		d.TimeMs = ms
		d.Partitions = int32(i + 1)
		b, _ := EncodeTopic(d)
		put(t, st, TopicKey(DefaultPrefix, "orders", ms, WriterOf(string(rune('a'+i)))), b)
	}
	// Another topic whose name extends this one is not read.
	other := topicDesc()
	other.Topic, other.TimeMs = "orders2", 900
	b, _ := EncodeTopic(other)
	put(t, st, TopicKey(DefaultPrefix, "orders2", 900, ""), b)
	d, err := LatestTopic(ctx, st, DefaultPrefix, "orders")
	if err != nil || d == nil || d.TimeMs != 300 || d.Partitions != 2 {
		t.Fatalf("latest %+v, %v; want the one at 300 (2 partitions)", d, err)
	}
	// At a time: the latest at or before it, else the earliest.
	for at, want := range map[int64]int64{250: 200, 300: 300, 1000: 300, 50: 100, 100: 100} {
		if d, err := TopicAt(ctx, st, DefaultPrefix, "orders", at); err != nil || d == nil || d.TimeMs != want {
			t.Errorf("TopicAt %d: %+v, %v; want the one at %d", at, d, err, want)
		}
	}
	bad := TopicKey(DefaultPrefix, "orders", 400, "")
	put(t, st, bad, []byte("{}\n"))
	if _, err := LatestTopic(ctx, st, DefaultPrefix, "orders"); !errors.Is(err, ErrMalformed) || !strings.Contains(err.Error(), bad) {
		t.Fatalf("a bad latest description: %v, want ErrMalformed naming %s", err, bad)
	}
}

func TestTopicSame(t *testing.T) {
	a, b := topicDesc(), topicDesc()
	b.TimeMs++
	if !a.Same(b) {
		t.Fatal("descriptions differing only in time are not the same")
	}
	b.Configs["retention.ms"] = "1"
	if a.Same(b) {
		t.Fatal("a changed config is the same")
	}
	b = topicDesc()
	b.Partitions++
	if a.Same(b) {
		t.Fatal("a changed partition count is the same")
	}
}

func FuzzDecodeTopic(f *testing.F) {
	good, _ := EncodeTopic(topicDesc())
	f.Add(good)
	f.Add([]byte("{}\n"))
	f.Add([]byte(`{"v":1,"configs":null}` + "\n"))
	key := TopicKey(DefaultPrefix, "orders", 1_700_000_000_123, "")
	f.Fuzz(func(t *testing.T, data []byte) {
		d, err := DecodeTopic(key, bytes.NewReader(data))
		if err != nil {
			if !errors.Is(err, ErrMalformed) {
				t.Fatalf("error %v does not wrap ErrMalformed", err)
			}
			return
		}
		b, err := EncodeTopic(d)
		if err != nil {
			t.Fatalf("a decoded description does not encode: %v", err)
		}
		d2, err := DecodeTopic(key, bytes.NewReader(b))
		if err != nil || !reflect.DeepEqual(d, d2) {
			t.Fatalf("round trip: %v", err)
		}
	})
}
