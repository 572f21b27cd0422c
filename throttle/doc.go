// Package throttle paces work to a rate: a token bucket per unit (bytes,
// records) shared by every goroutine of one process. `kafkas3 source
// --max-bytes-per-sec --max-records-per-sec` hands each record to the
// producer only once both buckets allow it, so a restore into a live
// cluster stays under the rates its operators chose, across all its
// partitions at once.
//
// A Limiter never refuses work: a record larger than a bucket's burst
// takes the bucket below zero and the next record waits until it has
// refilled, so the long-run rate holds for any record size. The burst is
// a tenth of a second of the rate (at least one unit), so the rate holds
// over short windows too. The clock and the sleep are the Limiter's
// (Config.Now, Config.Sleep), for tests.
package throttle
