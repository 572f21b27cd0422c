// Package archive is the sink pipeline: consume from Kafka, route records to
// one writer per assigned partition, rotate files, upload them, and commit a
// partition's offset only after every file holding its records is complete.
//
// One record's path from fetch to store reads top-down in path.go, in call
// order; the details of each stop live in the file of its stage:
//
//  1. session.poll fetches (fetch.go decides when the loop ends), and
//     session.dispatch hands each partition's batch, within the fetch
//     budget and copied out of the fetch response unless its record batch
//     was compressed (detach, budget.go), to its worker.
//  2. worker.run (worker.go) receives it with the partition's log start
//     offset; worker.batch notes the offsets it shows were lost before
//     archiving (worker.lostBefore, lost.go), then worker.process gives
//     each record, in offset order up to the --once target, to
//     worker.archive. A control record is only consumed
//     (partitionWriter.skip, writer.go).
//  3. toFormat, then worker.convert: the key and value converters;
//     convertError (errors.go) sorts their failures.
//  4. partitionWriter.write, whose steps are in writer.go in its order:
//     rotation on record time (rotate.go), behavior.on.null.values
//     (nullValue), the .keys and .headers records (partRecords, parts.go),
//     rotation on a switch between tombstones and other records, the
//     partitioner (place: a record it cannot place, partition.ErrBadRecord,
//     is a bad record), rotation before a new folder when
//     kafkas3.max.open.partitions are open and, with a time-based
//     partitioner, on rotate.interval.ms in its extractor's time and before
//     a later time bucket (rotateOnPlace; a late record goes into its own
//     bucket's open file without rotating), the file (fileFor: the schema decision
//     applySchema in schema.go, rotation on a new key schema, open in
//     objects.go), the value object (writeValue), the parallel objects
//     (writeParts, parts.go) and flush.size (added). A bad record goes
//     back to worker.archive, which applies errors.tolerance (badRecord,
//     dlq.go).
//  5. partitionWriter.rotate closes the files' format writers (closeFile,
//     objects.go), prepares their archive index object (putIndex,
//     indexwriter.go) and hands both to an upload (upload.go), which
//     commits the objects and then writes the index object off the
//     worker's path, while the worker goes on with the next records. A
//     partition's uploads run one at a time in rotation order, at most
//     MaxUploads across the session; when one is done (worker.run takes
//     its result, or the next rotation or flush waits for it) its offset
//     is pending. An offset that becomes committable without a rotation
//     while an upload runs (setPending) waits for it.
//  6. worker.publish counts the completed objects (tally.go), produces
//     queued bad records to the dead letter queue (flushDLQ, dlq.go), then
//     hands the pending offset to session.setCommittable; commitLoop and
//     commitNow commit it (commit.go keeps the pending and committed
//     offsets).
//
// A worker gets what it needs at construction (workerDeps): the sink's
// config, store, logger and tally, and the session's context, fetch
// budget, DLQ producer and callbacks.
//
// With Config.IndexPrefix set, each rotation of a partition also writes one
// archive index object (package index) after its objects and before its
// offset becomes committable: the objects' keys, sizes, CRC32C (and
// SHA-256 with Config.IndexSHA256; hashed while writing) and the ETag the
// store answered when the upload committed each (writeIndex: the upload
// encodes the entries only then, on its own copy; the worker's last
// entries take the ETags when it takes the upload's result), their
// offsets as runs, record counts, min/max timestamps, and the span [from,
// commit) of offsets the sink read. Every offset the sink commits then has
// an index object with that commit; offsets that are only skipped (control
// records, ignored nulls, bad records) after the last rotation are
// committed by an index object that restamps the last rotation's entries
// with the new commit (at flush, and every flush.size such offsets; a
// restamp first takes the running upload's result, so the restamped
// entries keep their ETags). Rotation depends only on the records, and a
// store with MD5 ETags gives the same bytes the same ETag, so a replay
// after a crash rewrites identical index bytes (under SSE-KMS or SSE-C the
// ETag is no digest, and a replay records the new one). A store failure writing the index
// is handled like any store failure: nothing past the previous commit is
// committed and the sink resumes from there.
//
// Records lost before archiving (lost.go): when a fetched batch starts
// past the offset the partition's writer expects next (the committed
// offset it started from, then the offset after the last one consumed)
// and the fetch response's log start offset is above that offset,
// retention or DeleteRecords deleted the offsets from there up to the log
// start (or the batch's first offset, or the --once target, whichever is
// lowest) before the sink read them; franz-go resumed at the log start
// (ConsumeResetOffset AtStart, also for an out-of-range fetch while
// consuming). The worker logs one warning naming topic, partition, range
// and count, counts each offset once per run (tally.countLost:
// Summary.Lost, PartitionObserver.Lost, even when a replay after a store
// failure finds the range again) and hands the run to the writer
// (partitionWriter.lose), which consumes it like skipped offsets: every
// entry of the partition's next index object (a rotation's, or a restamp's
// at flush) carries it in its lost runs, clipped to the entry's span
// (lostOf), and the offset past it is committed only after that object,
// so a crash before finds the same loss again. Nothing is judged while
// the committed offset is unknown. A loss with no record after it shows
// in no fetch: --once finds it in captureTargets (a committed offset
// below the log start, which is at or past the end offset: lostOnly) and
// gives the worker a batch of only the log start, which records the loss
// and commits the log start; a sink without --once finds it with the next
// record. Without an index object at the committed offset to restamp and
// no record after the loss, no entry can carry it: it is committed with
// a warning (dropLost), logged and counted only.
//
// With Config.IndexPrefix set, the schemas that Confluent-framed keys and
// values name are recorded too (schemarec.go): a rotation's upload writes
// the schema object of each id its records name (index.SchemaKey, fetched
// once per id through Config.Schemas) before its index object.
//
// With Config.IndexPrefix and Config.SnapshotInterval set, a snapshotter
// (snapshots.go, its own client outside the group) writes a group offset
// snapshot (index.Snapshot) of every archived topic each interval and,
// with Once, after the run's final commit: the committed offsets of the
// consumer groups on the topic (Config.GroupsRegex narrows them; the
// sink's own group, restore marker groups kafkas3-restore-*, share and
// connect groups are left out), read first, then the partitions' last
// stable offsets, stamped with the wall time after both. A snapshot that
// records the same offsets as the writer's previous one for the topic is
// not written. A snapshot failure is a warning and archiving goes on;
// missing ACLs (GROUP_AUTHORIZATION_FAILED, a refused group listing) are
// warned about once per run, and the groups concerned are left out.
//
// With Config.IndexPrefix set, the sink also records each archived topic's
// description (index.Topic: partition count, replication factor, the
// configs whose DescribeConfigs source is DYNAMIC_TOPIC_CONFIG) under
// "<prefix>topics/", at the start of every session (before --once decides
// whether there is anything to archive) and, without --once, every
// Config.TopicCheckInterval, writing only descriptions that differ from
// the latest one in the store (topics.go). Missing ACLs give one warning,
// any other failure a warning per check; archiving never stops for it.
//
// With Config.Envelope (store.envelope) the format writes each record whole
// (format.NewEnvelope); the partition writer then treats null values as
// ordinary records (behavior.on.null.values is not consulted), lets a null
// value join any open file, rotates on a switch between values with and
// without a schema, and marks the index entries envelope=true
// (partitionWriter.isTombstone in writer.go, decideSchema in schema.go).
//
// Topic identity (identity.go): with Config.IndexPrefix set, each
// session's prepare compares every archived topic's Kafka id with the one
// the archive records (the latest topic description), and the group's
// committed offsets with the end offsets. A topic deleted and created
// again (another id; in an archive without ids, a committed offset above
// the end offset) is stopped, *RecreatedError (left out of the
// subscription and the --once targets; Run returns the errors at its end,
// the other topics go on), or with Config.NewGeneration archived as the
// next generation: the group's offsets of the topic move to the new
// topic's start, the generation's description is written, and its workers
// get a config whose topics.dir and index prefix are the generation's
// (index.GenerationTopicsDir, index.GenerationPrefix; genConfig). Offsets
// that go back under the same id stop the topic in either mode. Between
// starts, a new id seen at an assignment (changedIdentity) or a topic
// check, a fetch answering UNKNOWN_TOPIC_ID, or a worker whose offsets go
// back (worker.inOrder, wentBackError) ends the session with errRecheck,
// and runSessions starts the next one, which checks again. The index
// entries record the topic id.
//
// No archived object is overwritten except by the sink's own replay
// (guard.go): the first object a partition writer creates loads, with one
// listing after the span's first offset (s3store.ListAfter), the index
// objects that can name the keys it may write; a key named by another
// writer, topic id or first offset is refused with an *OverwriteError
// before the object is created, and one named by an entry without a topic
// id (an older kafkas3's) may only be replaced by the same bytes
// (checkBytes, before the upload). On a bucket with Object Lock the S3
// store also refuses other bytes under any stored key (s3store's
// *RewriteError, a permanent failure: failedDep) and skips the same bytes;
// data objects are created with s3store.Data (s3.storage.class).
//
// Outages of the brokers, the store and the Schema Registry are ridden out
// (package outage sorts the errors, paces the retries and tracks since
// when each dependency is down; Config.Health receives the states). A
// transient fetch or group error (fetchError) marks the brokers down and
// the poll goes on while franz-go rejoins: the lost partitions' workers
// stop (open files aborted) and the reassigned ones start from the
// committed offsets; an assignment, a commit answered or records fetched
// mark them up. A transient store, registry or broker failure that ends a
// session (failedDep: a *StoreError, a *ConverterError, a *KafkaError)
// is retried by runSessions after a capped backoff with jitter; each
// session first checks the store and the brokers (check). With Once, the
// run gives up with an *outage.UnreachableError naming the dependency
// that has been down for Config.OnceTimeout (watchOnce, runSessions),
// counted from the first attempt. A snapshot or topic description that
// fails transiently reports the store or brokers down (outageOf).
//
// Config.Observer (observer.go; package metrics implements it) is told what
// the sink does, never per record: each worker resolves its partition's
// PartitionObserver once (newWorker), dispatch reports each fetched batch
// with the partition's lag, worker.reportLost the offsets lost before
// archiving, worker.publish the completed objects,
// runSessions the failures and retries, fetchError the fetch errors and
// the tally each bad record counted.
package archive
