package archive

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/kafkas3/kafkas3/format"
	"github.com/kafkas3/kafkas3/index"
	"github.com/kafkas3/kafkas3/s3store"
	srschemas "github.com/kafkas3/kafkas3/schemas"
)

// countingFetcher knows ids 1..9 (id 5 references id 4) and counts its
// calls per id.
type countingFetcher struct {
	mu    sync.Mutex
	calls map[int]int
	fail  atomic.Bool
}

func (f *countingFetcher) Fetch(_ context.Context, id int) ([]index.Schema, error) {
	f.mu.Lock()
	f.calls[id]++
	f.mu.Unlock()
	if f.fail.Load() {
		return nil, fmt.Errorf("%w: down", srschemas.ErrRegistry)
	}
	if id > 9 {
		return nil, fmt.Errorf("%w: id %d", srschemas.ErrUnknownID, id)
	}
	s := index.Schema{V: index.SchemaVersion, ID: id, Type: index.SchemaAvro, Text: fmt.Sprintf(`{"type":"fixed","name":"f%d","size":1}`, id),
		Subjects: []index.SubjectVersion{{Subject: "t-value", Version: id}}}
	if id == 5 {
		ref := index.Schema{V: index.SchemaVersion, ID: 4, Type: index.SchemaAvro, Text: `{"type":"fixed","name":"f4","size":1}`}
		s.References = []index.SchemaReference{{Name: "f4", Subject: "f4", Version: 1, ID: 4}}
		return []index.Schema{ref, s}, nil
	}
	return []index.Schema{s}, nil
}

// TestSchemaRecorderOncePerID: workers recording the same ids at once
// fetch each once and write each schema object once; an unknown id is
// counted once; a registry failure is returned and not kept.
func TestSchemaRecorderOncePerID(t *testing.T) {
	ctx := context.Background()
	f := &countingFetcher{calls: map[int]int{}}
	rec := newSchemaRecorder(f, slog.New(slog.DiscardHandler))
	st := s3store.NewMemory()
	var wg sync.WaitGroup
	errs := make(chan error, 16)
	for range 16 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			errs <- rec.record(ctx, st, "_kafkas3/", "t", []int{1, 5, 12})
		}()
	}
	wg.Wait()
	close(errs)
	for err := range errs {
		if err != nil {
			t.Fatal(err)
		}
	}
	if f.calls[1] != 1 || f.calls[5] != 1 || f.calls[12] != 1 || f.calls[4] != 0 {
		t.Errorf("fetches %v, want one per id", f.calls)
	}
	objects, unknown := rec.counts()
	if objects != 3 || unknown != 1 {
		t.Errorf("objects %d unknown %d, want 3 (1, 5 and its reference 4) and 1", objects, unknown)
	}
	got, err := index.LoadSchemas(ctx, st, "_kafkas3/", "t")
	if err != nil || len(got) != 3 || got[0].ID != 1 || got[1].ID != 4 || got[2].ID != 5 {
		t.Fatalf("stored %+v, %v", got, err)
	}
	// Another topic: the fetch is cached, the objects are its own.
	if err := rec.record(ctx, st, "_kafkas3/", "u", []int{5}); err != nil {
		t.Fatal(err)
	}
	if f.calls[5] != 1 {
		t.Errorf("id 5 fetched %d times", f.calls[5])
	}
	if got, _ := index.LoadSchemas(ctx, st, "_kafkas3/", "u"); len(got) != 2 {
		t.Errorf("topic u: %+v", got)
	}
	f.fail.Store(true)
	if err := rec.record(ctx, st, "_kafkas3/", "t", []int{7}); !errors.Is(err, srschemas.ErrRegistry) {
		t.Errorf("registry down: %v", err)
	}
	f.fail.Store(false)
	if err := rec.record(ctx, st, "_kafkas3/", "t", []int{7}); err != nil || f.calls[7] != 2 {
		t.Errorf("after the outage: %v, %d fetches", err, f.calls[7])
	}
}

func TestSchemaIDsNote(t *testing.T) {
	var s schemaIDs
	framed := func(id byte) []byte { return []byte{0, 0, 0, 0, id, 'x'} }
	typed := &format.Typed{Schema: &format.Schema{ID: 8}}
	s.note(&format.Record{Key: framed(1), Value: framed(2)}, true, false)
	s.note(&format.Record{Key: framed(1), Value: framed(3)}, true, false)
	s.note(&format.Record{Key: framed(6), Value: framed(2)}, false, false)                  // key not kept
	s.note(&format.Record{Key: framed(7), KeyTyped: typed, ValueTyped: typed}, true, false) // typed: kept decoded
	s.note(&format.Record{Key: framed(9), KeyTyped: typed, Value: []byte("plain")}, true, true)
	if got := fmt.Sprint(s.take()); got != "[1 2 3 9]" {
		t.Errorf("ids %s, want [1 2 3 9]", got)
	}
	if got := s.take(); got != nil {
		t.Errorf("after take: %v", got)
	}
}

// blockingFetcher holds each fetch until release is closed (or the
// caller's context ends), then knows every id.
type blockingFetcher struct {
	started chan struct{}
	release chan struct{}
	calls   atomic.Int64
}

func (f *blockingFetcher) Fetch(ctx context.Context, id int) ([]index.Schema, error) {
	if f.calls.Add(1) == 1 {
		close(f.started)
	}
	select {
	case <-f.release:
	case <-ctx.Done():
		return nil, ctx.Err()
	}
	return []index.Schema{{V: index.SchemaVersion, ID: id, Type: index.SchemaAvro, Text: `"string"`}}, nil
}

// TestSchemaRecorderSharedCancel: a worker waiting on another's fetch
// whose context ends (its partition revoked) fetches itself instead of
// failing with the other's cancellation.
func TestSchemaRecorderSharedCancel(t *testing.T) {
	f := &blockingFetcher{started: make(chan struct{}), release: make(chan struct{})}
	rec := newSchemaRecorder(f, slog.New(slog.DiscardHandler))
	st := s3store.NewMemory()
	leader, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() { done <- rec.record(leader, st, "_kafkas3/", "t", []int{3}) }()
	<-f.started
	waiter := make(chan error, 1)
	go func() { waiter <- rec.record(context.Background(), st, "_kafkas3/", "t", []int{3}) }()
	time.Sleep(20 * time.Millisecond) // the waiter waits on the leader's write
	cancel()
	if err := <-done; !errors.Is(err, context.Canceled) {
		t.Fatalf("the cancelled worker: %v", err)
	}
	close(f.release)
	if err := <-waiter; err != nil {
		t.Fatalf("the waiting worker failed with the other's cancellation: %v", err)
	}
	if got, err := index.LoadSchemas(context.Background(), st, "_kafkas3/", "t"); err != nil || len(got) != 1 {
		t.Fatalf("stored %+v, %v", got, err)
	}
}

// TestSchemaRecorderUnknownAgain: an id the registry did not know is not
// asked for again at once, but after unknownRetry (a follower registry
// may not have caught up): then its schema is recorded.
func TestSchemaRecorderUnknownAgain(t *testing.T) {
	f := &countingFetcher{calls: map[int]int{}}
	rec := newSchemaRecorder(f, slog.New(slog.DiscardHandler))
	now := time.Now()
	rec.now = func() time.Time { return now }
	st := s3store.NewMemory()
	ctx := context.Background()
	for range 2 {
		if err := rec.record(ctx, st, "_kafkas3/", "t", []int{12}); err != nil {
			t.Fatal(err)
		}
	}
	if f.calls[12] != 1 {
		t.Fatalf("an unknown id asked %d times at once, want 1", f.calls[12])
	}
	now = now.Add(unknownRetry)
	if err := rec.record(ctx, st, "_kafkas3/", "t", []int{12}); err != nil || f.calls[12] != 2 {
		t.Fatalf("after unknownRetry: %v, %d fetches, want 2", err, f.calls[12])
	}
}
