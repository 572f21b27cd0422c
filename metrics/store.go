package metrics

import (
	"context"
	"errors"
	"io"
	"time"

	"github.com/kafkas3/kafkas3/health"
	"github.com/kafkas3/kafkas3/s3store"
	"github.com/prometheus/client_golang/prometheus"
)

// storeMetrics measures the objects a store writes.
type storeMetrics struct {
	upload    prometheus.Histogram
	openFiles prometheus.Gauge
	spool     prometheus.Gauge
}

// latencyBuckets are the latency buckets, in seconds: from a small object
// on a local disk (or a produce to a local broker) to a multipart upload's
// last parts.
func latencyBuckets() []float64 {
	return []float64{0.001, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10, 30, 60}
}

func newStoreMetrics() *storeMetrics {
	return &storeMetrics{
		upload: prometheus.NewHistogram(prometheus.HistogramOpts{Name: "kafkas3_sink_upload_duration_seconds",
			Help: "Time to complete one object in the store (Commit: its last part and the multipart completion on S3, the rename in a local directory), every attempt; index and snapshot objects included.", Buckets: latencyBuckets()}),
		openFiles: prometheus.NewGauge(prometheus.GaugeOpts{Name: "kafkas3_sink_open_files",
			Help: "Objects being written: created in the store and not yet completed or aborted (each holds a spool file)."}),
		spool: prometheus.NewGauge(prometheus.GaugeOpts{Name: "kafkas3_sink_spool_bytes",
			Help: "Bytes written to the objects being written (kafkas3_sink_open_files): spooled, or on S3 partly uploaded as parts of a multipart upload not yet completed."}),
	}
}

func (m *storeMetrics) collectors() []prometheus.Collector {
	return []prometheus.Collector{m.upload, m.openFiles, m.spool}
}

// observedStore is a store whose calls are measured (m; nil measures
// nothing) and whose outcome sets the store's readiness: a failed call,
// other than for an object that does not exist, sets it down, a call that
// worked sets it up.
type observedStore struct {
	s3store.Store
	m     *storeMetrics
	ready *health.Readiness
}

// observe returns s, keeping the optional interfaces of the store it
// wraps (s3store.Tagger), which the sink asks for by type assertion.
func observe(s *observedStore) s3store.Store {
	if t, ok := s.Store.(s3store.Tagger); ok {
		return &observedTagger{observedStore: s, tagger: t}
	}
	return s
}

// observedTagger is an observedStore of a store that tags objects.
type observedTagger struct {
	*observedStore
	tagger s3store.Tagger
}

// Tag tags the object in the wrapped store.
func (s *observedTagger) Tag(ctx context.Context, key string, tags map[string]string) error {
	err := s.tagger.Tag(ctx, key, tags)
	s.report(err)
	return err
}

// report sets the readiness from a call's error.
func (s *observedStore) report(err error) {
	switch {
	case err == nil:
		s.ready.SetUp(health.Store)
	case errors.Is(err, s3store.ErrNotExist), errors.Is(err, context.Canceled):
	default:
		s.ready.SetDown(health.Store, err)
	}
}

func (s *observedStore) Create(ctx context.Context, key string) (s3store.ObjectWriter, error) {
	w, err := s.Store.Create(ctx, key)
	s.report(err)
	if err != nil || s.m == nil {
		return w, err
	}
	s.m.openFiles.Inc()
	return &observedWriter{w: w, s: s}, nil
}

func (s *observedStore) Open(ctx context.Context, key string) (io.ReadCloser, error) {
	r, err := s.Store.Open(ctx, key)
	s.report(err)
	return r, err
}

func (s *observedStore) Stat(ctx context.Context, key string) (s3store.ObjectInfo, error) {
	i, err := s.Store.Stat(ctx, key)
	s.report(err)
	return i, err
}

func (s *observedStore) List(ctx context.Context, prefix string, fn func(s3store.ObjectInfo) error) error {
	return s.ListAfter(ctx, prefix, "", fn)
}

func (s *observedStore) ListAfter(ctx context.Context, prefix, after string, fn func(s3store.ObjectInfo) error) error {
	var fnErr error
	err := s3store.ListAfter(ctx, s.Store, prefix, after, func(i s3store.ObjectInfo) error {
		fnErr = fn(i)
		return fnErr
	})
	if err == nil || fnErr == nil || !errors.Is(err, fnErr) {
		s.report(err) // an error of fn is not the store's
	}
	return err
}

// ListFolders passes the store's folder listing on (s3store.FolderLister),
// or says there is none (s3store.ErrNoFolders).
func (s *observedStore) ListFolders(ctx context.Context, prefix, delim string, folder func(string) error, file func(s3store.ObjectInfo) error) error {
	fl, ok := s.Store.(s3store.FolderLister)
	if !ok {
		return s3store.ErrNoFolders
	}
	var fnErr error
	err := fl.ListFolders(ctx, prefix, delim, func(f string) error {
		fnErr = folder(f)
		return fnErr
	}, func(i s3store.ObjectInfo) error {
		fnErr = file(i)
		return fnErr
	})
	if err == nil || fnErr == nil || !errors.Is(err, fnErr) {
		s.report(err) // an error of folder or file is not the store's
	}
	return err
}

// StoredCRC32C passes the store's stored checksum on (s3store.Checksummer),
// or reports none when the store keeps none.
func (s *observedStore) StoredCRC32C(ctx context.Context, key string) (string, bool, error) {
	cs, ok := s.Store.(s3store.Checksummer)
	if !ok {
		return "", false, nil
	}
	sum, kept, err := cs.StoredCRC32C(ctx, key)
	s.report(err)
	return sum, kept, err
}

func (s *observedStore) Check(ctx context.Context) error {
	err := s.Store.Check(ctx)
	s.report(err)
	return err
}

// spoolFlush is how many bytes an open object writes between updates of
// the spool gauge (after its first write, which is counted at once): format
// writers write record by record, and one shared gauge updated per record
// would be a contended atomic on the record path.
const spoolFlush = 64 << 10

// observedWriter measures one object: its bytes while open, the time of
// its Commit.
type observedWriter struct {
	w       s3store.ObjectWriter
	s       *observedStore
	n       int64 // bytes in the spool gauge, until closed
	pending int64 // bytes written and not yet in the gauge
	closed  bool
}

func (w *observedWriter) Write(p []byte) (int, error) {
	n, err := w.w.Write(p)
	if w.pending += int64(n); (w.pending >= spoolFlush || w.n == 0) && !w.closed {
		w.s.m.spool.Add(float64(w.pending))
		w.n += w.pending
		w.pending = 0
	}
	if err != nil {
		w.s.report(err)
	}
	return n, err
}

func (w *observedWriter) Commit(ctx context.Context) error {
	start := time.Now()
	err := w.w.Commit(ctx)
	w.s.m.upload.Observe(time.Since(start).Seconds())
	w.s.report(err)
	if err == nil {
		w.close()
	}
	return err
}

// ETag passes the committed object's ETag on (s3store.ETagger): "" when
// the store's writer gives none.
func (w *observedWriter) ETag() string {
	if et, ok := w.w.(s3store.ETagger); ok {
		return et.ETag()
	}
	return ""
}

func (w *observedWriter) Abort(ctx context.Context) error {
	err := w.w.Abort(ctx)
	w.close()
	return err
}

// close takes the object out of the open files and the spool, once.
func (w *observedWriter) close() {
	if w.closed {
		return
	}
	w.closed = true
	w.s.m.openFiles.Dec()
	w.s.m.spool.Sub(float64(w.n))
}
