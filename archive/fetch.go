package archive

import (
	"context"
	"errors"
	"fmt"

	"github.com/kafkas3/kafkas3/outage"
	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kgo"
)

// This file holds the fetch loop's (poll, path.go) decisions; the fetch
// budget and the copies of fetched records are in budget.go.

// pollOver tells whether the fetch loop ends after fetches, and with which
// error: --once is done (nil), the session is over (nil when its parent
// was cancelled, a clean stop), or a fetch failed for good.
func (ss *session) pollOver(fetches kgo.Fetches) (bool, error) {
	if ss.onceDone() {
		return true, nil
	}
	if err := context.Cause(ss.ctx); err != nil {
		if errors.Is(err, context.Canceled) {
			return true, nil // the parent context: a clean stop
		}
		return true, err
	}
	if err := ss.fetchError(fetches); err != nil {
		return true, err
	}
	if err := ss.s.deps.Overdue(); err != nil {
		return true, err // --once: a dependency down for --once-timeout
	}
	return false, nil
}

// fetchError sorts the fetch errors of fetches and returns the first that
// no retry fixes. A topic or partition that does not exist (yet) is
// retried, with a warning. A transient one (outage.Transient: a broker
// that cannot be reached, the group session lost and not joined again,
// ...) marks the brokers down, which logs once; franz-go goes on
// rejoining and fetching, and the next assignment marks them up.
func (ss *session) fetchError(fetches kgo.Fetches) error {
	var ferr error
	fetches.EachError(func(t string, p int32, err error) {
		if errors.Is(err, context.Canceled) {
			return
		}
		err = fmt.Errorf("fetch %s[%d]: %w", t, p, err)
		ss.s.cfg.Observer.Error(ErrorFetch)
		switch {
		case errors.Is(err, kerr.UnknownTopicID):
			// franz-go saw the topic's id change (deleted and
			// created again) and will not adopt the new one: a new
			// session checks the topic's identity (identity.go).
			ss.s.log.Warn("fetch error: the topic's id changed", "topic", t, "partition", p, "err", err)
			if ferr == nil {
				ferr = fmt.Errorf("%w: %w", errRecheck, err)
			}
		case errors.Is(err, kerr.UnknownTopicOrPartition):
			ss.s.log.Warn("fetch error", "topic", t, "partition", p, "err", err)
		case outage.Transient(err):
			ss.s.log.Debug("fetch error", "topic", t, "partition", p, "err", err)
			ss.s.deps.Down(outage.Broker, err)
		default:
			ss.s.log.Warn("fetch error", "topic", t, "partition", p, "err", err)
			if ferr == nil {
				ferr = err
			}
		}
	})
	return ferr
}

// onceDone tells whether --once has archived every partition to its
// target.
func (ss *session) onceDone() bool {
	select {
	case <-ss.doneCh:
		return true
	default:
		return false
	}
}
