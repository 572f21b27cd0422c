package restore

import (
	"errors"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/kafkas3/kafkas3/format"
	"github.com/twmb/franz-go/pkg/kadm"
	"github.com/twmb/franz-go/pkg/kgo"
)

// expiryArchive puts 4 partitions of 10 objects of 300 records: objects
// 0-3 stamped 30 days ago (wholly past a week's retention), objects 4-9
// one record in three stamped 30 days ago, the others an hour ago. It
// returns every record and the 30-day-old ones' count.
func expiryArchive(t *testing.T, a *archive, now time.Time) (map[int32][]*format.Record, int64) {
	t.Helper()
	all := map[int32][]*format.Record{}
	var old int64
	for p := range int32(4) {
		for o := range 10 {
			recs := make([]*format.Record, 300)
			for i := range recs {
				n := o*300 + i
				ts := now.Add(-time.Hour)
				if o < 4 || n%3 == 0 {
					ts, old = now.Add(-30*24*time.Hour), old+1
				}
				recs[i] = &format.Record{Key: fmt.Appendf(nil, "k%d", n%7), Value: fmt.Appendf(nil, "p%d-%d", p, n),
					Timestamp: ts.Add(time.Duration(n) * time.Millisecond)}
			}
			a.put("src", p, int64(o*300), recs)
			all[p] = append(all[p], recs...)
		}
	}
	return all, old
}

// newRetentionCluster is a cluster with target topic "dst" of 4
// partitions and the given retention.ms.
func newRetentionCluster(t *testing.T, retentionMS string) ([]string, *kadm.Client) {
	t.Helper()
	brokers := newCluster(t, 1)
	adm := newAdmin(t, brokers)
	resp, err := adm.CreateTopic(testContext(t), 4, 1, map[string]*string{"retention.ms": &retentionMS}, "dst")
	if err == nil {
		err = resp.Err
	}
	if err != nil {
		t.Fatal(err)
	}
	return brokers, adm
}

func setRetention(t *testing.T, adm *kadm.Client, ms string) {
	t.Helper()
	rs, err := adm.AlterTopicConfigs(testContext(t), []kadm.AlterConfig{{Name: "retention.ms", Value: &ms}}, "dst")
	if err == nil {
		for _, r := range rs {
			err = errors.Join(err, r.Err)
		}
	}
	if err != nil {
		t.Fatal(err)
	}
}

// TestSkipExpired: a target keeping a week. Without --skip-expired the
// dry run counts the records older than it (those of objects wholly
// older surely, up to the straddling objects' records more) and the run
// warns; with it the run leaves out exactly the 30-day-old records,
// counted, and the rest land in order. Cancelled runs resumed after the
// target's retention grew to 60 days still leave the same records out:
// the first run's cutoff is kept in the markers. A re-run without the
// flag is refused once records landed.
func TestSkipExpired(t *testing.T) {
	brokers, adm := newRetentionCluster(t, fmt.Sprint(int64(7*24*time.Hour/time.Millisecond)))
	a := newArchive(t, fullFormat{})
	all, old := expiryArchive(t, a, time.Now())
	cfg := baseConfig(brokers, a.f, "src")
	cfg.Rename, cfg.Parallelism = "dst", 2
	cfg.KafkaOpts = []kgo.Opt{kgo.ProducerLinger(0), kgo.MaxBufferedRecords(200)}

	dry := cfg
	dry.DryRun = true
	r := mustNew(t, dry, a, nil)
	plan, err := r.Plan(testContext(t))
	if err != nil {
		t.Fatal(err)
	}
	var text strings.Builder
	if err := r.WriteTargetPlan(testContext(t), &text, plan); err != nil {
		t.Fatal(err)
	}
	wantLine := fmt.Sprintf("expired: dst: %d records (and up to %d more) stamped before ", 4*4*300, 4*6*300)
	if !strings.Contains(text.String(), wantLine) || !strings.Contains(text.String(), "older than retention.ms=604800000: Kafka deletes them soon after they land") {
		t.Fatalf("the dry run does not count the expired records (want %q):\n%s", wantLine, text.String())
	}

	skip := cfg
	skip.SkipExpired = true
	want := map[int32][]*format.Record{}
	for p, recs := range all {
		for _, rec := range recs {
			if time.Since(rec.Timestamp) < 24*time.Hour {
				want[p] = append(want[p], rec)
			}
		}
	}
	held := cancelRuns(t, skip, a, brokers, want, 40+14, 40+28) // the proof opens the 40 objects first
	setRetention(t, adm, fmt.Sprint(int64(60*24*time.Hour/time.Millisecond)))

	if _, err := mustNew(t, cfg, a, nil).Run(testContext(t), nil); !errors.Is(err, ErrInvalidConfig) || !strings.Contains(err.Error(), "began with --skip-expired") {
		t.Fatalf("a run without --skip-expired after one with it: err = %v, want a refusal", err)
	}
	log := &logBuffer{}
	sum, err := mustNew(t, skip, a, log).Run(testContext(t), nil)
	if err != nil {
		t.Fatal(err)
	}
	got := readTopic(t, brokers, "dst")
	total := 0
	for p := range int32(4) {
		checkValues(t, fmt.Sprintf("dst/%d", p), got[p], want[p])
		total += len(want[p])
	}
	if sum.Expired != old || sum.Records != int64(total-held) || sum.AlreadyPresent != int64(held) {
		t.Fatalf("final run: %d expired, %d records, %d already present; want %d, %d, %d",
			sum.Expired, sum.Records, sum.AlreadyPresent, old, total-held, held)
	}
	if !strings.Contains(sum.String(), fmt.Sprintf("%d records older than the target's retention left out (--skip-expired)", old)) {
		t.Fatalf("the summary does not count the expired records: %s", sum)
	}
}

// TestExpiredWarning: without --skip-expired a run restores every
// record and warns, before producing, how many the target will delete;
// a target that keeps records forever (retention.ms -1) or a
// compact-only one gets no warning, nor does --timestamps now.
func TestExpiredWarning(t *testing.T) {
	for _, c := range []struct {
		name, retention string
		now, warns      bool
	}{
		{"a week", fmt.Sprint(int64(7 * 24 * time.Hour / time.Millisecond)), false, true},
		{"forever", "-1", false, false},
		{"stamped now", fmt.Sprint(int64(7 * 24 * time.Hour / time.Millisecond)), true, false},
	} {
		t.Run(c.name, func(t *testing.T) {
			brokers, _ := newRetentionCluster(t, c.retention)
			a := newArchive(t, fullFormat{})
			all, _ := expiryArchive(t, a, time.Now())
			cfg := baseConfig(brokers, a.f, "src")
			cfg.Rename = "dst"
			if c.now {
				cfg.Timestamps = TimestampsNow
			}
			log := &logBuffer{}
			sum, err := mustNew(t, cfg, a, log).Run(testContext(t), nil)
			if err != nil {
				t.Fatal(err)
			}
			if sum.Records != 4*3000 || sum.Expired != 0 {
				t.Fatalf("%d records restored, %d expired; want all %d, none", sum.Records, sum.Expired, 4*3000)
			}
			want := fmt.Sprintf("older than the target's retention: Kafka deletes them soon after they land; --skip-expired leaves them out, counted: %d records (and up to %d more)", 4*4*300, 4*6*300)
			if got := strings.Contains(log.String(), want); got != c.warns {
				t.Fatalf("warning %q logged: %v, want %v:\n%s", want, got, c.warns, log.String())
			}
			if !c.now {
				checkValues(t, "dst/0", readTopic(t, brokers, "dst")[0], all[0])
			}
		})
	}
}

func TestRetentionFrom(t *testing.T) {
	for _, c := range []struct {
		policy, stamp, ms string
		want              int64
	}{
		{"", "", "1000", 1000},
		{"delete", "CreateTime", "1000", 1000},
		{"compact, delete", "", "1000", 1000},
		{"compact", "", "1000", 0},
		{"delete", "LogAppendTime", "1000", 0},
		{"delete", "", "-1", 0},
		{"delete", "", "", 0},
		{"delete", "", "x", 0},
	} {
		if got := retentionFrom(c.policy, c.stamp, c.ms).ms; got != c.want {
			t.Errorf("retentionFrom(%q, %q, %q) = %d, want %d", c.policy, c.stamp, c.ms, got, c.want)
		}
	}
}
