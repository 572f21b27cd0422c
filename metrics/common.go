package metrics

import (
	"fmt"

	"github.com/kafkas3/kafkas3/s3store"
	"github.com/prometheus/client_golang/prometheus"
)

// storeType is the store the sink and the source read and write.
type storeType = s3store.Store

func counterVec(name, help string, labels ...string) *prometheus.CounterVec {
	return prometheus.NewCounterVec(prometheus.CounterOpts{Name: name, Help: help}, labels)
}

// register registers every collector with reg, failing on the first that
// cannot be (a name registered twice).
func register(reg prometheus.Registerer, cs ...prometheus.Collector) error {
	for _, c := range cs {
		if err := reg.Register(c); err != nil {
			return fmt.Errorf("metrics: %w", err)
		}
	}
	return nil
}
