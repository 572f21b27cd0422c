package metrics

import (
	"context"
	"testing"

	"github.com/kafkas3/kafkas3/archive"
	"github.com/kafkas3/kafkas3/s3store"
	"github.com/prometheus/client_golang/prometheus"
)

// BenchmarkSinkPartitionFetched is the cost per fetched batch.
func BenchmarkSinkPartitionFetched(b *testing.B) {
	s, err := NewSink(prometheus.NewRegistry(), nil)
	if err != nil {
		b.Fatal(err)
	}
	p := s.Partition("orders", 0)
	b.RunParallel(func(pb *testing.PB) {
		for pb.Next() {
			p.Fetched(500, 10, archive.BatchSpan{})
		}
	})
}

// BenchmarkSinkPartitionCompleted is the cost per completed object.
func BenchmarkSinkPartitionCompleted(b *testing.B) {
	s, err := NewSink(prometheus.NewRegistry(), nil)
	if err != nil {
		b.Fatal(err)
	}
	p := s.Partition("orders", 0)
	files := []archive.FileStats{{Key: "k", Records: 1000, Bytes: 100_000}}
	for b.Loop() {
		p.Completed(files)
	}
}

// nullWriter is an object writer that keeps nothing.
type nullWriter struct{}

func (nullWriter) Write(p []byte) (int, error)      { return len(p), nil }
func (nullWriter) Commit(ctx context.Context) error { return nil }
func (nullWriter) Abort(ctx context.Context) error  { return nil }

// BenchmarkObservedWrite is the cost the store wrapper adds to one
// record-sized Write of a format writer, next to BenchmarkPlainWrite.
func BenchmarkObservedWrite(b *testing.B) {
	s, err := NewSink(prometheus.NewRegistry(), nil)
	if err != nil {
		b.Fatal(err)
	}
	w := &observedWriter{w: nullWriter{}, s: &observedStore{Store: s3store.NewMemory(), m: s.store}}
	rec := make([]byte, 100)
	var ow s3store.ObjectWriter = w
	for b.Loop() {
		_, _ = ow.Write(rec)
	}
}

// BenchmarkPlainWrite is BenchmarkObservedWrite without the wrapper.
func BenchmarkPlainWrite(b *testing.B) {
	rec := make([]byte, 100)
	var ow s3store.ObjectWriter = nullWriter{}
	for b.Loop() {
		_, _ = ow.Write(rec)
	}
}
