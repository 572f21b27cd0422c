package archive

import "github.com/twmb/franz-go/pkg/kgo"

// This file holds the bookkeeping of the offset commits (setCommittable,
// commitLoop and commitNow are in path.go): commitMu guards toCommit and
// committed.

// pendingCommits returns the offsets to commit, by topic and partition.
func (ss *session) pendingCommits() map[string]map[int32]kgo.EpochOffset {
	ss.commitMu.Lock()
	defer ss.commitMu.Unlock()
	m := map[string]map[int32]kgo.EpochOffset{}
	for k, eo := range ss.toCommit {
		if m[k.topic] == nil {
			m[k.topic] = map[int32]kgo.EpochOffset{}
		}
		m[k.topic][k.partition] = eo
	}
	return m
}

// committedTo records that the broker accepted offset for k, and forgets
// k's pending offset when it is no later; commitMu is held.
func (ss *session) committedTo(k tp, offset int64) {
	if offset > ss.committed[k] {
		ss.committed[k] = offset
	}
	if ss.s.ckpt != nil {
		ss.s.ckpt.committed(k, offset)
	}
	if eo, ok := ss.toCommit[k]; ok && eo.Offset <= ss.committed[k] {
		delete(ss.toCommit, k)
	}
}
