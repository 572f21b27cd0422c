package archive

import "github.com/kafkas3/kafkas3/format"

// This file holds what store.envelope (Config.Envelope) changes in the
// partition writer. The format (format.NewEnvelope) writes each record
// whole; the writer only has to treat null values as ordinary records and
// decide schema changes the way the envelope writer expects them.

// isTombstone reports whether r goes the tombstone way
// (behavior.on.null.values). With the envelope a null value is an ordinary
// record: the envelope holds it as null.
func (w *partitionWriter) isTombstone(r *format.Record) bool {
	return r.Value == nil && !w.cfg.Envelope
}

// decideSchema compares r's value schema with the open file f's, as
// schema.compatibility says. With the envelope, a null value fits any file
// (its envelope is written under the file's schema), and a switch between
// values with and without a schema rotates instead of being a bad record:
// a file holds one envelope schema, and the next file holds the other.
func (w *partitionWriter) decideSchema(f *openFile, r *format.Record) (schemaAction, error) {
	var rs *format.Schema
	if r.ValueTyped != nil {
		rs = r.ValueTyped.Schema
	}
	if w.cfg.Envelope {
		switch {
		case r.Value == nil && r.ValueTyped == nil:
			return schemaKeep, nil
		case f.typed != (rs != nil):
			return schemaRotate, nil
		}
	}
	return w.schemas.decide(f.typed, f.schema, rs)
}
