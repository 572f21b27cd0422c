package cmd

import (
	"context"
	"encoding/binary"
	"fmt"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"
	"time"

	"github.com/kafkas3/kafkas3/internal/s3fake"
	"github.com/kafkas3/kafkas3/internal/srfake"
	"github.com/twmb/avro"
)

// avroSinkConfig archives topic users (Avro values of the registry at
// registryURL) into dir, flush.size 2.
func avroSinkConfig(t *testing.T, brokers, dir, name, registryURL string) string {
	return writeFile(t, name+".yaml", strings.Replace(strings.Replace(sinkYAML(brokers, dir, "users", 2),
		"io.confluent.connect.s3.format.json.JsonFormat", "io.confluent.connect.s3.format.avro.AvroFormat", 1),
		"name: test-sink", "name: "+name, 1)+`
value.converter: io.confluent.connect.avro.AvroConverter
value.converter.schema.registry.url: `+registryURL+`
`)
}

func produceUsers(t *testing.T, ctx context.Context, srv *srfake.Server, brokers string, n int) {
	t.Helper()
	id, _, err := srv.Register("users-value", "AVRO", typedUser)
	if err != nil {
		t.Fatal(err)
	}
	s := avro.MustParse(typedUser)
	var vals [][]byte
	for i := range n {
		b, err := s.Encode(map[string]any{"id": int64(i), "name": fmt.Sprint("n", i)})
		if err != nil {
			t.Fatal(err)
		}
		h := []byte{0, 0, 0, 0, 0}
		binary.BigEndian.PutUint32(h[1:], uint32(id))
		vals = append(vals, append(h, b...))
	}
	produceValues(t, ctx, brokers, "users", vals...)
}

// TestSinkCmdOnceTimeoutRegistryDown: with the registry down, sink --once
// exits 1 within --once-timeout, naming the registry, having written and
// committed nothing.
func TestSinkCmdOnceTimeoutRegistryDown(t *testing.T) {
	ctx := cliContext(t)
	srv, _ := startRegistry(t) // source_typed_test.go
	regURL := srv.URL()
	brokers := startKafka(t, 1, "users")
	produceUsers(t, ctx, srv, brokers, 4)
	srv.SetDown(true)
	dir := t.TempDir()
	cfg := avroSinkConfig(t, brokers, dir, "once", regURL)
	start := time.Now()
	r := mustRun(t, ctx, ExitFail, "sink", "-c", cfg, "--once", "--once-timeout", "2s")
	took := time.Since(start)
	if took < 2*time.Second || took > 15*time.Second {
		t.Fatalf("exited after %v, want about --once-timeout 2s", took)
	}
	if !strings.Contains(r.err, "the Schema Registry (schema.registry.url) unreachable for 2s (--once-timeout)") || !strings.Contains(r.err, "registry restarting") {
		t.Fatalf("stderr does not name the registry and its answer:\n%s", r.err)
	}
	if keys := objectKeys(t, dir); len(keys) != 0 {
		t.Fatalf("wrote %q while the registry was down", keys)
	}
	for _, bad := range []string{"0", "-1m", "10"} {
		mustRun(t, ctx, ExitConfig, "sink", "-c", cfg, "--once", "--once-timeout", bad)
	}
}

// TestSinkCmdRidesOutRegistryOutage: a continuous sink started while the
// registry is down logs it once, waits, logs it up again and archives the
// same objects as a clean --once run.
func TestSinkCmdRidesOutRegistryOutage(t *testing.T) {
	ctx := cliContext(t)
	srv, _ := startRegistry(t) // source_typed_test.go
	regURL := srv.URL()
	brokers := startKafka(t, 1, "users")
	produceUsers(t, ctx, srv, brokers, 6)
	srv.SetDown(true)
	dir, cleanDir := t.TempDir(), t.TempDir()
	runCtx, cancel := context.WithCancel(ctx)
	defer cancel()
	done := make(chan cliResult, 1)
	go func() { done <- runCLI(runCtx, "sink", "-c", avroSinkConfig(t, brokers, dir, "cont", regURL)) }()
	time.Sleep(4 * time.Second)
	srv.SetDown(false)
	want := []string{"topics/users/partition=0/users+0+0000000000.avro", "topics/users/partition=0/users+0+0000000002.avro",
		"topics/users/partition=0/users+0+0000000004.avro"}
	deadline := time.Now().Add(30 * time.Second)
	for !reflect.DeepEqual(objectKeys(t, dir), want) {
		if time.Now().After(deadline) {
			t.Fatalf("objects %q, want %q", objectKeys(t, dir), want)
		}
		time.Sleep(50 * time.Millisecond)
	}
	cancel()
	r := <-done
	if r.code != ExitOK {
		t.Fatalf("exit %d\n%s", r.code, r.err)
	}
	downs, ups := strings.Count(r.err, `msg="dependency down" dependency=registry`), strings.Count(r.err, `msg="dependency up again" dependency=registry`)
	if downs != 1 || ups != 1 {
		t.Fatalf("registry logged down %d and up %d times, want once each:\n%s", downs, ups, r.err)
	}
	mustRun(t, ctx, ExitOK, "sink", "-c", avroSinkConfig(t, brokers, cleanDir, "clean", regURL), "--once")
	for _, k := range want {
		got, err1 := os.ReadFile(filepath.Join(dir, k))
		clean, err2 := os.ReadFile(filepath.Join(cleanDir, k))
		if err1 != nil || err2 != nil || string(got) != string(clean) {
			t.Fatalf("%s differs from the clean run's (%v, %v)", k, err1, err2)
		}
	}
}

// storeSinkYAML archives topic st into bucket of the S3 fake at endpoint,
// flush.size 2, retrying each request once after 10 ms.
func storeSinkYAML(brokers, endpoint, bucket, name string) string {
	return fmt.Sprintf(`name: %s
bootstrap.servers: %s
topics: st
flush.size: 2
format.class: json
store.url: %s
s3.bucket.name: %s
aws.access.key.id: AKFAKE
aws.secret.access.key: fake-secret
s3.part.retries: 1
s3.retry.backoff.ms: 10
`, name, brokers, endpoint, bucket)
}

// TestSinkCmdStoreOutage: with the S3 store down (503 on every request), a
// continuous sink logs it once, waits, logs it up again and writes the
// same objects as a clean run; --once exits 1 within --once-timeout
// naming the store.
func TestSinkCmdStoreOutage(t *testing.T) {
	ctx := cliContext(t)
	fake := s3fake.New()
	t.Cleanup(fake.Close)
	fake.CreateBucket("kafkas3-outage")
	fake.CreateBucket("kafkas3-clean")
	brokers := startKafka(t, 1, "st")
	produceValues(t, ctx, brokers, "st", []byte(`{"a":1}`), []byte(`{"a":2}`), []byte(`{"a":3}`), []byte(`{"a":4}`))
	fake.SetDown(true)

	start := time.Now()
	r := mustRun(t, ctx, ExitFail, "sink", "-c", writeFile(t, "once.yaml", storeSinkYAML(brokers, fake.URL, "kafkas3-outage", "once")),
		"--once", "--once-timeout", "2s")
	if took := time.Since(start); took < 2*time.Second || took > 15*time.Second || !strings.Contains(r.err, "the object store unreachable for 2s (--once-timeout)") {
		t.Fatalf("--once exited after %v:\n%s", took, r.err)
	}

	cfg := writeFile(t, "cont.yaml", storeSinkYAML(brokers, fake.URL, "kafkas3-outage", "cont"))
	var errb syncBuffer
	stop, done := runInBackground(ctx, &errb, "sink", "-c", cfg, "--metrics-addr", "127.0.0.1:0", "--log-format", "json")
	defer stop()
	base := metricsBase(t, &errb)
	waitReadyz(t, base, 503, "store: down since")
	time.Sleep(2 * time.Second)
	fake.SetDown(false)
	want := []string{"topics/st/partition=0/st+0+0000000000.json", "topics/st/partition=0/st+0+0000000002.json"}
	deadline := time.Now().Add(40 * time.Second)
	dataKeys := func() []string {
		var out []string
		for _, k := range fake.Keys("kafkas3-outage") {
			if strings.HasPrefix(k, "topics/") {
				out = append(out, k)
			}
		}
		return out
	}
	for !reflect.DeepEqual(dataKeys(), want) {
		if time.Now().After(deadline) {
			t.Fatalf("objects %q, want %q", dataKeys(), want)
		}
		time.Sleep(50 * time.Millisecond)
	}
	waitReadyz(t, base, 200, "ready")
	stop()
	if r = <-done; r.code != ExitOK {
		t.Fatalf("exit %d\n%s", r.code, r.err)
	}
	downs, ups := strings.Count(r.err, `"msg":"dependency down","dependency":"store"`), strings.Count(r.err, `"msg":"dependency up again","dependency":"store"`)
	if downs != 1 || ups != 1 {
		t.Fatalf("store logged down %d and up %d times, want once each:\n%s", downs, ups, r.err)
	}
	mustRun(t, ctx, ExitOK, "sink", "-c", writeFile(t, "clean.yaml", storeSinkYAML(brokers, fake.URL, "kafkas3-clean", "clean")), "--once")
	for _, k := range want {
		got, _ := fake.Object("kafkas3-outage", k)
		clean, ok := fake.Object("kafkas3-clean", k)
		if !ok || string(got) != string(clean) {
			t.Fatalf("%s differs from the clean run's: %q, want %q", k, got, clean)
		}
	}
}

// waitReadyz polls base/readyz until it answers code with a body holding
// want.
func waitReadyz(t *testing.T, base string, code int, want string) {
	t.Helper()
	for deadline := time.Now().Add(30 * time.Second); ; time.Sleep(50 * time.Millisecond) {
		c, body := status(t, base+"/readyz")
		if c == code && strings.Contains(body, want) {
			t.Logf("/readyz: %d %s", c, strings.TrimSpace(body))
			return
		}
		if time.Now().After(deadline) {
			t.Fatalf("/readyz = %d %q, want %d with %q", c, body, code, want)
		}
	}
}
