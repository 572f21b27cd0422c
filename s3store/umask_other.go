//go:build !unix

package s3store

import "io/fs"

// processUmask is 022 where there is no umask.
func processUmask() fs.FileMode { return 0o022 }
