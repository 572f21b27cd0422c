package restore

import (
	"context"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"strconv"
	"time"

	"github.com/twmb/franz-go/pkg/kadm"
	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kgo"
	"github.com/twmb/franz-go/pkg/kmsg"
)

// Transactions of a repartitioning restore (repartition.go)
//
// Each source partition's stream has a transactional producer of its own:
// transactional.id and position group are both PositionGroup(target,
// source partition), the same on every run. Before it reads anything, a
// stream's producer initialises its producer id: the broker bumps the
// epoch, which fences a producer of an earlier run still alive and aborts
// its open transaction. Then the stream reads its position from the group
// (OffsetFetch with require_stable, so a transaction being aborted is
// waited for), skips that many of its records (whole objects by their
// counts, without reading them; with a filter by reading them) and
// produces the rest, TxnRecords records, txnBytes bytes or txnAge at most
// per transaction. Each transaction ends with the records flushed, the new
// position committed into the group inside the transaction
// (AddOffsetsToTxn, TxnOffsetCommit with generation -1 and no member: the
// group never has members), and EndTxn. The position is committed as the
// offset of the target's partition 0 (a partition that exists: the broker
// refuses commits for partitions it does not know), its metadata naming
// the archive, source topic and partition, placement and partition count;
// a position of another archive, source or placement is refused.
//
// A stream that fails or is cancelled aborts its open transaction; one
// that is killed leaves it open until the next run fences it (or the
// broker's transaction timeout, TxnTimeout, aborts it): read_committed
// consumers of the target wait at that transaction meanwhile.

// PositionGroup is the group, and the transactional.id, of source
// partition src's stream into target when repartitioning:
// "kafkas3-restore-<target>:<src>" (a colon is no character of a topic
// name, so no marker group has such a name).
func PositionGroup(target string, src int32) string {
	return MarkerGroup(target) + ":" + strconv.Itoa(int(src))
}

// Bounds of one transaction of a repartitioning stream: it commits once it
// holds TxnRecords records (Config.TxnRecords, DefaultTxnRecords),
// txnBytes bytes of payload or has been open for txnAge, whichever comes
// first. txnAge stays well under TxnTimeout, so a slow (rate-limited)
// stream's transaction is never aborted by the broker.
const (
	DefaultTxnRecords = 10_000
	txnBytes          = 8 << 20
	txnAge            = 10 * time.Second
	// txnLoadWait is how long a stream with a transaction open waits for
	// its next object before it commits (stream.take1).
	txnLoadWait = time.Second
	// TxnTimeout is the transaction.timeout.ms of the repartitioning
	// producers: how long a killed run's open transaction holds back
	// read_committed consumers, at most, if no re-run fences it.
	TxnTimeout = 60 * time.Second
)

// txnStream is the transactional state of one repartitioning stream.
type txnStream struct {
	cl         *kgo.Client
	id         string // transactional.id and position group
	target     string
	topicID    [16]byte
	partitions int32  // the target's partition count
	meta       string // the position's commit metadata
	// records, bytes and since describe the open transaction (records
	// handed over since it began, their payload, when it began).
	records, bytes int64
	since          time.Time
	limit          int64 // Config.TxnRecords
	committed      int64 // records of this run's committed transactions
}

// positionMeta is the JSON of a position's commit metadata.
type positionMeta struct {
	Tool       string `json:"tool"`
	Archive    string `json:"archive"`
	Source     string `json:"source"`
	Partition  int32  `json:"partition"`
	Placement  string `json:"placement"`
	Partitions int32  `json:"partitions"`
	// TopicID is the target's topic id (hex): a position of a target
	// deleted and created again since is refused.
	TopicID string `json:"topic_id"`
	// Stream names the record stream the position counts (streamID).
	Stream string `json:"stream,omitempty"`
}

const positionTool = "kafkas3 repartition v1"

// openTxn prepares job j's stream for repartitioning: its transactional
// producer, with the producer id initialised (fencing an earlier run's),
// and its position read from the group into j.end (j.start is 0: the
// stream skips j.end of its records).
func (r *Restorer) openTxn(ctx context.Context, j job) (job, error) {
	group := PositionGroup(j.topic.Target, j.part.Partition)
	tx := &txnStream{id: group, target: j.topic.Target, partitions: j.repart.partitions, topicID: j.repart.topicID,
		limit: int64(r.cfg.TxnRecords)}
	b, _ := json.Marshal(positionMeta{Tool: positionTool, Archive: r.cfg.Identity, Source: j.topic.Source,
		Partition: j.part.Partition, Placement: string(r.cfg.Repartition), Partitions: tx.partitions,
		TopicID: hex.EncodeToString(tx.topicID[:]), Stream: r.streamID(&j.part)}) // cannot fail
	tx.meta = string(b)
	cl, err := r.newTxnProducer(group)
	if err != nil {
		return j, err
	}
	tx.cl = cl
	if err := r.retry(ctx, "initialise the transactional producer "+group, nil, func(ctx context.Context) error {
		_, _, err := cl.ProducerID(ctx)
		return err
	}); err != nil {
		cl.Close()
		return j, fmt.Errorf("initialise the transactional producer %q (fences an earlier run's): %w", group, err)
	}
	adm := kadm.NewClient(cl)
	pos, err := r.readPosition(ctx, adm, tx)
	if err == nil && pos > 0 {
		err = r.recommitPosition(ctx, adm, tx, pos)
	}
	if err != nil {
		cl.Close()
		return j, err
	}
	if err := cl.BeginTransaction(); err != nil {
		cl.Close()
		return j, fmt.Errorf("begin a transaction of %q: %w", group, err)
	}
	tx.since = time.Now()
	j.tx, j.start, j.marker, j.end, j.trust = tx, 0, 0, pos, true
	if pos > 0 {
		r.log.Info("resuming restore", "topic", j.topic.Target, "source_partition", j.part.Partition, "already_restored", pos, "position_group", group)
	}
	return j, nil
}

// newTxnProducer builds a stream's transactional producer: acks=all,
// records go to the partition they name. Its buffer is the restore's
// producer buffer shared among the streams produced at once.
func (r *Restorer) newTxnProducer(id string) (*kgo.Client, error) {
	return r.producer(max(producerBufferBytes/r.cfg.Parallelism, 4<<20), kgo.TransactionalID(id), kgo.TransactionTimeout(TxnTimeout))
}

// readPosition reads how many records of tx's stream earlier runs
// committed (0 for none), refusing a position another archive, source or
// placement wrote.
func (r *Restorer) readPosition(ctx context.Context, adm *kadm.Client, tx *txnStream) (int64, error) {
	var resps kadm.OffsetResponses
	err := r.retry(ctx, "read the restore position from group "+tx.id, nil, func(ctx context.Context) error {
		var err error
		resps, err = adm.FetchOffsets(kadm.RequireStable(ctx), tx.id)
		if err == nil {
			err = resps.Error()
		}
		return err
	})
	if errors.Is(err, kerr.GroupIDNotFound) {
		return 0, nil
	}
	if err != nil {
		return 0, fmt.Errorf("read the restore position from group %q: %w", tx.id, err)
	}
	o, ok := resps.Lookup(tx.target, 0)
	if !ok || o.At < 0 {
		return 0, nil
	}
	var got, want positionMeta
	_ = json.Unmarshal([]byte(tx.meta), &want) // ours
	err = json.Unmarshal([]byte(o.Metadata), &got)
	if same := got; err == nil && same.TopicID != want.TopicID {
		if same.TopicID = want.TopicID; same == want {
			return 0, fmt.Errorf("%w: group %q holds the position %d of source partition %s/%d in topic id %s, but %q now has topic id %s: "+
				"the target was deleted and created again; delete the group to restore into it from the start",
				ErrForeignWrite, tx.id, o.At, got.Source, got.Partition, got.TopicID, tx.target, want.TopicID)
		}
	}
	if same := got; err == nil && same.Stream != want.Stream {
		if same.Stream = want.Stream; same == want && o.At > 0 {
			return 0, otherStream(fmt.Sprintf("source partition %s/%d's restore into %s", got.Source, got.Partition, tx.target),
				o.At, "position group "+strconv.Quote(tx.id))
		}
		got.Stream = want.Stream // nothing landed: this run's stream counts
	}
	if err != nil || got != want {
		return 0, fmt.Errorf("%w: group %q holds the position %d of a restore of %s, this run restores %s: "+
			"restore into another topic, or delete the group and the target's records to start over",
			ErrMarkerMismatch, tx.id, o.At, positionText(got, o.Metadata), positionText(want, ""))
	}
	return o.At, nil
}

// recommitPosition commits pos again to tx's group, outside a
// transaction (the earlier run's is fenced and the position read stable),
// so a position whose stream has nothing left to produce does not expire
// under offsets.retention.minutes: a re-run then would produce the whole
// stream again.
func (r *Restorer) recommitPosition(ctx context.Context, adm *kadm.Client, tx *txnStream, pos int64) error {
	var os kadm.Offsets
	os.Add(kadm.Offset{Topic: tx.target, Partition: 0, At: pos, LeaderEpoch: -1, Metadata: tx.meta})
	err := r.retry(ctx, "commit the restore position to group "+tx.id+" again", nil, func(ctx context.Context) error {
		return adm.CommitAllOffsets(ctx, tx.id, os)
	})
	if err != nil {
		return fmt.Errorf("commit the restore position %d to group %q again: %w", pos, tx.id, err)
	}
	return nil
}

// positionText describes a position's metadata for an error.
func positionText(m positionMeta, raw string) string {
	if m.Tool != positionTool {
		return fmt.Sprintf("unknown origin (metadata %q)", raw)
	}
	return fmt.Sprintf("source partition %s/%d of archive %q placed by %s on %d partitions", m.Source, m.Partition, m.Archive, m.Placement, m.Partitions)
}

// full tells whether the open transaction is to be committed now.
func (tx *txnStream) full() bool {
	return tx.records >= tx.limit || tx.bytes >= txnBytes || time.Since(tx.since) >= txnAge
}

// commitTxn ends the stream's open transaction, if it holds records: they
// are flushed, the position (the index of the stream's next record) is
// committed with them, and the next transaction begins unless last.
func (s *stream) commitTxn(last bool) error {
	tx := s.tx
	if tx.records == 0 {
		return nil
	}
	if err := tx.cl.Flush(s.ctx); err != nil {
		return fmt.Errorf("flush the records of %q: %w", tx.id, err)
	}
	s.inflight.Wait()
	if err := context.Cause(s.ctx); err != nil {
		return err // a record failed: the transaction is aborted (abortTxn)
	}
	ctx := s.pctx // ending a transaction is never cut short (kgo.Client.EndTransaction)
	if err := s.r.commitPosition(ctx, tx, s.idx); err != nil {
		return err
	}
	// One try: franz-go retries what it can, and refuses a second commit
	// whose first outcome it does not know.
	if err := tx.cl.EndTransaction(ctx, kgo.TryCommit); err != nil {
		return fmt.Errorf("commit the transaction of %q at position %d (if its outcome is unknown, a re-run reads the position that was committed and resumes from it): %w",
			tx.id, s.idx, err)
	}
	tx.committed += tx.records
	tx.records, tx.bytes, tx.since = 0, 0, time.Now()
	if last {
		return nil
	}
	if err := tx.cl.BeginTransaction(); err != nil {
		return fmt.Errorf("begin a transaction of %q: %w", tx.id, err)
	}
	return nil
}

// commitPosition adds tx's group to the open transaction and commits pos
// in it.
func (r *Restorer) commitPosition(ctx context.Context, tx *txnStream, pos int64) error {
	return r.retry(ctx, "commit the restore position to group "+tx.id, nil, func(ctx context.Context) error {
		id, epoch, err := tx.cl.ProducerID(ctx)
		if err != nil {
			return err
		}
		add := kmsg.NewPtrAddOffsetsToTxnRequest()
		add.TransactionalID, add.ProducerID, add.ProducerEpoch, add.Group = tx.id, id, epoch, tx.id
		addResp, err := add.RequestWith(ctx, tx.cl)
		if err == nil {
			err = kerr.ErrorForCode(addResp.ErrorCode)
		}
		if err != nil {
			return fmt.Errorf("add the group %q to the transaction: %w", tx.id, err)
		}
		req := kmsg.NewPtrTxnOffsetCommitRequest()
		req.TransactionalID, req.Group, req.ProducerID, req.ProducerEpoch = tx.id, tx.id, id, epoch
		req.Generation, req.MemberID = -1, ""
		rt := kmsg.NewTxnOffsetCommitRequestTopic()
		rt.Topic, rt.TopicID = tx.target, tx.topicID
		rp := kmsg.NewTxnOffsetCommitRequestTopicPartition()
		rp.Partition, rp.Offset, rp.LeaderEpoch, rp.Metadata = 0, pos, -1, &tx.meta
		rt.Partitions = append(rt.Partitions, rp)
		req.Topics = append(req.Topics, rt)
		resp, err := req.RequestWith(ctx, tx.cl)
		if err != nil {
			return err
		}
		for _, t := range resp.Topics {
			for _, p := range t.Partitions {
				if err := kerr.ErrorForCode(p.ErrorCode); err != nil {
					return fmt.Errorf("commit position %d to group %q: %w", pos, tx.id, err)
				}
			}
		}
		return nil
	})
}

// abortTxn aborts the stream's open transaction (the stream failed or was
// cancelled): nothing of it lands. If the abort fails, the next run's
// producer fences and aborts it.
func (s *stream) abortTxn() {
	ctx, cancel := context.WithTimeout(s.pctx, 10*time.Second)
	defer cancel()
	if err := s.tx.cl.AbortBufferedRecords(ctx); err == nil {
		_ = s.tx.cl.EndTransaction(ctx, kgo.TryAbort)
	}
}

// finishTxn ends a repartitioning stream once its records are
// acknowledged: a failed or cancelled one aborts its open transaction.
// Its records are those of the transactions it committed.
func (s *stream) finishTxn() (partitionResult, error) {
	err := context.Cause(s.ctx)
	if err != nil {
		s.abortTxn()
	}
	s.tx.cl.Close()
	s.res.records = s.tx.committed
	if err == nil && s.res.records > 0 {
		s.r.log.Debug("source partition restored", "topic", s.target, "source_partition", s.p, "records", s.res.records, "position", s.idx)
	}
	return s.res, err
}
