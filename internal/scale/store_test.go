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
	"slices"
	"sort"
	"strings"
	"sync/atomic"
	"time"
	"unsafe"

	"github.com/kafkas3/kafkas3/s3store"
)

// pageSize is the keys one listing request returns, as S3's
// ListObjectsV2 does by default.
const pageSize = 1000

// simStore is a read-only object store built once (add, then seal) and
// read through a fixed latency per request, counting requests by kind as
// S3 would bill them: one LIST per page of pageSize keys, one GET per
// Open, one HEAD per Stat or StoredCRC32C. Its listing is a binary search
// in its sorted objects, so the fake itself costs nothing that grows with
// the archive per request.
//
// It holds no pointer per object: every key and body is in one byte
// slice and every object is a fixed-size record of offsets into it, so
// the Go collector, which marks only what holds pointers, does not walk a
// million objects of the fake's each time it collects the measured
// step's garbage (a kafkas3 process has no such heap to mark).
type simStore struct {
	latency time.Duration
	blob    []byte      // every key and body, one after the other
	objs    []simObject // sorted by key after seal
	lists   atomic.Int64
	gets    atomic.Int64
	heads   atomic.Int64
}

// simObject is one object of a simStore: where its key and body are in
// blob, its CRC32C and its ETag (the MD5 of its body, as S3 gives an
// object of one PutObject).
type simObject struct {
	keyAt, dataAt uint64
	keyLen        uint32
	dataLen       uint32
	crc           uint32
	md5           [16]byte
}

var (
	_ s3store.Store       = (*simStore)(nil)
	_ s3store.Checksummer = (*simStore)(nil)
	_ s3store.AfterLister = (*simStore)(nil)
)

var castagnoli = crc32.MakeTable(crc32.Castagnoli)

func newSimStore() *simStore { return &simStore{} }

// add stores an object directly in memory (no latency, not counted); of
// two with one key, seal keeps the last.
func (s *simStore) add(key string, data []byte) {
	o := simObject{keyAt: uint64(len(s.blob)), keyLen: uint32(len(key)), crc: crc32.Checksum(data, castagnoli), md5: md5.Sum(data)}
	s.blob = append(s.blob, key...)
	o.dataAt, o.dataLen = uint64(len(s.blob)), uint32(len(data))
	s.blob = append(s.blob, data...)
	s.objs = append(s.objs, o)
}

// etagOf is S3's ETag of data written with one PutObject.
func etagOf(data []byte) string {
	sum := md5.Sum(data)
	return hex.EncodeToString(sum[:])
}

// seal sorts the objects by key, keeping the last added of each key;
// call it once every object is added.
func (s *simStore) seal() {
	sort.SliceStable(s.objs, func(i, j int) bool { return s.keyBytes(i) < s.keyBytes(j) })
	out := s.objs[:0]
	for i := range s.objs {
		if len(out) > 0 && s.keyBytes(i) == s.key(&out[len(out)-1]) {
			out[len(out)-1] = s.objs[i]
			continue
		}
		out = append(out, s.objs[i])
	}
	s.objs = slices.Clip(out)
}

// keyBytes is the key of object i, without a copy (for comparisons).
func (s *simStore) keyBytes(i int) string { return s.key(&s.objs[i]) }

// key returns o's key without a copy: callers that keep it must clone it.
func (s *simStore) key(o *simObject) string {
	return unsafe.String(&s.blob[o.keyAt], int(o.keyLen))
}

func (s *simStore) data(o *simObject) []byte { return s.blob[o.dataAt : o.dataAt+uint64(o.dataLen)] }

// find returns the position of the first object whose key is at least k.
func (s *simStore) find(k string) int {
	return sort.Search(len(s.objs), func(i int) bool { return s.keyBytes(i) >= k })
}

// lookup returns the object of key k, or nil.
func (s *simStore) lookup(k string) *simObject {
	if i := s.find(k); i < len(s.objs) && s.keyBytes(i) == k {
		return &s.objs[i]
	}
	return nil
}

// info is what a listing or a Stat gives of o: a key and an ETag of
// their own, as the SDK decodes each from the answer.
func (s *simStore) info(o *simObject) s3store.ObjectInfo {
	return s3store.ObjectInfo{Key: strings.Clone(s.key(o)), Size: int64(o.dataLen), ETag: hex.EncodeToString(o.md5[:])}
}

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

// Delete refuses: the store is read-only (prune's dry run deletes nothing).
func (s *simStore) Delete(ctx context.Context, keys []string) (map[string]error, error) {
	return nil, fmt.Errorf("sim store: delete %d keys: read-only", len(keys))
}

func (s *simStore) Open(ctx context.Context, key string) (io.ReadCloser, error) {
	if err := s.request(ctx, &s.gets); err != nil {
		return nil, err
	}
	o := s.lookup(key)
	if o == nil {
		return nil, fmt.Errorf("sim store: open %q: %w", key, s3store.ErrNotExist)
	}
	return io.NopCloser(bytes.NewReader(s.data(o))), nil
}

func (s *simStore) Stat(ctx context.Context, key string) (s3store.ObjectInfo, error) {
	if err := s.request(ctx, &s.heads); err != nil {
		return s3store.ObjectInfo{}, err
	}
	o := s.lookup(key)
	if o == nil {
		return s3store.ObjectInfo{}, fmt.Errorf("sim store: stat %q: %w", key, s3store.ErrNotExist)
	}
	return s.info(o), nil
}

func (s *simStore) StoredCRC32C(ctx context.Context, key string) (string, bool, error) {
	if err := s.request(ctx, &s.heads); err != nil {
		return "", false, err
	}
	o := s.lookup(key)
	if o == nil {
		return "", false, fmt.Errorf("sim store: head %q: %w", key, s3store.ErrNotExist)
	}
	return base64.StdEncoding.EncodeToString(binary.BigEndian.AppendUint32(nil, o.crc)), true, nil
}

func (s *simStore) List(ctx context.Context, prefix string, fn func(s3store.ObjectInfo) error) error {
	return s.ListAfter(ctx, prefix, "", fn)
}

// page is a listing's step at its n-th entry, object i: one request at
// the start of each page of pageSize entries, and done past the keys
// under prefix.
func (s *simStore) page(ctx context.Context, n, i int, prefix string) (done bool, err error) {
	if n%pageSize == 0 {
		if err := s.request(ctx, &s.lists); err != nil {
			return true, err
		}
	}
	return i >= len(s.objs) || !strings.HasPrefix(s.keyBytes(i), prefix), nil
}

// ListAfter pays one request per page of pageSize keys, before the page.
func (s *simStore) ListAfter(ctx context.Context, prefix, after string, fn func(s3store.ObjectInfo) error) error {
	from := max(prefix, after)
	i := s.find(from)
	if i < len(s.objs) && s.keyBytes(i) == after {
		i++
	}
	for n := 0; ; n++ {
		if done, err := s.page(ctx, n, i, prefix); done || err != nil {
			return err
		}
		if err := fn(s.info(&s.objs[i])); err != nil {
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
	i := s.find(prefix)
	for n := 0; ; n++ {
		if done, err := s.page(ctx, n, i, prefix); done || err != nil {
			return err
		}
		k := s.keyBytes(i)
		if j := strings.Index(k[len(prefix):], delim); j >= 0 {
			f := strings.Clone(k[:len(prefix)+j+len(delim)])
			if err := folder(f); err != nil {
				return err
			}
			// The first key after the folder's keys.
			i = s.find(f[:len(f)-len(delim)] + string(delim[0]+1))
			continue
		}
		if err := file(s.info(&s.objs[i])); err != nil {
			return err
		}
		i++
	}
}

func (s *simStore) Check(ctx context.Context) error { return nil }
