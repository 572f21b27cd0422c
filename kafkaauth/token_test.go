package kafkaauth

import (
	"context"
	"errors"
	"strings"
	"testing"
	"time"

	"github.com/kafkas3/kafkas3/internal/saslfake"
	"github.com/twmb/franz-go/pkg/kgo"
)

func TestCheckJWT(t *testing.T) {
	iss := newIssuer(t)
	now := time.Unix(1_800_000_000, 0)
	good := mustToken(t, iss, "svc", now, now.Add(time.Hour))
	c, err := CheckJWT(good, now)
	if err != nil || c.Subject != "svc" || !c.Expires.Equal(now.Add(time.Hour)) || !c.IssuedAt.Equal(now) {
		t.Fatalf("CheckJWT = %+v, %v", c, err)
	}
	for name, tc := range map[string]struct {
		tok  string
		want string
	}{
		"expired":    {good, "the JWT of svc expired at 2027-01-15T09:00:00Z"},
		"two parts":  {"a.b", "not a JWT (want three base64url parts separated by '.', found 2)"},
		"not base64": {"a.!!!.c", "payload is not base64url"},
		"not json":   {"a." + b64url("nope") + ".c", "not a JSON object of claims"},
		"no sub":     {"a." + b64url(`{"exp":1900000000}`) + ".c", "has no sub claim"},
		"no exp":     {"a." + b64url(`{"sub":"x"}`) + ".c", "has no exp claim"},
	} {
		at := now
		if name == "expired" {
			at = now.Add(2 * time.Hour)
		}
		_, err := CheckJWT(tc.tok, at)
		if err == nil || !errors.Is(err, ErrToken) || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("%s: error %v, want %q", name, err, tc.want)
		}
		if err != nil && len(tc.tok) > 20 && strings.Contains(err.Error(), tc.tok) {
			t.Errorf("%s: the error shows the token", name)
		}
	}
}

func b64url(s string) string { return strings.TrimRight(b64enc(s), "=") }

func TestTokenFilePath(t *testing.T) {
	for u, want := range map[string]string{
		"file:/var/run/token":          "/var/run/token",
		"file:///var/run/token":        "/var/run/token",
		"FILE:///var/run/my%20token":   "/var/run/my token",
		"file://localhost/var/run/tok": "/var/run/tok",
	} {
		p, ok, err := TokenFilePath(u)
		if err != nil || !ok || p != want {
			t.Errorf("%s: %q %v %v, want %q", u, p, ok, err, want)
		}
	}
	for u, want := range map[string]string{
		"file://idp.example.com/token": `names the host "idp.example.com"`,
		"file:token.jwt":               "is not an absolute file URL",
	} {
		if _, ok, err := TokenFilePath(u); !ok || err == nil || !strings.Contains(err.Error(), want) {
			t.Errorf("%s: %v %v, want %q", u, ok, err, want)
		}
	}
	if _, ok, err := TokenFilePath("https://idp.example.com/token"); ok || err != nil {
		t.Errorf("https URL: %v %v", ok, err)
	}
}

// TestTokenFileReadAgain: a client whose sessions expire re-authenticates,
// and each authentication reads the token file again, so a replaced
// token is what the broker sees from then on; an expired token in the
// file fails the authentication naming the file, without the token.
func TestTokenFileReadAgain(t *testing.T) {
	iss := newIssuer(t)
	now := time.Now()
	tokA := mustToken(t, iss, "first", now, now.Add(time.Hour))
	tokB := mustToken(t, iss, "second", now, now.Add(time.Hour))
	path := tempPath(t, "token.jwt")
	writeToken(t, path, tokA)

	b := &saslfake.Broker{Mechanism: "OAUTHBEARER", Lifetime: 300 * time.Millisecond}
	c := fakeBroker(t, b)
	m := TokenFile{Path: path, Extensions: map[string]string{"logicalCluster": "lkc-1"}}.Mechanism()
	cl, err := kgo.NewClient(kgo.SeedBrokers(c.ListenAddrs()...), kgo.SASL(m))
	if err != nil {
		t.Fatal(err)
	}
	defer cl.Close()
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
	defer cancel()
	produceOne := func() {
		t.Helper()
		if err := cl.ProduceSync(ctx, &kgo.Record{Topic: "t", Value: []byte("v")}).FirstErr(); err != nil {
			t.Fatal(err)
		}
	}
	produceOne()
	writeToken(t, path, tokB)
	deadline := time.Now().Add(10 * time.Second)
	for !sawToken(t, b, tokB) && time.Now().Before(deadline) {
		time.Sleep(100 * time.Millisecond)
		produceOne()
	}
	if !sawToken(t, b, tokA) || !sawToken(t, b, tokB) {
		t.Fatalf("the broker saw %d authentications; want the first token, then the replaced one", len(b.Auths()))
	}
	_, ext, _ := saslfake.OAuthToken(b.Auths()[0])
	if ext["logicalCluster"] != "lkc-1" {
		t.Errorf("extensions %v, want logicalCluster=lkc-1", ext)
	}

	expired := mustToken(t, iss, "old", now.Add(-2*time.Hour), now.Add(-time.Hour))
	writeToken(t, path, expired)
	_, err = TokenFile{Path: path}.Read()
	if err == nil || !strings.Contains(err.Error(), "token file "+path) || !strings.Contains(err.Error(), "expired at") || strings.Contains(err.Error(), expired) {
		t.Errorf("expired token: %v", err)
	}
	if err := produce(t, fakeBroker(t, &saslfake.Broker{Mechanism: "OAUTHBEARER"}), TokenFile{Path: path}.Mechanism()); err == nil || !strings.Contains(err.Error(), "expired at") {
		t.Errorf("a client with an expired token file: %v", err)
	}
}

// sawToken reports whether the broker was sent tok.
func sawToken(t *testing.T, b *saslfake.Broker, tok string) bool {
	t.Helper()
	for _, a := range b.Auths() {
		got, _, err := saslfake.OAuthToken(a)
		if err != nil {
			t.Fatalf("the client sent a malformed OAUTHBEARER message: %v", err)
		}
		if got == tok {
			return true
		}
	}
	return false
}

// TestClaimNames: sasl.oauthbearer.sub.claim.name and scope.claim.name
// name the claims checked; a scope is a string of scopes or a list.
func TestClaimNames(t *testing.T) {
	now := time.Unix(1_800_000_000, 0)
	tok := "h." + b64url(`{"client_id":"svc","scp":["a","b"],"exp":1900000000,"iat":1799999000}`) + ".s"
	names := ClaimNames{Subject: "client_id", Scope: "scp"}
	c, err := names.Check(tok, now)
	if err != nil || c.Subject != "svc" || strings.Join(c.Scope, ",") != "a,b" {
		t.Fatalf("custom names: %+v, %v", c, err)
	}
	if _, err := CheckJWT(tok, now); err == nil || !strings.Contains(err.Error(), "has no sub claim") {
		t.Errorf("default names on a token without sub: %v", err)
	}
	for claims, want := range map[string]string{
		`{"sub":"s","scope":"a b","exp":1900000000}`:     "",
		`{"sub":"s","scope":7,"exp":1900000000}`:         "the JWT's scope claim is neither a string nor a list of strings",
		`{"sub":"s","exp":1900000000,"iat":"yesterday"}`: "the JWT's iat claim is not a number",
		`{"sub":"","exp":1900000000}`:                    "has no sub claim",
		`{"sub":"s","exp":"soon"}`:                       "has no exp claim (a number)",
	} {
		_, err := CheckJWT("h."+b64url(claims)+".s", now)
		if (want == "") != (err == nil) || (err != nil && !strings.Contains(err.Error(), want)) {
			t.Errorf("%s: %v, want %q", claims, err, want)
		}
	}
}
