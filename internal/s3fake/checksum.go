package s3fake

import (
	"encoding/base64"
	"encoding/binary"
	"hash/crc32"
	"net/http"
	"slices"
	"strconv"
	"strings"
)

// This file holds the checksums the fake keeps, as S3 does: the CRC32C a
// PutObject carried (x-amz-checksum-crc32c), and for a multipart upload
// started with x-amz-checksum-algorithm CRC32C either the whole object's
// (x-amz-checksum-type FULL_OBJECT, checked against the CRC32C that
// CompleteMultipartUpload carries) or a composite one (the CRC32C of the
// parts' CRC32Cs, "-<parts>"). HeadObject and GetObject return it with
// x-amz-checksum-mode: ENABLED. Other algorithms are not kept.

// checksum is a kept checksum: algorithm (only "CRC32C" is kept), type
// (FULL_OBJECT or COMPOSITE) and value as S3 prints it.
type checksum struct {
	algorithm, typ, value string
}

var castagnoli = crc32.MakeTable(crc32.Castagnoli)

func crc32cText(b []byte) string {
	return base64.StdEncoding.EncodeToString(binary.BigEndian.AppendUint32(nil, crc32.Checksum(b, castagnoli)))
}

// setHeaders writes the checksum headers of a HeadObject or GetObject
// with checksum mode enabled.
func (c checksum) setHeaders(h http.Header) {
	if c.algorithm != "CRC32C" || c.value == "" {
		return
	}
	h.Set("X-Amz-Checksum-Crc32c", c.value)
	h.Set("X-Amz-Checksum-Type", c.typ)
}

// RefuseFullObject makes CreateMultipartUpload refuse the FULL_OBJECT
// checksum type with 400 InvalidRequest, as an S3-compatible server
// without it might.
func (s *Server) RefuseFullObject(refuse bool) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.refuseFullObject = refuse
}

// Checksum returns the checksum the fake keeps for an object: its type
// (FULL_OBJECT or COMPOSITE) and CRC32C as S3 prints it; "" when none.
func (s *Server) Checksum(bucket, key string) (typ, crc32c string) {
	s.mu.Lock()
	defer s.mu.Unlock()
	o, ok := s.buckets[bucket][key]
	if !ok || o.sum.algorithm != "CRC32C" {
		return "", ""
	}
	return o.sum.typ, o.sum.value
}

// uploadChecksum reads the checksum algorithm and type a
// CreateMultipartUpload asks for. The caller holds s.mu.
func (s *Server) uploadChecksum(h http.Header) (checksum, error) {
	c := checksum{algorithm: strings.ToUpper(h.Get("X-Amz-Checksum-Algorithm")), typ: strings.ToUpper(h.Get("X-Amz-Checksum-Type"))}
	switch {
	case c.typ == "FULL_OBJECT" && s.refuseFullObject:
		return c, errf(http.StatusBadRequest, "InvalidRequest", "The FULL_OBJECT checksum type is not supported")
	case c.typ == "FULL_OBJECT" && c.algorithm != "CRC32C" && c.algorithm != "CRC32" && c.algorithm != "CRC64NVME":
		return c, errf(http.StatusBadRequest, "InvalidRequest", "The FULL_OBJECT checksum type cannot be used with the %s checksum algorithm", c.algorithm)
	case c.typ != "" && c.typ != "FULL_OBJECT" && c.typ != "COMPOSITE":
		return c, errf(http.StatusBadRequest, "InvalidRequest", "Value for x-amz-checksum-type header is invalid")
	case c.typ == "" && c.algorithm != "":
		c.typ = "COMPOSITE"
	}
	return c, nil
}

// complete returns the checksum kept for the object data that upload u
// completed: for a FULL_OBJECT CRC32C upload the CRC32C of data, refused
// (400 BadDigest) when it differs from the one the request carries; for
// a COMPOSITE one the CRC32C of the parts' CRC32Cs (of every part
// uploaded: kafkas3 completes them all).
func (c checksum) complete(u *upload, data []byte, h http.Header) (checksum, error) {
	if t := strings.ToUpper(h.Get("X-Amz-Checksum-Type")); t != "" && t != c.typ {
		return checksum{}, errf(http.StatusBadRequest, "InvalidRequest", "The upload was created using the %s checksum mode. The complete request must use the same checksum mode.", c.typ)
	}
	if c.algorithm != "CRC32C" {
		return checksum{}, nil
	}
	if c.typ == "FULL_OBJECT" {
		c.value = crc32cText(data)
		if want := h.Get("X-Amz-Checksum-Crc32c"); want != "" && want != c.value {
			return checksum{}, errf(http.StatusBadRequest, "BadDigest", "The crc32c you specified for the full object (%s) did not match the calculated checksum (%s)", want, c.value)
		}
		return c, nil
	}
	var sums []byte
	nums := make([]int, 0, len(u.parts))
	for n := range u.parts {
		nums = append(nums, n)
	}
	slices.Sort(nums)
	for _, i := range nums {
		p := u.parts[i]
		b, err := base64.StdEncoding.DecodeString(p.sum.value)
		if err != nil || len(b) != 4 {
			return checksum{}, errf(http.StatusBadRequest, "InvalidRequest", "part %d was uploaded without a CRC32C", i)
		}
		sums = append(sums, b...)
	}
	c.value = crc32cText(sums) + "-" + strconv.Itoa(len(sums)/4)
	return c, nil
}
