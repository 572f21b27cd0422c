package testbed

import (
	"bytes"
	"context"
	"crypto/sha256"
	_ "embed"
	"encoding/hex"
	"errors"
	"fmt"
	"log/slog"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strconv"
	"syscall"
	"time"
)

// KafkaVersion is the Apache Kafka release the test bed runs; pom.xml names it.
const KafkaVersion = "4.1.1"

// VersitygwVersion is the versitygw release the test bed installs and runs.
const VersitygwVersion = "v1.8.0"

// versitygwModule is the package path go install builds.
const versitygwModule = "github.com/versity/versitygw/cmd/versitygw"

// minJavaMajor is the oldest Java the Kafka 4.x broker runs on.
const minJavaMajor = 17

//go:embed pom.xml
var brokerPOM []byte

//go:embed log4j2.properties
var brokerLog4j []byte

// ErrToolMissing is wrapped by errors saying that a program the test bed needs
// (java 17, mvn, go) is not installed. Kafka and S3 skip the test on it.
var ErrToolMissing = errors.New("testbed: required tool missing")

// missingToolError is a one-line message that wraps ErrToolMissing.
type missingToolError struct{ msg string }

func (e *missingToolError) Error() string { return e.msg }
func (e *missingToolError) Unwrap() error { return ErrToolMissing }

func missingTool(format string, args ...any) error {
	return &missingToolError{msg: fmt.Sprintf(format, args...)}
}

// Options configures StartKafka, StartS3 and Prepare. The zero value works.
type Options struct {
	// CacheDir holds downloaded jars and built binaries across runs. Empty
	// means $KAFKAS3_CACHE, else $XDG_CACHE_HOME/kafkas3, else ~/.cache/kafkas3.
	CacheDir string
	// TempDir is the parent of the services' temp dirs. Empty means the
	// system temp dir.
	TempDir string
	// KafkaHeap is the broker's -Xmx value, such as "512m". Empty means "768m".
	KafkaHeap string
	// QuickJVM runs the broker with the C1 compiler only: it starts about a
	// third faster on a busy machine but has lower peak throughput, so it
	// suits tests and not benchmarks. Kafka (the testing accessor) sets it.
	QuickJVM bool
	// SASLSSL adds a SASL_SSL listener with SCRAM-SHA-256 and SCRAM-SHA-512
	// (KafkaBroker.SASLSSLAddr) whose key the JDK's keytool generates; the
	// test creates its SCRAM users through the admin API (CreateSCRAMUser).
	SASLSSL bool
	// OAuthJWKSURL, with SASLSSL, also offers OAUTHBEARER on the SASL_SSL
	// listener, validating tokens (RS256 JWTs with sub and exp, no clock
	// skew) against the JSON Web Key Set at this URL, which must answer
	// before the broker starts; sessions last at most OAuthReauth (default
	// 3 s), so clients re-authenticate.
	OAuthJWKSURL string
	// OAuthReauth is the listener's connections.max.reauth.ms with
	// OAuthJWKSURL.
	OAuthReauth time.Duration
	// KDC, with SASLSSL, also offers GSSAPI on the SASL_SSL listener: the
	// broker's principal is kafka/127.0.0.1 in KDCRealm (service name
	// kafka), created in this KDC with a keytab.
	KDC *KDC
	// S3TLS starts versitygw (StartS3) with HTTPS only: a self-signed
	// ECDSA P-256 certificate for 127.0.0.1 and localhost, generated in
	// its temp dir, passed to versitygw's --cert and --key; the endpoint
	// is then https://127.0.0.1:<port> and S3Server.CAPath the PEM file
	// clients trust (AWS_CA_BUNDLE). The test accessor S3 never sets it.
	S3TLS bool
	// Logger receives progress lines. Nil discards them.
	Logger *slog.Logger
}

func (o Options) logger() *slog.Logger {
	if o.Logger == nil {
		return slog.New(slog.DiscardHandler)
	}
	return o.Logger
}

// cacheDir returns the cache dir that o selects.
func (o Options) cacheDir() (string, error) {
	if o.CacheDir != "" {
		return o.CacheDir, nil
	}
	if d := os.Getenv("KAFKAS3_CACHE"); d != "" {
		return d, nil
	}
	base, err := os.UserCacheDir()
	if err != nil {
		return "", fmt.Errorf("testbed: no cache dir (set KAFKAS3_CACHE): %w", err)
	}
	return filepath.Join(base, "kafkas3"), nil
}

// Prepare downloads and builds everything the test bed runs (the broker's
// jars, the Joda-Time oracle and versitygw) into the cache, so later starts need no network.
func Prepare(ctx context.Context, opts Options) error {
	if _, err := findJava(ctx); err != nil {
		return err
	}
	if _, err := kafkaLibs(ctx, opts); err != nil {
		return err
	}
	if _, err := jodaJar(ctx, opts); err != nil {
		return err
	}
	if _, err := versitygwBinary(ctx, opts); err != nil {
		return err
	}
	return nil
}

var javaVersionRE = regexp.MustCompile(`version "(\d+)(?:\.(\d+))?`)

// findJava returns the path of a java 17 or newer on PATH.
func findJava(ctx context.Context) (string, error) {
	java, err := exec.LookPath("java")
	if err != nil {
		return "", missingTool("testbed: java not found on PATH (need Java %d)", minJavaMajor)
	}
	out, err := runTool(ctx, "", nil, java, "-version")
	if err != nil {
		return "", fmt.Errorf("testbed: %s -version failed: %w", java, err)
	}
	m := javaVersionRE.FindSubmatch(out)
	if m == nil {
		return "", fmt.Errorf("testbed: cannot read the version of %s from %q", java, bytes.TrimSpace(out))
	}
	major, _ := strconv.Atoi(string(m[1]))
	if major == 1 && len(m[2]) > 0 { // "1.8.0_392"
		major, _ = strconv.Atoi(string(m[2]))
	}
	if major < minJavaMajor {
		return "", missingTool("testbed: java on PATH is version %d (need Java %d)", major, minJavaMajor)
	}
	return java, nil
}

// withLock runs fn while holding an exclusive flock on path, so concurrent
// test binaries do not download into the cache at the same time.
func withLock(path string, fn func() error) error {
	if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
		return fmt.Errorf("testbed: make cache dir: %w", err)
	}
	f, err := os.OpenFile(path, os.O_CREATE|os.O_RDWR, 0o644)
	if err != nil {
		return fmt.Errorf("testbed: open lock %s: %w", path, err)
	}
	defer f.Close()
	if err := syscall.Flock(int(f.Fd()), syscall.LOCK_EX); err != nil {
		return fmt.Errorf("testbed: lock %s: %w", path, err)
	}
	defer syscall.Flock(int(f.Fd()), syscall.LOCK_UN) //nolint:errcheck // closing unlocks too
	return fn()
}

// kafkaLibs returns the dir holding the broker's classpath, resolving it with
// Maven the first time.
func kafkaLibs(ctx context.Context, opts Options) (string, error) {
	return mavenJars(ctx, opts, "kafka-"+KafkaVersion, "the Kafka "+KafkaVersion+" jars", brokerPOM, "kafka_2.13-"+KafkaVersion+".jar")
}

// JodaTimeVersion is the Joda-Time release tests use as the oracle of
// path.format (joda-pom.xml).
const JodaTimeVersion = "2.15.1"

//go:embed joda-pom.xml
var jodaPOM []byte

//go:embed Murmur2Oracle.java
var murmur2OracleJava []byte

//go:embed JodaOracle.java
var jodaOracleJava []byte

// jodaJar returns the path of the Joda-Time jar, resolving it with Maven
// the first time.
func jodaJar(ctx context.Context, opts Options) (string, error) {
	jar := "joda-time-" + JodaTimeVersion + ".jar"
	dir, err := mavenJars(ctx, opts, "joda-time-"+JodaTimeVersion, "Joda-Time "+JodaTimeVersion, jodaPOM, jar)
	if err != nil {
		return "", err
	}
	return filepath.Join(dir, jar), nil
}

// mavenJars returns <cache>/<name>/libs holding the runtime dependencies of
// pom (what names them, for messages), copied there by Maven the first time;
// jar must be among them. A marker with the pom's SHA-256 tells a complete
// copy of this pom from a partial or older one.
func mavenJars(ctx context.Context, opts Options, name, what string, pomBody []byte, jar string) (string, error) {
	cache, err := opts.cacheDir()
	if err != nil {
		return "", err
	}
	sum := sha256.Sum256(pomBody)
	want := hex.EncodeToString(sum[:])
	dir := filepath.Join(cache, name)
	libs := filepath.Join(dir, "libs")
	marker := filepath.Join(dir, ".complete")
	ready := func() bool {
		b, err := os.ReadFile(marker)
		return err == nil && string(bytes.TrimSpace(b)) == want
	}
	if ready() {
		return libs, nil
	}
	mvn, err := exec.LookPath("mvn")
	if err != nil {
		return "", missingTool("testbed: mvn not found on PATH (need Maven to fetch %s)", what)
	}
	err = withLock(dir+".lock", func() error {
		if ready() {
			return nil
		}
		opts.logger().Info("testbed: resolving jars with Maven (once)", "what", what, "dir", libs)
		return copyDependencies(ctx, mvn, dir, libs, marker, want, what, pomBody, jar)
	})
	if err != nil {
		return "", err
	}
	return libs, nil
}

// copyDependencies runs Maven on pomBody into libs (through a temp dir, so
// a cut run leaves no partial libs) and writes the marker.
func copyDependencies(ctx context.Context, mvn, dir, libs, marker, want, what string, pomBody []byte, jar string) error {
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return fmt.Errorf("testbed: make %s: %w", dir, err)
	}
	pom := filepath.Join(dir, "pom.xml")
	if err := os.WriteFile(pom, pomBody, 0o644); err != nil {
		return fmt.Errorf("testbed: write %s: %w", pom, err)
	}
	tmp := libs + ".tmp"
	if err := os.RemoveAll(tmp); err != nil {
		return fmt.Errorf("testbed: clear %s: %w", tmp, err)
	}
	if _, err := runTool(ctx, dir, nil, mvn, "-B", "-q", "-f", pom,
		"dependency:copy-dependencies", "-DincludeScope=runtime", "-DoutputDirectory="+tmp); err != nil {
		return fmt.Errorf("testbed: resolve %s: %w", what, err)
	}
	if _, err := os.Stat(filepath.Join(tmp, jar)); err != nil {
		return fmt.Errorf("testbed: Maven finished but %s is missing: %w", jar, err)
	}
	if err := os.RemoveAll(libs); err != nil {
		return fmt.Errorf("testbed: clear %s: %w", libs, err)
	}
	if err := os.Rename(tmp, libs); err != nil {
		return fmt.Errorf("testbed: move jars into place: %w", err)
	}
	if err := os.WriteFile(marker, []byte(want+"\n"), 0o644); err != nil {
		return fmt.Errorf("testbed: write %s: %w", marker, err)
	}
	return nil
}

// versitygwBinary returns the path of the versitygw binary, building it with
// go install the first time.
func versitygwBinary(ctx context.Context, opts Options) (string, error) {
	cache, err := opts.cacheDir()
	if err != nil {
		return "", err
	}
	dir := filepath.Join(cache, "versitygw-"+VersitygwVersion)
	bin := filepath.Join(dir, "versitygw")
	ready := func() bool {
		st, err := os.Stat(bin)
		return err == nil && st.Mode().IsRegular() && st.Mode()&0o111 != 0
	}
	if ready() {
		return bin, nil
	}
	goTool, err := exec.LookPath("go")
	if err != nil {
		return "", missingTool("testbed: go not found on PATH (need it to build versitygw %s)", VersitygwVersion)
	}
	err = withLock(dir+".lock", func() error {
		if ready() {
			return nil
		}
		opts.logger().Info("testbed: building versitygw with go install (once)", "version", VersitygwVersion, "dir", dir)
		tmp := filepath.Join(dir, "gobin.tmp")
		if err := os.RemoveAll(tmp); err != nil {
			return fmt.Errorf("testbed: clear %s: %w", tmp, err)
		}
		if err := os.MkdirAll(tmp, 0o755); err != nil {
			return fmt.Errorf("testbed: make %s: %w", tmp, err)
		}
		env := append(os.Environ(), "GOBIN="+tmp, "GOWORK=off")
		if _, err := runTool(ctx, dir, env, goTool, "install", versitygwModule+"@"+VersitygwVersion); err != nil {
			return fmt.Errorf("testbed: build versitygw %s: %w", VersitygwVersion, err)
		}
		if err := os.Rename(filepath.Join(tmp, "versitygw"), bin); err != nil {
			return fmt.Errorf("testbed: move versitygw into place: %w", err)
		}
		return os.RemoveAll(tmp)
	})
	if err != nil {
		return "", err
	}
	return bin, nil
}
