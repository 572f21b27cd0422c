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
// the store for (one HEAD per object, in parallel), and the ones --deep
// computes while reading.

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

// headJob is one object whose stored checksum plain verification compares
// with its entry's, and what the store answered.
type headJob struct {
	e      *index.Entry
	o      index.Object
	stored string
	has    bool
	err    error
}

// checksums compares, for each object of the chosen entries that the
// listing holds at the index's size, the CRC32C the store keeps with the
// entry's (KindChecksum), with up to Config.Concurrency HEADs at once. It
// counts in the report what it compared and what it could not: a store
// that keeps no checksum (Report.StoreChecksums false), an object without
// a full-object CRC32C in the store, a v1 entry. It returns an error only
// when the store fails.
func (v *verifier) checksums(chosen []index.Entry) error {
	cs, ok := v.store.(s3store.Checksummer)
	var jobs []*headJob
	for i := range chosen {
		e := &chosen[i]
		for _, o := range e.Objects {
			if size, listed := v.listed[o.Key]; !listed || size != o.Size {
				continue // missing or resized: already a problem
			}
			if !ok || o.CRC32C == "" {
				v.rep.NoChecksum++
				continue
			}
			jobs = append(jobs, &headJob{e: e, o: o})
		}
	}
	if err := v.head(cs, jobs); err != nil {
		return err
	}
	for _, j := range jobs {
		problem := func(kind, detail string) {
			v.problem(Problem{Kind: kind, Topic: j.e.Topic, Partition: j.e.Partition, Key: j.o.Key, First: j.e.First(), Last: j.e.Last(), Detail: detail})
		}
		switch {
		case errors.Is(j.err, s3store.ErrNotExist):
			problem(KindMissing, "object disappeared from the store while verifying")
		case !j.has:
			v.rep.NoChecksum++
		case j.stored != j.o.CRC32C:
			v.rep.ChecksumsCompared++
			problem(KindChecksum, fmt.Sprintf("the store keeps CRC32C %s for the object, the index says %s (commit %d): the object was replaced or changed since the sink wrote it (--deep reads it)",
				j.stored, j.o.CRC32C, j.e.Commit))
		default:
			v.rep.ChecksumsCompared++
		}
	}
	return nil
}

// head asks the store for the stored checksum of each job, up to
// Config.Concurrency at once. It returns the first error other than a
// missing object, which stays on its job.
func (v *verifier) head(cs s3store.Checksummer, jobs []*headJob) error {
	if len(jobs) == 0 {
		return nil
	}
	n := v.cfg.Concurrency
	if n <= 0 {
		n = DefaultConcurrency
	}
	ctx, cancel := context.WithCancel(v.ctx)
	defer cancel()
	work := make(chan *headJob)
	var (
		wg       sync.WaitGroup
		mu       sync.Mutex
		firstErr error
	)
	for range min(n, len(jobs)) {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for j := range work {
				j.stored, j.has, j.err = cs.StoredCRC32C(ctx, j.o.Key)
				if j.err != nil && !errors.Is(j.err, s3store.ErrNotExist) {
					mu.Lock()
					if firstErr == nil {
						firstErr = fmt.Errorf("read the stored checksum of object %q: %w", j.o.Key, j.err)
					}
					mu.Unlock()
					cancel()
				}
			}
		}()
	}
feed:
	for _, j := range jobs {
		select {
		case work <- j:
		case <-ctx.Done():
			break feed
		}
	}
	close(work)
	wg.Wait()
	if firstErr != nil {
		return firstErr
	}
	return v.ctx.Err()
}
