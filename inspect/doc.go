// Package inspect summarises an archive per topic and partition without
// Kafka and without reading a data object: it is what `kafkas3 ls` runs.
//
//	parts, err := inspect.List(ctx, inspect.Config{Keys: keys, IndexPrefix: index.DefaultPrefix, Bucket: time.Hour}, store)
//	for _, p := range parts { fmt.Println(p.Topic, p.Partition, p.Records, p.Problems) }
//
// # With the archive index
//
// List reads the index one partition at a time (index.EachPartition: each
// partition's checkpoints and the log after them, a few partitions at
// once) and keeps of each partition only its Partition: the offsets the
// live entries hold (first, last, count), the offsets the index accounts
// for ([From, Commit-1], index.Analyze, the coverage `kafkas3 verify`
// reports), the first and last record timestamps (the entries' min_ts and
// max_ts), the objects and their bytes, the formats of the value objects
// (their extensions) and their .keys and .headers parts, whether they
// hold envelopes, when the index was last written (Index.Written: the
// newest index object or checkpoint the load listed) and the problems in
// one word each: "gaps" (offsets no entry accounts for), "lost" (offsets
// Kafka deleted before the sink read them), "overlaps" (offsets held
// by two objects) and "pruned" (kafkas3 prune deleted the offsets below
// the partition's watermark, Partition.PrunedBelow). With Config.Bucket it also counts the records and
// bytes per hour or day (Timeline): an entry's records and bytes are
// spread evenly over the buckets its [min_ts, max_ts] meets, so a
// timeline is exact for objects within one bucket and an even estimate
// for the others. Memory is a few partitions of the index and, per
// partition, its summary and buckets: never a KiB per object.
//
// An entry's times are its records' timestamps as Kafka gave them to the
// sink; entries of `kafkas3 index rebuild --from-objects` for objects
// without envelopes carry none (min_ts and max_ts both 0): they count as
// records without a time (Partition.Untimed) and in no bucket.
//
// # Without an index
//
// A topic of topics.dir without any index object (Confluent's connector,
// kafkas3.index.enabled=false) is listed instead (one listing request
// per 1,000 objects; its topic folders are found with one delimiter
// listing when no topics are given): objects, bytes, formats, the
// offsets their names start at, and the newest object's modification
// time. Records, time range and problems are unknown there
// (Partition.Indexed false); nothing is read.
package inspect
