package config

import (
	"context"
	"fmt"
	"log/slog"

	"github.com/kafkas3/kafkas3/s3store"
)

// Store kinds, as storage.class's choices name them.
const (
	StoreS3    = "s3"
	StoreLocal = "local"
)

// StoreConfig selects and configures the object store: the local
// directory LocalDir when it is set, else S3.
type StoreConfig struct {
	LocalDir string
	S3       s3store.S3Config
}

// Open opens the store and returns it with a name for it (file://<dir>,
// s3://<bucket> or <endpoint>/<bucket>). Errors wrap ErrConfig.
func (c StoreConfig) Open(ctx context.Context, log *slog.Logger) (s3store.Store, string, error) {
	if c.LocalDir != "" {
		st, err := s3store.NewLocal(s3store.LocalConfig{Dir: c.LocalDir}, log)
		if err != nil {
			return nil, "", fmt.Errorf("%w: store.local.dir: %w", ErrConfig, err)
		}
		return st, "file://" + c.LocalDir, nil
	}
	st, err := s3store.NewS3(ctx, c.S3, log)
	if err != nil {
		return nil, "", fmt.Errorf("%w: %w", ErrConfig, err)
	}
	ident := "s3://" + c.S3.Bucket
	if c.S3.Endpoint != "" {
		ident = c.S3.Endpoint + "/" + c.S3.Bucket
	}
	return st, ident, nil
}
