// Package restore is the source pipeline: list an archive, plan per
// partition, read objects in offset order and produce them to Kafka with the
// idempotent producer, resuming after a crash without duplicates.
package restore
