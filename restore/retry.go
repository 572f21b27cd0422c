package restore

import (
	"context"
	"errors"
	"fmt"
	"io"
	"net"
	"syscall"
	"time"

	"github.com/twmb/franz-go/pkg/kerr"
)

// transient reports whether err is a cluster state that passes on its own:
// any error Kafka marks retriable (COORDINATOR_NOT_AVAILABLE,
// COORDINATOR_LOAD_IN_PROGRESS, NOT_COORDINATOR, NOT_LEADER_OR_FOLLOWER,
// LEADER_NOT_AVAILABLE, UNKNOWN_TOPIC_OR_PARTITION for a topic just created,
// REQUEST_TIMED_OUT, ...), NOT_CONTROLLER, and a connection refused or cut
// by a broker that is starting.
func transient(err error) bool {
	if err == nil || errors.Is(err, context.Canceled) || errors.Is(err, context.DeadlineExceeded) {
		return false
	}
	if kerr.IsRetriable(err) || errors.Is(err, kerr.NotController) {
		return true
	}
	var ke *kerr.Error
	if errors.As(err, &ke) {
		return false // a Kafka error that is not retriable
	}
	var ne net.Error
	return errors.As(err, &ne) || errors.Is(err, syscall.ECONNREFUSED) || errors.Is(err, syscall.ECONNRESET) ||
		errors.Is(err, io.EOF) || errors.Is(err, io.ErrUnexpectedEOF)
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
