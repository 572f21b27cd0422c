package archive

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"time"

	"github.com/kafkas3/kafkas3/convert"
	"github.com/kafkas3/kafkas3/format"
	"github.com/kafkas3/kafkas3/index"
	"github.com/kafkas3/kafkas3/partition"
	"github.com/kafkas3/kafkas3/s3store"
)

// This file holds the partition writer and the steps of its write
// (path.go), in the order write takes them. The .keys and .headers
// records are in parts.go, the schema decision in schema.go, rotation in
// rotate.go, the store objects in objects.go.

// ErrNullValue is returned when a record has a null value and
// behavior.on.null.values is fail.
var ErrNullValue = errors.New("record has a null value (behavior.on.null.values=fail)")

// partitionWriter holds the open files of one Kafka partition and decides
// rotation. Its decisions depend only on the records it is given (and, when
// rotate.schedule.interval.ms is set, on the wall clock), so a replay from a
// committed offset rebuilds the same keys with the same bytes.
type partitionWriter struct {
	topic     string
	partition int32
	cfg       *Config
	store     s3store.Store
	log       *slog.Logger

	files  map[string]*openFile // by encoded partition path
	order  []string             // encoded paths in opening order
	count  int                  // records in the open file set
	baseTS time.Time            // timestamp of the first record of the open set
	// timed is the partitioner when it is time-based (nil otherwise): its
	// extractor measures rotate.interval.ms. baseAt is the extractor time
	// of the open set's first record, latest the latest bucket start of
	// its records; both hold while timeSet.
	timed partition.Timed
	// encoded is the encoded partition of every record when the
	// partitioner depends only on the Kafka partition
	// (partition.PerPartition); "" otherwise.
	encoded        string
	baseAt, latest int64
	timeSet        bool
	maxOpen        int         // kafkas3.max.open.partitions
	last           int64       // offset of the last record consumed; -1 before any
	pending        int64       // next offset that may be committed (all files up to it complete); -1 if none
	done           []FileStats // completed files not yet reported
	// slots are the session's upload slots (MaxUploads); nil runs each
	// rotation's upload at once, inside rotate. inflight is the
	// partition's running upload (nil if none) and afterUpload an offset
	// that becomes pending when it is done (-1 if none).
	slots       chan struct{}
	inflight    *inflight
	afterUpload int64

	// The archive index (Config.IndexPrefix != ""). Every offset the
	// writer makes committable has an index object with that commit, so
	// each rotation's entries can say "from": the offset the previous
	// index object (of this writer, or the committed offset it started
	// at) committed, and the next offsets the sink read, up to the commit,
	// are accounted for by the entries or were absent.
	start       int64         // committed offset at assignment; -1 unknown
	from        int64         // the current span's first offset; -1 before any record
	lastEntries []index.Entry // entries of the last index object written; nil if none
	onIndex     func()        // called after each index object is written; may be nil
	// onIndexCommit, when set, is called with the index prefix and commit
	// of each index object written (the checkpointer's indexed).
	onIndexCommit func(prefix, topic string, p int32, commit int64)
	// indexWriter names this sink's group in its index keys
	// (index.WriterOf), so another group's sink into the same bucket
	// never overwrites them.
	indexWriter string
	// schemaRec records the schemas the records name (schemarec.go); nil
	// without the index. schemaIDs are those noted since the last index
	// object.
	schemaRec *schemaRecorder
	schemaIDs schemaIDs
	// checkedCkpts tells whether this run wrote the writer's start
	// checkpoint of the partition and voided its checkpoints above its
	// span's first offset (beginCheckpoints).
	checkedCkpts bool
	// topicID is the topic's Kafka id (index.FormatTopicID), recorded in
	// the entries; "" when unknown.
	topicID string
	// guard knows the objects the index says exist from the span's first
	// offset on (guard.go); loaded at the first object.
	guard *keyGuard

	// lost are the runs of offsets lost before archiving (lost.go) since
	// the last index object, for the next one's entries.
	lost []index.Run

	schemas *schemas            // schema.compatibility decisions and projections
	keys    *format.KeyPart     // records of the .keys objects; nil without KeysFormat
	headers *format.HeadersPart // records of the .headers objects; nil without HeadersFormat
	// tombstones tells whether the open set holds tombstones
	// (behavior.on.null.values=write); a switch rotates.
	tombstones bool
	// onNullIgnored, when set, is told the offset of each null value that
	// behavior.on.null.values=ignore drops (the summary counts them).
	onNullIgnored func(offset int64)
}

// newPartitionWriter returns the writer of one partition; start is the
// group's committed offset for it (-1 when unknown or none), where the
// archive index's first span starts.
func newPartitionWriter(topic string, p int32, start int64, cfg *Config, store s3store.Store, log *slog.Logger) *partitionWriter {
	w := &partitionWriter{
		topic: topic, partition: p, cfg: cfg, store: store,
		log:   log.With("topic", topic, "partition", p),
		files: make(map[string]*openFile),
		last:  -1, pending: -1, afterUpload: -1, start: start, from: -1,
		indexWriter: index.WriterOf(cfg.GroupID),
		schemas:     newSchemas(cfg.Compatibility),
	}
	w.timed, _ = cfg.Partitioner.(partition.Timed)
	if pp, ok := cfg.Partitioner.(partition.PerPartition); ok {
		w.encoded, _ = pp.EncodePartition(p) // "" on an error: Encode reports it per record
	}
	if w.maxOpen = cfg.MaxOpenPartitions; w.maxOpen <= 0 {
		w.maxOpen = DefaultMaxOpenPartitions
	}
	// New checked that the formats hold keys and headers.
	if cfg.KeysFormat != nil {
		w.keys, _ = format.NewKeyPart(cfg.KeysFormat.Kind, cfg.KeyConverterClass == stringKeyConverter)
	}
	if cfg.HeadersFormat != nil {
		w.headers, _ = format.NewHeadersPart(cfg.HeadersFormat.Kind)
	}
	return w
}

// isTombstone reports whether r goes the tombstone way
// (behavior.on.null.values). With store.envelope a null value is an
// ordinary record: the envelope holds it as null.
func (w *partitionWriter) isTombstone(r *format.Record) bool {
	return r.Value == nil && !w.cfg.Envelope
}

// nullValue applies behavior.on.null.values to a tombstone r. It reports
// consumed when write is done with r: ignored (skipped, err from skip) or
// refused (err). With write, r goes on to its tombstone file.
func (w *partitionWriter) nullValue(ctx context.Context, r *format.Record) (consumed bool, err error) {
	switch w.cfg.NullValues {
	case NullIgnore:
		if w.onNullIgnored != nil {
			w.onNullIgnored(r.Offset)
		}
		return true, w.skip(ctx, r.Offset)
	case NullWrite:
		return false, nil
	default:
		return true, fmt.Errorf("topic %s partition %d offset %d: %w", r.Topic, r.Partition, r.Offset, ErrNullValue)
	}
}

// placement is where a record goes: its encoded partition and, with a
// time-based partitioner (timed), its bucket start and its time by the
// extractor (milliseconds since the epoch).
type placement struct {
	encoded    string
	timed      bool
	bucket, at int64
}

// place is r's placement: the partitioner's, or tombstone.encoded.partition
// for a tombstone. An error the record causes (partition.ErrBadRecord: a
// field it lacks, a type that cannot name a folder, no timestamp) makes r
// a bad record; any other stops the sink.
func (w *partitionWriter) place(r *format.Record, tomb bool) (placement, error) {
	if tomb {
		return placement{encoded: w.cfg.TombstonePartition}, nil
	}
	var pl placement
	var err error
	switch {
	case w.timed != nil:
		pl.timed = true
		pl.encoded, pl.bucket, pl.at, err = w.timed.EncodeTime(r)
	case w.encoded != "" && r.Partition == w.partition:
		pl.encoded = w.encoded
	default:
		pl.encoded, err = w.cfg.Partitioner.Encode(r)
	}
	switch {
	case errors.Is(err, partition.ErrBadRecord):
		return pl, w.bad(r, err)
	case err != nil:
		return pl, fmt.Errorf("topic %s partition %d offset %d: partitioner: %w", r.Topic, r.Partition, r.Offset, err)
	}
	return pl, nil
}

// fileFor returns the file of encoded that r goes into: the open one,
// unless r's value schema (applySchema) or key schema rotates the open
// files, else a new one, which takes r's schemas. It may project r's
// value to the open file's schema.
func (w *partitionWriter) fileFor(ctx context.Context, encoded string, r *format.Record, tomb bool, keyRec *format.Record) (*openFile, error) {
	f := w.files[encoded]
	if f != nil && !tomb {
		var err error
		if f, err = w.applySchema(ctx, f, r); err != nil {
			return nil, err
		}
	}
	if f != nil && keySchemaChanged(f, keyRec) {
		// One .keys object holds one key schema: a new one rotates.
		if err := w.rotate(ctx); err != nil {
			return nil, err
		}
		f = nil
	}
	if f != nil {
		return f, nil
	}
	f, err := w.open(ctx, encoded, r.Offset, tomb)
	if err != nil {
		return nil, err
	}
	if r.ValueTyped != nil {
		f.schema, f.typed = r.ValueTyped.Schema, true
	}
	if keyRec != nil && keyRec.ValueTyped != nil {
		f.keySchema = keyRec.ValueTyped.Schema
	}
	return f, nil
}

// writeValue writes r to f's value object and sorts a failure: the
// store's (a *StoreError), a null value the format cannot hold (the sink
// stops), or the record's data (a bad record; a file it would have
// started is dropped, so the next record starts it with its own offset).
func (w *partitionWriter) writeValue(ctx context.Context, f *openFile, encoded string, r *format.Record) error {
	err := f.rw.Write(r)
	switch {
	case err == nil:
		return nil
	case f.counter.err != nil:
		return &StoreError{Key: f.key, Err: err}
	case errors.Is(err, format.ErrNullValue):
		return fmt.Errorf("topic %s partition %d offset %d: %w", r.Topic, r.Partition, r.Offset, err)
	}
	if f.records == 0 {
		w.drop(ctx, encoded)
	}
	return w.bad(r, err)
}

// added notes that f now holds r, placed at pl, and rotates at flush.size.
func (w *partitionWriter) added(ctx context.Context, f *openFile, r *format.Record, tomb bool, pl placement) error {
	w.begin(r.Offset)
	f.add(r.Offset, r.Timestamp.UnixMilli())
	w.measure(f, r, tomb)
	if w.count == 0 {
		w.baseTS = r.Timestamp
		w.tombstones = tomb
		w.timeSet = false
	}
	if pl.timed {
		switch {
		case !w.timeSet:
			w.baseAt, w.latest, w.timeSet = pl.at, pl.bucket, true
		case pl.bucket > w.latest:
			w.latest = pl.bucket
		}
	}
	w.count++
	w.last = r.Offset
	return w.rotateOnFlushSize(ctx)
}

// measure notes r's size as a restore produces it and whether it comes
// back without a key, for f's index entry (max_record_bytes, null_keys).
// A restore produces what the objects keep: the key from a .keys object
// (a tombstone object is one) or an envelope, else none; the headers from
// a .headers object or an envelope; a typed value as its Avro bytes with
// the 5-byte wire-format frame the restore puts on it, any other value as
// received. The size is index.RecordSize of that.
func (w *partitionWriter) measure(f *openFile, r *format.Record, tomb bool) {
	var key, value, hb int64
	keyKept := tomb || w.keys != nil || w.cfg.Envelope
	if keyKept {
		key = int64(len(r.Key))
	}
	if !keyKept || r.Key == nil {
		f.nullKeys++
	}
	if w.schemaRec != nil {
		w.schemaIDs.note(r, keyKept, w.cfg.Envelope)
	}
	switch t := r.ValueTyped; {
	case tomb:
	case t != nil && t.Schema != nil && t.Raw != nil:
		value = int64(len(t.Raw)) + convert.WireHeaderLen
	default:
		value = int64(len(r.Value))
	}
	headers := 0
	if w.headers != nil || w.cfg.Envelope {
		headers = len(r.Headers)
		for _, h := range r.Headers {
			hb += int64(len(h.Key) + len(h.Value))
		}
	}
	f.maxRecord = max(f.maxRecord, index.RecordSize(key, value, hb, headers))
}

// bad wraps a record's data error.
func (w *partitionWriter) bad(r *format.Record, err error) error {
	return &BadRecordError{Topic: r.Topic, Partition: r.Partition, Offset: r.Offset, Stage: StageTaskPut, Class: sinkTaskClass, Err: err}
}

// skip consumes a record that is not written (an ignored null, a control
// record, a bad record). Without the archive index, with no open file, it
// can be committed at once. With the index, every commit needs an index
// object that says what the offsets before it held: skipped offsets after
// the last rotation are committed by the next rotation, by flush, or, once
// flush.size of them accumulate, by an index object that restamps the last
// rotation's entries with the new commit (restamp).
func (w *partitionWriter) skip(ctx context.Context, offset int64) error {
	w.begin(offset)
	w.last = offset
	if w.count > 0 {
		return nil
	}
	if !w.indexed() {
		w.setPending(offset + 1)
		return nil
	}
	if offset+1-w.from >= int64(w.cfg.FlushSize) {
		return w.restamp(ctx, offset+1)
	}
	return nil
}

// takeDone returns and forgets the files completed since the last call.
func (w *partitionWriter) takeDone() []FileStats {
	d := w.done
	w.done = nil
	return d
}
