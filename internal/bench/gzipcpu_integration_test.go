//go:build integration

package bench

import (
	"fmt"
	"io"
	"runtime"
	"sync"
	"sync/atomic"
	"syscall"
	"time"

	"github.com/kafkas3/kafkas3/format"
)

// gzip against its compressor (issue 20 item 3): KAFKAS3_BENCH_ONLY=gzip
// loads the main data set, then, twice, sinks it as JSON+gzip and as
// bytes+gzip and compresses the same values in process as each format
// writes them (compressRow). Each sink row is compared with the mean of
// its format's compressor rows: gzip's own throughput on all cores, with
// no Kafka and no store.

// fmtBytesGzip is the bytes format with s3.compression.type=gzip.
const fmtBytesGzip = "bytes+gzip"

// gzipMinVsCompressor is issue 20's bound on a gzip sink row: at least
// 0.85 of its compressor row's throughput.
const gzipMinVsCompressor = 0.85

// gzipRows runs the gzip rows (KAFKAS3_BENCH_ONLY=gzip).
func (e *env) gzipRows(main dataset, rounds int) {
	e.restoreOnly = true // no profiled child runs
	sinks, comps := map[string][]*row{}, map[string][]*row{}
	for i := 1; i <= rounds; i++ {
		for _, f := range []string{fmtJSONGzip, fmtBytesGzip} {
			sinks[f] = append(sinks[f], e.sinkRow(fmt.Sprintf("sink %s --once (%d of %d)", f, i, rounds), main, f, mainFlushSize, 0, false))
			comps[f] = append(comps[f], e.compressRow(fmt.Sprintf("compress %s in process, %d cores, no Kafka, no store (%d of %d)", f, runtime.NumCPU(), i, rounds), main, f))
		}
	}
	for f, rows := range sinks {
		e.checkAgainst(rows, meanBaseline("its compressor rows", comps[f]...), gzipMinVsCompressor)
	}
}

// compressRow writes d's values in process as the sink's format f
// (json+gzip or bytes+gzip, s3.compression.level -1) writes them, in
// objects of mainFlushSize records of one partition each, one goroutine
// per core, into nothing: the same records, implementation and level as
// the sink row, without Kafka and the store.
func (e *env) compressRow(name string, d dataset, f string) *row {
	cfg := format.Config{Kind: format.KindJSON, Compression: format.CompressionGzip, CompressionLevel: -1}
	if f == fmtBytesGzip {
		cfg.Kind, cfg.Bytes = format.KindBytes, format.BytesConfig{Separator: []byte("\n"), Extension: ".bin"}
	}
	fm, err := format.New(cfg)
	if err != nil {
		e.b.Fatalf("%s: %v", name, err)
	}
	g, err := newGenerator(d)
	if err != nil {
		e.b.Fatal(err)
	}
	// Record r of the data set is in partition d.partition(r); each
	// partition's records are cut into objects of mainFlushSize.
	parts := make([][]int64, d.Partitions)
	for r := range d.Records {
		p := d.partition(r)
		parts[p] = append(parts[p], r)
	}
	var objs [][]int64
	for _, recs := range parts {
		for len(recs) > 0 {
			n := min(len(recs), mainFlushSize)
			objs = append(objs, recs[:n])
			recs = recs[n:]
		}
	}
	var next atomic.Int64
	var wg sync.WaitGroup
	var failed atomic.Value
	cpu0 := selfCPU()
	start := time.Now()
	for range runtime.NumCPU() {
		wg.Go(func() {
			var buf []byte
			for i := next.Add(1) - 1; i < int64(len(objs)); i = next.Add(1) - 1 {
				w, err := fm.NewWriter(io.Discard)
				if err == nil {
					for _, r := range objs[i] {
						buf = g.value(buf[:0], r)
						if err = w.Write(&format.Record{Value: buf}); err != nil {
							break
						}
					}
				}
				if err == nil {
					err = w.Close()
				}
				if err != nil {
					failed.Store(err)
					return
				}
			}
		})
	}
	wg.Wait()
	wall := time.Since(start)
	if err, _ := failed.Load().(error); err != nil {
		e.b.Fatalf("%s: %v", name, err)
	}
	return e.add(&row{name: name, kind: kindLimit, records: d.Records, bytes: d.Bytes(), wall: wall,
		cpu: cpuTimes{self: selfCPU() - cpu0}, note: fmt.Sprintf("%d objects of %d records, written to nothing", len(objs), mainFlushSize)})
}

// selfCPU is the CPU time this process used so far.
func selfCPU() time.Duration {
	var ru syscall.Rusage
	if err := syscall.Getrusage(syscall.RUSAGE_SELF, &ru); err != nil {
		return 0
	}
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
}
