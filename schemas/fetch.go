package schemas

import (
	"context"
	"errors"
	"fmt"
	"net/http"

	"github.com/twmb/franz-go/pkg/sr"

	"github.com/kafkas3/kafkas3/index"
)

// ErrUnknownID is wrapped when the registry says a schema id does not
// exist: the bytes that named it were most likely not framed at all.
var ErrUnknownID = errors.New("schema id not found in the registry")

// ErrRegistry is wrapped by every failure of a registry request other than
// ErrUnknownID: unreachable, refused, or an answer that makes no sense.
var ErrRegistry = errors.New("schema registry")

// ErrRefused is wrapped (with ErrRegistry) when the registry refuses the
// credentials (HTTP 401 or 403): waiting does not help.
var ErrRefused = errors.New("the registry refuses the credentials")

// maxReferenceDepth bounds how deep references of references are followed.
const maxReferenceDepth = 32

// Fetcher reads schemas by id from the source registry. It keeps no
// cache: its caller asks once per id (package archive).
type Fetcher struct {
	cl *sr.Client
}

// NewFetcher returns a Fetcher over cl.
func NewFetcher(cl *sr.Client) *Fetcher { return &Fetcher{cl: cl} }

// Fetch returns the schema with id and every schema it references,
// transitively, each once, references before the schemas that use them
// (the schema with id last). An id the registry does not know wraps
// ErrUnknownID; every other failure ErrRegistry.
func (f *Fetcher) Fetch(ctx context.Context, id int) ([]index.Schema, error) {
	var out []index.Schema
	seen := map[int]bool{}
	if err := f.fetch(ctx, id, 0, seen, &out); err != nil {
		return nil, err
	}
	return out, nil
}

func (f *Fetcher) fetch(ctx context.Context, id, depth int, seen map[int]bool, out *[]index.Schema) error {
	if seen[id] {
		return nil
	}
	seen[id] = true
	if depth > maxReferenceDepth { // no wait makes it shallower: not recordable, as an unknown id
		return fmt.Errorf("%w: schema id %d: references nested deeper than %d", ErrUnknownID, id, maxReferenceDepth)
	}
	s, err := f.cl.SchemaByID(ctx, id)
	if err != nil {
		if NotFound(err) {
			return fmt.Errorf("%w: id %d", ErrUnknownID, id)
		}
		return fmt.Errorf("%w: fetching schema id %d: %w", registryErr(err), id, err)
	}
	vs, err := f.cl.SchemaVersionsByID(ctx, id)
	if err != nil && !NotFound(err) {
		return fmt.Errorf("%w: fetching the subjects of schema id %d: %w", registryErr(err), id, err)
	}
	rec := index.Schema{V: index.SchemaVersion, ID: id, Type: typeName(s.Type), Text: s.Schema}
	for _, v := range vs {
		rec.Subjects = append(rec.Subjects, index.SubjectVersion{Subject: v.Subject, Version: v.Version})
	}
	for _, ref := range s.References {
		ss, err := f.cl.SchemaByVersion(ctx, ref.Subject, ref.Version)
		if NotFound(err) { // a deleted version: not recordable, as an unknown id
			return fmt.Errorf("%w: schema id %d: reference %q (subject %q version %d) not found: %w", ErrUnknownID, id, ref.Name, ref.Subject, ref.Version, err)
		}
		if err != nil {
			return fmt.Errorf("%w: schema id %d: reference %q (subject %q version %d): %w", registryErr(err), id, ref.Name, ref.Subject, ref.Version, err)
		}
		if err := f.fetch(ctx, ss.ID, depth+1, seen, out); err != nil {
			return err
		}
		rec.References = append(rec.References, index.SchemaReference{Name: ref.Name, Subject: ref.Subject, Version: ref.Version, ID: ss.ID})
	}
	*out = append(*out, rec)
	return nil
}

// typeName is the registry's name of t (AVRO when the registry omits it).
func typeName(t sr.SchemaType) string {
	switch t {
	case sr.TypeJSON:
		return index.SchemaJSON
	case sr.TypeProtobuf:
		return index.SchemaProtobuf
	}
	return index.SchemaAvro
}

// srType is the sr type of a recorded type name.
func srType(name string) sr.SchemaType {
	switch name {
	case index.SchemaJSON:
		return sr.TypeJSON
	case index.SchemaProtobuf:
		return sr.TypeProtobuf
	}
	return sr.TypeAvro
}

// registryErr is ErrRegistry, with ErrRefused when err is the registry
// refusing the credentials.
func registryErr(err error) error {
	var re *sr.ResponseError
	if errors.As(err, &re) && (re.StatusCode == http.StatusUnauthorized || re.StatusCode == http.StatusForbidden) {
		return fmt.Errorf("%w: %w", ErrRegistry, ErrRefused)
	}
	return ErrRegistry
}

// NotFound reports whether err is the registry saying a subject, version
// or schema does not exist.
func NotFound(err error) bool {
	var re *sr.ResponseError
	return errors.As(err, &re) && (re.StatusCode == http.StatusNotFound || sr.IsNotFoundError(re.ErrorCode))
}
