package s3store

import (
	"context"
	"crypto/md5"
	"encoding/base64"
	"errors"
	"fmt"
	"hash/crc32"
	"io"
	"log/slog"
	"net/http"
	"net/url"
	"os"
	"slices"
	"strings"
	"sync/atomic"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	awshttp "github.com/aws/aws-sdk-go-v2/aws/transport/http"
	"github.com/aws/aws-sdk-go-v2/config"
	"github.com/aws/aws-sdk-go-v2/credentials"
	"github.com/aws/aws-sdk-go-v2/service/s3"
	"github.com/aws/aws-sdk-go-v2/service/s3/types"
	"github.com/aws/smithy-go"
)

// Defaults and limits of S3Config, matching Confluent's S3 sink.
const (
	DefaultRegion       = "us-west-2"
	DefaultPartSize     = 25 << 20 // s3.part.size default, 26214400
	MinPartSize         = 5 << 20  // smallest part S3 accepts (except the last)
	MaxPartSize         = 1<<31 - 1
	DefaultPartRetries  = 3
	DefaultRetryBackoff = 200 * time.Millisecond

	DefaultBackgroundUploads = 4
)

// S3Config configures the S3 store. Field comments name the Confluent keys
// they come from; validation errors name those keys.
type S3Config struct {
	Bucket string // s3.bucket.name, required
	Region string // s3.region; "" means DefaultRegion
	// Endpoint is store.url, for non-AWS servers; https:// is added when it
	// has no scheme. "" means AWS.
	Endpoint  string
	PathStyle bool // s3.path.style.access.enabled

	// AccessKeyID and SecretAccessKey are aws.access.key.id and
	// aws.secret.access.key. When both are empty the SDK's default
	// credential chain is used (environment, shared files, web identity,
	// container or instance roles).
	AccessKeyID     string
	SecretAccessKey string
	// AssumeRole, when its RoleARN is set, makes the store sign with a
	// role's temporary credentials from STS, obtained with the static keys
	// or the default chain.
	AssumeRole AssumeRoleConfig
	// Proxy sends the store's requests through an HTTP proxy.
	Proxy ProxyConfig

	// PartSize is s3.part.size in bytes, MinPartSize..MaxPartSize; 0 means
	// DefaultPartSize. Each open object spools up to one part to a temp
	// file, never to memory.
	PartSize int64
	// PartRetries is s3.part.retries, the attempts after the first for each
	// request; 0 means DefaultPartRetries and a negative value means none.
	PartRetries int
	// RetryBackoff is s3.retry.backoff.ms, the base of the exponential
	// backoff with full jitter; 0 means DefaultRetryBackoff and a negative
	// value means no wait.
	RetryBackoff time.Duration

	SSEAlgorithm string // s3.ssea.name: "", AES256, aws:kms, aws:kms:dsse
	KMSKeyID     string // s3.sse.kms.key.id, with aws:kms or aws:kms:dsse
	// CustomerKey is s3.sse.customer.key: base64 of a 32-byte key for
	// SSE-C. SSEAlgorithm must then be "" or AES256.
	CustomerKey string
	CannedACL   string // s3.acl.canned, e.g. bucket-owner-full-control

	// StorageClass is s3.storage.class: the storage class of the objects
	// created with a context from Data (the archive's records); "" leaves
	// the bucket's default (STANDARD).
	StorageClass string
	// ObjectLockMode is s3.object.lock.mode (GOVERNANCE or COMPLIANCE):
	// the retention mode each new object is written with, until
	// ObjectLockRetain (s3.object.lock.retain.days) after its write; ""
	// leaves the bucket's default retention. Setting it makes the store
	// write as on a WORM bucket (worm.go).
	ObjectLockMode   string
	ObjectLockRetain time.Duration
	// RewriteNewVersion is s3.object.lock.rewrite new-version: on a WORM
	// bucket, other bytes under a stored key become a new version (the
	// stored one stays under its retention) instead of a RewriteError.
	RewriteNewVersion bool

	// SpoolDir holds the per-object spool files; "" means os.TempDir().
	// Each open object uses one spool file of up to PartSize bytes, two
	// while a part uploads in the background; up to 8 more are kept idle
	// for reuse (spoolPool).
	SpoolDir string
	// BackgroundUploads bounds the part uploads that run in the background
	// while their writers keep writing, across all objects of the store; a
	// writer that finds no free slot uploads its part inside Write. 0 means
	// DefaultBackgroundUploads; negative means always inside Write.
	BackgroundUploads int
}

// S3 is a Store in an S3 bucket. Objects are streamed with multipart
// uploads through a small per-object spool file, so memory does not grow
// with the part size or the number of open objects. An object becomes
// visible only when its upload completes on Commit.
type S3 struct {
	cfg       S3Config
	client    *s3.Client
	creds     aws.CredentialsProvider
	log       *slog.Logger
	retry     retrier
	where     string // endpoint, for messages
	sseKeyMD5 string // base64 MD5 of the SSE-C key
	// uploadSlots is the semaphore of background part uploads.
	uploadSlots chan struct{}
	crc32c      *crc32.Table // Castagnoli, for the checksums of uploads
	spools      *spoolPool   // spool files for reuse
	buffers     *bufferPool  // the objects' spool buffers
	// noFullObject is set once the store refused the FULL_OBJECT checksum
	// type of a multipart upload (createMultipart).
	noFullObject atomic.Bool
	// worm is set when the bucket has Object Lock (worm.go);
	// noConditional once the store refused a conditional write.
	worm, noConditional atomic.Bool
	now                 func() time.Time
}

var _ Store = (*S3)(nil)

// normalize checks cfg and fills defaults. Errors name the Confluent key.
func (cfg S3Config) normalize() (S3Config, error) {
	if cfg.Bucket == "" {
		return cfg, errors.New("s3.bucket.name: required")
	}
	if strings.ContainsAny(cfg.Bucket, "/ ") {
		return cfg, fmt.Errorf("s3.bucket.name %q: a bucket name cannot contain '/' or spaces", cfg.Bucket)
	}
	if cfg.Region == "" {
		cfg.Region = DefaultRegion
	}
	if cfg.Endpoint != "" {
		ep := cfg.Endpoint
		if !strings.Contains(ep, "://") {
			ep = "https://" + ep
		}
		u, err := url.Parse(ep)
		if err != nil || u.Host == "" || (u.Scheme != "http" && u.Scheme != "https") {
			return cfg, fmt.Errorf("store.url %q: want a URL such as https://host:port", cfg.Endpoint)
		}
		cfg.Endpoint = ep
	}
	if (cfg.AccessKeyID == "") != (cfg.SecretAccessKey == "") {
		return cfg, errors.New("aws.access.key.id and aws.secret.access.key: set both or neither")
	}
	if _, err := cfg.Proxy.proxyURL(); err != nil {
		return cfg, err
	}
	switch {
	case cfg.PartSize == 0:
		cfg.PartSize = DefaultPartSize
	case cfg.PartSize < MinPartSize || cfg.PartSize > MaxPartSize:
		return cfg, fmt.Errorf("s3.part.size %d: must be between %d (5 MiB) and %d", cfg.PartSize, MinPartSize, MaxPartSize)
	}
	switch {
	case cfg.PartRetries == 0:
		cfg.PartRetries = DefaultPartRetries
	case cfg.PartRetries < 0:
		cfg.PartRetries = 0
	}
	switch {
	case cfg.RetryBackoff == 0:
		cfg.RetryBackoff = DefaultRetryBackoff
	case cfg.RetryBackoff < 0:
		cfg.RetryBackoff = 0
	}
	switch {
	case cfg.BackgroundUploads == 0:
		cfg.BackgroundUploads = DefaultBackgroundUploads
	case cfg.BackgroundUploads < 0:
		cfg.BackgroundUploads = 0
	}
	switch cfg.SSEAlgorithm {
	case "", string(types.ServerSideEncryptionAes256):
		if cfg.KMSKeyID != "" {
			return cfg, fmt.Errorf("s3.sse.kms.key.id: needs s3.ssea.name aws:kms or aws:kms:dsse, not %q", cfg.SSEAlgorithm)
		}
	case string(types.ServerSideEncryptionAwsKms), string(types.ServerSideEncryptionAwsKmsDsse):
		if cfg.CustomerKey != "" {
			return cfg, fmt.Errorf("s3.sse.customer.key: needs s3.ssea.name AES256 or empty, not %q", cfg.SSEAlgorithm)
		}
	default:
		return cfg, fmt.Errorf("s3.ssea.name %q: want AES256, aws:kms or aws:kms:dsse", cfg.SSEAlgorithm)
	}
	if cfg.CustomerKey != "" {
		key, err := base64.StdEncoding.DecodeString(cfg.CustomerKey)
		if err != nil || len(key) != 32 {
			return cfg, errors.New("s3.sse.customer.key: want the base64 encoding of a 32-byte key")
		}
	}
	return cfg, cfg.normalizeObjects()
}

// normalizeObjects checks the settings of new objects: s3.acl.canned,
// the storage class and Object Lock.
func (cfg S3Config) normalizeObjects() error {
	if cfg.CannedACL != "" && !slices.Contains(types.ObjectCannedACL("").Values(), types.ObjectCannedACL(cfg.CannedACL)) {
		return fmt.Errorf("s3.acl.canned %q: want one of %v", cfg.CannedACL, types.ObjectCannedACL("").Values())
	}
	return cfg.normalizeWORM()
}

// NewS3 validates cfg and builds the client. It does not contact S3; call
// Check for that. The SDK's own retries are off: each request is retried by
// the store's policy (s3.part.retries, s3.retry.backoff.ms), so attempts
// are counted once.
func NewS3(ctx context.Context, cfg S3Config, log *slog.Logger) (*S3, error) {
	cfg, err := cfg.normalize()
	if err != nil {
		return nil, err
	}
	if log == nil {
		log = slog.New(slog.DiscardHandler)
	}
	opts := []func(*config.LoadOptions) error{
		config.WithRegion(cfg.Region),
		config.WithRetryer(func() aws.Retryer { return aws.NopRetryer{} }),
	}
	if cfg.AccessKeyID != "" {
		opts = append(opts, config.WithCredentialsProvider(
			credentials.NewStaticCredentialsProvider(cfg.AccessKeyID, cfg.SecretAccessKey, "")))
	}
	awsCfg, err := config.LoadDefaultConfig(ctx, opts...)
	if err != nil {
		if bundle := os.Getenv("AWS_CA_BUNDLE"); bundle != "" {
			return nil, fmt.Errorf("s3 store: loading AWS configuration (AWS_CA_BUNDLE=%q): %w", bundle, err)
		}
		return nil, fmt.Errorf("s3 store: loading AWS configuration: %w", err)
	}
	hc, err := cfg.Proxy.httpClient(awsCfg.HTTPClient)
	if err != nil {
		return nil, err
	}
	if cfg.AssumeRole.RoleARN != "" {
		awsCfg.Credentials = assumeRole(awsCfg, cfg, hc)
	}
	client := s3.NewFromConfig(awsCfg, func(o *s3.Options) {
		if hc != nil {
			o.HTTPClient = hc
		}
		o.UsePathStyle = cfg.PathStyle
		if cfg.Endpoint != "" {
			o.BaseEndpoint = aws.String(cfg.Endpoint)
		}
		// Non-AWS servers reject the SDK's default checksums.
		o.RequestChecksumCalculation = aws.RequestChecksumCalculationWhenRequired
		o.ResponseChecksumValidation = aws.ResponseChecksumValidationWhenRequired
		o.Retryer = aws.NopRetryer{}
	})
	s := &S3{
		cfg:    cfg,
		client: client,
		creds:  awsCfg.Credentials,
		log:    log.With("bucket", cfg.Bucket),
		where:  cfg.Endpoint,

		uploadSlots: make(chan struct{}, cfg.BackgroundUploads),
		crc32c:      crc32.MakeTable(crc32.Castagnoli),
		spools:      &spoolPool{dir: cfg.SpoolDir},
		buffers:     &bufferPool{},
		now:         time.Now,
	}
	s.worm.Store(cfg.ObjectLockMode != "")
	if s.where == "" {
		s.where = "AWS S3 region " + cfg.Region
	}
	if cfg.CustomerKey != "" {
		key, _ := base64.StdEncoding.DecodeString(cfg.CustomerKey)
		sum := md5.Sum(key)
		s.sseKeyMD5 = base64.StdEncoding.EncodeToString(sum[:])
	}
	s.retry = retrier{
		retries: cfg.PartRetries,
		backoff: cfg.RetryBackoff,
		sleep:   sleepCtx,
		onRetry: func(attempt int, wait time.Duration, err error) {
			s.log.Warn("s3 request failed, retrying", "attempt", attempt, "wait", wait, "err", err)
		},
	}
	return s, nil
}

// Config returns the normalized configuration (defaults filled in).
func (s *S3) Config() S3Config { return s.cfg }

// do runs one request with retries; what describes it for errors.
func (s *S3) do(ctx context.Context, what string, fn func(ctx context.Context) error) error {
	n, err := s.retry.do(ctx, fn)
	if err == nil {
		return nil
	}
	err = mapS3Error(err)
	if hint := s.regionHint(err); hint != nil {
		err = hint
	}
	if hint := s.sseHint(err); hint != nil {
		err = hint
	}
	if hint := s.tlsHint(err); hint != nil {
		err = hint
	}
	if n > 1 {
		return fmt.Errorf("s3 %s (after %d attempts): %w", what, n, err)
	}
	return fmt.Errorf("s3 %s: %w", what, err)
}

// mapS3Error wraps ErrNotExist around 404s, ErrArchived around
// InvalidObjectState (a read of an archive-tier object not restored) and
// ErrAccessDenied around other 403s.
func mapS3Error(err error) error {
	var ae smithy.APIError
	if errors.As(err, &ae) && ae.ErrorCode() == "InvalidObjectState" {
		return fmt.Errorf("%w: %w", ErrArchived, err)
	}
	var re *awshttp.ResponseError
	if errors.As(err, &re) {
		switch re.HTTPStatusCode() {
		case http.StatusNotFound:
			return fmt.Errorf("%w: %w", ErrNotExist, err)
		case http.StatusForbidden:
			return fmt.Errorf("%w: %w", ErrAccessDenied, err)
		}
	}
	return err
}

func (s *S3) url(key string) string { return "s3://" + s.cfg.Bucket + "/" + key }

// Open streams the object.
func (s *S3) Open(ctx context.Context, key string) (io.ReadCloser, error) {
	if key == "" {
		return nil, fmt.Errorf("s3 open %q: %w: empty key", key, ErrInvalidKey)
	}
	var out *s3.GetObjectOutput
	err := s.do(ctx, "get "+s.url(key), func(ctx context.Context) error {
		in := &s3.GetObjectInput{Bucket: &s.cfg.Bucket, Key: &key}
		in.SSECustomerAlgorithm, in.SSECustomerKey, in.SSECustomerKeyMD5 = s.sseC()
		var err error
		out, err = s.client.GetObject(ctx, in)
		return err
	})
	if err != nil {
		return nil, err
	}
	return out.Body, nil
}

// head is HeadObject of key, with SSE-C's headers when set and, with
// checksum, the stored checksums asked for.
func (s *S3) head(ctx context.Context, key string, checksum bool) (*s3.HeadObjectOutput, error) {
	what := "head "
	in := &s3.HeadObjectInput{Bucket: &s.cfg.Bucket, Key: &key}
	if checksum {
		what, in.ChecksumMode = "head (checksum) ", types.ChecksumModeEnabled
	}
	in.SSECustomerAlgorithm, in.SSECustomerKey, in.SSECustomerKeyMD5 = s.sseC()
	var out *s3.HeadObjectOutput
	err := s.do(ctx, what+s.url(key), func(ctx context.Context) error {
		var err error
		out, err = s.client.HeadObject(ctx, in)
		return err
	})
	return out, err
}

// Stat describes the object (HeadObject).
func (s *S3) Stat(ctx context.Context, key string) (ObjectInfo, error) {
	if key == "" {
		return ObjectInfo{}, fmt.Errorf("s3 stat %q: %w: empty key", key, ErrInvalidKey)
	}
	out, err := s.head(ctx, key, false)
	if err != nil {
		return ObjectInfo{}, err
	}
	return ObjectInfo{Key: key, Size: aws.ToInt64(out.ContentLength), ModTime: aws.ToTime(out.LastModified), ETag: TrimETag(aws.ToString(out.ETag)),
		StorageClass: string(out.StorageClass), Restored: strings.Contains(aws.ToString(out.Restore), `ongoing-request="false"`)}, nil
}

// StoredCRC32C is HeadObject with checksum mode enabled: the object's
// full-object CRC32C as the store keeps it (an object of one PutObject
// that carried x-amz-checksum-crc32c, or a multipart upload of the
// FULL_OBJECT checksum type). A composite checksum (a checksum of the
// parts' checksums, "<base64>-<parts>") or another algorithm gives false.
func (s *S3) StoredCRC32C(ctx context.Context, key string) (string, bool, error) {
	if key == "" {
		return "", false, fmt.Errorf("s3 head %q: %w: empty key", key, ErrInvalidKey)
	}
	out, err := s.head(ctx, key, true)
	if err != nil {
		return "", false, err
	}
	crc := aws.ToString(out.ChecksumCRC32C)
	if crc == "" || out.ChecksumType == types.ChecksumTypeComposite || strings.Contains(crc, "-") {
		return "", false, nil
	}
	return crc, true, nil
}

var _ Checksummer = (*S3)(nil)

// List pages through ListObjectsV2 under prefix, in the server's (lexical)
// key order. It fails if the server returns keys out of order.
func (s *S3) List(ctx context.Context, prefix string, fn func(ObjectInfo) error) error {
	return s.ListAfter(ctx, prefix, "", fn)
}

// ListAfter is List of the keys after after (ListObjectsV2's StartAfter):
// the server skips the earlier keys, so a listing of the newest keys of a
// long history costs one request, not one per thousand keys.
func (s *S3) ListAfter(ctx context.Context, prefix, after string, fn func(ObjectInfo) error) error {
	var token *string
	last := ""
	var startAfter *string
	if after != "" {
		startAfter = &after
	}
	for page := 1; ; page++ {
		out, err := s.listPage(ctx, fmt.Sprintf("list %s (page %d)", s.url(prefix), page), &s3.ListObjectsV2Input{
			Bucket: &s.cfg.Bucket, Prefix: &prefix, ContinuationToken: token, StartAfter: startAfter,
		})
		if err != nil {
			return err
		}
		for _, o := range out.Contents {
			info, err := s.listedObject(out, prefix, o)
			if err != nil {
				return err
			}
			if info.Key <= after {
				continue // a server that ignores StartAfter
			}
			if last != "" && info.Key <= last {
				return fmt.Errorf("s3 list %s: server returned key %q after %q, not in lexical order", s.url(prefix), info.Key, last)
			}
			last = info.Key
			if err := fn(info); err != nil {
				return err
			}
		}
		if token, err = s.nextPage(out, prefix); token == nil || err != nil {
			return err
		}
	}
}

// nextPage returns the continuation token of a listing page, nil after
// the last page.
func (s *S3) nextPage(out *s3.ListObjectsV2Output, prefix string) (*string, error) {
	if !aws.ToBool(out.IsTruncated) {
		return nil, nil
	}
	if aws.ToString(out.NextContinuationToken) == "" {
		return nil, fmt.Errorf("s3 list %s: truncated page without a continuation token", s.url(prefix))
	}
	return out.NextContinuationToken, nil
}

// ListFolders is one level of a listing (ListObjectsV2 with a
// delimiter, FolderLister): the keys directly under prefix to file, the
// folders under it (their common prefixes) to folder, page after page. A
// server that ignores the delimiter gives every key to file, which is
// still every key once.
func (s *S3) ListFolders(ctx context.Context, prefix, delim string, folder func(string) error, file func(ObjectInfo) error) error {
	var token *string
	for page := 1; ; page++ {
		out, err := s.listPage(ctx, fmt.Sprintf("list folders %s (page %d)", s.url(prefix), page), &s3.ListObjectsV2Input{
			Bucket: &s.cfg.Bucket, Prefix: &prefix, Delimiter: &delim, ContinuationToken: token,
		})
		if err != nil {
			return err
		}
		for _, o := range out.Contents {
			info, err := s.listedObject(out, prefix, o)
			if err != nil {
				return err
			}
			if err := file(info); err != nil {
				return err
			}
		}
		for _, cp := range out.CommonPrefixes {
			f, err := s.listedKey(out, prefix, aws.ToString(cp.Prefix))
			if err != nil {
				return err
			}
			if err := folder(f); err != nil {
				return err
			}
		}
		if token, err = s.nextPage(out, prefix); token == nil || err != nil {
			return err
		}
	}
}

// listPage asks for one page of a listing, retried as every request;
// what names it in errors.
func (s *S3) listPage(ctx context.Context, what string, in *s3.ListObjectsV2Input) (*s3.ListObjectsV2Output, error) {
	var out *s3.ListObjectsV2Output
	err := s.do(ctx, what, func(ctx context.Context) error {
		var err error
		out, err = s.client.ListObjectsV2(ctx, in)
		return err
	})
	return out, err
}

// listedObject is what a listing page says of one of its objects.
func (s *S3) listedObject(out *s3.ListObjectsV2Output, prefix string, o types.Object) (ObjectInfo, error) {
	key, err := s.listedKey(out, prefix, aws.ToString(o.Key))
	return ObjectInfo{Key: key, Size: aws.ToInt64(o.Size), ModTime: aws.ToTime(o.LastModified), ETag: TrimETag(aws.ToString(o.ETag)), StorageClass: string(o.StorageClass)}, err
}

// listedKey is a key (or common prefix) of a listing page, decoded when
// the server url-encoded it.
func (s *S3) listedKey(out *s3.ListObjectsV2Output, prefix, raw string) (string, error) {
	if out.EncodingType != types.EncodingTypeUrl {
		return raw, nil
	}
	key, err := url.QueryUnescape(raw)
	if err != nil {
		return "", fmt.Errorf("s3 list %s: bad url-encoded key %q: %w", s.url(prefix), raw, err)
	}
	return key, nil
}

// Check verifies that the bucket exists and the credentials may access it
// (HeadBucket). Errors name s3.bucket.name, the endpoint and, for access
// denied, where the credentials came from.
func (s *S3) Check(ctx context.Context) error {
	err := s.do(ctx, "head bucket "+s.cfg.Bucket, func(ctx context.Context) error {
		_, err := s.client.HeadBucket(ctx, &s3.HeadBucketInput{Bucket: &s.cfg.Bucket})
		return err
	})
	if err == nil {
		s.log.Debug("s3 store ready", "endpoint", s.where)
		s.detectObjectLock(ctx)
		return nil
	}
	var re *awshttp.ResponseError
	status := 0
	if errors.As(err, &re) {
		status = re.HTTPStatusCode()
	}
	// A HEAD response has no body, so its error code is a guess from the
	// status. Some servers answer an unknown access key with 404, so ask
	// again with a GET, whose body names the real error.
	code := ""
	if status == http.StatusNotFound || status == http.StatusForbidden {
		code = s.probeErrorCode(ctx)
	}
	switch {
	case code == "NoSuchBucket" || status == http.StatusNotFound && !isAuthErrorCode(code):
		return fmt.Errorf("s3.bucket.name %q: bucket does not exist at %s: %w", s.cfg.Bucket, s.where, err)
	case status == http.StatusForbidden || isAuthErrorCode(code):
		if !errors.Is(err, ErrAccessDenied) {
			err = fmt.Errorf("%w: %w", ErrAccessDenied, err)
		}
		why := ""
		if code != "" && code != "AccessDenied" {
			why = " (" + code + ")"
		}
		return fmt.Errorf("s3.bucket.name %q: access denied%s at %s with %s: %w", s.cfg.Bucket, why, s.where, s.credentialsSource(ctx), err)
	}
	return fmt.Errorf("s3.bucket.name %q at %s: %w", s.cfg.Bucket, s.where, err)
}

// isAuthErrorCode reports whether an S3 error code means the credentials
// or their permissions are wrong.
func isAuthErrorCode(code string) bool {
	switch code {
	case "AccessDenied", "AllAccessDisabled", "InvalidAccessKeyId", "SignatureDoesNotMatch",
		"InvalidToken", "ExpiredToken", "TokenRefreshRequired",
		"XAdminUserNotFound": // versitygw, with status 404
		return true
	}
	return false
}

// probeErrorCode lists at most one key of the bucket, once, and returns the
// S3 error code of the failure, or "".
func (s *S3) probeErrorCode(ctx context.Context) string {
	_, err := s.client.ListObjectsV2(ctx, &s3.ListObjectsV2Input{Bucket: &s.cfg.Bucket, MaxKeys: aws.Int32(1)})
	var ae smithy.APIError
	if errors.As(err, &ae) {
		return ae.ErrorCode()
	}
	return ""
}

// Create starts an object at key. Written bytes are spooled to a temp file
// and uploaded part by part as each part fills; ctx governs those uploads
// as well as Create itself.
func (s *S3) Create(ctx context.Context, key string) (ObjectWriter, error) {
	if key == "" {
		return nil, fmt.Errorf("s3 create %q: %w: empty key", key, ErrInvalidKey)
	}
	if err := ctx.Err(); err != nil {
		return nil, fmt.Errorf("s3 create %s: %w", s.url(key), err)
	}
	spool, err := s.spools.get()
	if err != nil {
		return nil, fmt.Errorf("s3 create %s: spool file: %w", s.url(key), err)
	}
	return newS3Writer(ctx, s, key, spool), nil
}
