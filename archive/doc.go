// Package archive is the sink pipeline: consume from Kafka, route records to
// one writer per assigned partition, rotate files, upload them, and commit a
// partition's offset only after every file holding its records is complete.
package archive
