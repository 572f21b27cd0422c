// Package metrics is kafkas3's Prometheus instrumentation (the official
// client library) and its HTTP endpoints: /metrics, /healthz and /readyz.
//
// Nothing in it is global: every metric is registered with the registry
// the caller passes in (cmd builds one with prometheus.NewRegistry per
// run), never the default one, so two sinks in one process (tests) do not
// share counters.
//
//   - Sink is the sink's archive.Observer (archive.Config.Observer). Its
//     Partition resolves a partition's label children once, so the record
//     path pays a few atomic adds per fetched batch and per completed
//     object, never a label lookup per record. Sink.Store wraps the store
//     to measure open objects, their spooled bytes and each Commit's
//     latency; Sink.Report logs the interval line ("sink progress") and
//     sets the Progress readiness. How far behind the archive is, per
//     partition (the newest archived and the oldest waiting record's
//     timestamps), is age.go's.
//   - Source is the source's restore.Observer (restore.Config.Observer),
//     resolved per target topic; Source.Progress wraps the run's
//     restore.Progress to export each pass's planned and done bytes;
//     Source.SourceHooks times produce requests through franz-go's hooks;
//     Source.Watch sets the Progress readiness.
//   - RegisterProcess adds the Go and process collectors (process_open_fds
//     among them) and kafkas3_dependency_up, the health.Readiness state.
//   - Listen and Server.Serve serve the registry and the readiness.
//
// docs/operations.md, "Metrics, health and logs", lists every metric with its
// labels; names follow Prometheus' conventions (kafkas3_ prefix, _total
// counters, _seconds and _bytes units).
package metrics
