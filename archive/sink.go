package archive

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"math/rand/v2"
	"regexp"
	"strings"
	"time"

	"github.com/kafkas3/kafkas3/format"
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
	if len(cfg.Brokers) == 0 {
		return nil, errors.New("archive: no brokers (bootstrap.servers)")
	}
	if (len(cfg.Topics) == 0) == (cfg.TopicsRegex == "") {
		return nil, errors.New("archive: set exactly one of topics and topics.regex")
	}
	if cfg.FlushSize <= 0 {
		return nil, errors.New("archive: flush.size must be > 0")
	}
	if cfg.Format == nil || cfg.Partitioner == nil {
		return nil, errors.New("archive: format and partitioner are required")
	}
	if cfg.RotateScheduleInterval > 0 && cfg.Timezone == nil {
		return nil, errors.New("archive: rotate.schedule.interval.ms requires timezone")
	}
	if cfg.GroupID == "" {
		cfg.GroupID = "connect-" + cfg.Name
	}
	if cfg.Envelope && (cfg.KeysFormat != nil || cfg.HeadersFormat != nil) {
		return nil, errors.New("archive: store.envelope holds keys and headers itself: unset store.kafka.keys and store.kafka.headers")
	}
	switch cfg.NullValues {
	case "":
		cfg.NullValues = NullFail
	case NullFail, NullIgnore:
	case NullWrite:
		if cfg.KeysFormat == nil {
			return nil, errors.New("archive: behavior.on.null.values=write needs store.kafka.keys=true")
		}
	default:
		return nil, fmt.Errorf("archive: behavior.on.null.values %q; want fail, ignore or write", cfg.NullValues)
	}
	if cfg.TombstonePartition == "" {
		cfg.TombstonePartition = DefaultTombstonePartition
	}
	if pf := cfg.KeysFormat; pf != nil {
		if pf.Format == nil {
			return nil, errors.New("archive: store.kafka.keys without a keys format")
		}
		if _, err := format.NewKeyPart(pf.Kind, false); err != nil {
			return nil, fmt.Errorf("archive: %w", err)
		}
	}
	if pf := cfg.HeadersFormat; pf != nil {
		if pf.Format == nil {
			return nil, errors.New("archive: store.kafka.headers without a headers format")
		}
		if _, err := format.NewHeadersPart(pf.Kind); err != nil {
			return nil, fmt.Errorf("archive: %w", err)
		}
	}
	switch cfg.Compatibility {
	case "":
		cfg.Compatibility = CompatNone
	case CompatNone, CompatBackward, CompatForward, CompatFull:
	default:
		return nil, fmt.Errorf("archive: schema.compatibility %q; want NONE, BACKWARD, FORWARD or FULL", cfg.Compatibility)
	}
	switch cfg.Errors.Tolerance {
	case "":
		cfg.Errors.Tolerance = ToleranceNone
	case ToleranceNone, ToleranceAll:
	default:
		return nil, fmt.Errorf("archive: errors.tolerance %q; want none or all", cfg.Errors.Tolerance)
	}
	if cfg.Errors.DLQTopic != "" && cfg.Errors.Tolerance != ToleranceAll {
		return nil, errors.New("archive: errors.deadletterqueue.topic.name needs errors.tolerance=all")
	}
	if cfg.GroupsRegex != "" {
		if _, err := regexp.Compile("^(?:" + cfg.GroupsRegex + ")$"); err != nil {
			return nil, fmt.Errorf("archive: groups.regex: %w", err)
		}
	}
	if cfg.SnapshotInterval < 0 {
		return nil, errors.New("archive: offsets.snapshot.interval.ms must be >= 0")
	}
	if log == nil {
		log = slog.New(slog.DiscardHandler)
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
