package index

import (
	"context"
	"io"

	"github.com/kafkas3/kafkas3/s3store"
)

// limited is a Store that lets at most cap(sem) requests run at a time: a
// listing until it returns, a read until its body is closed. EachPartition
// loads several partitions at once through one, so that together they keep
// LoadOptions.Concurrency requests in flight, not that many each.
type limited struct {
	st  Store
	sem chan struct{}
}

func newLimited(st Store, n int) *limited {
	return &limited{st: st, sem: make(chan struct{}, max(n, 1))}
}

func (l *limited) acquire(ctx context.Context) error {
	select {
	case l.sem <- struct{}{}:
		return nil
	case <-ctx.Done():
		return ctx.Err()
	}
}

func (l *limited) release() { <-l.sem }

// List lists under prefix, holding one request's place meanwhile.
func (l *limited) List(ctx context.Context, prefix string, fn func(s3store.ObjectInfo) error) error {
	if err := l.acquire(ctx); err != nil {
		return err
	}
	defer l.release()
	return l.st.List(ctx, prefix, fn)
}

// ListAfter is s3store.ListAfter of the store underneath, holding one
// request's place meanwhile.
func (l *limited) ListAfter(ctx context.Context, prefix, after string, fn func(s3store.ObjectInfo) error) error {
	if err := l.acquire(ctx); err != nil {
		return err
	}
	defer l.release()
	return s3store.ListAfter(ctx, l.st, prefix, after, fn)
}

// Open opens key, holding one request's place until the body is closed.
func (l *limited) Open(ctx context.Context, key string) (io.ReadCloser, error) {
	if err := l.acquire(ctx); err != nil {
		return nil, err
	}
	rc, err := l.st.Open(ctx, key)
	if err != nil {
		l.release()
		return nil, err
	}
	return &limitedBody{ReadCloser: rc, l: l}, nil
}

// limitedBody gives its request's place back when closed (once).
type limitedBody struct {
	io.ReadCloser
	l    *limited
	done bool
}

func (b *limitedBody) Close() error {
	if !b.done {
		b.done = true
		b.l.release()
	}
	return b.ReadCloser.Close()
}
