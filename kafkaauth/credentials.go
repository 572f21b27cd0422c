package kafkaauth

import (
	"context"
	"encoding/base64"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"strings"
	"sync"
	"time"

	"github.com/twmb/franz-go/pkg/sasl"
	"github.com/twmb/franz-go/pkg/sasl/oauth"
)

// refreshFactor is the part of a token's lifetime after which a new one
// is requested (Kafka's sasl.login.refresh.window.factor default).
const refreshFactor = 0.8

// maxErrorBody is how much of a refusing token endpoint's answer an
// error quotes.
const maxErrorBody = 300

// ClientCredentials is OAUTHBEARER with a token from an OAuth 2 token
// endpoint, requested with the client_credentials grant as Kafka's
// ClientCredentialsJwtRetriever does: a form POST of grant_type (and
// scope when set) with the client id and secret in a Basic
// Authorization header.
type ClientCredentials struct {
	URL          string
	ClientID     string
	ClientSecret string
	Scope        string
	// URLEncodeHeader URL-encodes the id and secret before they are
	// joined in the header (Kafka's sasl.oauthbearer.header.urlencode).
	URLEncodeHeader bool
	Extensions      map[string]string
	// Claims names the claims the token is checked for.
	Claims ClaimNames
	// HTTP is the client for the token endpoint; http.DefaultClient when nil.
	HTTP *http.Client
	// Now is the clock; time.Now when nil.
	Now func() time.Time
}

// Mechanism returns the mechanism. A token is requested at the first
// authentication and reused by later ones until refreshFactor of its
// lifetime has passed.
func (c ClientCredentials) Mechanism() sasl.Mechanism {
	cache := &tokenCache{c: c}
	return oauth.Oauth(func(ctx context.Context) (oauth.Auth, error) {
		tok, err := cache.token(ctx)
		if err != nil {
			return oauth.Auth{}, err
		}
		return oauth.Auth{Token: tok, Extensions: c.Extensions}, nil
	})
}

// tokenCache holds the latest token and when to replace it.
type tokenCache struct {
	c         ClientCredentials
	mu        sync.Mutex
	tok       string
	refreshAt time.Time
}

func (t *tokenCache) token(ctx context.Context) (string, error) {
	t.mu.Lock()
	defer t.mu.Unlock()
	at := now(t.c.Now)
	if t.tok != "" && at.Before(t.refreshAt) {
		return t.tok, nil
	}
	tok, lifetime, err := t.c.Request(ctx)
	if err != nil {
		return "", err
	}
	t.tok = tok
	t.refreshAt = at.Add(time.Duration(float64(lifetime) * refreshFactor))
	return tok, nil
}

// Request asks the token endpoint for a token and checks it; lifetime is
// from now to its exp claim (or expires_in, when that is sooner).
func (c ClientCredentials) Request(ctx context.Context) (tok string, lifetime time.Duration, err error) {
	form := url.Values{"grant_type": {"client_credentials"}}
	if c.Scope != "" {
		form.Set("scope", c.Scope)
	}
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, c.URL, strings.NewReader(form.Encode()))
	if err != nil {
		return "", 0, fmt.Errorf("%w: token endpoint %s: %w", ErrToken, c.URL, err)
	}
	id, secret := c.ClientID, c.ClientSecret
	if c.URLEncodeHeader {
		id, secret = url.QueryEscape(id), url.QueryEscape(secret)
	}
	req.Header.Set("Authorization", "Basic "+base64.StdEncoding.EncodeToString([]byte(id+":"+secret)))
	req.Header.Set("Content-Type", "application/x-www-form-urlencoded")
	req.Header.Set("Accept", "application/json")
	hc := c.HTTP
	if hc == nil {
		hc = http.DefaultClient
	}
	resp, err := hc.Do(req)
	if err != nil {
		return "", 0, fmt.Errorf("%w: token endpoint %s: %w", ErrToken, c.URL, err)
	}
	defer func() { _ = resp.Body.Close() }()
	body, err := io.ReadAll(io.LimitReader(resp.Body, 1<<20))
	if err != nil {
		return "", 0, fmt.Errorf("%w: token endpoint %s: read the answer: %w", ErrToken, c.URL, err)
	}
	if resp.StatusCode != http.StatusOK {
		return "", 0, fmt.Errorf("%w: token endpoint %s refused client %q: %s: %s", ErrToken, c.URL, c.ClientID, resp.Status, quoteBody(body))
	}
	return c.parseAnswer(body)
}

// parseAnswer reads access_token and expires_in of the endpoint's JSON.
func (c ClientCredentials) parseAnswer(body []byte) (string, time.Duration, error) {
	var ans struct {
		AccessToken string   `json:"access_token"`
		ExpiresIn   *float64 `json:"expires_in"`
	}
	if err := json.Unmarshal(body, &ans); err != nil || ans.AccessToken == "" {
		return "", 0, fmt.Errorf("%w: token endpoint %s answered without a JSON access_token", ErrToken, c.URL)
	}
	at := now(c.Now)
	claims, err := c.Claims.Check(ans.AccessToken, at)
	if err != nil {
		return "", 0, fmt.Errorf("token endpoint %s: %w", c.URL, err)
	}
	lifetime := claims.Expires.Sub(at)
	if ans.ExpiresIn != nil {
		if d := time.Duration(*ans.ExpiresIn * float64(time.Second)); d < lifetime {
			lifetime = d
		}
	}
	return ans.AccessToken, lifetime, nil
}

// quoteBody quotes the start of an error answer, on one line.
func quoteBody(b []byte) string {
	s := strings.TrimSpace(string(b))
	if len(s) > maxErrorBody {
		s = s[:maxErrorBody] + "..."
	}
	if s == "" {
		return "(no body)"
	}
	return fmt.Sprintf("%q", s)
}
