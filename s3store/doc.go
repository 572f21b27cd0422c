// Package s3store owns object storage: one small Store interface implemented
// by S3 (aws-sdk-go-v2, streaming multipart), a local directory and memory,
// all held to one conformance suite. Objects appear only when complete.
package s3store
