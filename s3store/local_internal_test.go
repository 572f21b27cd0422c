package s3store

import (
	"os"
	"path/filepath"
	"slices"
	"testing"
)

func TestLocalListWalksOnlyUnderPrefix(t *testing.T) {
	dir := t.TempDir()
	st, err := NewLocal(LocalConfig{Dir: dir}, nil)
	if err != nil {
		t.Fatal(err)
	}
	for _, k := range []string{"a/x/1", "a/y/2", "ab/3", "b/z/4", "a-c/5"} {
		w, err := st.Create(t.Context(), k)
		if err != nil {
			t.Fatal(err)
		}
		if err := w.Commit(t.Context()); err != nil {
			t.Fatal(err)
		}
	}
	var visited []string
	st.readDir = func(name string) ([]os.DirEntry, error) {
		rel, _ := filepath.Rel(dir, name)
		visited = append(visited, filepath.ToSlash(rel))
		return os.ReadDir(name)
	}
	cases := []struct {
		prefix        string
		keys, visited []string
	}{
		{"a/", []string{"a/x/1", "a/y/2"}, []string{"a", "a/x", "a/y"}},
		{"a/x", []string{"a/x/1"}, []string{"a", "a/x"}},
		{"a", []string{"a-c/5", "a/x/1", "a/y/2", "ab/3"}, []string{".", "a-c", "a", "a/x", "a/y", "ab"}},
		{"b/z/4", []string{"b/z/4"}, []string{"b/z"}},
		{"c/", nil, []string{"c"}},
	}
	for _, c := range cases {
		visited = nil
		var keys []string
		if err := st.List(t.Context(), c.prefix, func(i ObjectInfo) error { keys = append(keys, i.Key); return nil }); err != nil {
			t.Fatalf("List(%q): %v", c.prefix, err)
		}
		if !slices.Equal(keys, c.keys) {
			t.Errorf("List(%q) = %v, want %v", c.prefix, keys, c.keys)
		}
		if !slices.Equal(visited, c.visited) {
			t.Errorf("List(%q) read directories %v, want %v", c.prefix, visited, c.visited)
		}
	}
}
