package s3store

import (
	"context"
	"encoding/base64"
	"encoding/binary"
	"errors"
	"fmt"
	"hash/crc32"
	"net/http"
	"slices"
	"strings"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	awshttp "github.com/aws/aws-sdk-go-v2/aws/transport/http"
	"github.com/aws/aws-sdk-go-v2/service/s3"
	"github.com/aws/aws-sdk-go-v2/service/s3/types"
	"github.com/aws/smithy-go"
)

// This file holds what the S3 store does on a WORM bucket (S3 Object
// Lock) and with storage classes: the retention and storage class of new
// objects, and the writes that must not replace an object with other
// bytes.
//
// On a bucket with Object Lock (found by Check, or declared with
// S3Config.ObjectLockMode) every PutObject and CompleteMultipartUpload
// carries If-None-Match: * (a conditional write): S3 refuses it with 412
// when the key has an object. The store then compares that object with
// the one it was writing (HeadObject with checksum mode: size and
// CRC32C). The same bytes are the sink's replay of the same records: the
// write is skipped (no new version under retention) and Commit succeeds
// with the stored object's ETag. Other bytes give a *RewriteError
// (ErrRewrite) naming the key, and nothing is written, unless the write
// may replace them: its context comes from Replacing (derived data such
// as a void checkpoint), or S3Config.RewriteNewVersion is set
// (s3.object.lock.rewrite new-version). Such a write becomes a new
// version: one PutObject is sent again without the condition, a
// multipart upload is completed without it after a HeadObject found
// other bytes (or none) under the key, and aborted when it found the
// same. Without Object Lock the store writes as before: no condition, a
// replay overwrites.

// ErrRewrite is returned (wrapped) by Commit on a WORM bucket when the
// key already holds an object with other bytes (RewriteError).
var ErrRewrite = errors.New("object exists under Object Lock with other bytes")

// RewriteError refuses to write a new version of an object of a WORM
// bucket with other bytes than the version it holds.
type RewriteError struct {
	URL string // s3://bucket/key
	// Have and Want describe the stored object and the refused one:
	// size and CRC32C.
	Have, Want string
}

func (e *RewriteError) Error() string {
	return fmt.Sprintf("refusing to write %s again: the bucket has Object Lock and the object it holds (%s) is not the one this run wrote (%s), "+
		"so this is not a replay of the same bytes; the stored version stays as it is. A sink of the same group with another flush.size, partitioner or "+
		"rotate.schedule.interval.ms, or a --once run killed after uploading its last partial file and before committing it, with records added since, writes other bytes "+
		"under the same key; s3.object.lock.rewrite=new-version writes them as a new version instead (docs/sink.md, \"WORM buckets\")", e.URL, e.Have, e.Want)
}

func (e *RewriteError) Unwrap() error { return ErrRewrite }

// ctxKey keys the context values of this file.
type ctxKey int

const (
	dataKey ctxKey = iota
	replaceKey
)

// Data marks the objects created with the returned context as archive
// data (records). S3Config.StorageClass applies to every object, but an
// archive tier (GLACIER, DEEP_ARCHIVE: unreadable until restored) only to
// data: the others (the archive index) must stay readable for every sink
// start, restore and verify, so they keep the bucket's default class.
func Data(ctx context.Context) context.Context {
	return context.WithValue(ctx, dataKey, true)
}

// Replacing marks the objects created with the returned context as
// allowed to replace an object of other bytes on a WORM bucket, as a new
// version (the archive index's checkpoints, derived data that the sink
// voids on purpose). The same bytes are still not written again.
func Replacing(ctx context.Context) context.Context {
	return context.WithValue(ctx, replaceKey, true)
}

func isData(ctx context.Context) bool      { v, _ := ctx.Value(dataKey).(bool); return v }
func isReplacing(ctx context.Context) bool { v, _ := ctx.Value(replaceKey).(bool); return v }

// replaces reports whether a write of ctx may replace an object of other
// bytes with a new version: Replacing, or S3Config.RewriteNewVersion.
func (s *S3) replaces(ctx context.Context) bool { return s.cfg.RewriteNewVersion || isReplacing(ctx) }

// objectLockModes are the values of S3Config.ObjectLockMode.
var objectLockModes = []string{string(types.ObjectLockModeGovernance), string(types.ObjectLockModeCompliance)}

// normalizeWORM checks the storage class and Object Lock fields of cfg.
func (cfg S3Config) normalizeWORM() error {
	if c := cfg.StorageClass; c != "" && !slices.Contains(types.StorageClass("").Values(), types.StorageClass(c)) {
		return fmt.Errorf("s3.storage.class %q: want one of %v", c, types.StorageClass("").Values())
	}
	switch {
	case cfg.ObjectLockMode != "" && !slices.Contains(objectLockModes, cfg.ObjectLockMode):
		return fmt.Errorf("s3.object.lock.mode %q: want GOVERNANCE or COMPLIANCE", cfg.ObjectLockMode)
	case cfg.ObjectLockMode != "" && cfg.ObjectLockRetain <= 0:
		return fmt.Errorf("s3.object.lock.mode %s: needs s3.object.lock.retain.days", cfg.ObjectLockMode)
	case cfg.ObjectLockMode == "" && cfg.ObjectLockRetain != 0:
		return errors.New("s3.object.lock.retain.days: needs s3.object.lock.mode")
	}
	return nil
}

// WORM reports whether the store writes as on a bucket with Object Lock:
// S3Config.ObjectLockMode is set, or Check found the bucket's Object Lock
// enabled.
func (s *S3) WORM() bool { return s.worm.Load() }

// detectObjectLock asks for the bucket's Object Lock configuration
// (GetObjectLockConfiguration) and, when it is enabled, makes the store
// write as on a WORM bucket. A refusal (no configuration, no permission,
// a server without Object Lock) leaves the store as it is.
func (s *S3) detectObjectLock(ctx context.Context) {
	out, err := s.client.GetObjectLockConfiguration(ctx, &s3.GetObjectLockConfigurationInput{Bucket: &s.cfg.Bucket})
	switch {
	case err != nil && errors.Is(mapS3Error(err), ErrAccessDenied):
		s.log.Warn("cannot read the bucket's Object Lock configuration (no s3:GetBucketObjectLockConfiguration permission): "+
			"if the bucket has Object Lock, set s3.object.lock.mode so that the sink writes each object once", "bucket", s.cfg.Bucket, "err", err)
		return
	case err != nil:
		s.log.Debug("no Object Lock configuration of the bucket", "err", err)
		return
	}
	c := out.ObjectLockConfiguration
	if c == nil || c.ObjectLockEnabled != types.ObjectLockEnabledEnabled {
		return
	}
	mode, days := "", int32(0)
	if c.Rule != nil && c.Rule.DefaultRetention != nil {
		mode = string(c.Rule.DefaultRetention.Mode)
		days = aws.ToInt32(c.Rule.DefaultRetention.Days) + 365*aws.ToInt32(c.Rule.DefaultRetention.Years)
	}
	if !s.worm.Swap(true) {
		s.log.Info("the bucket has Object Lock: objects are written once, a replay of the same bytes is skipped and other bytes are refused",
			"default_retention_mode", mode, "default_retention_days", days)
	}
}

// applyClassAndLock sets the storage class (an archive tier for data
// objects only, see Data) and the per-object retention of a PutObject or
// CreateMultipartUpload.
func (s *S3) applyClassAndLock(ctx context.Context, class *types.StorageClass, mode *types.ObjectLockMode, until **time.Time) {
	if s.cfg.StorageClass != "" && (isData(ctx) || !ArchiveTier(s.cfg.StorageClass)) {
		*class = types.StorageClass(s.cfg.StorageClass)
	}
	if s.cfg.ObjectLockMode != "" {
		*mode = types.ObjectLockMode(s.cfg.ObjectLockMode)
		t := s.now().Add(s.cfg.ObjectLockRetain).UTC().Truncate(time.Second)
		*until = &t
	}
}

// conditional reports whether a write of ctx must not replace an object
// (If-None-Match: *).
func (s *S3) conditional(ctx context.Context) bool {
	return s.worm.Load() && !s.noConditional.Load() && !s.replaces(ctx)
}

// preconditionFailed reports whether err is S3's 412 to a conditional
// write: the key holds an object.
func preconditionFailed(err error) bool {
	var re *awshttp.ResponseError
	if errors.As(err, &re) && re.HTTPStatusCode() == http.StatusPreconditionFailed {
		return true
	}
	var ae smithy.APIError
	return errors.As(err, &ae) && ae.ErrorCode() == "PreconditionFailed"
}

// conditionRefused reports whether err is a store's refusal of
// If-None-Match itself (an S3-compatible server without conditional
// writes).
func conditionRefused(err error) bool {
	var ae smithy.APIError
	return errors.As(err, &ae) && ae.ErrorCode() == "NotImplemented"
}

// noCondition makes the store write without If-None-Match from now on,
// once the store refused it, with one warning.
func (s *S3) noCondition(key string, err error) {
	if !s.noConditional.Swap(true) {
		s.log.Warn("the store refuses conditional writes (If-None-Match): on this WORM bucket a replay writes a new version of each object it writes again",
			"key", key, "err", err)
	}
}

// existing compares the object at key with the one a refused conditional
// write carried (size n, checksum want as HeadObject prints it: base64
// CRC32C, with "-<parts>" for a composite one). It returns the stored
// object's ETag when they agree, else a *RewriteError.
func (s *S3) existing(ctx context.Context, key string, n int64, want string) (string, error) {
	out, err := s.head(ctx, key, true)
	if err != nil {
		return "", err
	}
	size, have := aws.ToInt64(out.ContentLength), aws.ToString(out.ChecksumCRC32C)
	if size == n && have != "" && have == want {
		s.log.Info("the object is already stored with the same bytes (a replay): not written again", "key", key, "size", n)
		return TrimETag(aws.ToString(out.ETag)), nil
	}
	if have == "" {
		have = "no CRC32C to compare"
	}
	return "", &RewriteError{URL: s.url(key),
		Have: fmt.Sprintf("%d bytes, CRC32C %s", size, have), Want: fmt.Sprintf("%d bytes, CRC32C %s", n, want)}
}

// compositeCRC32C is the checksum S3 keeps of a COMPOSITE CRC32C
// multipart upload of parts: the CRC32C of the parts' CRC32Cs,
// "-<parts>".
func compositeCRC32C(tab *crc32.Table, parts []types.CompletedPart) string {
	var sums []byte
	for _, p := range parts {
		b, _ := base64.StdEncoding.DecodeString(aws.ToString(p.ChecksumCRC32C))
		sums = append(sums, b...)
	}
	c := binary.BigEndian.AppendUint32(nil, crc32.Checksum(sums, tab))
	return base64.StdEncoding.EncodeToString(c) + "-" + fmt.Sprint(len(parts))
}

// ArchiveTier reports whether objects of class c cannot be read before
// they are restored: S3 Glacier Flexible Retrieval (GLACIER) and Glacier
// Deep Archive (DEEP_ARCHIVE). GLACIER_IR and the others are readable.
func ArchiveTier(class string) bool {
	switch strings.ToUpper(class) {
	case string(types.StorageClassGlacier), string(types.StorageClassDeepArchive):
		return true
	}
	return false
}
