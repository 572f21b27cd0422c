// Package e2e holds the end-to-end integration tests of the kafkas3 binary:
// `kafkas3 sink` built once per test process and run as a subprocess against
// a real Apache Kafka broker and a real versitygw S3 server (internal/testbed),
// with the results checked through the S3 API and by independent clients
// (the aws CLI, kcat, gzip, zstd, pyarrow, fastavro, DuckDB). The tests
// carry the build tag integration and their names contain Integration;
// there is no non-test code.
package e2e
