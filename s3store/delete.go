package s3store

import (
	"context"
	"errors"
	"fmt"
	"os"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/s3"
	"github.com/aws/aws-sdk-go-v2/service/s3/types"
)

// Deleter is a Store that deletes objects (kafkas3 prune; the sink never
// deletes). S3, a local directory and the memory store are Deleters.
type Deleter interface {
	// Delete deletes keys: S3 in DeleteObjects requests of up to
	// MaxDeleteBatch keys. A key that does not exist is no error. It
	// returns, by key, why the store refused the keys it did not delete
	// (an object under Object Lock retention or a legal hold, or a
	// missing permission: wrapping ErrAccessDenied), and an error when a
	// whole request failed.
	Delete(ctx context.Context, keys []string) (map[string]error, error)
}

// MaxDeleteBatch is the most keys one S3 DeleteObjects request takes.
const MaxDeleteBatch = 1000

var (
	_ Deleter = (*S3)(nil)
	_ Deleter = (*Local)(nil)
	_ Deleter = (*Memory)(nil)
)

// Delete deletes keys with DeleteObjects, MaxDeleteBatch a request (quiet:
// the answer lists only the refused keys).
func (s *S3) Delete(ctx context.Context, keys []string) (map[string]error, error) {
	refused := map[string]error{}
	for len(keys) > 0 {
		batch := keys[:min(len(keys), MaxDeleteBatch)]
		keys = keys[len(batch):]
		ids := make([]types.ObjectIdentifier, len(batch))
		for i := range batch {
			ids[i] = types.ObjectIdentifier{Key: &batch[i]}
		}
		quiet := true
		var out *s3.DeleteObjectsOutput
		err := s.do(ctx, fmt.Sprintf("delete %d objects from s3://%s", len(batch), s.cfg.Bucket), func(ctx context.Context) error {
			var err error
			out, err = s.client.DeleteObjects(ctx, &s3.DeleteObjectsInput{Bucket: &s.cfg.Bucket,
				Delete: &types.Delete{Objects: ids, Quiet: &quiet}})
			return err
		})
		if err != nil {
			return refused, err
		}
		for _, e := range out.Errors {
			if e.Key == nil {
				continue
			}
			if err := deleteError(aws.ToString(e.Code), aws.ToString(e.Message)); err != nil {
				refused[*e.Key] = err
			}
		}
	}
	return refused, nil
}

// deleteError is the error of a key DeleteObjects refused.
func deleteError(code, msg string) error {
	switch code {
	case "AccessDenied":
		return fmt.Errorf("%w: %s: %s (Object Lock retention or a legal hold, or no s3:DeleteObject permission)", ErrAccessDenied, code, msg)
	case "NoSuchKey":
		return nil
	}
	return fmt.Errorf("%s: %s", code, msg)
}

// Delete removes the keys' files; a missing one is no error.
func (l *Local) Delete(ctx context.Context, keys []string) (map[string]error, error) {
	refused := map[string]error{}
	for _, key := range keys {
		if err := ctx.Err(); err != nil {
			return refused, err
		}
		p, err := l.path(key)
		if err != nil {
			refused[key] = err
			continue
		}
		if err := os.Remove(p); err != nil && !errors.Is(err, os.ErrNotExist) {
			if errors.Is(err, os.ErrPermission) {
				err = fmt.Errorf("%w: %w", ErrAccessDenied, err)
			}
			refused[key] = err
		}
	}
	return refused, nil
}

// Delete removes the keys.
func (m *Memory) Delete(ctx context.Context, keys []string) (map[string]error, error) {
	m.mu.Lock()
	defer m.mu.Unlock()
	for _, key := range keys {
		delete(m.objects, key)
		delete(m.tags, key)
	}
	return map[string]error{}, nil
}

// Retainer is a Store that tells an object's S3 Object Lock state, for
// deletes that must leave locked objects alone (kafkas3 prune). On a
// bucket with Object Lock (versioning on) a delete without a version only
// hides a locked object behind a delete marker; the data stays until its
// retention ends.
type Retainer interface {
	// WORM tells whether the bucket has Object Lock (or the config
	// declares it, s3.object.lock.mode).
	WORM() bool
	// Retention returns until when the object is retained (zero: no
	// retention) and whether a legal hold is on (HeadObject).
	Retention(ctx context.Context, key string) (until time.Time, hold bool, err error)
}

var _ Retainer = (*S3)(nil)

// Retention reads the object's retention and legal hold (HeadObject).
func (s *S3) Retention(ctx context.Context, key string) (time.Time, bool, error) {
	out, err := s.head(ctx, key, false)
	if err != nil {
		return time.Time{}, false, err
	}
	return aws.ToTime(out.ObjectLockRetainUntilDate), out.ObjectLockLegalHoldStatus == types.ObjectLockLegalHoldStatusOn, nil
}
