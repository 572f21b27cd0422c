package restore

import "github.com/kafkas3/kafkas3/format"

// Erasing listed keys
//
// A compliance erasure list (Config.ExcludeKeys, --exclude-keys-file)
// must hold in a restore as it held in the cluster: a record whose key is
// listed comes back as a tombstone of that key (a null value, no
// headers), where the record was. The stream keeps every record, so what
// a resumed run skips, the verification of the target's last records,
// the group offsets and the summary's counts are those of the same
// archive without a list; the transformation is made as each record is
// read (objectReader.next, erase), before it is buffered, checked or
// produced, and each produced one is counted (Summary.Erased). A re-run
// must use the same list: a record its previous run produced otherwise
// fails the verification of the target's last records.

// erase makes rec a tombstone of its key when the key is listed (and the
// filter does not drop such records instead: Filter.DropKeys).
func (r *Restorer) erase(rec *format.Record) {
	if r.cfg.Filter.DropKeys || !r.listed(rec.Key) {
		return
	}
	rec.Value, rec.ValueTyped, rec.Headers = nil, nil, nil
}

// erased tells whether rec is a tombstone of a listed key, as erase
// leaves it (counted when produced).
func (r *Restorer) erased(rec *format.Record) bool {
	if r.cfg.Filter.DropKeys || rec.Value != nil || rec.Key == nil || len(r.cfg.ExcludeKeys) == 0 {
		return false
	}
	if r.listed(rec.Key) {
		return true
	}
	_, ok := r.rewrittenListed.Load(string(rec.Key)) // a listed key with its schema id rewritten (schemas.go)
	return ok
}

// listed tells whether key, as archived, is in Config.ExcludeKeys (a null
// key never is). Whether a record is erased or dropped is decided on its
// archived key alone, whatever other records' keys became.
func (r *Restorer) listed(key []byte) bool {
	if key == nil || len(r.cfg.ExcludeKeys) == 0 {
		return false
	}
	_, ok := r.cfg.ExcludeKeys[string(key)]
	return ok
}
