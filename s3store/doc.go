// Package s3store owns object storage: one small Store interface implemented
// by S3 (aws-sdk-go-v2, streaming multipart), a local directory and memory,
// all held to one conformance suite (package storetest). Objects appear only
// when complete.
//
// # Backends
//
//   - NewS3: an S3 bucket (AWS or any S3-compatible server via store.url).
//     Bytes written to an object are spooled to a temp file through a small
//     buffer; each full part (s3.part.size) is uploaded as it fills, so
//     memory stays at about 32 KiB per open object whatever the part size
//     (plus 4 MiB per store: its first 16 open objects write their spools
//     in 256 KiB blocks, which costs the kernel less per byte),
//     and temp disk at one part per object (two while a part uploads in the
//     background), plus up to 8 idle spool files the store keeps and the
//     next objects write over without truncating them, which costs about
//     half of writing a new file (the kernel neither allocates nor frees
//     their pages; a part is read back as its own first n bytes only,
//     never the stale rest). The spool's CRC32C is computed over each
//     block as it is flushed. An object smaller than one part is sent with one
//     PutObject on Commit; a larger one is a multipart upload completed on
//     Commit. Over plain HTTP on Linux a part's body goes from its spool
//     file to the socket with sendfile (spoolbody.go), not through a
//     buffer. Abort, and any failure, aborts the multipart upload.
//   - NewLocal: a directory; keys become paths. Commit is fsync, rename and
//     directory fsync of a hidden temp file written next to the target.
//     Objects get mode 0666 and directories 0777, less the process umask
//     (read when the store is built) and never world-writable.
//   - NewMemory: a map, for tests.
//
// # Credentials, proxy, tags
//
// The S3 store signs with aws.access.key.id/aws.secret.access.key, else
// with the SDK's default chain (environment, shared files, web identity
// from AWS_WEB_IDENTITY_TOKEN_FILE and AWS_ROLE_ARN as EKS IRSA sets them,
// container and instance roles). S3Config.AssumeRole
// (s3.credentials.provider.class AwsAssumeRoleCredentialsProvider) makes
// it sign with a role's temporary credentials from STS AssumeRole (role
// ARN, session name, external id), obtained with those credentials,
// cached and renewed before they expire; AWS_ENDPOINT_URL_STS overrides
// the STS endpoint. S3Config.Proxy (s3.proxy.url) sends the store's
// requests, and its AssumeRole requests, through an HTTP proxy; otherwise
// HTTPS_PROXY and NO_PROXY apply. Over HTTPS the store trusts the
// system's CAs and, when AWS_CA_BUNDLE (or ca_bundle in the AWS config
// profile) names a PEM file, the CAs in it: the SDK's default
// configuration builds that client, and the proxy's client is built on
// it. A certificate that fails verification is not retried and is no
// outage (Transient is false); the error names the endpoint and, for an
// unknown authority, AWS_CA_BUNDLE (tls.go). Tagger.Tag
// (PutObjectTagging) tags a complete object; the Memory store implements
// it too. A 301 or 400 that names another region in x-amz-bucket-region
// is reported with that region and the key to set (s3.region).
//
// # Integrity
//
// Each PutObject and UploadPart carries the CRC32C of its body
// (x-amz-checksum-crc32c, computed while the bytes are spooled; a
// multipart upload is created with ChecksumAlgorithm CRC32C and completed
// with each part's checksum), and its body is sent unsigned
// (x-amz-content-sha256: UNSIGNED-PAYLOAD), over HTTPS and plain HTTP
// alike. The store verifies the body against the checksum and refuses a
// corrupted one (400 BadDigest, retried from the spool); the checksum
// header itself is signed. This replaces SigV4's SHA-256 of every body, a
// second pass over each byte that cost 12-22% of the sink's CPU. Over
// plain HTTP a CRC, unlike a signed SHA-256, does not stop a deliberate
// change by someone on the path who also fixes the CRC: use HTTPS where
// that matters (it also keeps the data confidential). Each PutObject and
// UploadPart also names its algorithm (x-amz-sdk-checksum-algorithm:
// CRC32C), which S3 Object Lock asks of uploads; the SDK computes nothing
// more, since the checksum header is set.
//
// # WORM buckets and storage classes
//
// worm.go: on a bucket with Object Lock (Check asks for its
// configuration; S3Config.ObjectLockMode declares it) every PutObject and
// CompleteMultipartUpload is conditional (If-None-Match: *). When S3
// answers 412, the stored object is compared with the written one (HEAD:
// size and CRC32C): the same bytes are not written again (Commit succeeds
// with the stored ETag), other bytes give a *RewriteError (ErrRewrite)
// naming the object, unless S3Config.RewriteNewVersion or a context from
// Replacing lets them become a new version. S3Config.ObjectLockMode and
// ObjectLockRetain put a retention on every new object. StorageClass goes
// on the objects created with a context from Data (the archive's
// records). Listings and Stat give ObjectInfo.StorageClass, Stat
// ObjectInfo.Restored; archived.go's ArchiveTierCheck names, with one
// Stat per GLACIER or DEEP_ARCHIVE object of a listing, those without a
// restored copy (*ArchivedError), and a read of one wraps ErrArchived.
//
// # Listing folder by folder
//
// ListParallel lists a long archive many pages at once: through a
// FolderLister (S3: ListObjectsV2 with a delimiter; the metrics wrapper
// passes it on) it finds the folders a few levels under a prefix (a
// topic's partition=<n> folders, a layout's first level) and lists each
// folder, a bounded number at a time, calling its function one call at a
// time in no particular order. Stores without folder listings (a local
// directory, the memory store) list as List does.
//
// # ETags
//
// ObjectInfo.ETag is the object's ETag, quotes stripped, from List,
// ListAfter and Stat (S3; the memory store gives the hex MD5 of the
// bytes; a local directory none), and a committed writer gives the ETag
// the store answered for it (ETagger: the PutObject's or the
// CompleteMultipartUpload's; when an earlier attempt completed the
// upload and its response was lost, the HeadObject's). The sink records
// it in the archive index and plain verify compares it with the listing's
// instead of asking for each object's stored checksum. S3 without SSE-KMS
// or SSE-C, and most S3-compatible servers, give MD5 ETags: the MD5 of
// the bytes for one PutObject, the MD5 of the parts' MD5s and "-<parts>"
// for a multipart upload, the same for the same bytes and s3.part.size.
// Under SSE-KMS and SSE-C the ETag is no digest of the bytes: the same
// bytes written again get another.
//
// # Retries
//
// The S3 store turns the SDK's retryer off and retries each request itself:
// s3.part.retries attempts after the first, waiting a random duration in
// [0, s3.retry.backoff.ms·2^(n-1)] (full jitter, capped at 24 h) before
// retry n, as Confluent's sink does. Only network errors, 5xx and
// throttling are retried, and BadDigest (a body that failed its checksum);
// other 4xx errors such as NoSuchBucket or AccessDenied fail at once. Waits end when the context does.
//
// # Errors
//
// Missing objects and buckets wrap ErrNotExist; refused credentials wrap
// ErrAccessDenied; bad keys wrap ErrInvalidKey; a writer used after Commit
// or Abort returns ErrClosed. Configuration errors name the Confluent key
// (s3.part.size, s3.bucket.name, ...), and Check's errors name the bucket,
// the endpoint and where the credentials came from.
package s3store
