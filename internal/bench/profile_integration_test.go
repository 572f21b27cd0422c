//go:build integration

package bench

import (
	"context"
	"fmt"
	"io"
	"log/slog"
	"os"
	"path/filepath"
	"runtime/metrics"
	"runtime/pprof"
	"strings"
	"time"

	"github.com/kafkas3/kafkas3/archive"
	"github.com/kafkas3/kafkas3/format"
	"github.com/kafkas3/kafkas3/index"
	"github.com/kafkas3/kafkas3/partition"
	"github.com/kafkas3/kafkas3/s3store"
)

// profileEnv names a directory: when set, every sink run is repeated once in
// a child process that runs the archive package in process under the CPU
// profiler, and writes the heap profile at the highest live heap seen. The
// repeat is not measured; its profiles are <dir>/<run>.cpu.pprof and
// <dir>/<run>.heap.pprof.
const profileEnv = "KAFKAS3_BENCH_PROFILE"

// modeSinkProfile runs the sink in process with profiles.
const modeSinkProfile = "sink-profile"

// sinkProfileArgs are the extra inputs of modeSinkProfile.
type sinkProfileArgs struct {
	Name      string `json:"name"`
	FlushSize int    `json:"flush_size"`
	PartSize  int64  `json:"part_size"`
	Profile   string `json:"profile"` // path prefix of the profile files
}

// sinkInProcess archives a.Data.Topic like `kafkas3 sink --once` with the
// main options of the bench config, under the CPU profiler.
func sinkInProcess(ctx context.Context, a childArgs, stderr io.Writer) (childResult, error) {
	p := a.SinkProfile
	log := slog.New(slog.NewTextHandler(stderr, &slog.HandlerOptions{Level: slog.LevelWarn}))
	var (
		f   format.Format
		err error
	)
	switch a.Format {
	case fmtBytes:
		f, err = format.NewBytes(format.DefaultBytesConfig())
	case fmtJSON:
		f = format.NewJSON()
	case fmtJSONGzip:
		f, err = format.WithGzip(format.NewJSON(), -1)
	case fmtJSONZstd:
		f, err = format.WithZstd(format.NewJSON(), -1)
	default:
		err = fmt.Errorf("unknown archive format %q", a.Format)
	}
	if err != nil {
		return childResult{}, err
	}
	st, err := s3store.NewS3(ctx, s3store.S3Config{
		Bucket: a.Bucket, Region: a.Region, Endpoint: a.Endpoint, PathStyle: true,
		AccessKeyID: a.AccessKey, SecretAccessKey: a.SecretKey, PartSize: p.PartSize,
	}, log)
	if err != nil {
		return childResult{}, err
	}
	sink, err := archive.New(archive.Config{
		Name: p.Name, Brokers: []string{a.Brokers}, GroupID: "connect-" + p.Name, Topics: []string{a.Data.Topic},
		FlushSize: p.FlushSize, Keys: partition.DefaultKeyConfig(), Format: f, Partitioner: partition.NewDefault(),
		NullValues: archive.NullFail, Once: true,
		IndexPrefix: index.DefaultPrefix, // kafkas3.index.enabled's default, as the measured run has it
	}, st, log)
	if err != nil {
		return childResult{}, err
	}
	cpu, err := os.Create(p.Profile + ".cpu.pprof")
	if err != nil {
		return childResult{}, err
	}
	defer cpu.Close()
	if err := pprof.StartCPUProfile(cpu); err != nil {
		return childResult{}, err
	}
	stopHeap := watchHeap(p.Profile + ".heap.pprof")
	sum, err := sink.Run(ctx)
	pprof.StopCPUProfile()
	peak := stopHeap()
	fmt.Fprintf(stderr, "profile: peak live heap %.1f MiB\n", float64(peak)/(1<<20))
	if err != nil {
		return childResult{}, err
	}
	return childResult{Records: sum.Records, Bytes: int64(peak)}, nil
}

// watchHeap samples the live heap every 50 ms and writes the heap profile to
// path whenever the heap has grown 5% past the last written peak. The
// returned stop function returns the peak.
func watchHeap(path string) func() uint64 {
	const metric = "/memory/classes/heap/objects:bytes"
	done := make(chan struct{})
	result := make(chan uint64)
	go func() {
		sample := []metrics.Sample{{Name: metric}}
		var peak, written uint64
		t := time.NewTicker(50 * time.Millisecond)
		defer t.Stop()
		for {
			select {
			case <-done:
				result <- peak
				return
			case <-t.C:
			}
			metrics.Read(sample)
			v := sample[0].Value.Uint64()
			peak = max(peak, v)
			if v > written+written/20 {
				if fh, err := os.Create(path); err == nil {
					_ = pprof.Lookup("heap").WriteTo(fh, 0)
					_ = fh.Close()
					written = v
				}
			}
		}
	}()
	return func() uint64 {
		close(done)
		return <-result
	}
}

// profileSink repeats a sink run in a profiled child process, when
// KAFKAS3_BENCH_PROFILE is set.
func (e *env) profileSink(name string, d dataset, f string, flushSize int, partSize int64) {
	dir := os.Getenv(profileEnv)
	if dir == "" {
		return
	}
	if err := os.MkdirAll(dir, 0o755); err != nil {
		e.b.Fatal(err)
	}
	bucket, err := e.s3.CreateBucketContext(e.ctx)
	if err != nil {
		e.b.Fatal(err)
	}
	file := strings.Map(func(r rune) rune {
		if r >= 'a' && r <= 'z' || r >= '0' && r <= '9' {
			return r
		}
		return '-'
	}, strings.ToLower(name))
	prefix := filepath.Join(dir, file)
	_, res := e.child("profile: "+name, modeSinkProfile, childArgs{
		Data: d, Format: f, Bucket: bucket, Endpoint: e.s3.Endpoint, Region: e.s3.Region,
		AccessKey: e.s3.AccessKey, SecretKey: e.s3.SecretKey,
		SinkProfile: &sinkProfileArgs{Name: fmt.Sprintf("profile-%d", len(e.rows)), FlushSize: flushSize, PartSize: partSize, Profile: prefix},
	})
	fmt.Fprintf(os.Stderr, "bench: profiles %s.{cpu,heap}.pprof (peak live heap %.1f MiB)\n", prefix, float64(res.Bytes)/(1<<20))
}
