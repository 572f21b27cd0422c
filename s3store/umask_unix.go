//go:build unix

package s3store

import (
	"io/fs"
	"syscall"
)

// processUmask returns the process's file mode creation mask. Reading it
// means setting it, so it is set back at once; the local store reads it
// when it is built, before it writes anything.
func processUmask() fs.FileMode {
	m := syscall.Umask(0o022)
	syscall.Umask(m)
	return fs.FileMode(m) & fs.ModePerm
}
