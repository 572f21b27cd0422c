package schemas

import (
	"context"
	"fmt"
	"strings"

	"github.com/twmb/franz-go/pkg/sr"

	"github.com/kafkas3/kafkas3/index"
)

// IDs is --schema-ids: what a restore asks of the target registry's ids.
type IDs string

const (
	// IDsRewrite registers each schema as the target registry likes and
	// rewrites the id of every framed record that differs (the default).
	IDsRewrite IDs = "rewrite"
	// IDsKeep registers each schema with its source id (IMPORT mode), so
	// no record changes; a target that cannot give the id stops the
	// restore.
	IDsKeep IDs = "keep"
)

// Topic is one restored topic's schemas: the archived topic, the target
// topic, and the schemas the archive recorded for it
// (index.LoadSchemas).
type Topic struct {
	Source, Target string
	Schemas        []index.Schema
}

// Entry is one schema of a Plan.
type Entry struct {
	Target   string // target topic
	Subject  string // the target subject
	Version  int    // the source version under the source subject; 0 when unknown
	Type     string // AVRO, JSON, PROTOBUF
	SourceID int
	// TargetID is the target registry's id; 0 in a dry run when the
	// schema is not there yet (it would be registered).
	TargetID int
}

// Plan is what a Registrar did, or in a dry run would do.
type Plan struct {
	Entries []Entry
	maps    map[string]Map // target topic -> ids
}

// Map returns the id map of target topic (nil when it has no schemas).
func (p *Plan) Map(target string) Map {
	if p == nil {
		return nil
	}
	return p.maps[target]
}

// Registrar registers archived schemas in the target registry.
type Registrar struct {
	cl   *sr.Client
	mode IDs
}

// NewRegistrar returns a Registrar over the target registry's client.
func NewRegistrar(cl *sr.Client, mode IDs) *Registrar {
	if mode == "" {
		mode = IDsRewrite
	}
	return &Registrar{cl: cl, mode: mode}
}

// Register registers the schemas of topics (dryRun: only looks them up)
// and returns the plan. Any registry failure, and in ModeKeep a target
// that cannot keep an id, is an error naming the subject and id.
func (g *Registrar) Register(ctx context.Context, topics []Topic, dryRun bool) (*Plan, error) {
	p := &Plan{maps: map[string]Map{}}
	for _, t := range topics {
		if len(t.Schemas) == 0 {
			continue
		}
		tr := &topicReg{g: g, t: t, dry: dryRun, byID: map[int]*index.Schema{}, done: map[int]*registered{}}
		for i := range t.Schemas {
			tr.byID[t.Schemas[i].ID] = &t.Schemas[i]
		}
		m := p.maps[t.Target]
		if m == nil {
			m = Map{}
			p.maps[t.Target] = m
		}
		for _, s := range t.Schemas {
			r, err := tr.register(ctx, s.ID, 0)
			if err != nil {
				return nil, err
			}
			if r.id != 0 {
				m[s.ID] = Mapped{ID: r.id, Sides: SidesOf(s.SubjectNames())}
			}
		}
		p.Entries = append(p.Entries, tr.entries...)
	}
	return p, nil
}

// registered is a schema's place in the target: id and the subject and
// version its referrers name. id 0: a dry run found it absent.
type registered struct {
	id      int
	subject string
	version int
}

// topicReg registers one topic's schemas.
type topicReg struct {
	g       *Registrar
	t       Topic
	dry     bool
	byID    map[int]*index.Schema
	done    map[int]*registered
	entries []Entry
}

// subject is the target subject of s: its source subject, with the
// archived topic's TopicNameStrategy subjects renamed to the target's;
// "<target>-value" when the source registry listed none.
func (tr *topicReg) subject(s *index.Schema) (src, dst string) {
	src = s.Subject(tr.t.Source)
	if src == "" {
		return "", tr.t.Target + "-value"
	}
	return src, tr.rename(src)
}

func (tr *topicReg) rename(subject string) string {
	for _, suffix := range []string{"-value", "-key"} {
		if subject == tr.t.Source+suffix {
			return tr.t.Target + suffix
		}
	}
	return subject
}

// register registers schema id (its references first) once.
func (tr *topicReg) register(ctx context.Context, id, depth int) (*registered, error) {
	if r, ok := tr.done[id]; ok {
		return r, nil
	}
	s, ok := tr.byID[id]
	if !ok {
		return nil, fmt.Errorf("%w: topic %q: the archive does not hold schema id %d, which another of its schemas references", ErrRegistry, tr.t.Source, id)
	}
	if depth > maxReferenceDepth {
		return nil, fmt.Errorf("%w: topic %q: schema id %d: references nested deeper than %d", ErrRegistry, tr.t.Source, id, maxReferenceDepth)
	}
	src, subject := tr.subject(s)
	schema := sr.Schema{Schema: s.Text, Type: srType(s.Type)}
	absentRef := false
	for _, ref := range s.References {
		rr, err := tr.register(ctx, ref.ID, depth+1)
		if err != nil {
			return nil, err
		}
		if rr.id == 0 {
			absentRef = true
		}
		schema.References = append(schema.References, sr.SchemaReference{Name: ref.Name, Subject: rr.subject, Version: rr.version})
	}
	r := &registered{subject: subject}
	var err error
	switch {
	case tr.dry && absentRef: // nothing to look up: a reference is not there yet
	case tr.dry:
		if err = tr.lookup(ctx, subject, schema, r); err == nil && tr.g.mode == IDsKeep && r.id != 0 && r.id != s.ID {
			err = fmt.Errorf("%w: --schema-ids keep: subject %q already holds schema id %d of the archive under id %d", ErrRegistry, subject, s.ID, r.id)
		}
	default:
		err = tr.put(ctx, s, subject, schema, r)
	}
	if err != nil {
		return nil, err
	}
	tr.done[id] = r
	tr.entries = append(tr.entries, Entry{Target: tr.t.Target, Subject: subject, Version: s.VersionOf(src), Type: s.Type, SourceID: id, TargetID: r.id})
	return r, nil
}

// lookup fills r with the target's id and version of schema under
// subject; r.id stays 0 when it is absent.
func (tr *topicReg) lookup(ctx context.Context, subject string, schema sr.Schema, r *registered) error {
	ss, err := tr.g.cl.LookupSchema(ctx, subject, schema)
	switch {
	case err == nil:
		r.id, r.version = ss.ID, ss.Version
		return nil
	case NotFound(err):
		return nil
	}
	return fmt.Errorf("%w: looking up the schema of subject %q: %w", ErrRegistry, subject, err)
}

// put registers schema (source schema s) under subject and fills r.
func (tr *topicReg) put(ctx context.Context, s *index.Schema, subject string, schema sr.Schema, r *registered) error {
	if err := tr.lookup(ctx, subject, schema, r); err != nil {
		return err
	}
	if tr.g.mode == IDsKeep {
		return tr.keep(ctx, s, subject, schema, r)
	}
	if r.id != 0 {
		return nil
	}
	if _, err := tr.g.cl.RegisterSchema(ctx, subject, schema, -1, -1); err != nil {
		return fmt.Errorf("%w: registering schema id %d under subject %q: %w", ErrRegistry, s.ID, subject, err)
	}
	if err := tr.lookup(ctx, subject, schema, r); err != nil {
		return err
	}
	if r.id == 0 {
		return fmt.Errorf("%w: registered schema id %d under subject %q, but the registry does not find it there", ErrRegistry, s.ID, subject)
	}
	return nil
}

// keep registers schema under subject with its source id in IMPORT mode.
// r holds what a lookup found: the schema already there under another id
// cannot keep its id.
func (tr *topicReg) keep(ctx context.Context, s *index.Schema, subject string, schema sr.Schema, r *registered) error {
	switch {
	case r.id == s.ID:
		return nil
	case r.id != 0:
		return fmt.Errorf("%w: --schema-ids keep: subject %q already holds schema id %d of the archive under id %d", ErrRegistry, subject, s.ID, r.id)
	}
	// force: a subject that holds other schemas already (a reference's,
	// an earlier version) may take imports too.
	if err := modeErr(tr.g.cl.SetMode(sr.WithParams(ctx, sr.Force), sr.ModeImport, subject)); err != nil {
		return fmt.Errorf("%w: --schema-ids keep: the target refuses IMPORT mode on subject %q (for schema id %d): %w", ErrRegistry, subject, s.ID, err)
	}
	version := s.VersionOf(tr.rsource(subject))
	if version == 0 {
		version = -1
	}
	got, err := tr.g.cl.RegisterSchema(ctx, subject, schema, s.ID, version)
	// Back to READWRITE whatever happened, so the subject takes new
	// schemas again.
	if merr := modeErr(tr.g.cl.SetMode(ctx, sr.ModeReadWrite, subject)); merr != nil && err == nil {
		err = fmt.Errorf("setting subject %q back to READWRITE: %w", subject, merr)
	}
	if err != nil {
		return fmt.Errorf("%w: --schema-ids keep: registering schema id %d under subject %q: %w", ErrRegistry, s.ID, subject, err)
	}
	if got != s.ID {
		return fmt.Errorf("%w: --schema-ids keep: the target gave schema id %d under subject %q the id %d", ErrRegistry, s.ID, subject, got)
	}
	if err := tr.lookup(ctx, subject, schema, r); err != nil {
		return err
	}
	if r.id != s.ID {
		return fmt.Errorf("%w: --schema-ids keep: registered schema id %d under subject %q, but the registry finds id %d there", ErrRegistry, s.ID, subject, r.id)
	}
	return nil
}

// rsource is the source subject of target subject (the rename undone).
func (tr *topicReg) rsource(subject string) string {
	for _, suffix := range []string{"-value", "-key"} {
		if subject == tr.t.Target+suffix {
			return tr.t.Source + suffix
		}
	}
	return subject
}

// modeErr is the first error of mode results.
func modeErr(rs []sr.ModeResult) error {
	var msgs []string
	for _, r := range rs {
		if r.Err != nil {
			msgs = append(msgs, r.Err.Error())
		}
	}
	if len(msgs) == 0 {
		return nil
	}
	return fmt.Errorf("%s", strings.Join(msgs, "; "))
}
