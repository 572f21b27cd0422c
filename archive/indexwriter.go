package archive

import (
	"context"
	"errors"
	"fmt"
	"slices"

	"github.com/kafkas3/kafkas3/checkpoint"
	"github.com/kafkas3/kafkas3/index"
	"github.com/kafkas3/kafkas3/s3store"
)

// This file holds the partition writer's archive index (Config.IndexPrefix):
// the entries of a rotation's files, the index object written before the
// offset becomes committable, and the restamp of skipped offsets.

// indexed reports whether the archive index is written.
func (w *partitionWriter) indexed() bool { return w.cfg.IndexPrefix != "" }

// begin notes the first offset the writer consumes: the index's first span
// starts at the committed offset the writer started from, or at this
// offset when that is unknown.
func (w *partitionWriter) begin(offset int64) {
	if w.from >= 0 {
		return
	}
	if w.start >= 0 && w.start <= offset {
		w.from = w.start
	} else {
		w.from = offset
	}
}

// entry is the archive index entry of a file whose objects are complete.
func (w *partitionWriter) entry(f *openFile) index.Entry {
	e := index.Entry{
		V: index.Version, Topic: w.topic, Partition: w.partition, Key: f.key,
		Runs: f.runs, Records: f.records, MinTS: f.minTS, MaxTS: f.maxTS, Tombstone: f.tombstone,
		Envelope: w.cfg.Envelope, TopicID: w.topicID, MaxRecordBytes: f.maxRecord, NullKeys: f.nullKeys,
	}
	for _, o := range f.objects() {
		part := o.part
		if f.tombstone && o == f.keys {
			part = index.PartKeys
		}
		e.Objects = append(e.Objects, index.Object{Key: o.key, Part: indexPart(part), Size: o.counter.n, CRC32C: o.counter.crcText(), SHA256: o.counter.shaText()})
	}
	return e
}

// indexPart maps a FileStats part to the index's part name.
func indexPart(part string) string {
	switch part {
	case PartKeys:
		return index.PartKeys
	case PartHeaders:
		return index.PartHeaders
	}
	return index.PartValue
}

// putIndex hands the index object of entries at commit, to be written
// after files' objects, to an upload (startUpload, upload.go); commit becomes
// committable when the upload is done. Every entry gets the offsets lost
// before archiving since the last index object, clipped to its span
// (lostOf). The next span starts there.
func (w *partitionWriter) putIndex(ctx context.Context, files []*openFile, entries []index.Entry, commit int64) error {
	for i := range entries {
		entries[i].Commit = commit
		entries[i].Lost = lostOf(&entries[i], w.lost, commit)
	}
	if err := w.checkBytes(entries); err != nil {
		abortFiles(ctx, w, files)
		return err
	}
	// The upload encodes them again once its objects' ETags are known
	// (writeIndex); an entry Encode refuses stops the rotation here,
	// before any of its objects is committed.
	if _, err := index.Encode(entries); err != nil {
		abortFiles(ctx, w, files)
		return fmt.Errorf("topic %s partition %d: archive index: %w", w.topic, w.partition, err)
	}
	key := index.Key(w.cfg.IndexPrefix, w.topic, w.partition, commit, w.indexWriter)
	// The upload, which may run beside the worker, gets its own copy of
	// the entries; finish makes it the last entries, with its ETags
	// (keepETags). The run's first index object of the partition: its
	// upload writes the start checkpoint and the voids first
	// (beginCheckpoints).
	up := upload{files: files, indexKey: key, entries: cloneEntries(entries), commit: commit, begin: !w.checkedCkpts, from: w.from,
		schemaIDs: w.schemaIDs.take()}
	w.checkedCkpts = true
	w.lastEntries = entries
	w.from = commit
	w.lost = nil
	return w.startUpload(ctx, up)
}

// restamp commits skipped offsets up to commit when no file is open: it
// writes the last rotation's entries again with the new commit (an entry
// with a higher commit supersedes the older one for the same object), so
// the index accounts for every offset below every commit. When the writer
// has written no index object yet, it reads the one at the committed
// offset it started from. Without any (an archive written before the
// index, or by Confluent's connector) the offset is committed without an
// index object: nothing before it is indexed, offsets lost before
// archiving included (dropLost).
func (w *partitionWriter) restamp(ctx context.Context, commit int64) error {
	if commit <= w.from {
		return nil
	}
	if w.lastEntries != nil {
		// The running upload, if any, wrote the last entries' index
		// object: its result gives their objects the ETags the store
		// answered (keepETags), which the restamped entries keep. The
		// restamp's upload would wait for it anyway (startUpload).
		if err := w.wait(); err != nil {
			return err
		}
	}
	entries := w.lastEntries
	if entries == nil && w.start >= 0 && w.from == w.start {
		var err error
		if entries, err = w.startEntries(ctx); err != nil {
			return err
		}
	}
	if entries == nil {
		w.dropLost(ctx)
		w.from = commit
		w.setPending(commit)
		return nil
	}
	// The entries keep the From they were written with, and their
	// objects' ETags.
	return w.putIndex(ctx, nil, slices.Clone(entries), commit)
}

// startEntries reads the entries of the index object at the committed
// offset the writer started from: nil when there is none.
func (w *partitionWriter) startEntries(ctx context.Context) ([]index.Entry, error) {
	key := index.Key(w.cfg.IndexPrefix, w.topic, w.partition, w.start, w.indexWriter)
	rc, err := w.store.Open(ctx, key)
	switch {
	case errors.Is(err, s3store.ErrNotExist):
		return nil, nil
	case err != nil:
		return nil, &StoreError{Key: key, Err: err}
	}
	defer rc.Close()
	entries, err := index.Decode(key, rc)
	if err != nil {
		return nil, fmt.Errorf("topic %s partition %d: %w", w.topic, w.partition, err)
	}
	return entries, nil
}

// beginCheckpoints runs before the first index object of the partition
// in a run (checkpoint.Begin), in its upload, whether the sink writes
// checkpoints or not: the run writes index objects at commits above from
// (the offset it started from), so this sink's writer gets a live
// checkpoint at or below from (its start checkpoint, when it has none:
// empty for a new writer), and every checkpoint of its writer above from
// (an operator moved the group's offset back under one) is made void
// before the replay rewrites the log it covers; readers then use the
// newest checkpoint at or below from. Readers list the log only from the
// lowest live checkpoint on, so the start checkpoint must exist before the
// first index object. It uses only w's immutable fields (runUpload).
func (w *partitionWriter) beginCheckpoints(ctx context.Context, from int64) error {
	p := checkpoint.Partition{Prefix: w.cfg.IndexPrefix, Topic: w.topic, Partition: w.partition, Writer: w.indexWriter}
	r, err := checkpoint.Begin(ctx, w.store, p, from, checkpointReadConcurrency)
	if err != nil {
		err = fmt.Errorf("topic %s partition %d: archive index: %w", w.topic, w.partition, err)
		if errors.Is(err, index.ErrMalformed) {
			return err
		}
		return storeError(err) // as the index object's: retried when transient
	}
	if r.Start != "" {
		w.log.Debug("archive index start checkpoint written", "key", r.Start, "others", r.Others, "read", r.Read)
	}
	if len(r.Voided) > 0 {
		w.log.Warn("the group's offset is below this sink's checkpoints of the archive index; they are void until the replay passes them",
			"topic", w.topic, "partition", w.partition, "offset", from, "voided", r.Voided)
	}
	return nil
}
