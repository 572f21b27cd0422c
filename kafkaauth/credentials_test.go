package kafkaauth

import (
	"context"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/kafkas3/kafkas3/internal/saslfake"
)

// TestClientCredentials: the mechanism asks the token endpoint with the
// client_credentials grant, Basic client authentication and the scope,
// sends the token to the broker, and reuses it until 80% of its lifetime
// has passed.
func TestClientCredentials(t *testing.T) {
	iss := newIssuer(t)
	iss.ClientID, iss.ClientSecret, iss.Scope, iss.Lifetime = "kafkas3", "s3cr3t:with/specials", "kafka.read", 100*time.Second
	srv := httptest.NewServer(iss)
	defer srv.Close()

	var clock atomic.Int64
	clock.Store(time.Now().UnixNano())
	now := func() time.Time { return time.Unix(0, clock.Load()) }
	cc := ClientCredentials{URL: srv.URL + "/token", ClientID: iss.ClientID, ClientSecret: iss.ClientSecret, Scope: iss.Scope, Now: now}
	m := cc.Mechanism()
	b := &saslfake.Broker{Mechanism: "OAUTHBEARER"}
	c := fakeBroker(t, b)
	for range 2 { // two clients, each with its connections, one token
		if err := produce(t, c, m); err != nil {
			t.Fatal(err)
		}
	}
	if n := iss.Requests(); n != 1 {
		t.Errorf("%d token requests for two authentications within the token's lifetime, want 1", n)
	}
	clock.Add(int64(81 * time.Second))
	if err := produce(t, c, m); err != nil {
		t.Fatal(err)
	}
	if n := iss.Requests(); n != 2 {
		t.Errorf("%d token requests after 81%% of the lifetime, want 2", n)
	}
	auths := b.Auths()
	if len(auths) < 3 { // each client authenticates each of its connections
		t.Fatalf("%d authentications, want at least 3", len(auths))
	}
	for _, a := range auths {
		tok, _, err := saslfake.OAuthToken(a)
		if err != nil {
			t.Fatal(err)
		}
		if c, err := CheckJWT(tok, now()); err != nil || c.Subject != "kafkas3" {
			t.Errorf("the broker got %+v, %v; want the endpoint's token for kafkas3", c, err)
		}
	}
}

// TestClientCredentialsErrors: a refusal names the endpoint, the client
// and the answer, never the secret; a non-JWT answer is refused before
// it reaches a broker.
func TestClientCredentialsErrors(t *testing.T) {
	iss := newIssuer(t)
	iss.ClientID, iss.ClientSecret = "kafkas3", "right"
	srv := httptest.NewServer(iss)
	defer srv.Close()
	ctx := context.Background()
	_, _, err := ClientCredentials{URL: srv.URL + "/token", ClientID: "kafkas3", ClientSecret: "Hunter2Secret"}.Request(ctx)
	want := `token endpoint ` + srv.URL + `/token refused client "kafkas3": 401 Unauthorized: "{\"error\":\"invalid_client\"}"`
	if err == nil || !strings.Contains(err.Error(), want) || strings.Contains(err.Error(), "Hunter2Secret") {
		t.Errorf("error %v\nwant %s", err, want)
	}

	opaque := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		_, _ = w.Write([]byte(`{"access_token":"opaque-token-xyz","expires_in":3600}`))
	}))
	defer opaque.Close()
	_, _, err = ClientCredentials{URL: opaque.URL, ClientID: "a", ClientSecret: "b"}.Request(ctx)
	if err == nil || !strings.Contains(err.Error(), "not a JWT") || strings.Contains(err.Error(), "opaque-token-xyz") {
		t.Errorf("opaque token: %v", err)
	}

	// URL-encoded header: the id and secret are form-encoded first.
	var got string
	enc := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		id, secret, _ := r.BasicAuth()
		got = id + "|" + secret
		http.Error(w, "no", http.StatusForbidden)
	}))
	defer enc.Close()
	_, _, _ = ClientCredentials{URL: enc.URL, ClientID: "a b", ClientSecret: "c:d", URLEncodeHeader: true}.Request(ctx)
	if got != "a+b|c%3Ad" {
		t.Errorf("url-encoded header gave %q, want a+b|c%%3Ad", got)
	}
}
