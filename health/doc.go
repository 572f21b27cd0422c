// Package health holds the process's readiness: one up/down state per
// dependency (the Kafka brokers, the object store, the Schema Registry, the
// pipeline's own progress), which any component sets and which /readyz
// reads. It owns no connection and runs no check of its own: the component
// that talks to a dependency knows best whether it works, and says so.
//
// API:
//
//	r := health.NewReadiness(log)   // one per process, passed in through typed configs
//	r.Expect(health.Broker)         // not ready until the first SetUp(Broker)
//	r.SetDown(health.Broker, err)   // on a failed call: logs a warning once per change
//	r.SetUp(health.Broker)          // on a call that worked: logs once when it recovers
//	err := r.Ready()                // nil when every known dependency is up
//	deps := r.Snapshot()            // each dependency's state, sorted by name
//	http.Handle("/readyz", r)       // 200 "ready", or 503 listing what is down
//
// Logging is once per state change, never per call: a component may call
// SetDown on every failed retry and SetUp on every successful request; only
// the first SetDown after an up (or expected) state logs a warning naming
// the dependency and the error, and only the first SetUp after a down state
// logs an info line with how long it was down. A SetUp after Expect (the
// first connection) logs at debug.
//
// Every method is safe for concurrent use and does nothing on a nil
// *Readiness (Ready reports ready), so a component may hold a nil one when
// no readiness is wanted. SetUp on an up dependency takes one uncontended
// lock and a map lookup: cheap enough for every fetch or upload, not for
// every record. A component that only sets state may depend on the Setter
// interface instead of *Readiness.
//
// Dependencies are named by Dep; Broker, Store, Registry and Progress are
// the names the sink and the source use (Progress: the pipeline's stall
// check sets it down while records wait and none is written), and any other
// name works the same way.
package health
