package s3store

import (
	"bytes"
	"hash/crc32"
	"io"
	"net"
	"net/http"
	"os"
	"runtime"
	"strings"
	"testing"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/s3"

	"github.com/kafkas3/kafkas3/internal/s3fake"
)

// reopens reports whether spools are reopened here (Linux); elsewhere it
// checks that a request falls back to reading the spool (no option).
func reopens(t *testing.T) bool {
	t.Helper()
	if runtime.GOOS == "linux" {
		return true
	}
	f, err := newSpool(t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	defer closeRemove(f)
	if _, opt, done := spoolRequest(f, 0); opt != nil {
		done()
		t.Fatalf("%s: a spool body option without /proc/self/fd", runtime.GOOS)
	}
	return false
}

// spoolWithStale returns a spool file that holds want at its start and
// stale bytes after it, as a reused spool does (spoolPool), positioned
// at its end as the writer leaves it.
func spoolWithStale(t *testing.T, n int) ([]byte, *fileBody) {
	want, _, b := spoolWithStaleFile(t, n)
	return want, b
}

// spoolWithStaleFile is spoolWithStale, also returning the spool.
func spoolWithStaleFile(t *testing.T, n int) ([]byte, *os.File, *fileBody) {
	t.Helper()
	f, err := newSpool(t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { closeRemove(f) })
	if _, err := f.Write(bytes.Repeat([]byte("stale!"), 3*n)); err != nil {
		t.Fatal(err)
	}
	if err := rewind(f); err != nil {
		t.Fatal(err)
	}
	want := make([]byte, n)
	for i := range want {
		want[i] = byte(i % 251)
	}
	if _, err := f.Write(want); err != nil {
		t.Fatal(err)
	}
	rf, err := reopenSpool(f)
	if err != nil {
		t.Fatalf("reopen spool on %s: %v", runtime.GOOS, err)
	}
	return want, f, &fileBody{f: rf, n: int64(n)}
}

// TestFileBodyReadsOnlyItsPart: read with Read (the HTTPS path), a body
// gives exactly bytes [0, n) of its spool from the start, whatever the
// spool's position and the stale bytes after n; a second body of the
// same spool has a position of its own.
func TestFileBodyReadsOnlyItsPart(t *testing.T) {
	if !reopens(t) {
		return
	}
	want, b := spoolWithStale(t, 100_000)
	defer b.Close()
	half := make([]byte, 50_000)
	if _, err := io.ReadFull(b, half); err != nil {
		t.Fatal(err)
	}
	other, err := reopenSpool(b.f)
	if err != nil {
		t.Fatal(err)
	}
	b2 := &fileBody{f: other, n: b.n}
	defer b2.Close()
	got, err := io.ReadAll(b2)
	if err != nil || !bytes.Equal(got, want) {
		t.Fatalf("second body: %d bytes, equal %v, err %v", len(got), bytes.Equal(got, want), err)
	}
	rest, err := io.ReadAll(b)
	if err != nil || !bytes.Equal(append(half, rest...), want) {
		t.Fatalf("first body: %d+%d bytes, err %v", len(half), len(rest), err)
	}
	if err := b.Close(); err != nil {
		t.Fatalf("second Close: %v", err)
	}
}

// countingBody counts the Read calls of a fileBody; it keeps its
// SyscallConn, so net may still send it with sendfile.
type countingBody struct {
	*fileBody
	reads int
}

func (c *countingBody) Read(p []byte) (int, error) {
	c.reads++
	return c.fileBody.Read(p)
}

// TestFileBodySentWithSendfile: copied to a TCP connection as net/http
// copies a request body (io.LimitReader of the content length, then the
// rest to io.Discard), a body goes by sendfile, without one Read call,
// and the peer receives exactly bytes [0, n) of the spool: the stale
// bytes after them are neither sent nor read by the check for extra
// bytes.
func TestFileBodySentWithSendfile(t *testing.T) {
	if !reopens(t) {
		return
	}
	want, fb := spoolWithStale(t, 300_000)
	defer fb.Close()
	b := &countingBody{fileBody: fb}
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer ln.Close()
	got := make(chan []byte, 1)
	go func() {
		c, err := ln.Accept()
		if err != nil {
			got <- nil
			return
		}
		defer c.Close()
		data, _ := io.ReadAll(c)
		got <- data
	}()
	c, err := net.Dial("tcp", ln.Addr().String())
	if err != nil {
		t.Fatal(err)
	}
	n, err := io.Copy(c, io.LimitReader(b, b.n))
	if err != nil || n != b.n {
		t.Fatalf("copy: %d bytes, %v", n, err)
	}
	if b.reads != 0 {
		t.Errorf("the body was read %d times: not sent with sendfile", b.reads)
	}
	if extra, err := io.Copy(io.Discard, b); err != nil || extra != 0 {
		t.Fatalf("after the content length: %d more bytes, %v", extra, err)
	}
	_ = c.Close()
	if data := <-got; !bytes.Equal(data, want) {
		t.Fatalf("peer got %d bytes, equal %v; want the spool's first %d", len(data), bytes.Equal(data, want), len(want))
	}
}

type recordClient struct{ body io.ReadCloser }

func (c *recordClient) Do(r *http.Request) (*http.Response, error) {
	c.body = r.Body
	return &http.Response{StatusCode: http.StatusOK, Body: http.NoBody}, nil
}

// TestBodyClientSwapsOnlyItsBody: the file body replaces the SDK's body
// only on a request of its length.
func TestBodyClientSwapsOnlyItsBody(t *testing.T) {
	fb := &fileBody{n: 5}
	for _, tc := range []struct {
		length int64
		swap   bool
	}{{5, true}, {4, false}} {
		next := &recordClient{}
		sdk := io.NopCloser(strings.NewReader("hello"))
		r, _ := http.NewRequest(http.MethodPut, "http://x/b/k", sdk)
		r.ContentLength = tc.length
		if _, err := (bodyClient{next: next, body: fb}).Do(r); err != nil {
			t.Fatal(err)
		}
		if swapped := next.body == io.ReadCloser(fb); swapped != tc.swap {
			t.Errorf("content length %d: body swapped %v, want %v", tc.length, swapped, tc.swap)
		}
	}
}

// seenClient records how many requests it passes on carry a file body.
type seenClient struct {
	next  aws.HTTPClient
	files int
}

func (c *seenClient) Do(r *http.Request) (*http.Response, error) {
	if _, ok := r.Body.(*fileBody); ok {
		c.files++
	}
	return c.next.Do(r)
}

// TestSpoolRequestsReachTheTransport: the SDK's PutObject and UploadPart
// requests of a spooled body, as uploadPart and commit send them, reach
// the HTTP transport with the file body in place of the SDK's (so
// net/http may send it with sendfile), and the store, which checks each
// body's CRC32C, gets the spool's first n bytes, not its stale rest.
func TestSpoolRequestsReachTheTransport(t *testing.T) {
	if !reopens(t) {
		return
	}
	fake := s3fake.New()
	defer fake.Close()
	fake.CreateBucket("b")
	s, err := NewS3(t.Context(), S3Config{Bucket: "b", Endpoint: fake.URL, PathStyle: true,
		AccessKeyID: "AK", SecretAccessKey: "SK", SpoolDir: t.TempDir()}, nil)
	if err != nil {
		t.Fatal(err)
	}
	want, f, fb := spoolWithStaleFile(t, MinPartSize)
	_ = fb.Close()
	n := int64(len(want))
	crc := spoolSum{n: n, crc: crc32.Checksum(want, s.crc32c)}.base64()
	seen := &seenClient{}
	// Before fromFile, so that it sees the request fromFile passes on.
	record := func(o *s3.Options) { seen.next, o.HTTPClient = o.HTTPClient, seen }

	body, fromFile, done := spoolRequest(f, n)
	_, err = s.client.PutObject(t.Context(), &s3.PutObjectInput{Bucket: aws.String("b"), Key: aws.String("k"),
		Body: body, ContentLength: aws.Int64(n), ChecksumCRC32C: &crc}, unsignedPayload, record, fromFile)
	done()
	if err != nil {
		t.Fatal(err)
	}
	if got, ok := fake.Object("b", "k"); !ok || !bytes.Equal(got, want) {
		t.Errorf("stored object: %d bytes, want the spool's first %d", len(got), n)
	}

	w := &s3Writer{s: s, key: "m"}
	if err := w.createMultipart(t.Context()); err != nil {
		t.Fatal(err)
	}
	body, fromFile, done = spoolRequest(f, n)
	_, err = s.client.UploadPart(t.Context(), &s3.UploadPartInput{Bucket: aws.String("b"), Key: aws.String("m"),
		UploadId: &w.uploadID, PartNumber: aws.Int32(1), Body: body, ContentLength: aws.Int64(n), ChecksumCRC32C: &crc},
		unsignedPayload, record, fromFile)
	done()
	if err != nil {
		t.Fatal(err)
	}
	if err := w.abortMultipart(t.Context()); err != nil {
		t.Fatal(err)
	}
	if seen.files != 2 {
		t.Errorf("%d of 2 requests reached the transport with the file body", seen.files)
	}
}
