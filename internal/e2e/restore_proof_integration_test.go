//go:build integration

package e2e

import (
	"bytes"
	"context"
	"fmt"
	"math/rand/v2"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/twmb/avro"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/s3"
	"github.com/twmb/franz-go/pkg/kadm"
	"github.com/twmb/franz-go/pkg/kgo"

	"github.com/kafkas3/kafkas3/convert"
	"github.com/kafkas3/kafkas3/format"
	"github.com/kafkas3/kafkas3/internal/testbed"
)

// rpHeaders are the headers of record i: none on some records, duplicate
// keys, a nil value and an empty one on others.
func rpHeaders(p int32, i int) []kgo.RecordHeader {
	switch i % 4 {
	case 0:
		return nil
	case 1:
		return []kgo.RecordHeader{{Key: "i", Value: fmt.Appendf(nil, "%d", i)}}
	case 2:
		return []kgo.RecordHeader{{Key: "d", Value: []byte("1")}, {Key: "d", Value: []byte("2")}, {Key: "e", Value: []byte{}}}
	default:
		return []kgo.RecordHeader{{Key: "p", Value: fmt.Appendf(nil, "%d", p)}, {Key: "n", Value: nil}}
	}
}

// rpProduce writes n records with key(p,i), value(p,i) and rpHeaders to
// each partition of topic.
func (b *bed) rpProduce(t *testing.T, topic string, parts int32, n int, val func(int32, int) []byte) {
	t.Helper()
	cl := b.k.Client(t, kgo.RecordPartitioner(kgo.ManualPartitioner()), kgo.ProducerLinger(5*time.Millisecond),
		kgo.MaxBufferedRecords(50_000), kgo.ProducerBatchMaxBytes(16<<20))
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	errs := make(chan error, 1)
	for i := range n {
		for p := range parts {
			cl.Produce(ctx, &kgo.Record{Topic: topic, Partition: p, Key: key(p, i), Value: val(p, i), Headers: rpHeaders(p, i)},
				func(_ *kgo.Record, err error) {
					if err != nil {
						select {
						case errs <- err:
						default:
						}
					}
				})
		}
	}
	if err := cl.Flush(ctx); err != nil {
		t.Fatal(err)
	}
	select {
	case err := <-errs:
		t.Fatal(err)
	default:
	}
}

// rpDump reads every record of topic with franz-go, by partition, in
// offset order.
func (b *bed) rpDump(t *testing.T, topic string) map[int32][]*kgo.Record {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	ends := b.srcEnds(t, topic)
	var total int64
	offs := map[int32]kgo.Offset{}
	for p, e := range ends {
		total += e
		offs[p] = kgo.NewOffset().AtStart()
	}
	out := map[int32][]*kgo.Record{}
	if total == 0 {
		return out
	}
	cl := b.k.Client(t, kgo.ConsumePartitions(map[string]map[int32]kgo.Offset{topic: offs}), kgo.FetchMaxBytes(64<<20))
	var got int64
	for got < total {
		fs := cl.PollFetches(ctx)
		if ctx.Err() != nil {
			t.Fatalf("dump %s: %d of %d records", topic, got, total)
		}
		fs.EachError(func(_ string, p int32, err error) { t.Fatalf("dump %s/%d: %v", topic, p, err) })
		fs.EachRecord(func(r *kgo.Record) {
			out[r.Partition] = append(out[r.Partition], r)
			got++
		})
	}
	return out
}

// rpCompare fails unless got holds exactly the records of want for each
// partition, in order: value, and unless valuesOnly key and headers (order,
// duplicates, nil versus empty values), skipping the source offsets in
// skip.
func rpCompare(t *testing.T, what string, got, want map[int32][]*kgo.Record, skip func(p int32, off int64) bool, valuesOnly bool) {
	t.Helper()
	n := 0
	for p, ws := range want {
		var keep []*kgo.Record
		for _, w := range ws {
			if skip == nil || !skip(p, w.Offset) {
				keep = append(keep, w)
			}
		}
		gs := got[p]
		if len(gs) != len(keep) {
			t.Fatalf("%s: partition %d holds %d records, want %d", what, p, len(gs), len(keep))
		}
		for i, w := range keep {
			g := gs[i]
			if valuesOnly {
				g, w = &kgo.Record{Value: g.Value}, &kgo.Record{Value: w.Value, Offset: w.Offset}
			}
			if !bytes.Equal(g.Key, w.Key) || !bytes.Equal(g.Value, w.Value) || len(g.Headers) != len(w.Headers) {
				t.Fatalf("%s: partition %d record %d (source offset %d): key %q value %.60q %d headers, want key %q value %.60q %d headers",
					what, p, i, w.Offset, g.Key, g.Value, len(g.Headers), w.Key, w.Value, len(w.Headers))
			}
			for j, h := range w.Headers {
				gh := g.Headers[j]
				// Confluent's headers objects hold strings: a nil header
				// value comes back nil, an empty one empty.
				if gh.Key != h.Key || !bytes.Equal(gh.Value, h.Value) || (gh.Value == nil) != (h.Value == nil) {
					t.Fatalf("%s: partition %d record %d header %d: %q=%q (nil %v), want %q=%q (nil %v)",
						what, p, i, j, gh.Key, gh.Value, gh.Value == nil, h.Key, h.Value, h.Value == nil)
				}
			}
			n++
		}
	}
	for p := range got {
		if _, ok := want[p]; !ok && len(got[p]) > 0 {
			t.Fatalf("%s: partition %d holds %d records the source does not", what, p, len(got[p]))
		}
	}
	compared := "key, value, headers"
	if valuesOnly {
		compared = "value"
	}
	t.Logf("%s: %d records equal to the source (partition, order, %s)", what, n, compared)
}

// TestIntegrationRestoreCompleteOverlapKills: two sink runs with different
// flush.size (1,500 from offset 0 and 2,000 from offset 1, keys and headers
// stored) archive the same 2 x 15,000 records into one bucket, so the
// objects overlap without sharing a key (a sink refuses to overwrite
// another group's object). The dry run shows each partition's 15,000
// records once and the duplicates, complete. `kafkas3 source` is then killed with SIGKILL at 3
// seeded random points and re-run each time; the target finally holds every
// record once, in order, with its key and headers, and one more run
// produces nothing.
//
// KAFKAS3_E2E_SEED=<n> replays a kill schedule.
func TestIntegrationRestoreCompleteOverlapKills(t *testing.T) {
	b := newBed(t)
	const parts, perPart = 2, 15_000
	topic := srcUnique("rp-overlap")
	var target string // set by the kill attempts below
	b.k.CreateTopic(t, topic, parts)
	b.rpProduce(t, topic, parts, perPart, value)
	bucket := b.s.CreateBucket(t)
	base := b.sinkConf(topic, topic, bucket).with("store.kafka.keys", "true", "store.kafka.headers", "true",
		"keys.format.class", "io.confluent.connect.s3.format.json.JsonFormat", "headers.format.class", "json")
	for _, flush := range []string{"1500", "2000"} {
		if flush == "2000" {
			b.commitGroup(t, "connect-"+topic+"-"+flush, topic, map[int32]int64{0: 1, 1: 1})
		}
		c := base.with("name", topic+"-"+flush, "flush.size", flush).write(t)
		want := int64(parts * perPart)
		if flush == "2000" {
			want -= parts // from offset 1
		}
		if sum, _ := runOnce(t, "sink --once flush.size="+flush, c); sum.records != want {
			t.Fatalf("sink flush.size=%s archived %d records", flush, sum.records)
		}
	}
	cfg := base.write(t)
	source := b.rpDump(t, topic)

	dry, code := srcRun(t, "source --dry-run", cfg, time.Minute, "--topic-rename", "copy_of_$0", "--dry-run")
	out := dry.stdout()
	t.Logf("dry run:\n%s", out)
	// Per partition: 10 objects of 1,500 and 8 of 2,000 (from offset 1):
	// 18 objects, 29,999 archived records, 14,999 of them duplicates.
	for p := range parts {
		// Complete: both sink runs' index objects survive (their keys name
		// the writer's group), so every object has an entry.
		row := fmt.Sprintf("%s/%d  18       15000    0..14999  14999       0     by offset  yes: archive index", topic, p)
		if !strings.Contains(out, row) {
			t.Fatalf("dry run (exit %d) lacks %q", code, row)
		}
	}
	if code != 0 || !strings.Contains(out, "records: 30000 to restore, 29998 duplicates, 0 gaps, 0 damaged objects") {
		t.Fatalf("dry run: exit %d\n%s", code, dry.logs())
	}

	seed, rng := crashSeed(t)
	// The target exists before the first run, so the poll sees the first
	// records within milliseconds: these 30,000 records restore in about
	// half a second, and polling a topic the run had yet to create once
	// let the whole restore land before the poll saw a record. Should the
	// first run still finish before its kill point, the kills are tried
	// again on a new target, at most three times.
	const total = parts * perPart
	var args []string
	for attempt := 1; ; attempt++ {
		prefix := "copy_of_"
		if attempt > 1 {
			prefix = fmt.Sprintf("copy%d_of_", attempt)
		}
		target = prefix + topic
		args = []string{"--topic-rename", prefix + "$0", "--create-topics"}
		if kills := rpKillRuns(t, b, cfg, target, parts, total, rng, args); kills > 0 {
			break
		}
		if attempt == 3 {
			t.Fatalf("no kill hit a running restore, %d times; seed %d", attempt, seed)
		}
		t.Logf("no kill hit a running restore on %s; again on a new target", target)
	}
	sum, _ := srcRunOK(t, "source final run", cfg, args...)
	if sum.records+sum.present != total || sum.duplicates != 29998 || sum.gaps != 0 {
		t.Fatalf("final run: %s; want records+already_present=%d, duplicates=29998, gaps=0", sum.line, total)
	}
	rpCompare(t, target, b.rpDump(t, target), source, nil, false)
	again, _ := srcRunOK(t, "source after completion", cfg, args...)
	if again.records != 0 || again.present != total {
		t.Fatalf("run after completion: %s", again.line)
	}
}

// rpKillRuns creates target, then starts `kafkas3 source` up to 3 times,
// each run SIGKILLed when a random share (5..60 %) of what is left has
// landed on target, or after a random 0..1.5 s (which may fall in the
// plan's read of the archive, before anything is produced). It stops at
// the first run that finishes before its kill point and returns the
// number of kills.
func rpKillRuns(t *testing.T, b *bed, cfg, target string, parts int32, total int64, rng *rand.Rand, args []string) int {
	t.Helper()
	b.k.CreateTopic(t, target, parts)
	adm := kadm.NewClient(b.k.Client(t))
	landed := func() int64 {
		ends, err := srcEndsWith(adm, target)
		if err != nil || len(ends) < int(parts) {
			return 0
		}
		return srcSum(ends)
	}
	var prev int64
	kills := 0
	for k := 1; k <= 3; k++ {
		label := "source run " + strconv.Itoa(k) + " into " + target
		p := srcStart(t, label, cfg, args...)
		threshold := prev + int64(float64(total-prev)*(0.05+0.55*rng.Float64()))
		delay := time.Duration(rng.IntN(1500)) * time.Millisecond
		for !p.exited() && landed() < threshold && time.Since(p.started) < delay {
			time.Sleep(time.Millisecond)
		}
		if p.exited() {
			t.Logf("%s finished before its kill point (threshold %d, delay %v): %s", label, threshold, delay, strings.TrimSpace(p.stdout()))
			break
		}
		p.signal(syscall.SIGKILL)
		<-p.done
		kills++
		time.Sleep(200 * time.Millisecond)
		after := landed()
		if after > total || after < prev {
			t.Fatalf("after kill %d the target holds %d records (before %d, archive %d)", k, after, prev, total)
		}
		t.Logf("kill %d at %v (threshold %d, delay %v): %d records landed (+%d)", k,
			time.Since(p.started).Round(time.Millisecond), threshold, delay, after, after-prev)
		prev = after
	}
	return kills
}

// rpS3 changes objects of a bucket.
type rpS3 struct {
	t      *testing.T
	b      *bed
	bucket string
}

func (s rpS3) get(key string) []byte {
	s.t.Helper()
	objs := s.b.snapshot(s.t, s.bucket)
	o, ok := objs[key]
	if !ok {
		s.t.Fatalf("no object %q in %s", key, s.bucket)
	}
	return o.data
}

func (s rpS3) put(key string, data []byte) {
	s.t.Helper()
	_, err := s.b.s.Client().PutObject(context.Background(), &s3.PutObjectInput{Bucket: aws.String(s.bucket), Key: aws.String(key), Body: bytes.NewReader(data)})
	if err != nil {
		s.t.Fatal(err)
	}
}

func (s rpS3) delete(key string) {
	s.t.Helper()
	if _, err := s.b.s.Client().DeleteObject(context.Background(), &s3.DeleteObjectInput{Bucket: aws.String(s.bucket), Key: aws.String(key)}); err != nil {
		s.t.Fatal(err)
	}
}

// TestIntegrationRestoreDamaged archives 30 records of one partition in
// three objects (flush.size=10) as gzipped JSON, Avro and Parquet, with the
// archive index and without it (kafkas3.index.enabled=false, as Confluent's
// connector writes), then damages the middle object: truncated (.gz,
// .avro, .parquet), one flipped byte (.gz; plain .json, which only the
// index's SHA-256 can catch), deleted. Each time the dry run shows the
// damaged object or the gap and exits 1, the restore exits 1 naming it
// with nothing produced (the target is not even created), and
// --allow-gaps restores offsets 0..9 and 20..29 and reports the gap 10..19
// in its summary and a warning line.
func TestIntegrationRestoreDamaged(t *testing.T) {
	b := newBed(t)
	const perPart, flush = 30, 10
	topic := srcUnique("rp-damaged")
	b.k.CreateTopic(t, topic, 1)
	reg := typedRegistry(t)
	dstReg := typedRegistry(t)
	ser := typedConverter(t, reg.URL())
	parsedSchema, err := avro.Parse(typedSchema)
	if err != nil {
		t.Fatal(err)
	}
	parsed := &format.Schema{Avro: parsedSchema, Text: typedSchema}
	var avroValues [][]byte // as produced: wire format of the source registry
	cl := b.k.Client(t, kgo.RecordPartitioner(kgo.ManualPartitioner()))
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	avroTopic := topic + "-avro"
	b.k.CreateTopic(t, avroTopic, 1)
	for i := range perPart {
		if err := cl.ProduceSync(ctx, &kgo.Record{Topic: topic, Key: key(0, i), Value: value(0, i)}).FirstErr(); err != nil {
			t.Fatal(err)
		}
		v, err := ser.Encode(ctx, avroTopic+"-value", parsed, typedValue(0, i))
		if err != nil {
			t.Fatal(err)
		}
		if err := cl.ProduceSync(ctx, &kgo.Record{Topic: avroTopic, Key: key(0, i), Value: v}).FirstErr(); err != nil {
			t.Fatal(err)
		}
		avroValues = append(avroValues, v)
	}
	jsonSource := b.rpDump(t, topic)

	type damage struct {
		name string
		fn   func(s rpS3, key string)
		// deleted: without an index the dry run shows a gap with no object
		// to name.
		deleted bool
	}
	truncate := damage{name: "truncated", fn: func(s rpS3, key string) { d := s.get(key); s.put(key, d[:len(d)*2/3]) }}
	// One byte changed in place: same size, so only decoding (the gzip
	// CRC) or the index's SHA-256 can tell.
	flipped := damage{name: "flipped byte", fn: func(s rpS3, key string) { d := s.get(key); d[len(d)/2] ^= 0x20; s.put(key, d) }}
	deleted := damage{name: "deleted", fn: func(s rpS3, key string) { s.delete(key) }, deleted: true}
	for _, tc := range []struct {
		name, class, ext, topic string
		extra                   []string
		damages                 []damage
	}{
		{"json.gz", "io.confluent.connect.s3.format.json.JsonFormat", ".json.gz", topic, []string{"s3.compression.type", "gzip"},
			[]damage{truncate, flipped, deleted}},
		// Plain JSON with one flipped byte decodes: only the index's
		// SHA-256 catches it.
		{"json", "io.confluent.connect.s3.format.json.JsonFormat", ".json", topic, nil, []damage{flipped}},
		{"avro", "io.confluent.connect.s3.format.avro.AvroFormat", ".avro", avroTopic,
			[]string{"avro.codec", "deflate", "value.converter", "io.confluent.connect.avro.AvroConverter", "value.converter.schema.registry.url", reg.URL()},
			[]damage{truncate}},
		{"parquet", "io.confluent.connect.s3.format.parquet.ParquetFormat", ".snappy.parquet", avroTopic,
			[]string{"parquet.codec", "snappy", "value.converter", "io.confluent.connect.avro.AvroConverter", "value.converter.schema.registry.url", reg.URL()},
			[]damage{truncate}},
	} {
		for _, d := range tc.damages {
			for _, indexed := range []bool{true, false} {
				if tc.name == "json" && !indexed {
					continue // undetectable without the index: nothing to test
				}
				name := tc.name + " " + d.name + " indexed"
				if !indexed {
					name = tc.name + " " + d.name + " no index"
				}
				t.Run(name, func(t *testing.T) {
					bucket := b.s.CreateBucket(t)
					c := b.sinkConf("rp-"+strings.NewReplacer(" ", "-", ".", "-").Replace(name)+"-"+topic, tc.topic, bucket).with(
						append([]string{"flush.size", strconv.Itoa(flush), "format.class", tc.class, "kafkas3.index.enabled", strconv.FormatBool(indexed)}, tc.extra...)...)
					if sum, _ := runOnce(t, "sink --once", c.write(t)); sum.records != perPart {
						t.Fatalf("sink archived %d records", sum.records)
					}
					middle := fmt.Sprintf("topics/%s/partition=0/%s+0+%010d%s", tc.topic, tc.topic, flush, tc.ext)
					d.fn(rpS3{t, b, bucket}, middle)
					cfg := c.with("value.converter.schema.registry.url", dstReg.URL()).write(t)
					target := "dmg_" + strings.NewReplacer(".", "_", " ", "_").Replace(name) + "_" + tc.topic
					rename := []string{"--topic-rename", target}
					d := d
					if d.deleted && indexed {
						d.deleted = false // the index names the deleted object
					}

					dry, code := srcRun(t, "source --dry-run", cfg, time.Minute, append(rename, "--dry-run")...)
					out := dry.stdout()
					wantLine := fmt.Sprintf("gap: %s/0 offsets 10..19 (object %q, damaged or missing)", tc.topic, middle)
					if d.deleted {
						wantLine = fmt.Sprintf("gap: %s/0 offsets 10..19 (no object holds them)", tc.topic)
					} else if !strings.Contains(out, fmt.Sprintf("damaged: %s/0 object %q", tc.topic, middle)) {
						t.Fatalf("dry run does not name the damaged object:\n%s", dry.logs())
					}
					if code != 1 || !strings.Contains(out, wantLine) {
						t.Fatalf("dry run: exit %d, want 1 and %q\n%s", code, wantLine, dry.logs())
					}
					t.Logf("dry run (exit 1):\n%s", out)

					run, code := srcRun(t, "source", cfg, time.Minute, append(rename, "--create-topics")...)
					named := middle
					if d.deleted {
						named = "offsets 10..19"
					}
					if code != 1 || !strings.Contains(run.stderr(), named) || !strings.Contains(run.stderr(), "nothing was produced") {
						t.Fatalf("restore: exit %d, want 1 naming %q\n%s", code, named, run.logs())
					}
					if n := b.srcTopicPartitions(t, target); n != -1 {
						t.Fatalf("a stopped restore created %s (%d partitions)", target, n)
					}

					sum, p := srcRunOK(t, "source --allow-gaps", cfg, append(rename, "--create-topics", "--allow-gaps")...)
					if sum.records != 20 || sum.gaps != 1 || sum.gapOffsets != 10 ||
						!strings.Contains(p.stderr(), "WARNING: records of the archive were not restored") {
						t.Fatalf("--allow-gaps: %s\n%s", sum.line, p.logs())
					}
					got := b.rpDump(t, target)
					skip := func(_ int32, off int64) bool { return off >= 10 && off < 20 }
					if tc.topic == topic {
						rpCompare(t, target, got, jsonSource, skip, true)
						return
					}
					// Typed values are framed for the second registry: compare
					// what they decode to (Parquet may give map entries in
					// another order than Avro, so the datum bytes can differ).
					if len(got[0]) != 20 {
						t.Fatalf("%s holds %d records, want 20", target, len(got[0]))
					}
					srcDec, dstDec := typedConverter(t, reg.URL()), typedConverter(t, dstReg.URL())
					decode := func(c *convert.AvroConverter, topic string, v []byte) string {
						typed, err := c.Convert(ctx, topic, false, v)
						if err != nil {
							t.Fatal(err)
						}
						native, err := format.AvroNative(typed)
						if err != nil {
							t.Fatal(err)
						}
						return canonJSON(t, native)
					}
					for i, r := range got[0] {
						src := i
						if i >= 10 {
							src = i + 10
						}
						if g, w := decode(dstDec, target, r.Value), decode(srcDec, avroTopic, avroValues[src]); g != w {
							t.Fatalf("record %d: %s, want %s", i, g, w)
						}
					}
					t.Logf("%s: 20 records decode to the produced values of offsets 0..9 and 20..29", target)
				})
			}
		}
	}
}

// TestIntegrationRestoreLargeRecords: three 3 MB records archived from a
// topic with max.message.bytes=8000000 restore into a target with the same
// limit (the producer's batches follow it), and a target with the default
// limit is refused before anything is produced, naming partition and
// offset.
func TestIntegrationRestoreLargeRecords(t *testing.T) {
	b := newBed(t)
	topic := srcUnique("rp-large")
	ctx, cancel := context.WithTimeout(context.Background(), 3*time.Minute)
	defer cancel()
	adm := kadm.NewClient(b.k.Client(t))
	limit := "8000000"
	for _, name := range []string{topic, "copy_of_" + topic} {
		resp, err := adm.CreateTopic(ctx, 1, 1, map[string]*string{"max.message.bytes": &limit}, name)
		if err == nil {
			err = resp.Err
		}
		if err != nil {
			t.Fatal(err)
		}
	}
	b.k.CreateTopic(t, "small_"+topic, 1)
	big := func(_ int32, i int) []byte {
		v := bytes.Repeat([]byte{'a' + byte(i)}, 3<<20)
		return fmt.Appendf(v[:0:0], "%d:%s", i, v)
	}
	cl := b.k.Client(t, kgo.ProducerBatchMaxBytes(8000000))
	for i := range 3 {
		if err := cl.ProduceSync(ctx, &kgo.Record{Topic: topic, Key: key(0, i), Value: big(0, i)}).FirstErr(); err != nil {
			t.Fatal(err)
		}
	}
	source := b.rpDump(t, topic)
	bucket := b.s.CreateBucket(t)
	cfg := b.sinkConf(topic, topic, bucket).with("flush.size", "2", "format.class", "io.confluent.connect.s3.format.bytearray.ByteArrayFormat",
		"store.kafka.keys", "true", "keys.format.class", "io.confluent.connect.s3.format.json.JsonFormat").write(t)
	if sum, _ := runOnce(t, "sink --once", cfg); sum.records != 3 {
		t.Fatalf("sink archived %d records", sum.records)
	}
	run, code := srcRun(t, "source into the default limit", cfg, time.Minute, "--topic-rename", "small_$0")
	if code != 1 || !strings.Contains(run.stderr(), topic+"/0 offset ") || !strings.Contains(run.stderr(), "larger than the target topic accepts") {
		t.Fatalf("restore into a 1 MB target: exit %d\n%s", code, run.logs())
	}
	if n := srcSum(b.srcEnds(t, "small_"+topic)); n != 0 {
		t.Fatalf("small_%s holds %d records", topic, n)
	}
	sum, _ := srcRunOK(t, "source", cfg, "--topic-rename", "copy_of_$0")
	if sum.records != 3 {
		t.Fatalf("restored %s", sum.line)
	}
	got := b.rpDump(t, "copy_of_"+topic)
	for i, r := range got[0] {
		w := source[0][i]
		if !bytes.Equal(r.Value, w.Value) || !bytes.Equal(r.Key, w.Key) {
			t.Fatalf("record %d differs (%d bytes, want %d)", i, len(r.Value), len(w.Value))
		}
	}
	if len(got[0]) != 3 {
		t.Fatalf("copy holds %d records", len(got[0]))
	}
}

// TestIntegrationRestoreFreshBroker restores into a broker started a moment
// before (its group coordinator and the created topic's leaders still
// settling): the source retries the transient states and restores
// everything on the first run.
func TestIntegrationRestoreFreshBroker(t *testing.T) {
	b := newBed(t)
	const parts, perPart = 3, 200
	topic := srcUnique("rp-fresh")
	b.k.CreateTopic(t, topic, parts)
	b.produce(t, topic, parts, 0, perPart, value)
	source := b.rpDump(t, topic)
	bucket := b.s.CreateBucket(t)
	c := b.sinkConf(topic, topic, bucket).with("flush.size", "50")
	runOnce(t, "sink --once", c.write(t))

	ctx, cancel := context.WithTimeout(context.Background(), 3*time.Minute)
	defer cancel()
	fresh, err := testbed.StartKafka(ctx, testbed.Options{QuickJVM: true, KafkaHeap: "384m"})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = fresh.Close() })
	started := time.Now()
	cfg := c.with("bootstrap.servers", fresh.Addr).write(t)
	sum, p := srcRunOK(t, "source into the fresh broker", cfg, "--create-topics", "--allow-same-topic", "--log-level", "debug")
	if sum.records != parts*perPart {
		t.Fatalf("restored %s", sum.line)
	}
	t.Logf("restore began %v after the broker answered; %d transient errors retried", time.Since(started).Round(time.Millisecond)-p.ended.Sub(p.started),
		strings.Count(p.stderr(), "transient cluster error, retrying"))
	for _, l := range strings.Split(p.stderr(), "\n") {
		if strings.Contains(l, "transient cluster error, retrying") {
			t.Logf("retried: %.300s", l)
		}
	}
	fb := &bed{k: fresh, s: b.s}
	rpCompare(t, "fresh "+topic, fb.rpDump(t, topic), source, nil, true)
}
