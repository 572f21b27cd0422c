package restore

import (
	"cmp"
	"container/heap"
	"context"
	"errors"
	"fmt"
	"slices"
	"time"

	"github.com/kafkas3/kafkas3/format"
	"github.com/kafkas3/kafkas3/index"
	"github.com/kafkas3/kafkas3/s3store"
)

// Reading records without Kafka
//
// Records reads the records of one archived topic for `kafkas3 cat`,
// each partition in offset order, with the object reader a restore uses
// (objectReader: the value object with its .keys and .headers twins,
// envelopes, tombstone objects), in modeCat: nothing goes to a registry
// and typed values stay typed for the caller to print.
//
// With the archive index it lists nothing under topics.dir: per partition
// (index.LoadPartition) it takes the live entries and opens only those
// whose offsets ([first, last]) and timestamps ([min_ts, max_ts]) can
// hold the selection, lazily, in order of their first offset: an object
// is opened when its first offset is at or below the smallest offset the
// objects already open have next (folders of one partition interleave),
// and once the next offset is past the selection, or Selection.Limit
// records matched, nothing more is opened. Records of objects without
// envelopes get the offsets of their entry's runs. Without an index it
// lists the topic's folder (every layout, as the plan does) and opens
// every object whose name's start offset is not past the selection.
//
// A record is read, decoded and handed on one at a time: what is held is
// one record per open object and what its format's reader needs.

// Selection says which records Records reads.
type Selection struct {
	Topic string
	// Partitions limits the read to these partitions; empty: every one.
	Partitions []int32
	// FirstOffset and LastOffset bound the offsets, inclusive
	// (math.MaxInt64: no end).
	FirstOffset, LastOffset int64
	// From and Until bound the timestamps, inclusive; zero: unbounded. A
	// record without a timestamp of its own (an object without the
	// envelope) is taken when its object's index entry's time range
	// meets [From, Until] (RecordsRead.UntimedKept), and left out without
	// an entry or when the entry has no times (UntimedLeft).
	From, Until time.Time
	// Filter selects by key and header (its From is not used: see From).
	Filter Filter
	// Limit stops after this many records; 0: no limit.
	Limit int64
	// Scan lists and reads the topic's objects even with an index: the
	// objects no entry describes (written before the index was enabled)
	// are then read too.
	Scan bool
}

// RecordsRead is what Records did.
type RecordsRead struct {
	// Indexed: the archive index chose the objects; otherwise the topic
	// was listed and scanned.
	Indexed bool
	// Objects counts the objects opened (a value object with its twins
	// is one), Matched the records handed to fn.
	Objects int
	Matched int64
	// Assumed counts the objects read without an index entry whose
	// records carry no offsets (no envelope): their offsets are assumed
	// consecutive from their name's start offset.
	Assumed int
	// UntimedKept and UntimedLeft count the records without a timestamp
	// of their own under From or Until: taken by their object's entry's
	// time range, or left out (no entry, or an entry without times, whose
	// object is then not opened).
	UntimedKept, UntimedLeft int64
}

// errLimit ends a read at Selection.Limit.
var errLimit = errors.New("limit reached")

// Records calls fn with each record of sel (Config.Topics must name
// sel.Topic: an archive without index is listed through them), partitions in increasing
// order, each in offset order (see "Reading records without Kafka"). The
// Restorer's Config must have no KeyEncoder or ValueEncoder (cat prints
// typed keys and values, it frames nothing). A damaged object stops it
// with an error naming the object (ErrDamagedObject).
func (r *Restorer) Records(ctx context.Context, sel Selection, fn func(*format.Record) error) (RecordsRead, error) {
	c := &catRead{r: r, sel: sel, fn: fn}
	parts, err := c.logPartitions(ctx)
	if err != nil {
		return c.res, err
	}
	if len(parts) > 0 {
		c.res.Indexed = true
		err = c.indexed(ctx, parts)
	} else {
		err = c.scan(ctx)
	}
	if errors.Is(err, errLimit) {
		err = nil
	}
	return c.res, err
}

// catRead is one Records call.
type catRead struct {
	r   *Restorer
	sel Selection
	fn  func(*format.Record) error
	res RecordsRead
}

// errFound ends a listing at its first key.
var errFound = errors.New("found")

// logPartitions returns the selected partitions that have an index: of
// Selection.Partitions, each whose index folder lists a key (one listing
// request each); else every partition of the topic's index
// (index.LogPartitions: one listing request per partition). None when
// the index is off.
func (c *catRead) logPartitions(ctx context.Context) ([]index.LogPartition, error) {
	prefix, topic := c.r.cfg.IndexPrefix, c.sel.Topic
	switch {
	case prefix == "" || c.sel.Scan:
		return nil, nil
	case len(c.sel.Partitions) == 0:
		return index.LogPartitions(ctx, c.r.store, prefix, []string{topic}, index.LoadOptions{Concurrency: c.r.readConcurrency()})
	}
	var out []index.LogPartition
	for _, p := range c.sel.Partitions {
		err := c.r.store.List(ctx, index.PartitionDir(prefix, topic, p), func(s3store.ObjectInfo) error { return errFound })
		switch {
		case errors.Is(err, errFound):
			if lp := (index.LogPartition{Topic: topic, Partition: p}); !slices.Contains(out, lp) {
				out = append(out, lp)
			}
		case err != nil:
			return nil, fmt.Errorf("list the archive index of %s partition %d: %w", topic, p, err)
		}
	}
	return out, nil
}

// wants tells whether partition p is selected.
func (c *catRead) wants(p int32) bool {
	return len(c.sel.Partitions) == 0 || slices.Contains(c.sel.Partitions, p)
}

// indexed reads the selected partitions of parts through their index.
func (c *catRead) indexed(ctx context.Context, parts []index.LogPartition) error {
	slices.SortFunc(parts, func(a, b index.LogPartition) int { return cmp.Compare(a.Partition, b.Partition) })
	for _, lp := range parts {
		if !c.wants(lp.Partition) {
			continue
		}
		ix, err := index.LoadPartition(ctx, c.r.store, c.r.cfg.IndexPrefix, lp, index.LoadOptions{Concurrency: c.r.readConcurrency()})
		if err != nil {
			return err
		}
		var cands []catObject
		for i := range ix.Entries {
			e := &ix.Entries[i]
			if c.entryWanted(e) {
				cands = append(cands, catObject{obj: c.r.entryObject(e), entry: e, first: e.First()})
			}
		}
		if err := c.partition(ctx, cands); err != nil {
			return err
		}
	}
	return nil
}

// entryWanted tells whether an entry's offsets and time range can hold
// selected records.
func (c *catRead) entryWanted(e *index.Entry) bool {
	s := &c.sel
	switch {
	case e.Last() < s.FirstOffset || e.First() > s.LastOffset:
		return false
	case s.From.IsZero() && s.Until.IsZero():
		return true
	case !e.Timed(): // its records' times are unknown
		c.res.UntimedLeft += e.Records
		return false
	case !s.From.IsZero() && e.MaxTS < s.From.UnixMilli():
		return false
	case !s.Until.IsZero() && e.MinTS > s.Until.UnixMilli():
		return false
	}
	return true
}

// entryObject is the Object an entry describes: its value (or tombstone
// keys) object with its twins, as the listing would give it.
func (r *Restorer) entryObject(e *index.Entry) Object {
	o := Object{Key: e.Key, StartOffset: e.First(), Tombstone: e.Tombstone, envelope: envelopeMode(e), entry: e}
	if m := e.Part(index.PartValue); m != nil {
		o.Size = m.Size
	}
	for _, ob := range e.Objects {
		if ob.Part == index.PartValue {
			continue
		}
		ext := ""
		if name, err := r.cfg.Keys.ParseObjectKey(ob.Key); err == nil {
			_, ext, _ = parallelExt(name.Ext)
		}
		tw := twinObject{key: ob.Key, ext: ext, size: ob.Size}
		switch {
		case ob.Part == index.PartKeys && e.Tombstone:
			o.Size = ob.Size
			o.twin().keys.ext = ext
		case ob.Part == index.PartKeys:
			o.twin().keys = tw
		default:
			o.twin().headers = tw
		}
	}
	return o
}

// scan lists the topic's folder and reads the selected partitions'
// objects.
func (c *catRead) scan(ctx context.Context) error {
	l, err := c.r.list(ctx)
	if err != nil {
		return err
	}
	for _, tp := range l.partitionsLeft() {
		if tp.topic != c.sel.Topic || !c.wants(tp.part) {
			continue
		}
		objs, _, _ := c.r.take(l, tp)
		var cands []catObject
		for _, o := range objs {
			if o.StartOffset <= c.sel.LastOffset {
				cands = append(cands, catObject{obj: o, first: o.StartOffset})
			}
		}
		if err := c.partition(ctx, cands); err != nil {
			return err
		}
	}
	return nil
}

// catObject is an object Records may open: its Object, its index entry
// (nil without an index) and the first offset it can hold.
type catObject struct {
	obj   Object
	entry *index.Entry
	first int64
}

// openCat is an open object and its current record.
type openCat struct {
	co   *catObject
	part int32 // the Kafka partition of its name
	or   *objectReader
	rec  *format.Record
}

// catHeap orders the open objects by their current record's offset.
type catHeap []*openCat

func (h catHeap) Len() int           { return len(h) }
func (h catHeap) Less(i, j int) bool { return h[i].rec.Offset < h[j].rec.Offset }
func (h catHeap) Swap(i, j int)      { h[i], h[j] = h[j], h[i] }
func (h *catHeap) Push(x any)        { *h = append(*h, x.(*openCat)) }
func (h *catHeap) Pop() any {
	old := *h
	x := old[len(old)-1]
	*h = old[:len(old)-1]
	return x
}

// partition merges the records of one partition's objects (sorted by
// first offset) in offset order, opening each only when it is needed.
// An offset held by two objects (an overlap) is handed on once.
func (c *catRead) partition(ctx context.Context, cands []catObject) error {
	slices.SortStableFunc(cands, func(a, b catObject) int { return cmp.Compare(a.first, b.first) })
	h := &catHeap{}
	defer func() {
		for _, oc := range *h {
			oc.or.close()
		}
	}()
	next, last := 0, int64(-1)
	for {
		for next < len(cands) && cands[next].first <= c.sel.LastOffset && (h.Len() == 0 || cands[next].first <= (*h)[0].rec.Offset) {
			if err := c.open(ctx, &cands[next], h); err != nil {
				return err
			}
			next++
		}
		if h.Len() == 0 || (*h)[0].rec.Offset > c.sel.LastOffset {
			return nil
		}
		oc := (*h)[0]
		if oc.rec.Offset > last {
			last = oc.rec.Offset
			if err := c.emit(oc); err != nil {
				return err
			}
		}
		if err := c.advance(ctx, oc); err != nil {
			return err
		}
		if oc.rec == nil {
			heap.Pop(h)
			oc.or.close()
		} else {
			heap.Fix(h, 0)
		}
	}
}

// open opens co and pushes it with its first record (an empty object is
// closed at once).
func (c *catRead) open(ctx context.Context, co *catObject, h *catHeap) error {
	or, err := c.r.openObject(ctx, co.obj, c.sel.Topic, modeCat)
	if err != nil && co.entry != nil && errors.Is(err, s3store.ErrNotExist) {
		return fmt.Errorf("%w: an object of %q is in the archive index (offsets %d-%d) but not in the store: %w",
			ErrDamagedObject, co.obj.Key, co.entry.First(), co.entry.Last(), err)
	}
	if err != nil {
		return err
	}
	c.res.Objects++
	oc := &openCat{co: co, or: or}
	if name, err := c.r.cfg.Keys.ParseObjectKey(co.obj.Key); err == nil {
		oc.part = name.Partition
	}
	if err := c.advance(ctx, oc); err != nil {
		or.close()
		return err
	}
	if oc.rec == nil {
		or.close()
		return nil
	}
	heap.Push(h, oc)
	return nil
}

// advance reads oc's next record into oc.rec (nil at its end, once the
// object and its twins are checked to end there and, with an entry, to
// hold its record count).
func (c *catRead) advance(ctx context.Context, oc *openCat) error {
	or, e := oc.or, oc.co.entry
	rec, err := or.next(ctx)
	if err != nil {
		return err
	}
	if rec == nil {
		oc.rec = nil
		if _, err := or.finish(); err != nil {
			return err
		}
		if e == nil && !or.carried && or.n > 0 {
			c.res.Assumed++
		}
		if e != nil && or.n != e.Records {
			return fmt.Errorf("%w: object %q holds %d records, its index entry %d", ErrDamagedObject, or.obj.Key, or.n, e.Records)
		}
		return nil
	}
	if e != nil && !or.carried {
		if rec.Offset = e.Offset(or.n); rec.Offset < 0 {
			return fmt.Errorf("%w: object %q holds more than the %d records of its index entry", ErrDamagedObject, or.obj.Key, e.Records)
		}
	}
	rec.Topic, rec.Partition = c.sel.Topic, oc.part
	if err := or.account(rec); err != nil {
		return err
	}
	or.n++
	oc.rec = rec
	return nil
}

// emit hands oc's current record to fn when the selection takes it.
func (c *catRead) emit(oc *openCat) error {
	rec, s := oc.rec, &c.sel
	if rec.Offset < s.FirstOffset || !s.Filter.Keeps(rec) {
		return nil
	}
	if !s.From.IsZero() || !s.Until.IsZero() {
		if rec.Timestamp.IsZero() {
			if e := oc.co.entry; e == nil || !e.Timed() {
				c.res.UntimedLeft++
				return nil
			}
			c.res.UntimedKept++
		} else if (!s.From.IsZero() && rec.Timestamp.Before(s.From)) || (!s.Until.IsZero() && rec.Timestamp.After(s.Until)) {
			return nil
		}
	}
	if err := c.fn(rec); err != nil {
		return err
	}
	c.res.Matched++
	if s.Limit > 0 && c.res.Matched >= s.Limit {
		return errLimit
	}
	return nil
}
