// Package bench holds kafkas3's benchmarks against the test bed (real Apache
// Kafka and versitygw on loopback). They live in files with the build tag
// `integration` and run with `make bench`:
//
//	go test -count=1 -tags integration -timeout 60m -run '^$' -bench . -benchtime 1x ./internal/bench/...
//
// BenchmarkKafkas3 measures, side by side in one run on one broker:
//
//   - the broker's raw consume rate with a bare franz-go consumer;
//   - the limit baselines (limit_integration_test.go): a bare pipeline in
//     one process, franz-go consuming the topic and aws-sdk-go-v2 uploading
//     the same bytes, unformatted, in objects of the sink's size with the
//     sink's part size and upload concurrency; and the same pipeline writing
//     files to a local directory;
//   - `kafkas3 sink --once` of the same topic in bytes, in JSON (no
//     compression) and in JSON+gzip to versitygw, and in bytes to a local
//     directory, with the ratio sink/raw
//     and, for every sink row, its throughput and CPU seconds per GB as
//     ratios to the limit baseline run alongside (the local row's to the
//     file write baseline);
//   - `kafkas3 sink --once` in JSON+gzip of a random-letter JSON data set;
//     the objects of partition 0 of both JSON+gzip runs are compressed
//     again as one compress/gzip stream each at the same level, and the
//     benchmark fails when the sink's are more than 3% larger;
//   - `kafkas3 sink --once` in JSON+zstd (s3.compression.type=zstd, level
//     -1) of the main and the random-letter data sets, each noting its
//     stored bytes against the JSON+gzip row of the same data (marked when
//     larger: zstd's fast levels are larger than gzip level 6 on the
//     vocabulary data), and failing when its throughput is below 0.6 of
//     the limit baseline's;
//   - the sink's peak RSS with 200 partitions receiving data at once and
//     s3.part.size=5 MiB, in bytes, JSON+gzip and JSON+zstd, failing when
//     it reaches 200 MiB (issue 20, item 7);
//   - the same with 1,000 partitions (256 KiB each, one object per
//     partition open for the whole run), bytes, JSON+gzip and JSON+zstd,
//     failing when the peak RSS reaches 300 MiB;
//   - `kafkas3 source --create-topics` of the bytes and JSON+gzip archives
//     and of the Avro topic's Avro and Parquet archives into new topics
//     against a bare franz-go idempotent producer writing the main records
//     to a new topic (acks=all, a 128 MiB buffer limit, the restore's until
//     it took 32 MiB), run before and after: every restore row reports its
//     throughput and CPU seconds per GB as ratios to the mean of the
//     producer runs;
//   - over HTTPS (https_integration_test.go): a second versitygw serving a
//     self-signed ECDSA certificate (testbed.Options.S3TLS), the limit
//     baseline to it before and after `kafkas3 sink --once` in bytes to
//     it (kafkas3 trusting the certificate through AWS_CA_BUNDLE, the
//     baseline through the same root CA), failing when the sink moves
//     less than 0.85 of the HTTPS baseline's MB/s or uses more than 1.2
//     of its CPU seconds per GB (issue 20, item 2): over TLS the part
//     bodies cannot go to the socket with sendfile;
//   - the archive index's cost: `kafkas3 sink --once` in bytes with
//     kafkas3.index.enabled true and false, at flush.size 50,000 and 1,000,
//     alternating, through a reverse proxy in front of versitygw that counts
//     the requests by method (extra PUTs, and the throughput ratio with and
//     without the index).
//
// Before anything is measured, one consumer group joins, consumes and
// commits on a one-record topic (warmgroup_integration_test.go), so the
// fresh broker's one-time creation of __consumer_offsets and first run of
// its group coordinator fall on no measured row (they cost the first sink
// run 1.7 s of wall time and 0.9 broker CPU s; the baselines use no group).
//
// Every measured program runs as its own process (the kafkas3 binary, or
// this test binary re-executed in a child mode), so its peak RSS and CPU time
// are its own; the CPU time the broker and versitygw used during each run is
// read from /proc.
// The results are printed as a Markdown table and, when KAFKAS3_BENCH_OUT
// names a file, written there for BENCHMARKS.md.
//
// Sizes: KAFKAS3_BENCH_BYTES sets the main data set (default 1 GiB of 1 KiB
// records in 12 partitions); KAFKAS3_BENCH_PARTITION_BYTES sets the bytes
// per partition of the 200-partition run (default 8 MiB). KAFKAS3_BENCH_ONLY=index
// runs only the load, the raw consumes, the main limit baselines and the
// index rows; KAFKAS3_BENCH_ONLY=sink the load, the raw consumes, the main
// limit baselines and the main sink rows (bytes, JSON+gzip, JSON+zstd,
// local bytes, and JSON+gzip and JSON+zstd of the letters);
// KAFKAS3_BENCH_ONLY=bytes the same without the gzip and zstd rows;
// KAFKAS3_BENCH_ONLY=zstd the same without the bytes rows; KAFKAS3_BENCH_ONLY=typed the load, the raw consumes, the main
// limit baselines, `sink json --once` without compression (in the full run
// too) and the typed rows (Avro with the null and snappy codecs and
// Parquet, from an Avro topic of KAFKAS3_BENCH_AVRO_BYTES, default 256 MiB,
// each with the vs-limit columns against that topic's own limit baseline,
// run before and after them); KAFKAS3_BENCH_ONLY=thousand only the 1,000-partition rows (256
// KiB per partition, bytes, JSON+gzip and JSON+zstd, every object open to
// the end, failing when the peak RSS reaches 300 MiB), which the full run
// ends with; KAFKAS3_BENCH_ONLY=many only the 200-partition rows (the
// load, their limit baseline, and bytes, JSON+gzip and JSON+zstd at
// s3.part.size=5 MiB, failing at 200 MiB, with
// KAFKAS3_BENCH_PARTITION_BYTES per partition).
// KAFKAS3_BENCH_ONLY=https runs the load, the raw consume, the limit
// baselines over HTTP and over HTTPS, `sink bytes --once` over HTTP and
// over HTTPS, the two baselines again in the reverse order and the raw
// consume again (httpsOnly); each sink row is compared with its own
// protocol's baselines, the HTTPS one checked as above, and the facts
// give HTTPS against HTTP for the baseline and the sink.
// KAFKAS3_BENCH_ONLY=scale runs only issue 19's archive of real size
// (scaleRows): KAFKAS3_BENCH_SCALE_OBJECTS objects (default 6,000) of 10
// JSON records of 200 B in 12 partitions, archived straight into the S3
// server, then `kafkas3 verify`, `kafkas3 source --dry-run` and a restore
// through a proxy that adds KAFKAS3_BENCH_SCALE_LATENCY (default 20ms) to
// every request and counts the requests by kind (GET of an object, LIST,
// HEAD, PUT, POST) and the most in flight at once.
// KAFKAS3_BENCH_ONLY=envelope runs the load, then rounds
// (KAFKAS3_BENCH_RESTORE_ROUNDS, default 2) of `kafkas3 sink --once` of the
// main set as bytes, JSON envelopes and Avro envelopes (store.envelope),
// then as many rounds of the restore of each archive, and gives every
// envelope row its throughput against the mean of the bytes rows of its
// kind (issue 20: at least 0.8).
// KAFKAS3_BENCH_ONLY=gzip runs the load, then rounds (as above) of
// `kafkas3 sink --once` of the main set as JSON+gzip and as bytes+gzip,
// each followed by the same values compressed in process as that format
// writes them, one goroutine per core, into nothing (compressRow: gzip's
// own ceiling); each sink row is compared with its format's compressor
// rows (issue 20: at least 0.85).
// KAFKAS3_BENCH_ONLY=restore runs the load, the load of an Avro topic of
// as many bytes (KAFKAS3_BENCH_BYTES, not KAFKAS3_BENCH_AVRO_BYTES), the
// sink runs that write the bytes, JSON+gzip, JSON+zstd, Avro (null codec)
// and Parquet (snappy) archives (not profiled;
// KAFKAS3_BENCH_RESTORE_FORMATS, e.g. "bytes,json+gzip,json+zstd",
// chooses some), and then two rounds (KAFKAS3_BENCH_RESTORE_ROUNDS sets
// how many) of a producer baseline followed by a restore of each archive,
// and a last producer baseline: producer and restore runs alternate, and
// each restore row's ratios are to the mean of the producer runs. It
// fails when a restore is under issue 20 item 6's share of the producer
// (bytes 0.9, JSON+gzip 0.7, JSON+zstd 0.85) or peaks over 256 MiB RSS.
// With KAFKAS3_BENCH_RESTORE_PROOFS=1 each restore is preceded by its
// archive's proof alone (`kafkas3 source --dry-run`: listing, index and
// every object read and checked, nothing produced); each restore's note
// says when its proof began and ended (from its JSON log) and how long it
// ran after, and the facts give, per archive, the proof's seconds against
// the producer's and the best ratio a restore can reach when it proves
// every object before it produces the first record, 1/(1+proof/produce),
// next to the measured ones. KAFKAS3_BENCH_RESTORE_BIN names another kafkas3 binary (main's,
// say): each restore is then followed by the same restore with that binary
// into another new topic, for a side-by-side comparison under the same
// load (only this tree's restores are profiled).
// KAFKAS3_BENCH_PROFILE names a directory: each sink run of bytes or JSON
// is then repeated once, unmeasured, in a child that runs the archive
// package under pprof (CPU profile, and the heap profile at the highest
// live heap), with the archive index on as in the measured run; so is each
// restore run, in a child that builds the restore config from the same
// config file with package config, as `kafkas3 source` does, and restores
// into another new topic. A child's peak RSS is its ru_maxrss, or its
// VmHWM polled from /proc when ru_maxrss is no more than the benchmark
// process's own peak (rss_integration_test.go: Linux gives an exec'd child
// the high-water RSS of the process it was vforked from).
//
// The simulated archive of 10^6 objects behind 20 ms per request (issue
// 19 item 7: index load, plain verify and the restore's plan, without the
// test bed) is package internal/scale's BenchmarkArchive.
package bench
