//go:build integration

package bench

import (
	"bufio"
	"bytes"
	"context"
	"encoding/base64"
	"encoding/binary"
	"errors"
	"fmt"
	"hash/crc32"
	"os"
	"path/filepath"
	"sort"
	"sync"

	"github.com/aws/aws-sdk-go-v2/aws"
	v4 "github.com/aws/aws-sdk-go-v2/aws/signer/v4"
	"github.com/aws/aws-sdk-go-v2/credentials"
	"github.com/aws/aws-sdk-go-v2/service/s3"
	"github.com/aws/aws-sdk-go-v2/service/s3/types"
	"github.com/twmb/franz-go/pkg/kgo"

	"github.com/kafkas3/kafkas3/internal/testbed"
	"github.com/kafkas3/kafkas3/s3store"
)

// The limit baseline (issue 12, item 1): a bare pipeline in one process,
// franz-go consuming the topic (as modeConsume does) and aws-sdk-go-v2
// uploading the same bytes to the same S3 server, with no formatting: each
// partition's values, each followed by "\n", are concatenated into objects
// of flush.size records (the bytes sink's objects, byte for byte in size),
// uploaded with PutObject when an object fits in one part and as a
// multipart upload of s3.part.size parts otherwise, at most
// s3store.DefaultBackgroundUploads requests at a time (the sink's upload
// concurrency). The requests have the shape s3store's have: each body sent
// unsigned (UNSIGNED-PAYLOAD) with its CRC32C in x-amz-checksum-crc32c,
// which the server verifies, multipart uploads created with CRC32C and
// completed with the parts' checksums; the SDK's own checksums only when
// required. Parts are held in memory,
// so the baseline's RSS is not a memory reference. modeFileWrite is the
// same pipeline writing each object to a file in a directory (write, fsync,
// rename, directory fsync, as the local store commits), the baseline of the
// local-directory sink.
const (
	modePipeline  = "pipeline"   // consume + S3 upload
	modeFileWrite = "file-write" // consume + file write
)

// limitArgs are the extra inputs of modePipeline and modeFileWrite.
type limitArgs struct {
	FlushSize   int    `json:"flush_size"`
	PartSize    int64  `json:"part_size"`
	Concurrency int    `json:"concurrency"`
	Dir         string `json:"dir,omitempty"` // modeFileWrite
}

// objectSink takes a pipeline's records and finishes its objects.
type objectSink interface {
	add(r *kgo.Record) error
	close() error
}

// pipeline runs a limit baseline: consume a.Data.Topic to its end offsets
// into an objectSink.
func pipeline(ctx context.Context, a childArgs, mode string) (childResult, error) {
	if a.Limit == nil || a.Limit.FlushSize <= 0 {
		return childResult{}, errors.New("limit baseline without flush size")
	}
	var sink objectSink
	if mode == modeFileWrite {
		sink = &dirLimit{dir: a.Limit.Dir, topic: a.Data.Topic, flush: a.Limit.FlushSize, open: map[int32]*dirObject{}}
	} else {
		var err error
		if sink, err = newS3Limit(ctx, a); err != nil {
			return childResult{}, err
		}
	}
	res, err := consumeEach(ctx, a, sink.add)
	if cerr := sink.close(); err == nil {
		err = cerr
	}
	return res, err
}

// crc32c is the base64 of the big-endian CRC32C of b, as
// x-amz-checksum-crc32c wants it.
func crc32c(b []byte) *string {
	sum := crc32.Checksum(b, crc32.MakeTable(crc32.Castagnoli))
	return aws.String(base64.StdEncoding.EncodeToString(binary.BigEndian.AppendUint32(nil, sum)))
}

// unsignedPayload drops SigV4's SHA-256 of the body, as s3store does on
// requests that carry the body's CRC32C.
func unsignedPayload(o *s3.Options) {
	o.APIOptions = append(o.APIOptions, v4.SwapComputePayloadSHA256ForUnsignedPayloadMiddleware)
}

func objectKey(topic string, p int32, offset int64, ext string) string {
	return fmt.Sprintf("topics/%s/partition=%d/%s+%d+%010d%s", topic, p, topic, p, offset, ext)
}

// s3Limit uploads objects with aws-sdk-go-v2.
type s3Limit struct {
	ctx      context.Context
	cl       *s3.Client
	bucket   string
	topic    string
	flush    int
	partSize int64
	bufCap   int           // a part, or a whole object when smaller, and the record that passes it
	slots    chan struct{} // upload concurrency
	wg       sync.WaitGroup
	mu       sync.Mutex
	err      error
	free     [][]byte // part buffers to reuse (fresh memory costs page faults)
	open     map[int32]*s3Object
}

// s3Object is one object being built.
type s3Object struct {
	key      string
	records  int
	buf      []byte
	uploadID string
	next     int32 // next part number
	mu       sync.Mutex
	parts    []types.CompletedPart
	pending  sync.WaitGroup
}

// newS3Limit builds the uploading half of the limit baseline. Over HTTPS
// (a.CABundle) its HTTP client is the SDK's default transport trusting
// that CA, as kafkas3's is with AWS_CA_BUNDLE.
func newS3Limit(ctx context.Context, a childArgs) (*s3Limit, error) {
	cfg := aws.Config{
		Region:                     a.Region,
		Credentials:                credentials.NewStaticCredentialsProvider(a.AccessKey, a.SecretKey, ""),
		RequestChecksumCalculation: aws.RequestChecksumCalculationWhenRequired,
		ResponseChecksumValidation: aws.ResponseChecksumValidationWhenRequired,
	}
	if a.CABundle != "" {
		roots, err := testbed.LoadRoots(a.CABundle)
		if err != nil {
			return nil, err
		}
		cfg.HTTPClient = testbed.HTTPClient(roots)
	}
	cl := s3.NewFromConfig(cfg, func(o *s3.Options) {
		o.BaseEndpoint = aws.String(a.Endpoint)
		o.UsePathStyle = true
	})
	return &s3Limit{ctx: ctx, cl: cl, bucket: a.Bucket, topic: a.Data.Topic, flush: a.Limit.FlushSize,
		partSize: a.Limit.PartSize, slots: make(chan struct{}, a.Limit.Concurrency), open: map[int32]*s3Object{},
		bufCap: int(min(a.Limit.PartSize, int64(a.Limit.FlushSize)*int64(a.Data.ValueSize+1))) + 64<<10}, nil
}

func (l *s3Limit) add(r *kgo.Record) error {
	if err := l.failed(); err != nil {
		return err
	}
	o := l.open[r.Partition]
	if o == nil {
		o = &s3Object{key: objectKey(l.topic, r.Partition, r.Offset, ".bin"), next: 1}
		l.open[r.Partition] = o
	}
	if o.buf == nil {
		o.buf = l.buffer()
	}
	o.buf = append(append(o.buf, r.Value...), '\n')
	o.records++
	if int64(len(o.buf)) > l.partSize { // a full part and more: the object is a multipart upload
		full := o.buf
		o.buf = append(l.buffer(), full[l.partSize:]...)
		if err := l.part(o, full[:l.partSize]); err != nil {
			return err
		}
	}
	if o.records == l.flush {
		delete(l.open, r.Partition)
		return l.finish(o)
	}
	return nil
}

// buffer returns an empty part buffer, reused when one is free.
func (l *s3Limit) buffer() []byte {
	l.mu.Lock()
	defer l.mu.Unlock()
	if n := len(l.free); n > 0 {
		b := l.free[n-1]
		l.free = l.free[:n-1]
		return b[:0]
	}
	return make([]byte, 0, l.bufCap)
}

// release returns an uploaded body's buffer.
func (l *s3Limit) release(b []byte) {
	l.mu.Lock()
	defer l.mu.Unlock()
	l.free = append(l.free, b)
}

func (l *s3Limit) failed() error {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.err
}

func (l *s3Limit) fail(err error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	if l.err == nil {
		l.err = err
	}
}

// async runs fn in the background once an upload slot is free.
func (l *s3Limit) async(fn func() error) {
	l.slots <- struct{}{}
	l.wg.Go(func() {
		defer func() { <-l.slots }()
		if err := fn(); err != nil {
			l.fail(err)
		}
	})
}

// part uploads body as o's next part, starting the multipart upload first.
func (l *s3Limit) part(o *s3Object, body []byte) error {
	if o.uploadID == "" {
		out, err := l.cl.CreateMultipartUpload(l.ctx, &s3.CreateMultipartUploadInput{Bucket: &l.bucket, Key: &o.key,
			ChecksumAlgorithm: types.ChecksumAlgorithmCrc32c})
		if err != nil {
			return fmt.Errorf("create multipart upload %s: %w", o.key, err)
		}
		o.uploadID = aws.ToString(out.UploadId)
	}
	n := o.next
	o.next++
	o.pending.Add(1)
	l.async(func() error {
		defer o.pending.Done()
		defer l.release(body)
		crc := crc32c(body)
		out, err := l.cl.UploadPart(l.ctx, &s3.UploadPartInput{Bucket: &l.bucket, Key: &o.key, UploadId: &o.uploadID,
			PartNumber: aws.Int32(n), Body: bytes.NewReader(body), ContentLength: aws.Int64(int64(len(body))),
			ChecksumCRC32C: crc}, unsignedPayload)
		if err != nil {
			return fmt.Errorf("upload part %d of %s: %w", n, o.key, err)
		}
		o.mu.Lock()
		o.parts = append(o.parts, types.CompletedPart{PartNumber: aws.Int32(n), ETag: out.ETag, ChecksumCRC32C: crc})
		o.mu.Unlock()
		return nil
	})
	return nil
}

// finish uploads the rest of o: PutObject when it was never split into
// parts, else its last part and CompleteMultipartUpload.
func (l *s3Limit) finish(o *s3Object) error {
	body := o.buf
	if o.uploadID == "" {
		l.async(func() error {
			defer l.release(body)
			_, err := l.cl.PutObject(l.ctx, &s3.PutObjectInput{Bucket: &l.bucket, Key: &o.key,
				Body: bytes.NewReader(body), ContentLength: aws.Int64(int64(len(body))), ChecksumCRC32C: crc32c(body)}, unsignedPayload)
			if err != nil {
				return fmt.Errorf("put %s: %w", o.key, err)
			}
			return nil
		})
		return nil
	}
	if len(body) > 0 {
		if err := l.part(o, body); err != nil {
			return err
		}
	}
	l.wg.Go(func() {
		o.pending.Wait()
		sort.Slice(o.parts, func(i, j int) bool { return *o.parts[i].PartNumber < *o.parts[j].PartNumber })
		_, err := l.cl.CompleteMultipartUpload(l.ctx, &s3.CompleteMultipartUploadInput{Bucket: &l.bucket, Key: &o.key,
			UploadId: &o.uploadID, MultipartUpload: &types.CompletedMultipartUpload{Parts: o.parts}})
		if err != nil {
			l.fail(fmt.Errorf("complete %s: %w", o.key, err))
		}
	})
	return nil
}

// close finishes the open objects (the last, shorter object of each
// partition, as the sink's --once does) and waits for every upload.
func (l *s3Limit) close() error {
	ps := make([]int32, 0, len(l.open))
	for p := range l.open {
		ps = append(ps, p)
	}
	sort.Slice(ps, func(i, j int) bool { return ps[i] < ps[j] })
	var err error
	for _, p := range ps {
		if err = l.finish(l.open[p]); err != nil {
			break
		}
	}
	l.wg.Wait()
	if ferr := l.failed(); err == nil {
		err = ferr
	}
	return err
}

// dirLimit writes objects to files.
type dirLimit struct {
	dir   string
	topic string
	flush int
	open  map[int32]*dirObject
}

type dirObject struct {
	path    string
	f       *os.File
	w       *bufio.Writer
	records int
}

func (l *dirLimit) add(r *kgo.Record) error {
	o := l.open[r.Partition]
	if o == nil {
		path := filepath.Join(l.dir, filepath.FromSlash(objectKey(l.topic, r.Partition, r.Offset, ".bin")))
		if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
			return err
		}
		f, err := os.Create(filepath.Join(filepath.Dir(path), "."+filepath.Base(path)+".tmp"))
		if err != nil {
			return err
		}
		o = &dirObject{path: path, f: f, w: bufio.NewWriterSize(f, 64<<10)}
		l.open[r.Partition] = o
	}
	o.w.Write(r.Value) // errors surface on Flush
	o.w.WriteByte('\n')
	o.records++
	if o.records == l.flush {
		delete(l.open, r.Partition)
		return o.commit()
	}
	return nil
}

// commit flushes, fsyncs and renames the file into place, then fsyncs its
// directory.
func (o *dirObject) commit() error {
	err := o.w.Flush()
	if err == nil {
		err = o.f.Sync()
	}
	if cerr := o.f.Close(); err == nil {
		err = cerr
	}
	if err == nil {
		err = os.Rename(o.f.Name(), o.path)
	}
	if err != nil {
		return err
	}
	d, err := os.Open(filepath.Dir(o.path))
	if err != nil {
		return err
	}
	err = d.Sync()
	if cerr := d.Close(); err == nil {
		err = cerr
	}
	return err
}

func (l *dirLimit) close() error {
	for p, o := range l.open {
		delete(l.open, p)
		if err := o.commit(); err != nil {
			return err
		}
	}
	return nil
}

// baseline is the mean of the limit runs a sink row is compared with.
type baseline struct {
	name     string
	rate     float64 // bytes per second
	cpuPerGB float64 // the process's CPU seconds per 10^9 value bytes
}

func (r *row) cpuPerGB() float64 { return r.cpu.self.Seconds() / (float64(r.bytes) / 1e9) }

// meanBaseline is the mean rate and CPU per GB of rows.
func meanBaseline(name string, rows ...*row) *baseline {
	b := &baseline{name: name}
	for _, r := range rows {
		b.rate += r.rate() / float64(len(rows))
		b.cpuPerGB += r.cpuPerGB() / float64(len(rows))
	}
	return b
}

// limitRow runs a limit baseline over d: the bare consume+upload pipeline
// into a fresh bucket, or, with local, the consume+file write pipeline, with
// the sink's objects (flushSize records) and part size (0: the default).
// It checks that every byte arrived.
func (e *env) limitRow(name string, d dataset, flushSize int, partSize int64, local bool) *row {
	if partSize == 0 {
		partSize = s3store.DefaultPartSize
	}
	a := childArgs{Data: d, Limit: &limitArgs{FlushSize: flushSize, PartSize: partSize, Concurrency: s3store.DefaultBackgroundUploads}}
	mode := modePipeline
	if local {
		mode = modeFileWrite
		a.Limit.Dir = filepath.Join(e.dir, fmt.Sprintf("limit-%d", len(e.rows)))
	} else {
		var err error
		if a.Bucket, err = e.s3.CreateBucketContext(e.ctx); err != nil {
			e.b.Fatal(err)
		}
		a.Endpoint, a.Region, a.AccessKey, a.SecretKey = e.s3.Endpoint, e.s3.Region, e.s3.AccessKey, e.s3.SecretKey
		a.CABundle = e.s3.CAPath
	}
	pr, res := e.child(name, mode, a)
	if res.Records != d.Records || res.Bytes != d.Bytes() {
		e.b.Fatalf("%s: read %d records, %d bytes; want %d, %d", name, res.Records, res.Bytes, d.Records, d.Bytes())
	}
	var objs []object
	if local {
		objs = localObjects(e.b, a.Limit.Dir)
	} else {
		objs = e.listObjects(a.Bucket)
	}
	var stored int64
	for _, o := range objs {
		stored += o.size
	}
	if stored != d.Records*(valueSize+1) {
		e.b.Fatalf("%s: stored %d bytes in %d objects, want %d", name, stored, len(objs), d.Records*(valueSize+1))
	}
	return e.add(&row{name: name, kind: kindLimit, records: res.Records, bytes: res.Bytes, wall: pr.wall, rssKiB: pr.rssKiB, cpu: pr.cpu,
		note: fmt.Sprintf("%d objects, %s stored", len(objs), human(stored))})
}
