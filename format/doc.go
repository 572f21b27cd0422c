// Package format owns the record formats of archive objects: the Record type
// shared by the sink and the source, writers and readers for each format
// (bytes, JSON, and later Avro and Parquet), and compression wrappers.
// It does no I/O of its own beyond the io.Writer and io.Reader it is given.
package format
