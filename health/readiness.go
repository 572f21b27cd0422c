package health

import (
	"errors"
	"fmt"
	"log/slog"
	"net/http"
	"sort"
	"strings"
	"sync"
	"time"
)

// Dep names a dependency whose state readiness tracks.
type Dep string

// The dependencies of the sink and the source.
const (
	Broker   Dep = "broker"
	Store    Dep = "store"
	Registry Dep = "registry"
	// Progress is the pipeline itself: down while records wait and none is
	// written or produced.
	Progress Dep = "progress"
)

// Setter is what a component needs to report a dependency's state.
type Setter interface {
	SetUp(dep Dep)
	SetDown(dep Dep, err error)
}

// State is one dependency's state at a moment.
type State struct {
	Dep Dep
	// Up is true when the last report said it works.
	Up bool
	// Pending is true when it was expected and never reported (Up is false).
	Pending bool
	// Err is the error of the SetDown that took it down; nil when up or pending.
	Err error
	// Since is when it entered this state.
	Since time.Time
}

// Readiness is the up/down state of each dependency. The zero value is not
// usable; build one with NewReadiness. A nil *Readiness does nothing.
type Readiness struct {
	log *slog.Logger
	now func() time.Time

	mu   sync.Mutex
	deps map[Dep]*State
}

// NewReadiness returns a Readiness with no dependencies (ready) that logs
// state changes to log (nil: no logging).
func NewReadiness(log *slog.Logger) *Readiness {
	if log == nil {
		log = slog.New(slog.DiscardHandler)
	}
	return &Readiness{log: log, now: time.Now, deps: map[Dep]*State{}}
}

// Expect registers dep as pending: not ready until its first SetUp. It does
// nothing to a dependency that has already been reported.
func (r *Readiness) Expect(dep Dep) {
	if r == nil {
		return
	}
	r.mu.Lock()
	defer r.mu.Unlock()
	if _, ok := r.deps[dep]; !ok {
		r.deps[dep] = &State{Dep: dep, Pending: true, Since: r.now()}
	}
}

// SetUp reports that dep works. It logs only when dep was down (info, with
// how long) or pending (debug).
func (r *Readiness) SetUp(dep Dep) {
	if r == nil {
		return
	}
	r.mu.Lock()
	defer r.mu.Unlock()
	s, ok := r.deps[dep]
	if ok && s.Up {
		return
	}
	now := r.now()
	if !ok {
		r.deps[dep] = &State{Dep: dep, Up: true, Since: now}
		return
	}
	was := *s
	*s = State{Dep: dep, Up: true, Since: now}
	// Logged under the lock, so the lines of quick changes stay in order.
	if was.Pending {
		r.log.Debug("dependency ready", "dependency", string(dep))
		return
	}
	r.log.Info("dependency up again", "dependency", string(dep), "down_for", now.Sub(was.Since).Round(time.Millisecond).String(), "last_error", errString(was.Err))
}

// SetDown reports that dep failed with err. It logs a warning only when dep
// was up, pending or unknown; while it stays down, later calls only keep
// the first error.
func (r *Readiness) SetDown(dep Dep, err error) {
	if r == nil {
		return
	}
	if err == nil {
		err = errors.New("reported down")
	}
	r.mu.Lock()
	defer r.mu.Unlock()
	s, ok := r.deps[dep]
	if ok && !s.Up && !s.Pending {
		return
	}
	r.deps[dep] = &State{Dep: dep, Err: err, Since: r.now()}
	r.log.Warn("dependency down", "dependency", string(dep), "error", err.Error())
}

// Snapshot returns every dependency's state, sorted by name.
func (r *Readiness) Snapshot() []State {
	if r == nil {
		return nil
	}
	r.mu.Lock()
	out := make([]State, 0, len(r.deps))
	for _, s := range r.deps {
		out = append(out, *s)
	}
	r.mu.Unlock()
	sort.Slice(out, func(i, j int) bool { return out[i].Dep < out[j].Dep })
	return out
}

// Ready returns nil when every dependency is up, else an error naming each
// one that is down (with its error) or pending.
func (r *Readiness) Ready() error {
	var problems []string
	for _, s := range r.Snapshot() {
		switch {
		case s.Up:
		case s.Pending:
			problems = append(problems, fmt.Sprintf("%s: not yet connected", s.Dep))
		default:
			problems = append(problems, fmt.Sprintf("%s: down since %s: %v", s.Dep, s.Since.UTC().Format(time.RFC3339), s.Err))
		}
	}
	if len(problems) == 0 {
		return nil
	}
	return errors.New("not ready: " + strings.Join(problems, "; "))
}

// ServeHTTP answers /readyz: 200 "ready" when Ready is nil, else 503 with
// the reason, one line.
func (r *Readiness) ServeHTTP(w http.ResponseWriter, _ *http.Request) {
	w.Header().Set("Content-Type", "text/plain; charset=utf-8")
	w.Header().Set("Cache-Control", "no-store")
	if err := r.Ready(); err != nil {
		w.WriteHeader(http.StatusServiceUnavailable)
		fmt.Fprintln(w, err)
		return
	}
	fmt.Fprintln(w, "ready")
}

func errString(err error) string {
	if err == nil {
		return ""
	}
	return err.Error()
}
