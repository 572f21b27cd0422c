package archive

import (
	"context"
	"fmt"

	"github.com/kafkas3/kafkas3/format"
)

// This file holds the parallel .keys and .headers objects of the partition
// writer's files (store.kafka.keys, store.kafka.headers): their records,
// built by format.KeyPart and format.HeadersPart per keys.format.class and
// headers.format.class, and their writes after the value object's.

// ErrNullKeyBytes is wrapped by the bad-record error of a record with a
// null key when keys are stored in the bytes format, which has no null.
var ErrNullKeyBytes = format.ErrNullKeyBytes

// Part names, as FileStats.Part reports them.
const (
	PartKeys    = "keys"
	PartHeaders = "headers"
)

// stringKeyConverter is the Connect class whose keys are strings.
const stringKeyConverter = "org.apache.kafka.connect.storage.StringConverter"

// partRecs are the records of a record's parallel objects: nil for an
// object that is not written.
type partRecs struct{ key, headers *format.Record }

// partRecords builds the records the .keys and .headers objects get for
// r. Errors are about the record.
func (w *partitionWriter) partRecords(r *format.Record) (partRecs, error) {
	var out partRecs
	var err error
	if w.keys != nil {
		if out.key, err = w.keys.Record(r); err != nil {
			return partRecs{}, err
		}
	}
	if w.headers != nil {
		if out.headers, err = w.headers.Record(r); err != nil {
			return partRecs{}, err
		}
	}
	return out, nil
}

// keySchemaChanged tells a key record whose schema is not the one of the
// open file f's .keys object: one .keys object holds one key schema.
func keySchemaChanged(f *openFile, keyRec *format.Record) bool {
	return keyRec != nil && keyRec.ValueTyped != nil && f.keySchema != nil && !format.SameAvroSchema(f.keySchema, keyRec.ValueTyped.Schema)
}

// writeParts writes r's parallel records to f's .keys and .headers
// objects, after its value (writeValue). As the value object may already
// hold the record, partFailed sorts out a failure.
func (w *partitionWriter) writeParts(ctx context.Context, f *openFile, encoded string, r *format.Record, parts partRecs) error {
	for _, pw := range []struct {
		o   *object
		rec *format.Record
	}{{f.keys, parts.key}, {f.headers, parts.headers}} {
		if pw.o == nil {
			continue
		}
		if err := pw.o.rw.Write(pw.rec); err != nil {
			return w.partFailed(ctx, f, encoded, r, pw.o, err)
		}
	}
	return nil
}

// partFailed handles err from writing r to f's parallel object o. A store
// failure is a *StoreError. A new set is dropped whole, the objects
// written before included, and r is a bad record. Otherwise the value (and
// maybe the keys) object already holds r: the objects are out of step and
// cannot be committed, so every open file is aborted and the sink stops
// rather than write misaligned files.
func (w *partitionWriter) partFailed(ctx context.Context, f *openFile, encoded string, r *format.Record, o *object, err error) error {
	if o.counter.err != nil {
		return &StoreError{Key: o.key, Err: err}
	}
	if f.records == 0 {
		w.drop(ctx, encoded)
		return w.bad(r, err)
	}
	w.abort(ctx)
	return fmt.Errorf("topic %s partition %d offset %d: object %q: %w (the %s object would no longer match its value object)",
		r.Topic, r.Partition, r.Offset, o.key, err, o.part)
}
