package metrics

import (
	"context"
	"errors"
	"strings"
	"testing"

	"github.com/kafkas3/kafkas3/health"
	"github.com/kafkas3/kafkas3/s3store"
	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/testutil"
)

// failingStore fails Commit (and List) with err while err is set.
type failingStore struct {
	s3store.Store
	err error
}

func (f *failingStore) Create(ctx context.Context, key string) (s3store.ObjectWriter, error) {
	w, err := f.Store.Create(ctx, key)
	return &failingWriter{ObjectWriter: w, s: f}, err
}

func (f *failingStore) List(ctx context.Context, prefix string, fn func(s3store.ObjectInfo) error) error {
	if f.err != nil {
		return f.err
	}
	return f.Store.List(ctx, prefix, fn)
}

type failingWriter struct {
	s3store.ObjectWriter
	s *failingStore
}

func (w *failingWriter) Commit(ctx context.Context) error {
	if w.s.err != nil {
		return w.s.err
	}
	return w.ObjectWriter.Commit(ctx)
}

func TestStoreOpenFilesSpoolAndUploads(t *testing.T) {
	s, reg, _ := newTestSink(t)
	mem := s3store.NewMemory()
	st := s.Store(mem)
	ctx := context.Background()
	a, err := st.Create(ctx, "a")
	if err != nil {
		t.Fatal(err)
	}
	b, _ := st.Create(ctx, "b")
	// The gauge counts an object's first write at once, then moves every
	// spoolFlush bytes, not per write.
	small := make([]byte, spoolFlush/4)
	for range 4 {
		_, _ = a.Write(small) // first: counted; 3 more: pending
	}
	_, _ = b.Write(make([]byte, spoolFlush+5))
	if got := testutil.ToFloat64(s.store.openFiles); got != 2 {
		t.Errorf("open files = %v, want 2", got)
	}
	if got, want := testutil.ToFloat64(s.store.spool), float64(spoolFlush/4+spoolFlush+5); got != want {
		t.Errorf("spool bytes = %v, want %v (a: its first write, b: its one write)", got, want)
	}
	_, _ = a.Write(small) // a's pending reaches spoolFlush
	if got, want := testutil.ToFloat64(s.store.spool), float64(spoolFlush/4+spoolFlush+spoolFlush+5); got != want {
		t.Errorf("spool bytes = %v, want %v", got, want)
	}
	if err := a.Commit(ctx); err != nil {
		t.Fatal(err)
	}
	_ = a.Abort(ctx) // after Commit: a no-op, counted once
	if got := testutil.ToFloat64(s.store.openFiles); got != 1 {
		t.Errorf("open files after a commit = %v, want 1", got)
	}
	if got := testutil.ToFloat64(s.store.spool); got != spoolFlush+5 {
		t.Errorf("spool bytes after a commit = %v, want b's %d", got, spoolFlush+5)
	}
	_ = b.Abort(ctx)
	if testutil.ToFloat64(s.store.openFiles) != 0 || testutil.ToFloat64(s.store.spool) != 0 {
		t.Errorf("after abort: open files %v, spool %v", testutil.ToFloat64(s.store.openFiles), testutil.ToFloat64(s.store.spool))
	}
	if n := histogramCount(t, reg, "kafkas3_sink_upload_duration_seconds"); n != 1 {
		t.Errorf("upload observations = %d, want 1 (one Commit)", n)
	}
	if _, err := mem.Stat(ctx, "a"); err != nil {
		t.Errorf("the committed object is not in the store: %v", err)
	}
}

func TestStoreReadiness(t *testing.T) {
	s, _, ready := newTestSink(t)
	fs := &failingStore{Store: s3store.NewMemory()}
	st := s.Store(fs)
	ctx := context.Background()
	ready.Expect(health.Store)
	if err := st.Check(ctx); err != nil {
		t.Fatal(err)
	}
	if err := ready.Ready(); err != nil {
		t.Fatalf("after a check: %v", err)
	}
	// An object that does not exist is no outage.
	if _, err := st.Stat(ctx, "missing"); !errors.Is(err, s3store.ErrNotExist) {
		t.Fatal(err)
	}
	if err := ready.Ready(); err != nil {
		t.Fatalf("after ErrNotExist: %v", err)
	}
	fs.err = errors.New("503 SlowDown")
	w, _ := st.Create(ctx, "x")
	if err := w.Commit(ctx); err == nil {
		t.Fatal("commit did not fail")
	}
	_ = w.Abort(ctx)
	if err := ready.Ready(); err == nil || !strings.Contains(err.Error(), "store: down") || !strings.Contains(err.Error(), "SlowDown") {
		t.Fatalf("after a failed commit: %v", err)
	}
	if got := testutil.ToFloat64(s.store.openFiles); got != 0 {
		t.Errorf("open files after a failed commit and its abort = %v, want 0", got)
	}
	// An error of the listing's callback is not the store's.
	fs.err = nil
	w, _ = st.Create(ctx, "y")
	_ = w.Commit(ctx)
	stop := errors.New("stop")
	if err := st.List(ctx, "", func(s3store.ObjectInfo) error { return stop }); !errors.Is(err, stop) {
		t.Fatalf("List = %v", err)
	}
	if err := ready.Ready(); err != nil {
		t.Fatalf("after a callback's error: %v", err)
	}
	fs.err = errors.New("connection refused")
	_ = st.List(ctx, "", func(s3store.ObjectInfo) error { return nil })
	if err := ready.Ready(); err == nil {
		t.Fatal("a failed listing left the store ready")
	}
}

// histogramCount returns how many observations the histogram name holds
// in reg.
func histogramCount(t *testing.T, reg prometheus.Gatherer, name string) uint64 {
	t.Helper()
	mfs, err := reg.Gather()
	if err != nil {
		t.Fatal(err)
	}
	for _, mf := range mfs {
		if mf.GetName() == name {
			var n uint64
			for _, m := range mf.GetMetric() {
				n += m.GetHistogram().GetSampleCount()
			}
			return n
		}
	}
	t.Fatalf("no metric %s", name)
	return 0
}

// plainStore is a store with nothing but the Store methods.
type plainStore struct{ s3store.Store }

func TestStoreKeepsOptionalInterfaces(t *testing.T) {
	s, _, _ := newTestSink(t)
	src, _, _ := newTestSource(t)
	mem := s3store.NewMemory()
	for _, st := range []s3store.Store{s.Store(mem), src.Store(mem)} {
		tg, ok := st.(s3store.Tagger)
		if !ok {
			t.Fatal("the wrapper of a Tagger is no Tagger: s3.object.tagging would stop tagging")
		}
		w, _ := st.Create(context.Background(), "k")
		_ = w.Commit(context.Background())
		if err := tg.Tag(context.Background(), "k", map[string]string{"a": "b"}); err != nil {
			t.Fatal(err)
		}
	}
	if _, ok := s.Store(plainStore{mem}).(s3store.Tagger); ok {
		t.Fatal("the wrapper of a store that cannot tag says it can")
	}
}

func TestObservedStorePassesChecksums(t *testing.T) {
	mem := s3store.NewMemory()
	w, err := mem.Create(t.Context(), "k")
	if err != nil {
		t.Fatal(err)
	}
	if _, err := w.Write([]byte("hello")); err != nil {
		t.Fatal(err)
	}
	if err := w.Commit(t.Context()); err != nil {
		t.Fatal(err)
	}
	want, ok, err := mem.StoredCRC32C(t.Context(), "k")
	if err != nil || !ok {
		t.Fatalf("memory store: %q %v %v", want, ok, err)
	}
	var st s3store.Store = &observedStore{Store: mem}
	cs, isCS := st.(s3store.Checksummer)
	if !isCS {
		t.Fatal("the observed store hides the store's checksums")
	}
	if got, ok, err := cs.StoredCRC32C(t.Context(), "k"); got != want || !ok || err != nil {
		t.Fatalf("observed: %q %v %v, want %q", got, ok, err, want)
	}
}

// TestStorePassesETagsOn: the observed store's writer gives the store
// writer's ETag (s3store.ETagger), which the sink records in the archive
// index, and its listing the store's ETags.
func TestStorePassesETagsOn(t *testing.T) {
	s, _, _ := newTestSink(t)
	mem := s3store.NewMemory()
	st := s.Store(mem)
	ctx := context.Background()
	w, err := st.Create(ctx, "k")
	if err != nil {
		t.Fatal(err)
	}
	if _, err := w.Write([]byte("abc")); err != nil {
		t.Fatal(err)
	}
	if err := w.Commit(ctx); err != nil {
		t.Fatal(err)
	}
	et, ok := w.(s3store.ETagger)
	info, _ := mem.Stat(ctx, "k")
	if !ok || info.ETag == "" || et.ETag() != info.ETag {
		t.Fatalf("observed writer ETagger %v, store's ETag %q", ok, info.ETag)
	}
	err = st.List(ctx, "", func(i s3store.ObjectInfo) error {
		if i.ETag != info.ETag {
			t.Errorf("listed ETag %q, want %q", i.ETag, info.ETag)
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
}
