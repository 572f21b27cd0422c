package archive

import (
	"context"
	"fmt"
	"log/slog"
	"maps"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/kafkas3/kafkas3/format"
	"github.com/kafkas3/kafkas3/index"
	"github.com/kafkas3/kafkas3/s3store"
)

// gatedStore holds every Commit until gate is closed.
type gatedStore struct {
	s3store.Store
	gate chan struct{}
}

func (g *gatedStore) Create(ctx context.Context, key string) (s3store.ObjectWriter, error) {
	w, err := g.Store.Create(ctx, key)
	if err != nil {
		return nil, err
	}
	return &gatedWriter{ObjectWriter: w, gate: g.gate}, nil
}

type gatedWriter struct {
	s3store.ObjectWriter
	gate chan struct{}
}

func (g *gatedWriter) Commit(ctx context.Context) error {
	select {
	case <-g.gate:
	case <-ctx.Done():
		return ctx.Err()
	}
	return g.ObjectWriter.Commit(ctx)
}

func (g *gatedWriter) ETag() string { return g.ObjectWriter.(s3store.ETagger).ETag() }

func uploadRecord(offset int64) *format.Record {
	return &format.Record{Topic: "t", Offset: offset, Value: []byte(fmt.Sprintf(`{"n":%d}`, offset)), Timestamp: time.UnixMilli(1000 + offset)}
}

// TestRotationUploadsOffTheWorker: a rotation returns while its objects
// are still being completed (the worker goes on writing), and its offset
// becomes pending only when they are complete; with the archive index, the
// index object is written after them. An offset skipped meanwhile becomes
// pending only after the upload too, and a failed upload makes nothing
// pending.
func TestRotationUploadsOffTheWorker(t *testing.T) {
	for _, indexed := range []bool{false, true} {
		t.Run(fmt.Sprintf("index=%v", indexed), func(t *testing.T) {
			ctx := context.Background()
			mem := s3store.NewMemory()
			store := &gatedStore{Store: mem, gate: make(chan struct{})}
			cfg := testConfig(nil, "t")
			cfg.FlushSize = 2
			if indexed {
				cfg.IndexPrefix = index.DefaultPrefix
			}
			w := newPartitionWriter("t", 0, -1, &cfg, store, slog.New(slog.DiscardHandler))
			w.slots = make(chan struct{}, 1)
			for off := range int64(3) {
				if err := w.write(ctx, uploadRecord(off)); err != nil {
					t.Fatal(err)
				}
			}
			// Offsets 0-1 rotated at flush.size; offset 2 is in a new open file.
			if w.uploaded() == nil {
				t.Fatal("no upload running after the rotation")
			}
			if w.pending != -1 || len(snapshot(t, mem)) != 0 {
				t.Fatalf("pending %d, objects %v while the upload waits: want -1 and none", w.pending, keysOf(snapshot(t, mem)))
			}
			close(store.gate)
			if err := w.finish(<-w.uploaded()); err != nil {
				t.Fatal(err)
			}
			want := []string{"topics/t/partition=0/t+0+0000000000.json"}
			if indexed {
				// The index object, and before it the writer's start
				// checkpoint (checkpoint.Begin, in the upload).
				want = append(want, index.Key(index.DefaultPrefix, "t", 0, 2, index.WriterOf(cfg.GroupID)),
					index.CheckpointKey(index.DefaultPrefix, "t", 0, 0, index.WriterOf(cfg.GroupID)))
			}
			slices.Sort(want)
			if w.pending != 2 || fmt.Sprint(keysOf(snapshot(t, mem))) != fmt.Sprint(want) {
				t.Fatalf("pending %d, objects %v after the upload: want 2 and %v", w.pending, keysOf(snapshot(t, mem)), want)
			}
			if d := w.takeDone(); len(d) != 1 || d[0].Records != 2 || d[0].StartOffset != 0 || d[0].EndOffset != 1 {
				t.Fatalf("done %+v, want the one object of offsets 0-1", d)
			}
			if err := w.flush(ctx); err != nil {
				t.Fatal(err)
			}
			if w.pending != 3 || w.uploaded() != nil {
				t.Fatalf("after flush: pending %d, upload running %v; want 3 and none", w.pending, w.uploaded() != nil)
			}
		})
	}
}

// TestSkipDuringUploadWaitsForIt: without the index an offset skipped
// while no file is open becomes pending at once, except while an upload
// runs: then only when it is done (a failed one makes nothing pending).
func TestSkipDuringUploadWaitsForIt(t *testing.T) {
	for _, fail := range []bool{false, true} {
		ctx, cancel := context.WithCancel(context.Background())
		store := &gatedStore{Store: s3store.NewMemory(), gate: make(chan struct{})}
		cfg := testConfig(nil, "t")
		cfg.FlushSize = 2
		w := newPartitionWriter("t", 0, -1, &cfg, store, slog.New(slog.DiscardHandler))
		w.slots = make(chan struct{}, 1)
		for off := range int64(2) {
			if err := w.write(ctx, uploadRecord(off)); err != nil {
				t.Fatal(err)
			}
		}
		if err := w.skip(ctx, 2); err != nil {
			t.Fatal(err)
		}
		if w.pending != -1 {
			t.Fatalf("pending %d while the upload of offsets 0-1 runs, want -1", w.pending)
		}
		if fail {
			cancel()
			err := w.finish(<-w.uploaded())
			if err == nil || !strings.Contains(err.Error(), "context canceled") || w.pending != -1 {
				t.Fatalf("cancelled upload: err %v, pending %d; want an error and -1", err, w.pending)
			}
			continue
		}
		close(store.gate)
		if err := w.wait(); err != nil {
			t.Fatal(err)
		}
		if w.pending != 3 {
			t.Fatalf("pending %d after the upload, want 3 (the skipped offset 2 included)", w.pending)
		}
		cancel()
	}
}

// indexObjectsOf decodes partition 0's index objects of topic t in store,
// by commit.
func indexObjectsOf(t *testing.T, store s3store.Store, writer string) map[int64][]index.Entry {
	t.Helper()
	out := map[int64][]index.Entry{}
	for k, v := range snapshot(t, store) {
		ik, err := index.ParseKey(k)
		if err != nil || ik.Writer != writer {
			continue
		}
		es, err := index.Decode(k, strings.NewReader(v))
		if err != nil {
			t.Fatal(err)
		}
		out[ik.Commit] = es
	}
	return out
}

// TestRestampKeepsETags: an index object's entries carry the ETags the
// store answered for their objects, and a restamp of those entries at a
// higher commit keeps them, whether the rotation's upload ran inline,
// or in the background and was still unreceived (its result not yet
// taken by the worker) when the restamp came.
func TestRestampKeepsETags(t *testing.T) {
	for _, background := range []bool{false, true} {
		t.Run(fmt.Sprintf("background=%v", background), func(t *testing.T) {
			ctx := context.Background()
			mem := s3store.NewMemory()
			store := &gatedStore{Store: mem, gate: make(chan struct{})}
			cfg := testConfig(nil, "t")
			cfg.FlushSize = 2
			cfg.IndexPrefix = index.DefaultPrefix
			w := newPartitionWriter("t", 0, -1, &cfg, store, slog.New(slog.DiscardHandler))
			if background {
				w.slots = make(chan struct{}, 1)
			} else {
				close(store.gate)
			}
			for off := range int64(2) {
				if err := w.write(ctx, uploadRecord(off)); err != nil {
					t.Fatal(err)
				}
			}
			if background {
				close(store.gate) // the upload completes; its result waits in the channel
			}
			for off := int64(2); off < 4; off++ { // flush.size skipped offsets: a restamp at 4
				if err := w.skip(ctx, off); err != nil {
					t.Fatal(err)
				}
			}
			if err := w.flush(ctx); err != nil {
				t.Fatal(err)
			}
			key := "topics/t/partition=0/t+0+0000000000.json"
			info, err := mem.Stat(ctx, key)
			if err != nil || info.ETag == "" {
				t.Fatalf("Stat(%q) = %+v, %v: want an ETag", key, info, err)
			}
			ixs := indexObjectsOf(t, mem, index.WriterOf(cfg.GroupID))
			for _, commit := range []int64{2, 4} {
				es := ixs[commit]
				if len(es) != 1 || len(es[0].Objects) != 1 || es[0].Objects[0].ETag != info.ETag {
					t.Errorf("index object at commit %d: %+v; want the one entry of %q with ETag %q", commit, es, key, info.ETag)
				}
			}
			if len(ixs) != 2 {
				t.Errorf("index objects at commits %v, want 2 and 4", slices.Sorted(maps.Keys(ixs)))
			}
		})
	}
}
