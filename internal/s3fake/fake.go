package s3fake

import (
	"bufio"
	"bytes"
	"crypto/md5"
	"crypto/sha1"
	"crypto/sha256"
	"encoding/base64"
	"encoding/binary"
	"encoding/hex"
	"encoding/xml"
	"errors"
	"fmt"
	"hash/crc32"
	"io"
	"net/http"
	"net/http/httptest"
	"sort"
	"strconv"
	"strings"
	"sync"
	"time"
)

// Operation names, as used by FailNext and Count.
const (
	OpCreateBucket            = "CreateBucket"
	OpHeadBucket              = "HeadBucket"
	OpListObjectsV2           = "ListObjectsV2"
	OpListMultipartUploads    = "ListMultipartUploads"
	OpPutObject               = "PutObject"
	OpGetObject               = "GetObject"
	OpHeadObject              = "HeadObject"
	OpDeleteObject            = "DeleteObject"
	OpDeleteObjects           = "DeleteObjects"
	OpCreateMultipartUpload   = "CreateMultipartUpload"
	OpUploadPart              = "UploadPart"
	OpCompleteMultipartUpload = "CompleteMultipartUpload"
	OpAbortMultipartUpload    = "AbortMultipartUpload"
)

// DefaultMinPartSize is S3's smallest allowed non-final part: 5 MiB.
const DefaultMinPartSize = 5 << 20

const s3NS = "http://s3.amazonaws.com/doc/2006-03-01/"

// Server is an in-process S3 server on a loopback port. Its zero value is
// not usable; call New.
type Server struct {
	// URL is the endpoint, e.g. http://127.0.0.1:12345. Use path-style
	// addressing.
	URL string

	srv *httptest.Server

	// latency is added before every request is answered (SetLatency).
	latency time.Duration

	mu          sync.Mutex
	minPartSize int64
	maxKeys     int
	buckets     map[string]map[string]*object
	uploads     map[string]*upload
	nextUpload  int
	faults      []*fault
	deny        bool
	down        bool
	counts      map[string]int
	keyCounts   map[string]int // by operation and key (CountKeys)
	headers     map[string]http.Header
	history     map[string][]http.Header // every request's headers, by operation
	regions     map[string]bucketRegion  // SetBucketRegion
	// refuseFullObject: CreateMultipartUpload refuses the FULL_OBJECT
	// checksum type (RefuseFullObject).
	refuseFullObject bool
}

type object struct {
	data []byte
	etag string
	mod  time.Time
	meta objectMeta
	sum  checksum // the checksum kept, if any (a part's: its CRC32C)
}

type upload struct {
	bucket, key string
	parts       map[int]*object
	created     time.Time
	meta        objectMeta // of the object it completes
	sum         checksum   // the algorithm and type asked for, value unset
}

type fault struct {
	op     string
	left   int
	status int
	code   string
	after  bool // carry the request out, then answer with the fault
}

// New starts a server. Stop it with Close.
func New() *Server {
	s := &Server{
		minPartSize: DefaultMinPartSize,
		maxKeys:     1000,
		buckets:     map[string]map[string]*object{},
		uploads:     map[string]*upload{},
		counts:      map[string]int{},
		keyCounts:   map[string]int{},
		headers:     map[string]http.Header{},
		history:     map[string][]http.Header{},
		regions:     map[string]bucketRegion{},
	}
	s.srv = httptest.NewServer(http.HandlerFunc(s.serve))
	s.URL = s.srv.URL
	return s
}

// Close stops the server.
func (s *Server) Close() { s.srv.Close() }

// SetMinPartSize changes the smallest non-final part CompleteMultipartUpload
// accepts (default 5 MiB, as in S3).
func (s *Server) SetMinPartSize(n int64) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.minPartSize = n
}

// SetMaxKeys caps the keys returned per ListObjectsV2 page (default 1000,
// as in S3), so tests can exercise pagination with few objects.
func (s *Server) SetMaxKeys(n int) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.maxKeys = n
}

// SetLatency adds d before every request is answered (0, the default,
// adds none), as a real S3 takes 10-50 ms per request: requests in
// flight wait in parallel, so a client's concurrency shows in its wall
// time.
func (s *Server) SetLatency(d time.Duration) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.latency = d
}

// CreateBucket creates a bucket (no-op if it exists).
func (s *Server) CreateBucket(name string) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.buckets[name] == nil {
		s.buckets[name] = map[string]*object{}
	}
}

// FailNext makes the next n requests of operation op (any operation if op
// is "") fail with HTTP status. Faults queue in the order they were added.
func (s *Server) FailNext(op string, n, status int) {
	s.FailNextCode(op, n, status, "")
}

// FailNextCode is FailNext with a given S3 error code in the response body
// ("" picks one from the status: InternalError, SlowDown, AccessDenied,
// InvalidRequest).
func (s *Server) FailNextCode(op string, n, status int, code string) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.faults = append(s.faults, &fault{op: op, left: n, status: status, code: code})
}

// FailNextAfter makes the next n requests of operation op take effect and
// then answer with HTTP status, as when a response is lost: the client sees
// a failure although the server did the work.
func (s *Server) FailNextAfter(op string, n, status int) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.faults = append(s.faults, &fault{op: op, left: n, status: status, after: true})
}

// Header returns the headers of the last request of operation op, or nil.
func (s *Server) Header(op string) http.Header {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.headers[op].Clone()
}

// DenyAccess makes every request fail with 403 AccessDenied while deny is true.
func (s *Server) DenyAccess(deny bool) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.deny = deny
}

// SetDown makes every request fail with 503 ServiceUnavailable while down
// is true, as a store in an outage (a fault switch).
func (s *Server) SetDown(down bool) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.down = down
}

// Count returns how many requests of operation op the server has received
// (including failed and injected-fault ones).
func (s *Server) Count(op string) int {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.counts[op]
}

// CountKeys returns how many requests of operation op the server has
// received for each object key (including failed and injected-fault
// ones).
func (s *Server) CountKeys(op string) map[string]int {
	s.mu.Lock()
	defer s.mu.Unlock()
	out := map[string]int{}
	for k, n := range s.keyCounts {
		if key, ok := strings.CutPrefix(k, op+" "); ok {
			out[key] = n
		}
	}
	return out
}

// PendingUploads returns the number of multipart uploads in bucket that were
// created and neither completed nor aborted.
func (s *Server) PendingUploads(bucket string) int {
	s.mu.Lock()
	defer s.mu.Unlock()
	n := 0
	for _, u := range s.uploads {
		if u.bucket == bucket {
			n++
		}
	}
	return n
}

// Keys returns the sorted object keys in bucket.
func (s *Server) Keys(bucket string) []string {
	s.mu.Lock()
	defer s.mu.Unlock()
	keys := make([]string, 0, len(s.buckets[bucket]))
	for k := range s.buckets[bucket] {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	return keys
}

// Object returns a copy of an object's bytes.
func (s *Server) Object(bucket, key string) ([]byte, bool) {
	s.mu.Lock()
	defer s.mu.Unlock()
	o, ok := s.buckets[bucket][key]
	if !ok {
		return nil, false
	}
	return bytes.Clone(o.data), true
}

// s3Error is an S3 error response.
type s3Error struct {
	status       int
	code         string
	message      string
	bucketRegion string // sent as x-amz-bucket-region
}

func (e *s3Error) Error() string { return e.code + ": " + e.message }

func errf(status int, code, format string, args ...any) *s3Error {
	return &s3Error{status: status, code: code, message: fmt.Sprintf(format, args...)}
}

func classify(r *http.Request, key string) string {
	q := r.URL.Query()
	if key == "" {
		switch r.Method {
		case http.MethodPut:
			return OpCreateBucket
		case http.MethodHead:
			return OpHeadBucket
		case http.MethodPost:
			if q.Has("delete") {
				return OpDeleteObjects
			}
		case http.MethodGet:
			if q.Has("uploads") {
				return OpListMultipartUploads
			}
			if q.Get("list-type") == "2" {
				return OpListObjectsV2
			}
		}
		return ""
	}
	switch {
	case q.Has("tagging") && r.Method == http.MethodPut:
		return OpPutObjectTagging
	case q.Has("tagging") && r.Method == http.MethodGet:
		return OpGetObjectTagging
	}
	switch r.Method {
	case http.MethodPut:
		if q.Has("uploadId") {
			return OpUploadPart
		}
		return OpPutObject
	case http.MethodPost:
		if q.Has("uploads") {
			return OpCreateMultipartUpload
		}
		if q.Has("uploadId") {
			return OpCompleteMultipartUpload
		}
	case http.MethodGet:
		return OpGetObject
	case http.MethodHead:
		return OpHeadObject
	case http.MethodDelete:
		if q.Has("uploadId") {
			return OpAbortMultipartUpload
		}
		return OpDeleteObject
	}
	return ""
}

// injected returns the fault to answer with, if any, and whether the
// request must be carried out first.
func (s *Server) injected(r *http.Request, op string) (*s3Error, bool) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.counts[op]++
	if _, key, ok := strings.Cut(strings.TrimPrefix(r.URL.Path, "/"), "/"); ok {
		s.keyCounts[op+" "+key]++
	}
	s.headers[op] = r.Header.Clone()
	s.history[op] = append(s.history[op], r.Header.Clone())
	if s.down {
		return errf(http.StatusServiceUnavailable, "ServiceUnavailable", "store down (SetDown)"), false
	}
	if s.deny {
		return errf(http.StatusForbidden, "AccessDenied", "Access Denied"), false
	}
	for i, f := range s.faults {
		if f.op != "" && f.op != op {
			continue
		}
		f.left--
		if f.left <= 0 {
			s.faults = append(s.faults[:i], s.faults[i+1:]...)
		}
		code := "InternalError"
		switch {
		case f.code != "":
			code = f.code
		case f.status == http.StatusServiceUnavailable:
			code = "SlowDown"
		case f.status == http.StatusForbidden:
			code = "AccessDenied"
		case f.status < 500:
			code = "InvalidRequest"
		}
		return errf(f.status, code, "injected fault"), f.after
	}
	return nil, false
}

func (s *Server) serve(w http.ResponseWriter, r *http.Request) {
	s.mu.Lock()
	lat := s.latency
	s.mu.Unlock()
	if lat > 0 {
		select {
		case <-time.After(lat):
		case <-r.Context().Done():
		}
	}
	path := strings.TrimPrefix(r.URL.Path, "/")
	bucket, key, _ := strings.Cut(path, "/")
	op := classify(r, key)
	var err error
	switch {
	case bucket == "":
		err = errf(http.StatusNotImplemented, "NotImplemented", "ListBuckets is not supported")
	case op == "":
		err = errf(http.StatusNotImplemented, "NotImplemented", "%s %s is not supported", r.Method, r.URL.RequestURI())
	default:
		e, after := s.injected(r, op)
		if e == nil {
			if re := s.wrongRegion(r, bucket); re != nil {
				e, after = re, false
			}
		}
		switch {
		case e == nil:
			err = s.handle(w, r, op, bucket, key)
		case after:
			_ = s.handle(httptest.NewRecorder(), r, op, bucket, key)
			err = e
		default:
			err = e
		}
	}
	if err == nil {
		return
	}
	var e *s3Error
	if !errors.As(err, &e) {
		e = errf(http.StatusInternalServerError, "InternalError", "%v", err)
	}
	w.Header().Set("Content-Type", "application/xml")
	if e.bucketRegion != "" {
		w.Header().Set("X-Amz-Bucket-Region", e.bucketRegion)
	}
	w.WriteHeader(e.status)
	if r.Method == http.MethodHead {
		return
	}
	type errorBody struct {
		XMLName  xml.Name `xml:"Error"`
		Code     string
		Message  string
		Resource string
	}
	writeXML(w, errorBody{Code: e.code, Message: e.message, Resource: r.URL.Path})
}

func writeXML(w io.Writer, v any) {
	_, _ = io.WriteString(w, xml.Header)
	_ = xml.NewEncoder(w).Encode(v)
}

func (s *Server) handle(w http.ResponseWriter, r *http.Request, op, bucket, key string) error {
	if op == OpCreateBucket {
		s.CreateBucket(bucket)
		w.WriteHeader(http.StatusOK)
		return nil
	}
	var body []byte
	if r.Method == http.MethodPut || r.Method == http.MethodPost {
		var err error
		// CompleteMultipartUpload's checksum header is the whole object's,
		// checked by completeUpload, not its XML body's.
		if body, err = readBody(r, op != OpCompleteMultipartUpload); err != nil {
			return err
		}
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	objects, ok := s.buckets[bucket]
	if !ok {
		return errf(http.StatusNotFound, "NoSuchBucket", "The specified bucket does not exist: %s", bucket)
	}
	q := r.URL.Query()
	switch op {
	case OpHeadBucket:
		w.WriteHeader(http.StatusOK)
		return nil
	case OpListObjectsV2:
		return s.listObjectsV2(w, q.Get("prefix"), q.Get("start-after"), q.Get("continuation-token"), q.Get("max-keys"), q.Get("delimiter"), bucket, objects)
	case OpListMultipartUploads:
		return s.listUploads(w, bucket)
	case OpDeleteObjects:
		return deleteObjects(w, objects, body)
	case OpPutObject, OpGetObject, OpHeadObject, OpDeleteObject, OpPutObjectTagging, OpGetObjectTagging:
		return s.handleObject(w, r, op, objects, key, body)
	case OpCreateMultipartUpload:
		return s.createUpload(w, r, bucket, key)
	}
	return s.handleUpload(w, r, op, bucket, key, objects, body)
}

// handleUpload serves UploadPart, AbortMultipartUpload and
// CompleteMultipartUpload on one upload. The caller holds s.mu.
func (s *Server) handleUpload(w http.ResponseWriter, r *http.Request, op, bucket, key string, objects map[string]*object, body []byte) error {
	q := r.URL.Query()
	u, ok := s.uploads[q.Get("uploadId")]
	if !ok || u.bucket != bucket || u.key != key {
		return errf(http.StatusNotFound, "NoSuchUpload", "The specified upload does not exist: %q", q.Get("uploadId"))
	}
	switch op {
	case OpUploadPart:
		n, err := strconv.Atoi(q.Get("partNumber"))
		if err != nil || n < 1 || n > 10000 {
			return errf(http.StatusBadRequest, "InvalidArgument", "bad partNumber %q", q.Get("partNumber"))
		}
		if err := u.meta.checkCustomerKey(r.Header); err != nil {
			return err
		}
		o := newObject(body)
		o.sum = checksum{algorithm: "CRC32C", value: r.Header.Get("X-Amz-Checksum-Crc32c")}
		u.parts[n] = o
		w.Header().Set("ETag", o.etag)
		w.WriteHeader(http.StatusOK)
		return nil
	case OpAbortMultipartUpload:
		delete(s.uploads, q.Get("uploadId"))
		w.WriteHeader(http.StatusNoContent)
		return nil
	case OpCompleteMultipartUpload:
		o, err := s.completeUpload(u, body)
		if err != nil {
			return err
		}
		if o.sum, err = u.sum.complete(u, o.data, r.Header); err != nil {
			return err
		}
		o.meta = u.meta
		objects[key] = o
		delete(s.uploads, q.Get("uploadId"))
		type result struct {
			XMLName xml.Name `xml:"CompleteMultipartUploadResult"`
			NS      string   `xml:"xmlns,attr"`
			Bucket  string
			Key     string
			ETag    string
		}
		writeXML(w, result{NS: s3NS, Bucket: bucket, Key: key, ETag: o.etag})
		return nil
	}
	return errf(http.StatusNotImplemented, "NotImplemented", "%s is not supported", op)
}

// handleObject serves PutObject, GetObject, HeadObject, DeleteObject and
// the tagging calls on one bucket's objects. The caller holds s.mu.
func (s *Server) handleObject(w http.ResponseWriter, r *http.Request, op string, objects map[string]*object, key string, body []byte) error {
	switch op {
	case OpPutObject:
		if r.Header.Get("X-Amz-Copy-Source") != "" {
			return errf(http.StatusNotImplemented, "NotImplemented", "CopyObject is not supported")
		}
		meta, err := metaFrom(r.Header)
		if err != nil {
			return err
		}
		o := newObject(body)
		o.meta = meta
		if crc := r.Header.Get("X-Amz-Checksum-Crc32c"); crc != "" {
			o.sum = checksum{algorithm: "CRC32C", typ: "FULL_OBJECT", value: crc}
		}
		objects[key] = o
		w.Header().Set("ETag", o.etag)
		w.WriteHeader(http.StatusOK)
		return nil
	case OpDeleteObject:
		delete(objects, key)
		w.WriteHeader(http.StatusNoContent)
		return nil
	}
	o, ok := objects[key]
	if !ok {
		return errf(http.StatusNotFound, "NoSuchKey", "The specified key does not exist: %s", key)
	}
	if op == OpPutObjectTagging || op == OpGetObjectTagging {
		return s.handleTagging(w, op, o, body)
	}
	if err := o.meta.checkCustomerKey(r.Header); err != nil {
		return err
	}
	h := w.Header()
	o.meta.setHeaders(h)
	if strings.EqualFold(r.Header.Get("X-Amz-Checksum-Mode"), "ENABLED") {
		o.sum.setHeaders(h)
	}
	h.Set("ETag", o.etag)
	h.Set("Last-Modified", o.mod.UTC().Format(http.TimeFormat))
	h.Set("Content-Length", strconv.Itoa(len(o.data)))
	h.Set("Content-Type", "application/octet-stream")
	w.WriteHeader(http.StatusOK)
	if op == OpGetObject {
		_, _ = w.Write(o.data)
	}
	return nil
}

// createUpload starts a multipart upload. The caller holds s.mu.
func (s *Server) createUpload(w http.ResponseWriter, r *http.Request, bucket, key string) error {
	meta, err := metaFrom(r.Header)
	if err != nil {
		return err
	}
	sum, err := s.uploadChecksum(r.Header)
	if err != nil {
		return err
	}
	s.nextUpload++
	id := fmt.Sprintf("upload-%d", s.nextUpload)
	s.uploads[id] = &upload{bucket: bucket, key: key, parts: map[int]*object{}, created: time.Now(), meta: meta, sum: sum}
	type result struct {
		XMLName  xml.Name `xml:"InitiateMultipartUploadResult"`
		NS       string   `xml:"xmlns,attr"`
		Bucket   string
		Key      string
		UploadID string `xml:"UploadId"`
	}
	writeXML(w, result{NS: s3NS, Bucket: bucket, Key: key, UploadID: id})
	return nil
}

// completeUpload joins the parts that body (a CompleteMultipartUpload
// request) lists into one object, checking order, ETags and the minimum
// part size as S3 does. The caller holds s.mu.
func (s *Server) completeUpload(u *upload, body []byte) (*object, error) {
	var req struct {
		Parts []struct {
			PartNumber int
			ETag       string
		} `xml:"Part"`
	}
	if err := xml.Unmarshal(body, &req); err != nil {
		return nil, errf(http.StatusBadRequest, "MalformedXML", "%v", err)
	}
	if len(req.Parts) == 0 {
		return nil, errf(http.StatusBadRequest, "MalformedXML", "no parts")
	}
	var data []byte
	var sums []byte
	for i, p := range req.Parts {
		if i > 0 && p.PartNumber <= req.Parts[i-1].PartNumber {
			return nil, errf(http.StatusBadRequest, "InvalidPartOrder", "parts not in ascending order")
		}
		o, ok := u.parts[p.PartNumber]
		if !ok || strings.Trim(p.ETag, `"`) != strings.Trim(o.etag, `"`) {
			return nil, errf(http.StatusBadRequest, "InvalidPart", "part %d not found or ETag mismatch", p.PartNumber)
		}
		if i < len(req.Parts)-1 && int64(len(o.data)) < s.minPartSize {
			return nil, errf(http.StatusBadRequest, "EntityTooSmall", "part %d has %d bytes, minimum is %d", p.PartNumber, len(o.data), s.minPartSize)
		}
		data = append(data, o.data...)
		sum, _ := hex.DecodeString(strings.Trim(o.etag, `"`))
		sums = append(sums, sum...)
	}
	sum := md5.Sum(sums)
	return &object{data: data, etag: fmt.Sprintf(`"%x-%d"`, sum, len(req.Parts)), mod: time.Now()}, nil
}

func newObject(data []byte) *object {
	return &object{data: data, etag: fmt.Sprintf(`"%x"`, md5.Sum(data)), mod: time.Now()}
}

func (s *Server) listObjectsV2(w http.ResponseWriter, prefix, startAfter, token, maxKeysArg, delimiter, bucket string, objects map[string]*object) error {
	maxKeys := s.maxKeys
	if maxKeysArg != "" {
		n, err := strconv.Atoi(maxKeysArg)
		if err != nil || n < 0 {
			return errf(http.StatusBadRequest, "InvalidArgument", "bad max-keys %q", maxKeysArg)
		}
		maxKeys = min(maxKeys, n)
	}
	after := startAfter
	if token != "" {
		b, err := base64.RawURLEncoding.DecodeString(token)
		if err != nil {
			return errf(http.StatusBadRequest, "InvalidArgument", "bad continuation token")
		}
		after = max(after, string(b))
	}
	keys := listEntries(objects, prefix, after, delimiter)
	type content struct {
		Key          string
		LastModified string
		ETag         string
		Size         int
		StorageClass string
	}
	type result struct {
		XMLName               xml.Name `xml:"ListBucketResult"`
		NS                    string   `xml:"xmlns,attr"`
		Name                  string
		Prefix                string
		StartAfter            string `xml:",omitempty"`
		ContinuationToken     string `xml:",omitempty"`
		KeyCount              int
		MaxKeys               int
		IsTruncated           bool
		NextContinuationToken string `xml:",omitempty"`
		Delimiter             string `xml:",omitempty"`
		Contents              []content
		CommonPrefixes        []commonPrefix
	}
	res := result{NS: s3NS, Name: bucket, Prefix: prefix, StartAfter: startAfter, ContinuationToken: token, MaxKeys: maxKeys, Delimiter: delimiter}
	if len(keys) > maxKeys {
		keys = keys[:maxKeys]
		res.IsTruncated = true
		if maxKeys > 0 {
			res.NextContinuationToken = base64.RawURLEncoding.EncodeToString([]byte(keys[len(keys)-1]))
		}
	}
	for _, k := range keys {
		o, ok := objects[k]
		if !ok {
			res.CommonPrefixes = append(res.CommonPrefixes, commonPrefix{Prefix: k})
			continue
		}
		res.Contents = append(res.Contents, content{
			Key: k, LastModified: o.mod.UTC().Format("2006-01-02T15:04:05.000Z"),
			ETag: o.etag, Size: len(o.data), StorageClass: "STANDARD",
		})
	}
	res.KeyCount = len(res.Contents) + len(res.CommonPrefixes)
	writeXML(w, res)
	return nil
}

// commonPrefix is a folder of a listing with a delimiter.
type commonPrefix struct {
	Prefix string
}

// listEntries returns, sorted, the keys under prefix after after and,
// with a delimiter, in place of the keys below a folder (prefix, then
// up to and including the delimiter) the folder, once: the entries of a
// ListObjectsV2 page. A folder at or before after was on an earlier page.
func listEntries(objects map[string]*object, prefix, after, delimiter string) []string {
	seen := map[string]bool{}
	var out []string
	for k := range objects {
		if !strings.HasPrefix(k, prefix) {
			continue
		}
		if delimiter != "" {
			if i := strings.Index(k[len(prefix):], delimiter); i >= 0 {
				cp := k[:len(prefix)+i+len(delimiter)]
				if cp > after && !seen[cp] {
					seen[cp] = true
					out = append(out, cp)
				}
				continue
			}
		}
		if k > after {
			out = append(out, k)
		}
	}
	sort.Strings(out)
	return out
}

func (s *Server) listUploads(w http.ResponseWriter, bucket string) error {
	type item struct {
		Key       string
		UploadID  string `xml:"UploadId"`
		Initiated string
	}
	type result struct {
		XMLName     xml.Name `xml:"ListMultipartUploadsResult"`
		NS          string   `xml:"xmlns,attr"`
		Bucket      string
		IsTruncated bool
		Uploads     []item `xml:"Upload"`
	}
	res := result{NS: s3NS, Bucket: bucket}
	for id, u := range s.uploads {
		if u.bucket == bucket {
			res.Uploads = append(res.Uploads, item{Key: u.key, UploadID: id, Initiated: u.created.UTC().Format("2006-01-02T15:04:05.000Z")})
		}
	}
	sort.Slice(res.Uploads, func(i, j int) bool {
		a, b := res.Uploads[i], res.Uploads[j]
		return a.Key < b.Key || a.Key == b.Key && a.UploadID < b.UploadID
	})
	writeXML(w, res)
	return nil
}

// readBody reads a request body, decoding aws-chunked encoding and checking
// the payload hash, the checksum headers (checkChecksums, when check is
// set) and declared lengths when the client sent them, so that a client that resends a
// half-consumed body on retry, or a body corrupted on the way, is caught.
func readBody(r *http.Request, check bool) ([]byte, error) {
	body, err := readRawBody(r)
	if err != nil {
		return nil, err
	}
	if !check {
		return body, nil
	}
	if err := checkChecksums(r.Header, body); err != nil {
		return nil, err
	}
	return body, nil
}

// checkChecksums verifies the x-amz-checksum-crc32c, -crc32, -sha1 and
// -sha256 headers against body, as S3 does: a mismatch is 400 BadDigest.
func checkChecksums(h http.Header, body []byte) error {
	sums := []struct {
		header string
		sum    func([]byte) []byte
	}{
		{"X-Amz-Checksum-Crc32c", func(b []byte) []byte {
			return binary.BigEndian.AppendUint32(nil, crc32.Checksum(b, crc32.MakeTable(crc32.Castagnoli)))
		}},
		{"X-Amz-Checksum-Crc32", func(b []byte) []byte { return binary.BigEndian.AppendUint32(nil, crc32.ChecksumIEEE(b)) }},
		{"X-Amz-Checksum-Sha1", func(b []byte) []byte { s := sha1.Sum(b); return s[:] }},
		{"X-Amz-Checksum-Sha256", func(b []byte) []byte { s := sha256.Sum256(b); return s[:] }},
	}
	for _, c := range sums {
		want := h.Get(c.header)
		if want == "" {
			continue
		}
		if got := base64.StdEncoding.EncodeToString(c.sum(body)); got != want {
			return errf(http.StatusBadRequest, "BadDigest", "the %s you specified (%s) did not match the calculated checksum (%s)", strings.TrimPrefix(strings.ToLower(c.header), "x-amz-checksum-"), want, got)
		}
	}
	return nil
}

// readRawBody reads a request body, decoding aws-chunked encoding and
// checking the payload hash and declared lengths.
func readRawBody(r *http.Request) ([]byte, error) {
	raw, err := io.ReadAll(r.Body)
	if err != nil {
		return nil, errf(http.StatusBadRequest, "IncompleteBody", "%v", err)
	}
	sha := r.Header.Get("X-Amz-Content-Sha256")
	body := raw
	if strings.Contains(r.Header.Get("Content-Encoding"), "aws-chunked") || strings.HasPrefix(sha, "STREAMING-") {
		if body, err = decodeChunked(raw); err != nil {
			return nil, errf(http.StatusBadRequest, "InvalidRequest", "aws-chunked body: %v", err)
		}
		if d := r.Header.Get("X-Amz-Decoded-Content-Length"); d != "" && d != strconv.Itoa(len(body)) {
			return nil, errf(http.StatusBadRequest, "IncompleteBody", "decoded length %d, declared %s", len(body), d)
		}
		return body, nil
	}
	if len(sha) == 64 {
		sum := sha256.Sum256(body)
		if hex.EncodeToString(sum[:]) != strings.ToLower(sha) {
			return nil, errf(http.StatusBadRequest, "XAmzContentSHA256Mismatch", "payload hash does not match x-amz-content-sha256")
		}
	}
	return body, nil
}

func decodeChunked(raw []byte) ([]byte, error) {
	br := bufio.NewReader(bytes.NewReader(raw))
	var out []byte
	for {
		line, err := br.ReadString('\n')
		if err != nil {
			return nil, fmt.Errorf("chunk header: %w", err)
		}
		sizeStr, _, _ := strings.Cut(strings.TrimRight(line, "\r\n"), ";")
		n, err := strconv.ParseInt(sizeStr, 16, 64)
		if err != nil || n < 0 || n > int64(len(raw)) {
			return nil, fmt.Errorf("chunk size %q", sizeStr)
		}
		if n == 0 {
			return out, nil // trailers, if any, are ignored
		}
		chunk := make([]byte, n)
		if _, err := io.ReadFull(br, chunk); err != nil {
			return nil, fmt.Errorf("chunk data: %w", err)
		}
		out = append(out, chunk...)
		if crlf, err := br.ReadString('\n'); err != nil || strings.TrimRight(crlf, "\r\n") != "" {
			return nil, errors.New("missing CRLF after chunk")
		}
	}
}

// deleteObjects serves DeleteObjects: every key of the request goes (a
// missing one too, as S3 answers), and the answer lists them as deleted
// unless the request is quiet. The caller holds s.mu.
func deleteObjects(w http.ResponseWriter, objects map[string]*object, body []byte) error {
	var req struct {
		Quiet   bool `xml:"Quiet"`
		Objects []struct {
			Key string `xml:"Key"`
		} `xml:"Object"`
	}
	if err := xml.Unmarshal(body, &req); err != nil {
		return errf(http.StatusBadRequest, "MalformedXML", "%v", err)
	}
	if len(req.Objects) > 1000 {
		return errf(http.StatusBadRequest, "MalformedXML", "%d keys, at most 1000", len(req.Objects))
	}
	type deleted struct {
		Key string `xml:"Key"`
	}
	out := struct {
		XMLName xml.Name  `xml:"DeleteResult"`
		NS      string    `xml:"xmlns,attr"`
		Deleted []deleted `xml:"Deleted"`
	}{NS: s3NS}
	for _, o := range req.Objects {
		delete(objects, o.Key)
		if !req.Quiet {
			out.Deleted = append(out.Deleted, deleted{o.Key})
		}
	}
	writeXML(w, out)
	return nil
}
