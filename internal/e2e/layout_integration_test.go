//go:build integration

package e2e

import (
	"encoding/json"
	"strings"
	"testing"
	"time"
)

// TestIntegrationConfluentLayoutRoundTrip archives the hostile corpus in
// Confluent's layout (JSON values, store.kafka.keys and
// store.kafka.headers in Avro, behavior.on.null.values=write) into
// versitygw and restores it with kafkas3 source: every record comes back
// in its partition and place with its key (nil keys included), its value
// (tombstones as nil) and its headers (none where it had none). What the
// layout cannot carry is named and checked: values that are themselves
// JSON string literals come back as their content, and timestamps are the
// restore's (the layout holds none).
//
// With the bytes format a value holding the separator would split in two
// on restore; paired with a .keys object the counts disagree, and the
// source refuses the object before producing anything.
func TestIntegrationConfluentLayoutRoundTrip(t *testing.T) {
	b := newBed(t)
	const parts, perPart = 3, 734 // 2,202 records
	topic := srcUnique("e2e-layout")
	b.k.CreateTopic(t, topic, parts)
	want := corpus(topic, parts, perPart)
	b.produceCorpus(t, want)

	t.Run("json+avro keys and headers", func(t *testing.T) {
		bucket := b.s.CreateBucket(t)
		c := b.sinkConf("e2e-layout-json-"+topic, topic, bucket).with(
			"flush.size", "300",
			"store.kafka.keys", "true", "store.kafka.headers", "true",
			"keys.format.class", "avro", "headers.format.class", "avro",
			"behavior.on.null.values", "write")
		cfg := c.write(t)
		sum, _ := runOnce(t, "sink --once", cfg)
		if sum.records != int64(corpusCount(want)) || !strings.Contains(sum.line, " skipped=0") {
			t.Fatalf("sink summary %s, want %d records and skipped=0", sum.line, corpusCount(want))
		}
		target := "copy_" + topic + "_json"
		b.createTopicWith(t, target, parts, map[string]string{"retention.ms": "-1"})
		since := time.Now()
		ssum, _ := srcRunOK(t, "source", cfg, "--topics", topic, "--topic-rename", target)
		if ssum.records != int64(corpusCount(want)) {
			t.Fatalf("source summary %s, want %d records", ssum.line, corpusCount(want))
		}
		got := b.dumpTopic(t, target)
		compareTopics(t, "json layout", want, got, compareOpts{since: since, valueLost: isJSONStringLiteral})
	})

	t.Run("bytes with separators in values is refused", func(t *testing.T) {
		bucket := b.s.CreateBucket(t)
		c := b.sinkConf("e2e-layout-bytes-"+topic, topic, bucket).with(
			"flush.size", "300", "format.class", "bytes",
			"store.kafka.keys", "true", "keys.format.class", "json",
			"behavior.on.null.values", "ignore")
		cfg := c.write(t)
		runOnce(t, "sink --once", cfg)
		target := "copy_" + topic + "_bytes"
		b.createTopicWith(t, target, parts, map[string]string{"retention.ms": "-1"})
		p, code := srcRun(t, "source", cfg, 3*time.Minute, "--topics", topic, "--topic-rename", target)
		if code != 1 {
			t.Fatalf("source exit %d, want 1\n%s", code, p.logs())
		}
		if errs := p.stderr(); !strings.Contains(errs, ".keys.json") || !strings.Contains(errs, ".bin") {
			t.Errorf("the error does not name the value and keys objects:\n%s", errs)
		}
		if n := srcSum(b.srcEnds(t, target)); n != 0 {
			t.Fatalf("%d records were produced before the refusal, want 0", n)
		}
	})
}

// isJSONStringLiteral tells the values the JSON layout restores as their
// content: values that are themselves one JSON string.
func isJSONStringLiteral(v []byte) bool {
	s := strings.TrimSpace(string(v))
	return strings.HasPrefix(s, `"`) && json.Valid(v)
}
