package archive

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"math/rand/v2"
	"sort"
	"strings"
	"sync"
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
}

// String renders the summary as one line.
func (s Summary) String() string {
	return fmt.Sprintf("topics=%s partitions=%d records=%d objects=%d bytes=%d seconds=%.1f",
		strings.Join(s.Topics, ","), s.Partitions, s.Records, s.Objects, s.Bytes, s.Elapsed.Seconds())
}

// Sink archives Kafka topics into a store.
type Sink struct {
	cfg   Config
	store s3store.Store
	log   *slog.Logger
	// OnObject, when set, is called after each object is complete (before
	// its offset is committed). Tests and the demo use it.
	OnObject func(FileStats)

	mu    sync.Mutex
	stats stats
}

type stats struct {
	topics     map[string]bool
	partitions map[tp]bool
	records    int64
	objects    int64
	bytes      int64
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
		if pf.Format == nil || (pf.Kind != format.KindJSON && pf.Kind != format.KindBytes && pf.Kind != format.KindAvro && pf.Kind != format.KindParquet) {
			return nil, fmt.Errorf("archive: keys.format.class %v: want json, bytes, avro or parquet", pf.Kind)
		}
	}
	if pf := cfg.HeadersFormat; pf != nil {
		if pf.Format == nil || (pf.Kind != format.KindJSON && pf.Kind != format.KindAvro && pf.Kind != format.KindParquet) {
			return nil, fmt.Errorf("archive: headers.format.class %v: want json, avro or parquet", pf.Kind)
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
	s.stats = stats{topics: map[string]bool{}, partitions: map[tp]bool{}}
	if err := s.store.Check(ctx); err != nil {
		return s.summary(start), err
	}
	const minBackoff, maxBackoff = time.Second, 30 * time.Second
	backoff := minBackoff
	for {
		began := time.Now()
		err := s.session(ctx)
		if ctx.Err() != nil {
			return s.summary(start), nil // interrupted: a clean stop
		}
		var se *StoreError
		var ce *ConverterError
		if err == nil || !errors.As(err, &se) && !errors.As(err, &ce) {
			return s.summary(start), err
		}
		if se != nil && (errors.Is(err, s3store.ErrAccessDenied) || errors.Is(err, s3store.ErrNotExist)) {
			// Denied access or a bucket that went away: waiting will not help.
			return s.summary(start), err
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
			return s.summary(start), nil
		case <-time.After(wait):
		}
		backoff = min(backoff*2, maxBackoff)
	}
}

func (s *Sink) summary(start time.Time) Summary {
	s.mu.Lock()
	defer s.mu.Unlock()
	out := Summary{Partitions: len(s.stats.partitions), Records: s.stats.records, Objects: s.stats.objects, Bytes: s.stats.bytes, Elapsed: time.Since(start)}
	for t := range s.stats.topics {
		out.Topics = append(out.Topics, t)
	}
	sort.Strings(out.Topics)
	return out
}

func (s *Sink) addFiles(files []FileStats) {
	if len(files) == 0 {
		return
	}
	s.mu.Lock()
	for _, f := range files {
		s.stats.objects++
		if f.Part == "" {
			s.stats.records += f.Records
		}
		s.stats.bytes += f.Bytes
	}
	s.mu.Unlock()
	if s.OnObject != nil {
		for _, f := range files {
			s.OnObject(f)
		}
	}
}
