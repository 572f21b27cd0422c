package restore

import (
	"context"
	"errors"
	"io"
	"regexp"
	"strings"
	"testing"

	"github.com/kafkas3/kafkas3/s3store"
	"github.com/twmb/franz-go/pkg/kgo"
)

// landSome runs cfg's restore cancelled at store open at, and fails
// unless records landed.
func landSome(t *testing.T, cfg Config, a *archive, at int64) {
	t.Helper()
	ctx, cancel := context.WithCancel(testContext(t))
	defer cancel()
	r, err := New(cfg, &cancelStore{Store: a.store, n: at, cancel: cancel}, nil)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := r.Run(ctx, nil); err == nil {
		t.Fatalf("run cancelled at open %d finished", at)
	}
}

// TestResumeRefusesAnotherStream: once records of a restore landed, a
// re-run over another record stream (other filters, or the archive's
// first objects gone as `kafkas3 prune` removes them) is refused before
// it produces, naming the partition; counting the landed records over it
// would skip or repeat records. The same flags resume. Both the prefix
// rule's markers and repartitioning positions keep the stream.
func TestResumeRefusesAnotherStream(t *testing.T) {
	for _, repart := range []bool{false, true} {
		t.Run(map[bool]string{false: "markers", true: "positions"}[repart], func(t *testing.T) {
			brokers := newCluster(t, 3, "dst")
			a := newArchive(t, fullFormat{})
			keyedArchive(t, a, "src", 3, 6, 200, 23)
			cfg := baseConfig(brokers, a.f, "src")
			cfg.Rename, cfg.Parallelism = "dst", 1
			cfg.Filter.KeyRegex = regexp.MustCompile(`^(?:k1.*)$`)
			cfg.KafkaOpts = []kgo.Opt{kgo.ProducerLinger(0), kgo.MaxBufferedRecords(50)}
			if repart {
				cfg.Repartition, cfg.TxnRecords = RepartitionMurmur2, 40
			}
			landSome(t, cfg, a, 18+4) // the proof opens the 18 objects first
			other := cfg
			other.Filter.KeyRegex = regexp.MustCompile(`^(?:k2.*)$`)
			_, err := mustNew(t, other, a, nil).Run(testContext(t), nil)
			if !errors.Is(err, ErrMarkerMismatch) || !strings.Contains(err.Error(), "another record stream") {
				t.Fatalf("a re-run with another filter: err = %v, want a refusal", err)
			}
			// The first object of source partition 0 gone (pruned): its
			// stream starts later.
			var first string
			if err := a.store.List(testContext(t), "", func(o s3store.ObjectInfo) error {
				if strings.Contains(o.Key, "partition=0/") && (first == "" || o.Key < first) {
					first = o.Key
				}
				return nil
			}); err != nil {
				t.Fatal(err)
			}
			rc, err := a.store.Open(testContext(t), first)
			if err != nil {
				t.Fatal(err)
			}
			b, _ := io.ReadAll(rc)
			rc.Close()
			a.delete(first)
			_, err = mustNew(t, cfg, a, nil).Run(testContext(t), nil)
			if !errors.Is(err, ErrMarkerMismatch) || !strings.Contains(err.Error(), "another record stream") {
				t.Fatalf("a re-run after the first object went: err = %v, want a refusal", err)
			}
			a.putRaw(first, func(w io.Writer) { _, _ = w.Write(b) })
			if _, err := mustNew(t, cfg, a, nil).Run(testContext(t), nil); err != nil {
				t.Fatalf("a re-run with the same flags and archive: %v", err)
			}
		})
	}
}
