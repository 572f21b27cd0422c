//go:build integration

package bench

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"os"
	"os/signal"
	"sync"
	"syscall"

	"github.com/twmb/franz-go/pkg/kadm"
	"github.com/twmb/franz-go/pkg/kgo"
)

// The test binary re-executes itself in a child mode to measure a bare
// franz-go client as its own process (own peak RSS, own CPU). The mode is
// in childEnv, the arguments as JSON in childArgsEnv; the child prints one
// JSON childResult line on stdout.
const (
	childEnv     = "KAFKAS3_BENCH_CHILD"
	childArgsEnv = "KAFKAS3_BENCH_ARGS"
)

// Child modes.
const (
	modeProduce = "produce" // idempotent producer writes a data set
	modeConsume = "consume" // consumer reads a topic from start to end
)

// Archive formats the sink runs write.
const (
	fmtBytes    = "bytes"
	fmtJSON     = "json" // JSON without compression
	fmtJSONGzip = "json+gzip"
	fmtJSONZstd = "json+zstd"
)

// childArgs are a child's inputs.
type childArgs struct {
	Brokers string  `json:"brokers"`
	Data    dataset `json:"data"`

	// Sink profile and limit baselines.
	Format    string `json:"format,omitempty"`
	Bucket    string `json:"bucket,omitempty"`
	Endpoint  string `json:"endpoint,omitempty"`
	Region    string `json:"region,omitempty"`
	AccessKey string `json:"access_key,omitempty"`
	SecretKey string `json:"secret_key,omitempty"`
	// CABundle is the PEM file of the CA the S3 server's certificate
	// chains to, over HTTPS; "" over plain HTTP.
	CABundle string `json:"ca_bundle,omitempty"`

	// Sink profile only.
	SinkProfile *sinkProfileArgs `json:"sink_profile,omitempty"`
	// Restore profile only.
	RestoreProfile *restoreProfileArgs `json:"restore_profile,omitempty"`
	// Limit baselines only (modePipeline, modeFileWrite; Bucket, Endpoint,
	// Region and the keys above name the S3 server).
	Limit *limitArgs `json:"limit,omitempty"`
}

// childResult is what a child did.
type childResult struct {
	Records int64 `json:"records"`
	Bytes   int64 `json:"bytes"`
}

// runChild runs one child mode and returns the process exit code.
func runChild(mode string, stdout, stderr io.Writer) int {
	ctx, stop := signal.NotifyContext(context.Background(), syscall.SIGINT, syscall.SIGTERM)
	defer stop()
	var a childArgs
	if err := json.Unmarshal([]byte(os.Getenv(childArgsEnv)), &a); err != nil {
		fmt.Fprintf(stderr, "bench child: %s: %v\n", childArgsEnv, err)
		return 2
	}
	var (
		res childResult
		err error
	)
	switch mode {
	case modeProduce:
		res, err = produce(ctx, a)
	case modeConsume:
		res, err = consumeEach(ctx, a, nil)
	case modePipeline, modeFileWrite:
		res, err = pipeline(ctx, a, mode)
	case modeRestoreProfile:
		res, err = restoreInProcess(ctx, a, stderr)
	case modeSinkProfile:
		res, err = sinkInProcess(ctx, a, stderr)
	default:
		err = fmt.Errorf("unknown mode %q", mode)
	}
	if err != nil {
		fmt.Fprintf(stderr, "bench child %s: %v\n", mode, err)
		return 1
	}
	if err := json.NewEncoder(stdout).Encode(res); err != nil {
		fmt.Fprintf(stderr, "bench child %s: %v\n", mode, err)
		return 1
	}
	return 0
}

// produce writes a.Data with franz-go's idempotent producer (acks=all),
// each record to its partition, with the buffer limit the restore
// engine uses.
func produce(ctx context.Context, a childArgs) (childResult, error) {
	g, err := newGenerator(a.Data)
	if err != nil {
		return childResult{}, err
	}
	cl, err := kgo.NewClient(
		kgo.SeedBrokers(a.Brokers),
		kgo.DefaultProduceTopic(a.Data.Topic),
		kgo.RecordPartitioner(kgo.ManualPartitioner()),
		kgo.RequiredAcks(kgo.AllISRAcks()),
		kgo.MaxBufferedBytes(128<<20),
	)
	if err != nil {
		return childResult{}, err
	}
	defer cl.Close()
	var (
		once     sync.Once
		firstErr error
		failed   = make(chan struct{})
	)
	done := func(_ *kgo.Record, err error) {
		if err != nil {
			once.Do(func() { firstErr = err; close(failed) })
		}
	}
	for i := range a.Data.Records {
		select {
		case <-failed:
			return childResult{}, fmt.Errorf("produce to %s: %w", a.Data.Topic, firstErr)
		default:
		}
		v := g.value(make([]byte, 0, a.Data.ValueSize), i)
		cl.Produce(ctx, &kgo.Record{Partition: a.Data.partition(i), Value: v}, done)
	}
	if err := cl.Flush(ctx); err != nil {
		return childResult{}, fmt.Errorf("flush to %s: %w", a.Data.Topic, err)
	}
	select {
	case <-failed:
		return childResult{}, fmt.Errorf("produce to %s: %w", a.Data.Topic, firstErr)
	default:
	}
	return childResult{Records: a.Data.Records, Bytes: a.Data.Bytes()}, nil
}

// consumeEach reads a.Data.Topic from the start of every partition up to the
// end offsets seen at start, with the fetch sizes the sink uses, counts
// records and value bytes, and passes each record to each (when not nil).
func consumeEach(ctx context.Context, a childArgs, each func(*kgo.Record) error) (childResult, error) {
	topic := a.Data.Topic
	admCl, err := kgo.NewClient(kgo.SeedBrokers(a.Brokers))
	if err != nil {
		return childResult{}, err
	}
	ends, err := kadm.NewClient(admCl).ListEndOffsets(ctx, topic)
	admCl.Close()
	if err == nil {
		err = ends.Error()
	}
	if err != nil {
		return childResult{}, fmt.Errorf("end offsets of %s: %w", topic, err)
	}
	end := map[int32]int64{}
	offsets := map[int32]kgo.Offset{}
	ends.Each(func(o kadm.ListedOffset) {
		if o.Offset > 0 {
			end[o.Partition] = o.Offset
			offsets[o.Partition] = kgo.NewOffset().AtStart()
		}
	})
	cl, err := kgo.NewClient(
		kgo.SeedBrokers(a.Brokers),
		kgo.ConsumePartitions(map[string]map[int32]kgo.Offset{topic: offsets}),
		kgo.FetchMaxBytes(16<<20),
		kgo.FetchMaxPartitionBytes(1<<20),
	)
	if err != nil {
		return childResult{}, err
	}
	defer cl.Close()
	var res childResult
	remaining := len(end)
	for remaining > 0 {
		fs := cl.PollFetches(ctx)
		if err := ctx.Err(); err != nil {
			return res, err
		}
		for _, fe := range fs.Errors() {
			return res, fmt.Errorf("fetch %s[%d]: %w", fe.Topic, fe.Partition, fe.Err)
		}
		var err error
		fs.EachRecord(func(r *kgo.Record) {
			res.Records++
			res.Bytes += int64(len(r.Value))
			if each != nil && err == nil {
				err = each(r)
			}
			if e, ok := end[r.Partition]; ok && r.Offset+1 >= e {
				delete(end, r.Partition)
				remaining--
			}
		})
		if err != nil {
			return res, err
		}
	}
	return res, nil
}
