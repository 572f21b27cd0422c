package restore

import (
	"context"
	"fmt"
	"io"
	"maps"
	"slices"

	"github.com/kafkas3/kafkas3/format"
	"github.com/kafkas3/kafkas3/index"
	"github.com/kafkas3/kafkas3/s3store"
	"github.com/kafkas3/kafkas3/schemas"
)

// Schemas the records reference
//
// The sink records, under the index prefix, the schema of every key and
// value framed in Confluent's wire format (index.SchemaKey). With
// Config.Schemas (a target registry: value.converter.schema.registry.url,
// else key.converter's), the restore loads each restored topic's schema
// objects (index.LoadSchemas) and registers them in the target
// (schemas.Registrar: references first, the archived topic's
// "<topic>-value" and "<topic>-key" subjects renamed to the target
// topic's), before anything is produced; any refusal or an unreachable
// registry stops it there, naming the subject and id. Each produced value
// and key that the restore does not frame itself (typed Avro and Parquet
// values and typed keys are framed for the target registry already, see
// typed.go) and that carries a recorded id gets the target's id
// (schemas.Map.Rewrite, on a copy: the decoded bytes may alias an object's
// buffer, which must stay as read; the copy lives as long as the record,
// and only records whose id changes pay it).
// A framed-looking value or key whose id the archive did not record is
// produced as it is and counted (Summary.SchemaIDsUnknown). The
// exactly-once check of the records already restored (verifyTail) compares
// the target with the records as this run produces them, ids rewritten.
// Without Config.Schemas, records are produced as archived (a restore into
// the cluster whose registry still holds the schemas). In follow mode each
// pass lists the topics' schema objects again (one request per topic) and
// registers them again when the listing changed.

// SchemaRegistrar registers an archive's schemas in the target registry
// (schemas.Registrar).
type SchemaRegistrar interface {
	Register(ctx context.Context, topics []schemas.Topic, dryRun bool) (*schemas.Plan, error)
}

// schemaState is what the restore knows of a source topic's schemas.
type schemaState struct {
	keys []string // the schema object keys last listed, sorted
}

// prepareSchemas registers the schemas of plan's topics in the target
// registry (dryRun: looks them up) and keeps each target topic's id map
// for the records. It returns the registrar's plan; nil without
// Config.Schemas or recorded schemas.
func (r *Restorer) prepareSchemas(ctx context.Context, plan *Plan, dryRun bool) (*schemas.Plan, error) {
	if r.cfg.Schemas == nil || r.cfg.IndexPrefix == "" {
		return nil, nil
	}
	var topics []schemas.Topic
	listed := map[string][]string{} // source topic -> its schema keys
	for _, t := range plan.Topics {
		keys, err := r.schemaKeys(ctx, t.Source)
		if err != nil {
			return nil, err
		}
		r.mu.Lock()
		same := slices.Equal(r.schemaStates[t.Source].keys, keys)
		r.mu.Unlock()
		if len(keys) == 0 || same && !dryRun {
			continue
		}
		ss, err := index.LoadSchemas(ctx, r.store, r.cfg.IndexPrefix, t.Source)
		if err != nil {
			return nil, fmt.Errorf("topic %q: the archive's schemas: %w", t.Source, err)
		}
		topics = append(topics, schemas.Topic{Source: t.Source, Target: t.Target, Schemas: ss})
		listed[t.Source] = keys
	}
	if len(topics) == 0 {
		return nil, nil
	}
	sp, err := r.cfg.Schemas.Register(ctx, topics, dryRun)
	if err != nil {
		return nil, fmt.Errorf("target schema registry: %w", err)
	}
	if !dryRun {
		r.mu.Lock()
		for _, t := range topics {
			// A new map (readers may hold the old one), with what a later
			// pass or another source topic into this target added.
			m := maps.Clone(r.idMaps[t.Target])
			if m == nil {
				m = schemas.Map{}
			}
			maps.Copy(m, sp.Map(t.Target))
			r.idMaps[t.Target] = m
			r.schemaStates[t.Source] = schemaState{keys: listed[t.Source]} // registered: not again
		}
		r.mu.Unlock()
		r.log.Info("schemas registered in the target registry", "schemas", len(sp.Entries))
	}
	return sp, nil
}

// writeUnregistered says, without a target registry, how many schema
// objects the archive holds for plan's topics (one listing per topic).
func (r *Restorer) writeUnregistered(ctx context.Context, w io.Writer, plan *Plan) error {
	if r.cfg.IndexPrefix == "" {
		return nil
	}
	n := 0
	for _, t := range plan.Topics {
		keys, err := r.schemaKeys(ctx, t.Source)
		if err != nil {
			return err
		}
		n += len(keys)
	}
	if n == 0 {
		return nil
	}
	_, err := fmt.Fprintf(w, "schemas: the archive records %d schema objects for these topics; no target registry (value.converter.schema.registry.url): framed keys and values keep their archived ids\n", n)
	return err
}

// schemaKeys lists topic's schema object keys, sorted.
func (r *Restorer) schemaKeys(ctx context.Context, topic string) ([]string, error) {
	var keys []string
	dir := index.SchemaTopicDir(r.cfg.IndexPrefix, topic)
	err := r.store.List(ctx, dir, func(info s3store.ObjectInfo) error {
		keys = append(keys, info.Key)
		return nil
	})
	if err != nil {
		return nil, fmt.Errorf("list the schemas under %q: %w", dir, err)
	}
	slices.Sort(keys)
	return keys, nil
}

// framesKey reports whether keyFrom frames the key of krec (a .keys
// object's record) for the target registry itself.
func (r *Restorer) framesKey(krec *format.Record) bool {
	return r.cfg.KeyEncoder != nil && krec.ValueTyped != nil && krec.ValueTyped.Schema != nil
}

// schemasMapped counts the schema ids of the target topics' maps.
func (r *Restorer) schemasMapped() int {
	r.mu.Lock()
	defer r.mu.Unlock()
	n := 0
	for _, m := range r.idMaps {
		n += len(m)
	}
	return n
}

// idMap returns target's id map (nil without one).
func (r *Restorer) idMap(target string) schemas.Map {
	r.mu.Lock()
	defer r.mu.Unlock()
	return r.idMaps[target]
}

// rewriteIDs gives rec's value (unless the restore framed it: typedValue)
// and key (unless keyFramed) the target registry's schema ids (m).
//
// The erasure list (Config.ExcludeKeys) names archived keys: a listed key
// that --exclude-action drop leaves out keeps its archived bytes, so that
// keeps still finds it listed (it is never produced); a listed key that
// becomes a tombstone (erase, before) is rewritten like any key, and its
// rewritten bytes are noted as listed too (rewrittenListed), so erased
// counts it.
func (r *Restorer) rewriteIDs(m schemas.Map, rec *format.Record, valueFramed, keyFramed bool) {
	if m == nil {
		return
	}
	var unknown bool
	if !valueFramed {
		rec.Value, unknown = m.Rewrite(rec.Value, schemas.SideValue)
		r.countUnknownID(unknown)
	}
	if keyFramed {
		return
	}
	listed := r.listed(rec.Key)
	if listed && r.cfg.Filter.DropKeys {
		return
	}
	archived := rec.Key
	rec.Key, unknown = m.Rewrite(rec.Key, schemas.SideKey)
	r.countUnknownID(unknown)
	if listed && !unknown && len(archived) > 0 && &archived[0] != &rec.Key[0] {
		r.rewrittenListed.Store(string(rec.Key), struct{}{})
	}
}

func (r *Restorer) countUnknownID(unknown bool) {
	if unknown {
		r.unknownIDs.Add(1)
	}
}

// WriteSchemaPlan prints, for a dry run, each schema the archive records
// for plan's topics with its source id and target id ("would register"
// when the target does not hold it); without Config.Schemas, how many the
// archive records and that their ids would be produced as archived.
func (r *Restorer) WriteSchemaPlan(ctx context.Context, w io.Writer, plan *Plan) error {
	if r.cfg.Schemas == nil {
		return r.writeUnregistered(ctx, w, plan)
	}
	sp, err := r.prepareSchemas(ctx, plan, true)
	if err != nil {
		return err
	}
	if sp == nil || len(sp.Entries) == 0 {
		_, err := fmt.Fprintln(w, "schemas: none recorded in the archive for these topics")
		return err
	}
	if _, err := fmt.Fprintf(w, "schemas (%d), registered in the target registry before producing:\n", len(sp.Entries)); err != nil {
		return err
	}
	for _, e := range sp.Entries {
		target := "would register"
		if e.TargetID != 0 {
			target = fmt.Sprintf("target id %d", e.TargetID)
		}
		if _, err := fmt.Fprintf(w, "  %s: subject %q version %d %s: source id %d, %s\n", e.Target, e.Subject, e.Version, e.Type, e.SourceID, target); err != nil {
			return err
		}
	}
	return nil
}
