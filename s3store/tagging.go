package s3store

import (
	"context"
	"fmt"
	"maps"
	"slices"

	"github.com/aws/aws-sdk-go-v2/service/s3"
	"github.com/aws/aws-sdk-go-v2/service/s3/types"
)

// Tagger is a Store that can tag its objects (S3 object tagging). The
// sink's s3.object.tagging needs one.
type Tagger interface {
	// Tag sets the tags of the complete object at key, replacing any it
	// had. A missing object gives an error wrapping ErrNotExist.
	Tag(ctx context.Context, key string, tags map[string]string) error
}

var (
	_ Tagger = (*S3)(nil)
	_ Tagger = (*Memory)(nil)
)

// Tag sets the object's tags with PutObjectTagging, retried as every
// request is.
func (s *S3) Tag(ctx context.Context, key string, tags map[string]string) error {
	set := make([]types.Tag, 0, len(tags))
	for _, k := range slices.Sorted(maps.Keys(tags)) {
		set = append(set, types.Tag{Key: &k, Value: new(tags[k])})
	}
	return s.do(ctx, "tag "+s.url(key), func(ctx context.Context) error {
		_, err := s.client.PutObjectTagging(ctx, &s3.PutObjectTaggingInput{
			Bucket:  &s.cfg.Bucket,
			Key:     &key,
			Tagging: &types.Tagging{TagSet: set},
		})
		return err
	})
}

// Tag records the object's tags (see Tags).
func (m *Memory) Tag(ctx context.Context, key string, tags map[string]string) error {
	m.mu.Lock()
	defer m.mu.Unlock()
	if _, ok := m.objects[key]; !ok {
		return fmt.Errorf("memory store: tag %q: %w", key, ErrNotExist)
	}
	if m.tags == nil {
		m.tags = map[string]map[string]string{}
	}
	m.tags[key] = maps.Clone(tags)
	return nil
}

// Tags returns the tags Tag set on the object at key, or nil.
func (m *Memory) Tags(key string) map[string]string {
	m.mu.Lock()
	defer m.mu.Unlock()
	return maps.Clone(m.tags[key])
}
