// Package s3fake is a small in-process S3 server for hermetic tests.
//
// It speaks the path-style REST subset that kafkas3 uses: CreateBucket,
// HeadBucket, PutObject, GetObject, HeadObject, DeleteObject, ListObjectsV2
// (prefix, start-after, continuation tokens, max-keys), and the multipart
// calls CreateMultipartUpload, UploadPart, CompleteMultipartUpload,
// AbortMultipartUpload and ListMultipartUploads, and PutObjectTagging and
// GetObjectTagging. Like real S3 it refuses a non-final part smaller than
// MinPartSize.
//
// It keeps how each object was encrypted (the SSE-S3, SSE-KMS or SSE-C
// headers of its PutObject or CreateMultipartUpload; ObjectSSE) and its
// tags (x-amz-tagging or PutObjectTagging; Tags), and, as S3 does, refuses
// an UploadPart of an SSE-C upload and a read of an SSE-C object that do
// not carry the object's key. Headers gives the headers of every request
// of an operation. SetBucketRegion puts a bucket in a region: requests
// signed for another one get S3's 400 AuthorizationHeaderMalformed or 301
// PermanentRedirect with x-amz-bucket-region.
//
// It does not check signatures, but it checks a body against its payload
// hash (x-amz-content-sha256) and its x-amz-checksum-crc32c, -crc32, -sha1
// or -sha256 header when the client sends one, and refuses a mismatch
// (400 XAmzContentSHA256Mismatch, 400 BadDigest), as S3 does. Faults are injected with FailNext (fail the
// next N matching requests with a status code) and DenyAccess (answer every
// request with 403 AccessDenied), so that retry, abort and error-message
// paths can be tested without a network. PendingUploads and Keys show what
// a test left behind.
//
// It was written instead of importing a third-party fake because tests need
// those fault hooks and a view of pending multipart uploads, and because it
// adds no module to go.mod.
package s3fake
