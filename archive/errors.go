package archive

import (
	"context"
	"errors"
	"fmt"

	"github.com/kafkas3/kafkas3/format"
	"github.com/kafkas3/kafkas3/outage"
)

// ErrBadData is matched by Converter errors caused by the record's bytes.
var ErrBadData = errors.New("bad record data")

// ErrSchemaSwitch is wrapped when a record with a schema follows one
// without, or the other way round, in the same open file.
var ErrSchemaSwitch = errors.New("switch between schema-based and schema-less data is not supported")

// ErrSchemaVersion is wrapped when schema.compatibility needs the schema
// versions of two different schemas and one of them has none.
var ErrSchemaVersion = errors.New("schema version required")

// BadData returns err marked as bad record data: errors.Is(result,
// ErrBadData) holds, and its message is err's. Converter adapters use it.
func BadData(err error) error {
	if err == nil {
		return nil
	}
	return badData{err}
}

type badData struct{ err error }

func (b badData) Error() string        { return b.err.Error() }
func (b badData) Unwrap() error        { return b.err }
func (b badData) Is(target error) bool { return target == ErrBadData }

// ErrPermanent is matched by Converter errors that no retry can fix (the
// registry refuses the credentials): the sink stops instead of retrying.
var ErrPermanent = errors.New("permanent converter failure")

// Permanent returns err marked as permanent: errors.Is(result, ErrPermanent).
func Permanent(err error) error {
	if err == nil {
		return nil
	}
	return permanent{err}
}

type permanent struct{ err error }

func (p permanent) Error() string        { return p.err.Error() }
func (p permanent) Unwrap() error        { return p.err }
func (p permanent) Is(target error) bool { return target == ErrPermanent }

// Stages of a bad record, as Connect names them in the
// __connect.errors.stage header.
const (
	StageKeyConverter   = "KEY_CONVERTER"
	StageValueConverter = "VALUE_CONVERTER"
	StageTaskPut        = "TASK_PUT"
)

// sinkTaskClass is the class Connect reports for errors of the task's put.
const sinkTaskClass = "io.confluent.connect.s3.S3SinkTask"

// BadRecordError is a record that cannot be converted or written: its data
// does not match its schema, its schema cannot be projected, or it
// switches between schema-based and schemaless data. With errors.tolerance
// none it stops the sink; with all it is skipped (and sent to the dead
// letter queue when one is configured).
type BadRecordError struct {
	Topic     string
	Partition int32
	Offset    int64
	Stage     string // StageKeyConverter, StageValueConverter or StageTaskPut
	Class     string // the converter or task class, for the DLQ headers
	Err       error
}

func (e *BadRecordError) Error() string {
	return fmt.Sprintf("bad record at topic %s partition %d offset %d (%s): %v", e.Topic, e.Partition, e.Offset, e.Stage, e.Err)
}

func (e *BadRecordError) Unwrap() error { return e.Err }

// ConverterError is a converter failure not caused by the record (the
// schema registry cannot be reached, refuses the credentials, answers with
// a server error). The sink treats it as transient, like a StoreError.
type ConverterError struct {
	Topic     string
	Partition int32
	Offset    int64
	Err       error
}

func (e *ConverterError) Error() string {
	return fmt.Sprintf("converting topic %s partition %d offset %d: %v", e.Topic, e.Partition, e.Offset, e.Err)
}

func (e *ConverterError) Unwrap() error { return e.Err }

// convertError sorts a converter's failure on r's key or value (stage and
// class name the converter): bad data makes r a *BadRecordError; with ctx
// done, it is ctx's error; a permanent failure stops the sink; any other
// is a *ConverterError, which the sink retries.
func convertError(ctx context.Context, r *format.Record, stage, class string, err error) error {
	if errors.Is(err, ErrBadData) {
		return &BadRecordError{Topic: r.Topic, Partition: r.Partition, Offset: r.Offset, Stage: stage, Class: class, Err: err}
	}
	if ctx.Err() != nil {
		return ctx.Err()
	}
	if errors.Is(err, ErrPermanent) {
		return fmt.Errorf("topic %s partition %d offset %d: %s: %w", r.Topic, r.Partition, r.Offset, class, err)
	}
	return &ConverterError{Topic: r.Topic, Partition: r.Partition, Offset: r.Offset, Err: err}
}

// KafkaError is a failure of the Kafka brokers that passes on its own
// (outage.Transient: a broker that cannot be reached, a coordinator that
// moved, a request that timed out). The sink resumes after a backoff.
type KafkaError struct{ Err error }

func (e *KafkaError) Error() string { return e.Err.Error() }
func (e *KafkaError) Unwrap() error { return e.Err }

// kafkaError marks err as a *KafkaError when it is transient.
func kafkaError(err error) error {
	if outage.Transient(err) {
		return &KafkaError{err}
	}
	return err
}
