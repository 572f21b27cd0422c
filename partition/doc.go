// Package partition owns object key naming: partitioners that encode a
// record's partition path, and the pure functions that build and parse the
// Confluent object key layout. It does no I/O.
//
// A key is
//
//	<topics.dir>/<topic>/<encoded partition>/<topic>+<partition>+<offset><ext>
//
// with "/" being directory.delim and "+" file.delim (both configurable,
// see KeyConfig). KeyConfig.ObjectKey builds it, KeyConfig.ParseObjectKey
// takes it apart, and the two round-trip for every valid name. The encoded
// partition comes from a Partitioner: DefaultPartitioner gives
// "partition=<n>"; field and time-based partitioners may give several
// segments joined by directory.delim ("year=2024/month=01/day=02").
//
// Time-based layouts print path.format, a Joda-Time pattern, exactly as
// Confluent's TimeBasedPartitioner does: ParsePathFormat and
// PathFormat.Format (Joda's letters, not java.time's: YYYY is the calendar
// year), and TimeBucket for the bucket start of partition.duration.ms,
// DST changes included. A test compares both with Joda-Time itself on the
// test bed's JVM.
//
// Partitioners returns the registry of partitioners (partitioner.class):
// each Kind with its short name, other names and Confluent class name,
// its constructor (Spec.New, taking the typed Config of every partitioner
// key) and the keys it requires (Spec.Requires). Lookup and New read it.
// DefaultPartitioner, FieldPartitioner (NewField), TimeBasedPartitioner
// (NewTimeBased) and its DailyPartitioner and HourlyPartitioner presets
// (NewDaily, NewHourly) can all be selected. The time-based ones
// implement Timed, which the sink asks for a record's bucket and time;
// the default one implements PerPartition, so the sink encodes a Kafka
// partition's folder once instead of for every record.
// Encode errors that the record causes wrap ErrBadRecord. The mechanism
// is internal/registry, shared with format.Formats and
// convert.Converters.
//
// Defaults are not applied implicitly: DefaultKeyConfig returns Confluent's,
// and the caller (the config layer) starts from them.
package partition
