package testbed

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"os"
	"os/exec"
	"os/signal"
	"path/filepath"
	"strings"
	"sync"
	"syscall"
	"testing"
)

// RequireEnv names the environment variable that, set to 1, turns a skip for
// a missing tool into a test failure. CI sets it.
const RequireEnv = "KAFKAS3_REQUIRE_TESTBED"

// bed holds the services of one test binary. Its single instance, current,
// is process state by design: TestMain and every test in the binary share
// one broker and one S3 server, and Main stops them.
type bed struct {
	mu     sync.Mutex
	active bool
	closed bool
	ctx    context.Context
	cancel context.CancelFunc
	opts   Options

	kafkaOnce sync.Once
	kafka     *KafkaBroker
	kafkaErr  error

	s3Once sync.Once
	s3     *S3Server
	s3Err  error

	// s3tls is the second versitygw, serving HTTPS (S3TLS).
	s3tlsOnce sync.Once
	s3tls     *S3Server
	s3tlsErr  error

	shutdownOnce sync.Once
}

// current is the test binary's test bed, set up by Main.
var current bed

// Main runs the tests of a package that uses the test bed:
//
//	func TestMain(m *testing.M) { os.Exit(testbed.Main(m)) }
//
// It starts nothing itself; Kafka and S3 start their service on first use.
// After m.Run it stops everything that was started and removes its temp dirs.
// On SIGINT or SIGTERM it does the same, then dies of that signal.
func Main(m *testing.M) int {
	current.begin()
	sigc := make(chan os.Signal, 1)
	signal.Notify(sigc, syscall.SIGINT, syscall.SIGTERM)
	done := make(chan struct{})
	go func() {
		select {
		case sig := <-sigc:
			fmt.Fprintf(os.Stderr, "testbed: %v received, stopping services\n", sig)
			current.shutdown()
			signal.Reset(sig)
			if s, ok := sig.(syscall.Signal); ok {
				_ = syscall.Kill(os.Getpid(), s)
			}
		case <-done:
		}
	}()
	defer func() {
		signal.Stop(sigc)
		close(done)
		current.shutdown()
	}()
	return m.Run()
}

func (b *bed) begin() {
	b.mu.Lock()
	defer b.mu.Unlock()
	b.active = true
	b.ctx, b.cancel = context.WithCancel(context.Background())
	b.opts = Options{QuickJVM: true, Logger: slog.New(slog.NewTextHandler(os.Stderr, &slog.HandlerOptions{
		ReplaceAttr: func(groups []string, a slog.Attr) slog.Attr {
			if len(groups) == 0 && a.Key == slog.TimeKey {
				return slog.Attr{}
			}
			return a
		},
	}))}
}

// shutdown stops every started service; later starts are refused. A second
// caller waits until the first one has finished.
func (b *bed) shutdown() {
	b.shutdownOnce.Do(b.stopAll)
}

func (b *bed) stopAll() {
	b.mu.Lock()
	b.closed = true
	if b.cancel != nil {
		b.cancel()
	}
	k, servers := b.kafka, []*S3Server{b.s3, b.s3tls}
	b.mu.Unlock()
	if k != nil {
		if err := k.Close(); err != nil {
			fmt.Fprintln(os.Stderr, err)
		}
	}
	for _, s := range servers {
		if s == nil {
			continue
		}
		if err := s.Close(); err != nil {
			fmt.Fprintln(os.Stderr, err)
		}
	}
}

// errNoMain says Kafka or S3 was called in a binary whose TestMain does not
// run Main, so nothing would stop the services.
var errNoMain = errors.New("testbed: no testbed.Main: add `func TestMain(m *testing.M) { os.Exit(testbed.Main(m)) }` to the package")

// errShutDown says a service was asked for after Main began stopping.
var errShutDown = errors.New("testbed: test bed is shutting down")

// state returns the context and options for a start, or why none may begin.
func (b *bed) state() (context.Context, Options, error) {
	b.mu.Lock()
	defer b.mu.Unlock()
	switch {
	case !b.active:
		return nil, Options{}, errNoMain
	case b.closed:
		return nil, Options{}, errShutDown
	}
	return b.ctx, b.opts, nil
}

func (b *bed) kafkaBroker() (*KafkaBroker, error) {
	ctx, opts, err := b.state()
	if err != nil {
		return nil, err
	}
	b.kafkaOnce.Do(func() {
		k, err := StartKafka(ctx, opts)
		b.mu.Lock()
		defer b.mu.Unlock()
		if err == nil && b.closed {
			_ = k.Close()
			k, err = nil, errShutDown
		}
		b.kafka, b.kafkaErr = k, err
	})
	return b.kafka, b.kafkaErr
}

// s3Server returns the binary's versitygw, over HTTPS when tls is set,
// starting it on first use.
func (b *bed) s3Server(tls bool) (*S3Server, error) {
	ctx, opts, err := b.state()
	if err != nil {
		return nil, err
	}
	once, srv, srvErr := &b.s3Once, &b.s3, &b.s3Err
	if tls {
		once, srv, srvErr = &b.s3tlsOnce, &b.s3tls, &b.s3tlsErr
	}
	once.Do(func() {
		opts.S3TLS = tls
		s, err := StartS3(ctx, opts)
		b.mu.Lock()
		defer b.mu.Unlock()
		if err == nil && b.closed {
			_ = s.Close()
			s, err = nil, errShutDown
		}
		*srv, *srvErr = s, err
	})
	return *srv, *srvErr
}

// skipOrFail skips the test when err says a tool is missing (unless
// RequireEnv is 1), and fails it otherwise.
func skipOrFail(t testing.TB, err error) {
	t.Helper()
	if errors.Is(err, ErrToolMissing) && os.Getenv(RequireEnv) != "1" {
		t.Skip(err.Error())
	}
	t.Fatal(err)
}

// Kafka returns the test binary's broker, starting it on first use. It skips
// the test with one line when java 17 or mvn is missing, and fails it when the
// broker does not start; the error carries the tail of the broker log.
func Kafka(t testing.TB) *KafkaBroker {
	t.Helper()
	k, err := current.kafkaBroker()
	if err != nil {
		skipOrFail(t, err)
	}
	return k
}

// S3 returns the test binary's versitygw, starting it on first use. It skips
// the test with one line when the go tool is missing, and fails it when the
// server does not start.
func S3(t testing.TB) *S3Server {
	t.Helper()
	s, err := current.s3Server(false)
	if err != nil {
		skipOrFail(t, err)
	}
	return s
}

// S3TLS returns the test binary's second versitygw, which serves HTTPS
// with a self-signed certificate (Options.S3TLS; clients trust
// S3Server.CAPath), starting it on first use. It skips and fails as S3
// does.
func S3TLS(t testing.TB) *S3Server {
	t.Helper()
	s, err := current.s3Server(true)
	if err != nil {
		skipOrFail(t, err)
	}
	return s
}

// Tool returns the path of program name on PATH. When it is missing it skips
// the test with one line saying how to install it (install, such as "apt-get
// install kcat"), or fails the test when KAFKAS3_REQUIRE_TESTBED=1.
func Tool(t testing.TB, name, install string) string {
	t.Helper()
	p, err := exec.LookPath(name)
	if err != nil {
		skipOrFail(t, missingTool("testbed: %s not found on PATH (%s)", name, install))
	}
	return p
}

// JodaOracle prints object paths with Joda-Time itself, as Confluent's
// TimeBasedPartitioner computes them (JodaOracle.java, run on the test
// bed's java 17+ with the Joda-Time jar from Maven Central, resolved into
// the cache the first time). Each case is "pattern TAB zone TAB locale TAB
// timestamp-ms TAB partition.duration.ms"; each answer, in the same order,
// is "bucket-start-ms TAB path". It skips the test with one line when java
// or mvn is missing (fails it with KAFKAS3_REQUIRE_TESTBED=1).
func JodaOracle(t testing.TB, cases []string) []string {
	t.Helper()
	ctx, opts, err := current.state()
	var java, jar string
	if err == nil {
		java, err = findJava(ctx)
	}
	if err == nil {
		jar, err = jodaJar(ctx, opts)
	}
	if err != nil {
		skipOrFail(t, err)
	}
	src := filepath.Join(t.TempDir(), "JodaOracle.java")
	if err := os.WriteFile(src, jodaOracleJava, 0o600); err != nil {
		t.Fatal(err)
	}
	cmd := exec.CommandContext(ctx, java, "-cp", jar, src)
	cmd.Stdin = strings.NewReader(strings.Join(cases, "\n") + "\n")
	var stderr strings.Builder
	cmd.Stderr = &stderr
	out, err := cmd.Output()
	if err != nil {
		t.Fatalf("Joda-Time oracle: %v\n%s", err, stderr.String())
	}
	lines := strings.Split(strings.TrimSuffix(string(out), "\n"), "\n")
	if len(lines) != len(cases) {
		t.Fatalf("Joda-Time oracle printed %d lines for %d cases\n%s", len(lines), len(cases), stderr.String())
	}
	return lines
}

// Murmur2Oracle computes, with Kafka's own classes on the test bed's JVM
// (Murmur2Oracle.java, with the broker's jars, kafka-clients among them),
// what Kafka's Java producer does with record keys. Each case is
// "hex-key TAB partitions"; each answer, in the same order, is
// "Utils.murmur2(key) TAB BuiltInPartitioner.partitionForKey(key,
// partitions)". It skips the test with one line when java or mvn is
// missing (fails it with KAFKAS3_REQUIRE_TESTBED=1).
func Murmur2Oracle(t testing.TB, cases []string) []string {
	t.Helper()
	ctx, opts, err := current.state()
	var java, libs string
	if err == nil {
		java, err = findJava(ctx)
	}
	if err == nil {
		libs, err = kafkaLibs(ctx, opts)
	}
	if err != nil {
		skipOrFail(t, err)
	}
	src := filepath.Join(t.TempDir(), "Murmur2Oracle.java")
	if err := os.WriteFile(src, murmur2OracleJava, 0o600); err != nil {
		t.Fatal(err)
	}
	cmd := exec.CommandContext(ctx, java, "-cp", filepath.Join(libs, "*"), src)
	cmd.Stdin = strings.NewReader(strings.Join(cases, "\n") + "\n")
	var stderr strings.Builder
	cmd.Stderr = &stderr
	out, err := cmd.Output()
	if err != nil {
		t.Fatalf("murmur2 oracle: %v\n%s", err, stderr.String())
	}
	lines := strings.Split(strings.TrimSuffix(string(out), "\n"), "\n")
	if len(lines) != len(cases) {
		t.Fatalf("murmur2 oracle printed %d lines for %d cases\n%s", len(lines), len(cases), stderr.String())
	}
	return lines
}
