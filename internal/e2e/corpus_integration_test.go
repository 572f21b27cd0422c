//go:build integration

package e2e

import (
	"bytes"
	"context"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/twmb/franz-go/pkg/kadm"
	"github.com/twmb/franz-go/pkg/kgo"
)

// This file holds the hostile corpus of the round-trip tests: records
// that break naive archivers (nil and empty keys and values, tombstones,
// every byte value, CR/LF and quotes, unicode, 300 KB values, duplicate,
// nil-valued and empty headers on some records and none on others, old
// explicit timestamps), a franz-go dump of a topic, and a comparison of
// every record property.

// corpusBase is the first record's timestamp: old on purpose, so a target
// with a short retention.ms would delete the restore (targets here are
// created with retention.ms=-1).
var corpusBase = time.Date(2020, 1, 1, 0, 0, 0, 0, time.UTC)

// corpusKey is the key of record i of partition p.
func corpusKey(p int32, i int) []byte {
	switch i % 11 {
	case 0:
		return nil
	case 1:
		return []byte{}
	case 2:
		return fmt.Appendf(nil, "ключ-ü-✓-%d-%d", p, i)
	case 3:
		return fmt.Appendf(nil, "bin\x00\xff\x01-%d-%d", p, i)
	}
	return fmt.Appendf(nil, "k-%d-%d", p, i)
}

// corpusValue is the value of record i of partition p (nil: a tombstone).
func corpusValue(p int32, i int) []byte {
	if i == 100 || i == 401 {
		unit := fmt.Appendf(nil, "big-%d-%d|", p, i)
		return bytes.Repeat(unit, 300_000/len(unit)+1)[:300_000]
	}
	switch i % 17 {
	case 0:
		return nil
	case 1:
		return []byte{}
	case 2:
		all := make([]byte, 256)
		for b := range all {
			all[b] = byte(b)
		}
		return all
	case 3:
		return fmt.Appendf(nil, "line1-%d\r\nline2\n\"quoted\"\t\\ %d", p, i)
	case 4:
		return fmt.Appendf(nil, `"a JSON string %d"`, i)
	case 5:
		return fmt.Appendf(nil, `{"json":true,"p":%d,"i":%d}`, p, i)
	case 6:
		return fmt.Appendf(nil, "ünïcödé ✓ %d", i)
	}
	return fmt.Appendf(nil, "v-%d-%d", p, i)
}

// corpusHeaders are the headers of record i of partition p.
func corpusHeaders(p int32, i int) []kgo.RecordHeader {
	switch i % 5 {
	case 0:
		return nil
	case 1:
		return []kgo.RecordHeader{{Key: "dup", Value: []byte("1")}, {Key: "dup", Value: []byte("2")}, {Key: "dup", Value: []byte("1")}}
	case 2:
		return []kgo.RecordHeader{{Key: "nil", Value: nil}, {Key: "empty", Value: []byte{}}}
	case 3:
		return []kgo.RecordHeader{{Key: "ü-✓", Value: []byte("wert ✓")}, {Key: "", Value: fmt.Appendf(nil, "p%d", p)}}
	}
	return []kgo.RecordHeader{{Key: "one", Value: fmt.Appendf(nil, "%d", i)}}
}

// corpus returns perPart records for each of the topic's partitions.
func corpus(topic string, partitions int32, perPart int) map[int32][]*kgo.Record {
	out := map[int32][]*kgo.Record{}
	for p := range partitions {
		for i := range perPart {
			out[p] = append(out[p], &kgo.Record{
				Topic: topic, Partition: p,
				Key: corpusKey(p, i), Value: corpusValue(p, i), Headers: corpusHeaders(p, i),
				Timestamp: corpusBase.Add(time.Duration(p)*time.Hour + time.Duration(i)*time.Second + time.Duration(i%7)*time.Millisecond),
			})
		}
	}
	return out
}

// createTopicWith creates topic with the given configs (name=value).
func (b *bed) createTopicWith(t *testing.T, topic string, partitions int32, configs map[string]string) {
	t.Helper()
	adm := kadm.NewClient(b.k.Client(t))
	cfg := map[string]*string{}
	for k, v := range configs {
		cfg[k] = &v
	}
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	resp, err := adm.CreateTopic(ctx, partitions, 1, cfg, topic)
	if err == nil {
		err = resp.Err
	}
	if err != nil {
		t.Fatalf("create topic %s: %v", topic, err)
	}
}

// produceCorpus produces recs in partition order, each partition in its
// order, with a producer that allows large records.
func (b *bed) produceCorpus(t *testing.T, recs map[int32][]*kgo.Record) {
	t.Helper()
	cl := b.k.Client(t, kgo.RecordPartitioner(kgo.ManualPartitioner()), kgo.ProducerBatchMaxBytes(8<<20), kgo.MaxBufferedBytes(64<<20))
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	var all []*kgo.Record
	for p := int32(0); int(p) < len(recs); p++ {
		all = append(all, recs[p]...)
	}
	if err := cl.ProduceSync(ctx, all...).FirstErr(); err != nil {
		t.Fatalf("produce corpus: %v", err)
	}
}

// dumpTopic reads every record of topic, up to its end offsets, with a
// franz-go consumer, by partition.
func (b *bed) dumpTopic(t *testing.T, topic string) map[int32][]*kgo.Record {
	t.Helper()
	ends := b.srcEnds(t, topic)
	want := map[string]map[int32]kgo.Offset{topic: {}}
	left := 0
	for p, e := range ends {
		if e > 0 {
			want[topic][p] = kgo.NewOffset().AtStart()
			left++
		}
	}
	out := map[int32][]*kgo.Record{}
	if left == 0 {
		return out
	}
	cl := b.k.Client(t, kgo.ConsumePartitions(want), kgo.FetchMaxBytes(64<<20), kgo.FetchMaxPartitionBytes(16<<20))
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	done := map[int32]bool{}
	for len(done) < left {
		fs := cl.PollFetches(ctx)
		if ctx.Err() != nil {
			t.Fatalf("dump %s: %v (ends %v, have %d partitions done)", topic, ctx.Err(), ends, len(done))
		}
		fs.EachError(func(_ string, p int32, err error) { t.Fatalf("dump %s/%d: %v", topic, p, err) })
		fs.EachRecord(func(r *kgo.Record) {
			out[r.Partition] = append(out[r.Partition], r)
			if r.Offset+1 >= ends[r.Partition] {
				done[r.Partition] = true
			}
		})
	}
	return out
}

// compareOpts says which properties a round trip must keep.
type compareOpts struct {
	// timestamps: the restored timestamp and its type equal the source's;
	// otherwise they must be the restore's produce time (at or after
	// since), never the original.
	timestamps bool
	since      time.Time
	// valueLost, when set, names the records whose value the layout
	// cannot carry exactly (documented losses); they must differ, all
	// others must be equal.
	valueLost func(v []byte) bool
}

// compareTopics compares every record of every partition: count, order,
// key (nil vs empty), value (nil vs empty), headers (order, duplicates,
// nil vs empty), and timestamps as opts says. It reports at most 20
// differences.
func compareTopics(t *testing.T, what string, want, got map[int32][]*kgo.Record, opts compareOpts) {
	t.Helper()
	bad := 0
	report := func(format string, a ...any) {
		bad++
		if bad <= 20 {
			t.Errorf(what+": "+format, a...)
		}
	}
	for p, ws := range want {
		gs := got[p]
		if len(gs) != len(ws) {
			report("partition %d: %d records, want %d", p, len(gs), len(ws))
		}
		for i := range min(len(gs), len(ws)) {
			w, g := ws[i], gs[i]
			if !sameBytes(g.Key, w.Key) {
				report("partition %d record %d: key %s, want %s", p, i, showBytes(g.Key), showBytes(w.Key))
			}
			lost := opts.valueLost != nil && w.Value != nil && opts.valueLost(w.Value)
			if same := sameBytes(g.Value, w.Value); same == lost {
				report("partition %d record %d (key %s): value %s, want %s (documented loss: %v)", p, i, showBytes(w.Key), showBytes(g.Value), showBytes(w.Value), lost)
			}
			if gh, wh := showRecordHeaders(g.Headers), showRecordHeaders(w.Headers); gh != wh {
				report("partition %d record %d: headers %s, want %s", p, i, gh, wh)
			}
			switch {
			case opts.timestamps && (!g.Timestamp.Equal(w.Timestamp) || g.Attrs.TimestampType() != w.Attrs.TimestampType()):
				report("partition %d record %d: timestamp %v (type %d), want %v (type %d)", p, i, g.Timestamp.UTC(), g.Attrs.TimestampType(), w.Timestamp.UTC(), w.Attrs.TimestampType())
			case !opts.timestamps && (g.Timestamp.Equal(w.Timestamp) || g.Timestamp.Before(opts.since.Add(-time.Second))):
				report("partition %d record %d: timestamp %v, want the restore time (after %v), not the original %v", p, i, g.Timestamp.UTC(), opts.since.UTC(), w.Timestamp.UTC())
			}
		}
	}
	for p := range got {
		if _, ok := want[p]; !ok {
			report("partition %d: %d records, want none", p, len(got[p]))
		}
	}
	if bad > 20 {
		t.Errorf("%s: %d differences in all", what, bad)
	}
}

// sameBytes tells equal bytes with the same nil-ness.
func sameBytes(a, b []byte) bool { return bytes.Equal(a, b) && (a == nil) == (b == nil) }

// showBytes prints b short, telling nil from empty.
func showBytes(b []byte) string {
	switch {
	case b == nil:
		return "<nil>"
	case len(b) > 40:
		return fmt.Sprintf("%q...(%d bytes)", b[:40], len(b))
	}
	return fmt.Sprintf("%q", b)
}

// showRecordHeaders prints headers so that nil and empty values differ.
func showRecordHeaders(hs []kgo.RecordHeader) string {
	var s []string
	for _, h := range hs {
		s = append(s, fmt.Sprintf("%q=%s", h.Key, showBytes(h.Value)))
	}
	return "[" + strings.Join(s, " ") + "]"
}

// corpusCount is the number of records of a corpus.
func corpusCount(recs map[int32][]*kgo.Record) int {
	n := 0
	for _, rs := range recs {
		n += len(rs)
	}
	return n
}
