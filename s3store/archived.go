package s3store

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"strings"
	"sync"

	"github.com/kafkas3/kafkas3/internal/parallel"
)

// This file holds the check that an archive can be read before anything
// of it is: objects in an archive tier (S3 Glacier Flexible Retrieval,
// GLACIER, and Glacier Deep Archive, DEEP_ARCHIVE) cannot be read until
// they are restored (RestoreObject), and GetObject answers them with 403
// InvalidObjectState. A listing gives each object's storage class, so
// only the archive-tier objects are asked (HeadObject) whether a restored
// copy exists.

// ErrArchived is returned (wrapped) when an object cannot be read because
// it is in an archive tier and not restored (S3's InvalidObjectState),
// and by ArchivedError.
var ErrArchived = errors.New("object is in an archive storage class and not restored")

// ArchivedError names the objects of an archive tier without a restored
// copy: the first few (Keys, each with its class) and how many (Count).
type ArchivedError struct {
	Keys  []string // "key (CLASS)", sorted, at most ArchivedShown
	Count int
}

// ArchivedShown is how many objects an ArchivedError names.
const ArchivedShown = 10

func (e *ArchivedError) Error() string {
	more := ""
	if e.Count > len(e.Keys) {
		more = fmt.Sprintf(" and %d more", e.Count-len(e.Keys))
	}
	return fmt.Sprintf("%d objects are in an archive storage class (GLACIER or DEEP_ARCHIVE) and not restored, so they cannot be read; nothing was read or produced: %s%s. "+
		"Restore them first (for each: aws s3api restore-object --bucket <s3.bucket.name> --key <key> --restore-request '{\"Days\":7,\"GlacierJobParameters\":{\"Tier\":\"Standard\"}}'; "+
		"Bulk is cheaper, and Standard takes 3-5 hours for GLACIER, 12 for DEEP_ARCHIVE), wait until aws s3api head-object shows ongoing-request=\"false\", then run again",
		e.Count, strings.Join(e.Keys, ", "), more)
}

func (e *ArchivedError) Unwrap() error { return ErrArchived }

// ArchiveTierCheck collects, from a listing, the objects of an archive
// tier (Add, safe for concurrent use), then asks the store whether each
// has a restored copy (Check). It holds the archive-tier objects' keys
// and classes only (about 40 bytes and the key each), none of the others.
type ArchiveTierCheck struct {
	mu       sync.Mutex
	archived []tierObject
}

// tierObject is one listed object of an archive tier.
type tierObject struct{ key, class string }

// Add notes info when its storage class is an archive tier.
func (c *ArchiveTierCheck) Add(info ObjectInfo) {
	if !ArchiveTier(info.StorageClass) {
		return
	}
	c.mu.Lock()
	c.archived = append(c.archived, tierObject{key: info.Key, class: info.StorageClass})
	c.mu.Unlock()
}

// Check stats the noted objects, concurrency at a time, and returns an
// *ArchivedError naming those without a restored copy, or nil.
func (c *ArchiveTierCheck) Check(ctx context.Context, st Store, concurrency int) error {
	c.mu.Lock()
	objs := c.archived
	c.mu.Unlock()
	if len(objs) == 0 {
		return nil
	}
	var mu sync.Mutex
	var missing []string // the first ones in key order, at most 4*ArchivedShown
	count := 0
	err := parallel.Each(ctx, max(concurrency, 1), len(objs), func(i int) error {
		info, err := st.Stat(ctx, objs[i].key)
		if err != nil {
			return fmt.Errorf("ask whether archived object %q (%s) is restored: %w", objs[i].key, objs[i].class, err)
		}
		if !info.Restored {
			mu.Lock()
			missing = append(missing, objs[i].key+" ("+objs[i].class+")")
			count++
			if len(missing) > 4*ArchivedShown {
				slices.Sort(missing)
				missing = missing[:ArchivedShown]
			}
			mu.Unlock()
		}
		return nil
	})
	if err != nil || len(missing) == 0 {
		return err
	}
	slices.Sort(missing)
	return &ArchivedError{Keys: missing[:min(len(missing), ArchivedShown)], Count: count}
}
