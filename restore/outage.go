package restore

import (
	"context"
	"errors"
	"fmt"
	"net"
	"strconv"
	"time"

	"github.com/kafkas3/kafkas3/convert"
	"github.com/kafkas3/kafkas3/outage"
	"github.com/kafkas3/kafkas3/s3store"
	"github.com/twmb/franz-go/pkg/kgo"
)

// Outages
//
// In follow mode, the first plan, a pass and each later plan that fail for
// a reason that passes on its own (failedDep: the Schema Registry
// unreachable or answering 5xx, a store request failing after its
// retries, a Kafka error outage.Transient accepts) report the dependency
// down to Config.Health, wait a backoff (1 s doubling to 30 s, with
// jitter) and are planned and run again at once. A pass run again resumes
// as a re-run of the command does: from the markers and end offsets, with
// the verification read of what landed (a partition's memo is kept only
// when its stream completed), so what landed before the outage is not
// produced again and nothing is skipped. A pass that completes reports the
// store and the brokers up; the producer's hooks report a failed broker
// connection down and a written batch up. Without Follow, a failure ends
// the run as before.

// This file is how follow mode rides out an outage of the target brokers,
// the store or the Schema Registry: a pass that fails for a reason that
// passes on its own (failedDep) is planned and run again after a backoff,
// and the pass resumes as a re-run of the command does (the markers and
// end offsets: what landed is a prefix, the rest follows, nothing twice).

// followBackoff paces the passes retried after an outage.
const followMinBackoff, followMaxBackoff = time.Second, 30 * time.Second

// failedDep tells which dependency err is a failure of, and whether it
// passes on its own: a registry that cannot be reached (not one refusing
// the credentials), a store request that failed after its retries
// (s3store.Transient), a Kafka error outage.Transient calls transient.
func failedDep(err error) (outage.Dep, bool) {
	switch {
	case err == nil || errors.Is(err, context.Canceled):
		return "", false
	case errors.Is(err, convert.ErrRegistry):
		return outage.Registry, !errors.Is(err, convert.ErrRegistryAuth)
	case s3store.Transient(err):
		return outage.Store, true
	case outage.Transient(err):
		return outage.Broker, true
	}
	return "", false
}

// rideOut reports err's dependency down and waits a backoff when, in
// follow mode, err passes on its own; it returns false (give up with err)
// otherwise, or when ctx ends meanwhile.
func (r *Restorer) rideOut(ctx context.Context, err error, b *outage.Backoff) bool {
	dep, transient := failedDep(err)
	if !r.cfg.Follow || !transient || ctx.Err() != nil {
		return false
	}
	r.deps.Down(dep, err)
	r.observer().Retry(string(dep))
	wait := b.Next()
	r.log.Debug("follow: retrying after a backoff", "dependency", string(dep), "err", err, "retry_in", wait.Round(time.Millisecond))
	select {
	case <-ctx.Done():
		return false
	case <-time.After(wait):
		return true
	}
}

// passed reports the dependencies of a pass that completed up.
func (r *Restorer) passed() {
	r.deps.Up(outage.Store)
	r.deps.Up(outage.Broker)
	r.deps.Recovered(outage.Registry)
}

// producerHooks tell the run's states what the producer sees: a broker
// connection that fails marks the brokers down, a batch written marks them
// up again.
type producerHooks struct{ deps *outage.Tracker }

func (h producerHooks) OnBrokerConnect(meta kgo.BrokerMetadata, _ time.Duration, _ net.Conn, err error) {
	if err != nil && outage.Transient(err) {
		h.deps.Down(outage.Broker, fmt.Errorf("connect to broker %s: %w", net.JoinHostPort(meta.Host, strconv.Itoa(int(meta.Port))), err))
	}
}

func (h producerHooks) OnProduceBatchWritten(kgo.BrokerMetadata, string, int32, kgo.ProduceBatchMetrics) {
	h.deps.Recovered(outage.Broker)
}

// firstPlan is Plan; in follow mode (not a dry run) a plan that fails for
// a reason that passes on its own (a store outage) is made again after a
// backoff, so a --follow started during an outage waits for its end.
func (r *Restorer) firstPlan(ctx context.Context) (*Plan, error) {
	backoff := outage.Backoff{Min: followMinBackoff, Max: followMaxBackoff}
	for {
		plan, err := r.Plan(ctx)
		if err == nil || r.cfg.DryRun || !r.rideOut(ctx, err, &backoff) {
			return plan, err
		}
	}
}
