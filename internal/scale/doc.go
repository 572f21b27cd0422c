// Package scale simulates reading an archive of real size (issue 19, item
// 7): 1,000,000 objects in 100 partitions behind 20 ms per store request,
// with no Kafka, no network and no disk. Everything is in its tests.
//
// The archive (archive_test.go) is synthetic and written directly into
// the memory of a read-only store (store_test.go), not through requests:
// one topic, per partition one value object per offset (one record, the
// bytes format, stamped one a second), one index object per object (a
// rotation: a v2 entry with its CRC32C, written by index.Encode), and the partition's newest
// checkpoint (index.CheckpointWriter) at the last multiple of 100 index
// objects that leaves a tail of 50 after it. Older checkpoints are left
// out: a reader lists them but reads only the newest.
//
// The store pays a fixed latency per request and counts them as S3 bills
// them: one LIST per page of 1,000 keys (ListAfter is S3's StartAfter),
// one GET per Open, one HEAD per Stat or StoredCRC32C (a HeadObject with
// checksum mode). It is a wrapper of its own rather than internal/s3fake
// behind HTTP: a million HTTP round trips on two cores would measure the
// fake, not kafkas3.
//
// It measures, each as wall time, requests by kind and heap: index.LoadWith
// (checkpoints and tail), verify.Run (plain, no --deep), inspect.List
// (`kafkas3 ls --timeline hour`: it fails if it opens a data object or
// counts another number of records), restore.Records (`kafkas3 cat
// --partition 0 --offset <the last 10>`: it fails unless it opens exactly
// the 10 objects that hold them), prune.Run (`kafkas3 prune --dry-run`
// cutting each partition in the middle: it fails unless every watermark
// is the middle offset and no data object is opened; a dry run) and the restore's
// plan (restore.Restorer.Plan; it needs no broker) twice: "restore.Plan"
// as `kafkas3 source` plans (one read per object: the index and what the
// store says of each object, no object read) and "restore.Plan(proof)" as
// `--dry-run` and `--prove-first` plan (every object read). Heap is HeapInuse sampled every 20 ms, less the
// HeapInuse after a GC before the step (the store and its archive), so it
// is the step's own, garbage not yet collected included; "retained" is
// what stays after a GC with the step's result (index, report, plan)
// still referenced.
//
// TestSmall runs 2,000 objects without latency in `make test`. The full
// simulation runs only as a benchmark:
//
//	KAFKAS3_SIM_OBJECTS=100000 go test -count=1 -run '^$' -bench BenchmarkArchive -benchtime 1x -timeout 60m ./internal/scale
//
// KAFKAS3_SIM_OBJECTS (default 1,000,000), KAFKAS3_SIM_PARTITIONS (default
// 100) and KAFKAS3_SIM_LATENCY_MS (default 20) size it;
// KAFKAS3_SIM_STEPS (for example "index.Load,verify.Run") runs only the
// steps named; -short caps it at 10,000 objects. The figures are in BENCHMARKS.md, "Archive of 10^6
// objects, simulated".
//
// BenchmarkCompacted (compacted_test.go) plans, the same way, one
// partition whose offsets have holes: a compacted one (every record a
// run of its own) and a transactional one (runs of 10 records, each
// followed by its commit marker), KAFKAS3_SIM_RUNS runs (default
// 1,000,000) in objects of 1,000 records.
package scale
