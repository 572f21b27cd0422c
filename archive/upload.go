package archive

import (
	"context"
	"fmt"
	"log/slog"
	"slices"

	"github.com/kafkas3/kafkas3/format"
	"github.com/kafkas3/kafkas3/index"
	"github.com/kafkas3/kafkas3/s3store"
)

// This file holds the store work of a rotation (partitionWriter.rotate,
// path.go), taken off the worker's path: the rotation closes its files'
// format writers and prepares its index object in the worker, then an
// upload commits the objects and writes the index object in the
// background while the worker goes on with the next records. A
// partition's uploads run one at a time, in rotation order, and a
// rotation's offset becomes pending only when its upload is complete, so
// a partition's offset is committed only after every object holding its
// records up to that point is complete in the store. Across partitions at
// most MaxUploads uploads run at once (the session's upload slots).

// MaxUploads bounds the rotations whose objects are being completed in the
// store at once, across all partitions of a sink. Each partition has at
// most one upload running (and its open files): the objects of an upload
// are already spooled, so the bound is on requests, not on memory.
const MaxUploads = 8

// upload is one rotation's (or restamp's) store work.
type upload struct {
	files    []*openFile // closed files whose objects to commit, in order
	indexKey string      // the index object to write after them; "" for none
	// entries are the index object's entries: the upload's own copy
	// (cloneEntries), whose objects runUpload gives the ETags the store
	// answered for the files' objects before it encodes them. After the
	// upload they are the worker's (finish).
	entries []index.Entry
	commit  int64 // the offset that is committable once the upload is done
	// begin: the partition's first index object of the run, written after
	// its start checkpoint and voids at from (beginCheckpoints).
	begin bool
	from  int64
	// schemaIDs are the schema ids the upload's records name, whose
	// schema objects it writes before its index object (schemarec.go).
	schemaIDs []int
}

// uploadResult is what an upload did: the objects it completed (even when
// it failed after some) and its error.
type uploadResult struct {
	up    upload
	stats []FileStats
	err   error
}

// inflight is the partition's running upload.
type inflight struct {
	done   chan uploadResult
	cancel context.CancelFunc
}

// startUpload runs up after the partition's previous upload: in the background
// when the writer has upload slots (a worker's), else at once (tests of
// the writer alone). Its offset becomes pending in finish.
func (w *partitionWriter) startUpload(ctx context.Context, up upload) error {
	if err := w.wait(); err != nil {
		abortFiles(ctx, w, up.files)
		return err
	}
	if w.slots == nil {
		return w.finish(runUpload(ctx, w, up))
	}
	uctx, cancel := context.WithCancel(ctx)
	in := &inflight{done: make(chan uploadResult, 1), cancel: cancel}
	w.inflight = in
	go func() {
		defer cancel()
		select {
		case w.slots <- struct{}{}:
		case <-uctx.Done():
			abortFiles(context.WithoutCancel(uctx), w, up.files)
			in.done <- uploadResult{up: up, err: fmt.Errorf("topic %s partition %d: upload: %w", w.topic, w.partition, uctx.Err())}
			return
		}
		r := runUpload(uctx, w, up)
		<-w.slots
		in.done <- r
	}()
	return nil
}

// uploaded is the channel of the running upload's result; nil (never
// ready) when none runs.
func (w *partitionWriter) uploaded() <-chan uploadResult {
	if w.inflight == nil {
		return nil
	}
	return w.inflight.done
}

// wait waits for the running upload, if any, and takes its result.
func (w *partitionWriter) wait() error {
	if w.inflight == nil {
		return nil
	}
	return w.finish(<-w.inflight.done)
}

// finish takes the result r of the running (or inline) upload: its
// completed objects are reported and, when it succeeded, its offset (or
// a later one that became committable while it ran) is pending.
func (w *partitionWriter) finish(r uploadResult) error {
	w.inflight = nil
	w.done = append(w.done, r.stats...)
	if r.err != nil {
		if r.up.begin {
			w.checkedCkpts = false // the next index object begins again
		}
		return r.err
	}
	if r.up.indexKey != "" {
		w.keepETags(r.up)
		if w.onIndex != nil {
			w.onIndex()
		}
		if w.onIndexCommit != nil {
			w.onIndexCommit(w.cfg.IndexPrefix, w.topic, w.partition, r.up.commit)
		}
		w.log.Debug("index object complete", "key", r.up.indexKey, "entries", len(r.up.entries), "commit", r.up.commit)
	}
	w.pending = max(r.up.commit, w.afterUpload)
	w.afterUpload = -1
	return nil
}

// setPending makes offset pending now, or once the running upload is done.
func (w *partitionWriter) setPending(offset int64) {
	if w.inflight != nil {
		w.afterUpload = offset
		return
	}
	w.pending = offset
}

// cancelUpload stops the running upload, if any, and waits until it has
// ended; what it did not complete is aborted.
func (w *partitionWriter) cancelUpload() {
	if w.inflight == nil {
		return
	}
	w.inflight.cancel()
	r := <-w.inflight.done
	w.inflight = nil
	w.done = append(w.done, r.stats...)
	if r.err != nil && r.up.begin {
		w.checkedCkpts = false
	}
}

// runUpload commits up's objects in order and then writes its index
// object, whose entries it first gives the committed objects' ETags
// (writeIndex). On a failure the objects not yet committed are aborted (those
// committed before stay: a replay from the committed offset rewrites them
// with the same bytes), and the error is a *StoreError. It uses only up
// and w's immutable fields (cfg, store, log), so it may run beside the
// worker.
func runUpload(ctx context.Context, w *partitionWriter, up upload) uploadResult {
	r := uploadResult{up: up}
	for i, f := range up.files {
		for j, o := range f.objects() {
			if err := o.obj.Commit(ctx); err != nil {
				abortObjects(ctx, w, f.objects()[j:])
				abortFiles(ctx, w, up.files[i+1:])
				r.err = &StoreError{Key: o.key, Err: err}
				return r
			}
			r.stats = append(r.stats, fileStats(f, o))
			w.log.Debug("object complete", "key", o.key, "records", f.records, "bytes", o.counter.n)
			if err := w.tag(ctx, f, o); err != nil {
				abortObjects(ctx, w, f.objects()[j+1:])
				abortFiles(ctx, w, up.files[i+1:])
				r.err = err
				return r
			}
		}
	}
	if up.begin {
		if r.err = w.beginCheckpoints(ctx, up.from); r.err != nil {
			return r
		}
	}
	if r.err = w.recordSchemas(ctx, up); r.err != nil {
		return r
	}
	if up.indexKey != "" {
		r.err = writeIndex(ctx, w, up, r.stats)
	}
	return r
}

// writeIndex gives the objects of up's entries the ETags the store
// answered when it committed them (stats: the objects up committed; an
// object it did not commit, a restamp's, keeps the ETag its entry has),
// then encodes the entries and writes up's index object. It changes only
// up.entries, the upload's own copy.
//
// For a replay of the same records onto a store whose ETags are MD5s
// (one PutObject: the MD5 of the bytes; multipart: the MD5 of the parts'
// MD5s and "-<parts>", the same for the same bytes and s3.part.size), the
// entries, and so the index object, are the same bytes. Under SSE-KMS or
// SSE-C an ETag is no digest of the bytes: a replay records the new one.
func writeIndex(ctx context.Context, w *partitionWriter, up upload, stats []FileStats) error {
	etags := make(map[string]string, len(stats))
	for _, s := range stats {
		if s.ETag != "" {
			etags[s.Key] = s.ETag
		}
	}
	for i := range up.entries {
		objs := up.entries[i].Objects
		for j := range objs {
			if etag, ok := etags[objs[j].Key]; ok {
				objs[j].ETag = etag
			}
		}
	}
	data, err := index.Encode(up.entries)
	if err != nil {
		return fmt.Errorf("topic %s partition %d: archive index: %w", w.topic, w.partition, err)
	}
	return putObject(ctx, w.store, up.indexKey, data)
}

// keepETags makes the entries of the finished upload up, whose objects
// carry their ETags, the writer's last entries when they are the ones
// putIndex last handed over (the same commit: each index object of a
// writer has a higher commit than the one before): a restamp then writes
// them again with their ETags. When a rotation's putIndex has already
// replaced the last entries with its own (it takes the running upload's
// result only in startUpload), the commits differ and they stay. A
// restamp takes the running upload's result before it reads them.
func (w *partitionWriter) keepETags(up upload) {
	if len(w.lastEntries) > 0 && w.lastEntries[0].Commit == up.commit {
		w.lastEntries = up.entries
	}
}

// cloneEntries copies entries and their objects, which an upload fills
// with ETags (writeIndex); the runs and lost runs, never changed, are
// shared.
func cloneEntries(entries []index.Entry) []index.Entry {
	out := slices.Clone(entries)
	for i := range out {
		out[i].Objects = slices.Clone(out[i].Objects)
	}
	return out
}

// fileStats describes o, an object of f, once complete. The parallel
// objects of a value object are reported as such; a tombstone file's
// .keys object is its main object.
func fileStats(f *openFile, o *object) FileStats {
	part := o.part
	if f.tombstone && o == f.keys {
		part = ""
	}
	st := FileStats{Key: o.key, Part: part, StartOffset: f.first, EndOffset: f.last, Records: f.records, Bytes: o.counter.n, MaxTime: f.maxTS, CRC32C: o.counter.crcText(), SHA256: o.counter.shaText()}
	if et, ok := o.obj.(s3store.ETagger); ok {
		st.ETag = et.ETag()
	}
	return st
}

// abortFiles aborts every object of files.
func abortFiles(ctx context.Context, w *partitionWriter, files []*openFile) {
	for _, f := range files {
		abortObjects(ctx, w, f.objects())
	}
}

// abortObjects aborts objs, logging failures.
func abortObjects(ctx context.Context, w *partitionWriter, objs []*object) {
	for _, o := range objs {
		o.abort(ctx, w.log)
	}
}

// abort discards o: its record writer gives back what it holds
// (format.Discard) and its store object is aborted, a failure logged.
func (o *object) abort(ctx context.Context, log *slog.Logger) {
	if o.rw != nil {
		format.Discard(o.rw)
	}
	if err := o.obj.Abort(ctx); err != nil {
		log.Warn("abort failed", "key", o.key, "err", err)
	}
}
