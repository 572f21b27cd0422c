package s3fake

import (
	"crypto/sha256"
	"encoding/base64"
	"encoding/hex"
	"encoding/xml"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"strings"
	"sync"
	"testing"
	"time"
)

func do(t *testing.T, method, u string, body string, hdr map[string]string) (int, string) {
	t.Helper()
	req, err := http.NewRequestWithContext(t.Context(), method, u, strings.NewReader(body))
	if err != nil {
		t.Fatal(err)
	}
	for k, v := range hdr {
		req.Header.Set(k, v)
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	b, _ := io.ReadAll(resp.Body)
	return resp.StatusCode, string(b)
}

func TestPutGetListPagination(t *testing.T) {
	s := New()
	defer s.Close()
	if code, _ := do(t, "PUT", s.URL+"/b", "", nil); code != 200 {
		t.Fatalf("CreateBucket = %d", code)
	}
	for i := range 5 {
		if code, body := do(t, "PUT", fmt.Sprintf("%s/b/k%d", s.URL, i), fmt.Sprint(i), nil); code != 200 {
			t.Fatalf("PutObject = %d %s", code, body)
		}
	}
	do(t, "PUT", s.URL+"/b/other", "x", nil)
	if code, body := do(t, "GET", s.URL+"/b/k3", "", nil); code != 200 || body != "3" {
		t.Fatalf("GetObject = %d %q", code, body)
	}
	var got []string
	token := ""
	for page := 0; page < 10; page++ {
		q := url.Values{"list-type": {"2"}, "prefix": {"k"}, "max-keys": {"2"}}
		if token != "" {
			q.Set("continuation-token", token)
		}
		code, body := do(t, "GET", s.URL+"/b?"+q.Encode(), "", nil)
		if code != 200 {
			t.Fatalf("ListObjectsV2 = %d %s", code, body)
		}
		var res struct {
			IsTruncated           bool
			NextContinuationToken string
			Contents              []struct{ Key string }
		}
		if err := xml.Unmarshal([]byte(body), &res); err != nil {
			t.Fatal(err)
		}
		for _, c := range res.Contents {
			got = append(got, c.Key)
		}
		if !res.IsTruncated {
			break
		}
		token = res.NextContinuationToken
	}
	if strings.Join(got, ",") != "k0,k1,k2,k3,k4" {
		t.Errorf("listed %v", got)
	}
	if code, body := do(t, "GET", s.URL+"/nobucket/k", "", nil); code != 404 || !strings.Contains(body, "NoSuchBucket") {
		t.Errorf("GetObject on missing bucket = %d %s", code, body)
	}
	if code, body := do(t, "GET", s.URL+"/b/missing", "", nil); code != 404 || !strings.Contains(body, "NoSuchKey") {
		t.Errorf("GetObject on missing key = %d %s", code, body)
	}
}

func TestMultipartRules(t *testing.T) {
	s := New()
	defer s.Close()
	s.SetMinPartSize(4)
	s.CreateBucket("b")
	_, body := do(t, "POST", s.URL+"/b/obj?uploads", "", nil)
	var init struct {
		UploadID string `xml:"UploadId"`
	}
	if err := xml.Unmarshal([]byte(body), &init); err != nil || init.UploadID == "" {
		t.Fatalf("CreateMultipartUpload: %q %v", body, err)
	}
	part := func(n int, data string) string {
		req, _ := http.NewRequestWithContext(t.Context(), "PUT", fmt.Sprintf("%s/b/obj?partNumber=%d&uploadId=%s", s.URL, n, init.UploadID), strings.NewReader(data))
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		resp.Body.Close()
		return resp.Header.Get("ETag")
	}
	e1, e2 := part(1, "ab"), part(2, "cdef")
	complete := func(xmlBody string) (int, string) {
		return do(t, "POST", s.URL+"/b/obj?uploadId="+init.UploadID, xmlBody, nil)
	}
	mk := func(parts ...string) string {
		return "<CompleteMultipartUpload>" + strings.Join(parts, "") + "</CompleteMultipartUpload>"
	}
	p := func(n int, etag string) string {
		return fmt.Sprintf("<Part><PartNumber>%d</PartNumber><ETag>%s</ETag></Part>", n, etag)
	}
	if code, body := complete(mk(p(1, e1), p(2, e2))); code != 400 || !strings.Contains(body, "EntityTooSmall") {
		t.Errorf("complete with a 2-byte first part = %d %s", code, body)
	}
	if code, body := complete(mk(p(2, e2), p(1, e1))); code != 400 || !strings.Contains(body, "InvalidPartOrder") {
		t.Errorf("complete out of order = %d %s", code, body)
	}
	if code, body := complete(mk(p(1, `"bad"`))); code != 400 || !strings.Contains(body, "InvalidPart") {
		t.Errorf("complete with a wrong ETag = %d %s", code, body)
	}
	e1 = part(1, "abcd")
	if s.PendingUploads("b") != 1 {
		t.Errorf("pending = %d", s.PendingUploads("b"))
	}
	if code, body := complete(mk(p(1, e1), p(2, e2))); code != 200 {
		t.Fatalf("complete = %d %s", code, body)
	}
	if got, _ := s.Object("b", "obj"); string(got) != "abcdcdef" {
		t.Errorf("object = %q", got)
	}
	if s.PendingUploads("b") != 0 {
		t.Errorf("pending after complete = %d", s.PendingUploads("b"))
	}
	if code, body := do(t, "DELETE", s.URL+"/b/obj?uploadId="+init.UploadID, "", nil); code != 404 || !strings.Contains(body, "NoSuchUpload") {
		t.Errorf("abort of a completed upload = %d %s", code, body)
	}
}

func TestBodyChecksAndChunked(t *testing.T) {
	s := New()
	defer s.Close()
	s.CreateBucket("b")
	sum := sha256.Sum256([]byte("good"))
	if code, _ := do(t, "PUT", s.URL+"/b/k", "good", map[string]string{"X-Amz-Content-Sha256": hex.EncodeToString(sum[:])}); code != 200 {
		t.Errorf("put with a matching hash = %d", code)
	}
	if code, body := do(t, "PUT", s.URL+"/b/k", "bad!", map[string]string{"X-Amz-Content-Sha256": hex.EncodeToString(sum[:])}); code != 400 || !strings.Contains(body, "XAmzContentSHA256Mismatch") {
		t.Errorf("put with a wrong hash = %d %s", code, body)
	}
	chunked := "5;chunk-signature=x\r\nhello\r\n6;chunk-signature=y\r\n world\r\n0;chunk-signature=z\r\nx-amz-checksum-crc32:AAAAAA==\r\n\r\n"
	hdr := map[string]string{"Content-Encoding": "aws-chunked", "X-Amz-Decoded-Content-Length": "11", "X-Amz-Content-Sha256": "STREAMING-AWS4-HMAC-SHA256-PAYLOAD-TRAILER"}
	if code, body := do(t, "PUT", s.URL+"/b/c", chunked, hdr); code != 200 {
		t.Fatalf("chunked put = %d %s", code, body)
	}
	if got, _ := s.Object("b", "c"); string(got) != "hello world" {
		t.Errorf("decoded chunked body = %q", got)
	}
	hdr["X-Amz-Decoded-Content-Length"] = "12"
	if code, _ := do(t, "PUT", s.URL+"/b/c", chunked, hdr); code != 400 {
		t.Errorf("chunked put with a wrong decoded length = %d", code)
	}
}

func TestFaults(t *testing.T) {
	s := New()
	defer s.Close()
	s.CreateBucket("b")
	s.FailNext(OpPutObject, 2, 500)
	s.FailNext("", 1, 503)
	codes := []int{}
	for range 4 {
		code, _ := do(t, "PUT", s.URL+"/b/k", "x", nil)
		codes = append(codes, code)
	}
	if fmt.Sprint(codes) != "[500 500 503 200]" {
		t.Errorf("codes = %v", codes)
	}
	if s.Count(OpPutObject) != 4 {
		t.Errorf("count = %d", s.Count(OpPutObject))
	}
	s.DenyAccess(true)
	if code, body := do(t, "GET", s.URL+"/b/k", "", nil); code != 403 || !strings.Contains(body, "AccessDenied") {
		t.Errorf("denied get = %d %s", code, body)
	}
	if code, body := do(t, "HEAD", s.URL+"/b", "", nil); code != 403 || body != "" {
		t.Errorf("denied head = %d %q", code, body)
	}
	s.DenyAccess(false)
	s.SetDown(true)
	if code, body := do(t, "GET", s.URL+"/b/k", "", nil); code != 503 || !strings.Contains(body, "ServiceUnavailable") {
		t.Errorf("get while down = %d %s", code, body)
	}
	s.SetDown(false)
	if code, _ := do(t, "GET", s.URL+"/b/k", "", nil); code != 200 {
		t.Errorf("get after the outage = %d", code)
	}
	s.FailNextCode(OpHeadBucket, 1, 404, "XAdminUserNotFound")
	if code, _ := do(t, "HEAD", s.URL+"/b", "", nil); code != 404 {
		t.Errorf("injected 404 = %d", code)
	}
	if code, _ := do(t, "HEAD", s.URL+"/b", "", nil); code != 200 {
		t.Errorf("head after the fault = %d", code)
	}
}

// TestFullObjectChecksum: a FULL_OBJECT CRC32C multipart upload is
// checked as a whole on completion (a wrong CRC32C is 400 BadDigest and
// completes nothing), kept, and returned by HeadObject with checksum mode
// only; a CRC32C upload without the type gets a composite checksum; a
// PutObject keeps the CRC32C it carried; RefuseFullObject refuses the type.
func TestFullObjectChecksum(t *testing.T) {
	s := New()
	defer s.Close()
	s.SetMinPartSize(4)
	s.CreateBucket("b")
	upload := func(key string, hdr map[string]string) (complete func(map[string]string) (int, string)) {
		code, body := do(t, "POST", s.URL+"/b/"+key+"?uploads", "", hdr)
		var init struct {
			UploadID string `xml:"UploadId"`
		}
		if err := xml.Unmarshal([]byte(body), &init); code != 200 || err != nil || init.UploadID == "" {
			t.Fatalf("CreateMultipartUpload %v: %d %q %v", hdr, code, body, err)
		}
		var parts []string
		for n, data := range []string{"abcd", "ef"} {
			req, _ := http.NewRequestWithContext(t.Context(), "PUT", fmt.Sprintf("%s/b/%s?partNumber=%d&uploadId=%s", s.URL, key, n+1, init.UploadID), strings.NewReader(data))
			req.Header.Set("X-Amz-Checksum-Crc32c", crc32cText([]byte(data)))
			resp, err := http.DefaultClient.Do(req)
			if err != nil {
				t.Fatal(err)
			}
			resp.Body.Close()
			parts = append(parts, fmt.Sprintf("<Part><PartNumber>%d</PartNumber><ETag>%s</ETag></Part>", n+1, resp.Header.Get("ETag")))
		}
		return func(hdr map[string]string) (int, string) {
			return do(t, "POST", s.URL+"/b/"+key+"?uploadId="+init.UploadID, "<CompleteMultipartUpload>"+strings.Join(parts, "")+"</CompleteMultipartUpload>", hdr)
		}
	}
	whole := crc32cText([]byte("abcdef"))
	full := map[string]string{"X-Amz-Checksum-Algorithm": "CRC32C", "X-Amz-Checksum-Type": "FULL_OBJECT"}
	complete := upload("full", full)
	bad := map[string]string{"X-Amz-Checksum-Crc32c": crc32cText([]byte("abcdeF")), "X-Amz-Checksum-Type": "FULL_OBJECT"}
	if code, body := complete(bad); code != 400 || !strings.Contains(body, "BadDigest") {
		t.Errorf("complete with a wrong full-object CRC32C = %d %s, want 400 BadDigest", code, body)
	}
	if _, ok := s.Object("b", "full"); ok {
		t.Errorf("a refused completion stored the object")
	}
	if code, body := complete(map[string]string{"X-Amz-Checksum-Crc32c": whole, "X-Amz-Checksum-Type": "FULL_OBJECT"}); code != 200 {
		t.Fatalf("complete = %d %s", code, body)
	}
	if typ, crc := s.Checksum("b", "full"); typ != "FULL_OBJECT" || crc != whole {
		t.Errorf("kept %s %s, want FULL_OBJECT %s", typ, crc, whole)
	}
	head := func(key string, mode bool) http.Header {
		req, _ := http.NewRequestWithContext(t.Context(), "HEAD", s.URL+"/b/"+key, nil)
		if mode {
			req.Header.Set("X-Amz-Checksum-Mode", "ENABLED")
		}
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		resp.Body.Close()
		return resp.Header
	}
	if h := head("full", true); h.Get("X-Amz-Checksum-Crc32c") != whole || h.Get("X-Amz-Checksum-Type") != "FULL_OBJECT" {
		t.Errorf("HEAD with checksum mode: %v", h)
	}
	if h := head("full", false); h.Get("X-Amz-Checksum-Crc32c") != "" {
		t.Errorf("HEAD without checksum mode returned a checksum: %v", h)
	}

	composite := upload("comp", map[string]string{"X-Amz-Checksum-Algorithm": "CRC32C"})
	if code, body := composite(nil); code != 200 {
		t.Fatalf("complete = %d %s", code, body)
	}
	want := crc32cText(append(mustB64(t, crc32cText([]byte("abcd"))), mustB64(t, crc32cText([]byte("ef")))...)) + "-2"
	if typ, crc := s.Checksum("b", "comp"); typ != "COMPOSITE" || crc != want {
		t.Errorf("kept %s %s, want COMPOSITE %s", typ, crc, want)
	}

	if code, body := do(t, "PUT", s.URL+"/b/one", "abcdef", map[string]string{"X-Amz-Checksum-Crc32c": whole}); code != 200 {
		t.Fatalf("PutObject = %d %s", code, body)
	}
	if typ, crc := s.Checksum("b", "one"); typ != "FULL_OBJECT" || crc != whole {
		t.Errorf("PutObject kept %s %s", typ, crc)
	}

	s.RefuseFullObject(true)
	if code, body := do(t, "POST", s.URL+"/b/x?uploads", "", full); code != 400 || !strings.Contains(body, "InvalidRequest") {
		t.Errorf("CreateMultipartUpload FULL_OBJECT when refused = %d %s", code, body)
	}
}

func mustB64(t *testing.T, s string) []byte {
	t.Helper()
	b, err := base64.StdEncoding.DecodeString(s)
	if err != nil {
		t.Fatal(err)
	}
	return b
}

// TestLatency: SetLatency delays every answer; requests wait in parallel.
func TestLatency(t *testing.T) {
	s := New()
	defer s.Close()
	s.CreateBucket("b")
	do(t, "PUT", s.URL+"/b/k", "x", nil)
	s.SetLatency(50 * time.Millisecond)
	start := time.Now()
	var wg sync.WaitGroup
	for range 4 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			if code, _ := do(t, "GET", s.URL+"/b/k", "", nil); code != 200 {
				t.Errorf("get = %d", code)
			}
		}()
	}
	wg.Wait()
	if d := time.Since(start); d < 50*time.Millisecond || d > 2*time.Second {
		t.Errorf("4 parallel GETs at 50 ms took %s", d)
	}
}
