// Package outage is how the sink and the source ride out a dependency that
// goes away (the Kafka brokers, the object store, the Schema Registry) and
// how --once gives up on one: it sorts errors into transient and fatal,
// paces retries, and tracks how long each dependency has been down.
//
//   - Transient(err) tells whether a Kafka error passes on its own: a
//     refused, reset or timed out connection, any error Kafka marks
//     retriable (coordinator not available or moved, leader not available,
//     request timed out, ...), NOT_CONTROLLER, and a group session that
//     could not be joined for one of these reasons. Authentication and
//     authorization failures, an unknown topic that is not auto-created,
//     invalid requests and configs, and every other Kafka error are fatal.
//     The store and the registry sort their own errors (s3store retries
//     5xx, 429, throttling and network errors; a refused registry
//     credential is archive.ErrPermanent).
//   - Backoff is a capped exponential backoff with jitter: each wait is
//     uniform in [d/2, d], d doubling from Min up to Max.
//   - Tracker records, per dependency, since when it has been failing
//     without a success in between, and passes each state to a Setter
//     (the process's readiness). With a
//     limit (--once-timeout), Overdue returns an *UnreachableError naming
//     the dependency once one has been down that long.
//
// Dependencies and the Setter are package health's (Dep, Setter): the
// process's *health.Readiness receives the states, serves /readyz and logs
// once per state change.
package outage
