package s3store_test

import (
	"errors"
	"io/fs"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/kafkas3/kafkas3/s3store"
	"github.com/kafkas3/kafkas3/s3store/storetest"
)

func newLocal(t *testing.T, dir string) *s3store.Local {
	t.Helper()
	st, err := s3store.NewLocal(s3store.LocalConfig{Dir: dir}, nil)
	if err != nil {
		t.Fatalf("NewLocal: %v", err)
	}
	return st
}

// tempFiles returns the writer temp files left under dir.
func tempFiles(t *testing.T, dir string) []string {
	t.Helper()
	var left []string
	err := filepath.WalkDir(dir, func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if !d.IsDir() && strings.HasPrefix(d.Name(), ".") && strings.Contains(d.Name(), ".tmp-") {
			left = append(left, p)
		}
		return nil
	})
	if err != nil {
		t.Fatalf("walking %s: %v", dir, err)
	}
	return left
}

func TestLocalConformance(t *testing.T) {
	storetest.Run(t, func(t *testing.T) s3store.Store {
		dir := filepath.Join(t.TempDir(), "store") // missing: Check creates it
		st := newLocal(t, dir)
		t.Cleanup(func() {
			if left := tempFiles(t, dir); len(left) > 0 {
				t.Errorf("temp files left behind: %v", left)
			}
		})
		return st
	})
}

func TestLocalRejectsBadKeys(t *testing.T) {
	st := newLocal(t, t.TempDir())
	ctx := t.Context()
	for _, key := range []string{"", "/abs", "a/../b", "..", "../escape", "a/./b", "a//b", "a/", "a\\b", "a/.b.tmp-123", "nul\x00"} {
		w, err := st.Create(ctx, key)
		if err == nil {
			_ = w.Abort(ctx)
			t.Errorf("Create(%q) succeeded", key)
			continue
		}
		if !errors.Is(err, s3store.ErrInvalidKey) {
			t.Errorf("Create(%q) error = %v, want ErrInvalidKey", key, err)
		}
		if !strings.Contains(err.Error(), strconvQuote(key)) {
			t.Errorf("Create(%q) error %q does not name the key", key, err)
		}
		if _, err := st.Stat(ctx, key); !errors.Is(err, s3store.ErrInvalidKey) {
			t.Errorf("Stat(%q) error = %v, want ErrInvalidKey", key, err)
		}
		if _, err := st.Open(ctx, key); !errors.Is(err, s3store.ErrInvalidKey) {
			t.Errorf("Open(%q) error = %v, want ErrInvalidKey", key, err)
		}
	}
	if err := st.List(ctx, "../", func(s3store.ObjectInfo) error { return nil }); !errors.Is(err, s3store.ErrInvalidKey) {
		t.Errorf("List(../) error = %v, want ErrInvalidKey", err)
	}
}

func strconvQuote(s string) string {
	q := []byte{'"'}
	for _, r := range s {
		switch r {
		case 0:
			q = append(q, `\x00`...)
		case '\\':
			q = append(q, `\\`...)
		default:
			q = append(q, string(r)...)
		}
	}
	return string(append(q, '"'))
}

func TestLocalLayoutAndTempFiles(t *testing.T) {
	dir := t.TempDir()
	st := newLocal(t, dir)
	ctx := t.Context()
	w, err := st.Create(ctx, "topics/t/partition=0/t+0+0000000000.json")
	if err != nil {
		t.Fatalf("Create: %v", err)
	}
	if _, err := w.Write([]byte("{}\n")); err != nil {
		t.Fatalf("Write: %v", err)
	}
	// The temp file sits next to the final name and is invisible.
	left := tempFiles(t, dir)
	if len(left) != 1 || filepath.Dir(left[0]) != filepath.Join(dir, "topics", "t", "partition=0") {
		t.Fatalf("temp files = %v, want one in the target directory", left)
	}
	var listed []string
	if err := st.List(ctx, "", func(i s3store.ObjectInfo) error { listed = append(listed, i.Key); return nil }); err != nil {
		t.Fatal(err)
	}
	if len(listed) != 0 {
		t.Errorf("List shows %v before Commit", listed)
	}
	if err := w.Commit(ctx); err != nil {
		t.Fatalf("Commit: %v", err)
	}
	data, err := os.ReadFile(filepath.Join(dir, "topics", "t", "partition=0", "t+0+0000000000.json"))
	if err != nil || string(data) != "{}\n" {
		t.Fatalf("final file = %q, %v", data, err)
	}
	if left := tempFiles(t, dir); len(left) != 0 {
		t.Errorf("temp files after Commit: %v", left)
	}
	// A stale temp file from a crash is ignored by List.
	stale := filepath.Join(dir, "topics", "t", "partition=0", ".t+0+0000000099.json.tmp-123")
	if err := os.WriteFile(stale, []byte("partial"), 0o600); err != nil {
		t.Fatal(err)
	}
	listed = nil
	if err := st.List(ctx, "topics/", func(i s3store.ObjectInfo) error { listed = append(listed, i.Key); return nil }); err != nil {
		t.Fatal(err)
	}
	if !slices.Equal(listed, []string{"topics/t/partition=0/t+0+0000000000.json"}) {
		t.Errorf("List = %v", listed)
	}
}

func TestLocalCheck(t *testing.T) {
	base := t.TempDir()
	dir := filepath.Join(base, "new", "store")
	if err := newLocal(t, dir).Check(t.Context()); err != nil {
		t.Fatalf("Check on a missing directory: %v", err)
	}
	if st, err := os.Stat(dir); err != nil || !st.IsDir() {
		t.Fatalf("Check did not create %s: %v", dir, err)
	}
	if left := tempFiles(t, dir); len(left) != 0 {
		t.Errorf("Check left %v", left)
	}
	file := filepath.Join(base, "file")
	if err := os.WriteFile(file, nil, 0o644); err != nil {
		t.Fatal(err)
	}
	err := newLocal(t, file).Check(t.Context())
	if err == nil || !strings.Contains(err.Error(), file) {
		t.Errorf("Check on a file = %v, want an error naming %s", err, file)
	}
	if _, err := s3store.NewLocal(s3store.LocalConfig{}, nil); err == nil {
		t.Error("NewLocal with no directory succeeded")
	}
}
