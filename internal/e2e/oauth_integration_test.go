//go:build integration

package e2e

import (
	"maps"
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/kafkas3/kafkas3/internal/saslfake"
)

// TestIntegrationSASLOAuthBearer: against a real broker whose SASL_SSL
// listener validates OAUTHBEARER tokens with the JWKS of an identity
// provider served by the test on loopback:
//   - `sink --once` gets its token from the provider's token endpoint with
//     OAuth client credentials;
//   - `source` restores with a token from a token file;
//   - a continuous sink keeps archiving after the token it started with
//     has expired, because the file was rewritten meanwhile and each
//     re-authentication (the broker allows 3 s sessions) reads it again;
//   - a token signed by another key is refused, and the sink says so.
func TestIntegrationSASLOAuthBearer(t *testing.T) {
	b := newBed(t)
	a := authBroker(t)
	broker, iss, idp := a.broker, a.iss, a.idp
	sb := &bed{k: broker, s: b.s}
	const topic, parts, perPart = "e2e-oauth", 2, 200
	broker.CreateTopic(t, topic, parts)
	sb.produce(t, topic, parts, 0, perPart, value)
	base := sb.sinkConf(topic, topic, b.s.CreateBucket(t)).with("bootstrap.servers", broker.SASLSSLAddr,
		"security.protocol", "SASL_SSL", "ssl.ca.location", broker.CAPath, "sasl.mechanism", "OAUTHBEARER")

	cc := base.with("sasl.oauthbearer.token.endpoint.url", idp.URL+"/token",
		"sasl.oauthbearer.client.credentials.client.id", iss.ClientID,
		"sasl.oauthbearer.client.credentials.client.secret", iss.ClientSecret, "sasl.oauthbearer.scope", iss.Scope)
	sum, p := runOnce(t, "sink --once, client credentials", cc.write(t))
	if sum.records != parts*perPart || iss.Requests() == 0 {
		t.Fatalf("sink archived %s with %d token requests; want %d records", sum.line, iss.Requests(), parts*perPart)
	}
	if strings.Contains(p.logs(), iss.ClientSecret) {
		t.Error("the sink's output shows the client secret")
	}

	tokPath := filepath.Join(t.TempDir(), "token.jwt")
	writeJWT(t, iss, tokPath, "restorer", time.Hour)
	tf := base.with("sasl.oauthbearer.token.endpoint.url", "file://"+tokPath)
	src, _ := srcRunOK(t, "source, token file", tf.write(t), "--topic-rename", "copy_of_$0", "--create-topics")
	if src.records != parts*perPart {
		t.Fatalf("source restored %s, want %d records", src.line, parts*perPart)
	}

	rotatedSinkKeepsRunning(t, sb, tf.with("name", topic+"-rotated", "flush.size", "100", "s3.bucket.name", b.s.CreateBucket(t)), iss, tokPath)

	other, err := saslfake.NewIssuer()
	if err != nil {
		t.Fatal(err)
	}
	writeJWT(t, other, tokPath, "intruder", time.Hour)
	wrong := tf.with("name", topic+"-wrong-key")
	p, code := runSink(t, "sink --once, token of another key", wrong.write(t), 2*time.Minute, "--once")
	if code == 0 || !strings.Contains(p.stderr(), "SASL_AUTHENTICATION_FAILED") {
		t.Fatalf("token of another key: exit code %d, want an authentication failure:\n%s", code, p.logs())
	}
	t.Logf("token of another key: exit code %d: %s", code, lastLine(p.stderr()))
}

// rotatedSinkKeepsRunning starts a continuous sink with a token that
// expires in 12 s, rewrites the token file with a fresh token, and checks
// that records produced after the first token's expiry are archived and
// committed.
func rotatedSinkKeepsRunning(t *testing.T, sb *bed, cfg conf, iss *saslfake.Issuer, tokPath string) {
	t.Helper()
	const lifetime = 12 * time.Second
	start := time.Now()
	writeJWT(t, iss, tokPath, "rotating", lifetime)
	p := startSink(t, "continuous sink, rotated token", cfg.write(t))
	defer func() {
		p.signal(syscall.SIGTERM)
		p.wait(time.Minute)
	}()
	group, topic := "connect-"+cfg["name"], cfg["topics"]
	caughtUp := func() bool {
		c, err := sb.committedErr(group, topic)
		return err == nil && maps.Equal(c, sb.endOffsets(t, topic))
	}
	if !waitFor(lifetime-2*time.Second, 200*time.Millisecond, caughtUp) {
		t.Fatalf("the sink did not commit the first records before its token expired:\n%s", p.logs())
	}
	writeJWT(t, iss, tokPath, "rotating", time.Hour)
	time.Sleep(time.Until(start.Add(lifetime + 4*time.Second)))
	sb.produce(t, topic, 2, 200, 100, value)
	if !waitFor(time.Minute, 200*time.Millisecond, caughtUp) || p.exited() {
		t.Fatalf("the sink did not archive the records produced after its first token expired (exited: %v):\n%s", p.exited(), p.logs())
	}
	t.Logf("continuous sink: committed %v after the token rotation, %v after start", sb.endOffsets(t, topic), time.Since(start).Round(time.Second))
}

// writeJWT replaces path with a token of iss for sub, valid for d, as a
// rotating agent does (rename over the old file).
func writeJWT(t *testing.T, iss *saslfake.Issuer, path, sub string, d time.Duration) {
	t.Helper()
	tok, err := iss.Token(sub, time.Now(), time.Now().Add(d))
	if err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(path+".tmp", []byte(tok), 0o600); err != nil {
		t.Fatal(err)
	}
	if err := os.Rename(path+".tmp", path); err != nil {
		t.Fatal(err)
	}
}
