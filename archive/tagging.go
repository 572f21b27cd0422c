package archive

import (
	"context"
	"errors"
	"fmt"
	"maps"
	"strconv"

	"github.com/kafkas3/kafkas3/s3store"
)

// TaggingConfig is s3.object.tagging and its keys: each value object (and
// a tombstone file's .keys object, its only object) is tagged once it is
// complete, before its records' offset can be committed, with the tags
// Confluent's connector writes: startOffset and endOffset, the offsets of
// its first and last record, and recordCount, its number of records.
type TaggingConfig struct {
	Enabled bool
	// Extra is s3.object.tagging.key.value.pairs, added to every tagged
	// object; it cannot hold the three tags above (config checks that).
	Extra map[string]string
	// FailOnError is s3.object.behavior.on.tagging.error=fail: a tag
	// request that fails (after the store's retries) fails the upload, so
	// the offset is not committed and a later run rewrites the objects.
	// Otherwise (ignore, Confluent's default) the failure is logged and
	// the sink goes on.
	FailOnError bool
}

// Tag names, as Confluent's connector writes them.
const (
	TagStartOffset = "startOffset"
	TagEndOffset   = "endOffset"
	TagRecordCount = "recordCount"
)

// errNoTagger is the error of tagging in a store that cannot tag.
var errNoTagger = errors.New("s3.object.tagging: the store cannot tag objects (it needs the S3 store)")

// tag tags o, a just completed object of f, when tagging is on and o is
// f's main object. An error (FailOnError only) is a *StoreError.
func (w *partitionWriter) tag(ctx context.Context, f *openFile, o *object) error {
	t := w.cfg.Tagging
	if !t.Enabled || (o.part != "" && !(f.tombstone && o == f.keys)) {
		return nil
	}
	tags := maps.Clone(t.Extra)
	if tags == nil {
		tags = map[string]string{}
	}
	tags[TagStartOffset] = strconv.FormatInt(f.first, 10)
	tags[TagEndOffset] = strconv.FormatInt(f.last, 10)
	tags[TagRecordCount] = strconv.FormatInt(f.records, 10)
	err := errNoTagger
	if tagger, ok := w.store.(s3store.Tagger); ok {
		err = tagger.Tag(ctx, o.key, tags)
	}
	switch {
	case err == nil:
		return nil
	case t.FailOnError:
		return &StoreError{Key: o.key, Err: fmt.Errorf("tagging (s3.object.behavior.on.tagging.error=fail): %w", err)}
	}
	w.log.Warn("object complete but not tagged (s3.object.behavior.on.tagging.error=ignore)", "key", o.key, "err", err)
	return nil
}
