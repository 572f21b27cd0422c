package restore

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"math/rand/v2"
	"regexp"
	"slices"
	"sort"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/kafkas3/kafkas3/index"
	"github.com/kafkas3/kafkas3/outage"
	"github.com/kafkas3/kafkas3/s3store"
	"github.com/kafkas3/kafkas3/schemas"
	"github.com/kafkas3/kafkas3/throttle"
	"github.com/twmb/franz-go/pkg/kadm"
	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kgo"
)

// Errors a restore can fail with; each is wrapped with the details (topic,
// partition, offsets, key).
var (
	// ErrInvalidConfig: the Config cannot work (no topics, bad rename, ...).
	ErrInvalidConfig = errors.New("invalid restore config")
	// ErrMissingTopics: target topics do not exist and CreateTopics is off.
	ErrMissingTopics = errors.New("target topics do not exist")
	// ErrTooFewPartitions: a target has fewer partitions than the archive.
	ErrTooFewPartitions = errors.New("target topic has fewer partitions than the archive")
	// ErrFeedbackLoop: a target is a topic the same config archives.
	ErrFeedbackLoop = errors.New("target topic is archived by the same config")
	// ErrForeignWrite: the target partition holds records that this
	// restore did not write, so resuming could duplicate or lose records.
	ErrForeignWrite = errors.New("target partition was written by someone else")
	// ErrMarkerMismatch: the target's resume marker belongs to another
	// archive or source topic.
	ErrMarkerMismatch = errors.New("target holds a restore of something else")
)

// Restorer restores an archive into Kafka. Create it with New; it is not
// meant for concurrent Runs.
type Restorer struct {
	cfg   Config
	store s3store.Store
	log   *slog.Logger

	topicsRe  *regexp.Regexp // full-match topics.regex, nil with Topics
	archiveRe *regexp.Regexp // full-match sink topics.regex, for the guard
	rename    *renamer
	// groupRename maps archived group names to target names
	// (--group-rename).
	groupRename *groupRenamer

	mu sync.Mutex
	// proved holds, in follow mode, by object key, what the proof read of
	// it, for the next pass; a completed pass lets go of those of objects
	// that matched an index entry (rememberStreams, restoredEntry).
	// Without follow mode a Restorer plans once: nothing is kept.
	proved map[string]provedObject
	limits map[string]int32 // target topic -> max.message.bytes
	// compacted holds the target topics whose cleanup.policy compacts.
	compacted map[string]bool
	// retention is each target's retention by time (describeLimits);
	// cutoffs the --skip-expired cutoff of each target for this run's new
	// markers (expired.go).
	retention map[string]retention
	cutoffs   map[string]int64
	// eraseDigest is erasureDigest's, made once.
	eraseDigest     string
	eraseDigestOnce sync.Once
	// covered holds, per source partition, the value objects counted in
	// Summary.Bytes (key -> size) since the last pass that completed, so
	// each is counted once in follow mode; a pass that completes lets them
	// go (rememberStreams): they are then in the stream restored
	// (stream.earlier).
	covered map[topicPartition]map[string]int64
	memo    map[topicPartition]partitionMemo
	// mem bounds the decoded records loaded objects keep in memory, across
	// every stream (Config.Parallelism × Config.SpillBytes, at most
	// MaxRecordMemory).
	mem *memBudget
	// partitionsAtOnce is how many partitions a plan makes at once
	// (planner): index.DefaultPartitionsAtOnce when 0, other values in
	// tests.
	partitionsAtOnce int
	// schemaStates, idMaps and unknownIDs are the schemas' (schemas.go):
	// per source topic what was registered, per target topic the ids to
	// rewrite, and the framed-looking records whose id is not recorded.
	schemaStates map[string]schemaState
	idMaps       map[string]schemas.Map
	unknownIDs   atomic.Int64
	// rewrittenListed holds the listed keys (Config.ExcludeKeys) as
	// produced with a rewritten schema id (rewriteIDs): a few per listed
	// key.
	rewrittenListed sync.Map
	// planReads counts the objects plans read (proofRead).
	planReads atomic.Int64
	// oneRead is set by Plan (readsOnce): its plans read each indexed
	// object once, when it is restored (oneread.go).
	oneRead bool
	// streams holds, in follow mode, a summary of each source partition's
	// stream as the last pass restored it (checkStreams).
	streams map[topicPartition]streamSummary
	// damaged holds, in follow mode, the indexed objects a completed pass
	// found damaged and skipped (behavior.on.error ignore or log):
	// restoredEntry leaves them to be read again.
	damaged map[string]bool
	// tails holds, in follow mode, each topic's archive index as the last
	// plan read it (eachIndexedPartition): a later plan reads only what
	// was added.
	tails map[string]*index.Tail
	// whole makes a plan leave nothing out below the partitions' marks
	// (follow mode, prune.go): set while Plan plans again a pruned plan
	// that could not be made.
	whole  bool
	warned map[string]bool
	deps   *outage.Tracker // the dependencies' states (Config.Health)
	// limit paces production (Config.MaxBytesPerSec, MaxRecordsPerSec);
	// nil: no limit.
	limit *throttle.Limiter
	// groupQueries are, in a filtering run with --restore-groups, the
	// group offsets of each source partition; keptCounts what its stream
	// counted before each (filter.go).
	groupQueries map[topicPartition][]int64
	keptCounts   map[topicPartition]map[int64]int64
}

type topicPartition struct {
	topic string
	part  int32
}

// partitionMemo is what this process restored into a target partition. On
// a later pass (follow mode), an unchanged marker and end offset show
// nobody else wrote in between, so the verification read is skipped.
type partitionMemo struct {
	start, end int64
}

// New checks cfg and returns a Restorer. It connects to nothing.
func New(cfg Config, store s3store.Store, log *slog.Logger) (*Restorer, error) {
	if log == nil {
		log = slog.New(slog.DiscardHandler)
	}
	if store == nil {
		return nil, fmt.Errorf("%w: no store", ErrInvalidConfig)
	}
	if err := checkConfig(&cfg); err != nil {
		return nil, err
	}
	cfg.setDefaults()
	r := &Restorer{
		cfg:          cfg,
		store:        store,
		log:          log,
		proved:       map[string]provedObject{},
		schemaStates: map[string]schemaState{},
		idMaps:       map[string]schemas.Map{},
		limits:       map[string]int32{},
		compacted:    map[string]bool{},
		retention:    map[string]retention{},
		cutoffs:      map[string]int64{},
		covered:      map[topicPartition]map[string]int64{},
		memo:         map[topicPartition]partitionMemo{},
		streams:      map[topicPartition]streamSummary{},
		damaged:      map[string]bool{},
		tails:        map[string]*index.Tail{},
		warned:       map[string]bool{},
		mem:          newMemBudget(min(int64(cfg.Parallelism)*cfg.SpillBytes, MaxRecordMemory)),
		deps:         outage.NewTracker(cfg.Health, 0),
	}
	if err := r.compile(); err != nil {
		return nil, err
	}
	limit, err := throttle.New(throttle.Config{BytesPerSec: cfg.MaxBytesPerSec, RecordsPerSec: cfg.MaxRecordsPerSec})
	if err != nil {
		return nil, fmt.Errorf("%w: %v", ErrInvalidConfig, err)
	}
	r.limit = limit
	for _, t := range cfg.Topics {
		if strings.Contains(t, cfg.Keys.DirectoryDelim) {
			return nil, fmt.Errorf("%w: topic %q contains directory.delim %q", ErrInvalidConfig, t, cfg.Keys.DirectoryDelim)
		}
	}
	return r, nil
}

// checkConfig checks the invariants a Restorer relies on; an empty
// OnError becomes OnErrorFail.
func checkConfig(cfg *Config) error {
	if cfg.Format == nil {
		return fmt.Errorf("%w: no format (format.class)", ErrInvalidConfig)
	}
	if err := cfg.Keys.Validate(); err != nil {
		return fmt.Errorf("%w: %w", ErrInvalidConfig, err)
	}
	if err := cfg.Shard.check(); err != nil {
		return err
	}
	switch {
	case len(cfg.Topics) > 0 && cfg.TopicsRegex != nil:
		return fmt.Errorf("%w: set topics or topics.regex, not both", ErrInvalidConfig)
	case len(cfg.Topics) == 0 && cfg.TopicsRegex == nil:
		return fmt.Errorf("%w: set topics or topics.regex to choose what to restore", ErrInvalidConfig)
	}
	switch cfg.OnError {
	case "":
		cfg.OnError = OnErrorFail
	case OnErrorFail, OnErrorIgnore, OnErrorLog:
	default:
		return fmt.Errorf("%w: behavior.on.error is %q, want fail, ignore or log", ErrInvalidConfig, cfg.OnError)
	}
	if cfg.Filter.Active() && cfg.Follow {
		return fmt.Errorf("%w: record filters (--key-regex, --header, --from, --exclude-action drop) do not work with --follow yet: "+
			"its positions count the archive's records, not the ones a filter keeps", ErrInvalidConfig)
	}
	if !cfg.Filter.From.IsZero() && cfg.Timestamps == TimestampsNow {
		return fmt.Errorf("%w: --from selects records by their archived timestamp, which --timestamps now replaces before the filter sees it; not supported together yet", ErrInvalidConfig)
	}
	if cfg.KeyEncoder != nil && (len(cfg.ExcludeKeys) > 0 || cfg.Filter.KeyRegex != nil) {
		return fmt.Errorf("%w: --exclude-keys-file and --key-regex match keys as archived, and typed keys (key.converter with a registry) are framed for the target first; not supported together yet", ErrInvalidConfig)
	}
	if cfg.SkipExpired && cfg.Follow {
		return fmt.Errorf("%w: --skip-expired does not work with --follow yet: its positions count the archive's records, not the ones it keeps", ErrInvalidConfig)
	}
	if cfg.SkipExpired && cfg.Timestamps == TimestampsNow {
		return fmt.Errorf("%w: --skip-expired with --timestamps now: records stamped now never expire; want one of them", ErrInvalidConfig)
	}
	if cfg.Filter.DropKeys && len(cfg.ExcludeKeys) == 0 {
		return fmt.Errorf("%w: --exclude-action drop without an erasure list (--exclude-keys-file)", ErrInvalidConfig)
	}
	if !cfg.Until.IsZero() && cfg.Follow {
		return fmt.Errorf("%w: --until restores a fixed point in time and --follow keeps restoring new records; want one of them", ErrInvalidConfig)
	}
	if cfg.RestoreGroups && cfg.Follow {
		return fmt.Errorf("%w: --restore-groups commits the group offsets of one moment once the records are restored, --follow never finishes; want one of them", ErrInvalidConfig)
	}
	if !cfg.DryRun && len(cfg.Brokers) == 0 {
		return fmt.Errorf("%w: no bootstrap.servers", ErrInvalidConfig)
	}
	return checkRepartition(cfg)
}

// setDefaults fills the unset tunables with their defaults.
func (cfg *Config) setDefaults() {
	if cfg.Parallelism <= 0 {
		cfg.Parallelism = DefaultParallelism
	}
	if cfg.VerifyRecords <= 0 {
		cfg.VerifyRecords = DefaultVerifyRecords
	}
	if cfg.PollInterval <= 0 {
		cfg.PollInterval = DefaultPollInterval
	}
	if cfg.RetryTimeout <= 0 {
		cfg.RetryTimeout = DefaultRetryTimeout
	}
	if cfg.TxnRecords <= 0 {
		cfg.TxnRecords = DefaultTxnRecords
	}
	if cfg.SpillBytes <= 0 {
		cfg.SpillBytes = DefaultSpillBytes
	}
}

// compile builds the full-match topic regexes and the topic and group
// renamers from the config.
func (r *Restorer) compile() error {
	var err error
	if r.topicsRe, err = fullMatch(r.cfg.TopicsRegex); err != nil {
		return err
	}
	if r.archiveRe, err = fullMatch(r.cfg.ArchiveTopicsRegex); err != nil {
		return err
	}
	if r.rename, err = newRenamer(r.cfg.RenameRegex, r.cfg.Rename); err != nil {
		return err
	}
	if r.groupRename, err = newGroupRenamer(r.cfg.GroupRenameRegex, r.cfg.GroupRename); err != nil {
		return err
	}
	return nil
}

// Run plans the restore, checks the targets and restores every partition,
// then returns the summary. With Config.DryRun it only plans (and checks
// the feedback-loop guard). With Config.Follow it then polls the archive
// every PollInterval and restores new objects until ctx is cancelled; a
// cancel between passes returns the summary and a nil error, a cancel
// during a pass returns the context's error.
//
// progress may be nil.
func (r *Restorer) Run(ctx context.Context, progress Progress) (sum Summary, err error) {
	if progress == nil {
		progress = nopProgress{}
	}
	start := time.Now()
	sum.DryRun = r.cfg.DryRun
	sum.KeysSkipped = map[string]int{}
	defer func() {
		sum.Duration = time.Since(start)
		sum.SchemaIDsUnknown, sum.Schemas = r.unknownIDs.Load(), r.schemasMapped()
		progress.Finish(sum)
	}()

	plan, err := r.firstPlan(ctx)
	if err != nil {
		return sum, err
	}
	sum.addPlan(plan)
	if err := r.checkPlan(plan); err != nil || r.cfg.DryRun {
		return sum, err // a dry run only plans
	}
	groups, err := r.groupsToRestore(ctx, plan)
	if err != nil {
		return sum, err
	}
	if r.cfg.Filter.Active() {
		r.groupQueries = groupOffsets(groups)
	}
	r.reportSkips(plan)
	if _, err := r.prepareSchemas(ctx, plan, false); err != nil {
		return sum, err
	}

	cl, err := r.newProducer()
	if err != nil {
		return sum, err
	}
	defer cl.Close()
	adm := kadm.NewClient(cl)
	// Refuse groups with members before producing, and again before
	// committing (commitGroups).
	if err := r.checkGroupsIdle(ctx, adm, groups); err != nil {
		return sum, err
	}
	return sum, r.passes(ctx, cl, adm, plan, groups, progress, &sum)
}

// passes runs the passes of plan, then, in follow mode, of a new plan every
// PollInterval. A pass or plan that fails there for a reason that passes
// on its own (rideOut) is planned and run again after a backoff.
func (r *Restorer) passes(ctx context.Context, cl *kgo.Client, adm *kadm.Client, plan *Plan, groups []GroupPlan, progress Progress, sum *Summary) error {
	backoff := outage.Backoff{Min: followMinBackoff, Max: followMaxBackoff}
	var err error
	for first := true; plan != nil; first = false {
		wait := true
		err = r.pass(ctx, cl, adm, plan, progress, sum, first)
		if err == nil {
			r.passed()
			backoff.Reset()
			r.rememberStreams(plan)
			if !r.cfg.Follow {
				return r.finishGroups(ctx, adm, groups, sum)
			}
		} else if !r.rideOut(ctx, err, &backoff) {
			return err
		} else {
			wait = false // plan again at once
		}
		for {
			plan, err = r.nextPlan(ctx, sum, wait)
			if err == nil || !r.rideOut(ctx, err, &backoff) {
				break
			}
			wait = false
		}
		if err != nil {
			return err
		}
	}
	return nil
}

// checkPlan refuses a plan before anything is produced: the feedback-loop
// guard (checkGuard), then Check.
func (r *Restorer) checkPlan(plan *Plan) error {
	if err := r.checkGuard(plan); err != nil {
		return err
	}
	return r.Check(plan)
}

// nextPlan waits Config.PollInterval (with wait), plans again and checks
// the plan (follow mode). It returns nil and no error when ctx is
// cancelled meanwhile.
func (r *Restorer) nextPlan(ctx context.Context, sum *Summary, wait bool) (*Plan, error) {
	poll := r.cfg.PollInterval
	if !wait {
		poll = 0
	}
	select {
	case <-ctx.Done():
		return nil, nil
	case <-time.After(poll):
	}
	plan, err := r.Plan(ctx)
	if err != nil {
		if ctx.Err() != nil {
			return nil, nil
		}
		return nil, err
	}
	sum.addPlan(plan)
	if err := r.checkPlan(plan); err != nil {
		return nil, err
	}
	if err := r.checkStreams(plan); err != nil {
		return nil, err
	}
	r.reportSkips(plan)
	return plan, nil
}

// groupsToRestore plans the consumer groups to restore
// (Config.RestoreGroups; none without it). Their snapshots are read and
// translated before anything is produced: a missing snapshot stops the run
// there.
func (r *Restorer) groupsToRestore(ctx context.Context, plan *Plan) ([]GroupPlan, error) {
	if !r.cfg.RestoreGroups {
		return nil, nil
	}
	return r.PlanGroups(ctx, plan)
}

// finishGroups commits the restored consumer groups' offsets
// (Config.RestoreGroups) once every record is restored, and records them
// in sum.
func (r *Restorer) finishGroups(ctx context.Context, adm *kadm.Client, groups []GroupPlan, sum *Summary) error {
	if !r.cfg.RestoreGroups {
		return nil
	}
	if r.cfg.Filter.Active() {
		if err := r.keptBefore(groups); err != nil {
			return err
		}
	}
	n, err := r.commitGroups(ctx, adm, groups)
	sum.Groups = n
	sum.GroupOffsets = groups
	return err
}

// producerBufferBytes bounds the records the producer holds until the
// broker acknowledges them (kgo.MaxBufferedBytes; franz-go's own bound of
// 50,000 records applies too). 32 MiB is several in-flight batches of
// 1 MiB for each of the Parallelism partitions being produced; 128 MiB
// held about 50 MB of 1 KiB records (the record bound) for no more speed
// (BENCHMARKS.md, "Restore memory").
const producerBufferBytes = 32 << 20

// newProducer builds the idempotent producer: acks=all, records go to the
// partition they name, topics are never auto-created.
func (r *Restorer) newProducer() (*kgo.Client, error) {
	return r.producer(producerBufferBytes)
}

// producer builds a producer with the options every restore producer has
// (acks=all, records go to the partition they name, batches follow each
// target's max.message.bytes, describeLimits) and buffer bytes, then
// extra options, then Config.KafkaOpts.
func (r *Restorer) producer(buffer int, extra ...kgo.Opt) (*kgo.Client, error) {
	opts := append([]kgo.Opt{
		kgo.SeedBrokers(r.cfg.Brokers...),
		kgo.RecordPartitioner(kgo.ManualPartitioner()),
		kgo.RequiredAcks(kgo.AllISRAcks()),
		kgo.MaxBufferedBytes(buffer),
		kgo.ProducerBatchMaxBytesFn(r.batchBytes),
		kgo.WithHooks(producerHooks{r.deps}),
		kgo.RetryBackoffFn(clientBackoff),
	}, extra...)
	cl, err := kgo.NewClient(append(opts, r.cfg.KafkaOpts...)...)
	if err != nil {
		return nil, fmt.Errorf("kafka client: %w", err)
	}
	return cl, nil
}

// clientBackoff is the restore client's wait before its fails-th retry of a
// request (kgo.RetryBackoffFn): 25 ms, doubling to at most 5 s, each
// within ±20%. franz-go's default starts at 250 ms, and a topic the pass
// has just created answers the first ListOffsets with
// NOT_LEADER_OR_FOLLOWER for a moment: the end offsets of every created
// target took a quarter second longer than the topic needed. The waits
// reach franz-go's cap (5 s) four retries later than its default does, so
// an outage is still retried at the same slow pace after the first few
// seconds.
func clientBackoff(fails int) time.Duration {
	d := 25 * time.Millisecond
	for i := 1; i < fails && d < 5*time.Second; i++ {
		d *= 2
	}
	d = min(d, 5*time.Second)
	return d*4/5 + time.Duration(rand.Int64N(int64(d*2/5)+1))
}

// checkGuard refuses targets that the same config archives.
func (r *Restorer) checkGuard(plan *Plan) error {
	if r.cfg.AllowSameTopic {
		return nil
	}
	var bad []string
	for _, t := range plan.Topics {
		if r.archived(t.Target) {
			bad = append(bad, t.Target)
		}
	}
	if len(bad) == 0 {
		return nil
	}
	return fmt.Errorf("%w: %s would be archived again by this config's topics/topics.regex, a feedback loop; "+
		"rename the target (--topic-rename) or pass --allow-same-topic", ErrFeedbackLoop, quoteList(bad))
}

func (r *Restorer) archived(topic string) bool {
	for _, t := range r.cfg.ArchiveTopics {
		if t == topic {
			return true
		}
	}
	return r.archiveRe != nil && r.archiveRe.MatchString(topic)
}

// checkTargets verifies (or creates) the target topics before anything is
// produced.
func (r *Restorer) checkTargets(ctx context.Context, cl *kgo.Client, adm *kadm.Client, topics []*TopicPlan) error {
	names := make([]string, len(topics))
	want := map[string]int32{}
	for i, t := range topics {
		names[i] = t.Target
		want[t.Target] = t.Partitions
	}
	details, missing, err := r.describeTargets(ctx, adm, names)
	if err != nil {
		return err
	}
	if err := r.checkPartitionsFlag(names, missing, details); err != nil {
		return err
	}
	if len(missing) > 0 {
		if !r.cfg.CreateTopics {
			return fmt.Errorf("%w: %s; create them or pass --create-topics", ErrMissingTopics, quoteList(missing))
		}
		if err := r.createTargets(ctx, adm, topics, missing, want); err != nil {
			return err
		}
		// kadm caches metadata (MetadataMinAge); forget what it cached
		// about the topics before they existed.
		cl.PurgeTopicsFromClient(missing...)
		if details, err = waitTopics(ctx, adm, names, want, r.cfg.RetryTimeout); err != nil {
			return err
		}
	}
	return r.checkPartitionCounts(names, details, want)
}

// describeTargets describes the target topics names and returns the
// missing ones.
func (r *Restorer) describeTargets(ctx context.Context, adm *kadm.Client, names []string) (kadm.TopicDetails, []string, error) {
	var details kadm.TopicDetails
	err := r.retry(ctx, "describe target topics "+quoteList(names), nil, func(ctx context.Context) error {
		var err error
		details, err = adm.ListTopics(ctx, names...)
		return err
	})
	if err != nil {
		return nil, nil, fmt.Errorf("describe target topics %s: %w", quoteList(names), err)
	}
	var missing []string
	for _, name := range names {
		d, ok := details[name]
		if !ok || errors.Is(d.Err, kerr.UnknownTopicOrPartition) {
			missing = append(missing, name)
			continue
		}
		if d.Err != nil {
			return nil, nil, fmt.Errorf("describe target topic %q: %w", name, d.Err)
		}
	}
	return details, missing, nil
}

// createTargets creates the missing targets (Config.CreateTopics) as
// their setups say, setting their partition counts in want. Every
// creation is validated, and records without a key bound for a
// compacting one refused, before the first is made.
func (r *Restorer) createTargets(ctx context.Context, adm *kadm.Client, topics []*TopicPlan, missing []string, want map[string]int32) error {
	brokers, err := r.brokerCount(ctx, adm)
	if err != nil {
		return fmt.Errorf("list the target brokers: %w", err)
	}
	setups := map[string]TopicSetup{}
	var creating []*TopicPlan
	for _, t := range topics {
		if slices.Contains(missing, t.Target) {
			s := r.createSetup(t, brokers)
			setups[t.Target] = s
			want[t.Target] = s.Partitions
			creating = append(creating, t)
		}
	}
	if err := r.validateCreates(ctx, adm, missing, setups); err != nil {
		return err
	}
	if err := r.checkNullKeys(creating, func(target string) bool { return compacts(setups[target].Configs["cleanup.policy"]) }); err != nil {
		return err
	}
	for _, name := range missing {
		if err := r.createTopic(ctx, adm, name, setups[name]); err != nil {
			return err
		}
	}
	return nil
}

// createSetup is r.setup for a target to create, warning about a capped
// replication factor and a topic the archive does not describe.
func (r *Restorer) createSetup(t *TopicPlan, brokers int) TopicSetup {
	s := r.setup(t, brokers)
	if s.CappedFrom > 0 {
		r.log.Warn("the replication factor of a created topic is capped at the number of brokers",
			"topic", t.Target, "replication_factor", s.CappedFrom, "brokers", brokers)
	}
	if t.Described == nil {
		r.log.Warn("the archive has no description of the topic (older kafkas3, or Confluent's connector): creating it with the archive's partition count and the broker's default configs",
			"topic", t.Target, "source", t.Source, "partitions", s.Partitions)
	}
	return s
}

// createTopic creates one target topic, retrying transient errors; a
// topic that exists by then (a retry after a create that went through)
// is fine.
func (r *Restorer) createTopic(ctx context.Context, adm *kadm.Client, name string, s TopicSetup) error {
	err := r.retry(ctx, fmt.Sprintf("create target topic %q", name), nil, func(ctx context.Context) error {
		resp, err := adm.CreateTopics(ctx, s.Partitions, s.ReplicationFactor, configPtrs(s.Configs), name)
		if err == nil {
			err = resp.Error()
		}
		if errors.Is(err, kerr.TopicAlreadyExists) {
			return nil // a retry after a create that went through
		}
		return err
	})
	if err != nil {
		return fmt.Errorf("create target topic %q with %d partitions: %w", name, s.Partitions, err)
	}
	r.log.Info("created target topic", "topic", name, "partitions", s.Partitions,
		"replication_factor", rfText(s.ReplicationFactor), "configs", configText(s.Configs))
	return nil
}

// checkPartitionCounts refuses a target with fewer partitions than the
// archive and warns, once per process, about one with more.
func (r *Restorer) checkPartitionCounts(names []string, details kadm.TopicDetails, want map[string]int32) error {
	if r.cfg.Repartition != RepartitionNone {
		return nil // any count
	}
	for _, name := range names {
		have := int32(len(details[name].Partitions))
		switch {
		case have < want[name]:
			return fmt.Errorf("%w: %q has %d partitions, the archive has %d; add partitions (kafka-topics --alter --partitions %d), "+
				"restore into another topic, or spread the records over its %d partitions with --repartition murmur2 (by key, as Kafka's producer) or roundrobin",
				ErrTooFewPartitions, name, have, want[name], want[name], have)
		case have > want[name]:
			r.mu.Lock()
			warn := !r.warned[name]
			r.warned[name] = true
			r.mu.Unlock()
			if warn {
				r.log.Warn("target topic has more partitions than the archive; the extra partitions get nothing (--repartition spreads the records over all of them)",
					"topic", name, "target_partitions", have, "archive_partitions", want[name])
			}
		}
	}
	return nil
}

// waitTopics waits, at most timeout, until freshly created topics show all
// their partitions with leaders in the metadata.
func waitTopics(ctx context.Context, adm *kadm.Client, names []string, want map[string]int32, timeout time.Duration) (kadm.TopicDetails, error) {
	ctx, cancel := context.WithTimeout(ctx, timeout)
	defer cancel()
	for {
		details, err := adm.ListTopics(ctx, names...)
		ready := err == nil
		if ready {
			for _, n := range names {
				d := details[n]
				if d.Err != nil || int32(len(d.Partitions)) < want[n] {
					ready = false
					break
				}
				for _, p := range d.Partitions {
					if p.Leader < 0 || p.Err != nil {
						ready = false
					}
				}
			}
		}
		if ready {
			return details, nil
		}
		select {
		case <-ctx.Done():
			if err == nil {
				err = ctx.Err()
			}
			return nil, fmt.Errorf("wait for created topics %s: %w", quoteList(names), err)
		case <-time.After(100 * time.Millisecond):
		}
	}
}

// job is one target partition's share of a pass.
type job struct {
	topic *TopicPlan
	part  PartitionPlan
	// start is where the plan's first record lands: E0, from the marker,
	// plus the records of the stream before it (follow mode:
	// PartitionPlan.base); marker is E0.
	start, marker int64
	end           int64 // end offset at the start of the pass
	low           int64 // log start offset at the start of the pass
	trust         bool  // this process wrote up to end: no verification read
	// filtered: Config.Filter or --skip-expired leaves records out, so
	// nothing is skipped unread (skipUnread).
	filtered bool
	// repart is the target's partitioning when repartitioning (nil
	// otherwise); tx the stream's transactional producer, which openTxn
	// gives it when it starts.
	repart *repartTarget
	tx     *txnStream
	// expiredBefore is the --skip-expired cutoff (Unix ms, from the
	// marker; 0: none): records stamped before it are left out.
	expiredBefore int64
}

// pass restores everything the plan holds that the targets do not.
// Records the first pass finds in the targets count as AlreadyPresent;
// later passes (follow mode) skip what this run restored itself.
func (r *Restorer) pass(ctx context.Context, cl *kgo.Client, adm *kadm.Client, plan *Plan, progress Progress, sum *Summary, first bool) error {
	topics := r.topicsWithObjects(plan)
	progress.Planned(Totals{Objects: plan.Objects(), Bytes: plan.Bytes(), Limit: plan.RateLimit})
	if len(topics) == 0 {
		return nil
	}
	if first {
		r.warnDifferences(ctx, adm, topics)
	} else if _, err := r.prepareSchemas(ctx, plan, false); err != nil {
		return err // follow mode: schemas recorded since the last pass
	}
	if err := r.checkPassTargets(ctx, cl, adm, topics); err != nil {
		return err
	}
	if first {
		r.warnExpired(topics)
	}
	var jobs []job
	for _, t := range topics {
		tj, err := r.prepareTopic(ctx, cl, adm, t)
		if err != nil {
			return err
		}
		jobs = append(jobs, tj...)
	}
	if err := pastCutError(jobs); err != nil {
		return err
	}
	return r.runJobs(ctx, cl, jobs, progress, sum, first)
}

// topicsWithObjects returns the plan's topics that have objects to
// restore, warning about the others.
//
// In follow mode a topic whose plan holds nothing new but starts at marks
// (prune.go: earlier passes restored it) is kept: its pass checks the
// targets and commits its resume markers again, so they do not expire
// under offsets.retention.minutes while the topic is quiet.
func (r *Restorer) topicsWithObjects(plan *Plan) []*TopicPlan {
	var topics []*TopicPlan
	for i := range plan.Topics {
		t := &plan.Topics[i]
		if t.Objects == 0 && !t.marked() {
			r.log.Warn("archived topic has no objects to restore", "topic", t.Source,
				"prefix", r.cfg.Keys.TopicPrefix(t.Source))
			continue
		}
		topics = append(topics, t)
	}
	return topics
}

// marked tells whether a partition of t's plan starts at a mark (follow
// mode).
func (t *TopicPlan) marked() bool {
	for i := range t.Parts {
		if t.Parts[i].base != nil {
			return true
		}
	}
	return false
}

// checkPassTargets checks the targets before a pass produces anything:
// they exist (or are created) with enough partitions, their
// max.message.bytes take the largest records, and compacting ones get no
// record without a key.
func (r *Restorer) checkPassTargets(ctx context.Context, cl *kgo.Client, adm *kadm.Client, topics []*TopicPlan) error {
	if err := r.checkTargets(ctx, cl, adm, topics); err != nil {
		return err
	}
	if err := r.describeLimits(ctx, adm, topics); err != nil {
		return err
	}
	if err := r.checkRecordSizes(topics); err != nil {
		return err
	}
	return r.checkNullKeys(topics, func(target string) bool {
		r.mu.Lock()
		defer r.mu.Unlock()
		return r.compacted[target]
	})
}

// runJobs restores the jobs' partitions, adding their results to sum:
// Config.Parallelism partitions at a time are read and handed to the
// producer. A partition whose records are all handed over waits for their
// acknowledgements without holding its place, so the next one starts. The
// first error stops every stream and is returned.
func (r *Restorer) runJobs(ctx context.Context, cl *kgo.Client, jobs []job, progress Progress, sum *Summary, first bool) error {
	ctx, cancel := context.WithCancelCause(ctx)
	defer cancel(nil)
	var wg, acks sync.WaitGroup
	var mu sync.Mutex
	run := func(j job) {
		if j.repart != nil {
			var err error
			if j, err = r.openTxn(ctx, j); err != nil {
				cancel(err)
				return
			}
		}
		s := r.producePartition(ctx, cl, j, progress)
		if err := context.Cause(s.ctx); err != nil {
			cancel(err) // stop the others now, not once this one's records are acknowledged
		}
		if s.damaged != "" {
			mu.Lock()
			sum.DamagedFound = append(sum.DamagedFound, s.damaged)
			mu.Unlock()
		}
		acks.Go(func() {
			res, err := s.finish()
			mu.Lock()
			sum.Records += res.records
			sum.Bytes += res.bytes
			sum.Erased += res.erased
			sum.Filtered += res.filtered
			sum.Expired += res.expired
			if first {
				sum.AlreadyPresent += res.skipped
			}
			mu.Unlock()
			if err != nil {
				cancel(err)
			}
		})
	}
	work := make(chan job)
	for range min(r.cfg.Parallelism, len(jobs)) {
		wg.Go(func() {
			for j := range work {
				run(j)
			}
		})
	}
	for _, j := range jobs {
		select {
		case work <- j:
		case <-ctx.Done():
		}
	}
	close(work)
	wg.Wait()
	acks.Wait()
	return context.Cause(ctx)
}

// prepareTopic reads and checks the target's markers and offsets, and
// writes the markers of partitions that have none, before anything is
// produced to them. Existing markers are committed again so they do not
// expire under offsets.retention.minutes while the restore is in use.
func (r *Restorer) prepareTopic(ctx context.Context, cl *kgo.Client, adm *kadm.Client, t *TopicPlan) ([]job, error) {
	markers, err := r.readMarkers(ctx, adm, t.Target)
	if err != nil {
		return nil, err
	}
	if r.cfg.Repartition != RepartitionNone {
		return r.prepareRepartition(ctx, adm, t, markers)
	}
	if err := refuseRepartitioned(t.Target, markers); err != nil {
		return nil, err
	}
	ends, starts, err := r.listTargetOffsets(ctx, cl, adm, t)
	if err != nil {
		return nil, err
	}
	commit := map[int32]marker{}
	cutoff := r.expiryCutoff(t.Target, markers)
	var jobs []job
	for _, pp := range t.Parts {
		end, ok := ends.Lookup(t.Target, pp.Partition)
		if !ok {
			return nil, fmt.Errorf("no end offset for %s/%d", t.Target, pp.Partition)
		}
		low, _ := starts.Lookup(t.Target, pp.Partition)
		m, err := r.partitionMarker(t, pp.Partition, markers, end.Offset, low.Offset)
		if err != nil {
			return nil, err
		}
		_, existing := markers[pp.Partition]
		if err := r.checkExpiryMarker(&m, existing, t.Target, pp.Partition, end.Offset, cutoff); err != nil {
			return nil, err
		}
		if id := r.streamID(&pp); id != "" {
			if existing && end.Offset > m.Start && m.Stream != "" && m.Stream != id {
				return nil, otherStream(fmt.Sprintf("the restore into %s/%d", t.Target, pp.Partition), end.Offset-m.Start, "marker group "+strconv.Quote(MarkerGroup(t.Target)))
			}
			m.Stream = id
		}
		commit[pp.Partition] = m
		r.mu.Lock()
		memo, seen := r.memo[topicPartition{t.Target, pp.Partition}]
		r.mu.Unlock()
		start := m.Start + pp.baseRecords()
		if end.Offset < start {
			return nil, fmt.Errorf("%w: %s/%d ends at offset %d, but earlier passes of this run restored %d records after the restore's start offset %d (marker group %q): "+
				"the topic was deleted, recreated or truncated meanwhile",
				ErrForeignWrite, t.Target, pp.Partition, end.Offset, pp.baseRecords(), m.Start, MarkerGroup(t.Target))
		}
		jobs = append(jobs, job{
			topic: t, part: pp, start: start, marker: m.Start, end: end.Offset, low: low.Offset,
			trust:         seen && memo.start == m.Start && memo.end == end.Offset,
			filtered:      r.cfg.Filter.Active() || m.ExpiredBefore > 0,
			expiredBefore: m.ExpiredBefore,
		})
	}
	if err := r.writeMarkers(ctx, adm, t.Target, commit); err != nil {
		return nil, err
	}
	return jobs, nil
}

// listTargetOffsets lists the end and log start offsets of t's target,
// until every partition of the plan has an end offset. A topic just
// created, or a leader that moves, answers UNKNOWN_TOPIC_OR_PARTITION or
// NOT_LEADER_OR_FOLLOWER for a moment: retried, with the client's cached
// metadata dropped each time.
func (r *Restorer) listTargetOffsets(ctx context.Context, cl *kgo.Client, adm *kadm.Client, t *TopicPlan) (ends, starts kadm.ListedOffsets, err error) {
	purge := func() { cl.PurgeTopicsFromClient(t.Target) }
	err = r.retry(ctx, fmt.Sprintf("list offsets of %q", t.Target), purge, func(ctx context.Context) error {
		var err error
		if ends, err = adm.ListEndOffsets(ctx, t.Target); err == nil {
			err = ends.Error()
		}
		if err != nil {
			return fmt.Errorf("list end offsets of %q: %w", t.Target, err)
		}
		if starts, err = adm.ListStartOffsets(ctx, t.Target); err == nil {
			err = starts.Error()
		}
		if err != nil {
			return fmt.Errorf("list start offsets of %q: %w", t.Target, err)
		}
		for _, pp := range t.Parts {
			if _, ok := ends.Lookup(t.Target, pp.Partition); !ok {
				return fmt.Errorf("no end offset for %s/%d: %w", t.Target, pp.Partition, kerr.UnknownTopicOrPartition)
			}
		}
		return nil
	})
	if err != nil {
		return nil, nil, err
	}
	return ends, starts, nil
}

// partitionMarker returns the resume marker of target partition p, whose
// end and log start offsets are end and low: the one read, or a new one
// starting at end. A marker of another archive or source topic, or one
// past the end (the topic was recreated or truncated), is refused. A
// marker this process wrote that is gone (its offsets expired under
// offsets.retention.minutes) is this process's start again (memo), never
// a fresh start at the end.
func (r *Restorer) partitionMarker(t *TopicPlan, p int32, markers map[int32]marker, end, low int64) (marker, error) {
	group := MarkerGroup(t.Target)
	m, ok := markers[p]
	r.mu.Lock()
	memo, seen := r.memo[topicPartition{t.Target, p}]
	r.mu.Unlock()
	switch {
	case !ok && seen:
		m = marker{Start: memo.start, Archive: r.cfg.Identity, Source: t.Source}
		r.log.Warn("the target partition's resume marker is gone (expired under offsets.retention.minutes?); committing this run's again",
			"topic", t.Target, "partition", p, "marker_group", group, "start_offset", memo.start)
		if end < m.Start {
			return m, fmt.Errorf("%w: %s/%d ends at offset %d, before this run's start offset %d (marker group %q): "+
				"the topic was deleted, recreated or truncated", ErrForeignWrite, t.Target, p, end, m.Start, group)
		}
	case !ok:
		m = marker{Start: end, Archive: r.cfg.Identity, Source: t.Source}
		if end > low {
			r.log.Info("target partition is not empty; restoring after its records",
				"topic", t.Target, "partition", p, "records", end-low)
		}
	case m.Archive != r.cfg.Identity || m.Source != t.Source:
		return m, fmt.Errorf("%w: %s/%d was restored from topic %q of archive %q (marker group %q), "+
			"this run restores topic %q of archive %q; restore into another topic, "+
			"or delete the group (kafka-consumer-groups --delete --group %s) to append anyway",
			ErrMarkerMismatch, t.Target, p, m.Source, m.Archive, group, t.Source, r.cfg.Identity, group)
	case end < m.Start:
		return m, fmt.Errorf("%w: %s/%d ends at offset %d, before the restore's start offset %d (marker group %q): "+
			"the topic was deleted, recreated or truncated; delete the group to start over",
			ErrForeignWrite, t.Target, p, end, m.Start, group)
	}
	return m, nil
}

func quoteList(names []string) string {
	s := append([]string(nil), names...)
	sort.Strings(s)
	q := make([]string, len(s))
	for i, n := range s {
		q[i] = fmt.Sprintf("%q", n)
	}
	return strings.Join(q, ", ")
}
