package verify

import (
	"context"
	"errors"
	"fmt"
	"sync"

	"github.com/kafkas3/kafkas3/index"
	"github.com/kafkas3/kafkas3/s3store"
)

// This file holds the checksums: the stored ones plain verification
// knows from the listing's ETags or asks the store for (one HEAD per
// object the ETags do not prove, in parallel) and compares with the
// index, and the ones --deep computes while reading.

// check compares the checksums of the n bytes summed with o's: it returns
// the problem kind and detail of the first that differs, or "".
func check(s *index.Summer, o index.Object, n int64) (kind, detail string) {
	got := s.Object(o.Key, o.Part)
	if o.CRC32C != "" && got.CRC32C != o.CRC32C {
		return KindChecksum, fmt.Sprintf("object's CRC32C is %s, the index says %s (%d bytes read)", got.CRC32C, o.CRC32C, n)
	}
	if o.SHA256 != "" && got.SHA256 != o.SHA256 {
		return KindSHA256, fmt.Sprintf("object's SHA-256 is %s, the index says %s (%d bytes read)", got.SHA256, o.SHA256, n)
	}
	return "", ""
}

// storedSum is what the store answered for an object's stored checksum,
// or what an ETag proves of it.
type storedSum struct {
	crc  string
	has  bool // the store keeps a full-object CRC32C of it
	gone bool // the object disappeared after the listing
	// etag: the listing gives the object the ETag an index entry records
	// for it (with the entry's size): it is the object the sink wrote
	// then, whose bytes the store checked against the entry's CRC32C on
	// receipt, so crc is the entry's, and no HEAD was asked.
	etag bool
}

// fetchStored returns the stored checksums of one partition's objects:
// of every listed object that an index entry describes with the listed
// size. An object the listing gives the ETag an entry records is proven
// by it, with no request (proveByETag). Of each other one that an entry
// describes with a CRC32C, the store is asked the CRC32C it keeps (one
// HEAD each; Config.Concurrency in flight, shared with the partitions
// checked beside it); a store that keeps no checksum (no
// s3store.Checksummer) is asked nothing. It reads the listing under v.mu
// and asks the store without it. It returns an error only when the store
// fails.
func (v *verifier) fetchStored(ix *index.Index) (map[string]storedSum, error) {
	stored := map[string]storedSum{}
	cs, ok := v.store.(s3store.Checksummer)
	var keys []string
	v.mu.Lock()
	proveByETag(ix, v.listed, stored)
	for i := range ix.All {
		for _, o := range ix.All[i].Objects {
			if !ok {
				break
			}
			if l, listed := v.listed[o.Key]; !listed || l.size != o.Size || o.CRC32C == "" {
				continue
			}
			if _, known := stored[o.Key]; !known {
				stored[o.Key] = storedSum{} // asked: filled below
				keys = append(keys, o.Key)
			}
		}
	}
	v.mu.Unlock()
	if len(keys) == 0 {
		return stored, nil
	}
	sums, err := v.head(cs, keys)
	for i, k := range keys {
		stored[k] = sums[i]
	}
	return stored, err
}

// proveByETag records in stored, for every listed object that an index
// entry describes with the listed size and ETag, the CRC32C of the first
// such entry (the highest commit): the store's ETag proves the object is
// the one the sink committed then. An ETag that differs proves nothing
// (the same bytes written again may get another: SSE-KMS, SSE-C, another
// s3.part.size); fetchStored asks for the stored checksum of those.
func proveByETag(ix *index.Index, listed map[string]listedObject, stored map[string]storedSum) {
	for i := range ix.All {
		for _, o := range ix.All[i].Objects {
			if o.ETag == "" {
				continue
			}
			l, ok := listed[o.Key]
			if !ok || l.size != o.Size || l.etag != o.ETag {
				continue
			}
			if _, known := stored[o.Key]; !known {
				stored[o.Key] = storedSum{crc: o.CRC32C, has: o.CRC32C != "", etag: true}
			}
		}
	}
}

// checkStored compares object o of the chosen entry e, listed at its
// size, with the checksum the store keeps (or its ETag proves): a
// problem (report) when they differ or the object is gone; counted in
// the report either way.
func (v *verifier) checkStored(e *index.Entry, o index.Object, report func(kind, detail string)) {
	st := v.stored[o.Key]
	switch {
	case st.gone:
		report(KindMissing, "object disappeared from the store while verifying")
	case st.etag && (o.ETag == v.listed[o.Key].etag || st.has && st.crc == o.CRC32C):
		v.rep.ETagsCompared++
	case !st.has: // not asked, or the store keeps none
		v.rep.NoChecksum++
	case st.crc != o.CRC32C:
		v.rep.ChecksumsCompared++
		how := "the store keeps CRC32C " + st.crc
		if st.etag {
			how = "the store's ETag for it is that of an index entry with CRC32C " + st.crc
		}
		report(KindChecksum, fmt.Sprintf("%s for the object, the index says %s (commit %d): the object was replaced or changed since the sink wrote it",
			how, o.CRC32C, e.Commit))
	default:
		v.rep.ChecksumsCompared++
	}
}

// head asks the store for the stored checksum of each key, up to
// Config.Concurrency at once, and returns them in keys' order. It
// returns the first error other than a missing object (storedSum.gone).
func (v *verifier) head(cs s3store.Checksummer, keys []string) ([]storedSum, error) {
	out := make([]storedSum, len(keys))
	if len(keys) == 0 {
		return out, nil
	}
	n := v.cfg.Concurrency
	if n <= 0 {
		n = DefaultConcurrency
	}
	ctx, cancel := context.WithCancel(v.ctx)
	defer cancel()
	work := make(chan int)
	var (
		wg       sync.WaitGroup
		mu       sync.Mutex
		firstErr error
	)
	for range min(n, len(keys)) {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i := range work {
				select {
				case v.heads <- struct{}{}:
				case <-ctx.Done():
					continue
				}
				crc, has, err := cs.StoredCRC32C(ctx, keys[i])
				<-v.heads
				switch {
				case errors.Is(err, s3store.ErrNotExist):
					out[i].gone = true
				case err != nil:
					mu.Lock()
					if firstErr == nil {
						firstErr = fmt.Errorf("read the stored checksum of object %q: %w", keys[i], err)
					}
					mu.Unlock()
					cancel()
				default:
					out[i] = storedSum{crc: crc, has: has}
				}
			}
		}()
	}
feed:
	for i := range keys {
		select {
		case work <- i:
		case <-ctx.Done():
			break feed
		}
	}
	close(work)
	wg.Wait()
	if firstErr != nil {
		return out, firstErr
	}
	return out, v.ctx.Err()
}
