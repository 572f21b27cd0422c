//go:build integration

package bench

import (
	stdgzip "compress/gzip"
	"fmt"
	"io"
	"strings"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/s3"
)

// gzipSizeBound is issue 12's bound: a gzip object at most 3% larger than
// one compress/gzip stream of the same bytes at the same level.
const gzipSizeBound = 1.03

// gzipLevel is the level of the bench's gzip runs: s3.compression.level is
// left at -1, which means 6 (zlib's, Java's Deflater's and compress/gzip's
// default).
const gzipLevel = 6

// checkGzipSize reads back the objects of partition 0 of a gzip sink row
// (a twelfth of the data, to keep the reference compression short),
// compresses each object's bytes again as one compress/gzip stream at
// gzipLevel, and notes the stored size against that; above gzipSizeBound
// the benchmark fails.
func (e *env) checkGzipSize(r *row) {
	cl := e.s3.Client()
	var stored, ref int64
	n := 0
	for _, o := range e.listObjects(r.bucket) {
		if !strings.Contains(o.key, "/partition=0/") {
			continue
		}
		out, err := cl.GetObject(e.ctx, &s3.GetObjectInput{Bucket: aws.String(r.bucket), Key: aws.String(o.key)})
		if err != nil {
			e.b.Fatalf("%s: get %s: %v", r.name, o.key, err)
		}
		size, err := oneStreamSize(out.Body)
		out.Body.Close()
		if err != nil {
			e.b.Fatalf("%s: %s: %v", r.name, o.key, err)
		}
		stored += o.size
		ref += size
		n++
	}
	if n == 0 {
		e.b.Fatalf("%s: no object of partition 0", r.name)
	}
	over := float64(stored)/float64(ref) - 1
	r.note += fmt.Sprintf("; partition 0's %d objects: %s, one compress/gzip stream of each at level %d: %s (%+.2f%%)",
		n, human(stored), gzipLevel, human(ref), 100*over)
	if float64(stored) > gzipSizeBound*float64(ref) {
		e.failures = append(e.failures, fmt.Sprintf("%s: gzip objects of partition 0 are %+.2f%% over one compress/gzip stream at level %d, bound %+.0f%%",
			r.name, 100*over, gzipLevel, 100*(gzipSizeBound-1)))
		r.note += " **over the bound**"
	}
}

// oneStreamSize decompresses a gzip object and returns the size of its
// bytes compressed again as one compress/gzip stream at gzipLevel.
func oneStreamSize(body io.Reader) (int64, error) {
	zr, err := stdgzip.NewReader(body)
	if err != nil {
		return 0, err
	}
	var c countWriter
	zw, err := stdgzip.NewWriterLevel(&c, gzipLevel)
	if err != nil {
		return 0, err
	}
	if _, err := io.Copy(zw, zr); err != nil {
		return 0, err
	}
	if err := zw.Close(); err != nil {
		return 0, err
	}
	return c.n, nil
}

type countWriter struct{ n int64 }

func (c *countWriter) Write(p []byte) (int, error) {
	c.n += int64(len(p))
	return len(p), nil
}
