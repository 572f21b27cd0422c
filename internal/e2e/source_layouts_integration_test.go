//go:build integration

package e2e

import (
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/twmb/franz-go/pkg/kgo"
)

// layoutRecords are perPart records per partition with the corpus's keys
// and headers, JSON values with a region (three values, interleaved) and a
// nested tier, and timestamps every 8 s from 2025-12-31T23:00Z across the
// new year, every 50th stamped back at 2025-12-31T23:30Z (late).
func layoutRecords(topic string, partitions int32, perPart int) map[int32][]*kgo.Record {
	base := time.Date(2025, 12, 31, 23, 0, 0, 0, time.UTC)
	out := map[int32][]*kgo.Record{}
	for p := range partitions {
		for i := range perPart {
			ts := base.Add(time.Duration(i) * 8 * time.Second)
			if i%50 == 49 {
				ts = base.Add(30 * time.Minute)
			}
			out[p] = append(out[p], &kgo.Record{
				Topic: topic, Partition: p, Key: corpusKey(p, i), Headers: corpusHeaders(p, i), Timestamp: ts,
				Value: fmt.Appendf(nil, `{"region":%q,"meta":{"tier":%d},"p":%d,"i":%d}`, []string{"eu", "us", "ap"}[i%3], i%2, p, i),
			})
		}
	}
	return out
}

// TestIntegrationSourceLayouts archives records into versitygw with the
// Field partitioner (two fields, one nested; Confluent's layout with
// .keys and .headers objects) and the Hourly one (Record timestamps across
// the new year with late records; envelopes), and restores them with
// kafkas3 source: the dry run shows every partition complete and in
// offset order across its folders, and every record comes back in its
// partition and place with its key, value and headers (and, from
// envelopes, its timestamp). Without the archive index, the field
// archive's order is unknown and it is refused, and --allow-unknown-order
// restores every record.
func TestIntegrationSourceLayouts(t *testing.T) {
	b := newBed(t)
	const parts, perPart = 2, 600
	topic := srcUnique("e2e-layouts")
	b.k.CreateTopic(t, topic, parts)
	want := layoutRecords(topic, parts, perPart)
	b.produceCorpus(t, want)
	field := []string{"flush.size", "250", "partitioner.class", "io.confluent.connect.storage.partitioner.FieldPartitioner",
		"partition.field.name", "region,meta.tier", "store.kafka.keys", "true", "store.kafka.headers", "true",
		"keys.format.class", "json", "headers.format.class", "json"}

	restore := func(t *testing.T, name string, c conf, opts compareOpts) {
		t.Helper()
		cfg := c.write(t)
		if sum, _ := runOnce(t, "sink --once", cfg); sum.records != int64(parts*perPart) {
			t.Fatalf("sink summary %s", sum.line)
		}
		target := "copy_" + topic + "_" + name
		dry, code := srcRun(t, "source --dry-run", cfg, 3*time.Minute, "--topics", topic, "--topic-rename", target, "--dry-run")
		if out := dry.stdout(); code != 0 || strings.Count(out, "yes: archive index") != parts || !strings.Contains(out, "by offset, ") || strings.Contains(out, "UNKNOWN") {
			t.Fatalf("dry run: exit %d\n%s", code, dry.logs())
		}
		b.createTopicWith(t, target, parts, map[string]string{"retention.ms": "-1"})
		opts.since = time.Now()
		sum, p := srcRunOK(t, "source", cfg, "--topics", topic, "--topic-rename", target)
		if sum.records != int64(parts*perPart) || sum.duplicates != 0 || sum.gaps != 0 {
			t.Fatalf("source summary %s\n%s", sum.line, p.logs())
		}
		compareTopics(t, name, want, b.dumpTopic(t, target), opts)
	}

	t.Run("field, keys and headers objects", func(t *testing.T) {
		c := b.sinkConf("e2e-layouts-field-"+topic, topic, b.s.CreateBucket(t)).with(field...)
		restore(t, "field", c, compareOpts{})
	})
	t.Run("hourly across the new year, envelope", func(t *testing.T) {
		c := b.sinkConf("e2e-layouts-hourly-"+topic, topic, b.s.CreateBucket(t)).with("flush.size", "250",
			"partitioner.class", "io.confluent.connect.storage.partitioner.HourlyPartitioner", "locale", "en-US",
			"timezone", "UTC", "timestamp.extractor", "Record", "store.envelope", "true")
		restore(t, "hourly", c, compareOpts{timestamps: true})
	})
	t.Run("field without the index", func(t *testing.T) {
		c := b.sinkConf("e2e-layouts-noindex-"+topic, topic, b.s.CreateBucket(t)).with(append(field, "kafkas3.index.enabled", "false")...)
		cfg := c.write(t)
		runOnce(t, "sink --once", cfg)
		target := "copy_" + topic + "_noindex"
		b.createTopicWith(t, target, parts, map[string]string{"retention.ms": "-1"})
		p, code := srcRun(t, "source", cfg, 3*time.Minute, "--topics", topic, "--topic-rename", target)
		if code != 1 || !strings.Contains(p.stderr(), "--allow-unknown-order") || srcSum(b.srcEnds(t, target)) != 0 {
			t.Fatalf("source without the index: exit %d\n%s", code, p.logs())
		}
		sum, p := srcRunOK(t, "source", cfg, "--topics", topic, "--topic-rename", target, "--allow-unknown-order")
		if sum.records != int64(parts*perPart) || !strings.Contains(sum.line, " unknown_order=2") ||
			!strings.Contains(p.stderr(), "WARNING: the record order of 2 partitions is unknown") {
			t.Fatalf("--allow-unknown-order: %s\n%s", sum.line, p.logs())
		}
		got := b.dumpTopic(t, target)
		for part, ws := range want {
			seen := map[string]int{}
			for _, r := range got[part] {
				seen[string(r.Value)]++
			}
			for _, w := range ws {
				if seen[string(w.Value)] != 1 {
					t.Fatalf("partition %d: record %s restored %d times", part, w.Value, seen[string(w.Value)])
				}
			}
		}
	})
}
