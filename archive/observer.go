package archive

import (
	"time"

	"github.com/kafkas3/kafkas3/outage"
)

// Observer is told what the sink does, for metrics and the interval log
// line (package metrics implements it). Config.Observer nil means none. Its
// methods are called from the sink's goroutines at once; none is called
// per record: Partition once per assigned partition (whose
// PartitionObserver then resolves its labels once), the others per fetched
// batch, per completed object or per failure.
type Observer interface {
	// Partition is called when a session starts archiving a partition (at
	// each assignment, also after a resumed session); the returned
	// PartitionObserver gets that partition's events until Released.
	Partition(topic string, partition int32) PartitionObserver
	// Retry is called when a session failed with a transient error of the
	// dependency kind (ErrorBroker, ErrorStore, ErrorRegistry) and the
	// sink resumes from the committed offsets after a backoff.
	Retry(kind string)
	// Error is called for each error of kind: a failed session, by the
	// dependency that failed (ErrorBroker, ErrorStore, ErrorRegistry) or
	// ErrorOther, a fetch error the client reported (ErrorFetch), a bad
	// record skipped under errors.tolerance=all (ErrorBadRecord, each
	// offset once per run, as Summary.BadRecords).
	Error(kind string)
}

// PartitionObserver gets the events of one partition of a session.
type PartitionObserver interface {
	// Fetched is called for each fetched batch of the partition given to
	// its worker: records is how many, lag the high watermark minus the
	// offset after the batch's last record (the records still to fetch),
	// span its offsets and its first record's timestamp.
	Fetched(records int, lag int64, span BatchSpan)
	// Completed is called with the objects of the partition complete in
	// the store (before their offset is committed), as Summary counts
	// them.
	Completed(files []FileStats)
	// Archived is called when every record of the partition before
	// offset next is archived (its offset becomes committable).
	Archived(next int64)
	// Lost is called with how many offsets of the partition were found
	// lost before archiving (deleted from Kafka before the sink read
	// them), each offset once per run, as Summary.Lost counts them.
	Lost(records int64)
	// Released is called once when the partition's worker exits
	// (revocation, the session's end).
	Released()
}

// The kinds of Observer.Retry and Observer.Error: the dependencies'
// names (health.Dep) and the others.
const (
	ErrorBroker    = string(outage.Broker)
	ErrorStore     = string(outage.Store)
	ErrorRegistry  = string(outage.Registry)
	ErrorFetch     = "fetch"
	ErrorBadRecord = "bad_record"
	ErrorOther     = "other"
)

// nopObserver is the Observer of a Config without one.
type nopObserver struct{}

func (nopObserver) Partition(string, int32) PartitionObserver { return nopObserver{} }
func (nopObserver) Retry(string)                              {}
func (nopObserver) Error(string)                              {}
func (nopObserver) Fetched(int, int64, BatchSpan)             {}
func (nopObserver) Archived(int64)                            {}
func (nopObserver) Completed([]FileStats)                     {}
func (nopObserver) Lost(int64)                                {}
func (nopObserver) Released()                                 {}

// BatchSpan is what PartitionObserver.Fetched learns of a fetched batch's
// place in the partition: its first and last offsets and its first
// record's timestamp.
type BatchSpan struct {
	First, Last int64
	FirstTime   time.Time
}
