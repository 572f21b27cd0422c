package archive

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"math/rand/v2"
	"strings"
	"time"

	"github.com/kafkas3/kafkas3/partition"
	"github.com/kafkas3/kafkas3/s3store"
)

// Summary reports what a run archived.
type Summary struct {
	Topics     []string
	Partitions int
	Records    int64
	Objects    int64
	Bytes      int64
	Elapsed    time.Duration
	// Skipped counts the records consumed but not archived: bad records
	// skipped under errors.tolerance=all (BadRecords, of which DLQ went to
	// the dead letter queue) and null values dropped by
	// behavior.on.null.values=ignore (NullsIgnored). Each offset is counted
	// once per run, even when a store failure makes the sink replay it.
	Skipped      int64
	BadRecords   int64
	DLQ          int64
	NullsIgnored int64
	// IndexObjects counts the archive index objects written (one per
	// partition rotation, plus one per commit over skipped offsets only;
	// see Config.IndexPrefix). Objects does not include them.
	IndexObjects int64
	// Snapshots counts the group offset snapshots written
	// (Config.SnapshotInterval).
	Snapshots int64
}

// String renders the summary as one line.
func (s Summary) String() string {
	return fmt.Sprintf("topics=%s partitions=%d records=%d objects=%d bytes=%d seconds=%.1f skipped=%d index_objects=%d",
		strings.Join(s.Topics, ","), s.Partitions, s.Records, s.Objects, s.Bytes, s.Elapsed.Seconds(), s.Skipped, s.IndexObjects)
}

// SkipReport says what a run skipped, for a warning line; "" when nothing
// was skipped.
func (s Summary) SkipReport() string {
	if s.Skipped == 0 {
		return ""
	}
	var parts []string
	if s.BadRecords > 0 {
		p := fmt.Sprintf("%d bad records (errors.tolerance=all", s.BadRecords)
		if s.DLQ > 0 {
			p += fmt.Sprintf(", %d sent to the dead letter queue", s.DLQ)
		}
		parts = append(parts, p+")")
	}
	if s.NullsIgnored > 0 {
		parts = append(parts, fmt.Sprintf("%d null values (behavior.on.null.values=ignore)", s.NullsIgnored))
	}
	return fmt.Sprintf("%d records were consumed but not archived: %s; the log names each bad record's topic, partition and offset (errors.log.enable=true logs them at error level)",
		s.Skipped, strings.Join(parts, ", "))
}

// Sink archives Kafka topics into a store.
type Sink struct {
	cfg   Config
	store s3store.Store
	log   *slog.Logger
	// OnObject, when set, is called after each object is complete (before
	// its offset is committed). Tests and the demo use it.
	OnObject func(FileStats)

	tally    tally
	topicRec topicRecorder
}

type tp struct {
	topic     string
	partition int32
}

// New validates cfg and returns a sink.
func New(cfg Config, store s3store.Store, log *slog.Logger) (*Sink, error) {
	if err := cfg.settle(); err != nil {
		return nil, err
	}
	if log == nil {
		log = slog.New(slog.DiscardHandler)
	}
	if tp, ok := cfg.Partitioner.(partition.Timed); ok && !tp.Deterministic() {
		log.Warn("timestamp.extractor is Wallclock: folders and rotations depend on when the sink writes a record, " +
			"so a replay after a crash may write records to other objects than before (not exactly-once); use Record or RecordField")
	}
	return &Sink{cfg: cfg, store: store, log: log}, nil
}

// Run archives until ctx is cancelled (or, with Once, until the end offsets
// seen at start are archived). A store failure is transient: the session is
// torn down and resumed from the committed offsets after a backoff.
func (s *Sink) Run(ctx context.Context) (Summary, error) {
	start := time.Now()
	s.tally.reset(s.OnObject)
	if err := s.store.Check(ctx); err != nil {
		return s.tally.summary(start), err
	}
	if s.snapshotsOn() {
		sn, closeSn, err := s.newSnapshotter()
		if err != nil {
			return s.tally.summary(start), err
		}
		defer closeSn()
		loopCtx, stopLoop := context.WithCancel(ctx)
		loopDone := make(chan struct{})
		go func() { defer close(loopDone); sn.loop(loopCtx) }()
		err = s.runSessions(ctx)
		stopLoop()
		<-loopDone
		if err == nil && s.cfg.Once && ctx.Err() == nil {
			// The last snapshot of a --once run comes after its final
			// commit, so it records the groups where the run left them.
			sn.takeLogged(ctx)
		}
		return s.tally.summary(start), err
	}
	err := s.runSessions(ctx)
	return s.tally.summary(start), err
}

// runSessions runs sessions until ctx ends, a session ends cleanly (--once)
// or fails for good; store and converter failures resume after a backoff.
func (s *Sink) runSessions(ctx context.Context) error {
	const minBackoff, maxBackoff = time.Second, 30 * time.Second
	backoff := minBackoff
	for {
		began := time.Now()
		err := s.session(ctx)
		if ctx.Err() != nil {
			return nil // interrupted: a clean stop
		}
		var se *StoreError
		var ce *ConverterError
		if err == nil || !errors.As(err, &se) && !errors.As(err, &ce) {
			return err
		}
		if se != nil && (errors.Is(err, s3store.ErrAccessDenied) || errors.Is(err, s3store.ErrNotExist)) {
			// Denied access or a bucket that went away: waiting will not help.
			return err
		}
		if time.Since(began) > 2*maxBackoff {
			backoff = minBackoff // a new outage after healthy running
		}
		wait := time.Duration(rand.Int64N(int64(backoff))) + backoff/2
		what := "object store failed"
		if ce != nil {
			what = "converter failed (schema registry)"
		}
		s.log.Warn(what+"; resuming from committed offsets", "err", err, "retry_in", wait.Round(time.Millisecond))
		select {
		case <-ctx.Done():
			return nil
		case <-time.After(wait):
		}
		backoff = min(backoff*2, maxBackoff)
	}
}
