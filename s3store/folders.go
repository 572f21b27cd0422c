package s3store

import (
	"context"
	"errors"
	"sync"

	"github.com/kafkas3/kafkas3/internal/parallel"
)

// FolderLister is a Store that lists one level of a folder tree, as S3's
// ListObjectsV2 with a delimiter does: the keys directly under prefix
// (file, with their sizes and ETags) and the folders under it (folder:
// prefix + a name + delim), each once. A store that cannot returns
// ErrNoFolders before calling either.
type FolderLister interface {
	ListFolders(ctx context.Context, prefix, delim string, folder func(string) error, file func(ObjectInfo) error) error
}

// ErrNoFolders is returned by a FolderLister that wraps a store without
// folder listings: ListParallel then lists the plain way.
var ErrNoFolders = errors.New("store lists no folders")

// ListParallel calls fn for every object under prefix, as List does, but
// in no particular order and one call at a time: with a FolderLister it
// finds the folders depth levels under prefix (one request per 1,000
// folders, the levels' folders listed n at a time), then lists each
// folder, n at a time, so a store that answers in tens of milliseconds
// lists a long archive many pages at once. Keys directly under a level
// are listed with it. Without a FolderLister, depth 0 or n 1, it is List.
// The first error (a store's, or fn's) ends it.
func ListParallel(ctx context.Context, st Lister, prefix, delim string, depth, n int, fn func(ObjectInfo) error) error {
	fl, ok := st.(FolderLister)
	if !ok || depth <= 0 || n <= 1 || delim == "" {
		return st.List(ctx, prefix, fn)
	}
	var mu sync.Mutex
	call := func(info ObjectInfo) error {
		mu.Lock()
		defer mu.Unlock()
		return fn(info)
	}
	folders := []string{prefix}
	for level := range depth {
		found := make([][]string, len(folders))
		err := parallel.Each(ctx, n, len(folders), func(i int) error {
			return fl.ListFolders(ctx, folders[i], delim, func(f string) error {
				found[i] = append(found[i], f)
				return nil
			}, call)
		})
		if level == 0 && errors.Is(err, ErrNoFolders) {
			return st.List(ctx, prefix, fn)
		}
		if err != nil {
			return err
		}
		folders = folders[:0]
		for _, fs := range found {
			folders = append(folders, fs...)
		}
	}
	return parallel.Each(ctx, n, len(folders), func(i int) error {
		return st.List(ctx, folders[i], call)
	})
}
