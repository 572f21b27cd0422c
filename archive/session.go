package archive

import (
	"context"
	"errors"
	"fmt"
	"net"
	"regexp"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/kafkas3/kafkas3/index"
	"github.com/kafkas3/kafkas3/outage"
	"github.com/kafkas3/kafkas3/s3store"
	"github.com/twmb/franz-go/pkg/kadm"
	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kgo"
)

// session is one consumer-group membership: from join to shutdown or failure.
type session struct {
	s      *Sink
	cl     *kgo.Client
	ctx    context.Context
	cancel context.CancelCauseFunc

	mu      sync.Mutex
	workers map[tp]*worker
	targets map[tp]int64 // --once: end offsets seen at start
	done    map[tp]bool  // --once: partitions archived up to their target
	// logStarts are, for --once, the log start offsets of partitions
	// with nothing to read whose committed offset is below them
	// (lostOnly, lost.go).
	logStarts map[tp]int64

	budget       *budget       // bytes of fetched records in flight to workers
	uploads      chan struct{} // upload slots of the workers' rotations (MaxUploads)
	dlq          *kgo.Client   // dead letter queue producer; nil without a DLQ topic
	commitSerial sync.Mutex    // one commit request at a time
	commitMu     sync.Mutex    // guards toCommit and committed
	toCommit     map[tp]kgo.EpochOffset
	committed    map[tp]int64
	doneCh       chan struct{}
	// pollCtx is ctx, also cancelled when --once is done.
	pollCtx    context.Context
	pollCancel context.CancelFunc
}

func (s *Sink) clientOpts(ss *session) []kgo.Opt {
	opts := []kgo.Opt{
		kgo.SeedBrokers(s.cfg.Brokers...),
		kgo.ConsumerGroup(s.cfg.GroupID),
		kgo.Balancers(kgo.CooperativeStickyBalancer()),
		kgo.DisableAutoCommit(),
		kgo.BlockRebalanceOnPoll(),
		kgo.KeepControlRecords(),
		kgo.FetchIsolationLevel(s.isolation()),
		kgo.ConsumeResetOffset(kgo.NewOffset().AtStart()),
		kgo.FetchMaxBytes(16 << 20),
		kgo.FetchMaxPartitionBytes(1 << 20),
		kgo.OnPartitionsAssigned(ss.assigned),
		kgo.OnPartitionsRevoked(ss.revoked),
		kgo.OnPartitionsLost(ss.lost),
	}
	stopped := s.ids.stopped() // topics whose archiving is stopped (identity.go)
	if s.cfg.TopicsRegex != "" {
		// topics.regex matches whole names, as in Kafka Connect; new
		// matching topics are found at each metadata refresh.
		opts = append(opts, kgo.ConsumeTopics("^(?:"+s.cfg.TopicsRegex+")$"), kgo.ConsumeRegex(),
			kgo.MetadataMaxAge(regexMetadataMaxAge))
		for _, t := range stopped {
			opts = append(opts, kgo.ConsumeExcludeTopics("^"+regexp.QuoteMeta(t)+"$"))
		}
	} else {
		opts = append(opts, kgo.ConsumeTopics(s.ids.without(s.cfg.Topics)...))
	}
	return append(opts, s.cfg.KafkaOpts...)
}

// isolation is the consumer's isolation level. With read_committed (the
// default) aborted transactional records never reach the archive (their
// offsets are absent from the index's runs, like the markers').
func (s *Sink) isolation() kgo.IsolationLevel {
	if s.cfg.ReadUncommitted {
		return kgo.ReadUncommitted()
	}
	return kgo.ReadCommitted()
}

// Ping checks that a broker answers, naming the addresses when none does.
func ping(ctx context.Context, cl *kgo.Client, brokers []string) error {
	pctx, cancel := context.WithTimeout(ctx, 20*time.Second)
	defer cancel()
	if err := cl.Ping(pctx); err != nil {
		if ctx.Err() != nil {
			return ctx.Err()
		}
		return kafkaError(fmt.Errorf("cannot reach Kafka at %s (bootstrap.servers): %w", strings.Join(brokers, ","), err))
	}
	return nil
}

func (s *Sink) session(parent context.Context) error {
	ctx, cancel := context.WithCancelCause(parent)
	defer cancel(nil)
	ss := &session{
		s: s, ctx: ctx, cancel: cancel,
		workers:   map[tp]*worker{},
		done:      map[tp]bool{},
		toCommit:  map[tp]kgo.EpochOffset{},
		committed: map[tp]int64{},
		doneCh:    make(chan struct{}),
	}
	ss.pollCtx, ss.pollCancel = context.WithCancel(ctx)
	defer ss.pollCancel()
	ss.budget = newBudget(ctx, fetchBudget)
	ss.uploads = make(chan struct{}, MaxUploads)

	if err := ss.check(ctx); err != nil {
		return err
	}
	if s.cfg.Once && ss.allDone() {
		s.log.Info("nothing to archive: committed offsets are at the end offsets")
		return nil
	}
	if s.cfg.Errors.DLQTopic != "" {
		dlq, err := kgo.NewClient(append([]kgo.Opt{kgo.SeedBrokers(s.cfg.Brokers...), kgo.ProducerLinger(0)}, s.cfg.KafkaOpts...)...)
		if err != nil {
			return fmt.Errorf("kafka producer for errors.deadletterqueue.topic.name: %w", err)
		}
		ss.dlq = dlq
		defer dlq.Close()
	}
	cl, err := kgo.NewClient(s.clientOpts(ss)...)
	if err != nil {
		return fmt.Errorf("kafka client: %w", err)
	}
	ss.cl = cl
	defer cl.Close()

	commitDone := make(chan struct{})
	go func() { defer close(commitDone); ss.commitLoop() }()

	// Topic descriptions (recorded once by prepare): without --once,
	// again every TopicCheckInterval; failures only warn.
	topicsDone := make(chan struct{})
	go func() {
		defer close(topicsDone)
		if !s.cfg.Once {
			ss.topicLoop(ctx, kadm.NewClient(cl))
		}
	}()

	err = ss.poll()

	// Shutdown: stop every worker (completed files are committed, open
	// files aborted), then a final commit with a fresh deadline.
	ss.mu.Lock()
	ws := make([]*worker, 0, len(ss.workers))
	for _, w := range ss.workers {
		ws = append(ws, w)
	}
	clear(ss.workers)
	ss.mu.Unlock()
	for _, w := range ws {
		w.stop()
	}
	cancel(errSessionOver)
	<-commitDone
	<-topicsDone
	cctx, ccancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer ccancel()
	if cerr := ss.commitNow(cctx); cerr != nil && err == nil {
		err = cerr
	}
	lctx, lcancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer lcancel()
	_ = cl.LeaveGroupContext(lctx)
	return err
}

var errSessionOver = errors.New("session over")

// regexMetadataMaxAge bounds how long a new topic matching topics.regex
// waits before the sink starts archiving it.
const regexMetadataMaxAge = time.Minute

// prepare checks the brokers and topics, records the topic descriptions
// (recordTopics) and, for --once, records targets.
func (ss *session) prepare(ctx context.Context) error {
	opts := []kgo.Opt{kgo.SeedBrokers(ss.s.cfg.Brokers...), kgo.WithHooks(dialHook{ss.s.deps})}
	cl, err := kgo.NewClient(append(opts, ss.s.cfg.KafkaOpts...)...)
	if err != nil {
		return fmt.Errorf("kafka client: %w", err)
	}
	defer cl.Close()
	if err := ping(ctx, cl, ss.s.cfg.Brokers); err != nil {
		return err
	}
	ss.s.deps.Up(outage.Broker)
	adm := kadm.NewClient(cl)
	if err := ss.checkTopics(ctx, adm); err != nil {
		return err
	}
	if err := ss.ensureDLQ(ctx, adm); err != nil {
		return err
	}
	if err := ss.checkIdentity(ctx, adm); err != nil {
		return err
	}
	ss.recordTopics(ctx, adm)
	if ss.s.cfg.Once {
		return kafkaError(ss.captureTargets(ctx, adm))
	}
	return nil
}

// dialHook marks the brokers down when a connection to one fails. Only the
// client of prepare has it: while the checks run the brokers are not known
// to work, and --once's deadline (watchOnce) must count from the first
// failure. Later, one broker of several that stays away while the others
// work must not make the sink look down.
type dialHook struct{ deps *outage.Tracker }

func (h dialHook) OnBrokerConnect(meta kgo.BrokerMetadata, _ time.Duration, _ net.Conn, err error) {
	if err != nil && outage.Transient(err) {
		h.deps.Down(outage.Broker, fmt.Errorf("connect to broker %s: %w", net.JoinHostPort(meta.Host, strconv.Itoa(int(meta.Port))), err))
	}
}

// check checks the store and the brokers (prepare) at the start of a
// session; with --once, watchOnce counts from here.
func (ss *session) check(ctx context.Context) error {
	s := ss.s
	if s.cfg.Once {
		go ss.watchOnce()
	}
	s.deps.Expect(outage.Store, errors.New("no answer yet"))
	s.deps.Expect(outage.Broker, fmt.Errorf("no answer from %s yet", strings.Join(s.cfg.Brokers, ",")))
	if err := s.checkStore(ctx); err != nil {
		return err
	}
	// Checks and --once targets use a client outside the group: a group
	// client starts joining (and may be assigned partitions) at once.
	return ss.prepare(ctx)
}

// checkStore checks the store at the start of each session: a failure
// that passes on its own (s3store.Transient) is a *StoreError, which the
// sink retries.
func (s *Sink) checkStore(ctx context.Context) error {
	if err := s.store.Check(ctx); err != nil {
		if s3store.Transient(err) {
			return &StoreError{Err: err}
		}
		return err
	}
	s.deps.Up(outage.Store)
	return nil
}

// watchOnce ends the session (--once) with an *outage.UnreachableError
// once a dependency has been down for Config.OnceTimeout, whatever the
// session is waiting for.
func (ss *session) watchOnce() {
	t := time.NewTicker(250 * time.Millisecond)
	defer t.Stop()
	for {
		select {
		case <-ss.ctx.Done():
			return
		case <-t.C:
			if err := ss.s.deps.Overdue(); err != nil {
				ss.fail(err)
				return
			}
		}
	}
}

// checkTopics fails when a named topic does not exist.
func (ss *session) checkTopics(ctx context.Context, adm *kadm.Client) error {
	if len(ss.s.cfg.Topics) == 0 {
		return nil
	}
	md, err := adm.Metadata(ctx, ss.s.cfg.Topics...)
	if err != nil {
		return kafkaError(fmt.Errorf("kafka metadata: %w", err))
	}
	var missing []string
	for _, t := range ss.s.cfg.Topics {
		d, ok := md.Topics[t]
		if !ok || errors.Is(d.Err, kerr.UnknownTopicOrPartition) {
			missing = append(missing, t)
		} else if d.Err != nil {
			return fmt.Errorf("topic %s: %w", t, d.Err)
		}
	}
	if len(missing) > 0 {
		return fmt.Errorf("topics: %s: topic does not exist", strings.Join(missing, ", "))
	}
	return nil
}

// captureTargets records, for --once, each partition's end offset (its
// last stable offset, which is the end unless a transaction is open; the
// high watermark with ReadUncommitted), and
// marks partitions with nothing to archive as done, unless records were
// lost before archiving there (lostOnly).
func (ss *session) captureTargets(ctx context.Context, adm *kadm.Client) error {
	topics := ss.s.cfg.Topics
	if ss.s.cfg.TopicsRegex != "" {
		re, err := regexp.Compile("^(?:" + ss.s.cfg.TopicsRegex + ")$")
		if err != nil {
			return fmt.Errorf("topics.regex: %w", err)
		}
		all, err := adm.ListTopics(ctx)
		if err != nil {
			return fmt.Errorf("list topics: %w", err)
		}
		for _, t := range all.Names() {
			if re.MatchString(t) {
				topics = append(topics, t)
			}
		}
	}
	topics = ss.s.ids.without(topics)
	if len(topics) == 0 {
		ss.targets = map[tp]int64{}
		return nil
	}
	// The last stable offsets: a read_committed consumer reads up to
	// them (an open transaction's records wait for the next run). A
	// read_uncommitted one reads up to the high watermarks.
	list := adm.ListCommittedOffsets
	if ss.s.cfg.ReadUncommitted {
		list = adm.ListEndOffsets
	}
	ends, err := list(ctx, topics...)
	if err != nil {
		return fmt.Errorf("list end offsets: %w", err)
	}
	starts, err := adm.ListStartOffsets(ctx, topics...)
	if err != nil {
		return fmt.Errorf("list start offsets: %w", err)
	}
	committed, err := fetchCommitted(ctx, adm, ss.s.cfg.GroupID)
	if err != nil {
		return fmt.Errorf("fetch committed offsets of group %s: %w", ss.s.cfg.GroupID, err)
	}
	ss.targets = map[tp]int64{}
	var ferr error
	ends.Each(func(o kadm.ListedOffset) {
		if o.Err != nil {
			ferr = fmt.Errorf("end offset of %s[%d]: %w", o.Topic, o.Partition, o.Err)
			return
		}
		k := tp{o.Topic, o.Partition}
		ss.targets[k] = o.Offset
		logStart, at := int64(0), int64(-1)
		if so, ok := starts.Lookup(o.Topic, o.Partition); ok {
			logStart = so.Offset
		}
		if c, ok := committed.Lookup(o.Topic, o.Partition); ok {
			at = c.At
		}
		if max(logStart, at) >= o.Offset && !ss.lostOnly(k, at, logStart, o.Offset) {
			ss.done[k] = true
		}
	})
	if ferr != nil {
		return ferr
	}
	return listedEvery(topics, ss.targets)
}

// listedEvery reports an error, which the session retries as a broker's,
// when a topic to archive has no partition among the end offsets listed:
// --once would otherwise take it for a topic with nothing to archive and
// exit successfully having archived none of it.
func listedEvery(topics []string, targets map[tp]int64) error {
	for _, t := range topics {
		found := false
		for k := range targets {
			if k.topic == t {
				found = true
				break
			}
		}
		if !found {
			return fmt.Errorf("list end offsets: topic %s: no partition listed (its leaders are not known yet): %w", t, kerr.LeaderNotAvailable)
		}
	}
	return nil
}

// fetchCommitted returns the group's committed offsets (none for a group
// that does not exist yet). It retries retriable errors for up to 30 s: on
// a fresh cluster the coordinator answers COORDINATOR_NOT_AVAILABLE while
// it creates the offsets topic on first use.
func fetchCommitted(ctx context.Context, adm *kadm.Client, group string) (kadm.OffsetResponses, error) {
	deadline := time.Now().Add(30 * time.Second)
	for {
		committed, err := adm.FetchOffsets(ctx, group)
		if errors.Is(err, kerr.GroupIDNotFound) {
			return kadm.OffsetResponses{}, nil
		}
		if err == nil || !kerr.IsRetriable(err) || time.Now().After(deadline) {
			return committed, err
		}
		select {
		case <-ctx.Done():
			return nil, err
		case <-time.After(250 * time.Millisecond):
		}
	}
}

func (ss *session) allDone() bool {
	ss.mu.Lock()
	defer ss.mu.Unlock()
	for k := range ss.targets {
		if !ss.done[k] {
			return false
		}
	}
	return true
}

func (ss *session) markDone(k tp) {
	ss.mu.Lock()
	defer ss.mu.Unlock()
	if ss.done[k] {
		return
	}
	ss.done[k] = true
	for t := range ss.targets {
		if !ss.done[t] {
			return
		}
	}
	close(ss.doneCh)
	ss.pollCancel() // wake the poll loop
}

func (ss *session) fail(err error) { ss.cancel(err) }

// workerDeps is what the session's workers are given.
func (ss *session) workerDeps() workerDeps {
	return workerDeps{
		cfg: &ss.s.cfg, store: ss.s.store, log: ss.s.log, tally: &ss.s.tally, ckpt: ss.s.ckpt, outages: ss.s.deps,
		ctx: ss.ctx, budget: ss.budget, uploads: ss.uploads, dlq: ss.dlq, schemaRec: ss.s.schemaRec,
		fail: ss.fail, done: ss.markDone, committable: ss.setCommittable,
	}
}

func (ss *session) assigned(ctx context.Context, cl *kgo.Client, assigned map[string][]int32) {
	ss.s.deps.Up(outage.Broker) // joined the group
	// Each new worker starts from the committed offset the consumer
	// resumes from: the archive index's first span starts there, and
	// records lost before archiving are judged from it (lost.go).
	committed, err := fetchCommitted(ctx, kadm.NewClient(cl), ss.s.cfg.GroupID)
	if err != nil {
		ss.s.log.Warn("cannot fetch the committed offsets; each partition's index starts at its first record, and records lost before it are not detected", "err", err)
	}
	if ss.s.cfg.IndexPrefix != "" && ss.changedIdentity(ctx, cl, assigned) {
		ss.fail(errRecheck) // the next session checks the topics again
		return
	}
	ss.mu.Lock()
	defer ss.mu.Unlock()
	for t, ps := range assigned {
		cfg, topicID := ss.s.genConfig(t)
		for _, p := range ps {
			k := tp{t, p}
			target := int64(-1)
			if ss.s.cfg.Once {
				tg, ok := ss.targets[k]
				if !ok || ss.done[k] {
					// Not part of this run (new partition) or nothing to do.
					continue
				}
				target = tg
			}
			start := int64(-1)
			if c, ok := committed.Lookup(t, p); ok && c.Err == nil && c.At >= 0 {
				start = c.At
			}
			d := ss.workerDeps()
			d.cfg = cfg
			w := newWorker(d, k, start, target)
			w.pw.topicID = topicID
			ss.workers[k] = w
			ss.s.tally.assigned(k)
			ss.sendLostOnly(w)
			go w.run()
		}
	}
}

// changedIdentity reports whether an assigned topic's id differs from the
// one archived (recreated since the session's check), marking it suspect.
// A failed metadata request is left to the fetches.
func (ss *session) changedIdentity(ctx context.Context, cl *kgo.Client, assigned map[string][]int32) bool {
	topics := make([]string, 0, len(assigned))
	for t := range assigned {
		topics = append(topics, t)
	}
	md, err := kadm.NewClient(cl).Metadata(ctx, topics...)
	if err != nil {
		return false
	}
	changed := false
	for _, t := range topics {
		d, ok := md.Topics[t]
		if !ok || d.Err != nil {
			continue
		}
		id := index.FormatTopicID(d.ID)
		if ss.s.ids.of(t) == nil && !ss.s.adopt(ctx, t, id) {
			changed = true // a topic first seen now (topics.regex) whose archive names another id
			continue
		}
		if desc := (&index.Topic{Topic: t, TopicID: id}); ss.s.ids.changed(desc) {
			ss.s.ids.markSuspect(t, "its topic id changed to "+desc.TopicID)
			changed = true
		}
	}
	return changed
}

// adopt gives a topic first seen after the session's check (a new match of
// topics.regex) its identity: the archived one, or id when the archive
// records none (the next topic check records it). It reports false, marking
// the topic suspect, when the archive records another id; a store failure
// leaves the topic to the next session's check.
func (s *Sink) adopt(ctx context.Context, topic, id string) bool {
	ti, err := s.archivedIdentity(ctx, topic)
	if err != nil {
		s.ids.markSuspect(topic, "its archived identity could not be read: "+err.Error())
		return false
	}
	s.ids.mu.Lock()
	defer s.ids.mu.Unlock()
	switch {
	case ti.id == "":
		ti.id = id
	case id != "" && ti.id != id:
		if s.ids.suspect == nil {
			s.ids.suspect = map[string]string{}
		}
		s.ids.suspect[topic] = "its topic id " + id + " is not the archived " + ti.id
		return false
	}
	return true
}

func (ss *session) revoked(ctx context.Context, _ *kgo.Client, revoked map[string][]int32) {
	ws := ss.take(revoked)
	for _, w := range ws {
		w.stop()
	}
	// Commit what the stopped workers completed while we still own it.
	if err := ss.commitNow(ctx); err != nil {
		ss.s.log.Warn("commit on revoke failed", "err", err)
	}
}

func (ss *session) lost(_ context.Context, _ *kgo.Client, lost map[string][]int32) {
	ws := ss.take(lost)
	for _, w := range ws {
		w.stop()
	}
	ss.commitMu.Lock()
	for _, w := range ws {
		delete(ss.toCommit, w.tp)
	}
	ss.commitMu.Unlock()
}

func (ss *session) take(m map[string][]int32) []*worker {
	ss.mu.Lock()
	defer ss.mu.Unlock()
	var ws []*worker
	for t, ps := range m {
		for _, p := range ps {
			k := tp{t, p}
			if w := ss.workers[k]; w != nil {
				ws = append(ws, w)
				delete(ss.workers, k)
			}
		}
	}
	return ws
}
