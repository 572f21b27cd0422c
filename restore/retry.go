package restore

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/kafkas3/kafkas3/outage"
)

// transient reports whether err is a cluster state that passes on its own,
// as outage.Transient classifies it (Kafka's retriable errors such as
// COORDINATOR_NOT_AVAILABLE, NOT_LEADER_OR_FOLLOWER or
// UNKNOWN_TOPIC_OR_PARTITION for a topic just created, NOT_CONTROLLER, and
// a connection refused or cut by a broker that is starting), except a
// deadline: retry's own steps run under the caller's context, so an
// expired one ends the step instead of being retried.
func transient(err error) bool {
	return !errors.Is(err, context.DeadlineExceeded) && outage.Transient(err)
}

// retry runs fn until it returns nil or an error that is not transient,
// for at most Config.RetryTimeout (DefaultRetryTimeout): transient cluster
// states are retried with a growing pause (50 ms to 2 s), never fatal on
// the first try. The last error is returned, saying how long it was
// retried. before, when set, runs before each retry (to drop cached
// metadata).
func (r *Restorer) retry(ctx context.Context, what string, before func(), fn func(ctx context.Context) error) error {
	deadline := time.Now().Add(r.cfg.RetryTimeout)
	pause := 50 * time.Millisecond
	for attempt := 1; ; attempt++ {
		err := fn(ctx)
		if err == nil || !transient(err) {
			return err
		}
		if time.Now().Add(pause).After(deadline) {
			return fmt.Errorf("%s: still failing after %d attempts over %v (transient errors are retried for %v): %w",
				what, attempt, r.cfg.RetryTimeout.Round(time.Second), r.cfg.RetryTimeout, err)
		}
		r.log.Debug("transient cluster error, retrying", "step", what, "attempt", attempt, "error", err)
		r.observer().Retry(RetryCluster)
		select {
		case <-ctx.Done():
			return ctx.Err()
		case <-time.After(pause):
		}
		pause = min(2*pause, 2*time.Second)
		if before != nil {
			before()
		}
	}
}
