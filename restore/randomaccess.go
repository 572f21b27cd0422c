package restore

import (
	"fmt"
	"io"
	"os"

	"github.com/kafkas3/kafkas3/format"
)

// A Parquet reader needs random access to its object (the footer comes
// last), and format.Parquet buffers an object it cannot seek in memory,
// whole. A restore loads an object per partition stream at once
// (Config.Parallelism of them, each while the one before it is produced),
// so Parquet objects of tens of megabytes would hold that many copies
// outside the memory budget of decoded records (memBudget). In
// modeRestore the object is copied instead, through its checkedReader
// (the digest and the size are the same), to an unlinked temporary file
// in Config.TempDir, which the reader reads in place: the memory of a
// Parquet object is then the pages its reader decodes, not the object.
// The proof (modeProve) reads as before.

// needsRandomAccess reports whether f reads an object by seeking in it.
func needsRandomAccess(f format.Format) bool {
	_, ok := f.(*format.Parquet)
	return ok
}

// spool copies what cr has left to an unlinked temporary file in dir and
// returns a reader of the copy (an io.ReaderAt with a Size, which
// format.Parquet reads in place) and the file's close. An error reading cr
// is its own (a store error); one of the file is tagged as not about the
// object's bytes (storeError).
func spool(cr *checkedReader, dir, key string) (*io.SectionReader, func() error, error) {
	f, err := os.CreateTemp(dir, "kafkas3-restore-*.object")
	if err != nil {
		return nil, nil, &storeError{fmt.Errorf("read object %q to a temporary file: %w", key, err)}
	}
	// Unlinked at once: the file disappears with the process, even on a crash.
	if err := os.Remove(f.Name()); err != nil {
		_ = f.Close()
		return nil, nil, &storeError{fmt.Errorf("read object %q to a temporary file: %w", key, err)}
	}
	read := cr.n
	n, err := io.Copy(f, cr)
	if err != nil {
		_ = f.Close()
		if cr.n-read != n { // read but not written: the file failed
			return nil, nil, &storeError{fmt.Errorf("read object %q to a temporary file: %w", key, err)}
		}
		return nil, nil, fmt.Errorf("read object %q: %w", key, err)
	}
	return io.NewSectionReader(f, 0, n), f.Close, nil
}
