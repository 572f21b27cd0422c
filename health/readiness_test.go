package health

import (
	"bytes"
	"errors"
	"io"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"
	"time"
)

// syncBuf is a bytes.Buffer safe for the logger's concurrent writes.
type syncBuf struct {
	mu sync.Mutex
	b  bytes.Buffer
}

func (s *syncBuf) Write(p []byte) (int, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.Write(p)
}

func (s *syncBuf) lines() []string {
	s.mu.Lock()
	defer s.mu.Unlock()
	t := strings.TrimSpace(s.b.String())
	if t == "" {
		return nil
	}
	return strings.Split(t, "\n")
}

func newTest(level slog.Level) (*Readiness, *syncBuf, *time.Time) {
	buf := &syncBuf{}
	r := NewReadiness(slog.New(slog.NewTextHandler(buf, &slog.HandlerOptions{Level: level})))
	now := time.Date(2026, 12, 1, 16, 0, 0, 0, time.UTC)
	r.now = func() time.Time { return now }
	return r, buf, &now
}

func TestReadinessSetterInterface(t *testing.T) {
	var s Setter = NewReadiness(nil)
	s.SetDown(Store, errors.New("x"))
	if err := s.(*Readiness).Ready(); err == nil {
		t.Fatal("a store reported down through Setter left the process ready")
	}
}

func TestReadinessEmptyIsReady(t *testing.T) {
	r := NewReadiness(nil)
	if err := r.Ready(); err != nil {
		t.Fatalf("no dependencies: %v", err)
	}
}

func TestReadinessLogsOncePerChange(t *testing.T) {
	r, buf, now := newTest(slog.LevelInfo)
	refused := errors.New("dial tcp 127.0.0.1:9092: connection refused")
	r.SetUp(Broker)
	r.SetUp(Broker)
	if got := buf.lines(); len(got) != 0 {
		t.Fatalf("up while up logged %q", got)
	}
	for range 5 {
		r.SetDown(Broker, refused)
	}
	*now = now.Add(90 * time.Second)
	r.SetDown(Broker, errors.New("a later, different error"))
	for range 3 {
		r.SetUp(Broker)
	}
	got := buf.lines()
	if len(got) != 2 {
		t.Fatalf("want 2 lines (down, up), got %d: %q", len(got), got)
	}
	if !strings.Contains(got[0], "level=WARN") || !strings.Contains(got[0], "dependency=broker") || !strings.Contains(got[0], "connection refused") {
		t.Errorf("down line: %s", got[0])
	}
	if !strings.Contains(got[1], "level=INFO") || !strings.Contains(got[1], "dependency=broker") || !strings.Contains(got[1], "down_for=1m30s") || !strings.Contains(got[1], "connection refused") {
		t.Errorf("up line: %s", got[1])
	}
	r.SetDown(Broker, refused)
	if got := buf.lines(); len(got) != 3 || !strings.Contains(got[2], "level=WARN") {
		t.Fatalf("a second outage was not logged once: %q", got)
	}
}

func TestReadinessReadyNamesEachDownDependency(t *testing.T) {
	r, _, _ := newTest(slog.LevelInfo)
	r.SetUp(Broker)
	r.SetDown(Store, errors.New("503 SlowDown"))
	r.SetDown(Registry, errors.New("registry unreachable"))
	err := r.Ready()
	if err == nil {
		t.Fatal("ready with store and registry down")
	}
	msg := err.Error()
	for _, want := range []string{"store: down since 2026-12-01T16:00:00Z: 503 SlowDown", "registry: down since", "registry unreachable"} {
		if !strings.Contains(msg, want) {
			t.Errorf("Ready() = %q, want it to contain %q", msg, want)
		}
	}
	if strings.Contains(msg, "broker") {
		t.Errorf("Ready() names the broker, which is up: %q", msg)
	}
	// First error kept while down.
	r.SetDown(Store, errors.New("later"))
	if !strings.Contains(r.Ready().Error(), "503 SlowDown") {
		t.Errorf("the first error of the outage was replaced: %v", r.Ready())
	}
	r.SetUp(Store)
	r.SetUp(Registry)
	if err := r.Ready(); err != nil {
		t.Fatalf("all up: %v", err)
	}
}

func TestReadinessExpectIsPendingUntilUp(t *testing.T) {
	r, buf, _ := newTest(slog.LevelDebug)
	r.Expect(Broker)
	if err := r.Ready(); err == nil || !strings.Contains(err.Error(), "broker: not yet connected") {
		t.Fatalf("expected broker: Ready() = %v", err)
	}
	r.SetUp(Broker)
	if err := r.Ready(); err != nil {
		t.Fatalf("after first SetUp: %v", err)
	}
	r.Expect(Broker) // already known: no effect
	if err := r.Ready(); err != nil {
		t.Fatalf("Expect after SetUp made it pending again: %v", err)
	}
	got := buf.lines()
	if len(got) != 1 || !strings.Contains(got[0], "level=DEBUG") || !strings.Contains(got[0], "dependency ready") {
		t.Fatalf("first connection logs one debug line, got %q", got)
	}
	r.Expect(Store)
	r.SetDown(Store, errors.New("no such bucket"))
	if s := r.Snapshot(); len(s) != 2 || s[1].Dep != Store || s[1].Up || s[1].Pending || s[1].Err == nil {
		t.Fatalf("pending then down: %+v", s)
	}
	if got := buf.lines(); len(got) != 2 || !strings.Contains(got[1], "level=WARN") {
		t.Fatalf("pending -> down logs a warning: %q", got)
	}
}

func TestReadinessSnapshotSorted(t *testing.T) {
	r, _, now := newTest(slog.LevelInfo)
	r.SetUp(Store)
	*now = now.Add(time.Second)
	r.SetDown(Broker, nil)
	s := r.Snapshot()
	if len(s) != 2 || s[0].Dep != Broker || s[1].Dep != Store {
		t.Fatalf("not sorted: %+v", s)
	}
	if s[0].Up || s[0].Err == nil || !s[0].Since.Equal(*now) {
		t.Errorf("broker down with nil error: %+v", s[0])
	}
	if !s[1].Up || s[1].Err != nil || !s[1].Since.Equal(now.Add(-time.Second)) {
		t.Errorf("store: %+v", s[1])
	}
}

func TestReadinessNilIsNoOp(t *testing.T) {
	var r *Readiness
	r.Expect(Broker)
	r.SetDown(Broker, errors.New("x"))
	r.SetUp(Broker)
	if r.Ready() != nil || r.Snapshot() != nil {
		t.Fatal("nil Readiness is not ready")
	}
	rec := httptest.NewRecorder()
	r.ServeHTTP(rec, httptest.NewRequest(http.MethodGet, "/readyz", nil))
	if rec.Code != http.StatusOK {
		t.Fatalf("nil Readiness /readyz = %d", rec.Code)
	}
}

func TestReadinessHandler(t *testing.T) {
	r, _, _ := newTest(slog.LevelInfo)
	srv := httptest.NewServer(r)
	defer srv.Close()
	get := func() (int, string) {
		t.Helper()
		resp, err := http.Get(srv.URL + "/readyz")
		if err != nil {
			t.Fatal(err)
		}
		defer resp.Body.Close()
		b, _ := io.ReadAll(resp.Body)
		return resp.StatusCode, string(b)
	}
	r.Expect(Broker)
	if code, body := get(); code != http.StatusServiceUnavailable || !strings.Contains(body, "broker: not yet connected") {
		t.Fatalf("pending: %d %q", code, body)
	}
	r.SetUp(Broker)
	if code, body := get(); code != http.StatusOK || body != "ready\n" {
		t.Fatalf("up: %d %q", code, body)
	}
	r.SetDown(Broker, errors.New("connection refused"))
	if code, body := get(); code != http.StatusServiceUnavailable || !strings.Contains(body, "broker: down since") || !strings.Contains(body, "connection refused") {
		t.Fatalf("down: %d %q", code, body)
	}
}

func TestReadinessConcurrent(t *testing.T) {
	r, buf, _ := newTest(slog.LevelInfo)
	var wg sync.WaitGroup
	for i := range 8 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for j := range 1000 {
				if (i+j)%2 == 0 {
					r.SetUp(Store)
				} else {
					r.SetDown(Store, errors.New("flaky"))
				}
				_ = r.Ready()
			}
		}()
	}
	wg.Wait()
	// Each logged line is a change: lines alternate between down and up.
	lines := buf.lines()
	for k := 1; k < len(lines); k++ {
		if strings.Contains(lines[k], "level=WARN") == strings.Contains(lines[k-1], "level=WARN") {
			t.Fatalf("two consecutive lines of the same state at %d: %q / %q", k, lines[k-1], lines[k])
		}
	}
}
