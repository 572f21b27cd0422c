package index

import (
	"bytes"
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"slices"
	"sort"
	"strconv"
	"strings"
	"sync"

	"github.com/kafkas3/kafkas3/s3store"
)

// SchemaVersion is the version of the schema objects this package writes
// and reads.
const SchemaVersion = 1

// Schema types, as Confluent's Schema Registry names them.
const (
	SchemaAvro     = "AVRO"
	SchemaJSON     = "JSON"
	SchemaProtobuf = "PROTOBUF"
)

// ErrSchemaConflict is wrapped when an archive holds two different schemas
// under one id for one topic (two source registries wrote into it).
var ErrSchemaConflict = errors.New("two different schemas under one id")

// Schema is one Schema Registry schema that archived records reference in
// Confluent's wire format (magic byte 0 and a 4-byte big-endian id), as
// the sink found it in the source registry.
type Schema struct {
	V  int `json:"v"`
	ID int `json:"id"`
	// Type is AVRO, JSON or PROTOBUF.
	Type string `json:"type"`
	// Subjects are the subjects and versions the registry listed for the
	// id, sorted by subject then version; empty when it listed none.
	Subjects []SubjectVersion `json:"subjects"`
	// References are the schemas this one references, as the registry
	// gave them, each with the referenced schema's id (its own Schema
	// object is recorded too).
	References []SchemaReference `json:"references,omitempty"`
	// Text is the schema text.
	Text string `json:"schema"`
}

// SubjectVersion is one subject a schema is registered under, and its
// version there.
type SubjectVersion struct {
	Subject string `json:"subject"`
	Version int    `json:"version"`
}

// SchemaReference is a reference of a schema: the name the schema text
// uses, the subject and version it resolves to, and that schema's id.
type SchemaReference struct {
	Name    string `json:"name"`
	Subject string `json:"subject"`
	Version int    `json:"version"`
	ID      int    `json:"id"`
}

// Validate checks s's fields.
func (s *Schema) Validate() error {
	switch {
	case s.V != SchemaVersion:
		return fmt.Errorf("version %d, want %d", s.V, SchemaVersion)
	case s.ID < 0:
		return fmt.Errorf("id %d is negative", s.ID)
	case s.Type != SchemaAvro && s.Type != SchemaJSON && s.Type != SchemaProtobuf:
		return fmt.Errorf("type %q, want %s, %s or %s", s.Type, SchemaAvro, SchemaJSON, SchemaProtobuf)
	case s.Text == "":
		return errors.New("no schema text")
	}
	for _, sv := range s.Subjects {
		if sv.Subject == "" || sv.Version <= 0 {
			return fmt.Errorf("subject %q version %d", sv.Subject, sv.Version)
		}
	}
	for _, r := range s.References {
		if r.Name == "" || r.Subject == "" || r.Version <= 0 || r.ID < 0 {
			return fmt.Errorf("reference %q: subject %q version %d id %d", r.Name, r.Subject, r.Version, r.ID)
		}
	}
	return nil
}

// Subject returns the subject a restore registers s under for topic: the
// TopicNameStrategy subject "<topic>-value" or "<topic>-key" when the
// registry listed s under it (value first), else the first subject listed,
// else "".
func (s *Schema) Subject(topic string) string {
	for _, suffix := range []string{"-value", "-key"} {
		for _, sv := range s.Subjects {
			if sv.Subject == topic+suffix {
				return sv.Subject
			}
		}
	}
	if len(s.Subjects) > 0 {
		return s.Subjects[0].Subject
	}
	return ""
}

// SubjectNames returns the names of the subjects the registry listed for
// s, in order.
func (s *Schema) SubjectNames() []string {
	out := make([]string, len(s.Subjects))
	for i, sv := range s.Subjects {
		out[i] = sv.Subject
	}
	return out
}

// VersionOf returns s's version under subject, or 0.
func (s *Schema) VersionOf(subject string) int {
	for _, sv := range s.Subjects {
		if sv.Subject == subject {
			return sv.Version
		}
	}
	return 0
}

// EncodeSchema returns s as one JSON line: fields in a fixed order,
// subjects sorted, so the same schema always gives the same bytes.
func EncodeSchema(s Schema) ([]byte, error) {
	s.Subjects = slices.Clone(s.Subjects)
	sort.Slice(s.Subjects, func(i, j int) bool {
		a, b := s.Subjects[i], s.Subjects[j]
		if a.Subject != b.Subject {
			return a.Subject < b.Subject
		}
		return a.Version < b.Version
	})
	if s.Subjects == nil {
		s.Subjects = []SubjectVersion{}
	}
	if err := s.Validate(); err != nil {
		return nil, fmt.Errorf("%w: schema id %d: %w", ErrMalformed, s.ID, err)
	}
	var buf bytes.Buffer
	enc := json.NewEncoder(&buf)
	enc.SetEscapeHTML(false)
	if err := enc.Encode(s); err != nil {
		return nil, err
	}
	return buf.Bytes(), nil
}

// SchemaTopicDir is the folder of topic's schema objects:
// "<prefix>schemas/<topic>/".
func SchemaTopicDir(prefix, topic string) string {
	return prefix + "schemas/" + topic + "/"
}

// SchemaKey is the key of the schema object data of schema id for topic:
//
//	<prefix>schemas/<topic>/<id, 10 digits>-<first 16 hex digits of the SHA-256 of data>.json
//
// The key names its bytes: writing it again (a replay) writes the same
// bytes, and a schema recorded differently (the registry listed another
// subject since) goes under another key, never over the first.
func SchemaKey(prefix, topic string, id int, data []byte) string {
	return fmt.Sprintf("%s%010d-%s.json", SchemaTopicDir(prefix, topic), id, schemaDigest(data))
}

// schemaDigest is the first 16 hex digits of the SHA-256 of data.
func schemaDigest(data []byte) string {
	sum := sha256.Sum256(data)
	return hex.EncodeToString(sum[:8])
}

// ParseSchemaKey returns the id and digest a key under SchemaTopicDir
// names.
func ParseSchemaKey(dir, key string) (id int, digest string, err error) {
	name, ok := strings.CutPrefix(key, dir)
	if ok {
		name, ok = strings.CutSuffix(name, ".json")
	}
	var num string
	if ok {
		num, digest, ok = strings.Cut(name, "-")
	}
	if ok && len(num) == 10 && len(digest) == 16 {
		if n, perr := strconv.ParseUint(num, 10, 31); perr == nil {
			if _, herr := hex.DecodeString(digest); herr == nil {
				return int(n), digest, nil
			}
		}
	}
	return 0, "", fmt.Errorf("%w: %q is not a schema object key (%s<10-digit id>-<16 hex>.json)", ErrMalformed, key, dir)
}

// DecodeSchema reads the schema object stored at key under dir: one JSON
// line that Validate accepts, no unknown field, whose id and digest are
// the key's. Errors wrap ErrMalformed and name the key.
func DecodeSchema(dir, key string, data []byte) (Schema, error) {
	var s Schema
	id, digest, err := ParseSchemaKey(dir, key)
	if err != nil {
		return s, err
	}
	if schemaDigest(data) != digest {
		return s, fmt.Errorf("%w: schema object %q: its bytes do not have the digest its key names", ErrMalformed, key)
	}
	dec := json.NewDecoder(bytes.NewReader(data))
	dec.DisallowUnknownFields()
	if err := dec.Decode(&s); err != nil {
		return s, fmt.Errorf("%w: schema object %q: %w", ErrMalformed, key, err)
	}
	if dec.More() {
		return s, fmt.Errorf("%w: schema object %q: more than one JSON value", ErrMalformed, key)
	}
	if err := s.Validate(); err != nil {
		return s, fmt.Errorf("%w: schema object %q: %w", ErrMalformed, key, err)
	}
	if s.ID != id {
		return s, fmt.Errorf("%w: schema object %q holds id %d", ErrMalformed, key, s.ID)
	}
	return s, nil
}

// LoadSchemas reads every schema object of topic, one listing of
// SchemaTopicDir and one read per object (DefaultConcurrency at once),
// and returns the schemas by id,
// in increasing id order. Objects of one id that differ only in the
// subjects listed are merged (the union of their subjects); two that
// differ in type, text or references are ErrSchemaConflict, naming both
// keys.
func LoadSchemas(ctx context.Context, st Store, prefix, topic string) ([]Schema, error) {
	dir := SchemaTopicDir(prefix, topic)
	var keys []string
	err := st.List(ctx, dir, func(info s3store.ObjectInfo) error {
		keys = append(keys, info.Key)
		return nil
	})
	if err != nil {
		return nil, fmt.Errorf("list the schemas under %q: %w", dir, err)
	}
	read, err := readSchemas(ctx, st, dir, keys)
	if err != nil {
		return nil, err
	}
	byID := map[int]Schema{}
	from := map[int]string{}
	for i, s := range read {
		key := keys[i]
		old, ok := byID[s.ID]
		if !ok {
			byID[s.ID], from[s.ID] = s, key
			continue
		}
		if old.Type != s.Type || old.Text != s.Text || !slices.Equal(old.References, s.References) {
			return nil, fmt.Errorf("%w: %q and %q both record schema id %d of topic %q (two source registries wrote into one archive)",
				ErrSchemaConflict, from[s.ID], key, s.ID, topic)
		}
		for _, sv := range s.Subjects {
			if !slices.Contains(old.Subjects, sv) {
				old.Subjects = append(old.Subjects, sv)
			}
		}
		byID[s.ID] = old
	}
	out := make([]Schema, 0, len(byID))
	for _, s := range byID {
		out = append(out, s)
	}
	sort.Slice(out, func(i, j int) bool { return out[i].ID < out[j].ID })
	return out, nil
}

// readSchemas reads the schema objects keys, DefaultConcurrency at once;
// the first error wins.
func readSchemas(ctx context.Context, st Store, dir string, keys []string) ([]Schema, error) {
	out := make([]Schema, len(keys))
	errs := make([]error, len(keys))
	sem := make(chan struct{}, DefaultConcurrency)
	var wg sync.WaitGroup
	for i, key := range keys {
		wg.Add(1)
		sem <- struct{}{}
		go func() {
			defer func() { <-sem; wg.Done() }()
			out[i], errs[i] = readSchema(ctx, st, dir, key)
		}()
	}
	wg.Wait()
	for _, err := range errs {
		if err != nil {
			return nil, err
		}
	}
	return out, nil
}

func readSchema(ctx context.Context, st Store, dir, key string) (Schema, error) {
	rc, err := st.Open(ctx, key)
	if err != nil {
		return Schema{}, fmt.Errorf("read schema object %q: %w", key, err)
	}
	defer rc.Close()
	data, err := io.ReadAll(io.LimitReader(rc, 16<<20))
	if err != nil {
		return Schema{}, fmt.Errorf("read schema object %q: %w", key, err)
	}
	return DecodeSchema(dir, key, data)
}
