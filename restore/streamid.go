package restore

import (
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"slices"
)

// What a resumed stream must be
//
// A re-run finds a partition's restore by counting records: the first
// E-E0 of the stream are in the target (the prefix rule), or the
// position committed with a repartitioning stream's records says how
// many of them are. That count is only meaningful over the same stream.
// Beyond the archive, a stream is a function of its first source offset
// (`kafkas3 prune` moves it up) and of the records the run leaves out or
// erases (Config.Filter, Config.ExcludeKeys). streamID names them; the
// resume markers and positions keep it, and a run whose stream differs
// from the one that landed records is refused before producing
// (errOtherStream), naming the partition: counting over another stream
// would skip or repeat records.

// streamID names partition pp's stream as a resume counts it; "" when it
// cannot say (a follow-mode plan from a mark starts past the stream's
// beginning: follow mode checks its streams itself, checkStreams).
func (r *Restorer) streamID(pp *PartitionPlan) string {
	if pp.base != nil {
		return ""
	}
	h := sha256.New()
	fmt.Fprintf(h, "first %d\nfilter %s\nerase %s\n", pp.FirstOffset, r.cfg.Filter.String(), r.erasureDigest())
	return hex.EncodeToString(h.Sum(nil)[:8])
}

// erasureDigest is a digest of Config.ExcludeKeys ("" without), computed
// once.
func (r *Restorer) erasureDigest() string {
	r.eraseDigestOnce.Do(func() {
		if len(r.cfg.ExcludeKeys) == 0 {
			return
		}
		keys := make([]string, 0, len(r.cfg.ExcludeKeys))
		for k := range r.cfg.ExcludeKeys {
			keys = append(keys, k)
		}
		slices.Sort(keys)
		h := sha256.New()
		for _, k := range keys {
			fmt.Fprintf(h, "%d:%s", len(k), k)
		}
		r.eraseDigest = hex.EncodeToString(h.Sum(nil)[:8])
	})
	return r.eraseDigest
}

// otherStream is the error of a resume over another stream than the one
// whose records landed: landed of them, of what restore, recorded under
// what (a group's name).
func otherStream(what string, landed int64, under string) error {
	return fmt.Errorf("%w: %d records of %s landed from another record stream than this run's (%s): "+
		"the archive was pruned below what the restore read, or the filters or the erasure list (--key-regex, --header, --from, "+
		"--exclude-keys-file, --exclude-action) differ; counting over this stream would skip or repeat records. "+
		"Run with the same flags, or restore into another topic",
		ErrMarkerMismatch, landed, what, under)
}
