package testbed

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/credentials"
	"github.com/aws/aws-sdk-go-v2/service/s3"
	"github.com/aws/aws-sdk-go-v2/service/s3/types"
)

// s3ReadyTimeout bounds how long versitygw may take to answer ListBuckets.
const s3ReadyTimeout = 30 * time.Second

// The root credentials and region versitygw is started with.
const (
	s3AccessKey = "kafkas3-test"
	s3SecretKey = "kafkas3-test-secret"
	s3Region    = "us-east-1"
)

// ErrStopped is returned by S3Server.Start after Close.
var ErrStopped = errors.New("testbed: server closed")

// S3Server is a running versitygw with its posix backend on loopback.
type S3Server struct {
	// Endpoint is the server's URL, http://127.0.0.1:port, or
	// https://127.0.0.1:port with Options.S3TLS.
	Endpoint string
	// CAPath is, with Options.S3TLS, the PEM file of the server's
	// self-signed certificate, which clients trust as their CA (Env sets
	// AWS_CA_BUNDLE to it); "" over plain HTTP.
	CAPath string
	// AccessKey, SecretKey and Region are what clients sign requests with.
	AccessKey, SecretKey, Region string
	// DataDir is the posix backend's root: one dir per bucket.
	DataDir string
	// LogPath is versitygw's log (stdout and stderr).
	LogPath string

	bin     string
	addr    string
	tmp     string
	buckets atomic.Int64
	// tls is the certificate and key versitygw serves with S3TLS; zero
	// over plain HTTP.
	tls selfSigned

	mu     sync.Mutex
	proc   *child
	closed bool
}

// StartS3 starts versitygw on a free port with a fresh data dir, and returns
// once it answers ListBuckets. Errors wrapping ErrToolMissing mean the go tool
// needed to build versitygw is missing. Close stops it and removes its dir.
func StartS3(ctx context.Context, opts Options) (_ *S3Server, err error) {
	bin, err := versitygwBinary(ctx, opts)
	if err != nil {
		return nil, err
	}
	removeStaleTempDirs(opts.TempDir)
	tmp, err := makeTempDir(opts.TempDir, "s3")
	if err != nil {
		return nil, err
	}
	defer func() {
		if err != nil {
			_ = os.RemoveAll(tmp)
		}
	}()
	data := filepath.Join(tmp, "data")
	if err := os.MkdirAll(data, 0o755); err != nil {
		return nil, fmt.Errorf("testbed: make %s: %w", data, err)
	}
	scheme, cert := "http", selfSigned{}
	if opts.S3TLS {
		scheme = "https"
		if cert, err = writeSelfSigned(tmp, "versitygw"); err != nil {
			return nil, err
		}
	}
	start := time.Now()
	var lastErr error
	for range 3 {
		port, err := freePort()
		if err != nil {
			return nil, err
		}
		s := &S3Server{
			Endpoint:  fmt.Sprintf("%s://127.0.0.1:%d", scheme, port),
			CAPath:    cert.certPath,
			AccessKey: s3AccessKey,
			SecretKey: s3SecretKey,
			Region:    s3Region,
			DataDir:   data,
			LogPath:   filepath.Join(tmp, "versitygw.log"),
			bin:       bin,
			addr:      fmt.Sprintf("127.0.0.1:%d", port),
			tmp:       tmp,
			tls:       cert,
		}
		lastErr = s.startContext(ctx)
		if lastErr == nil {
			opts.logger().Info("testbed: versitygw ready", "version", VersitygwVersion, "endpoint", s.Endpoint,
				"took", time.Since(start).Round(time.Millisecond).String(), "log", s.LogPath)
			return s, nil
		}
		if !errors.Is(lastErr, errPortTaken) {
			break
		}
	}
	return nil, lastErr
}

// Client returns an S3 client for the server: static credentials, path-style
// addressing, checksums only when an operation requires them, and with
// S3TLS the server's certificate as the only trusted CA.
func (s *S3Server) Client() *s3.Client {
	cfg := aws.Config{
		Region:                     s.Region,
		Credentials:                credentials.NewStaticCredentialsProvider(s.AccessKey, s.SecretKey, ""),
		RequestChecksumCalculation: aws.RequestChecksumCalculationWhenRequired,
		ResponseChecksumValidation: aws.ResponseChecksumValidationWhenRequired,
	}
	if s.tls.roots != nil {
		cfg.HTTPClient = HTTPClient(s.tls.roots)
	}
	return s3.NewFromConfig(cfg, func(o *s3.Options) {
		o.BaseEndpoint = aws.String(s.Endpoint)
		o.UsePathStyle = true
	})
}

// Env returns the AWS_* environment settings that point the aws CLI and SDKs
// at the server (the CLI also needs --endpoint-url where it ignores
// AWS_ENDPOINT_URL), with S3TLS AWS_CA_BUNDLE too.
func (s *S3Server) Env() []string {
	env := []string{
		"AWS_ACCESS_KEY_ID=" + s.AccessKey,
		"AWS_SECRET_ACCESS_KEY=" + s.SecretKey,
		"AWS_REGION=" + s.Region,
		"AWS_DEFAULT_REGION=" + s.Region,
		"AWS_ENDPOINT_URL=" + s.Endpoint,
		"AWS_REQUEST_CHECKSUM_CALCULATION=when_required",
		"AWS_RESPONSE_CHECKSUM_VALIDATION=when_required",
	}
	if s.CAPath != "" {
		env = append(env, "AWS_CA_BUNDLE="+s.CAPath)
	}
	return env
}

// CreateBucketContext creates a fresh, uniquely named bucket and returns its
// name.
func (s *S3Server) CreateBucketContext(ctx context.Context) (string, error) {
	var r [3]byte
	_, _ = rand.Read(r[:])
	name := fmt.Sprintf("kafkas3-test-%d-%s", s.buckets.Add(1), hex.EncodeToString(r[:]))
	if _, err := s.Client().CreateBucket(ctx, &s3.CreateBucketInput{Bucket: aws.String(name)}); err != nil {
		return "", fmt.Errorf("testbed: create bucket %q at %s: %w", name, s.Endpoint, err)
	}
	return name, nil
}

// versionsDir is the posix backend's versioning directory.
func (s *S3Server) versionsDir() string { return filepath.Join(s.tmp, "versions") }

// CreateLockedBucket creates a fresh bucket with S3 Object Lock (and so
// versioning) and, when mode is GOVERNANCE or COMPLIANCE, a default
// retention of days; it returns the bucket's name, failing the test on
// error. Objects under COMPLIANCE retention cannot be deleted: Close
// removes the server's whole directory.
func (s *S3Server) CreateLockedBucket(t testing.TB, mode types.ObjectLockRetentionMode, days int32) string {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	var r [3]byte
	_, _ = rand.Read(r[:])
	name := fmt.Sprintf("kafkas3-lock-%d-%s", s.buckets.Add(1), hex.EncodeToString(r[:]))
	cl := s.Client()
	if _, err := cl.CreateBucket(ctx, &s3.CreateBucketInput{Bucket: aws.String(name), ObjectLockEnabledForBucket: aws.Bool(true)}); err != nil {
		t.Fatalf("testbed: create bucket %q with Object Lock at %s: %v", name, s.Endpoint, err)
	}
	if mode == "" {
		return name
	}
	_, err := cl.PutObjectLockConfiguration(ctx, &s3.PutObjectLockConfigurationInput{Bucket: aws.String(name),
		ObjectLockConfiguration: &types.ObjectLockConfiguration{ObjectLockEnabled: types.ObjectLockEnabledEnabled,
			Rule: &types.ObjectLockRule{DefaultRetention: &types.DefaultRetention{Mode: mode, Days: aws.Int32(days)}}}})
	if err != nil {
		t.Fatalf("testbed: default retention %s %d days on bucket %q: %v", mode, days, name, err)
	}
	return name
}

// CreateBucket creates a fresh, uniquely named bucket and returns its name,
// failing the test on error.
func (s *S3Server) CreateBucket(t testing.TB) string {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	name, err := s.CreateBucketContext(ctx)
	if err != nil {
		t.Fatal(err)
	}
	return name
}

// Start starts versitygw again after Stop, on the same port with the same
// data. It returns nil at once when the server is running.
func (s *S3Server) Start() error {
	return s.startContext(context.Background())
}

func (s *S3Server) startContext(ctx context.Context) error {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.closed {
		return ErrStopped
	}
	if s.proc != nil && !s.proc.exited() {
		return nil
	}
	args := []string{"--access", s.AccessKey, "--secret", s.SecretKey, "--region", s.Region,
		"--port", s.addr, "--quiet"}
	if s.tls.certPath != "" {
		args = append(args, "--cert", s.tls.certPath, "--key", s.tls.keyPath)
	}
	// The posix backend keeps object versions, which S3 Object Lock
	// needs (CreateLockedBucket), in a directory beside the data.
	if err := os.MkdirAll(s.versionsDir(), 0o755); err != nil {
		return fmt.Errorf("testbed: make %s: %w", s.versionsDir(), err)
	}
	posix := []string{"posix", "--versioning-dir", s.versionsDir(), s.DataDir}
	cmd := exec.Command(s.bin, append(args, posix...)...)
	cmd.Dir = s.tmp
	// Root credentials come from the flags only.
	cmd.Env = filterEnv(os.Environ(), "ROOT_", "VGW_", "AWS_")
	proc, err := startChild("versitygw", cmd, s.LogPath)
	if err != nil {
		return err
	}
	s.proc = proc
	if err := s.waitReady(ctx); err != nil {
		proc.stop(0)
		tail := logTail(s.LogPath, 20)
		if strings.Contains(tail, "address already in use") {
			err = fmt.Errorf("%w: %w", errPortTaken, err)
		}
		return fmt.Errorf("testbed: versitygw at %s did not start: %w\n--- last lines of %s ---\n%s",
			s.Endpoint, err, s.LogPath, tail)
	}
	return nil
}

// filterEnv drops the variables whose names start with any of prefixes.
func filterEnv(env []string, prefixes ...string) []string {
	out := env[:0:0]
next:
	for _, kv := range env {
		for _, p := range prefixes {
			if strings.HasPrefix(kv, p) {
				continue next
			}
		}
		out = append(out, kv)
	}
	return out
}

func (s *S3Server) waitReady(ctx context.Context) error {
	ctx, cancel := context.WithTimeout(ctx, s3ReadyTimeout)
	defer cancel()
	cl := s.Client()
	var lastErr error
	for {
		if s.proc.exited() {
			return fmt.Errorf("versitygw exited: %v", s.proc.waitErr)
		}
		attempt, cancelAttempt := context.WithTimeout(ctx, time.Second)
		_, err := cl.ListBuckets(attempt, &s3.ListBucketsInput{}, func(o *s3.Options) {
			o.RetryMaxAttempts = 1
		})
		cancelAttempt()
		if err == nil {
			return nil
		}
		lastErr = err
		select {
		case <-ctx.Done():
			return fmt.Errorf("not ready after %v (last error: %v): %w", s3ReadyTimeout, lastErr, ctx.Err())
		case <-time.After(100 * time.Millisecond):
		}
	}
}

// Stop stops versitygw and keeps its data dir and port, so Start can bring
// the same server back (for fault tests).
func (s *S3Server) Stop() error {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.proc != nil {
		s.proc.stop(5 * time.Second)
		s.proc = nil
	}
	return nil
}

// Close stops versitygw and removes its data dir. It is safe to call more
// than once.
func (s *S3Server) Close() error {
	if err := s.Stop(); err != nil {
		return err
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.closed {
		return nil
	}
	s.closed = true
	if err := os.RemoveAll(s.tmp); err != nil {
		return fmt.Errorf("testbed: remove S3 dir %s: %w", s.tmp, err)
	}
	return nil
}
