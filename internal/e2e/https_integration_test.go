//go:build integration

package e2e

import (
	"strings"
	"testing"
	"time"

	"github.com/kafkas3/kafkas3/internal/testbed"
)

// TestIntegrationSinkSourceHTTPS: against versitygw serving HTTPS with a
// self-signed certificate (testbed.S3TLS), `kafkas3 sink --once` archives
// a topic and `kafkas3 source` restores it when AWS_CA_BUNDLE names the
// certificate's PEM file and nothing else is configured for TLS; the
// archive holds every record once, in order, and kcat reads the restored
// values back. Without AWS_CA_BUNDLE both commands fail at once (well
// within the --once timeout, so not waited for as an outage) with an
// error naming TLS, the endpoint, the unknown authority and AWS_CA_BUNDLE.
func TestIntegrationSinkSourceHTTPS(t *testing.T) {
	hb := &bed{k: testbed.Kafka(t), s: testbed.S3TLS(t)}
	const topic, parts, perPart = "e2e-https", 3, 700
	hb.k.CreateTopic(t, topic, parts)
	hb.produce(t, topic, parts, 0, perPart, value)
	bucket := hb.s.CreateBucket(t)
	cfg := hb.sinkConf(topic, topic, bucket).write(t)
	trust := []string{"AWS_CA_BUNDLE=" + hb.s.CAPath}

	untrusted(t, hb.s.Endpoint, "sink --once without the CA", "sink", cfg, nil, "--once")

	p := startKafkas3Env(t, "sink --once over HTTPS", "sink", cfg, trust, "--once")
	if code := p.wait(3 * time.Minute); code != 0 {
		t.Fatalf("sink over HTTPS: exit code %d\n%s", code, p.logs())
	}
	sum, err := parseSummary(p.stdout())
	if err != nil || sum.records != parts*perPart {
		t.Fatalf("sink over HTTPS: %v, summary %q, want %d records\n%s", err, sum.line, parts*perPart, p.logs())
	}
	ends := map[int32]int64{}
	for p := range int32(parts) {
		ends[p] = perPart
	}
	if n := checkJSONArchive(t, hb.snapshot(t, bucket), topic, map[int32]int64{}, ends, 1000); n != parts*perPart {
		t.Fatalf("archive holds %d records, want %d", n, parts*perPart)
	}

	restore := []string{"--topic-rename", "copy_of_$0", "--create-topics"}
	untrusted(t, hb.s.Endpoint, "source without the CA", "source", cfg, nil, restore...)
	p = startKafkas3Env(t, "source over HTTPS", "source", cfg, trust, restore...)
	if code := p.wait(3 * time.Minute); code != 0 {
		t.Fatalf("source over HTTPS: exit code %d\n%s", code, p.logs())
	}
	src, err := srcParseSummary(p.stdout())
	if err != nil || src.records != parts*perPart {
		t.Fatalf("source over HTTPS: %v, summary %q, want %d records\n%s", err, src.line, parts*perPart, p.logs())
	}
	for p := range int32(parts) {
		srcSameValues(t, "copy_of_"+topic, hb.srcKcat(t, "copy_of_"+topic, p), srcValues(p, 0, perPart))
	}
}

// untrusted runs `kafkas3 <command>` with env and fails the test unless
// it exits non-zero within a minute with an error naming TLS, endpoint,
// the unknown authority and AWS_CA_BUNDLE.
func untrusted(t *testing.T, endpoint, label, command, cfg string, env []string, args ...string) {
	t.Helper()
	p := startKafkas3Env(t, label, command, cfg, env, args...)
	code := p.wait(time.Minute)
	msg := p.stderr()
	for _, want := range []string{"TLS: the store at " + endpoint, "certificate signed by unknown authority", "AWS_CA_BUNDLE"} {
		if code == 0 || !strings.Contains(msg, want) {
			t.Fatalf("%s: exit code %d, want non-zero and an error naming %q\n%s", label, code, want, p.logs())
		}
	}
	t.Logf("%s: exit code %d after %v: %s", label, code, p.ended.Sub(p.started).Round(time.Millisecond), lastLine(msg))
}
