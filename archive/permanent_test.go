package archive

import (
	"context"
	"errors"
	"fmt"
	"testing"
	"time"

	"github.com/kafkas3/kafkas3/format"
	"github.com/kafkas3/kafkas3/s3store"
)

type refusingConverter struct{}

func (refusingConverter) Convert(context.Context, string, bool, []byte) (*format.Typed, error) {
	return nil, Permanent(errors.New("schema registry: 401 Unauthorized"))
}

// TestSinkPermanentConverterErrorStops checks that refused registry
// credentials stop the sink (even --once) instead of retrying for ever.
func TestSinkPermanentConverterErrorStops(t *testing.T) {
	brokers := newCluster(t, 1, "p")
	produce(t, brokers, "p", 1, 0, 3)
	cfg := testConfig(brokers, "p")
	cfg.ValueConverter = refusingConverter{}
	s, err := New(cfg, s3store.NewMemory(), nil)
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
	defer cancel()
	_, err = s.Run(ctx)
	if !errors.Is(err, ErrPermanent) || ctx.Err() != nil {
		t.Fatalf("want a permanent error before the deadline, got %v (ctx %v)", err, ctx.Err())
	}
}

// deniedStore refuses every commit, as S3 does when the credentials may
// read but not write.
type deniedStore struct{ s3store.Store }

func (d deniedStore) Create(ctx context.Context, key string) (s3store.ObjectWriter, error) {
	w, err := d.Store.Create(ctx, key)
	return deniedWriter{w}, err
}

type deniedWriter struct{ s3store.ObjectWriter }

func (deniedWriter) Commit(context.Context) error {
	return fmt.Errorf("s3 put: %w: 403 Forbidden", s3store.ErrAccessDenied)
}

// TestSinkDeniedWriteStops checks that an object store refusing writes
// stops the sink with the error instead of retrying for ever.
func TestSinkDeniedWriteStops(t *testing.T) {
	brokers := newCluster(t, 1, "d")
	produce(t, brokers, "d", 1, 0, 3)
	s, err := New(testConfig(brokers, "d"), deniedStore{s3store.NewMemory()}, nil)
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
	defer cancel()
	_, err = s.Run(ctx)
	if !errors.Is(err, s3store.ErrAccessDenied) || ctx.Err() != nil {
		t.Fatalf("want access denied before the deadline, got %v (ctx %v)", err, ctx.Err())
	}
}
