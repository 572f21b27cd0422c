package scale

import (
	"bytes"
	"context"
	"crypto/md5"
	"encoding/base64"
	"encoding/binary"
	"encoding/hex"
	"fmt"
	"hash/crc32"
	"io"
	"sort"
	"strings"
	"sync/atomic"
	"time"

	"github.com/kafkas3/kafkas3/s3store"
)

// pageSize is the keys one listing request returns, as S3's
// ListObjectsV2 does by default.
const pageSize = 1000

// simStore is a read-only object store built once (add, then seal) and
// read through a fixed latency per request, counting requests by kind as
// S3 would bill them: one LIST per page of pageSize keys, one GET per
// Open, one HEAD per Stat or StoredCRC32C. Its listing is a binary search
// in a sorted key slice, so the fake itself costs nothing that grows
// with the archive per request.
type simStore struct {
	latency time.Duration
	keys    []string // sorted after seal
	objects map[string][]byte
	crc     map[string]uint32
	etag    map[string]string // hex MD5, as S3 gives an object of one PutObject
	lists   atomic.Int64
	gets    atomic.Int64
	heads   atomic.Int64
}

var (
	_ s3store.Store       = (*simStore)(nil)
	_ s3store.Checksummer = (*simStore)(nil)
	_ s3store.AfterLister = (*simStore)(nil)
)

var castagnoli = crc32.MakeTable(crc32.Castagnoli)

func newSimStore() *simStore {
	return &simStore{objects: map[string][]byte{}, crc: map[string]uint32{}, etag: map[string]string{}}
}

// add stores an object directly in memory (no latency, not counted).
func (s *simStore) add(key string, data []byte) {
	if _, ok := s.objects[key]; !ok {
		s.keys = append(s.keys, key)
	}
	s.objects[key] = data
	s.crc[key] = crc32.Checksum(data, castagnoli)
	s.etag[key] = etagOf(data)
}

// etagOf is S3's ETag of data written with one PutObject.
func etagOf(data []byte) string {
	sum := md5.Sum(data)
	return hex.EncodeToString(sum[:])
}

// seal sorts the keys; call it once every object is added.
func (s *simStore) seal() { sort.Strings(s.keys) }

// counts returns the requests so far by kind.
func (s *simStore) counts() (lists, gets, heads int64) {
	return s.lists.Load(), s.gets.Load(), s.heads.Load()
}

func (s *simStore) request(ctx context.Context, n *atomic.Int64) error {
	n.Add(1)
	if s.latency <= 0 {
		return ctx.Err()
	}
	t := time.NewTimer(s.latency)
	defer t.Stop()
	select {
	case <-ctx.Done():
		return ctx.Err()
	case <-t.C:
		return nil
	}
}

func (s *simStore) Create(ctx context.Context, key string) (s3store.ObjectWriter, error) {
	return nil, fmt.Errorf("sim store: create %q: read-only", key)
}

func (s *simStore) Open(ctx context.Context, key string) (io.ReadCloser, error) {
	if err := s.request(ctx, &s.gets); err != nil {
		return nil, err
	}
	b, ok := s.objects[key]
	if !ok {
		return nil, fmt.Errorf("sim store: open %q: %w", key, s3store.ErrNotExist)
	}
	return io.NopCloser(bytes.NewReader(b)), nil
}

func (s *simStore) Stat(ctx context.Context, key string) (s3store.ObjectInfo, error) {
	if err := s.request(ctx, &s.heads); err != nil {
		return s3store.ObjectInfo{}, err
	}
	b, ok := s.objects[key]
	if !ok {
		return s3store.ObjectInfo{}, fmt.Errorf("sim store: stat %q: %w", key, s3store.ErrNotExist)
	}
	return s3store.ObjectInfo{Key: key, Size: int64(len(b)), ETag: s.etag[key]}, nil
}

func (s *simStore) StoredCRC32C(ctx context.Context, key string) (string, bool, error) {
	if err := s.request(ctx, &s.heads); err != nil {
		return "", false, err
	}
	c, ok := s.crc[key]
	if !ok {
		return "", false, fmt.Errorf("sim store: head %q: %w", key, s3store.ErrNotExist)
	}
	return base64.StdEncoding.EncodeToString(binary.BigEndian.AppendUint32(nil, c)), true, nil
}

func (s *simStore) List(ctx context.Context, prefix string, fn func(s3store.ObjectInfo) error) error {
	return s.ListAfter(ctx, prefix, "", fn)
}

// ListAfter pays one request per page of pageSize keys, before the page.
func (s *simStore) ListAfter(ctx context.Context, prefix, after string, fn func(s3store.ObjectInfo) error) error {
	from := max(prefix, after)
	i := sort.SearchStrings(s.keys, from)
	if i < len(s.keys) && s.keys[i] == after {
		i++
	}
	for n := 0; ; n++ {
		if n%pageSize == 0 {
			if err := s.request(ctx, &s.lists); err != nil {
				return err
			}
		}
		if i >= len(s.keys) || !strings.HasPrefix(s.keys[i], prefix) {
			return nil
		}
		k := s.keys[i]
		// Each listed ETag is a string of its own, as the SDK decodes
		// each from the page's XML.
		if err := fn(s3store.ObjectInfo{Key: k, Size: int64(len(s.objects[k])), ETag: strings.Clone(s.etag[k])}); err != nil {
			return err
		}
		i++
	}
}

// ListFolders is one level of a listing with a delimiter
// (s3store.FolderLister): the keys directly under prefix and its
// folders, one request per page of pageSize entries (a folder counts
// once). It skips each folder's keys by a search, as S3 does on its side.
func (s *simStore) ListFolders(ctx context.Context, prefix, delim string, folder func(string) error, file func(s3store.ObjectInfo) error) error {
	i := sort.SearchStrings(s.keys, prefix)
	for n := 0; ; n++ {
		if n%pageSize == 0 {
			if err := s.request(ctx, &s.lists); err != nil {
				return err
			}
		}
		if i >= len(s.keys) || !strings.HasPrefix(s.keys[i], prefix) {
			return nil
		}
		k := s.keys[i]
		if j := strings.Index(k[len(prefix):], delim); j >= 0 {
			f := k[:len(prefix)+j+len(delim)]
			if err := folder(f); err != nil {
				return err
			}
			// The first key after the folder's keys.
			i += sort.SearchStrings(s.keys[i:], f[:len(f)-len(delim)]+string(delim[0]+1))
			continue
		}
		if err := file(s3store.ObjectInfo{Key: k, Size: int64(len(s.objects[k])), ETag: strings.Clone(s.etag[k])}); err != nil {
			return err
		}
		i++
	}
}

func (s *simStore) Check(ctx context.Context) error { return nil }
