package checkpoint

import (
	"context"
	"fmt"
	"slices"

	"github.com/kafkas3/kafkas3/index"
	"github.com/kafkas3/kafkas3/s3store"
)

// store writes the checkpoint at key: prev's entries (streamed from the
// store when prev names one) merged with tail, the entries of the objects
// index objects after it. It returns the number of index objects the
// checkpoint covers. On any failure the object is aborted.
func store(ctx context.Context, st Store, key string, p Partition, commit int64, prev index.KeyName, tail []index.Entry, objects int) (n int, err error) {
	// A checkpoint is derived data: on a WORM bucket it may become a new
	// version (s3store.Replacing).
	ow, err := st.Create(s3store.Replacing(ctx), key)
	if err != nil {
		return 0, fmt.Errorf("create checkpoint %q: %w", key, err)
	}
	defer func() {
		if err != nil {
			_ = ow.Abort(context.WithoutCancel(ctx))
		}
	}()
	slices.SortStableFunc(tail, func(a, b index.Entry) int { return order(&a, &b) })
	m := &merger{tail: tail}
	h := index.CheckpointHeader{Topic: p.Topic, Partition: p.Partition, Writer: p.Writer, Commit: commit, LogObjects: objects}
	start := func(prevObjects int) error {
		h.LogObjects += prevObjects
		m.cw, err = index.NewCheckpointWriter(ow, h)
		return err
	}
	if prev.Commit >= 0 {
		pkey := index.CheckpointKey(p.Prefix, p.Topic, p.Partition, prev.Commit, p.Writer)
		if err := m.readPrev(ctx, st, pkey, start); err != nil {
			return 0, err
		}
	} else if err := start(0); err != nil {
		return 0, err
	}
	for m.next < len(m.tail) {
		if err := m.emit(&m.tail[m.next]); err != nil {
			return 0, err
		}
		m.next++
	}
	if err := m.cw.Close(m.dropped); err != nil {
		return 0, fmt.Errorf("write checkpoint %q: %w", key, err)
	}
	if err := ow.Commit(ctx); err != nil {
		return 0, fmt.Errorf("store checkpoint %q: %w", key, err)
	}
	return h.LogObjects, nil
}

// merger merges a previous checkpoint's entries (in checkpoint order)
// with the tail's, leaving out those that restamp a newer entry of the
// same key (index.Restamped).
type merger struct {
	cw      *index.CheckpointWriter
	tail    []index.Entry
	next    int
	group   []index.Entry // the entries written of the current first offset and key
	dropped int
}

// readPrev streams the previous checkpoint at key through the merger;
// start is called with its header's count of index objects.
func (m *merger) readPrev(ctx context.Context, st Store, key string, start func(int) error) error {
	rc, err := st.Open(ctx, key)
	if err != nil {
		return fmt.Errorf("open checkpoint %q: %w", key, err)
	}
	defer rc.Close()
	_, dropped, err := index.ReadCheckpoint(key, rc, func(h index.CheckpointHeader) error {
		return start(h.LogObjects)
	}, func(e *index.Entry) error {
		for m.next < len(m.tail) && order(&m.tail[m.next], e) < 0 {
			if err := m.emit(&m.tail[m.next]); err != nil {
				return err
			}
			m.next++
		}
		return m.emit(e)
	})
	m.dropped += dropped
	return err
}

// emit writes e unless it restamps an entry already written.
func (m *merger) emit(e *index.Entry) error {
	if len(m.group) > 0 && (m.group[0].First() != e.First() || m.group[0].Key != e.Key) {
		m.group = m.group[:0]
	}
	for i := range m.group {
		if index.Restamped(e, &m.group[i]) {
			m.dropped++
			return nil
		}
	}
	m.group = append(m.group, *e)
	return m.cw.Add(e)
}

// order is checkpoint order: first offset, key, commit descending.
func order(a, b *index.Entry) int {
	switch {
	case a.First() != b.First():
		return cmpInt(a.First(), b.First())
	case a.Key != b.Key:
		if a.Key < b.Key {
			return -1
		}
		return 1
	}
	return cmpInt(b.Commit, a.Commit)
}

func cmpInt(a, b int64) int {
	switch {
	case a < b:
		return -1
	case a > b:
		return 1
	}
	return 0
}
