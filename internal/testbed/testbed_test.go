package testbed

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// fakeJava puts a java on PATH (and nothing else) that prints version.
func fakeJava(t *testing.T, version string) {
	t.Helper()
	dir := t.TempDir()
	script := "#!/bin/sh\necho 'openjdk version \"" + version + "\" 2025-04-15' >&2\n"
	if err := os.WriteFile(filepath.Join(dir, "java"), []byte(script), 0o755); err != nil {
		t.Fatal(err)
	}
	t.Setenv("PATH", dir)
}

func TestFindJava(t *testing.T) {
	tests := []struct {
		version string
		wantErr string // empty: found
	}{
		{"17.0.15", ""},
		{"21", ""},
		{"11.0.2", "testbed: java on PATH is version 11 (need Java 17)"},
		{"1.8.0_392", "testbed: java on PATH is version 8 (need Java 17)"},
	}
	for _, tc := range tests {
		t.Run(tc.version, func(t *testing.T) {
			fakeJava(t, tc.version)
			_, err := findJava(context.Background())
			if tc.wantErr == "" {
				if err != nil {
					t.Fatalf("findJava with java %s: %v", tc.version, err)
				}
				return
			}
			if !errors.Is(err, ErrToolMissing) || err.Error() != tc.wantErr {
				t.Fatalf("findJava with java %s = %v, want %q wrapping ErrToolMissing", tc.version, err, tc.wantErr)
			}
		})
	}
}

func TestMissingTools(t *testing.T) {
	t.Setenv("PATH", t.TempDir())
	ctx := context.Background()
	opts := Options{CacheDir: t.TempDir()}

	_, err := findJava(ctx)
	if want := "testbed: java not found on PATH (need Java 17)"; !errors.Is(err, ErrToolMissing) || err.Error() != want {
		t.Errorf("findJava = %v, want %q", err, want)
	}
	_, err = kafkaLibs(ctx, opts)
	if !errors.Is(err, ErrToolMissing) || !strings.HasPrefix(err.Error(), "testbed: mvn not found on PATH") {
		t.Errorf("kafkaLibs without mvn = %v, want mvn not found", err)
	}
	_, err = versitygwBinary(ctx, opts)
	if !errors.Is(err, ErrToolMissing) || !strings.HasPrefix(err.Error(), "testbed: go not found on PATH") {
		t.Errorf("versitygwBinary without go = %v, want go not found", err)
	}
	if _, err := StartKafka(ctx, opts); !errors.Is(err, ErrToolMissing) {
		t.Errorf("StartKafka without java = %v, want ErrToolMissing", err)
	}
}

// TestCachedNeedsNoTools checks that a filled cache is used without mvn or go.
func TestCachedNeedsNoTools(t *testing.T) {
	t.Setenv("PATH", t.TempDir())
	cache := t.TempDir()
	opts := Options{CacheDir: cache}

	kdir := filepath.Join(cache, "kafka-"+KafkaVersion)
	if err := os.MkdirAll(filepath.Join(kdir, "libs"), 0o755); err != nil {
		t.Fatal(err)
	}
	sum := sha256.Sum256(brokerPOM)
	if err := os.WriteFile(filepath.Join(kdir, ".complete"), []byte(hex.EncodeToString(sum[:])+"\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	libs, err := kafkaLibs(context.Background(), opts)
	if err != nil || libs != filepath.Join(kdir, "libs") {
		t.Errorf("kafkaLibs with a filled cache = %q, %v", libs, err)
	}

	// A marker for another pom means the cache is stale: mvn is needed again.
	if err := os.WriteFile(filepath.Join(kdir, ".complete"), []byte("0000\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	if _, err := kafkaLibs(context.Background(), opts); !errors.Is(err, ErrToolMissing) {
		t.Errorf("kafkaLibs with a stale marker = %v, want mvn missing", err)
	}

	vdir := filepath.Join(cache, "versitygw-"+VersitygwVersion)
	if err := os.MkdirAll(vdir, 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(vdir, "versitygw"), []byte("#!/bin/sh\n"), 0o755); err != nil {
		t.Fatal(err)
	}
	bin, err := versitygwBinary(context.Background(), opts)
	if err != nil || bin != filepath.Join(vdir, "versitygw") {
		t.Errorf("versitygwBinary with a filled cache = %q, %v", bin, err)
	}
}

func TestCacheDirSelection(t *testing.T) {
	t.Setenv("KAFKAS3_CACHE", "/x/cache")
	if d, _ := (Options{CacheDir: "/explicit"}).cacheDir(); d != "/explicit" {
		t.Errorf("explicit CacheDir: got %q", d)
	}
	if d, _ := (Options{}).cacheDir(); d != "/x/cache" {
		t.Errorf("KAFKAS3_CACHE: got %q", d)
	}
	t.Setenv("KAFKAS3_CACHE", "")
	t.Setenv("XDG_CACHE_HOME", "/xdg")
	if d, _ := (Options{}).cacheDir(); d != "/xdg/kafkas3" {
		t.Errorf("XDG_CACHE_HOME: got %q", d)
	}
}

func TestNewClusterID(t *testing.T) {
	seen := map[string]bool{}
	for range 200 {
		id := newClusterID()
		if len(id) != 22 || strings.HasPrefix(id, "-") || strings.ContainsAny(id, "+/=") {
			t.Fatalf("bad cluster id %q", id)
		}
		if seen[id] {
			t.Fatalf("cluster id %q repeated", id)
		}
		seen[id] = true
	}
}

func TestLogTail(t *testing.T) {
	p := filepath.Join(t.TempDir(), "log")
	var b strings.Builder
	for i := range 50 {
		b.WriteString(strings.Repeat("x", i%3) + "line\n")
	}
	if err := os.WriteFile(p, []byte(b.String()), 0o644); err != nil {
		t.Fatal(err)
	}
	got := strings.Split(logTail(p, 40), "\n")
	if len(got) != 40 || got[39] != "xline" {
		t.Errorf("logTail: %d lines, last %q", len(got), got[len(got)-1])
	}
	if s := logTail(filepath.Join(t.TempDir(), "nope"), 5); !strings.HasPrefix(s, "(no log:") {
		t.Errorf("logTail of a missing file = %q", s)
	}
}

func TestFilterEnv(t *testing.T) {
	got := filterEnv([]string{"AWS_REGION=x", "HOME=/root", "VGW_PORT=1", "PATH=/bin", "ROOT_ACCESS_KEY=k"}, "ROOT_", "VGW_", "AWS_")
	if strings.Join(got, " ") != "HOME=/root PATH=/bin" {
		t.Errorf("filterEnv = %v", got)
	}
}

func TestRemoveStaleTempDirs(t *testing.T) {
	parent := t.TempDir()
	// pid 0x7ffffffe is above any real pid_max, so it is never running.
	stale := filepath.Join(parent, tempPrefix+"2147483646-kafka-1")
	mine, err := makeTempDir(parent, "kafka")
	if err != nil {
		t.Fatal(err)
	}
	other := filepath.Join(parent, "unrelated")
	for _, d := range []string{stale, other} {
		if err := os.Mkdir(d, 0o755); err != nil {
			t.Fatal(err)
		}
	}
	removeStaleTempDirs(parent)
	if _, err := os.Stat(stale); !os.IsNotExist(err) {
		t.Errorf("stale dir of a dead pid kept: %v", err)
	}
	for _, d := range []string{mine, other} {
		if _, err := os.Stat(d); err != nil {
			t.Errorf("%s removed: %v", d, err)
		}
	}
}

func TestBedWithoutMain(t *testing.T) {
	var b bed
	if _, err := b.kafkaBroker(); !errors.Is(err, errNoMain) {
		t.Errorf("kafkaBroker without Main = %v, want errNoMain", err)
	}
	for _, tls := range []bool{false, true} {
		if _, err := b.s3Server(tls); !errors.Is(err, errNoMain) {
			t.Errorf("s3Server(%v) without Main = %v, want errNoMain", tls, err)
		}
	}
}

// recordTB records Skip and Fatal instead of ending the goroutine.
type recordTB struct {
	testing.TB
	skipped, fatal string
}

type stopTest struct{}

func (r *recordTB) Helper() {}
func (r *recordTB) Skip(args ...any) {
	r.skipped = fmt.Sprint(args...)
	panic(stopTest{})
}
func (r *recordTB) Fatal(args ...any) {
	r.fatal = fmt.Sprint(args...)
	panic(stopTest{})
}

func runSkipOrFail(err error) (r *recordTB) {
	r = &recordTB{}
	defer func() {
		if p := recover(); p != nil {
			if _, ok := p.(stopTest); !ok {
				panic(p)
			}
		}
	}()
	skipOrFail(r, err)
	return r
}

func TestSkipOrFail(t *testing.T) {
	missing := missingTool("testbed: java not found on PATH (need Java 17)")
	t.Setenv(RequireEnv, "")
	if r := runSkipOrFail(missing); r.skipped != "testbed: java not found on PATH (need Java 17)" || r.fatal != "" {
		t.Errorf("missing tool: skipped %q, fatal %q; want a one-line skip", r.skipped, r.fatal)
	}
	if r := runSkipOrFail(errors.New("broker died")); r.skipped != "" || r.fatal != "broker died" {
		t.Errorf("start failure: skipped %q, fatal %q; want fatal", r.skipped, r.fatal)
	}
	t.Setenv(RequireEnv, "1")
	if r := runSkipOrFail(missing); r.skipped != "" || r.fatal == "" {
		t.Errorf("missing tool with %s=1: skipped %q, fatal %q; want fatal", RequireEnv, r.skipped, r.fatal)
	}
}
