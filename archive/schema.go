package archive

import (
	"context"
	"fmt"

	"github.com/kafkas3/kafkas3/format"
	"github.com/twmb/avro"
)

// schemaAction is what a record's value schema means for the open file of
// its encoded partition.
type schemaAction int

const (
	schemaKeep    schemaAction = iota // write the record as it is
	schemaRotate                      // commit all open files, then write it into a new file
	schemaProject                     // write it projected to the file's schema
)

// applySchema makes the schema decision for r and the open file f of
// its encoded partition (schema.compatibility, decideSchema): it returns
// f when r joins it, with r's value projected to f's schema when the mode
// says so, or nil after rotating every open file. A schema r cannot be
// written with makes r a bad record.
func (w *partitionWriter) applySchema(ctx context.Context, f *openFile, r *format.Record) (*openFile, error) {
	act, err := w.decideSchema(f, r)
	if err != nil {
		return nil, w.bad(r, err)
	}
	switch act {
	case schemaRotate:
		return nil, w.rotate(ctx)
	case schemaProject:
		p, err := w.schemas.project(r.ValueTyped, f.schema)
		if err != nil {
			return nil, w.bad(r, err)
		}
		r.ValueTyped = p
	}
	return f, nil
}

// decideSchema compares r's value schema with the open file f's, as
// schema.compatibility says. With store.envelope, a null value fits any
// file (its envelope is written under the file's schema), and a switch
// between values with and without a schema rotates instead of being a bad
// record: a file holds one envelope schema, and the next file holds the
// other.
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

// schemaPair keys the resolution cache: a record's schema and the file's.
type schemaPair struct{ from, to *avro.Schema }

// resolution is what is known about projecting from one schema to another.
type resolution struct {
	sameName bool         // same root type and name (Connect's type/name check)
	resolved *avro.Schema // decodes from-data into to's layout; nil if err
	err      error
}

// schemas decides schema changes for one partition writer, as Confluent's
// storage connectors do with schema.compatibility, and projects records.
// Decisions depend only on the records, so replays cut the same files.
type schemas struct {
	mode  Compatibility
	cache map[schemaPair]*resolution
}

func newSchemas(mode Compatibility) *schemas {
	if mode == "" {
		mode = CompatNone
	}
	return &schemas{mode: mode, cache: map[schemaPair]*resolution{}}
}

// decide compares a record's value schema rs (nil for schemaless data)
// with the schema of the open file: cur, and typed telling whether the
// file holds schema-based data. Errors are about the record.
func (s *schemas) decide(typed bool, cur, rs *format.Schema) (schemaAction, error) {
	switch {
	case !typed && rs == nil:
		return schemaKeep, nil
	case typed != (rs != nil):
		return schemaKeep, ErrSchemaSwitch
	case format.SameAvroSchema(cur, rs):
		return schemaKeep, nil
	case s.mode == CompatNone:
		return schemaRotate, nil
	}
	if !s.resolution(rs, cur).sameName {
		return schemaRotate, nil
	}
	if cur.Version == 0 || rs.Version == 0 {
		return schemaKeep, fmt.Errorf("%w for %s compatibility (schema ids %d and %d)", ErrSchemaVersion, s.mode, cur.ID, rs.ID)
	}
	switch s.mode {
	case CompatForward:
		if rs.Version < cur.Version {
			return schemaRotate, nil
		}
	default: // BACKWARD, FULL
		if rs.Version > cur.Version {
			return schemaRotate, nil
		}
	}
	return schemaProject, nil
}

// resolution returns the cached resolution of from-data into to.
func (s *schemas) resolution(from, to *format.Schema) *resolution {
	k := schemaPair{from.Avro, to.Avro}
	if r, ok := s.cache[k]; ok {
		return r
	}
	a, b := from.Avro.Root(), to.Avro.Root()
	r := &resolution{sameName: a.Type == b.Type && a.Name == b.Name && a.Namespace == b.Namespace}
	r.resolved, r.err = avro.Resolve(from.Avro, to.Avro)
	s.cache[k] = r
	return r
}

// project returns t's value in the layout of schema to: fields only in to
// get their defaults, fields only in t's schema are dropped, and types are
// promoted, by Avro schema resolution. Errors are about the record.
func (s *schemas) project(t *format.Typed, to *format.Schema) (*format.Typed, error) {
	r := s.resolution(t.Schema, to)
	if r.err != nil {
		return nil, fmt.Errorf("cannot project schema id %d version %d to the file's schema id %d version %d: %w",
			t.Schema.ID, t.Schema.Version, to.ID, to.Version, r.err)
	}
	raw := t.Raw
	if raw == nil {
		var err error
		if raw, err = t.Schema.Avro.Encode(t.Native); err != nil {
			return nil, fmt.Errorf("encoding the value under schema id %d: %w", t.Schema.ID, err)
		}
	}
	var v any
	rest, err := r.resolved.Decode(raw, &v)
	if err != nil {
		return nil, fmt.Errorf("projecting schema id %d version %d to version %d: %w", t.Schema.ID, t.Schema.Version, to.Version, err)
	}
	if len(rest) != 0 {
		return nil, fmt.Errorf("projecting schema id %d: %d bytes left over after the value", t.Schema.ID, len(rest))
	}
	return &format.Typed{Schema: to, Native: v}, nil
}
