package restore

import (
	"sync/atomic"

	"github.com/kafkas3/kafkas3/format"
)

// Keeping what the proof read. The plan's proof reads every object
// completely (modeProve), and to produce an object the stream reads it
// completely again (loadObject). For the first object of each partition,
// the one its stream produces first, the proof's read can serve both: when
// the records it decoded are exactly what the restore produces (no typed
// value, whose restore frames it for the target registry, and no
// Config.KeyEncoder, whose proof only measures keys) and they fit in
// memory, they are kept, and the stream produces them without reading the
// object again. They are the records the proof checked, from the same
// read, so the check that the object did not change since the plan
// (record count and SHA-256) holds by construction. Kept records count in
// the restore's memBudget and take at most half of it (keepBudget), so the
// objects loaded while they wait keep room; an object that does not fit is
// not kept (nothing of it spills) and is read again when produced. Only
// Run keeps (Restorer.keepProofs; not a dry run, not Plan alone), and it
// releases every kept object its pass did not produce.

// keptObject holds the records an object's proof kept until its stream
// takes them, or the pass ends; whichever comes first gets them.
type keptObject struct {
	buf atomic.Pointer[recordBuffer]
}

// take returns the kept records and leaves none, or nil.
func (k *keptObject) take() *recordBuffer {
	if k == nil {
		return nil
	}
	return k.buf.Swap(nil)
}

// release gives back the records nobody took.
func (k *keptObject) release() {
	if b := k.take(); b != nil {
		b.close()
	}
}

// markKept chooses the objects whose proof read is kept: the first object
// of each partition (its stream produces it first), when the restore keeps.
func (r *Restorer) markKept(plan *Plan) {
	if !r.keepProofs {
		return
	}
	for ti := range plan.Topics {
		for pi := range plan.Topics[ti].Parts {
			if objs := plan.Topics[ti].Parts[pi].Objects; len(objs) > 0 && !objs[0].unread {
				objs[0].kept = &keptObject{}
			}
		}
	}
}

// releaseKept gives back the kept records of plan that no stream took.
func releaseKept(plan *Plan) {
	if plan == nil {
		return
	}
	for _, o := range plan.objects() {
		o.kept.release()
	}
}

// keeper collects the records of one proof read for its keptObject, until
// one does not qualify or does not fit.
type keeper struct {
	buf *recordBuffer // nil: not keeping
}

// newKeeper starts keeping the proof read of o, if o is marked for it.
func (r *Restorer) newKeeper(o *Object) *keeper {
	if o.kept == nil || r.cfg.KeyEncoder != nil {
		return &keeper{}
	}
	return &keeper{buf: newRecordBuffer(r.cfg.SpillBytes, r.cfg.TempDir, r.keepBudget)}
}

// keeping reports whether k still keeps the records it is given; the
// proof reads the values of an object nobody keeps without copying them
// (readObject).
func (k *keeper) keeping() bool { return k.buf != nil }

// add keeps rec, or stops keeping when rec is typed (its restore differs
// from its proof) or does not fit in memory.
func (k *keeper) add(rec *format.Record) error {
	if k.buf == nil {
		return nil
	}
	if rec.ValueTyped != nil && rec.ValueTyped.Schema != nil {
		k.buf.close()
		k.buf = nil
		return nil
	}
	dropTyped(rec) // a schemaless decoded form is not produced either
	if !k.buf.keep(rec) {
		k.buf.close()
		k.buf = nil
	}
	return nil
}

// finish hands the kept records to o when the read succeeded and kept
// them all, and releases them otherwise.
func (k *keeper) finish(o *Object, err error) {
	if k.buf == nil {
		return
	}
	if err == nil {
		err = k.buf.rewind()
	}
	if err != nil {
		k.buf.close()
		return
	}
	o.kept.buf.Store(k.buf)
}

// splitKept sorts jobs for runJobs, each group in its order: the
// partitions that read, which take one of Config.Parallelism places (an
// object again: download and decode it before producing it; or the
// target's last records, to verify a resumed partition with a consumer of
// its own), and those whose stream produces only records the proof kept
// and reads nothing, which need no place. The order of the records within
// each partition is unchanged.
func (r *Restorer) splitKept(jobs []job) (reading, keptOnly []job) {
	for _, j := range jobs {
		if r.readsAgain(j) || j.verifies() {
			reading = append(reading, j)
		} else {
			keptOnly = append(keptOnly, j)
		}
	}
	return reading, keptOnly
}

// readsAgain tells whether job j's stream loads an object its proof did not
// keep (stream.loadObject reads it again).
func (r *Restorer) readsAgain(j job) bool {
	for _, i := range loadOrder(j.part.segments, j.skipUnread(int64(r.cfg.VerifyRecords))) {
		if k := j.part.Objects[i].kept; k == nil || k.buf.Load() == nil {
			return true
		}
	}
	return false
}
