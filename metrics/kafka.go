package metrics

import (
	"sync/atomic"

	"github.com/kafkas3/kafkas3/health"
	"github.com/prometheus/client_golang/prometheus"
	"github.com/twmb/franz-go/pkg/kgo"
)

// produceKey is the Kafka protocol's API key of Produce.
const produceKey = 0

// KafkaHooks are franz-go client hooks (kgo.WithHooks): the first broker
// response that arrives sets the Broker readiness up (once: later outages
// are for the components that see them), and, when built with a produce
// histogram, each produce request's round trip is observed in it.
type KafkaHooks struct {
	ready   *health.Readiness
	produce prometheus.Histogram // nil: not measured
	seen    atomic.Bool
}

// SinkHooks are the sink's Kafka client hooks: readiness only.
func (s *Sink) SinkHooks() *KafkaHooks { return &KafkaHooks{ready: s.ready} }

// SourceHooks are the source's Kafka client hooks, measuring produce
// requests in kafkas3_source_produce_duration_seconds (registered with reg).
func (s *Source) SourceHooks(reg prometheus.Registerer) (*KafkaHooks, error) {
	h := prometheus.NewHistogram(prometheus.HistogramOpts{Name: "kafkas3_source_produce_duration_seconds",
		Help:    "Round trip of each produce request to the target brokers (write to the end of the response; acks=all, so until every in-sync replica has the batch).",
		Buckets: latencyBuckets()})
	if err := register(reg, h); err != nil {
		return nil, err
	}
	return &KafkaHooks{ready: s.ready, produce: h}, nil
}

// OnBrokerE2E implements kgo.HookBrokerE2E.
func (h *KafkaHooks) OnBrokerE2E(_ kgo.BrokerMetadata, key int16, e2e kgo.BrokerE2E) {
	if e2e.Err() != nil {
		return
	}
	if !h.seen.Load() && h.seen.CompareAndSwap(false, true) {
		h.ready.SetUp(health.Broker)
	}
	if key == produceKey && h.produce != nil {
		h.produce.Observe(e2e.DurationE2E().Seconds())
	}
}
