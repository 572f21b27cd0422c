package restore

import (
	"bytes"
	"fmt"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/kafkas3/kafkas3/format"
	"github.com/twmb/franz-go/pkg/kgo"
)

// bufferedTimes notes when the producer buffers each record (after the
// rate limit let it through).
type bufferedTimes struct {
	mu    sync.Mutex
	times []time.Time
}

func (b *bufferedTimes) OnProduceRecordBuffered(*kgo.Record) {
	b.mu.Lock()
	defer b.mu.Unlock()
	b.times = append(b.times, time.Now())
}

// rate is the records handed to the producer a second, from the first to
// the last.
func (b *bufferedTimes) rate() (float64, int) {
	b.mu.Lock()
	defer b.mu.Unlock()
	n := len(b.times)
	if n < 2 {
		return 0, n
	}
	return float64(n-1) / b.times[n-1].Sub(b.times[0]).Seconds(), n
}

// TestRateLimits: a restore of 800 records of 1 KiB in two partitions
// with --max-records-per-sec 400, and one with --max-bytes-per-sec 400 KB
// (the rate applies across both partitions), hands records to the
// producer at the limit's rate, within 10% (the burst is a tenth of a
// second of it), restores every record, and shows the limit in the plan.
func TestRateLimits(t *testing.T) {
	for _, c := range []struct {
		name           string
		records, bytes float64
		want           float64 // records a second
	}{
		{"records", 400, 0, 400},
		{"bytes", 0, 400 * 1024, 400},
	} {
		t.Run(c.name, func(t *testing.T) {
			a := newArchive(t, format.NewJSON())
			var want [2][]*format.Record
			for p := range int32(2) {
				for start := 0; start < 400; start += 100 {
					recs := make([]*format.Record, 100)
					for i := range recs {
						recs[i] = &format.Record{Value: fmt.Appendf(nil, "%d-%d-%s", p, start+i, bytes.Repeat([]byte("x"), 1024-12))[:1024]}
					}
					a.put("src", p, int64(start), recs)
					want[p] = append(want[p], recs...)
				}
			}
			brokers := newCluster(t, 2, "dst")
			cfg := baseConfig(brokers, a.f, "src")
			cfg.Rename = "dst"
			cfg.MaxRecordsPerSec, cfg.MaxBytesPerSec = c.records, c.bytes
			times := &bufferedTimes{}
			cfg.KafkaOpts = []kgo.Opt{kgo.WithHooks(times)}
			r := mustNew(t, cfg, a, nil)
			if text := planText(t, r); !strings.Contains(text, "rate limit: ") {
				t.Fatalf("the plan does not show the rate limit:\n%s", text)
			}
			if _, err := r.Run(testContext(t), nil); err != nil {
				t.Fatal(err)
			}
			got := readTopic(t, brokers, "dst")
			checkValues(t, "dst/0", got[0], want[0])
			checkValues(t, "dst/1", got[1], want[1])
			rate, n := times.rate()
			t.Logf("%d records at %.0f a second (limit %.0f)", n, rate, c.want)
			if n != 800 || rate < 0.9*c.want || rate > 1.1*c.want {
				t.Fatalf("%d records handed to the producer at %.0f a second, want 800 at %.0f ± 10%%", n, rate, c.want)
			}
		})
	}
}
