package s3fake

import (
	"encoding/xml"
	"maps"
	"net/http"
	"net/url"
	"slices"
	"strings"
)

// This file holds what the fake keeps about an object besides its bytes
// (server-side encryption and tags) and the bucket regions: the parts of
// S3 that tests of SSE, object tagging and region errors need on the wire.

// Tagging operations, as used by FailNext and Count.
const (
	OpPutObjectTagging = "PutObjectTagging"
	OpGetObjectTagging = "GetObjectTagging"
)

// maxTags is S3's limit of tags per object.
const maxTags = 10

// SSE describes how an object was stored encrypted, from the headers of
// its PutObject or CreateMultipartUpload.
type SSE struct {
	Algorithm      string // x-amz-server-side-encryption: AES256, aws:kms, aws:kms:dsse or ""
	KMSKeyID       string // x-amz-server-side-encryption-aws-kms-key-id
	CustomerKeyMD5 string // x-amz-server-side-encryption-customer-key-MD5 of SSE-C, or ""
}

// objectMeta is an object's (or a multipart upload's) encryption, tags,
// storage class and retention (worm.go).
type objectMeta struct {
	sse  SSE
	tags map[string]string
	// storageClass is x-amz-storage-class ("": STANDARD); restored is
	// set when an archive-tier object has a restored copy (SetRestored).
	storageClass string
	restored     bool
	// lockMode and lockUntil are x-amz-object-lock-mode and
	// x-amz-object-lock-retain-until-date.
	lockMode, lockUntil string
}

// metaFrom reads the encryption and x-amz-tagging headers of a PutObject
// or CreateMultipartUpload request.
func metaFrom(h http.Header) (objectMeta, error) {
	m := objectMeta{sse: SSE{
		Algorithm:      h.Get("X-Amz-Server-Side-Encryption"),
		KMSKeyID:       h.Get("X-Amz-Server-Side-Encryption-Aws-Kms-Key-Id"),
		CustomerKeyMD5: h.Get("X-Amz-Server-Side-Encryption-Customer-Key-Md5"),
	}}
	if err := m.readWORM(h); err != nil {
		return m, err
	}
	if m.sse.CustomerKeyMD5 != "" && m.sse.Algorithm != "" {
		return m, errf(http.StatusBadRequest, "InvalidArgument", "server side encryption and SSE-C headers together")
	}
	if t := h.Get("X-Amz-Tagging"); t != "" {
		q, err := url.ParseQuery(t)
		if err != nil {
			return m, errf(http.StatusBadRequest, "InvalidArgument", "bad x-amz-tagging: %v", err)
		}
		m.tags = map[string]string{}
		for k, v := range q {
			m.tags[k] = v[0]
		}
	}
	if len(m.tags) > maxTags {
		return m, errf(http.StatusBadRequest, "BadRequest", "Object tags cannot be greater than %d", maxTags)
	}
	return m, nil
}

// checkCustomerKey refuses a request on an SSE-C object (a read, or an
// UploadPart of an SSE-C upload) that does not carry the object's key, as
// S3 does.
func (m objectMeta) checkCustomerKey(h http.Header) error {
	got := h.Get("X-Amz-Server-Side-Encryption-Customer-Key-Md5")
	switch {
	case m.sse.CustomerKeyMD5 == "" && got == "":
		return nil
	case m.sse.CustomerKeyMD5 == "":
		return errf(http.StatusBadRequest, "InvalidRequest", "The encryption parameters are not applicable to this object")
	case got == "" || h.Get("X-Amz-Server-Side-Encryption-Customer-Key") == "":
		return errf(http.StatusBadRequest, "InvalidRequest", "The object was stored using a form of Server Side Encryption. The correct parameters must be provided to retrieve the object.")
	case got != m.sse.CustomerKeyMD5:
		return errf(http.StatusForbidden, "AccessDenied", "The calculated MD5 hash of the key did not match the hash that was provided.")
	}
	return nil
}

// setHeaders adds the encryption headers S3 returns for the object.
func (m objectMeta) setHeaders(h http.Header) {
	m.setWORMHeaders(h)
	if m.sse.Algorithm != "" {
		h.Set("X-Amz-Server-Side-Encryption", m.sse.Algorithm)
	}
	if m.sse.KMSKeyID != "" {
		h.Set("X-Amz-Server-Side-Encryption-Aws-Kms-Key-Id", m.sse.KMSKeyID)
	}
	if m.sse.CustomerKeyMD5 != "" {
		h.Set("X-Amz-Server-Side-Encryption-Customer-Algorithm", "AES256")
		h.Set("X-Amz-Server-Side-Encryption-Customer-Key-Md5", m.sse.CustomerKeyMD5)
	}
}

// tagSet is the XML of PutObjectTagging's body and GetObjectTagging's
// answer.
type tagSet struct {
	XMLName xml.Name `xml:"Tagging"`
	NS      string   `xml:"xmlns,attr,omitempty"`
	Tags    []struct {
		Key   string
		Value string
	} `xml:"TagSet>Tag"`
}

// handleTagging serves PutObjectTagging and GetObjectTagging. The caller
// holds s.mu.
func (s *Server) handleTagging(w http.ResponseWriter, op string, o *object, body []byte) error {
	if op == OpGetObjectTagging {
		out := tagSet{NS: s3NS}
		for _, k := range slices.Sorted(maps.Keys(o.meta.tags)) {
			out.Tags = append(out.Tags, struct{ Key, Value string }{k, o.meta.tags[k]})
		}
		writeXML(w, out)
		return nil
	}
	var in tagSet
	if err := xml.Unmarshal(body, &in); err != nil {
		return errf(http.StatusBadRequest, "MalformedXML", "%v", err)
	}
	if len(in.Tags) > maxTags {
		return errf(http.StatusBadRequest, "BadRequest", "Object tags cannot be greater than %d", maxTags)
	}
	tags := map[string]string{}
	for _, t := range in.Tags {
		if _, dup := tags[t.Key]; dup || t.Key == "" || len(t.Key) > 128 || len(t.Value) > 256 {
			return errf(http.StatusBadRequest, "InvalidTag", "bad or duplicate tag key %q", t.Key)
		}
		tags[t.Key] = t.Value
	}
	o.meta.tags = tags
	w.WriteHeader(http.StatusOK)
	return nil
}

// Tags returns the tags of the object key in bucket (nil when it has none
// or does not exist).
func (s *Server) Tags(bucket, key string) map[string]string {
	s.mu.Lock()
	defer s.mu.Unlock()
	if o, ok := s.buckets[bucket][key]; ok {
		return maps.Clone(o.meta.tags)
	}
	return nil
}

// ObjectSSE returns how the object key in bucket was stored encrypted,
// and whether it exists.
func (s *Server) ObjectSSE(bucket, key string) (SSE, bool) {
	s.mu.Lock()
	defer s.mu.Unlock()
	o, ok := s.buckets[bucket][key]
	if !ok {
		return SSE{}, false
	}
	return o.meta.sse, true
}

// Headers returns the headers of every request of operation op, in the
// order they came.
func (s *Server) Headers(op string) []http.Header {
	s.mu.Lock()
	defer s.mu.Unlock()
	out := make([]http.Header, len(s.history[op]))
	for i, h := range s.history[op] {
		out[i] = h.Clone()
	}
	return out
}

// SetBucketRegion puts bucket in region: a request signed for another
// region is answered as S3 answers it, with status (400
// AuthorizationHeaderMalformed or 301 PermanentRedirect) and the header
// x-amz-bucket-region naming region.
func (s *Server) SetBucketRegion(bucket, region string, status int) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.regions[bucket] = bucketRegion{region: region, status: status}
}

// bucketRegion is a region SetBucketRegion gave a bucket.
type bucketRegion struct {
	region string
	status int
}

// wrongRegion returns the error for a request on bucket signed for
// another region than the bucket's, or nil.
func (s *Server) wrongRegion(r *http.Request, bucket string) *s3Error {
	s.mu.Lock()
	br, ok := s.regions[bucket]
	s.mu.Unlock()
	if !ok {
		return nil
	}
	signed := signedRegion(r.Header.Get("Authorization"))
	if signed == br.region {
		return nil
	}
	var e *s3Error
	if br.status == http.StatusMovedPermanently {
		e = errf(br.status, "PermanentRedirect", "The bucket you are attempting to access must be addressed using the specified endpoint.")
	} else {
		e = errf(br.status, "AuthorizationHeaderMalformed", "the region '%s' is wrong; expecting '%s'", signed, br.region)
	}
	e.bucketRegion = br.region
	return e
}

// signedRegion is the region of a SigV4 Authorization header's credential
// scope (Credential=<key>/<date>/<region>/s3/aws4_request), or "".
func signedRegion(auth string) string {
	_, cred, ok := strings.Cut(auth, "Credential=")
	if !ok {
		return ""
	}
	cred, _, _ = strings.Cut(cred, ",")
	parts := strings.Split(cred, "/")
	if len(parts) < 3 {
		return ""
	}
	return parts[2]
}
