package s3store

import (
	"bufio"
	"context"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"log/slog"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"syscall"
)

// LocalConfig configures a Store in a local directory.
type LocalConfig struct {
	// Dir is the root directory; object keys are paths below it. It is
	// created (with parents) if missing.
	Dir string
}

// Local is a Store in a local directory. A key's '/' separators become
// directories. An object is written to a hidden temp file next to its final
// name (".<name>.tmp-<random>") and renamed into place on Commit, after an
// fsync of the file and followed by an fsync of the directory, so a crash
// leaves either the old object, the new one, or an ignored temp file.
//
// A key cannot be both an object and a directory ("a" and "a/b"); the
// second Create of such a pair fails.
type Local struct {
	dir string
	log *slog.Logger
	// fileMode and dirMode are what objects and directories get: the
	// process umask applied to 0666 and 0777, never world-writable.
	fileMode, dirMode fs.FileMode
	readDir           func(string) ([]os.DirEntry, error) // os.ReadDir; tests record the walk
}

var _ Store = (*Local)(nil)

const (
	tmpMarker       = ".tmp-"
	localBufferSize = 64 << 10
)

// NewLocal returns a Store rooted at cfg.Dir. It does not touch the
// directory; call Check for that.
func NewLocal(cfg LocalConfig, log *slog.Logger) (*Local, error) {
	if cfg.Dir == "" {
		return nil, errors.New("local store: directory is empty")
	}
	dir, err := filepath.Abs(cfg.Dir)
	if err != nil {
		return nil, fmt.Errorf("local store: directory %q: %w", cfg.Dir, err)
	}
	if log == nil {
		log = slog.New(slog.DiscardHandler)
	}
	umask := processUmask()
	return &Local{dir: dir, log: log, readDir: os.ReadDir,
		fileMode: 0o666 &^ umask &^ 0o002, dirMode: 0o777 &^ umask &^ 0o002}, nil
}

// Dir returns the absolute root directory.
func (l *Local) Dir() string { return l.dir }

// isTempName reports whether a file name is one of Local's temp files.
func isTempName(name string) bool {
	return strings.HasPrefix(name, ".") && strings.Contains(name, tmpMarker)
}

// path checks key and returns its file path.
func (l *Local) path(key string) (string, error) {
	if key == "" {
		return "", fmt.Errorf("local store: key %q: %w: empty", key, ErrInvalidKey)
	}
	if strings.HasPrefix(key, "/") {
		return "", fmt.Errorf("local store: key %q: %w: absolute path", key, ErrInvalidKey)
	}
	if strings.ContainsRune(key, 0) || strings.ContainsRune(key, '\\') {
		return "", fmt.Errorf("local store: key %q: %w: contains NUL or backslash", key, ErrInvalidKey)
	}
	for _, c := range strings.Split(key, "/") {
		switch {
		case c == "":
			return "", fmt.Errorf("local store: key %q: %w: empty path component", key, ErrInvalidKey)
		case c == "." || c == "..":
			return "", fmt.Errorf("local store: key %q: %w: %q path component", key, ErrInvalidKey, c)
		case isTempName(c):
			return "", fmt.Errorf("local store: key %q: %w: component %q looks like a temp file", key, ErrInvalidKey, c)
		}
	}
	return filepath.Join(l.dir, filepath.FromSlash(key)), nil
}

// Create starts a temp file next to key's final path.
func (l *Local) Create(ctx context.Context, key string) (ObjectWriter, error) {
	p, err := l.path(key)
	if err != nil {
		return nil, err
	}
	if err := ctx.Err(); err != nil {
		return nil, fmt.Errorf("local store: create %q: %w", key, err)
	}
	dir, name := filepath.Split(p)
	if err := os.MkdirAll(dir, l.dirMode); err != nil {
		return nil, fmt.Errorf("local store: create %q: %w", key, err)
	}
	f, err := os.CreateTemp(dir, "."+name+tmpMarker+"*")
	if err != nil {
		return nil, fmt.Errorf("local store: create %q: %w", key, err)
	}
	return &localWriter{key: key, path: p, f: f, mode: l.fileMode, bw: bufio.NewWriterSize(f, localBufferSize)}, nil
}

// Open opens the object's file.
func (l *Local) Open(ctx context.Context, key string) (io.ReadCloser, error) {
	p, err := l.path(key)
	if err != nil {
		return nil, err
	}
	f, err := os.Open(p)
	if err != nil {
		return nil, fmt.Errorf("local store: open %q: %w", key, mapFSError(err))
	}
	if st, err := f.Stat(); err != nil || !st.Mode().IsRegular() {
		_ = f.Close()
		if err == nil {
			err = ErrNotExist
		}
		return nil, fmt.Errorf("local store: open %q: not a regular file: %w", key, err)
	}
	return f, nil
}

// Stat describes the object's file.
func (l *Local) Stat(ctx context.Context, key string) (ObjectInfo, error) {
	p, err := l.path(key)
	if err != nil {
		return ObjectInfo{}, err
	}
	st, err := os.Stat(p)
	if err != nil {
		return ObjectInfo{}, fmt.Errorf("local store: stat %q: %w", key, mapFSError(err))
	}
	if !st.Mode().IsRegular() {
		return ObjectInfo{}, fmt.Errorf("local store: stat %q: not a regular file: %w", key, ErrNotExist)
	}
	return ObjectInfo{Key: key, Size: st.Size(), ModTime: st.ModTime()}, nil
}

func mapFSError(err error) error {
	switch {
	case errors.Is(err, fs.ErrNotExist), errors.Is(err, fs.ErrInvalid):
		return fmt.Errorf("%w (%w)", ErrNotExist, err)
	case errors.Is(err, fs.ErrPermission):
		return fmt.Errorf("%w (%w)", ErrAccessDenied, err)
	}
	if errors.Is(err, syscall.ENOTDIR) {
		// A path component is a file, so the key cannot exist.
		return fmt.Errorf("%w (%w)", ErrNotExist, err)
	}
	return err
}

// List walks only the directories that can hold keys with prefix, in
// lexical key order, skipping temp files.
func (l *Local) List(ctx context.Context, prefix string, fn func(ObjectInfo) error) error {
	return l.ListAfter(ctx, prefix, "", fn)
}

// ListAfter is List of the keys after after; it skips the directories
// whose keys all sort before it.
func (l *Local) ListAfter(ctx context.Context, prefix, after string, fn func(ObjectInfo) error) error {
	// Start at the deepest directory named by the prefix.
	base := ""
	if i := strings.LastIndex(prefix, "/"); i >= 0 {
		base = prefix[:i+1]
	}
	if strings.HasPrefix(base, "/") || strings.Contains("/"+base, "/../") {
		return fmt.Errorf("local store: list prefix %q: %w", prefix, ErrInvalidKey)
	}
	return l.walk(ctx, base, prefix, after, fn)
}

// walk lists directory rel (a key prefix ending in '/', or "") in key
// order, from the first key after after.
func (l *Local) walk(ctx context.Context, rel, prefix, after string, fn func(ObjectInfo) error) error {
	if err := ctx.Err(); err != nil {
		return err
	}
	entries, err := l.readDir(filepath.Join(l.dir, filepath.FromSlash(rel)))
	if err != nil {
		if rel != "" && (errors.Is(err, fs.ErrNotExist) || errors.Is(err, syscall.ENOTDIR)) {
			return nil // missing, removed while walking, or a file
		}
		return fmt.Errorf("local store: list %q: %w", prefix, err)
	}
	// Keys under directory d all start with "d/", so sorting directories
	// as name+"/" gives lexical key order.
	sortName := func(e fs.DirEntry) string {
		if e.IsDir() {
			return e.Name() + "/"
		}
		return e.Name()
	}
	sort.Slice(entries, func(i, j int) bool { return sortName(entries[i]) < sortName(entries[j]) })
	for _, e := range entries {
		key := rel + e.Name()
		if e.IsDir() {
			d := key + "/"
			// Every key under d sorts before after when after is
			// above d without starting with it.
			before := after > d && !strings.HasPrefix(after, d)
			if (strings.HasPrefix(d, prefix) || strings.HasPrefix(prefix, d)) && !before {
				if err := l.walk(ctx, d, prefix, after, fn); err != nil {
					return err
				}
			}
			continue
		}
		if isTempName(e.Name()) || !strings.HasPrefix(key, prefix) || key <= after || !e.Type().IsRegular() {
			continue
		}
		info, err := e.Info()
		if err != nil {
			if errors.Is(err, fs.ErrNotExist) {
				continue
			}
			return fmt.Errorf("local store: list %q: %w", prefix, err)
		}
		if err := fn(ObjectInfo{Key: key, Size: info.Size(), ModTime: info.ModTime()}); err != nil {
			return err
		}
	}
	return nil
}

// Check creates the directory if missing and proves it writable by creating
// and removing a probe file.
func (l *Local) Check(ctx context.Context) error {
	if err := os.MkdirAll(l.dir, l.dirMode); err != nil {
		return fmt.Errorf("local store: directory %q: %w", l.dir, mapFSError(err))
	}
	st, err := os.Stat(l.dir)
	if err != nil {
		return fmt.Errorf("local store: directory %q: %w", l.dir, mapFSError(err))
	}
	if !st.IsDir() {
		return fmt.Errorf("local store: %q is not a directory", l.dir)
	}
	f, err := os.CreateTemp(l.dir, ".kafkas3-check"+tmpMarker+"*")
	if err != nil {
		return fmt.Errorf("local store: directory %q is not writable: %w", l.dir, mapFSError(err))
	}
	name := f.Name()
	_ = f.Close()
	if err := os.Remove(name); err != nil {
		return fmt.Errorf("local store: directory %q: removing probe file: %w", l.dir, err)
	}
	l.log.Debug("local store ready", "dir", l.dir)
	return nil
}

type localWriter struct {
	key, path string
	mode      fs.FileMode // the object's mode on Commit
	f         *os.File
	bw        *bufio.Writer
	done      bool
}

func (w *localWriter) Write(p []byte) (int, error) {
	if w.done {
		return 0, fmt.Errorf("local store: write %q: %w", w.key, ErrClosed)
	}
	n, err := w.bw.Write(p)
	if err != nil {
		return n, fmt.Errorf("local store: write %q: %w", w.key, err)
	}
	return n, nil
}

// Commit flushes, fsyncs and renames the temp file into place, then fsyncs
// the directory. On failure the temp file is removed.
func (w *localWriter) Commit(ctx context.Context) error {
	if w.done {
		return fmt.Errorf("local store: commit %q: %w", w.key, ErrClosed)
	}
	w.done = true
	tmp := w.f.Name()
	err := ctx.Err()
	if err == nil {
		err = w.bw.Flush()
	}
	if err == nil {
		err = w.f.Chmod(w.mode)
	}
	if err == nil {
		err = w.f.Sync()
	}
	if cerr := w.f.Close(); err == nil {
		err = cerr
	}
	if err == nil {
		err = os.Rename(tmp, w.path)
	}
	if err != nil {
		_ = os.Remove(tmp)
		return fmt.Errorf("local store: commit %q: %w", w.key, err)
	}
	if err := syncDir(filepath.Dir(w.path)); err != nil {
		return fmt.Errorf("local store: commit %q: sync directory: %w", w.key, err)
	}
	return nil
}

// Abort removes the temp file. It is a no-op after Commit or Abort.
func (w *localWriter) Abort(ctx context.Context) error {
	if w.done {
		return nil
	}
	w.done = true
	_ = w.f.Close()
	if err := os.Remove(w.f.Name()); err != nil && !errors.Is(err, fs.ErrNotExist) {
		return fmt.Errorf("local store: abort %q: %w", w.key, err)
	}
	return nil
}

func syncDir(dir string) error {
	d, err := os.Open(dir)
	if err != nil {
		return err
	}
	err = d.Sync()
	if cerr := d.Close(); err == nil {
		err = cerr
	}
	return err
}
