package index

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"sort"

	"github.com/kafkas3/kafkas3/internal/parallel"
	"github.com/kafkas3/kafkas3/s3store"
)

// Tail is a load of the archive index that can be brought up to date
// (Refresh) reading only what changed since: a follower's index (`kafkas3
// source --follow`). Its first Refresh is LoadWith; each later one gives
// what LoadWith would give then (the same Entries, All, Superseded,
// IndexObjects and Assumed) with, per partition of the log:
//
//   - one listing of its checkpoints (keys only; the folder holds one per
//     kafkas3.index.checkpoint.interval index objects of each writer,
//     1,000 keys a listing request: new ones can sort anywhere, a new
//     writer's start checkpoint below the others) and, for each writer with
//     a new one, a read of the newest new one's first line (to know it is
//     not void); the writer's live checkpoint's commit then moves up to
//     it, and with the lowest of them the start of the next listing;
//   - one listing of its log from the lowest live checkpoint's commit on,
//     as LoadWith lists it, keys only: an index object is read only when
//     its key is new or lists with another size, ETag or modification
//     time (a replay rewrote it). A replay rewrites, and writes new keys,
//     only above the writer's live checkpoint's commit (the sink's start
//     checkpoint; package doc, "Checkpoints"), so what lies below the
//     listing's start never changes and is kept, not listed again;
//   - nothing read again otherwise: not the checkpoints already read, not
//     the index objects already read.
//
// The partitions of the log are found again each time (one listing
// request per partition, as LoadWith's discover). A partition whose
// checkpoints changed otherwise (a new writer, a checkpoint voided or
// replaced, a start checkpoint at or below a writer's live one: its group
// moved back) is loaded again whole, as LoadWith loads it.
//
// The cost of a Refresh in requests is then about three per partition
// plus one read per index object and checkpoint added, as long as the
// writers checkpoint (kafkas3.index.checkpoint.interval): the listing of
// the log spans the index objects above the lowest live checkpoint. A
// writer without checkpoints (an archive of an older kafkas3) keeps that
// listing at the whole log, as it keeps LoadWith's. The Tail keeps what
// it read (every entry, as an Index holds them) and what the listings
// said of the checkpoints and of the index objects above the lowest live
// checkpoint.
//
// A follower that has restored what some entries describe lets them go
// (Prune): later Refreshes and RefreshEach give the index without them,
// so what a Tail holds is what was added since, not the whole log.
//
// A Tail is not safe for concurrent use.
type Tail struct {
	l      *loader
	topics []string
	parts  map[LogPartition]*tailPart
}

// tailPart is what a Tail keeps of one partition of the log.
type tailPart struct {
	p logPartition
	// ckpts holds every checkpoint key listed, with what the listing
	// said of it.
	ckpts map[string]objStamp
	// read is, per writer with a live checkpoint read, that checkpoint's
	// commit: its entries are in fixed. live is each writer's live
	// checkpoint's commit (-1 when none is live), read or not.
	read, live map[string]int64
	// fixed holds the results that no longer change: the checkpoints
	// read, and the index objects below the listing's start.
	fixed []readResult
	// after is where the listing of the log starts ("" the whole log);
	// window holds the index objects it listed last time.
	after  string
	window map[string]tailObject
	// pruned counts the index objects and checkpoints of fixed whose
	// entries were all let go (Prune), kept as counts only.
	pruned readResult
	// below is the partition's watermark (pruned.go; 0: none).
	below int64
}

// prunedBelow maps tp's partition to its watermark, nil without one.
func (tp *tailPart) prunedBelow() map[LogPartition]int64 {
	if tp.below <= 0 {
		return nil
	}
	return map[LogPartition]int64{{Topic: tp.p.topic, Partition: tp.p.part}: tp.below}
}

// tailObject is one index object of a Tail's window.
type tailObject struct {
	commit int64
	writer string
	stamp  objStamp
	res    *readResult // nil when a checkpoint read holds its entries
}

// NewTail returns a Tail of the archive index under prefix (of topics,
// when given). It reads nothing until Refresh, which keeps at most
// opt.Concurrency requests in flight (its partitions and their reads
// share them).
func NewTail(st Store, prefix string, topics []string, opt LoadOptions) *Tail {
	l := newLoader(st, prefix, opt)
	l.st = newLimited(st, l.n)
	return &Tail{l: l, topics: topics, parts: map[LogPartition]*tailPart{}}
}

// Refresh brings the Tail up to date and returns the index as LoadWith
// would load it now. Its Listed counts the keys of the log this Refresh
// listed, FullListings the partitions whose listing spans the whole log.
// An error leaves the Tail as it was before the failed Refresh's
// partitions, so the next Refresh reads their changes again.
func (t *Tail) Refresh(ctx context.Context) (*Index, error) {
	n, err := t.update(ctx)
	if err != nil {
		return nil, err
	}
	return t.index(n), nil
}

// RefreshEach brings the Tail up to date, as Refresh does, and calls fn
// with the index of each partition of the log, up to atOnce partitions at
// once (fn locks what it shares), as EachPartition does: the index is
// merged one partition at a time, never whole. The first error of fn
// ends it.
func (t *Tail) RefreshEach(ctx context.Context, atOnce int, fn func(*Index) error) error {
	if _, err := t.update(ctx); err != nil {
		return err
	}
	parts := make([]*tailPart, 0, len(t.parts))
	for _, tp := range t.parts {
		parts = append(parts, tp)
	}
	sort.Slice(parts, func(i, j int) bool {
		a, b := parts[i].p, parts[j].p
		return a.topic < b.topic || a.topic == b.topic && a.part < b.part
	})
	if atOnce <= 0 {
		atOnce = DefaultPartitionsAtOnce
	}
	return parallel.Each(ctx, atOnce, len(parts), func(i int) error {
		ix := mergeResults(parts[i].results())
		ix.applyPruned(parts[i].prunedBelow(), t.l.keepPruned)
		if parts[i].after == "" {
			ix.FullListings = 1
		}
		return fn(ix)
	})
}

// update brings the Tail up to date (Refresh), returning the keys of the
// log listed.
func (t *Tail) update(ctx context.Context) (int, error) {
	parts, err := t.l.discover(ctx, t.topics)
	if err != nil {
		return 0, err
	}
	var fresh, known []logPartition
	seen := map[LogPartition]bool{}
	for _, p := range parts {
		lp := LogPartition{Topic: p.topic, Partition: p.part}
		seen[lp] = true
		if t.parts[lp] == nil {
			fresh = append(fresh, p)
		} else {
			known = append(known, p)
		}
	}
	for lp := range t.parts {
		if !seen[lp] {
			delete(t.parts, lp)
		}
	}
	listed := make([]int, len(known))
	reload := make([]bool, len(known))
	err = parallel.Each(ctx, t.l.n, len(known), func(i int) error {
		tp := t.parts[LogPartition{Topic: known[i].topic, Partition: known[i].part}]
		n, again, err := t.refreshPart(ctx, tp)
		listed[i], reload[i] = n, again
		return wrapDir(known[i].dir, err)
	})
	if err != nil {
		return 0, err
	}
	for i, again := range reload {
		if again {
			fresh = append(fresh, known[i])
		}
	}
	n, err := t.load(ctx, fresh)
	if err != nil {
		return 0, err
	}
	for _, k := range listed {
		n += k
	}
	return n, nil
}

// load loads parts whole (loadParts) and keeps them, returning the keys
// of the log listed.
func (t *Tail) load(ctx context.Context, parts []logPartition) (int, error) {
	plans, err := t.l.loadParts(ctx, parts)
	if err != nil {
		return 0, err
	}
	n := 0
	for _, pp := range plans {
		n += pp.listed
		t.parts[LogPartition{Topic: pp.p.topic, Partition: pp.p.part}] = newTailPart(pp)
	}
	return n, nil
}

// newTailPart is what a Tail keeps of a partition LoadWith's steps
// loaded.
func newTailPart(pp *partPlan) *tailPart {
	tp := &tailPart{p: pp.p, ckpts: pp.ckptStamps, read: map[string]int64{}, live: map[string]int64{},
		after: pp.after, window: map[string]tailObject{}, below: pp.below}
	for w, c := range pp.lives {
		tp.live[w] = c
	}
	for w, r := range pp.ckptRes {
		tp.read[w] = pp.lives[w]
		tp.fixed = append(tp.fixed, r)
	}
	for w, objs := range pp.logs {
		for _, o := range objs {
			to := tailObject{commit: o.commit, writer: w, stamp: o.stamp}
			if r, ok := pp.tailRes[o.key]; ok {
				to.res = &r
			}
			tp.window[o.key] = to
		}
	}
	return tp
}

// index merges what the Tail holds into an Index.
func (t *Tail) index(listed int) *Index {
	var res []readResult
	full := 0
	below := map[LogPartition]int64{}
	for lp, tp := range t.parts {
		res = append(res, tp.results()...)
		if tp.after == "" {
			full++
		}
		if tp.below > 0 {
			below[lp] = tp.below
		}
	}
	ix := mergeResults(res)
	ix.applyPruned(below, t.l.keepPruned)
	ix.Listed, ix.FullListings = listed, full
	return ix
}

// results returns what the Tail read of tp: its checkpoints and index
// objects.
func (tp *tailPart) results() []readResult {
	res := slices.Clone(tp.fixed)
	if tp.pruned.logObjects > 0 || tp.pruned.checkpoints > 0 {
		res = append(res, tp.pruned)
	}
	for _, o := range tp.window {
		if o.res != nil {
			res = append(res, *o.res)
		}
	}
	return res
}

// errHeader stops a checkpoint read after its header.
var errHeader = errors.New("header read")

// refreshPart brings one partition up to date: its new checkpoints
// (refreshCheckpoints), then its log from the lowest live checkpoint
// (refreshLog). It returns the keys of the log listed, or true when the
// partition must be loaded again whole.
func (t *Tail) refreshPart(ctx context.Context, tp *tailPart) (int, bool, error) {
	live, stamps, again, err := t.refreshCheckpoints(ctx, tp)
	if err != nil || again {
		return 0, again, err
	}
	// Listed from the old start, so what was rewritten before a new
	// checkpoint covered it is read again before it is frozen.
	listed := map[string]tailObject{}
	err = s3store.ListAfter(ctx, t.l.st, PartitionDir(t.l.prefix, tp.p.topic, tp.p.part), tp.after, func(info s3store.ObjectInfo) error {
		kn, err := ParseKey(info.Key)
		if err != nil {
			return err
		}
		listed[info.Key] = tailObject{commit: kn.Commit, writer: kn.Writer, stamp: stampOf(info)}
		return nil
	})
	if err != nil {
		return 0, false, err
	}
	for _, o := range listed {
		if _, ok := live[o.writer]; !ok && tp.after != "" {
			return 0, true, nil // a writer without checkpoints: LoadWith lists the whole log
		}
	}
	window, err := t.refreshLog(ctx, tp, live, listed)
	if err != nil {
		return 0, false, err
	}
	tp.ckpts, tp.live, tp.window = stamps, live, window
	after := listStart(t.l.prefix, tp.p, live)
	for _, o := range window {
		if _, ok := live[o.writer]; !ok {
			after = "" // a writer without checkpoints: the whole log, as LoadWith
		}
	}
	tp.freeze(after)
	return len(listed), false, nil
}

// refreshCheckpoints lists tp's checkpoints and returns each writer's
// live checkpoint's commit and the listing, or true when the partition
// must be loaded again: a checkpoint gone or listed otherwise than before
// (voided), a writer's first checkpoint, one at or below a writer's live
// one, a writer's newest new one void, or a new watermark (pruned.go).
func (t *Tail) refreshCheckpoints(ctx context.Context, tp *tailPart) (map[string]int64, map[string]objStamp, bool, error) {
	_, stamps, below, err := listCheckpoints(ctx, t.l.st, t.l.prefix, tp.p.topic, tp.p.part)
	if err != nil {
		return nil, nil, false, err
	}
	if below != tp.below {
		return nil, nil, true, nil // pruned since: loaded again
	}
	for key, st := range tp.ckpts {
		if now, ok := stamps[key]; !ok || now != st {
			return nil, nil, true, nil
		}
	}
	newest := map[string]int64{}
	for key := range stamps {
		if _, ok := tp.ckpts[key]; ok {
			continue
		}
		kn, err := ParseCheckpointKey(key)
		if err != nil {
			return nil, nil, false, err
		}
		if c, ok := tp.live[kn.Writer]; !ok || c < 0 || kn.Commit <= c {
			return nil, nil, true, nil
		}
		newest[kn.Writer] = max(newest[kn.Writer], kn.Commit)
	}
	live := make(map[string]int64, len(tp.live))
	for w, c := range tp.live {
		live[w] = c
	}
	for w, c := range newest {
		void, err := t.isVoid(ctx, CheckpointKey(t.l.prefix, tp.p.topic, tp.p.part, c, w))
		if err != nil || void {
			return nil, nil, void, err
		}
		live[w] = c
	}
	return live, stamps, false, nil
}

// isVoid reads a checkpoint's header and tells whether it is void.
func (t *Tail) isVoid(ctx context.Context, key string) (bool, error) {
	rc, err := t.l.st.Open(ctx, key)
	if err != nil {
		return false, fmt.Errorf("open checkpoint %q: %w", key, err)
	}
	defer rc.Close()
	var void bool
	_, _, err = ReadCheckpoint(key, rc, func(h CheckpointHeader) error {
		void = h.Void != nil
		return errHeader
	}, nil)
	if err != nil && !errors.Is(err, errHeader) {
		return false, err
	}
	return void, nil
}

// listStart is where the listing of a partition's log starts given each
// writer's live checkpoint's commit (partPlan.listFrom).
func listStart(prefix string, p logPartition, live map[string]int64) string {
	pp := partPlan{p: p, lives: live}
	return pp.listFrom(prefix)
}

// refreshLog returns tp's new window: the index objects listed after its
// start (listed), each read again when new or listed otherwise than
// before, unless a checkpoint read holds it; and the objects of the old
// window the listing no longer shows that a live checkpoint covers (a
// load reads them from it).
func (t *Tail) refreshLog(ctx context.Context, tp *tailPart, live map[string]int64, listed map[string]tailObject) (map[string]tailObject, error) {
	var jobs []readJob
	window := make(map[string]tailObject, len(listed))
	for key, o := range listed {
		old, ok := tp.window[key]
		switch {
		case ok && old.stamp == o.stamp:
			o.res = old.res
		case o.commit <= commitOf(tp.read, o.writer):
			// A checkpoint read holds it.
		default:
			jobs = append(jobs, readJob{key: key, dir: tp.p.dir})
		}
		window[key] = o
	}
	for key, old := range tp.window {
		if _, ok := listed[key]; !ok && old.commit <= commitOf(live, old.writer) {
			window[key] = old
		}
	}
	res := make([]readResult, len(jobs))
	err := parallel.Each(ctx, t.l.n, len(jobs), func(i int) error {
		r, err := t.l.read(ctx, jobs[i])
		res[i] = r
		return err
	})
	if err != nil {
		return nil, err
	}
	for i, j := range jobs {
		o := window[j.key]
		o.res = &res[i]
		window[j.key] = o
	}
	return window, nil
}

// commitOf is w's commit in m (read, live), -1 when it has none.
func commitOf(m map[string]int64, w string) int64 {
	if c, ok := m[w]; ok {
		return c
	}
	return -1
}

// freeze sets the start of the listing to after and moves the index
// objects of the window below it to fixed: their writers' live
// checkpoints cover them, and nothing rewrites what a live checkpoint
// covers.
func (tp *tailPart) freeze(after string) {
	tp.after = after
	var keys []string
	for key := range tp.window {
		if key <= after {
			keys = append(keys, key)
		}
	}
	sort.Strings(keys)
	for _, key := range keys {
		if o := tp.window[key]; o.res != nil {
			tp.fixed = append(tp.fixed, *o.res)
		}
		delete(tp.window, key)
	}
}

// Prune lets go of the entries of partition p of the log that drop
// reports true for: a follower restored what they describe. Later
// Refreshes give the index without them, unless the partition is loaded
// again whole (its checkpoints changed otherwise than by new ones: see
// Tail), and a rewritten index object read again gives its entries
// again. The index objects and checkpoints left without entries are kept
// as counts.
func (t *Tail) Prune(p LogPartition, drop func(*Entry) bool) {
	tp := t.parts[p]
	if tp == nil {
		return
	}
	kept := tp.fixed[:0]
	for _, r := range tp.fixed {
		r.entries = pruneEntries(r.entries, drop)
		if len(r.entries) > 0 {
			kept = append(kept, r)
			continue
		}
		tp.pruned.logObjects += r.logObjects
		tp.pruned.dropped += r.dropped
		if r.checkpoint {
			tp.pruned.checkpoints++
		}
		tp.pruned.checkpoints += r.checkpoints
	}
	clear(tp.fixed[len(kept):])
	tp.fixed = kept
	for _, o := range tp.window {
		if o.res != nil {
			o.res.entries = pruneEntries(o.res.entries, drop)
		}
	}
}

// Held counts the entries the Tail holds.
func (t *Tail) Held() int {
	n := 0
	for _, tp := range t.parts {
		for _, r := range tp.fixed {
			n += len(r.entries)
		}
		for _, o := range tp.window {
			if o.res != nil {
				n += len(o.res.entries)
			}
		}
	}
	return n
}

// pruneEntries returns es without those drop reports true for, in a new
// slice when any is dropped (the old one is let go whole).
func pruneEntries(es []Entry, drop func(*Entry) bool) []Entry {
	n := 0
	for i := range es {
		if !drop(&es[i]) {
			n++
		}
	}
	if n == len(es) {
		return es
	}
	if n == 0 {
		return nil
	}
	out := make([]Entry, 0, n)
	for i := range es {
		if !drop(&es[i]) {
			out = append(out, es[i])
		}
	}
	return out
}
