// Command testbed starts kafkas3's integration test bed by hand: an Apache
// Kafka broker and a versitygw S3 server on loopback. It prints their
// addresses, credentials and shell export lines, then waits for Ctrl-C and
// removes everything it started.
//
//	go run ./internal/testbed/cmd/testbed            # start both
//	go run ./internal/testbed/cmd/testbed -prepare   # only fill the cache (CI warm-up)
//	go run ./internal/testbed/cmd/testbed -s3-tls    # versitygw over HTTPS, self-signed (AWS_CA_BUNDLE)
package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"log/slog"
	"os"
	"os/signal"
	"syscall"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/s3"

	"github.com/kafkas3/kafkas3/internal/testbed"
)

func main() {
	if err := run(os.Args[1:], os.Stdout, os.Stderr); err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(1)
	}
}

func run(args []string, stdout, stderr io.Writer) error {
	fs := flag.NewFlagSet("testbed", flag.ContinueOnError)
	fs.SetOutput(stderr)
	prepare := fs.Bool("prepare", false, "only download the Kafka jars and build versitygw into the cache, then exit")
	withKafka := fs.Bool("kafka", true, "start the Kafka broker")
	withS3 := fs.Bool("s3", true, "start versitygw")
	s3TLS := fs.Bool("s3-tls", false, "serve versitygw over HTTPS with a self-signed certificate (its PEM file in AWS_CA_BUNDLE)")
	bucket := fs.String("bucket", "kafkas3", "bucket to create on versitygw (empty: none)")
	cacheDir := fs.String("cache", "", "cache dir (default $KAFKAS3_CACHE, else $XDG_CACHE_HOME/kafkas3, else ~/.cache/kafkas3)")
	if err := fs.Parse(args); err != nil {
		return err
	}
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	opts := testbed.Options{
		CacheDir: *cacheDir,
		S3TLS:    *s3TLS,
		Logger:   slog.New(slog.NewTextHandler(stderr, nil)),
	}

	if *prepare {
		start := time.Now()
		if err := testbed.Prepare(ctx, opts); err != nil {
			return err
		}
		fmt.Fprintf(stdout, "testbed: cache ready (Kafka %s jars, versitygw %s) in %.1fs\n",
			testbed.KafkaVersion, testbed.VersitygwVersion, time.Since(start).Seconds())
		return nil
	}

	var exports []string
	if *withKafka {
		start := time.Now()
		k, err := testbed.StartKafka(ctx, opts)
		if err != nil {
			return err
		}
		defer k.Close()
		fmt.Fprintf(stdout, "Kafka %s   %s   (started in %.1fs; log %s)\n",
			testbed.KafkaVersion, k.Addr, time.Since(start).Seconds(), k.LogPath)
		exports = append(exports, "KAFKA_BROKERS="+k.Addr)
	}
	if *withS3 {
		start := time.Now()
		s, err := testbed.StartS3(ctx, opts)
		if err != nil {
			return err
		}
		defer s.Close()
		fmt.Fprintf(stdout, "versitygw %s   %s   access key %s   secret key %s   region %s   (started in %.1fs; log %s)\n",
			testbed.VersitygwVersion, s.Endpoint, s.AccessKey, s.SecretKey, s.Region, time.Since(start).Seconds(), s.LogPath)
		if *bucket != "" {
			if _, err := s.Client().CreateBucket(ctx, &s3.CreateBucketInput{Bucket: aws.String(*bucket)}); err != nil {
				return fmt.Errorf("testbed: create bucket %q: %w", *bucket, err)
			}
			fmt.Fprintf(stdout, "bucket      %s\n", *bucket)
			exports = append(exports, "KAFKAS3_BUCKET="+*bucket)
		}
		exports = append(exports, s.Env()...)
	}
	if len(exports) == 0 {
		return errors.New("testbed: nothing to start (-kafka=false -s3=false)")
	}
	fmt.Fprintln(stdout, "\n# paste into a shell:")
	for _, e := range exports {
		fmt.Fprintf(stdout, "export %s\n", e)
	}
	fmt.Fprintln(stdout, "\nRunning. Press Ctrl-C to stop and clean up.")
	<-ctx.Done()
	fmt.Fprintln(stdout, "Stopping...")
	return nil
}
