package verify

import (
	"cmp"
	"context"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"sort"
	"strings"
	"sync"

	"github.com/kafkas3/kafkas3/format"
	"github.com/kafkas3/kafkas3/index"
	"github.com/kafkas3/kafkas3/partition"
	"github.com/kafkas3/kafkas3/s3store"
)

// Problem kinds, as Problem.Kind and the JSON "kind" give them.
const (
	KindIndex   = "index"   // the index cannot be read (malformed index object, listing failure)
	KindGap     = "gap"     // offsets no live entry accounts for
	KindOverlap = "overlap" // offsets held by two or more live entries
	KindMissing = "missing" // an indexed object is not in the store
	KindSize    = "size"    // an indexed object's size differs from the index
	KindSHA256  = "sha256"  // (--deep) an indexed object's SHA-256 differs from the index
	// KindChecksum: an indexed object's CRC32C differs from the index:
	// the one the store keeps (plain verify), or the one --deep computes.
	KindChecksum  = "checksum"
	KindDecode    = "decode"    // (--deep) an indexed object does not decode
	KindRecords   = "records"   // (--deep) an indexed object holds another number of records
	KindOffsets   = "offsets"   // (--deep) an envelope object's offsets differ from the entry's runs
	KindUnindexed = "unindexed" // an object under topics.dir with no live index entry
	KindEmpty     = "empty"     // a topic of Config.Topics has neither index entries nor objects
	// KindLost: offsets the index records as lost before archiving (Kafka
	// deleted them before the sink read them); accepted, not a problem,
	// with Config.AcceptLost.
	KindLost = "lost"
)

// Config says what to verify and how.
type Config struct {
	Keys partition.KeyConfig
	// Format reads value objects (format.class with compression) for Deep.
	Format format.Format
	// IndexPrefix is kafkas3.index.prefix.
	IndexPrefix string
	// Topics limits the check to these archived topics; empty checks every
	// topic of the index and every topic folder under topics.dir.
	Topics []string
	// Deep reads every indexed object: re-hashes it, decodes it and
	// checks its record count (and, for envelope objects, its offsets).
	Deep bool
	// AcceptLost lists the ranges lost before archiving in
	// Report.Accepted instead of Report.Problems: they alone do not make
	// the archive unclean.
	AcceptLost bool
	// Progress, when set, is called after each object Deep reads, with
	// the objects and bytes read so far and the totals.
	Progress func(done, total int, bytes, totalBytes int64)
	// Concurrency bounds the store requests in flight: the index's
	// listings and reads (index.LoadOptions) and plain verification's
	// requests for stored checksums (HEADs, for the objects the listing's
	// ETags do not prove) and the listing of topics.dir (its folders
	// listed this many at a time, s3store.ListParallel, beside the
	// index's load); 0 means DefaultConcurrency.
	Concurrency int
}

// DefaultConcurrency is Config.Concurrency's default, the index loader's.
const DefaultConcurrency = index.DefaultConcurrency

// Problem is one thing wrong with the archive.
type Problem struct {
	Kind      string `json:"kind"`
	Topic     string `json:"topic,omitempty"`
	Partition int32  `json:"partition"`
	// Key is the object (or index object) concerned; empty for gaps and
	// overlaps.
	Key string `json:"key,omitempty"`
	// First and Last are the offsets concerned (gaps, overlaps,
	// the entry's offsets for object problems); -1 when unknown.
	First int64 `json:"first"`
	Last  int64 `json:"last"`
	// Keys are the entries sharing an overlap.
	Keys   []string `json:"keys,omitempty"`
	Detail string   `json:"detail"`
}

// Partition is the coverage of one topic partition.
type Partition struct {
	Topic     string `json:"topic"`
	Partition int32  `json:"partition"`
	// From and Commit bound the offsets the index accounts for: [From,
	// Commit-1] (see index.Partition).
	From    int64 `json:"from"`
	Commit  int64 `json:"commit"`
	Records int64 `json:"records"` // offsets held, each once
	Absent  int64 `json:"absent"`  // offsets read by the sink but absent (compaction, markers, skipped)
	Lost    int64 `json:"lost"`    // offsets lost before archiving (deleted from Kafka before the sink read them)
	Entries int   `json:"entries"` // live index entries
	Objects int   `json:"objects"` // objects of the live entries
	Bytes   int64 `json:"bytes"`   // their sizes, from the index
	// Problems counts the problems of this partition.
	Problems int `json:"problems"`
	// PrunedBelow is the partition's prune watermark (index.Watermark; 0:
	// none): its offsets below it were pruned on purpose (kafkas3 prune),
	// neither gaps nor missing objects.
	PrunedBelow int64 `json:"pruned_below,omitempty"`
}

// Report is the outcome of a verification.
type Report struct {
	// Clean is true when the verification found no problem.
	Clean        bool        `json:"clean"`
	Deep         bool        `json:"deep"`
	IndexObjects int         `json:"index_objects"`
	Superseded   int         `json:"superseded"`
	Partitions   []Partition `json:"partitions"`
	// Unindexed counts the objects under topics.dir without an index
	// entry (each is also a problem).
	Unindexed int `json:"unindexed"`
	// PrunedLeft counts the objects below a partition's prune watermark
	// that are still in the store (Object Lock kept them, or a prune was
	// interrupted): not a problem, their records were pruned.
	PrunedLeft int       `json:"pruned_left"`
	Problems   []Problem `json:"problems"`
	// Accepted are the problems Config.AcceptLost accepts (KindLost): listed,
	// but the archive is clean without them.
	Accepted []Problem `json:"accepted"`
	// ObjectsRead and BytesRead count what Deep read.
	ObjectsRead int   `json:"objects_read"`
	BytesRead   int64 `json:"bytes_read"`
	// StoreChecksums tells whether the store keeps a checksum of each
	// object (s3store.Checksummer: S3, not a local directory). Without
	// --deep, each object listed with its entry's size is proven one of
	// three ways. ETagsCompared objects were listed with the ETag their
	// entry records (the one the store answered when the sink committed
	// them): the object the sink wrote, proven by the listing alone.
	// ChecksumsCompared objects had the CRC32C the store keeps compared
	// with the index's (one HEAD each): their entry records no ETag (an
	// older archive) or another one (the same bytes written again, under
	// SSE-KMS or another s3.part.size). NoChecksum objects had only their
	// size compared: the store keeps no full-object CRC32C for them (no
	// StoreChecksums, a composite multipart checksum) or their entry
	// gives none (a v1 entry, SHA-256 only).
	StoreChecksums    bool `json:"store_checksums"`
	ETagsCompared     int  `json:"etags_compared"`
	ChecksumsCompared int  `json:"checksums_compared"`
	NoChecksum        int  `json:"no_checksum"`
}

// Run verifies the archive in store. It returns an error only when it
// cannot do its job (the store cannot be listed); everything wrong with
// the archive is a Problem of the report.
//
// It holds the listing of topics.dir (about 150 bytes an object) and one
// partition of the index at a time (index.EachPartition, a few partitions
// loaded at once), not the whole index: what it keeps of a partition is
// its coverage and problems. --deep reads the index twice, the first time
// only to count the objects and bytes its progress reports.
func Run(ctx context.Context, cfg Config, store s3store.Store, log *slog.Logger) (*Report, error) {
	if log == nil {
		log = slog.New(slog.DiscardHandler)
	}
	rep := &Report{Deep: cfg.Deep, Partitions: []Partition{}, Problems: []Problem{}, Accepted: []Problem{}}
	_, rep.StoreChecksums = store.(s3store.Checksummer)
	lctx, cancel := context.WithCancel(ctx)
	defer cancel()
	n := cmp.Or(cfg.Concurrency, DefaultConcurrency)
	v := &verifier{ctx: ctx, cfg: cfg, store: store, rep: rep, listing: listAsync(lctx, cfg, store),
		parts: map[partKey]*Partition{}, pruned: map[partKey]int64{}, topics: map[string]bool{}, heads: make(chan struct{}, n)}
	opt := index.LoadOptions{Concurrency: n}
	// The index's errors come first: a listing that failed skips every
	// partition, and is returned once the index is known to be readable.
	each := func(fn func(*index.Index) error) error {
		return index.EachPartition(ctx, store, cfg.IndexPrefix, cfg.Topics, opt, func(ix *index.Index) error {
			if v.waitListing() != nil {
				return nil
			}
			return fn(ix)
		})
	}
	var err error
	if cfg.Deep {
		err = each(v.countTotals)
	}
	if err == nil {
		err = each(v.partition)
	}
	if err != nil {
		cancel()
		_ = v.waitListing() // let it end
		if ctx.Err() != nil {
			return nil, ctx.Err()
		}
		if !errors.Is(err, index.ErrMalformed) {
			return nil, err
		}
		rep = &Report{Deep: cfg.Deep, StoreChecksums: rep.StoreChecksums, Partitions: []Partition{}, Accepted: []Problem{},
			Problems: []Problem{{Kind: KindIndex, Partition: -1, First: -1, Last: -1, Detail: err.Error()}}}
		return rep, nil
	}
	if err := v.waitListing(); err != nil {
		return nil, err
	}
	if v.assumed > 0 {
		log.Warn("the offsets of objects of the archive index were assumed: kafkas3 index rebuild --from-objects took their records (no envelopes) to hold consecutive offsets from the start offsets of their names",
			"entries", v.assumed)
	}
	if v.fullListings > 0 {
		log.Info("partitions of the archive index were listed in full (no checkpoint, or a writer without one): kafkas3 index rebuild makes reading them cheap",
			"partitions", v.fullListings, "index_keys_listed", v.indexKeysListed)
	}
	v.unindexed()
	v.emptyTopics()
	v.sortReport()
	log.Debug("verify done", "partitions", len(rep.Partitions), "problems", len(rep.Problems))
	return rep, nil
}

// waitListing waits for the listing of topics.dir (once) and returns its
// error.
func (v *verifier) waitListing() error {
	v.mu.Lock()
	defer v.mu.Unlock()
	if v.listing != nil {
		v.listed, v.listErr = v.listing()
		v.listing = nil
	}
	return v.listErr
}

// partition checks one partition of the index against the listing. The
// partitions EachPartition hands over at once ask the store for their
// stored checksums together (fetchStored, Config.Concurrency HEADs in
// flight between them); the rest is done one partition at a time.
func (v *verifier) partition(ix *index.Index) error {
	var stored map[string]storedSum
	if !v.cfg.Deep {
		var err error
		if stored, err = v.fetchStored(ix); err != nil {
			return err
		}
	}
	v.mu.Lock()
	defer v.mu.Unlock()
	v.rep.IndexObjects += ix.IndexObjects
	v.rep.Superseded += ix.Superseded
	v.assumed += ix.Assumed
	v.fullListings += ix.FullListings
	v.indexKeysListed += ix.Listed
	if len(ix.All) > 0 {
		v.topics[ix.All[0].Topic] = true
	}
	for _, p := range ix.Pruned {
		v.pruned[partKey{p.Topic, p.Partition}] = p.Below
		v.topics[p.Topic] = true
	}
	v.stored = stored
	chosen, findings, err := v.choose(ix)
	if err != nil {
		return err
	}
	v.coverage(chosen)
	v.checkObjects(chosen, findings)
	return nil
}

// countTotals adds the objects and bytes --deep reads of one partition
// to its progress's totals.
func (v *verifier) countTotals(ix *index.Index) error {
	v.mu.Lock()
	defer v.mu.Unlock()
	for _, es := range byKey(ix) {
		if pick := v.firstSized(es); pick != nil {
			v.total += len(pick.Objects)
			for _, o := range pick.Objects {
				v.totalBytes += o.Size
			}
		}
	}
	return nil
}

// partKey names a topic partition.
type partKey struct {
	topic string
	part  int32
}

// verifier is one Run: what it checks against and the report it fills.
type verifier struct {
	// mu guards what follows but ctx, cfg and store: EachPartition hands
	// over several partitions at once.
	mu    sync.Mutex
	ctx   context.Context
	cfg   Config
	store s3store.Store
	rep   *Report
	// listing waits for the listing of topics.dir (listAsync), until
	// waitListing has taken its result into listed and listErr.
	listing func() (map[string]listedObject, error)
	listErr error
	listed  map[string]listedObject // objects under topics.dir, by key
	// stored are the checksums the store keeps, by key (plain
	// verification: asked with a HEAD, or known from an entry whose ETag
	// the listing gives; fetchStored).
	stored map[string]storedSum
	parts  map[partKey]*Partition
	// pruned holds each partition's prune watermark.
	pruned map[partKey]int64
	// topics are the topics with index entries.
	topics map[string]bool
	// What the index loads counted, for the log.
	assumed, fullListings, indexKeysListed int
	// heads bounds the HEADs in flight of every partition at once
	// (Config.Concurrency).
	heads chan struct{}
	// Deep's progress: objects read and to read, bytes to read.
	done, total int
	totalBytes  int64
}

// finding is a problem Deep found in one object of an entry.
type finding struct {
	o            index.Object
	kind, detail string
}

// problem adds p to the report and counts it for its partition.
func (v *verifier) problem(p Problem) {
	v.rep.Problems = append(v.rep.Problems, p)
	if pp := v.parts[partKey{p.Topic, p.Partition}]; pp != nil {
		pp.Problems++
	}
}

// choose returns, for each object key, the entry its objects match: the
// live one (highest commit) unless the store holds what an older entry
// describes (a later sink run with a smaller flush.size rewrote the key
// with fewer records and a lower commit). Plain verification matches by
// size; --deep also by checksum, and returns what it found in the chosen
// entries' objects, by entry key.
func (v *verifier) choose(ix *index.Index) ([]index.Entry, map[string][]finding, error) {
	keys := byKey(ix)
	chosen := make([]index.Entry, 0, len(keys))
	findings := map[string][]finding{}
	for _, cands := range keys {
		pick := v.firstSized(cands)
		if pick == nil {
			chosen = append(chosen, *cands[0]) // missing or resized: reported by checkObjects
			continue
		}
		if v.cfg.Deep {
			var fs []finding
			var err error
			if pick, fs, err = v.deepPick(pick, cands); err != nil {
				return nil, nil, err
			}
			findings[pick.Key] = fs
		}
		chosen = append(chosen, *pick)
	}
	return chosen, findings, nil
}

// byKey returns the entries of ix by object key, in the index's order
// (keys by their first entry; each key's entries highest commit first).
func byKey(ix *index.Index) [][]*index.Entry {
	var out [][]*index.Entry
	at := map[string]int{}
	for i := range ix.All {
		e := &ix.All[i]
		k, ok := at[e.Key]
		if !ok {
			k = len(out)
			at[e.Key] = k
			out = append(out, nil)
		}
		out[k] = append(out[k], e) // highest commit first
	}
	return out
}

// deepPick reads the objects of pick, the first entry of cands (one key's
// entries, highest commit first) the listing matches. When their
// checksums differ from pick's, the first other listed candidate whose
// checksums all match is taken instead. It returns the entry taken and what was
// found in its objects.
func (v *verifier) deepPick(pick *index.Entry, cands []*index.Entry) (*index.Entry, []finding, error) {
	fs, ok, err := v.readEntry(pick)
	if err != nil {
		return nil, nil, err
	}
	for _, c := range cands {
		if ok || c == pick || !v.sized(c) {
			continue
		}
		cfs, cok, err := v.readEntry(c)
		if err != nil {
			return nil, nil, err
		}
		if cok {
			pick, fs, ok = c, cfs, true
		}
	}
	return pick, fs, nil
}

// readEntry reads every object of e (readObject) and returns what it
// found, and whether every checksum matched.
func (v *verifier) readEntry(e *index.Entry) ([]finding, bool, error) {
	var fs []finding
	shaOK := true
	for _, o := range e.Objects {
		if err := v.ctx.Err(); err != nil {
			return nil, false, err
		}
		detail, kind, n, err := readObject(v.ctx, v.cfg, v.store, e, o)
		if err != nil {
			return nil, false, err
		}
		v.done++
		v.rep.ObjectsRead++
		v.rep.BytesRead += n
		if v.cfg.Progress != nil {
			v.cfg.Progress(v.done, max(v.done, v.total), v.rep.BytesRead, max(v.rep.BytesRead, v.totalBytes))
		}
		if kind == KindSHA256 || kind == KindChecksum {
			shaOK = false
		}
		if kind != "" {
			fs = append(fs, finding{o, kind, detail})
		}
	}
	return fs, shaOK, nil
}

// coverage adds each partition's coverage of the chosen entries to the
// report, with its gaps and overlaps.
func (v *verifier) coverage(chosen []index.Entry) {
	for _, ap := range index.Analyze(chosen) {
		p := &Partition{Topic: ap.Topic, Partition: ap.Partition, From: ap.From, Commit: ap.Commit,
			Records: ap.Records, Absent: ap.Absent, Lost: ap.LostCount, Entries: len(ap.Entries)}
		for _, e := range ap.Entries {
			p.Objects += len(e.Objects)
			for _, o := range e.Objects {
				p.Bytes += o.Size
			}
		}
		p.PrunedBelow = v.pruned[partKey{ap.Topic, ap.Partition}]
		v.parts[partKey{ap.Topic, ap.Partition}] = p
		for _, g := range ap.Gaps {
			v.problem(Problem{Kind: KindGap, Topic: ap.Topic, Partition: ap.Partition, First: g.First, Last: g.Last,
				Detail: fmt.Sprintf("%d offsets %s: no index entry accounts for them", g.Len(), g)})
		}
		for _, o := range ap.Overlaps {
			v.problem(Problem{Kind: KindOverlap, Topic: ap.Topic, Partition: ap.Partition, First: o.Run.First, Last: o.Run.Last, Keys: o.Keys,
				Detail: fmt.Sprintf("%d offsets %s held by %d objects: %s", o.Run.Len(), o.Run, len(o.Keys), strings.Join(o.Keys, ", "))})
		}
		for _, r := range ap.Lost {
			v.lost(Problem{Kind: KindLost, Topic: ap.Topic, Partition: ap.Partition, First: r.First, Last: r.Last,
				Detail: fmt.Sprintf("%d offsets %s lost before archiving: Kafka deleted them (retention or DeleteRecords) before the sink read them; nothing can restore them", r.Len(), r)})
		}
	}
}

// lost reports a range lost before archiving: a problem, or with
// Config.AcceptLost an accepted one.
func (v *verifier) lost(p Problem) {
	if v.cfg.AcceptLost {
		v.rep.Accepted = append(v.rep.Accepted, p)
		return
	}
	v.problem(p)
}

// checkObjects checks the chosen entries' objects against the listing
// (and, without --deep, the checksums the store keeps), then adds what
// --deep found in them. It marks the listed objects the entries name
// (listedObject.indexed).
func (v *verifier) checkObjects(chosen []index.Entry, findings map[string][]finding) {
	for i := range chosen {
		e := &chosen[i]
		for _, o := range e.Objects {
			objProblem := func(kind, detail string) {
				v.problem(Problem{Kind: kind, Topic: e.Topic, Partition: e.Partition, Key: o.Key, First: e.First(), Last: e.Last(), Detail: detail})
			}
			l, ok := v.listed[o.Key]
			if ok && !l.indexed {
				l.indexed = true
				v.listed[o.Key] = l
			}
			switch {
			case !ok:
				objProblem(KindMissing, fmt.Sprintf("object is in the index (commit %d, offsets %s) but not in the store", e.Commit, runsText(e.Runs)))
			case l.size != o.Size:
				objProblem(KindSize, fmt.Sprintf("object has %d bytes in the store, %d in the index (commit %d)", l.size, o.Size, e.Commit))
			case !v.cfg.Deep:
				v.checkStored(e, o, objProblem)
			}
		}
		for _, f := range findings[e.Key] {
			v.problem(Problem{Kind: f.kind, Topic: e.Topic, Partition: e.Partition, Key: f.o.Key, First: e.First(), Last: e.Last(), Detail: f.detail})
		}
	}
}

// unindexed reports the listed objects no chosen entry names.
func (v *verifier) unindexed() {
	var keys []string
	for k, l := range v.listed {
		if !l.indexed {
			keys = append(keys, k)
		}
	}
	sort.Strings(keys)
	for _, k := range keys {
		p := Problem{Kind: KindUnindexed, Key: k, Partition: -1, First: -1, Last: -1,
			Detail: "object under topics.dir has no index entry (written by another tool, before the index, or its index object is gone)"}
		if n, err := v.cfg.Keys.ParseObjectKey(k); err == nil {
			p.Topic, p.Partition, p.First = n.Topic, n.Partition, n.StartOffset
			if w, ok := v.pruned[partKey{n.Topic, n.Partition}]; ok && n.StartOffset < w {
				v.rep.PrunedLeft++ // below the watermark: pruned on purpose
				continue
			}
		}
		v.rep.Unindexed++
		v.problem(p)
	}
}

// emptyTopics reports a chosen topic with nothing at all, most likely a
// typo: never "clean".
func (v *verifier) emptyTopics() {
	for _, t := range v.cfg.Topics {
		if !v.topics[t] && !hasPrefixKey(v.listed, v.cfg.Keys.TopicPrefix(t)) {
			v.problem(Problem{Kind: KindEmpty, Topic: t, Partition: -1, First: -1, Last: -1,
				Detail: fmt.Sprintf("topic has no index entry and no object under %q: check the name", v.cfg.Keys.TopicPrefix(t))})
		}
	}
}

// sortReport puts the partitions and problems in topic, partition and
// offset order and sets Clean.
func (v *verifier) sortReport() {
	rep := v.rep
	for _, p := range v.parts {
		rep.Partitions = append(rep.Partitions, *p)
	}
	sort.Slice(rep.Partitions, func(i, j int) bool {
		a, b := rep.Partitions[i], rep.Partitions[j]
		if a.Topic != b.Topic {
			return a.Topic < b.Topic
		}
		return a.Partition < b.Partition
	})
	sort.SliceStable(rep.Problems, func(i, j int) bool {
		a, b := rep.Problems[i], rep.Problems[j]
		if a.Topic != b.Topic {
			return a.Topic < b.Topic
		}
		if a.Partition != b.Partition {
			return a.Partition < b.Partition
		}
		return a.First < b.First
	})
	rep.Clean = len(rep.Problems) == 0
}

// listAsync runs listTopics in the background, so that the listing of
// topics.dir (one request per 1,000 keys, its folders Concurrency at a
// time: s3store.ListParallel) runs beside the index's load; the function it returns waits for its result. Cancel
// ctx to stop it.
func listAsync(ctx context.Context, cfg Config, store s3store.Store) func() (map[string]listedObject, error) {
	type result struct {
		listed map[string]listedObject
		err    error
	}
	ch := make(chan result, 1)
	go func() {
		listed, err := listTopics(ctx, cfg, store)
		ch <- result{listed, err}
	}()
	return func() (map[string]listedObject, error) {
		r := <-ch
		return r.listed, r.err
	}
}

// listedObject is what the listing gives of an object: its size and its
// ETag ("" from a store that has none); indexed marks an object a chosen
// entry names (checkObjects).
type listedObject struct {
	size    int64
	etag    string
	indexed bool
}

// listTopics lists the objects under topics.dir (each chosen topic's
// folder, or everything under topics.dir), without the archive index, by
// key with their sizes and ETags.
func listTopics(ctx context.Context, cfg Config, store s3store.Store) (map[string]listedObject, error) {
	out := map[string]listedObject{}
	visit := func(info s3store.ObjectInfo) error {
		if cfg.IndexPrefix != "" && strings.HasPrefix(info.Key, cfg.IndexPrefix) {
			return nil
		}
		root := strings.TrimSuffix(cfg.Keys.TopicPrefix(""), cfg.Keys.DirectoryDelim) // "<topics.dir><dd>", or ""
		if rest, ok := strings.CutPrefix(info.Key, root); ok {
			if folder, _, _ := strings.Cut(rest, cfg.Keys.DirectoryDelim); index.IsGenerationDir(folder) {
				return nil // another generation of a recreated topic
			}
		}
		out[info.Key] = listedObject{size: info.Size, etag: info.ETag}
		return nil
	}
	n, dd := cmp.Or(cfg.Concurrency, DefaultConcurrency), cfg.Keys.DirectoryDelim
	if len(cfg.Topics) > 0 {
		for _, t := range cfg.Topics {
			// The topic's folders (partition=<n>, or a layout's first
			// level) are listed n at a time.
			if err := s3store.ListParallel(ctx, store, cfg.Keys.TopicPrefix(t), dd, 1, n, visit); err != nil {
				return nil, fmt.Errorf("list archive topic %q: %w", t, err)
			}
		}
		return out, nil
	}
	prefix := cfg.Keys.TopicPrefix("")
	prefix = prefix[:len(prefix)-len(dd)] // "<topics.dir><dd>", or ""
	// topics.dir, its topic folders, and theirs (partition=<n>, ...).
	if err := s3store.ListParallel(ctx, store, prefix, dd, 3, n, visit); err != nil {
		return nil, fmt.Errorf("list archive under %q: %w", prefix, err)
	}
	return out, nil
}

// sized reports whether every object of e is listed with e's size and,
// where the store keeps a CRC32C of it (plain verification), with e's
// CRC32C.
func (v *verifier) sized(e *index.Entry) bool {
	for _, o := range e.Objects {
		if l, ok := v.listed[o.Key]; !ok || l.size != o.Size {
			return false
		}
		if st, ok := v.stored[o.Key]; ok && st.has && o.CRC32C != "" && st.crc != o.CRC32C {
			return false
		}
	}
	return true
}

// firstSized returns the first of es (highest commit first) that the
// listing (and the stored checksums) match, or nil; when only the stored
// checksums rule every entry out, the first the listing matches, whose
// checksum problem checkObjects reports.
func (v *verifier) firstSized(es []*index.Entry) *index.Entry {
	for _, e := range es {
		if v.sized(e) {
			return e
		}
	}
	for _, e := range es {
		if sizedOnly(e, v.listed) {
			return e
		}
	}
	return nil
}

// sizedOnly reports whether every object of e is listed with e's size.
func sizedOnly(e *index.Entry, listed map[string]listedObject) bool {
	for _, o := range e.Objects {
		if l, ok := listed[o.Key]; !ok || l.size != o.Size {
			return false
		}
	}
	return true
}

// hasPrefixKey reports whether a key of m starts with prefix.
func hasPrefixKey(m map[string]listedObject, prefix string) bool {
	for k := range m {
		if strings.HasPrefix(k, prefix) {
			return true
		}
	}
	return false
}

// readObject reads one indexed object completely: it checksums it (the
// checksums its entry gives: CRC32C, SHA-256 or both), decodes it
// with its format and counts its records (checking an envelope object's
// offsets against the entry's runs). It returns the problem found (kind ""
// when none) and the bytes read; an error only for a store failure other
// than a missing object.
func readObject(ctx context.Context, cfg Config, store s3store.Store, e *index.Entry, o index.Object) (detail, kind string, n int64, err error) {
	rc, err := store.Open(ctx, o.Key)
	if errors.Is(err, s3store.ErrNotExist) {
		return "object disappeared from the store while verifying", KindMissing, 0, nil
	}
	if err != nil {
		return "", "", 0, fmt.Errorf("read object %q: %w", o.Key, err)
	}
	defer rc.Close()
	sums := index.NewSummer(o.SHA256 != "")
	cr := &format.CountingReader{R: io.TeeReader(rc, sums)}
	f, ferr := formatFor(cfg, e, o)
	var records int64
	var decodeErr error
	if ferr != nil {
		decodeErr = ferr
	} else if rd, err := f.NewReader(cr); err != nil {
		decodeErr = err
	} else {
		if o.Part == index.PartValue {
			// The entry says whether the object holds envelopes; an
			// envelope record carries its offset.
			mode := format.EnvelopeNever
			if e.Envelope {
				mode = format.EnvelopeRequired
			}
			rd = format.ReadEnvelopes(rd, mode)
		}
		for {
			rec, err := rd.Read()
			if errors.Is(err, io.EOF) {
				break
			}
			if err != nil {
				decodeErr = err
				break
			}
			if e.Envelope && o.Part == index.PartValue && decodeErr == nil {
				if want := e.Offset(records); rec.Offset != want {
					kind, detail = KindOffsets, fmt.Sprintf("record %d has offset %d, the index says %d", records, rec.Offset, want)
				}
			}
			records++
		}
	}
	// Hash what is left unread (a reader may stop before the end).
	if _, err := io.Copy(io.Discard, cr); err != nil {
		if ctx.Err() != nil {
			return "", "", cr.N, ctx.Err()
		}
		return "", "", cr.N, fmt.Errorf("read object %q: %w", o.Key, err)
	}
	if kind, detail := check(sums, o, cr.N); kind != "" {
		return detail, kind, cr.N, nil
	}
	if decodeErr != nil {
		return fmt.Sprintf("object does not decode after %d records: %v", records, decodeErr), KindDecode, cr.N, nil
	}
	if records != e.Records {
		return fmt.Sprintf("object holds %d records, the index says %d (offsets %s)", records, e.Records, runsText(e.Runs)), KindRecords, cr.N, nil
	}
	return detail, kind, cr.N, nil
}

// formatFor returns the format that reads object o of e: the value format
// for value objects; for .keys and .headers objects the format their
// extension names (keys.format.class and headers.format.class may differ
// from format.class).
func formatFor(cfg Config, e *index.Entry, o index.Object) (format.Format, error) {
	if o.Part == index.PartValue {
		return cfg.Format, nil
	}
	infix := ".keys"
	if o.Part == index.PartHeaders {
		infix = ".headers"
	}
	i := strings.LastIndex(o.Key, infix+".")
	if i < 0 {
		return nil, fmt.Errorf("%w: %q has no %s extension", format.ErrUnknownFormat, o.Key, infix)
	}
	return format.ForParallel(o.Key[i+len(infix):], cfg.Format, o.Part == index.PartKeys)
}

// runsText prints runs compactly, at most a few of them.
func runsText(runs []index.Run) string {
	const max = 4
	parts := make([]string, 0, min(len(runs), max)+1)
	for i, r := range runs {
		if i == max {
			parts = append(parts, fmt.Sprintf("... (%d runs)", len(runs)))
			break
		}
		parts = append(parts, r.String())
	}
	return strings.Join(parts, ",")
}
