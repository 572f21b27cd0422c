package archive

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"maps"
	"slices"
	"sync"
	"sync/atomic"
	"time"

	"github.com/kafkas3/kafkas3/format"
	"github.com/kafkas3/kafkas3/index"
	"github.com/kafkas3/kafkas3/s3store"
	srschemas "github.com/kafkas3/kafkas3/schemas"
)

// Schemas of the archived records
//
// With Config.IndexPrefix set, every schema that an archived key or value
// names in Confluent's wire format (magic byte 0 and a 4-byte schema id,
// srschemas.WireID), whatever the format, is recorded in the archive: the
// partition writer notes the ids of the bytes its objects keep (a key
// when a .keys object or the envelope keeps it as bytes, a value without a
// schema; a typed value or key is kept decoded, with its schema in the
// object, and the restore frames it for the target registry itself: see
// schemaIDs.note), and the rotation's upload, after its
// objects and before its index object, writes each id's schema object
// (index.Schema: id, type, subjects and versions, references and text,
// with every schema it references) under index.SchemaKey, once per topic
// and id per process. The offset of the first record naming an id is
// committed only after its schema object is complete; the key names its
// bytes, so a replay writes the same object, and a schema recorded
// differently later (the registry listed another subject) goes beside it,
// never over it. A crash between the schema object and the commit leaves
// an object the replay writes again.
//
// The schemas come from Config.Schemas (the source registry of
// value.converter.schema.registry.url, else key.converter's), each id
// fetched once per process (a bounded cache). Bytes that only look framed
// (a value that starts with byte 0) never stop the sink: an id the
// registry does not know (or whose schema cannot be recorded: a reference
// not found, references nested too deep), or any id when no registry is
// configured, is logged once per id (at most maxUnknownLogged), counted
// (Summary.SchemaIDsUnknown) and asked for again after unknownRetry. A
// worker waiting on another's fetch or write that ended with the other's
// context (its partition revoked) makes the call itself. A registry that fails otherwise fails the
// rotation as a registry outage (*ConverterError): nothing past the
// previous commit is committed, and the session is retried; one that
// refuses the credentials (401, 403) stops the sink.

// SchemaFetcher reads a schema and every schema it references from the
// source registry, references first (schemas.Fetcher). An id the registry
// does not know wraps srschemas.ErrUnknownID.
type SchemaFetcher interface {
	Fetch(ctx context.Context, id int) ([]index.Schema, error)
}

// maxSchemaCache bounds the ids whose schemas a sink keeps fetched, and
// the (topic, id) pairs it remembers as recorded; past it they are
// forgotten and asked for again (registries hold thousands of schemas,
// not millions).
const maxSchemaCache = 4096

// maxUnknownLogged bounds the ids logged as unknown per process.
const maxUnknownLogged = 100

// schemaRecorder writes the schema objects of a sink, shared by its
// workers.
type schemaRecorder struct {
	fetch SchemaFetcher // nil: no registry configured
	log   *slog.Logger
	now   func() time.Time // the clock of unknownRetry

	mu      sync.Mutex
	calls   map[int]*schemaCall         // id -> its fetch
	written map[schemaPlace]bool        // recorded this process
	writing map[schemaPlace]*schemaCall // being recorded: callers share it
	unknown map[int]time.Time           // ids found unknown this process, and when last
	objects atomic.Int64                // schema objects written
}

// schemaPlace is one topic's schema id under one index prefix.
type schemaPlace struct {
	prefix, topic string
	id            int
}

// schemaCall is one id's fetch: waiters share it.
type schemaCall struct {
	done    chan struct{}
	schemas []index.Schema
	err     error
}

func newSchemaRecorder(fetch SchemaFetcher, log *slog.Logger) *schemaRecorder {
	return &schemaRecorder{fetch: fetch, log: log, now: time.Now, calls: map[int]*schemaCall{},
		written: map[schemaPlace]bool{}, writing: map[schemaPlace]*schemaCall{}, unknown: map[int]time.Time{}}
}

// record writes the schema objects of ids for topic under prefix, those
// not yet written by this process. Workers recording the same place at
// once share one write.
func (sr *schemaRecorder) record(ctx context.Context, store s3store.Store, prefix, topic string, ids []int) error {
	for _, id := range ids {
		for {
			err := sr.recordOne(ctx, store, schemaPlace{prefix, topic, id})
			if sharedCancel(ctx, err) {
				continue // another worker's context ended, not ours: again
			}
			if err != nil {
				return err
			}
			break
		}
	}
	return nil
}

// sharedCancel tells whether err is the end of another caller's context
// while ctx goes on: a waiter of a shared call then makes the call itself.
func sharedCancel(ctx context.Context, err error) bool {
	return ctx.Err() == nil && (errors.Is(err, context.Canceled) || errors.Is(err, context.DeadlineExceeded))
}

// recordOne writes place's schema objects unless this process wrote them,
// or found its id unknown lately; workers recording it at once share one
// write.
func (sr *schemaRecorder) recordOne(ctx context.Context, store s3store.Store, place schemaPlace) error {
	sr.mu.Lock()
	if sr.written[place] || sr.unknownLately(place.id) {
		sr.mu.Unlock()
		return nil
	}
	if c, ok := sr.writing[place]; ok {
		sr.mu.Unlock()
		select {
		case <-c.done:
		case <-ctx.Done():
			return ctx.Err()
		}
		return c.err
	}
	c := &schemaCall{done: make(chan struct{})}
	sr.writing[place] = c
	sr.mu.Unlock()
	c.err = sr.write(ctx, store, place)
	sr.mu.Lock()
	delete(sr.writing, place)
	sr.mu.Unlock()
	close(c.done)
	return c.err
}

// unknownRetry is how long an id the registry did not know is not asked
// for again: a registry (a follower not caught up yet) may know it later.
const unknownRetry = 5 * time.Minute

// unknownLately tells whether id was found unknown within unknownRetry;
// sr.mu is held.
func (sr *schemaRecorder) unknownLately(id int) bool {
	at, ok := sr.unknown[id]
	return ok && sr.now().Sub(at) < unknownRetry
}

// write writes the schema objects of place: its schema and those it
// references.
func (sr *schemaRecorder) write(ctx context.Context, store s3store.Store, place schemaPlace) error {
	ss, err := sr.get(ctx, place.id)
	switch {
	case errors.Is(err, srschemas.ErrUnknownID) || errors.Is(err, errNoSchemaRegistry):
		sr.markUnknown(place.id, place.topic, err)
		return nil
	case err != nil:
		return err
	}
	for _, s := range ss {
		data, err := index.EncodeSchema(s)
		if err != nil { // the registry's answer cannot be recorded: waiting will not change it
			sr.markUnknown(place.id, place.topic, fmt.Errorf("schema id %d: %w", s.ID, err))
			return nil
		}
		if err := putObject(ctx, store, index.SchemaKey(place.prefix, place.topic, s.ID, data), data); err != nil {
			return err
		}
		sr.objects.Add(1)
	}
	sr.mu.Lock()
	defer sr.mu.Unlock()
	if len(sr.written) >= maxSchemaCache {
		clear(sr.written)
	}
	for _, s := range ss {
		sr.written[schemaPlace{place.prefix, place.topic, s.ID}] = true
	}
	return nil
}

// errNoSchemaRegistry: framed-looking bytes, and no registry to ask.
var errNoSchemaRegistry = errors.New("no schema registry configured (value.converter.schema.registry.url or key.converter.schema.registry.url)")

// get returns id's schemas, fetched once: callers asking meanwhile wait
// for the same fetch (and fetch again when it ended with its caller's
// context, not theirs); a failure is not kept.
func (sr *schemaRecorder) get(ctx context.Context, id int) ([]index.Schema, error) {
	for {
		ss, err := sr.getOnce(ctx, id)
		if !sharedCancel(ctx, err) {
			return ss, err
		}
	}
}

// getOnce is get's one try.
func (sr *schemaRecorder) getOnce(ctx context.Context, id int) ([]index.Schema, error) {
	if sr.fetch == nil {
		return nil, errNoSchemaRegistry
	}
	sr.mu.Lock()
	c, ok := sr.calls[id]
	if !ok {
		if len(sr.calls) >= maxSchemaCache {
			for k, old := range sr.calls {
				select {
				case <-old.done:
					delete(sr.calls, k)
				default:
				}
			}
		}
		c = &schemaCall{done: make(chan struct{})}
		sr.calls[id] = c
	}
	sr.mu.Unlock()
	if ok {
		select {
		case <-c.done:
			return c.schemas, c.err
		case <-ctx.Done():
			return nil, ctx.Err()
		}
	}
	c.schemas, c.err = sr.fetch.Fetch(ctx, id)
	if c.err != nil {
		sr.mu.Lock()
		delete(sr.calls, id)
		sr.mu.Unlock()
	} else {
		sr.log.Debug("schema fetched", "id", id, "with_references", len(c.schemas)-1)
	}
	close(c.done)
	return c.schemas, c.err
}

// markUnknown counts id as not recorded (asked for again after
// unknownRetry) and logs it once.
func (sr *schemaRecorder) markUnknown(id int, topic string, why error) {
	sr.mu.Lock()
	_, seen := sr.unknown[id]
	first := !seen
	n := len(sr.unknown)
	if seen || n < maxSchemaCache {
		sr.unknown[id] = sr.now()
	}
	sr.mu.Unlock()
	switch {
	case !first:
	case n < maxUnknownLogged:
		sr.log.Warn("records look framed in Confluent's wire format but their schema is not recorded in the archive (if they are framed, a restore cannot register their schema)",
			"topic", topic, "schema_id", id, "why", why.Error())
	case n == maxUnknownLogged:
		sr.log.Warn("more schema ids not recorded; not logged further (see the summary's unknown_schema_ids)", "topic", topic)
	}
}

// counts returns the schema objects written and the ids not recorded.
func (sr *schemaRecorder) counts() (objects, unknown int64) {
	sr.mu.Lock()
	defer sr.mu.Unlock()
	return sr.objects.Load(), int64(len(sr.unknown))
}

// schemaIDs are the schema ids a partition writer's records named since
// its last index object.
type schemaIDs struct {
	lastKey, lastValue int // the last ids noted (most records repeat them)
	set                map[int]struct{}
}

// note notes the ids that r's key and value name where the objects keep
// their bytes: a key kept (keyKept) as bytes, a value without a schema. A
// typed value or key (decoded by the AvroConverter) is kept decoded, its
// schema in the object, and framed again for the target registry by the
// restore: its id is never produced.
func (s *schemaIDs) note(r *format.Record, keyKept, envelope bool) {
	if keyKept && (envelope || r.KeyTyped == nil || r.KeyTyped.Schema == nil) {
		if id, ok := srschemas.WireID(r.Key); ok && id != s.lastKey {
			s.lastKey = id
			s.add(id)
		}
	}
	if t := r.ValueTyped; t != nil && t.Schema != nil {
		return
	}
	if id, ok := srschemas.WireID(r.Value); ok && id != s.lastValue {
		s.lastValue = id
		s.add(id)
	}
}

func (s *schemaIDs) add(id int) {
	if s.set == nil {
		s.set = map[int]struct{}{}
	}
	s.set[id] = struct{}{}
}

// take returns the ids noted, in increasing order, and starts again.
func (s *schemaIDs) take() []int {
	if len(s.set) == 0 {
		return nil
	}
	ids := slices.Sorted(maps.Keys(s.set))
	s.set, s.lastKey, s.lastValue = nil, 0, 0
	return ids
}

// recordSchemas writes the schema objects of up's ids (runUpload, before
// the index object). A registry failure is a *ConverterError (a registry
// outage, retried), a store failure a *StoreError.
func (w *partitionWriter) recordSchemas(ctx context.Context, up upload) error {
	if len(up.schemaIDs) == 0 || w.schemaRec == nil {
		return nil
	}
	err := w.schemaRec.record(ctx, w.store, w.cfg.IndexPrefix, w.topic, up.schemaIDs)
	var se *StoreError
	switch {
	case err == nil || errors.As(err, &se) || ctx.Err() != nil:
		return err
	case errors.Is(err, srschemas.ErrRefused): // waiting does not help: stop
		return fmt.Errorf("topic %s partition %d: recording the schemas of the archived records: %w", w.topic, w.partition, err)
	}
	return &ConverterError{Topic: w.topic, Partition: w.partition, Offset: up.from, Err: fmt.Errorf("recording the schemas of the archived records: %w", err)}
}
