package restore

import (
	"errors"
	"fmt"
	"time"

	"github.com/kafkas3/kafkas3/format"
	"github.com/kafkas3/kafkas3/index"
)

// Envelopes
//
// Objects the sink wrote with store.envelope are recognised per object by
// their archive index entry's envelope flag, or without an entry by their
// content (format.ReadEnvelopes), and yield every archived property: the
// records' own offsets (Record.Offset), keys, values (typed ones framed for
// the target registry as above), headers and timestamps, produced as
// archived unless Config.Timestamps is TimestampsNow. An envelope record
// of another partition than its object's is ErrEnvelopePartition. Producers
// send CreateTime timestamps only: a LogAppendTime record comes back with
// its original time as CreateTime, and a target topic with
// message.timestamp.type=LogAppendTime restamps everything.

// Timestamps is --timestamps: which timestamp restored envelope records get.
type Timestamps string

// Timestamp modes.
const (
	// TimestampsOriginal produces each envelope record with its archived
	// timestamp (the default).
	TimestampsOriginal Timestamps = "original"
	// TimestampsNow leaves the timestamp to the producer (the time of the
	// restore), as for archives without envelopes.
	TimestampsNow Timestamps = "now"
)

// ErrEnvelopePartition is wrapped when an envelope record says it comes
// from another Kafka partition than the object's name.
var ErrEnvelopePartition = errors.New("envelope record of another partition")

// envelopes wraps the reader of value object obj: objects written with
// store.envelope are recognised by their archive index entry's envelope
// flag, or without an entry by their content (format.ReadEnvelopes), and
// yield every archived property of their records. Each envelope
// record's partition must be the object's Kafka partition; its offset is
// kept in Record.Offset; its timestamp is kept or dropped per
// Config.Timestamps. Records of other objects pass unchanged.
func (r *Restorer) envelopes(rd format.RecordReader, obj Object) format.RecordReader {
	name, err := r.cfg.Keys.ParseObjectKey(obj.Key)
	return &envelopeChecker{
		er: format.ReadEnvelopes(rd, obj.envelope), key: obj.Key, partition: name.Partition, keyErr: err,
		now: r.cfg.Timestamps == TimestampsNow,
	}
}

type envelopeChecker struct {
	er        *format.EnvelopeReader
	key       string
	partition int32
	keyErr    error
	now       bool
	// archived is the last envelope record's archived timestamp, which
	// --timestamps now clears in the record (Config.Until needs it).
	archived time.Time
}

func (c *envelopeChecker) Read() (*format.Record, error) {
	rec, err := c.er.Read()
	if err != nil || !c.er.Envelopes() {
		return rec, err
	}
	if c.keyErr != nil {
		return nil, fmt.Errorf("object %q: %w", c.key, c.keyErr)
	}
	if rec.Partition != c.partition {
		return nil, fmt.Errorf("object %q: %w: the record at offset %d says partition %d, the object is in partition %d",
			c.key, ErrEnvelopePartition, rec.Offset, rec.Partition, c.partition)
	}
	c.archived = rec.Timestamp
	if c.now {
		rec.Timestamp = time.Time{}
	}
	return rec, nil
}

// SetTransient passes on to the envelope reader (format.Transient).
func (c *envelopeChecker) SetTransient(on bool) { c.er.SetTransient(on) }

var (
	_ format.RecordReader = (*envelopeChecker)(nil)
	_ format.Transient    = (*envelopeChecker)(nil)
)

// envelopeMode is what an archive index entry says: its objects hold
// envelopes (anything else in them is damage), or plain values (a JSON
// value that merely looks like an envelope stays a value).
func envelopeMode(e *index.Entry) format.EnvelopeMode {
	if e.Envelope {
		return format.EnvelopeRequired
	}
	return format.EnvelopeNever
}
