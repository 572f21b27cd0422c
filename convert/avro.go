package convert

import (
	"context"
	"encoding/binary"
	"errors"
	"fmt"
	"log/slog"
	"math"
	"net/url"
	"strings"
	"sync"

	"github.com/twmb/avro"
	"github.com/twmb/franz-go/pkg/sr"

	"github.com/kafkas3/kafkas3/format"
)

// WireHeaderLen is the length of Confluent's wire format header: magic
// byte 0 and a 4-byte big-endian schema id.
const WireHeaderLen = 5

// AvroConverter is Confluent's AvroConverter. It is safe for concurrent
// use.
type AvroConverter struct {
	cfg Config
	cl  *sr.Client
	log *slog.Logger

	mu       sync.Mutex
	byID     map[int]*avroEntry                 // schema id -> parsed schema
	bySubjID map[subjectID]*format.Schema       // (subject, id) -> schema with version
	reg      map[subjectText]int                // (subject, text) -> id, for Encode
	regs     map[subjectText]*regCall           // lookups and registrations under way
	datums   map[*avro.Schema]*format.AvroDatum // for Encode of foreign schemas
}

// regCall is a lookup or registration under way: callers asking for the
// same subject and schema meanwhile wait for its result instead of asking
// the registry again.
type regCall struct {
	done chan struct{}
	id   int
	err  error
}

type avroEntry struct {
	schema *format.Schema // Version 0
	datum  *format.AvroDatum
}

type subjectID struct {
	subject string
	id      int
}

type subjectText struct{ subject, text string }

// NewAvro returns an AvroConverter for cfg's registry. It makes no request
// until the first Convert or Encode.
func NewAvro(cfg Config) (*AvroConverter, error) {
	cl, err := newRegistryClient(cfg)
	if err != nil {
		return nil, err
	}
	return &AvroConverter{
		cfg:      cfg,
		cl:       cl,
		log:      cfg.logger(),
		byID:     map[int]*avroEntry{},
		bySubjID: map[subjectID]*format.Schema{},
		reg:      map[subjectText]int{},
		regs:     map[subjectText]*regCall{},
		datums:   map[*avro.Schema]*format.AvroDatum{},
	}, nil
}

func newRegistryClient(cfg Config) (*sr.Client, error) {
	if strings.TrimSpace(cfg.SchemaRegistryURL) == "" {
		return nil, fmt.Errorf("%w: %s is required by %s", ErrInvalidConfig, cfg.key("schema.registry.url"), KindAvro.ClassName())
	}
	var urls []string
	var user, pass string
	var haveURLAuth bool
	for _, raw := range strings.Split(cfg.SchemaRegistryURL, ",") {
		raw = strings.TrimSpace(raw)
		if raw == "" {
			continue
		}
		u, err := url.Parse(raw)
		if err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" {
			return nil, fmt.Errorf("%w: %s %q: want http(s)://host[:port]", ErrInvalidConfig, cfg.key("schema.registry.url"), raw)
		}
		if u.User != nil {
			user = u.User.Username()
			pass, _ = u.User.Password()
			haveURLAuth = true
			u.User = nil
		}
		urls = append(urls, strings.TrimRight(u.String(), "/"))
	}
	opts := []sr.ClientOpt{sr.URLs(urls...)}
	switch strings.ToUpper(strings.TrimSpace(cfg.BasicAuthCredentialsSource)) {
	case "", CredentialsURL:
		if cfg.BasicAuthUserInfo != "" && !haveURLAuth {
			return nil, fmt.Errorf("%w: %s is set but %s is not %s (Confluent would ignore it)",
				ErrInvalidConfig, cfg.key("basic.auth.user.info"), cfg.key("basic.auth.credentials.source"), CredentialsUserInfo)
		}
		if haveURLAuth {
			opts = append(opts, sr.BasicAuth(user, pass))
		}
	case CredentialsUserInfo:
		u, p, ok := strings.Cut(cfg.BasicAuthUserInfo, ":")
		if !ok || u == "" {
			return nil, fmt.Errorf("%w: %s must be user:password with %s=%s",
				ErrInvalidConfig, cfg.key("basic.auth.user.info"), cfg.key("basic.auth.credentials.source"), CredentialsUserInfo)
		}
		opts = append(opts, sr.BasicAuth(u, p))
	default:
		return nil, fmt.Errorf("%w: %s %q; allowed: %s, %s", ErrInvalidConfig,
			cfg.key("basic.auth.credentials.source"), cfg.BasicAuthCredentialsSource, CredentialsURL, CredentialsUserInfo)
	}
	if cfg.HTTPClient != nil {
		opts = append(opts, sr.HTTPClient(cfg.HTTPClient))
	}
	cl, err := sr.NewClient(opts...)
	if err != nil {
		return nil, fmt.Errorf("%w: %w", ErrInvalidConfig, err)
	}
	return cl, nil
}

// registryNotFound reports whether err is the registry saying a subject,
// version or schema does not exist.
func registryNotFound(err error) bool {
	var re *sr.ResponseError
	return errors.As(err, &re) && (re.StatusCode == 404 || sr.IsNotFoundError(re.ErrorCode))
}

// registryErr classifies a registry failure: ErrRegistry, with
// ErrRegistryAuth when the credentials were refused.
func registryErr(err error) error {
	var re *sr.ResponseError
	if errors.As(err, &re) && (re.StatusCode == 401 || re.StatusCode == 403) {
		return fmt.Errorf("%w: %w", ErrRegistry, ErrRegistryAuth)
	}
	return ErrRegistry
}

// Convert decodes Confluent's wire format. The result's Raw aliases data
// (data[5:]); its Schema is shared between records with the same id and
// subject and must not be modified. The datum is checked structurally
// against the schema, not decoded (see format.AvroNative).
func (c *AvroConverter) Convert(ctx context.Context, topic string, isKey bool, data []byte) (*format.Typed, error) {
	if data == nil {
		return nil, nil
	}
	if len(data) < WireHeaderLen {
		return nil, fmt.Errorf("avro converter: topic %q %s: %d bytes, too short for the Confluent wire format: %w", topic, part(isKey), len(data), ErrBadData)
	}
	if data[0] != 0 {
		return nil, fmt.Errorf("avro converter: topic %q %s: unknown magic byte %d: %w", topic, part(isKey), data[0], ErrBadData)
	}
	id := int(binary.BigEndian.Uint32(data[1:WireHeaderLen]))
	if id > math.MaxInt32 {
		return nil, fmt.Errorf("avro converter: topic %q %s: schema id %d out of range: %w", topic, part(isKey), id, ErrBadData)
	}
	e, err := c.byIDCached(ctx, id)
	if err != nil {
		return nil, fmt.Errorf("avro converter: topic %q %s: schema id %d: %w", topic, part(isKey), id, err)
	}
	raw := data[WireHeaderLen:]
	if err := e.datum.Check(raw); err != nil {
		return nil, fmt.Errorf("avro converter: topic %q %s: schema id %d: %w: %w", topic, part(isKey), id, ErrBadData, err)
	}
	return &format.Typed{Schema: c.withVersion(ctx, SubjectName(topic, isKey), id, e.schema), Raw: raw}, nil
}

// byIDCached returns the schema with id, fetching it once.
func (c *AvroConverter) byIDCached(ctx context.Context, id int) (*avroEntry, error) {
	c.mu.Lock()
	e, ok := c.byID[id]
	c.mu.Unlock()
	if ok {
		return e, nil
	}
	s, err := c.cl.SchemaByID(ctx, id)
	if err != nil {
		if registryNotFound(err) {
			return nil, fmt.Errorf("%w: not found in the registry: %w", ErrBadData, err)
		}
		return nil, fmt.Errorf("%w: fetching the schema: %w", registryErr(err), err)
	}
	if s.Type != sr.TypeAvro {
		return nil, fmt.Errorf("%w: registry schema is %s, not Avro", ErrBadData, s.Type)
	}
	if len(s.References) > 0 {
		return nil, fmt.Errorf("%w: schema references are not supported", ErrBadData)
	}
	parsed, err := avro.Parse(s.Schema)
	if err != nil {
		return nil, fmt.Errorf("%w: registry schema does not parse: %w", ErrBadData, err)
	}
	d, err := format.NewAvroDatum(parsed)
	if err != nil {
		return nil, fmt.Errorf("%w: %w", ErrBadData, err)
	}
	e = &avroEntry{schema: &format.Schema{ID: id, Avro: parsed, Text: s.Schema}, datum: d}
	c.mu.Lock()
	if old, ok := c.byID[id]; ok {
		e = old
	} else {
		c.byID[id] = e
	}
	c.mu.Unlock()
	c.log.Debug("schema fetched", "id", id)
	return e, nil
}

// withVersion returns base with the version of id under subject, looked up
// once (GET /schemas/ids/{id}/versions); Version stays 0 when the registry
// does not say.
func (c *AvroConverter) withVersion(ctx context.Context, subject string, id int, base *format.Schema) *format.Schema {
	key := subjectID{subject, id}
	c.mu.Lock()
	s, ok := c.bySubjID[key]
	c.mu.Unlock()
	if ok {
		return s
	}
	s = base
	vs, err := c.cl.SchemaVersionsByID(ctx, id)
	if err != nil {
		c.log.Debug("schema versions unavailable", "id", id, "err", err)
	}
	for _, v := range vs {
		if v.Subject == subject {
			cp := *base
			cp.Version = v.Version
			s = &cp
			break
		}
	}
	c.mu.Lock()
	if old, ok := c.bySubjID[key]; ok {
		s = old
	} else {
		c.bySubjID[key] = s
	}
	c.mu.Unlock()
	return s
}

// Register returns the id of schema under subject in the registry,
// registering it when absent (a lookup first, so a read-only registry
// that has it works). Results are cached, and callers asking at once for
// the same subject and schema share one lookup.
func (c *AvroConverter) Register(ctx context.Context, subject string, schema *format.Schema) (int, error) {
	if schema == nil {
		return 0, errors.New("avro converter: nil schema")
	}
	text := schema.Text
	if text == "" && schema.Avro != nil {
		text = schema.Avro.String()
	}
	key := subjectText{subject, text}
	c.mu.Lock()
	if id, ok := c.reg[key]; ok {
		c.mu.Unlock()
		return id, nil
	}
	if call, ok := c.regs[key]; ok {
		c.mu.Unlock()
		select {
		case <-call.done:
			return call.id, call.err
		case <-ctx.Done():
			return 0, ctx.Err()
		}
	}
	call := &regCall{done: make(chan struct{})}
	c.regs[key] = call
	c.mu.Unlock()
	call.id, call.err = c.lookupOrRegister(ctx, subject, text)
	c.mu.Lock()
	if call.err == nil {
		c.reg[key] = call.id
	}
	delete(c.regs, key)
	c.mu.Unlock()
	close(call.done)
	return call.id, call.err
}

// lookupOrRegister asks the registry for the id of text under subject,
// registering it when absent.
func (c *AvroConverter) lookupOrRegister(ctx context.Context, subject, text string) (int, error) {
	var id int
	ss, err := c.cl.LookupSchema(ctx, subject, sr.Schema{Schema: text})
	switch {
	case err == nil:
		id = ss.ID
	case registryNotFound(err):
		id, err = c.cl.RegisterSchema(ctx, subject, sr.Schema{Schema: text}, -1, -1)
		if err != nil {
			return 0, fmt.Errorf("avro converter: registering a schema under subject %q: %w: %w", subject, registryErr(err), err)
		}
		c.log.Debug("schema registered", "subject", subject, "id", id)
	default:
		return 0, fmt.Errorf("avro converter: looking up a schema under subject %q: %w: %w", subject, registryErr(err), err)
	}
	return id, nil
}

func (c *AvroConverter) datumFor(s *avro.Schema) (*format.AvroDatum, error) {
	c.mu.Lock()
	d, ok := c.datums[s]
	c.mu.Unlock()
	if ok {
		return d, nil
	}
	d, err := format.NewAvroDatum(s)
	if err != nil {
		return nil, err
	}
	c.mu.Lock()
	c.datums[s] = d
	c.mu.Unlock()
	return d, nil
}

// Encode registers schema under subject when absent (see Register) and
// returns native in Confluent's wire format: magic byte, the registry's id
// for the schema, and the Avro binary (deterministic, see
// format.AvroDatum.Append).
func (c *AvroConverter) Encode(ctx context.Context, subject string, schema *format.Schema, native any) ([]byte, error) {
	if schema == nil || schema.Avro == nil {
		return nil, errors.New("avro converter: encode needs a parsed schema")
	}
	d, err := c.datumFor(schema.Avro)
	if err != nil {
		return nil, fmt.Errorf("avro converter: subject %q: %w", subject, err)
	}
	id, err := c.Register(ctx, subject, schema)
	if err != nil {
		return nil, err
	}
	out, err := d.Append(AppendWireHeader(nil, id), native)
	if err != nil {
		return nil, fmt.Errorf("avro converter: subject %q schema id %d: %w", subject, id, err)
	}
	return out, nil
}

// EncodeRaw is Encode for a value already in Avro binary under schema (an
// archive reader's Record.Value): it checks raw and frames it.
func (c *AvroConverter) EncodeRaw(ctx context.Context, subject string, schema *format.Schema, raw []byte) ([]byte, error) {
	if schema == nil || schema.Avro == nil {
		return nil, errors.New("avro converter: encode needs a parsed schema")
	}
	d, err := c.datumFor(schema.Avro)
	if err != nil {
		return nil, fmt.Errorf("avro converter: subject %q: %w", subject, err)
	}
	if err := d.Check(raw); err != nil {
		return nil, fmt.Errorf("avro converter: subject %q: %w", subject, err)
	}
	id, err := c.Register(ctx, subject, schema)
	if err != nil {
		return nil, err
	}
	return append(AppendWireHeader(make([]byte, 0, WireHeaderLen+len(raw)), id), raw...), nil
}

// AppendWireHeader appends Confluent's 5-byte header for schema id to dst.
func AppendWireHeader(dst []byte, id int) []byte {
	return binary.BigEndian.AppendUint32(append(dst, 0), uint32(id))
}

// NewRegistryClient returns a Schema Registry client for cfg's
// schema.registry.url and credentials (as the AvroConverter's), for the
// schemas an archive carries (package schemas).
func NewRegistryClient(cfg Config) (*sr.Client, error) { return newRegistryClient(cfg) }
