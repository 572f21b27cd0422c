// Package restore is the source pipeline: list an archive, plan per
// partition, read objects in offset order and produce them to Kafka with the
// idempotent producer, resuming after a crash without duplicates.
//
// # Use
//
//	r, err := restore.New(cfg, store, log)
//	plan, err := r.Plan(ctx)          // store only; plan.WriteText for --dry-run
//	err = r.Check(plan)               // what would stop the run before anything is produced
//	sum, err := r.Run(ctx, progress)  // progress: restore.NewRenderer(w, isTTY, 10*time.Second) or nil
//	fmt.Println(sum)                  // one line
//
// # The design in one page
//
// A restore is a plan and a run. Both read only what they must: the
// archive index (package index) says which objects hold which offsets, so
// with it the plan reads no object and the run reads each object once.
//
// The plan (Plan, plan.go) lists the chosen topic folders (list.go: every
// layout, folders of any depth, skipped keys counted by reason; objects
// in GLACIER or DEEP_ARCHIVE not restored stop it, named), then
// makes each Kafka partition's plan on its own, a few at once
// (partplan.go): it reads that partition's archive index (indexed.go,
// index.EachPartition: its checkpoints and the log after them; in follow
// mode an index.Tail), pairs .keys/.headers twins with their value
// object, makes tombstone objects, and gives every object its facts: its
// records' count and source offsets, and what else the checks need. Where they come from is the one
// choice of the package:
//
//   - One read per object (oneread.go; Config.ReadOnce, kafkas3 source's
//     default): an indexed object listed as its entry says (every part,
//     at its size, with the ETag the entry records or the CRC32C the
//     store keeps) takes the entry's word. It is read once, when it is
//     produced, and checked against the entry then.
//   - The proof (proof.go; --prove-first, --dry-run, an archive without
//     index, behavior.on.error ignore or log, --allow-gaps, --until): the
//     plan reads every object in full before anything is produced and
//     checks it against its entry, if any. Production reads it again and
//     checks that it did not change (load.go).
//
// Whether an object matches an entry has one rule (entryMatch, match.go),
// whatever is known of the object: its listing, the store's word without
// a download, or a read. Once the plan is made, each object keeps only
// what production checks of its entry (entryChecks, checks.go) and the
// partition's index is let go: the plan never holds the whole index, and
// holds about 285 bytes per object once made (BENCHMARKS.md).
//
// From the objects' offsets the plan builds each partition's record
// stream (claim.go): every source offset once, in offset order, across
// overlapping objects and folders (order.go: the index's runs or
// envelopes show the order; objects of several folders without either
// are refused unless --allow-unknown-order). Offsets no entry or object
// accounts for are gaps, objects that are missing or do not match their
// entry are damaged, offsets Kafka deleted before the sink read them are
// lost (counted, never a stop). With --until each stream is cut at an
// offset (until.go). Check refuses, before anything is produced, gaps and
// damage (unless allowed), records a target would refuse (limits.go:
// max.message.bytes; null keys for a compacting target) and unknown
// order.
//
// The run (Run, restore.go) then, per pass: checks or creates the target
// topics as the archive describes them (topics.go), reads each target
// partition's marker (marker.go) and restores each partition as one
// stream (partition.go), Config.Parallelism streams at a time. A stream
// loads an object in full into a record buffer (load.go, spill.go: up to
// Config.SpillBytes in memory, the rest in a temporary file), checks it,
// and only then hands its first record to the producer; the next object
// is prefetched meanwhile (prefetch.go). Typed values (Avro, Parquet) are
// framed for the target's Schema Registry (typed.go), other framed keys
// and values get the target's ids of the schemas the archive records,
// registered there before anything is produced (schemas.go); envelopes give
// every archived property back (envelope.go).
//
// # Exactly once
//
// The state lives on the target cluster (partition.go): a marker group
// "kafkas3-restore-<target>" holds, per partition, the end offset E0
// before the restore first produced to it. The stream is a function of the
// archive, so what landed is always a prefix of it: a re-run skips the
// first E-E0 records (whole objects by their counts, without reading
// them), compares the last few with the target, and produces the rest.
// Every acknowledged record must land at E0 plus its index; anything else
// stops the restore naming topic, partition and offsets. Damage found
// while producing (one read) stops every stream at an object boundary,
// nothing of the damaged object produced; a re-run after the repair
// resumes exactly. Config.Repartition fans a stream out over another
// partition count: its transactions carry its position (txn.go).
//
// # What else a run does
//
//   - Consumer groups (groups.go, Config.RestoreGroups): the sink's offset
//     snapshots, translated through the record streams, committed after
//     the pass; groups with members are refused.
//   - Follow mode (inflight.go, Config.Follow): a pass every PollInterval
//     restores what is new (a rotation still being committed waits) and
//     checks the streams only grew (streamSummary); its plans read an
//     index.Tail per topic, and leave out what lies below each
//     partition's mark, the end of what a completed pass restored whole
//     (prune.go), so a follower keeps a few KiB per partition.
//   - Outages (outage.go, retry.go): transient failures are retried.
//   - Shards, renames, progress, the summary, metrics (observer.go), an
//     erasure list (erase.go), filters (filter.go), records older than
//     the target's retention (expired.go), a rate limit, and objects
//     below a `kafkas3 prune` watermark skipped (dropPruned).
//
// # Words
//
//   - object: a value (or tombstone) object with its .keys and .headers
//     twins, one Object of the plan.
//   - entry: an object's index entry; the live entry of a key is the one
//     with the highest commit.
//   - match: an object matches an entry when each of its parts is the
//     entry's part of that name (entryMatch).
//   - facts: what is known of an object's records: count, offsets,
//     checksums, largest record, records without a key, timestamps
//     against --until (objectFacts). A read computes them; with one read
//     the plan takes them from the entry (entryFacts), "the entry's word".
//   - proof, prove, proved: the whole-archive read before anything is
//     produced (proof.go, modeProve, --prove-first), nothing else, in
//     names, flags, the plan, the log and the docs alike.
//   - complete, unknown: what the plan shows of a partition before
//     anything is produced, with or without the proof. Complete
//     (PartitionPlan.Complete, the plan's COMPLETE column): no gap, no
//     damaged object, and offsets from the archive index; without the
//     index whether a partition is complete is unknown. Unknown order
//     (OrderUnknown, --allow-unknown-order): objects of several folders
//     whose records carry no offsets.
//   - stream: a partition's records in offset order, each source offset
//     once (PartitionPlan.segments); a pass restores a prefix of it.
//   - keep: no term of the package; the records of a loaded object are
//     held in a recordBuffer (spill.go).
//   - mark: in follow mode, where a partition's restored stream ends
//     (pruneMark); a plan from it leaves out what lies below.
//
// # Where each topic is described
//
// Each file starts with what it does: the listing and tombstones
// (list.go), the plan one partition at a time (partplan.go) and what it
// reads at once (reads.go), follow mode's marks (prune.go), target topics (topics.go), the proof (proof.go), one read per
// object (oneread.go), repartitioning (repartition.go, txn.go), matching an entry (match.go), no partial objects
// (load.go), record order across folders (order.go), record sizes and
// transient errors (limits.go), typed archives, keys and headers
// (typed.go), schema ids (schemas.go), envelopes (envelope.go), point in time (until.go), exactly
// once and its limits (partition.go), consumer groups (groups.go), follow
// mode (inflight.go), outages (outage.go), the observer (observer.go) and
// reading records without Kafka for `kafkas3 cat` (records.go, Records).
// docs/source.md's restore runbooks and "What a restore checks before it
// writes" say the same for users.
package restore
