//go:build unix

package s3store

import (
	"context"
	"io/fs"
	"os"
	"path/filepath"
	"syscall"
	"testing"
)

// Objects and directories of the local store follow the umask, and none is
// world-writable even with umask 000 (issue 13, item 5).
func TestLocalFollowsUmask(t *testing.T) {
	for _, tc := range []struct {
		umask     int
		file, dir fs.FileMode
	}{
		{0o077, 0o600, 0o700},
		{0o022, 0o644, 0o755},
		{0o027, 0o640, 0o750},
		{0o000, 0o664, 0o775},
	} {
		old := syscall.Umask(tc.umask)
		root := filepath.Join(t.TempDir(), "archive")
		st, err := NewLocal(LocalConfig{Dir: root}, nil)
		if err == nil {
			err = putLocal(st, "topics/t/partition=0/t+0+0000000000.json")
		}
		syscall.Umask(old)
		if err != nil {
			t.Fatal(err)
		}
		for p, want := range map[string]fs.FileMode{
			"topics/t/partition=0/t+0+0000000000.json": tc.file,
			"topics/t/partition=0":                     tc.dir | fs.ModeDir,
			"topics":                                   tc.dir | fs.ModeDir,
		} {
			fi, err := os.Stat(filepath.Join(root, p))
			if err != nil {
				t.Fatal(err)
			}
			if fi.Mode() != want {
				t.Errorf("umask %03o: %s has mode %v, want %v", tc.umask, p, fi.Mode(), want)
			}
		}
	}
}

func putLocal(st *Local, key string) error {
	w, err := st.Create(context.Background(), key)
	if err != nil {
		return err
	}
	if _, err := w.Write([]byte("{}\n")); err != nil {
		return err
	}
	return w.Commit(context.Background())
}
