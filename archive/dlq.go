package archive

import (
	"context"
	"errors"
	"fmt"
	"strconv"

	"github.com/twmb/franz-go/pkg/kadm"
	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kgo"
)

// Connect's dead letter queue context headers
// (errors.deadletterqueue.context.headers.enable).
const (
	HeaderErrTopic          = "__connect.errors.topic"
	HeaderErrPartition      = "__connect.errors.partition"
	HeaderErrOffset         = "__connect.errors.offset"
	HeaderErrConnector      = "__connect.errors.connector.name"
	HeaderErrTaskID         = "__connect.errors.task.id"
	HeaderErrStage          = "__connect.errors.stage"
	HeaderErrClass          = "__connect.errors.class.name"
	HeaderErrExceptionClass = "__connect.errors.exception.class.name"
	HeaderErrMessage        = "__connect.errors.exception.message"
)

// dataExceptionClass is the exception class Connect reports for bad data.
const dataExceptionClass = "org.apache.kafka.connect.errors.DataException"

// defaultDLQReplication is Connect's errors.deadletterqueue.topic.replication.factor.
const defaultDLQReplication = 3

// ensureDLQ creates the dead letter queue topic when it does not exist, as
// Connect does (one partition; the replication factor capped at the number
// of brokers).
func (ss *session) ensureDLQ(ctx context.Context, adm *kadm.Client) error {
	topic := ss.s.cfg.Errors.DLQTopic
	if topic == "" {
		return nil
	}
	md, err := adm.Metadata(ctx, topic)
	if err != nil {
		return fmt.Errorf("kafka metadata of %s (errors.deadletterqueue.topic.name): %w", topic, err)
	}
	if d, ok := md.Topics[topic]; ok && d.Err == nil {
		return nil
	}
	rf := ss.s.cfg.Errors.DLQReplicationFactor
	if rf <= 0 {
		rf = defaultDLQReplication
	}
	if n := len(md.Brokers); n > 0 && int(rf) > n {
		rf = int16(n)
	}
	resp, err := adm.CreateTopic(ctx, 1, rf, nil, topic)
	if err == nil {
		err = resp.Err
	}
	if err != nil && !errors.Is(err, kerr.TopicAlreadyExists) {
		return fmt.Errorf("creating the dead letter queue topic %s (errors.deadletterqueue.topic.name): %w", topic, err)
	}
	ss.s.log.Info("created the dead letter queue topic", "topic", topic, "replication_factor", rf)
	return nil
}

// badRecord applies errors.tolerance to a record that cannot be archived:
// none returns the error (the sink stops, and nothing at or past the record
// is committed); all skips it, logs it with errors.log.enable and queues it
// for the dead letter queue.
func (w *worker) badRecord(kr *kgo.Record, bad *BadRecordError) error {
	ecfg := &w.cfg.Errors
	if ecfg.Tolerance != ToleranceAll {
		return fmt.Errorf("%w; errors.tolerance is none, so the sink stops (set errors.tolerance=all to skip bad records)", bad)
	}
	if ecfg.Log {
		w.log.Error("bad record skipped", "topic", bad.Topic, "partition", bad.Partition, "offset", bad.Offset,
			"stage", bad.Stage, "err", bad.Err, "dlq", ecfg.DLQTopic)
	} else {
		w.log.Debug("bad record skipped", "topic", bad.Topic, "partition", bad.Partition, "offset", bad.Offset, "err", bad.Err)
	}
	why := skipBad
	if ecfg.DLQTopic != "" {
		w.queued = append(w.queued, w.dlqRecord(kr, bad))
		why = skipBadDLQ
	}
	w.tally.countSkip(w.tp, kr.Offset, why)
	return w.pw.skip(w.ctx, kr.Offset)
}

// dlqRecord is the record Connect writes to the dead letter queue: the
// original key, value, timestamp and headers, plus the context headers
// when enabled.
func (w *worker) dlqRecord(kr *kgo.Record, bad *BadRecordError) *kgo.Record {
	ecfg := &w.cfg.Errors
	out := &kgo.Record{Topic: ecfg.DLQTopic, Key: kr.Key, Value: kr.Value, Timestamp: kr.Timestamp}
	out.Headers = append(out.Headers, kr.Headers...)
	if ecfg.DLQContextHeaders {
		add := func(k, v string) { out.Headers = append(out.Headers, kgo.RecordHeader{Key: k, Value: []byte(v)}) }
		add(HeaderErrTopic, kr.Topic)
		add(HeaderErrPartition, strconv.Itoa(int(kr.Partition)))
		add(HeaderErrOffset, strconv.FormatInt(kr.Offset, 10))
		add(HeaderErrConnector, w.cfg.Name)
		add(HeaderErrTaskID, "0")
		add(HeaderErrStage, bad.Stage)
		if bad.Class != "" {
			add(HeaderErrClass, bad.Class)
		}
		add(HeaderErrExceptionClass, dataExceptionClass)
		add(HeaderErrMessage, bad.Err.Error())
	}
	return out
}

// flushDLQ produces the queued bad records and waits until they are
// acknowledged.
func (w *worker) flushDLQ() error {
	if len(w.queued) == 0 {
		return nil
	}
	if err := w.dlq.ProduceSync(w.ctx, w.queued...).FirstErr(); err != nil {
		return fmt.Errorf("producing %d bad records to the dead letter queue %s: %w", len(w.queued), w.cfg.Errors.DLQTopic, err)
	}
	clear(w.queued)
	w.queued = w.queued[:0]
	return nil
}
