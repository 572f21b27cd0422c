package index

import (
	"sort"
)

// This file holds the last step of LoadWith: merging the entries the
// reads gave into the Index. Its memory is the load's peak, so it keeps
// one copy of every entry (Index.All is the merged slice itself, not a
// copy of it), one string per topic, topic id and writer, and a 4-byte
// position per entry to find the live ones.

// merged is every entry a load read, with the writer of the index object
// each was written in (ws[i] is es[i]'s), sorted together.
type merged struct {
	es []Entry
	ws []string
}

func (m *merged) Len() int { return len(m.es) }

func (m *merged) Swap(i, j int) {
	m.es[i], m.es[j] = m.es[j], m.es[i]
	m.ws[i], m.ws[j] = m.ws[j], m.ws[i]
}

// Less sorts by topic, partition, first offset, key, then newest first
// (outranks).
func (m *merged) Less(i, j int) bool {
	a, b := &m.es[i], &m.es[j]
	if !sameGroup(a, b) {
		return groupLess(a, b)
	}
	return outranks(a, m.ws[i], b, m.ws[j])
}

// interner keeps one copy of each string it has seen: the topic, topic id
// and writer of a million entries are a handful of strings.
type interner map[string]string

func (in interner) of(s string) string {
	if v, ok := in[s]; ok {
		return v
	}
	in[s] = s
	return s
}

// gather copies the entries of res into one merged, interning their
// repeated strings, and lets each result's entries go as it is copied.
func gather(res []readResult) (m *merged, total int) {
	n := 0
	for _, r := range res {
		n += len(r.entries)
		total += len(r.entries) + r.dropped
	}
	m = &merged{es: make([]Entry, 0, n), ws: make([]string, 0, n)}
	in := interner{}
	for i := range res {
		w := in.of(res[i].writer)
		for _, e := range res[i].entries {
			e.Topic, e.TopicID = in.of(e.Topic), in.of(e.TopicID)
			for k := range e.Objects {
				if e.Objects[k].Key == e.Key {
					e.Objects[k].Key = e.Key // one copy of the value object's key
				}
			}
			m.es = append(m.es, e)
			m.ws = append(m.ws, w)
		}
		res[i].entries = nil
	}
	return m, total
}

// mergeResults builds the Index of what the reads gave.
func mergeResults(res []readResult) *Index {
	ix := &Index{}
	for _, r := range res {
		ix.IndexObjects += r.logObjects
		if r.checkpoint {
			ix.Checkpoints++
		}
		ix.Checkpoints += r.checkpoints
	}
	m, total := gather(res)
	sort.Sort(m)
	// Drop the entries that only restamp a kept one of their group (the
	// entries of the same topic, partition, first offset and key), in
	// place.
	kept := 0
	group := 0 // start of the current group among the kept entries
	for i := range m.es {
		if kept > 0 && !sameGroup(&m.es[kept-1], &m.es[i]) {
			group = kept
		}
		if restampsKept(m.es[group:kept], &m.es[i]) {
			continue
		}
		m.es[kept], m.ws[kept] = m.es[i], m.ws[i]
		kept++
	}
	clear(m.es[kept:])
	ix.All = m.es[:kept:kept]
	live := liveOf(ix.All, m.ws[:kept])
	ix.Superseded = total - len(live)
	ix.Entries = make([]Entry, len(live))
	rebuilt := FromObjectsWriter()
	for i, p := range live {
		ix.Entries[i] = ix.All[p]
		if !ix.All[p].Envelope && m.ws[p] == rebuilt {
			ix.Assumed++
		}
	}
	sortAll(ix.Entries)
	return ix
}

// liveOf returns the position in all of each object key's live entry:
// the one that outranks every other entry of its key.
func liveOf(all []Entry, ws []string) []int32 {
	pos := make([]int32, len(all))
	for i := range pos {
		pos[i] = int32(i)
	}
	sort.Slice(pos, func(i, j int) bool {
		a, b := &all[pos[i]], &all[pos[j]]
		if a.Key != b.Key {
			return a.Key < b.Key
		}
		return outranks(a, ws[pos[i]], b, ws[pos[j]])
	})
	live := pos[:0]
	for i, p := range pos {
		if i == 0 || all[p].Key != all[pos[i-1]].Key {
			live = append(live, p)
		}
	}
	return live
}

// restampsKept tells whether e restamps one of group, the entries kept so
// far of its topic, partition, first offset and key (each outranks e).
func restampsKept(group []Entry, e *Entry) bool {
	for i := range group {
		if Restamped(e, &group[i]) {
			return true
		}
	}
	return false
}

func sameGroup(a, b *Entry) bool {
	return a.Topic == b.Topic && a.Partition == b.Partition && a.First() == b.First() && a.Key == b.Key
}

// groupLess orders entries of different groups by topic, partition,
// first offset and key.
func groupLess(a, b *Entry) bool {
	if a.Topic != b.Topic {
		return a.Topic < b.Topic
	}
	if a.Partition != b.Partition {
		return a.Partition < b.Partition
	}
	if a.First() != b.First() {
		return a.First() < b.First()
	}
	return a.Key < b.Key
}

// outranks tells whether a, written by writer wa, is newer than b,
// written by wb, an entry of the same object key: a higher commit or, for
// the same commit, an index object whose key sorts first (the one a
// listing reads first). Entries of one object key are of one topic and
// partition, so their index objects' keys of one commit differ only in
// their ends (keyEnd).
func outranks(a *Entry, wa string, b *Entry, wb string) bool {
	if a.Commit != b.Commit {
		return a.Commit > b.Commit
	}
	return wa != wb && keyEnd(wa) < keyEnd(wb)
}

// keyEnd is what follows the commit in the key of writer w's index
// object (Key): "-<writer>.jsonl", or ".jsonl" without a writer.
func keyEnd(w string) string {
	if w == "" {
		return ext
	}
	return "-" + w + ext
}
