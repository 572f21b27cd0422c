// Package partition owns object key naming: partitioners that encode a
// record's partition path, and the pure functions that build and parse the
// Confluent object key layout. It does no I/O.
package partition
