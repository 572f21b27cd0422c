// Package memlimit keeps the Go runtime's soft memory limit a fixed
// headroom above the live heap, so that a long-running process's resident
// memory follows what it holds instead of twice that (GOGC=100 lets the
// heap grow to double the live heap before collecting, and freed pages are
// returned to the system lazily; under a memory limit the collector runs
// before the limit and the scavenger returns pages to stay below it).
//
// Run polls the live heap the last collection marked and sets the limit to
// it plus the headroom; the limit never sits below the live heap, so the
// collector is never asked for the impossible. A GOMEMLIMIT in the
// environment is the user's choice and is left alone.
package memlimit
