// Package storetest is the conformance suite for s3store.Store
// implementations: every backend (memory, local directory, S3 against the
// in-process fake and against a real S3 server) must pass Run.
//
// It checks that objects appear only on Commit, that Abort leaves nothing
// behind, overwrite, ErrNotExist for missing keys, List's prefix filtering
// and lexical order (including across more than one S3 page), objects that
// span several 5 MiB parts, empty objects, concurrent writers and keys with
// characters such as '=', '+', spaces and non-ASCII letters.
package storetest
