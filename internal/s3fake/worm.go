package s3fake

import (
	"encoding/xml"
	"net/http"
	"slices"
	"time"
)

// This file holds what the fake knows of storage classes and S3 Object
// Lock: the storage class and retention headers of PutObject and
// CreateMultipartUpload (kept, and returned by HeadObject, GetObject and
// listings), archive-tier objects that GetObject refuses with 403
// InvalidObjectState until SetRestored, a bucket's Object Lock
// configuration (SetObjectLock, GetObjectLockConfiguration) and
// conditional writes (If-None-Match: * on PutObject and
// CompleteMultipartUpload: 412 PreconditionFailed when the key holds an
// object). It keeps no versions: a write without a condition replaces
// the object, as the current version would be.

// OpGetObjectLockConfiguration is GetObjectLockConfiguration, as used by
// FailNext and Count.
const OpGetObjectLockConfiguration = "GetObjectLockConfiguration"

// storageClasses are the values S3 accepts in x-amz-storage-class.
var storageClasses = []string{"STANDARD", "REDUCED_REDUNDANCY", "STANDARD_IA", "ONEZONE_IA", "INTELLIGENT_TIERING",
	"GLACIER", "DEEP_ARCHIVE", "OUTPOSTS", "GLACIER_IR", "SNOW", "EXPRESS_ONEZONE", "FSX_OPENZFS", "FSX_ONTAP"}

// objectLock is a bucket's default retention (SetObjectLock).
type objectLock struct {
	mode string
	days int
}

// readWORM reads the storage class and retention headers of a write.
func (m *objectMeta) readWORM(h http.Header) error {
	m.storageClass = h.Get("X-Amz-Storage-Class")
	if m.storageClass != "" && !slices.Contains(storageClasses, m.storageClass) {
		return errf(http.StatusBadRequest, "InvalidStorageClass", "The storage class you specified is not valid: %s", m.storageClass)
	}
	m.lockMode, m.lockUntil = h.Get("X-Amz-Object-Lock-Mode"), h.Get("X-Amz-Object-Lock-Retain-Until-Date")
	if (m.lockMode == "") != (m.lockUntil == "") {
		return errf(http.StatusBadRequest, "InvalidArgument", "x-amz-object-lock-mode and x-amz-object-lock-retain-until-date must both be supplied")
	}
	if m.lockMode != "" && m.lockMode != "GOVERNANCE" && m.lockMode != "COMPLIANCE" {
		return errf(http.StatusBadRequest, "InvalidArgument", "Unknown wormMode directive: %s", m.lockMode)
	}
	if m.lockUntil != "" {
		if _, err := time.Parse(time.RFC3339, m.lockUntil); err != nil {
			return errf(http.StatusBadRequest, "InvalidArgument", "The retain until date must be in ISO 8601 format: %s", m.lockUntil)
		}
	}
	return nil
}

// class is the object's storage class as listings print it.
func (m objectMeta) class() string {
	if m.storageClass == "" {
		return "STANDARD"
	}
	return m.storageClass
}

// archived reports whether GetObject must refuse the object: an archive
// tier without a restored copy.
func (m objectMeta) archived() bool {
	return (m.storageClass == "GLACIER" || m.storageClass == "DEEP_ARCHIVE") && !m.restored
}

// setWORMHeaders adds the storage class, restore and retention headers
// of a HeadObject or GetObject.
func (m objectMeta) setWORMHeaders(h http.Header) {
	if m.storageClass != "" && m.storageClass != "STANDARD" {
		h.Set("X-Amz-Storage-Class", m.storageClass)
	}
	if m.restored {
		h.Set("X-Amz-Restore", `ongoing-request="false", expiry-date="Fri, 21 Dec 2040 00:00:00 GMT"`)
	}
	if m.lockMode != "" {
		h.Set("X-Amz-Object-Lock-Mode", m.lockMode)
		h.Set("X-Amz-Object-Lock-Retain-Until-Date", m.lockUntil)
	}
}

// noneMatch refuses a conditional write (If-None-Match: *) to a key
// that holds an object. The caller holds s.mu.
func noneMatch(r *http.Request, objects map[string]*object, key string) error {
	if r.Header.Get("If-None-Match") == "" {
		return nil
	}
	if r.Header.Get("If-None-Match") != "*" {
		return errf(http.StatusNotImplemented, "NotImplemented", "If-None-Match other than *")
	}
	if _, ok := objects[key]; ok {
		return errf(http.StatusPreconditionFailed, "PreconditionFailed", "At least one of the pre-conditions you specified did not hold")
	}
	return nil
}

// SetStorageClass moves an object to storage class (as a lifecycle
// transition would), without a restored copy. It reports whether the
// object exists.
func (s *Server) SetStorageClass(bucket, key, class string) bool {
	s.mu.Lock()
	defer s.mu.Unlock()
	o, ok := s.buckets[bucket][key]
	if ok {
		o.meta.storageClass, o.meta.restored = class, false
	}
	return ok
}

// SetRestored gives an archive-tier object a restored copy (as a
// finished RestoreObject does), or takes it away. It reports whether the
// object exists.
func (s *Server) SetRestored(bucket, key string, restored bool) bool {
	s.mu.Lock()
	defer s.mu.Unlock()
	o, ok := s.buckets[bucket][key]
	if ok {
		o.meta.restored = restored
	}
	return ok
}

// SetRetention sets an object's retention mode and retain-until date
// (RFC 3339; both "" for none), as PutObjectRetention does, or as time
// passing ends it. It reports whether the object exists.
func (s *Server) SetRetention(bucket, key, mode, until string) bool {
	s.mu.Lock()
	defer s.mu.Unlock()
	o, ok := s.buckets[bucket][key]
	if ok {
		o.meta.lockMode, o.meta.lockUntil = mode, until
	}
	return ok
}

// StorageClass returns the storage class an object was written with
// ("" for none) and its retention mode and retain-until date.
func (s *Server) StorageClass(bucket, key string) (class, lockMode, lockUntil string) {
	s.mu.Lock()
	defer s.mu.Unlock()
	o, ok := s.buckets[bucket][key]
	if !ok {
		return "", "", ""
	}
	return o.meta.storageClass, o.meta.lockMode, o.meta.lockUntil
}

// SetObjectLock enables Object Lock on a bucket with a default retention
// (mode GOVERNANCE or COMPLIANCE, for days), as GetObjectLockConfiguration
// then answers. The fake enforces no retention.
func (s *Server) SetObjectLock(bucket, mode string, days int) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.locks == nil {
		s.locks = map[string]objectLock{}
	}
	s.locks[bucket] = objectLock{mode: mode, days: days}
}

// objectLockConfiguration answers GetObjectLockConfiguration. The
// caller holds s.mu.
func (s *Server) objectLockConfiguration(w http.ResponseWriter, bucket string) error {
	l, ok := s.locks[bucket]
	if !ok {
		return errf(http.StatusNotFound, "ObjectLockConfigurationNotFoundError", "Object Lock configuration does not exist for this bucket")
	}
	type retention struct {
		Mode string
		Days int
	}
	type config struct {
		XMLName           xml.Name `xml:"ObjectLockConfiguration"`
		NS                string   `xml:"xmlns,attr"`
		ObjectLockEnabled string
		Rule              *struct {
			DefaultRetention retention
		} `xml:",omitempty"`
	}
	c := config{NS: s3NS, ObjectLockEnabled: "Enabled"}
	if l.mode != "" {
		c.Rule = &struct{ DefaultRetention retention }{retention{Mode: l.mode, Days: l.days}}
	}
	writeXML(w, c)
	return nil
}
