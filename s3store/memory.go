package s3store

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
	"sync"
	"time"
)

// Memory is a Store held in memory, for tests. It is safe for concurrent use.
// Like S3 it keeps the CRC32C of each object (Checksummer).
type Memory struct {
	mu      sync.Mutex
	objects map[string]memObject
	tags    map[string]map[string]string // by key, set by Tag
}

type memObject struct {
	data []byte
	mod  time.Time
	crc  uint32 // CRC32C of data, computed on commit
	etag string // hex MD5 of data, as S3 gives an object of one PutObject
}

var (
	_ Store       = (*Memory)(nil)
	_ Checksummer = (*Memory)(nil)
)

// memCRC32C is the Castagnoli table of the memory store's checksums.
var memCRC32C = crc32.MakeTable(crc32.Castagnoli)

// StoredCRC32C returns the CRC32C the store computed when the object was
// committed, as S3 keeps one.
func (m *Memory) StoredCRC32C(ctx context.Context, key string) (string, bool, error) {
	m.mu.Lock()
	o, ok := m.objects[key]
	m.mu.Unlock()
	if !ok {
		return "", false, fmt.Errorf("memory store: head %q: %w", key, ErrNotExist)
	}
	return base64.StdEncoding.EncodeToString(binary.BigEndian.AppendUint32(nil, o.crc)), true, nil
}

// NewMemory returns an empty in-memory store.
func NewMemory() *Memory {
	return &Memory{objects: map[string]memObject{}}
}

// Create starts a new object at key; it becomes visible on Commit.
func (m *Memory) Create(ctx context.Context, key string) (ObjectWriter, error) {
	if key == "" {
		return nil, fmt.Errorf("memory store: create %q: %w: empty key", key, ErrInvalidKey)
	}
	if err := ctx.Err(); err != nil {
		return nil, fmt.Errorf("memory store: create %q: %w", key, err)
	}
	return &memWriter{m: m, key: key}, nil
}

// Open returns the object's bytes.
func (m *Memory) Open(ctx context.Context, key string) (io.ReadCloser, error) {
	m.mu.Lock()
	o, ok := m.objects[key]
	m.mu.Unlock()
	if !ok {
		return nil, fmt.Errorf("memory store: open %q: %w", key, ErrNotExist)
	}
	return io.NopCloser(bytes.NewReader(o.data)), nil
}

// Stat describes the object.
func (m *Memory) Stat(ctx context.Context, key string) (ObjectInfo, error) {
	m.mu.Lock()
	o, ok := m.objects[key]
	m.mu.Unlock()
	if !ok {
		return ObjectInfo{}, fmt.Errorf("memory store: stat %q: %w", key, ErrNotExist)
	}
	return ObjectInfo{Key: key, Size: int64(len(o.data)), ModTime: o.mod, ETag: o.etag}, nil
}

// List calls fn for each object under prefix in lexical key order. It works
// on a snapshot, so fn may use the store.
func (m *Memory) List(ctx context.Context, prefix string, fn func(ObjectInfo) error) error {
	return m.ListAfter(ctx, prefix, "", fn)
}

// ListAfter is List of the keys after after.
func (m *Memory) ListAfter(ctx context.Context, prefix, after string, fn func(ObjectInfo) error) error {
	m.mu.Lock()
	infos := make([]ObjectInfo, 0, len(m.objects))
	for k, o := range m.objects {
		if strings.HasPrefix(k, prefix) && k > after {
			infos = append(infos, ObjectInfo{Key: k, Size: int64(len(o.data)), ModTime: o.mod, ETag: o.etag})
		}
	}
	m.mu.Unlock()
	sort.Slice(infos, func(i, j int) bool { return infos[i].Key < infos[j].Key })
	for _, info := range infos {
		if err := ctx.Err(); err != nil {
			return err
		}
		if err := fn(info); err != nil {
			return err
		}
	}
	return nil
}

// Check always succeeds.
func (m *Memory) Check(ctx context.Context) error { return nil }

type memWriter struct {
	m         *Memory
	key       string
	buf       bytes.Buffer
	done      bool
	committed bool
	etag      string // the committed object's
}

var _ ETagger = (*memWriter)(nil)

// ETag returns the committed object's ETag: the hex MD5 of its bytes, as
// S3 gives an object of one PutObject; "" before Commit returned nil.
func (w *memWriter) ETag() string { return w.etag }

// memETag is the memory store's ETag of data.
func memETag(data []byte) string {
	sum := md5.Sum(data)
	return hex.EncodeToString(sum[:])
}

func (w *memWriter) Write(p []byte) (int, error) {
	if w.done {
		return 0, fmt.Errorf("memory store: write %q: %w", w.key, ErrClosed)
	}
	return w.buf.Write(p)
}

func (w *memWriter) Commit(ctx context.Context) error {
	if w.done {
		return fmt.Errorf("memory store: commit %q: %w", w.key, ErrClosed)
	}
	w.done = true
	if err := ctx.Err(); err != nil {
		return fmt.Errorf("memory store: commit %q: %w", w.key, err)
	}
	w.committed = true
	w.m.mu.Lock()
	w.etag = memETag(w.buf.Bytes())
	w.m.objects[w.key] = memObject{data: bytes.Clone(w.buf.Bytes()), mod: time.Now(), crc: crc32.Checksum(w.buf.Bytes(), memCRC32C), etag: w.etag}
	w.m.mu.Unlock()
	w.buf = bytes.Buffer{}
	return nil
}

func (w *memWriter) Abort(ctx context.Context) error {
	w.done = true
	w.buf = bytes.Buffer{}
	return nil
}
