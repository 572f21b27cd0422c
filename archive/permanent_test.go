package archive

import (
	"context"
	"errors"
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
