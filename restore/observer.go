package restore

// Observer
//
// Config.Observer (observer.go; package metrics implements it) is told what
// a restore does, never per record: each partition stream resolves its
// StreamObserver once (newStream) and reports the acknowledged records with
// its progress reports, each object counted in Summary.Bytes (covered) and
// each failed or misplaced record; retry reports each retry.

// Observer is told what a restore does, for metrics (package metrics
// implements it). Config.Observer nil means none. Its methods are called
// from the restore's goroutines at once; none is called per record.
type Observer interface {
	// Stream is called when the restore of a target partition starts (per
	// pass); the returned StreamObserver gets its events, so it resolves
	// its labels once.
	Stream(topic string, partition int32) StreamObserver
	// Retry is called before each retry of a transient cluster error of an
	// admin step (kind RetryCluster) and, in follow mode, before a pass
	// that failed on a dependency is run again (its name: broker, store,
	// registry).
	Retry(kind string)
}

// StreamObserver gets the events of one target partition's restore.
type StreamObserver interface {
	// Produced adds records acknowledged by Kafka (every progressEvery
	// records and at the end), as Summary.Records counts them.
	Produced(records int64)
	// Restored counts an archived value object restored or found restored
	// and its listed size, once per process, as Summary.Bytes counts it.
	Restored(bytes int64)
	// Failed is called when a record could not be produced (kind
	// ErrorProduce) or landed where another writer's record is
	// (ErrorForeignWrite).
	Failed(kind string)
}

// The kinds of Observer.Retry and StreamObserver.Failed.
const (
	RetryCluster      = "cluster"
	ErrorProduce      = "produce"
	ErrorForeignWrite = "foreign_write"
)

// nopObserver is the Observer of a Config without one.
type nopObserver struct{}

func (nopObserver) Stream(string, int32) StreamObserver { return nopObserver{} }
func (nopObserver) Retry(string)                        {}
func (nopObserver) Produced(int64)                      {}
func (nopObserver) Restored(int64)                      {}
func (nopObserver) Failed(string)                       {}

// observer is Config.Observer, or one that does nothing.
func (r *Restorer) observer() Observer {
	if r.cfg.Observer == nil {
		return nopObserver{}
	}
	return r.cfg.Observer
}
