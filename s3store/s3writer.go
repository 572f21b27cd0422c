package s3store

import (
	"bufio"
	"context"
	"encoding/base64"
	"encoding/binary"
	"errors"
	"fmt"
	"hash/crc32"
	"os"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	v4 "github.com/aws/aws-sdk-go-v2/aws/signer/v4"
	"github.com/aws/aws-sdk-go-v2/service/s3"
	"github.com/aws/aws-sdk-go-v2/service/s3/types"
	"github.com/aws/smithy-go"
)

const (
	// spoolBufferSize is the size of the only per-object memory buffer,
	// through which writes go to the spool file (larger for the first
	// objects of a store: bufferPool).
	spoolBufferSize = 32 << 10
	// cleanupTimeout bounds an AbortMultipartUpload, which runs even when
	// the caller's context is already cancelled (shutdown).
	cleanupTimeout = 30 * time.Second
)

// s3Writer spools an object to a temp file and uploads it part by part.
//
// Memory per object is one small bufio buffer (256 KiB instead of 32 KiB
// for up to 16 objects of the store at once: bufferPool). When the spool holds a full
// part it is uploaded, in the background if a slot of the store's shared
// semaphore is free (writing continues into a second spool file) and
// synchronously otherwise. At most one part per object is in flight, so
// parts complete in order and at most two spool files exist per object.
type s3Writer struct {
	s      *S3
	ctx    context.Context // from Create; governs uploads started by Write
	cancel context.CancelFunc
	key    string

	cur   *os.File // spool being written
	spare *os.File // empty spool ready for reuse, or nil
	bw    *bufio.Writer
	n     int64  // bytes written to cur, buffered ones included
	crc   uint32 // CRC32C of the bytes in cur, buffered ones not included
	total int64  // bytes written to the object
	// whole is the CRC32C of every byte of the object spooled so far: the
	// full-object checksum of a multipart upload.
	whole uint32
	// fullObject: the multipart upload asked for the FULL_OBJECT checksum
	// type (false when the store refused it: S3.noFullObject).
	fullObject bool

	uploadID string // "" until the first full part
	parts    []types.CompletedPart
	pending  chan partResult // non-nil while a background part upload runs

	done bool
	err  error // why the writer failed, if it did
	// etag is the committed object's ETag (ETag), quotes stripped.
	etag string
	// marks is the context of Create, whose values (Data, Replacing)
	// say what the object is.
	marks context.Context
}

var _ ETagger = (*s3Writer)(nil)

// ETag returns the ETag the store answered for the committed object: the
// PutObject's or CompleteMultipartUpload's, or, for an upload an earlier
// attempt completed (its response lost), the HeadObject's. "" before
// Commit returned nil.
func (w *s3Writer) ETag() string {
	if !w.done || w.err != nil {
		return ""
	}
	return w.etag
}

// spoolSum is the length and CRC32C of a spooled part (or of a whole
// object sent with one PutObject).
type spoolSum struct {
	n   int64
	crc uint32
}

// base64 is the CRC32C as S3's x-amz-checksum-crc32c header wants it:
// base64 of the big-endian 4 bytes.
func (s spoolSum) base64() string {
	return base64.StdEncoding.EncodeToString(binary.BigEndian.AppendUint32(nil, s.crc))
}

// unsignedPayload sends a request's body without SigV4's SHA-256 of the
// payload (x-amz-content-sha256: UNSIGNED-PAYLOAD). It is used only on
// requests that carry the body's CRC32C in x-amz-checksum-crc32c: that
// header is signed, and the store verifies the body against it and
// refuses a corrupted one (BadDigest), so integrity does not rest on the
// payload hash. The CRC32C is computed while the bytes are spooled, one
// pass at memory speed, where the SHA-256 cost a second pass over every
// byte at about 0.5-1 GB/s of CPU.
func unsignedPayload(o *s3.Options) {
	o.APIOptions = append(o.APIOptions, v4.SwapComputePayloadSHA256ForUnsignedPayloadMiddleware)
}

type partResult struct {
	part types.CompletedPart
	f    *os.File
	err  error
}

func newS3Writer(ctx context.Context, s *S3, key string, spool *os.File) *s3Writer {
	ctx, cancel := context.WithCancel(ctx)
	w := &s3Writer{s: s, ctx: ctx, cancel: cancel, key: key, cur: spool, marks: ctx}
	w.bw = s.buffers.get(spoolWriter{w})
	return w
}

// spoolWriter is what the writer's bufio buffer flushes to: the current
// spool file, with the CRC32C of the part updated over each flushed block
// (a buffer of spoolBufferSize, or a larger write that bypasses the
// buffer) rather than over each small Write, which costs several times
// more per byte. A part's bytes reach the spool only through it, and a
// part ends only after a Flush, so crc covers exactly the part.
type spoolWriter struct{ w *s3Writer }

func (sw spoolWriter) Write(p []byte) (int, error) {
	n, err := sw.w.cur.Write(p)
	sw.w.crc = crc32.Update(sw.w.crc, sw.w.s.crc32c, p[:n])
	sw.w.whole = crc32.Update(sw.w.whole, sw.w.s.crc32c, p[:n])
	return n, err
}

func (w *s3Writer) Write(p []byte) (int, error) {
	if w.done {
		if w.err != nil {
			return 0, fmt.Errorf("s3 write %s: %w (failed earlier: %w)", w.s.url(w.key), ErrClosed, w.err)
		}
		return 0, fmt.Errorf("s3 write %s: %w", w.s.url(w.key), ErrClosed)
	}
	written := 0
	for len(p) > 0 {
		chunk := p[:min(int64(len(p)), w.s.cfg.PartSize-w.n)]
		m, err := w.bw.Write(chunk)
		written += m
		w.n += int64(m)
		w.total += int64(m)
		p = p[m:]
		if err != nil {
			return written, w.fail(fmt.Errorf("s3 write %s: spool: %w", w.s.url(w.key), err))
		}
		if w.n == w.s.cfg.PartSize {
			if err := w.flushPart(); err != nil {
				return written, w.fail(err)
			}
		}
	}
	return written, nil
}

// flushPart starts the upload of the full spool as the next part.
func (w *s3Writer) flushPart() error {
	if err := w.bw.Flush(); err != nil {
		return fmt.Errorf("s3 write %s: spool: %w", w.s.url(w.key), err)
	}
	if err := w.wait(); err != nil {
		return err
	}
	if w.uploadID == "" {
		if err := w.createMultipart(w.ctx); err != nil {
			return err
		}
	}
	num := int32(len(w.parts) + 1)
	if num > 10000 {
		return fmt.Errorf("s3 write %s: more than 10000 parts of s3.part.size %d bytes", w.s.url(w.key), w.s.cfg.PartSize)
	}
	f, sum := w.cur, spoolSum{n: w.n, crc: w.crc}
	select {
	case w.s.uploadSlots <- struct{}{}:
		next := w.spare
		if next == nil {
			var err error
			if next, err = w.s.spools.get(); err != nil {
				<-w.s.uploadSlots
				return fmt.Errorf("s3 write %s: spool file: %w", w.s.url(w.key), err)
			}
		}
		w.spare = nil
		w.cur = next
		ch := make(chan partResult, 1)
		w.pending = ch
		ctx, uploadID := w.ctx, w.uploadID
		go func() {
			defer func() { <-w.s.uploadSlots }()
			part, err := w.s.uploadPart(ctx, w.key, uploadID, num, f, sum)
			ch <- partResult{part: part, f: f, err: err}
		}()
	default:
		part, err := w.s.uploadPart(w.ctx, w.key, w.uploadID, num, f, sum)
		if err != nil {
			return err
		}
		w.parts = append(w.parts, part)
		if err := rewind(f); err != nil {
			return fmt.Errorf("s3 write %s: spool: %w", w.s.url(w.key), err)
		}
	}
	w.n, w.crc = 0, 0
	return nil
}

// wait waits for the background part upload, if any, and keeps its spool
// file for reuse.
func (w *s3Writer) wait() error {
	if w.pending == nil {
		return nil
	}
	r := <-w.pending
	w.pending = nil
	if r.err != nil {
		closeRemove(r.f)
		return r.err
	}
	w.parts = append(w.parts, r.part)
	if err := rewind(r.f); err != nil {
		closeRemove(r.f)
		return fmt.Errorf("s3 write %s: spool: %w", w.s.url(w.key), err)
	}
	w.spare = r.f
	return nil
}

// createMultipart starts the multipart upload with the FULL_OBJECT
// CRC32C checksum type, so the store checks the whole object against the
// CRC32C that CompleteMultipartUpload sends and keeps it (HeadObject with
// checksum mode returns it, as for an object of one PutObject). A store
// that refuses the type (an older S3-compatible server) gets a composite
// CRC32C upload instead, for this and every later object of the store,
// and one warning: its parts are still checked on receipt, but what it
// keeps is a checksum of the part checksums, which verify cannot compare.
func (w *s3Writer) createMultipart(ctx context.Context) error {
	s := w.s
	if !s.noFullObject.Load() {
		err := w.startUpload(ctx, true)
		if err == nil || !fullObjectRefused(err) {
			return err
		}
		if !s.noFullObject.Swap(true) {
			s.log.Warn("the store refuses the FULL_OBJECT checksum type of multipart uploads; multipart objects get a composite CRC32C, which kafkas3 verify cannot compare with the index without downloading them",
				"key", w.key, "err", err)
		}
	}
	return w.startUpload(ctx, false)
}

// startUpload is CreateMultipartUpload, with the FULL_OBJECT checksum
// type when full is set.
func (w *s3Writer) startUpload(ctx context.Context, full bool) error {
	s := w.s
	return s.do(ctx, "create multipart upload "+s.url(w.key), func(ctx context.Context) error {
		in := &s3.CreateMultipartUploadInput{Bucket: &s.cfg.Bucket, Key: &w.key, ChecksumAlgorithm: types.ChecksumAlgorithmCrc32c}
		if full {
			in.ChecksumType = types.ChecksumTypeFullObject
		}
		s.applyPutOptions(&in.ServerSideEncryption, &in.SSEKMSKeyId, &in.SSECustomerAlgorithm, &in.SSECustomerKey, &in.SSECustomerKeyMD5, &in.ACL)
		s.applyClassAndLock(w.marks, &in.StorageClass, &in.ObjectLockMode, &in.ObjectLockRetainUntilDate)
		out, err := s.client.CreateMultipartUpload(ctx, in)
		if err != nil {
			return err
		}
		if aws.ToString(out.UploadId) == "" {
			return errors.New("server returned no upload id")
		}
		w.uploadID, w.fullObject = *out.UploadId, full
		return nil
	})
}

// fullObjectRefused reports whether err is a store's refusal of a request
// argument (400 InvalidRequest, InvalidArgument, NotImplemented): what an
// S3-compatible server without FULL_OBJECT checksums answers.
func fullObjectRefused(err error) bool {
	var ae smithy.APIError
	if !errors.As(err, &ae) {
		return false
	}
	switch ae.ErrorCode() {
	case "InvalidRequest", "InvalidArgument", "NotImplemented":
		return true
	}
	return false
}

// applyPutOptions sets the encryption and ACL fields of a put or create
// multipart request.
func (s *S3) applyPutOptions(sse *types.ServerSideEncryption, kms, custAlg, custKey, custMD5 **string, acl *types.ObjectCannedACL) {
	if s.cfg.SSEAlgorithm != "" && s.cfg.CustomerKey == "" {
		*sse = types.ServerSideEncryption(s.cfg.SSEAlgorithm)
	}
	if s.cfg.KMSKeyID != "" {
		*kms = &s.cfg.KMSKeyID
	}
	if s.cfg.CustomerKey != "" {
		*custAlg = aws.String("AES256")
		*custKey = &s.cfg.CustomerKey
		*custMD5 = &s.sseKeyMD5
	}
	if s.cfg.CannedACL != "" {
		*acl = types.ObjectCannedACL(s.cfg.CannedACL)
	}
}

// uploadPart uploads bytes [0, sum.n) of f as part num, with retries; each
// attempt reads the spool afresh. The part carries its CRC32C, which the
// store verifies (unsignedPayload).
func (s *S3) uploadPart(ctx context.Context, key, uploadID string, num int32, f *os.File, sum spoolSum) (types.CompletedPart, error) {
	var etag *string
	crc := sum.base64()
	err := s.do(ctx, fmt.Sprintf("upload part %d of %s", num, s.url(key)), func(ctx context.Context) error {
		body, fromFile, done := spoolRequest(f, sum.n)
		defer done()
		in := &s3.UploadPartInput{
			Bucket:         &s.cfg.Bucket,
			Key:            &key,
			UploadId:       &uploadID,
			PartNumber:     aws.Int32(num),
			Body:           body,
			ContentLength:  aws.Int64(sum.n),
			ChecksumCRC32C: &crc,
			// x-amz-sdk-checksum-algorithm, which S3 Object Lock asks for
			// besides the checksum itself; the SDK computes nothing when
			// the checksum header is set.
			ChecksumAlgorithm: types.ChecksumAlgorithmCrc32c,
		}
		in.SSECustomerAlgorithm, in.SSECustomerKey, in.SSECustomerKeyMD5 = s.sseC()
		out, err := s.client.UploadPart(ctx, in, withOptions(unsignedPayload, fromFile)...)
		if err != nil {
			return err
		}
		etag = out.ETag
		return nil
	})
	if err != nil {
		return types.CompletedPart{}, err
	}
	return types.CompletedPart{ETag: etag, PartNumber: aws.Int32(num), ChecksumCRC32C: &crc}, nil
}

// Commit uploads what is left and makes the object visible: PutObject when
// the object is smaller than one part, else the last part and
// CompleteMultipartUpload. On failure the multipart upload is aborted and
// nothing is left behind.
func (w *s3Writer) Commit(ctx context.Context) error {
	if w.done {
		if w.err != nil {
			return fmt.Errorf("s3 commit %s: %w (failed earlier: %w)", w.s.url(w.key), ErrClosed, w.err)
		}
		return fmt.Errorf("s3 commit %s: %w", w.s.url(w.key), ErrClosed)
	}
	if err := w.commit(ctx); err != nil {
		return w.fail(err)
	}
	w.done = true
	w.cleanup(true)
	w.cancel()
	return nil
}

func (w *s3Writer) commit(ctx context.Context) error {
	s := w.s
	if err := ctx.Err(); err != nil {
		return fmt.Errorf("s3 commit %s: %w", s.url(w.key), err)
	}
	if err := w.bw.Flush(); err != nil {
		return fmt.Errorf("s3 commit %s: spool: %w", s.url(w.key), err)
	}
	if w.uploadID == "" {
		return w.put(ctx)
	}
	if err := w.wait(); err != nil {
		return err
	}
	if w.n > 0 {
		part, err := s.uploadPart(ctx, w.key, w.uploadID, int32(len(w.parts)+1), w.cur, spoolSum{n: w.n, crc: w.crc})
		if err != nil {
			return err
		}
		w.parts = append(w.parts, part)
	}
	if done, err := w.storedBefore(ctx); done || err != nil {
		return err
	}
	attempts := 0
	err := s.do(ctx, "complete multipart upload "+s.url(w.key), func(ctx context.Context) error {
		attempts++
		in := &s3.CompleteMultipartUploadInput{
			Bucket:          &s.cfg.Bucket,
			Key:             &w.key,
			UploadId:        &w.uploadID,
			MultipartUpload: &types.CompletedMultipartUpload{Parts: w.parts},
			// SSE-C must be repeated on Complete.
			SSECustomerAlgorithm: customerAlg(s),
			SSECustomerKey:       customerKey(s),
			SSECustomerKeyMD5:    customerKeyMD5(s),
		}
		if s.conditional(w.marks) {
			in.IfNoneMatch = aws.String("*")
		}
		if w.fullObject {
			// The store checks the object it assembles against the CRC32C
			// of every byte written, and keeps it.
			in.ChecksumCRC32C = aws.String(spoolSum{crc: w.whole}.base64())
			in.ChecksumType = types.ChecksumTypeFullObject
		}
		out, err := s.client.CompleteMultipartUpload(ctx, in)
		if err != nil {
			return err
		}
		w.etag = TrimETag(aws.ToString(out.ETag))
		return nil
	})
	if err != nil && preconditionFailed(err) {
		return w.completedBefore(ctx)
	}
	if err != nil && attempts > 1 && errors.Is(err, ErrNotExist) {
		// NoSuchUpload on a retry: an earlier attempt may have completed
		// the upload and lost its response. The object is ours if it is
		// there with our size (a key is always rewritten with the same
		// bytes).
		if info, serr := s.Stat(ctx, w.key); serr == nil && info.Size == w.total {
			s.log.Info("multipart upload was completed by an earlier attempt", "key", w.key, "size", w.total)
			w.uploadID = ""
			w.etag = info.ETag
			return nil
		}
	}
	return err
}

// put sends the object, smaller than one part, with one PutObject: on a
// WORM bucket a conditional one (If-None-Match: *), which finds a stored
// object of the same bytes (existing) instead of writing a new version.
func (w *s3Writer) put(ctx context.Context) error {
	return w.putIf(ctx, w.s.worm.Load() && !w.s.noConditional.Load())
}

// putIf is put, conditional when cond is set. A write of Replacing
// whose key holds other bytes is sent again without the condition, as a
// new version.
func (w *s3Writer) putIf(ctx context.Context, cond bool) error {
	s := w.s
	f, sum := w.cur, spoolSum{n: w.n, crc: w.crc}
	crc := sum.base64()
	err := s.do(ctx, "put "+s.url(w.key), func(ctx context.Context) error {
		body, fromFile, done := spoolRequest(f, sum.n)
		defer done()
		in := &s3.PutObjectInput{
			Bucket:         &s.cfg.Bucket,
			Key:            &w.key,
			Body:           body,
			ContentLength:  aws.Int64(sum.n),
			ChecksumCRC32C: &crc,
			// x-amz-sdk-checksum-algorithm (uploadPart).
			ChecksumAlgorithm: types.ChecksumAlgorithmCrc32c,
		}
		if cond {
			in.IfNoneMatch = aws.String("*")
		}
		s.applyPutOptions(&in.ServerSideEncryption, &in.SSEKMSKeyId, &in.SSECustomerAlgorithm, &in.SSECustomerKey, &in.SSECustomerKeyMD5, &in.ACL)
		s.applyClassAndLock(w.marks, &in.StorageClass, &in.ObjectLockMode, &in.ObjectLockRetainUntilDate)
		out, err := s.client.PutObject(ctx, in, withOptions(unsignedPayload, fromFile)...)
		if err != nil {
			return err
		}
		w.etag = TrimETag(aws.ToString(out.ETag))
		return nil
	})
	switch {
	case err == nil || !cond:
		return err
	case preconditionFailed(err):
		w.etag, err = s.existing(ctx, w.key, sum.n, crc)
		if errors.Is(err, ErrRewrite) && s.replaces(w.marks) {
			s.log.Warn("writing a new version of the object; the version it held stays under its retention", "key", w.key, "err", err)
			return w.putIf(ctx, false)
		}
		return err
	case conditionRefused(err):
		s.noCondition(w.key, err)
		return w.putIf(ctx, false)
	}
	return err
}

// storedBefore is, for a multipart upload on a WORM bucket that may
// replace other bytes (Replacing, S3Config.RewriteNewVersion), whose
// CompleteMultipartUpload is not conditional, the check a conditional
// one makes: when the key already holds the same bytes, the upload is
// aborted and done is true (no new version); other bytes, or none, let
// the upload complete.
func (w *s3Writer) storedBefore(ctx context.Context) (done bool, err error) {
	s := w.s
	if !s.worm.Load() || !s.replaces(w.marks) {
		return false, nil
	}
	etag, err := s.existing(ctx, w.key, w.total, w.wholeChecksum())
	switch {
	case errors.Is(err, ErrNotExist) || errors.Is(err, ErrRewrite):
		return false, nil
	case err != nil:
		return false, err
	}
	if err := w.abortMultipart(ctx); err != nil {
		return false, err
	}
	w.etag = etag
	return true, nil
}

// wholeChecksum is the checksum the store keeps of the object the
// multipart upload completes, as HeadObject prints it.
func (w *s3Writer) wholeChecksum() string {
	if w.fullObject {
		return spoolSum{crc: w.whole}.base64()
	}
	return compositeCRC32C(w.s.crc32c, w.parts)
}

// completedBefore handles a CompleteMultipartUpload refused because the
// key holds an object (a conditional write on a WORM bucket): the upload
// is aborted, and the stored object must be the one written (existing).
func (w *s3Writer) completedBefore(ctx context.Context) error {
	if err := w.abortMultipart(ctx); err != nil {
		return err
	}
	var err error
	w.etag, err = w.s.existing(ctx, w.key, w.total, w.wholeChecksum())
	return err
}

// sseC returns the SSE-C fields of a request on an object: nil without
// s3.sse.customer.key.
func (s *S3) sseC() (alg, key, keyMD5 *string) {
	if s.cfg.CustomerKey == "" {
		return nil, nil, nil
	}
	return aws.String("AES256"), &s.cfg.CustomerKey, &s.sseKeyMD5
}

func customerAlg(s *S3) *string {
	if s.cfg.CustomerKey == "" {
		return nil
	}
	return aws.String("AES256")
}

func customerKey(s *S3) *string {
	if s.cfg.CustomerKey == "" {
		return nil
	}
	return &s.cfg.CustomerKey
}

func customerKeyMD5(s *S3) *string {
	if s.cfg.CustomerKey == "" {
		return nil
	}
	return &s.sseKeyMD5
}

// Abort discards the object: it aborts the multipart upload, if one was
// started, and removes the spool files. It runs even if ctx is already
// cancelled. It is a no-op after Commit or Abort.
func (w *s3Writer) Abort(ctx context.Context) error {
	if w.done {
		return nil
	}
	w.done = true
	w.cancel() // stops a background part upload early
	w.discardPending()
	err := w.abortMultipart(ctx)
	w.cleanup(true)
	return err
}

// fail records err, aborts the upload and releases the spool files. It
// returns err, joined with any abort failure.
func (w *s3Writer) fail(err error) error {
	w.done = true
	w.cancel()
	w.discardPending()
	if aerr := w.abortMultipart(w.ctx); aerr != nil {
		err = errors.Join(err, aerr)
	}
	w.cleanup(false)
	w.err = err
	return err
}

// discardPending waits for a background upload and drops its result.
func (w *s3Writer) discardPending() {
	if w.pending != nil {
		r := <-w.pending
		w.pending = nil
		closeRemove(r.f)
	}
}

func (w *s3Writer) abortMultipart(ctx context.Context) error {
	if w.uploadID == "" {
		return nil
	}
	s := w.s
	ctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), cleanupTimeout)
	defer cancel()
	err := s.do(ctx, "abort multipart upload "+s.url(w.key), func(ctx context.Context) error {
		_, err := s.client.AbortMultipartUpload(ctx, &s3.AbortMultipartUploadInput{
			Bucket: &s.cfg.Bucket, Key: &w.key, UploadId: &w.uploadID,
		})
		return err
	})
	if errors.Is(err, ErrNotExist) {
		err = nil // already gone
	}
	if err != nil {
		s.log.Error("multipart upload left behind; a bucket lifecycle rule for incomplete uploads will remove it",
			"key", w.key, "upload_id", w.uploadID, "err", err)
		return err
	}
	w.uploadID = ""
	return nil
}

// cleanup releases the spool files: back to the store's pool when reuse
// is set (after Commit or Abort, when nothing reads them any more), else
// closed (after a failure, when a request that failed may still be
// reading its body).
func (w *s3Writer) cleanup(reuse bool) {
	for _, f := range []*os.File{w.cur, w.spare} {
		if reuse {
			w.s.spools.put(f)
		} else {
			closeRemove(f)
		}
	}
	w.cur, w.spare = nil, nil
	w.s.buffers.put(w.bw)
	w.bw = nil
}
