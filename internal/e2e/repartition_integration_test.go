//go:build integration

package e2e

import (
	"bytes"
	"context"
	"fmt"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/twmb/franz-go/pkg/kadm"
	"github.com/twmb/franz-go/pkg/kgo"
)

// rpRecord is record i of source partition p of the repartition tests: a
// key of keys (none for every fifth record), so each key has many records
// per partition, a header naming the record, a value naming p and i, and
// a timestamp of its own.
func rpRecord(topic string, p int32, i, keys int) *kgo.Record {
	r := &kgo.Record{
		Topic: topic, Partition: p,
		Value:     fmt.Appendf(nil, `{"p":%d,"i":%d,"pad":"%s"}`, p, i, strings.Repeat("x", i%50)),
		Headers:   []kgo.RecordHeader{{Key: "n", Value: fmt.Appendf(nil, "%d/%d", p, i)}},
		Timestamp: time.UnixMilli(1_750_000_000_000 + int64(p)*10_000_000 + int64(i)),
	}
	if i%5 != 0 {
		r.Key = fmt.Appendf(nil, "key-%d", (i*7+int(p))%keys)
	}
	return r
}

// rpProduce writes n records (rpRecord) to each of the topic's parts
// partitions.
func rpProduce(t *testing.T, b *bed, topic string, parts int32, n, keys int) {
	t.Helper()
	cl := b.k.Client(t, kgo.RecordPartitioner(kgo.ManualPartitioner()), kgo.ProducerLinger(5*time.Millisecond), kgo.MaxBufferedRecords(50_000))
	ctx, cancel := context.WithTimeout(context.Background(), 3*time.Minute)
	defer cancel()
	var first error
	for i := range n {
		for p := range parts {
			cl.Produce(ctx, rpRecord(topic, p, i, keys), func(_ *kgo.Record, err error) {
				if err != nil && first == nil {
					first = err
				}
			})
		}
	}
	if err := cl.Flush(ctx); err != nil || first != nil {
		t.Fatalf("produce to %s: %v %v", topic, err, first)
	}
}

// rpDump reads topic from its start with franz-go, read_committed (or
// read_uncommitted), until it holds at least total records and nothing
// more comes for 2 s; by partition, in offset order.
func rpDump(t *testing.T, b *bed, topic string, total int, committed bool) map[int32][]*kgo.Record {
	t.Helper()
	level := kgo.ReadUncommitted()
	if committed {
		level = kgo.ReadCommitted()
	}
	cl := b.k.Client(t, kgo.ConsumeTopics(topic), kgo.FetchIsolationLevel(level), kgo.ConsumeResetOffset(kgo.NewOffset().AtStart()))
	ctx, cancel := context.WithTimeout(context.Background(), 3*time.Minute)
	defer cancel()
	out := map[int32][]*kgo.Record{}
	got := 0
	for {
		pctx := ctx
		var quiet context.CancelFunc
		if got >= total {
			pctx, quiet = context.WithTimeout(ctx, 2*time.Second)
		}
		fs := cl.PollFetches(pctx)
		done := pctx.Err() != nil
		if quiet != nil {
			quiet()
		}
		if done {
			if got < total {
				t.Fatalf("read %s: %d of %d records", topic, got, total)
			}
			return out
		}
		fs.EachError(func(_ string, p int32, err error) {
			if ctx.Err() == nil && !strings.Contains(err.Error(), "context") {
				t.Fatalf("fetch %s/%d: %v", topic, p, err)
			}
		})
		fs.EachRecord(func(r *kgo.Record) {
			out[r.Partition] = append(out[r.Partition], r)
			got++
		})
	}
}

// rpPlace is where a record of source partition src, index idx in its
// stream, belongs on n partitions: for a keyed record with murmur2 what
// franz-go's port of Kafka's default partitioner says (pinned against
// Kafka's own by TestMurmur2OracleIntegration), else round robin from the
// source partition.
func rpPlace(roundrobin bool, key []byte, src int32, idx, n int) int32 {
	if !roundrobin && key != nil {
		return int32(kgo.StickyKeyPartitioner(nil).ForTopic("t").Partition(&kgo.Record{Key: key}, n))
	}
	return int32((int(src) + idx) % n)
}

// rpCheck requires the target dump to hold every source record exactly
// once where rpPlace puts it: per target partition, the records of each
// source partition are exactly those placed there, in source order, with
// key, value, headers and timestamp. It returns how many records it
// compared.
func rpCheck(t *testing.T, what string, got, source map[int32][]*kgo.Record, roundrobin bool, n int) int {
	t.Helper()
	total := 0
	for tp := range got {
		if int(tp) >= n {
			t.Fatalf("%s: records in partition %d of %d", what, tp, n)
		}
	}
	bySource := map[int32]map[int32][]*kgo.Record{} // target -> source -> records
	for tp, recs := range got {
		for _, r := range recs {
			var src, i int32
			if _, err := fmt.Sscanf(string(r.Value), `{"p":%d,"i":%d`, &src, &i); err != nil {
				t.Fatalf("%s: %s/%d offset %d holds %q: %v", what, r.Topic, tp, r.Offset, r.Value, err)
			}
			if bySource[tp] == nil {
				bySource[tp] = map[int32][]*kgo.Record{}
			}
			bySource[tp][src] = append(bySource[tp][src], r)
		}
	}
	for src, recs := range source {
		want := map[int32][]*kgo.Record{}
		for i, r := range recs {
			p := rpPlace(roundrobin, r.Key, src, i, n)
			want[p] = append(want[p], r)
		}
		for tp := range int32(n) {
			have := bySource[tp][src]
			if len(have) != len(want[tp]) {
				t.Fatalf("%s: target partition %d holds %d records of source partition %d, want %d", what, tp, len(have), src, len(want[tp]))
			}
			for i, w := range want[tp] {
				h := have[i]
				if !bytes.Equal(h.Key, w.Key) || !bytes.Equal(h.Value, w.Value) || !h.Timestamp.Equal(w.Timestamp) || fmt.Sprint(h.Headers) != fmt.Sprint(w.Headers) {
					t.Fatalf("%s: target partition %d, record %d of source partition %d (offset %d): key %q value %q headers %v ts %v; want key %q value %q headers %v ts %v",
						what, tp, i, src, h.Offset, h.Key, h.Value, h.Headers, h.Timestamp, w.Key, w.Value, w.Headers, w.Timestamp)
				}
			}
			total += len(have)
		}
	}
	return total
}

// rpCreate creates topic with n partitions (retention forever).
func rpCreate(t *testing.T, b *bed, topic string, n int32) {
	t.Helper()
	envCreateTopic(t, b, topic, n)
}

// TestIntegrationRepartition (issue 21, item 1) archives a 4-partition
// and a 6-partition topic (keyed records, every fifth without a key,
// headers, timestamps) as JSON envelopes and restores them with
// --repartition: 4 -> 7 partitions by murmur2 (created by --create-topics
// --partitions 7), 6 -> 3 by murmur2 into an existing topic, and 6 -> 4
// round robin. Each target is read read_committed and compared record by
// record with the source topic, placed as Kafka's partitioner places keys;
// a second run produces nothing. The refusals are checked on the real
// cluster: a target with fewer partitions without --repartition (the
// message suggests it), --partitions against an existing target of
// another count, a plain restore into a repartitioned target, and
// --restore-groups with --repartition.
func TestIntegrationRepartition(t *testing.T) {
	b := newBed(t)
	four, six := srcUnique("rp-four"), srcUnique("rp-six")
	const perFour, perSix, keys = 5000, 3000, 61
	rpCreate(t, b, four, 4)
	rpCreate(t, b, six, 6)
	rpProduce(t, b, four, 4, perFour, keys)
	rpProduce(t, b, six, 6, perSix, keys)
	srcFour, srcSix := envDump(t, b, four, 4*perFour), envDump(t, b, six, 6*perSix)
	bucket := b.s.CreateBucket(t)
	cfg := b.sinkConf("e2e-rp-"+four, four+","+six, bucket).with("flush.size", "700", "store.envelope", "true").write(t)
	if s, _ := runOnce(t, "sink --once", cfg); s.records != 4*perFour+6*perSix {
		t.Fatalf("sink summary %s", s.line)
	}

	// The dry run shows the placement and the count.
	p, code := srcRun(t, "dry run", cfg, time.Minute, "--topics", four, "--topic-rename", four+"-r7", "--repartition", "murmur2", "--create-topics", "--partitions", "7", "--dry-run")
	if code != 0 || !strings.Contains(p.stdout(), "repartition: murmur2: a record with a key goes where Kafka's producer puts it") ||
		!strings.Contains(p.stdout(), "onto 7 partitions (--partitions") || !strings.Contains(p.stdout(), "7 partitions, replication factor") {
		t.Fatalf("dry run (exit %d) does not show the repartitioning:\n%s", code, p.logs())
	}

	cases := []struct {
		name, source, target string
		n                    int
		roundrobin           bool
		args                 []string
		src                  map[int32][]*kgo.Record
	}{
		{"4 to 7 murmur2", four, four + "-r7", 7, false, []string{"--repartition", "murmur2", "--create-topics", "--partitions", "7"}, srcFour},
		{"6 to 3 murmur2", six, six + "-r3", 3, false, []string{"--repartition", "murmur2"}, srcSix},
		{"6 to 4 roundrobin", six, six + "-rr4", 4, true, []string{"--repartition", "roundrobin", "--create-topics", "--partitions", "4"}, srcSix},
	}
	rpCreate(t, b, six+"-r3", 3)
	for _, c := range cases {
		total := 0
		for _, recs := range c.src {
			total += len(recs)
		}
		args := append([]string{"--topics", c.source, "--topic-rename", c.target}, c.args...)
		s, _ := srcRunOK(t, "source "+c.name, cfg, args...)
		if s.records != int64(total) || s.present != 0 {
			t.Fatalf("%s: summary %s, want records=%d", c.name, s.line, total)
		}
		if n := b.srcTopicPartitions(t, c.target); n != c.n {
			t.Fatalf("%s: %s has %d partitions, want %d", c.name, c.target, n, c.n)
		}
		if got := rpCheck(t, c.name, rpDump(t, b, c.target, total, true), c.src, c.roundrobin, c.n); got != total {
			t.Fatalf("%s: compared %d records, want %d", c.name, got, total)
		}
		again, _ := srcRunOK(t, "source again "+c.name, cfg, args...)
		if again.records != 0 || again.present != int64(total) {
			t.Fatalf("%s: second run %s, want nothing produced and %d already present", c.name, again.line, total)
		}
		t.Logf("%s: %d records, each once, where Kafka's partitioner puts its key (or round robin), per key in source order", c.name, total)
	}

	refused := func(what, want string, args ...string) {
		t.Helper()
		p, code := srcRun(t, what, cfg, time.Minute, args...)
		if code == 0 || !strings.Contains(p.stderr(), want) {
			t.Fatalf("%s: exit %d, want a refusal saying %q\n%s", what, code, want, p.logs())
		}
	}
	small := srcUnique("rp-small")
	rpCreate(t, b, small, 2)
	refused("fewer partitions without --repartition", "or spread the records over its 2 partitions with --repartition murmur2",
		"--topics", four, "--topic-rename", small)
	refused("--partitions against an existing count", `--partitions 5, but the target "`+small+`" exists with 2 partitions`,
		"--topics", four, "--topic-rename", small, "--repartition", "murmur2", "--create-topics", "--partitions", "5")
	refused("plain restore into a repartitioned target", "placed by --repartition murmur2 on 7 partitions",
		"--topics", four, "--topic-rename", four+"-r7")
	refused("--restore-groups with --repartition", "--restore-groups: is set together with --repartition: a group's offsets count the records of one source partition",
		"--topics", four, "--topic-rename", small, "--repartition", "murmur2", "--restore-groups")
	if ends := b.srcEnds(t, small); srcSum(ends) != 0 {
		t.Fatalf("refused runs wrote to %s: %s", small, srcFmt(ends))
	}
}

// TestIntegrationRepartitionCrashExactlyOnce: 240,000 records over 4
// partitions, archived as gzipped JSON envelopes, are restored with
// --repartition murmur2 into 7 partitions (--create-topics --partitions
// 7); the source is killed with SIGKILL at up to 5 random moments, with
// transactions open, and re-run each time, then run to the end. The
// final run finds exactly the records the positions committed before it,
// and a read_committed dump holds every archived record exactly once,
// where Kafka's partitioner puts it, per key in source order, with key,
// value, headers and timestamp.
//
// KAFKAS3_E2E_SEED=<n> replays a run's kill schedule.
func TestIntegrationRepartitionCrashExactlyOnce(t *testing.T) {
	b := newBed(t)
	const parts, perPart, n, keys = 4, 60_000, 7, 997
	const total = parts * perPart
	topic := srcUnique("rp-crash")
	target := topic + "-r7"
	rpCreate(t, b, topic, parts)
	rpProduce(t, b, topic, parts, perPart, keys)
	source := envDump(t, b, topic, total)
	bucket := b.s.CreateBucket(t)
	cfg := b.sinkConf("e2e-rpc-"+topic, topic, bucket).with("flush.size", "5000", "store.envelope", "true", "s3.compression.type", "gzip").write(t)
	if s, _ := runOnce(t, "sink --once", cfg); s.records != total {
		t.Fatalf("sink summary %s", s.line)
	}
	seed, rng := crashSeed(t)
	args := []string{"--topic-rename", target, "--repartition", "murmur2", "--create-topics", "--partitions", strconv.Itoa(n)}

	pollCl := b.k.Client(t)
	adm := kadm.NewClient(pollCl)
	landed := func() int64 { // records and transaction markers, committed or not
		ends, err := srcEndsWith(adm, target)
		if err != nil || len(ends) < n {
			pollCl.PurgeTopicsFromClient(target)
			return 0
		}
		return srcSum(ends)
	}
	kills := 0
	for k := 1; k <= 5; k++ {
		label := "source run " + strconv.Itoa(k)
		pos := rpPositions(t, adm, target, parts)
		if pos > total*6/10 {
			t.Logf("no kill %d: %d of %d records committed", k, pos, total)
			break
		}
		p := srcStart(t, label, cfg, args...)
		delay := time.Duration(20+rng.IntN(800)) * time.Millisecond
		threshold := landed() + int64(float64(total)*(0.05+0.15*rng.Float64()))
		for !(k == 1 && time.Since(p.started) >= delay) && landed() < threshold && !p.exited() {
			time.Sleep(2 * time.Millisecond)
		}
		if p.exited() {
			t.Fatalf("%s exited (code %d) before its kill point; seed %d\n%s", label, p.cmd.ProcessState.ExitCode(), seed, p.logs())
		}
		at := time.Since(p.started)
		p.signal(syscall.SIGKILL)
		<-p.done
		if ws, ok := p.cmd.ProcessState.Sys().(syscall.WaitStatus); !ok || !ws.Signaled() || ws.Signal() != syscall.SIGKILL {
			t.Fatalf("%s: not killed by SIGKILL: %v\n%s", label, p.cmd.ProcessState, p.logs())
		}
		kills++
		t.Logf("kill %d: SIGKILL %v after start; target log end offsets sum to %d (records of committed and open transactions, and markers); %d resumed streams in this run",
			k, at.Round(time.Millisecond), landed(), strings.Count(p.stderr(), "resuming restore"))
	}
	if kills < 3 {
		t.Fatalf("only %d kills hit an unfinished restore, want at least 3; seed %d", kills, seed)
	}
	before := rpPositions(t, adm, target, parts)
	final, _ := srcRunOK(t, "source final run", cfg, args...)
	if final.present != before || final.records+final.present != total {
		t.Fatalf("final run: %s; want already_present=%d (the committed positions) and records=%d", final.line, before, total-before)
	}
	if got := rpCheck(t, "after the kills", rpDump(t, b, target, total, true), source, false, n); got != total {
		t.Fatalf("compared %d records, want %d", got, total)
	}
	uncommitted := 0
	for _, recs := range rpDump(t, b, target, total, false) {
		uncommitted += len(recs)
	}
	if uncommitted <= total {
		t.Fatalf("read_uncommitted sees %d records, the archive %d: no kill left records of an open transaction, so the test proved nothing about them; seed %d", uncommitted, total, seed)
	}
	t.Logf("read_committed: the %d archived records, each once, in place and order; read_uncommitted also sees %d records of the killed runs' aborted transactions",
		total, uncommitted-total)
	again, _ := srcRunOK(t, "source after completion", cfg, args...)
	if again.records != 0 || again.present != total {
		t.Fatalf("run after completion: %s", again.line)
	}
}

// rpPositions sums the positions the repartitioning streams into target
// committed (restore.PositionGroup: "kafkas3-restore-<target>:<source
// partition>", offset of target partition 0): what a killed run committed.
func rpPositions(t *testing.T, adm *kadm.Client, target string, parts int32) int64 {
	t.Helper()
	var sum int64
	for p := range parts {
		group := srcMarkerGroup(target) + ":" + strconv.Itoa(int(p))
		ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
		resps, err := adm.FetchOffsets(ctx, group) // not require_stable: a killed run's open transaction is pending until fenced
		cancel()
		if err != nil {
			if strings.Contains(err.Error(), "GROUP_ID_NOT_FOUND") {
				continue
			}
			t.Fatalf("fetch the position of group %s: %v", group, err)
		}
		if o, ok := resps.Lookup(target, 0); ok && o.At > 0 {
			sum += o.At
		}
	}
	return sum
}
