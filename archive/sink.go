package archive

import (
	"cmp"
	"context"
	"errors"
	"fmt"
	"log/slog"
	"strings"
	"time"

	"github.com/kafkas3/kafkas3/outage"
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
	// Lost counts the offsets lost before archiving: Kafka deleted them
	// (retention or DeleteRecords moved the log start offset past them)
	// before the sink read them. Each offset is counted once per run.
	Lost int64
	// IndexObjects counts the archive index objects written (one per
	// partition rotation, plus one per commit over skipped offsets only;
	// see Config.IndexPrefix). Objects does not include them.
	IndexObjects int64
	// Snapshots counts the group offset snapshots written
	// (Config.SnapshotInterval).
	Snapshots int64
	// SchemaObjects counts the schema objects written (schemarec.go);
	// SchemaIDsUnknown the ids of framed-looking keys and values whose
	// schema could not be recorded (unknown to the registry, or no
	// registry configured).
	SchemaObjects, SchemaIDsUnknown int64
}

// summary is the run's Summary so far.
func (s *Sink) summary(start time.Time) Summary {
	sum := s.tally.summary(start)
	sum.SchemaObjects, sum.SchemaIDsUnknown = s.schemaRec.counts()
	return sum
}

// String renders the summary as one line.
func (s Summary) String() string {
	return fmt.Sprintf("topics=%s partitions=%d records=%d objects=%d bytes=%d seconds=%.1f skipped=%d lost=%d index_objects=%d",
		strings.Join(s.Topics, ","), s.Partitions, s.Records, s.Objects, s.Bytes, s.Elapsed.Seconds(), s.Skipped, s.Lost, s.IndexObjects) + s.schemasText()
}

// schemasText is the summary's schema counts, "" when there are none.
func (s Summary) schemasText() string {
	if s.SchemaObjects == 0 && s.SchemaIDsUnknown == 0 {
		return ""
	}
	return fmt.Sprintf(" schema_objects=%d unknown_schema_ids=%d", s.SchemaObjects, s.SchemaIDsUnknown)
}

// LostReport says how many records were lost before archiving, for a
// warning line; "" when none was.
func (s Summary) LostReport() string {
	if s.Lost == 0 {
		return ""
	}
	return fmt.Sprintf("%d records were lost before archiving: Kafka deleted them (retention or DeleteRecords) before the sink read them; the log names each topic, partition and range, and the archive index records them (kafkas3 verify reports them)", s.Lost)
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
	ids      identities      // each archived topic's id and generation
	deps     *outage.Tracker // the dependencies' states, for a run
	ckpt     *checkpointer   // the index checkpoints of a run; nil when none are written
	// schemaRec records the schemas of the archived records (schemarec.go).
	schemaRec *schemaRecorder
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
	return &Sink{cfg: cfg, store: store, log: log, tally: tally{obs: cfg.Observer}, schemaRec: newSchemaRecorder(cfg.Schemas, log)}, nil
}

// DefaultOnceTimeout is how long, with Once, a dependency may stay down
// before the run gives up (Config.OnceTimeout).
const DefaultOnceTimeout = 10 * time.Minute

// Run archives until ctx is cancelled (or, with Once, until the end offsets
// seen at start are archived). A failure of the brokers, the store or the
// registry that passes on its own is ridden out: the session is torn down
// (the brokers: franz-go rejoins the group) and resumed from the committed
// offsets after a backoff, for ever, or with Once until a dependency has
// been down for Config.OnceTimeout.
func (s *Sink) Run(ctx context.Context) (Summary, error) {
	start := time.Now()
	s.tally.reset(s.OnObject)
	limit := time.Duration(0)
	if s.cfg.Once {
		limit = cmp.Or(s.cfg.OnceTimeout, DefaultOnceTimeout)
	}
	s.deps = outage.NewTracker(s.cfg.Health, limit)
	if s.cfg.IndexPrefix != "" && s.cfg.CheckpointInterval > 0 {
		s.ckpt = newCheckpointer(s)
		loopCtx, stopLoop := context.WithCancel(ctx)
		loopDone := make(chan struct{})
		go func() { defer close(loopDone); s.ckpt.loop(loopCtx) }()
		defer func() {
			stopLoop()
			<-loopDone
			if s.cfg.Once && ctx.Err() == nil {
				// After the final commit: every committed index object.
				s.ckpt.flush(ctx)
			}
		}()
	}
	if s.snapshotsOn() {
		sn, closeSn, err := s.newSnapshotter()
		if err != nil {
			return s.summary(start), err
		}
		defer closeSn()
		loopCtx, stopLoop := context.WithCancel(ctx)
		loopDone := make(chan struct{})
		go func() { defer close(loopDone); sn.loop(loopCtx) }()
		err = s.runSessions(ctx)
		stopLoop()
		<-loopDone
		if (err == nil || onlyStopped(err)) && s.cfg.Once && ctx.Err() == nil {
			// The last snapshot of a --once run comes after its final
			// commit, so it records the groups where the run left them;
			// also when the run fails only for topics whose archiving
			// was stopped (the snapshotter leaves them out), since the
			// others were archived to the end.
			sn.takeLogged(ctx)
		}
		return s.summary(start), err
	}
	err := s.runSessions(ctx)
	return s.summary(start), err
}

// runSessions runs sessions until ctx ends, a session ends cleanly (--once)
// or fails for good; a failure of a dependency that passes on its own
// (failedDep) resumes after a backoff, until --once-timeout with Once.
func (s *Sink) runSessions(ctx context.Context) error {
	const maxBackoff = 30 * time.Second
	backoff := outage.Backoff{Min: time.Second, Max: maxBackoff}
	for {
		began := time.Now()
		err := s.session(ctx)
		if ctx.Err() != nil || err == nil {
			// Interrupted (a clean stop), or --once done: the topics
			// whose archiving was stopped fail the run.
			return s.ids.err()
		}
		if errors.Is(err, errRecheck) {
			var wb *wentBackError
			if errors.As(err, &wb) {
				s.ids.markSuspect(wb.topic, wb.Error())
			}
			s.log.Info("checking the topics' identity again", "why", err)
			select {
			case <-ctx.Done():
				return s.ids.err()
			case <-time.After(time.Second):
			}
			continue
		}
		if oerr := s.deps.Overdue(); oerr != nil {
			return oerr // --once: whatever the session was doing when watchOnce ended it
		}
		dep, transient := failedDep(err)
		s.observeFailure(dep)
		if !transient {
			return err
		}
		s.deps.Down(dep, err)
		if oerr := s.deps.Overdue(); oerr != nil {
			return oerr
		}
		if time.Since(began) > 2*maxBackoff {
			backoff.Reset() // a new outage after healthy running
		}
		wait := s.deps.Left(backoff.Next())
		s.cfg.Observer.Retry(string(dep))
		s.log.Debug("resuming from the committed offsets after a backoff", "dependency", string(dep), "err", err, "retry_in", wait.Round(time.Millisecond))
		select {
		case <-ctx.Done():
			return nil
		case <-time.After(wait):
		}
		if oerr := s.deps.Overdue(); oerr != nil {
			return oerr
		}
	}
}

// outageOf reports err, a failure of a side task (a snapshot, a topic
// description) that archiving survives, as an outage of the store or the
// brokers when it is a transient one, and reports whether it did: the
// readiness then logs it once, instead of a warning per attempt.
func (s *Sink) outageOf(what string, err error) bool {
	switch {
	case s3store.Transient(err):
		s.deps.Down(outage.Store, fmt.Errorf("%s: %w", what, err))
	case outage.Transient(err):
		s.deps.Down(outage.Broker, fmt.Errorf("%s: %w", what, err))
	default:
		return false
	}
	return true
}

// failedDep tells which dependency err is a failure of, and whether it
// passes on its own: a *StoreError (not denied access, not a missing
// bucket), a *ConverterError (the registry) or a *KafkaError.
func failedDep(err error) (outage.Dep, bool) {
	var se *StoreError
	var ce *ConverterError
	var ke *KafkaError
	switch {
	case err == nil:
		return "", false
	case errors.As(err, &se):
		// Denied access, a bucket that went away or an object of a WORM
		// bucket that is not this replay's: waiting will not help.
		return outage.Store, !errors.Is(err, s3store.ErrAccessDenied) && !errors.Is(err, s3store.ErrNotExist) && !errors.Is(err, s3store.ErrRewrite)
	case errors.As(err, &ce):
		return outage.Registry, true
	case errors.As(err, &ke):
		return outage.Broker, true
	}
	return "", false
}

// observeFailure tells the observer of a session's failure of dep ("":
// none of the dependencies).
func (s *Sink) observeFailure(dep outage.Dep) {
	kind := string(dep)
	if kind == "" {
		kind = ErrorOther
	}
	s.cfg.Observer.Error(kind)
}
