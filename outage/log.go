package outage

import (
	"log/slog"
	"sync"
	"time"
)

// Log is a Setter that logs each state change once: a warning naming the
// dependency and the cause when it goes down, an info line with how long it
// was down when it is up again.
type Log struct {
	log *slog.Logger
	now func() time.Time

	mu    sync.Mutex
	since map[Dep]time.Time
}

// NewLog returns a Log writing to log.
func NewLog(log *slog.Logger) *Log {
	if log == nil {
		log = slog.New(slog.DiscardHandler)
	}
	return &Log{log: log, now: time.Now, since: map[Dep]time.Time{}}
}

// SetDown logs the first failure after dep was up (or unknown).
func (l *Log) SetDown(dep Dep, err error) {
	l.mu.Lock()
	_, down := l.since[dep]
	if !down {
		l.since[dep] = l.now()
	}
	l.mu.Unlock()
	if !down {
		l.log.Warn("dependency down; retrying with backoff", "dependency", string(dep), "err", err)
	}
}

// SetUp logs when dep was down.
func (l *Log) SetUp(dep Dep) {
	l.mu.Lock()
	since, down := l.since[dep]
	delete(l.since, dep)
	l.mu.Unlock()
	if down {
		l.log.Info("dependency up again", "dependency", string(dep), "down_for", l.now().Sub(since).Round(time.Millisecond).String())
	}
}
