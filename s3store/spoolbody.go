package s3store

import (
	"errors"
	"io"
	"net/http"
	"os"
	"strconv"
	"syscall"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/s3"
)

// This file sends a spooled part (or a whole object smaller than a part)
// from its spool file to the socket without a copy through user space:
// over plain HTTP the kernel moves the page cache's bytes to the socket
// (sendfile), where a read into a buffer and a write of it cost two
// copies and two system calls per 32 KiB. Over HTTPS, or where the file
// cannot be reopened, the body is read as before.

// fileBody is the request body of one attempt to send bytes [0, n) of a
// spool file: a file description of its own (reopenSpool), so its
// position belongs to this attempt alone, even while an earlier failed
// attempt's request may still be reading its own. It implements
// syscall.Conn, which is what lets net's TCPConn.ReadFrom send it with
// sendfile from the current position; Read stops at n, wherever
// sendfile left the position, so the bytes a reused spool holds past n
// are never sent.
type fileBody struct {
	f *os.File
	n int64
}

func (b *fileBody) Read(p []byte) (int, error) {
	pos, err := b.f.Seek(0, io.SeekCurrent)
	if err != nil {
		return 0, err
	}
	if pos >= b.n {
		return 0, io.EOF
	}
	if int64(len(p)) > b.n-pos {
		p = p[:b.n-pos]
	}
	return b.f.Read(p)
}

// Close closes the body's file description (not the spool). It may be
// called more than once: net/http closes the body, and the attempt closes
// it again in case the request never reached the transport.
func (b *fileBody) Close() error {
	if err := b.f.Close(); err != nil && !errors.Is(err, os.ErrClosed) {
		return err
	}
	return nil
}

// SyscallConn gives net's sendfile the file descriptor.
func (b *fileBody) SyscallConn() (syscall.RawConn, error) { return b.f.SyscallConn() }

// reopenSpool opens a new file description of the spool f (unlinked since
// newSpool) at its start, through /proc/self/fd. It fails where there is
// no such path (not Linux, no /proc); the caller then reads the spool as
// before.
func reopenSpool(f *os.File) (*os.File, error) {
	rc, err := f.SyscallConn()
	if err != nil {
		return nil, err
	}
	var fd uintptr
	if err := rc.Control(func(d uintptr) { fd = d }); err != nil {
		return nil, err
	}
	return os.Open("/proc/self/fd/" + strconv.FormatUint(uint64(fd), 10))
}

// spoolRequest prepares one attempt to send bytes [0, n) of spool f: the
// body for the SDK (read through f only if the file body is not used),
// the per-operation option that puts the file body under the request
// (nil when f cannot be reopened), and a cleanup to call when the attempt
// is over.
func spoolRequest(f *os.File, n int64) (io.ReadSeeker, func(*s3.Options), func()) {
	sdkBody := io.NewSectionReader(f, 0, n)
	rf, err := reopenSpool(f)
	if err != nil {
		return sdkBody, nil, func() {}
	}
	body := &fileBody{f: rf, n: n}
	opt := func(o *s3.Options) {
		if o.HTTPClient != nil {
			o.HTTPClient = bodyClient{next: o.HTTPClient, body: body}
		}
	}
	return sdkBody, opt, func() { _ = body.Close() }
}

// bodyClient sends a request whose body is the spool's bytes with body
// (a fileBody of the same bytes) in place of the SDK's wrapper of them,
// which hides the file from net/http. The SDK reads nothing of the body
// itself here: the payload is unsigned and its CRC32C is computed while
// spooling (unsignedPayload).
type bodyClient struct {
	next aws.HTTPClient
	body *fileBody
}

func (c bodyClient) Do(r *http.Request) (*http.Response, error) {
	if r.Body != nil && r.Body != http.NoBody && r.ContentLength == c.body.n {
		r.Body, r.GetBody = c.body, nil
	}
	return c.next.Do(r)
}

// withOptions returns the per-operation options that are set.
func withOptions(opts ...func(*s3.Options)) []func(*s3.Options) {
	out := opts[:0]
	for _, o := range opts {
		if o != nil {
			out = append(out, o)
		}
	}
	return out
}
