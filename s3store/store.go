package s3store

import (
	"context"
	"errors"
	"io"
	"strings"
	"time"
)

// ErrNotExist is returned (wrapped) when an object or bucket does not exist.
var ErrNotExist = errors.New("object does not exist")

// ErrAccessDenied is returned (wrapped) when the store refuses the
// credentials or the operation (S3 403, a directory that is not writable).
var ErrAccessDenied = errors.New("access denied")

// ErrClosed is returned (wrapped) by an ObjectWriter used after Commit or
// Abort.
var ErrClosed = errors.New("object writer already committed or aborted")

// ErrInvalidKey is returned (wrapped) for a key the store cannot hold, such
// as an empty key or, in a local directory, one that would escape it.
var ErrInvalidKey = errors.New("invalid object key")

// AfterLister is a Store that lists from a key on (S3's StartAfter): the
// listing of a long history's newest keys then costs what they cost, not
// what the history does.
type AfterLister interface {
	// ListAfter is List of the keys that sort after after.
	ListAfter(ctx context.Context, prefix, after string, fn func(ObjectInfo) error) error
}

// Lister is the listing of a Store.
type Lister interface {
	List(ctx context.Context, prefix string, fn func(ObjectInfo) error) error
}

// ListAfter calls fn for every object under prefix whose key sorts after
// after, in lexical key order: through the store's ListAfter when it has
// one, else by skipping the earlier keys of List.
func ListAfter(ctx context.Context, st Lister, prefix, after string, fn func(ObjectInfo) error) error {
	if al, ok := st.(AfterLister); ok {
		return al.ListAfter(ctx, prefix, after, fn)
	}
	return st.List(ctx, prefix, func(info ObjectInfo) error {
		if info.Key <= after {
			return nil
		}
		return fn(info)
	})
}

// Checksummer is a Store that keeps a checksum of each object, computed
// on receipt, and reports it without a download (S3: HeadObject with
// checksum mode enabled). kafkas3 verify compares it with the archive
// index's. A Store without it (a local directory) keeps none.
type Checksummer interface {
	// StoredCRC32C returns the CRC32C of the whole object as the store
	// keeps it, printed as S3 prints it (base64 of the 4 big-endian bytes),
	// and true; or "" and false when the store keeps no full-object CRC32C
	// for it (written without one, or a multipart upload's composite
	// checksum). A missing key gives an error wrapping ErrNotExist.
	StoredCRC32C(ctx context.Context, key string) (string, bool, error)
}

// ObjectInfo describes one stored object.
type ObjectInfo struct {
	Key     string
	Size    int64
	ModTime time.Time
	// ETag is the object's entity tag as the store prints it, without
	// its quotes (S3: the MD5 of an object of one PutObject, the MD5 of
	// its parts' MD5s and "-<parts>" for a multipart upload, an opaque
	// value under SSE-KMS or SSE-C); "" for a store that has none (a
	// local directory). Listings and Stat give it.
	ETag string
	// StorageClass is the object's storage class as S3 names it
	// (STANDARD, STANDARD_IA, GLACIER, DEEP_ARCHIVE, ...), from listings
	// and Stat; "" when the store does not say (STANDARD on S3).
	StorageClass string
	// Restored is set, by Stat only, when an object of an archive tier
	// (ArchiveTier) has a restored copy that can be read (S3's
	// x-amz-restore: ongoing-request="false").
	Restored bool
}

// ETagger is an ObjectWriter that knows, once Commit has returned nil,
// the ETag the store gave the object it committed (as ObjectInfo.ETag
// prints it; "" when the store answered none).
type ETagger interface {
	ETag() string
}

// TrimETag strips the quotes S3 puts around an ETag.
func TrimETag(etag string) string {
	return strings.Trim(etag, `"`)
}

// ObjectWriter streams one object. The object becomes visible only when
// Commit returns nil (multipart complete, or rename). Abort discards
// everything written and leaves nothing behind. After Commit or Abort the
// writer must not be used, except that Abort after Commit is a no-op.
type ObjectWriter interface {
	io.Writer
	Commit(ctx context.Context) error
	Abort(ctx context.Context) error
}

// Store is an object store: S3, a local directory, or memory in tests.
type Store interface {
	// Create starts a new object at key. An existing object at key is
	// replaced when the new one is committed.
	Create(ctx context.Context, key string) (ObjectWriter, error)
	// Open reads a whole object. A missing key gives an error wrapping ErrNotExist.
	Open(ctx context.Context, key string) (io.ReadCloser, error)
	// Stat describes one object. A missing key gives an error wrapping ErrNotExist.
	Stat(ctx context.Context, key string) (ObjectInfo, error)
	// List calls fn for every object whose key starts with prefix, in
	// lexical key order. An error from fn stops the listing and is returned.
	List(ctx context.Context, prefix string, fn func(ObjectInfo) error) error
	// Check verifies that the store is reachable and writable (bucket
	// exists, credentials allow access) before any work starts. Its error
	// names the bucket or directory.
	Check(ctx context.Context) error
}
