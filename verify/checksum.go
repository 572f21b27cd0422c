package verify

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"hash"
	"hash/crc32"
	"sync"

	"github.com/kafkas3/kafkas3/index"
	"github.com/kafkas3/kafkas3/s3store"
)

// This file holds the checksums: the stored ones plain verification asks
// the store for (one HEAD per object, in parallel) and compares with the
// index, and the ones --deep computes while reading.

// castagnoli is the CRC32C table (hardware accelerated by hash/crc32).
var castagnoli = crc32.MakeTable(crc32.Castagnoli)

// summer computes, over the bytes written to it, the checksums an index
// object gives: the CRC32C of a v2 entry's object, the SHA-256 when the
// entry has one (v1 always, v2 with kafkas3.index.digest=sha256).
type summer struct {
	crc    uint32
	useCRC bool
	sha    hash.Hash // nil when the entry gives no SHA-256
}

func newSummer(o index.Object) *summer {
	s := &summer{useCRC: o.CRC32C != ""}
	if o.SHA256 != "" {
		s.sha = sha256.New()
	}
	return s
}

func (s *summer) Write(p []byte) (int, error) {
	if s.useCRC {
		s.crc = crc32.Update(s.crc, castagnoli, p)
	}
	if s.sha != nil {
		s.sha.Write(p)
	}
	return len(p), nil
}

// check compares the checksums of the n bytes read with o's: it returns
// the problem kind and detail of the first that differs, or "".
func (s *summer) check(o index.Object, n int64) (kind, detail string) {
	if s.useCRC {
		if got := index.FormatCRC32C(s.crc); got != o.CRC32C {
			return KindChecksum, fmt.Sprintf("object's CRC32C is %s, the index says %s (%d bytes read)", got, o.CRC32C, n)
		}
	}
	if s.sha != nil {
		if got := hex.EncodeToString(s.sha.Sum(nil)); got != o.SHA256 {
			return KindSHA256, fmt.Sprintf("object's SHA-256 is %s, the index says %s (%d bytes read)", got, o.SHA256, n)
		}
	}
	return "", ""
}

// storedSum is what the store answered for an object's stored checksum.
type storedSum struct {
	crc  string
	has  bool // the store keeps a full-object CRC32C of it
	gone bool // the object disappeared after the listing
}

// fetchStored asks the store for the CRC32C it keeps of every listed
// object that an index entry describes with a CRC32C and the listed size
// (one HEAD each, up to Config.Concurrency at once), into v.stored. A
// store that keeps no checksum (no s3store.Checksummer) is asked nothing.
// It returns an error only when the store fails.
func (v *verifier) fetchStored(ix *index.Index) error {
	cs, ok := v.store.(s3store.Checksummer)
	if !ok {
		return nil
	}
	v.stored = map[string]storedSum{}
	var keys []string
	seen := map[string]bool{}
	for i := range ix.All {
		for _, o := range ix.All[i].Objects {
			if size, listed := v.listed[o.Key]; listed && size == o.Size && o.CRC32C != "" && !seen[o.Key] {
				seen[o.Key] = true
				keys = append(keys, o.Key)
			}
		}
	}
	sums, err := v.head(cs, keys)
	for i, k := range keys {
		v.stored[k] = sums[i]
	}
	return err
}

// checkStored compares object o of the chosen entry e, listed at its
// size, with the checksum the store keeps: a problem (report) when they
// differ or the object is gone; counted in the report either way.
func (v *verifier) checkStored(e *index.Entry, o index.Object, report func(kind, detail string)) {
	st, asked := v.stored[o.Key]
	switch {
	case !asked || (!st.has && !st.gone):
		v.rep.NoChecksum++
	case st.gone:
		report(KindMissing, "object disappeared from the store while verifying")
	case st.crc != o.CRC32C:
		v.rep.ChecksumsCompared++
		report(KindChecksum, fmt.Sprintf("the store keeps CRC32C %s for the object, the index says %s (commit %d): the object was replaced or changed since the sink wrote it",
			st.crc, o.CRC32C, e.Commit))
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
				crc, has, err := cs.StoredCRC32C(ctx, keys[i])
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
