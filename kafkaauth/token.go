package kafkaauth

import (
	"context"
	"encoding/base64"
	"encoding/json"
	"errors"
	"fmt"
	"net/url"
	"os"
	"strings"
	"time"

	"github.com/twmb/franz-go/pkg/sasl"
	"github.com/twmb/franz-go/pkg/sasl/oauth"
)

// ErrToken is wrapped by every error about a token: unreadable, not a
// JWT, expired, refused by the token endpoint.
var ErrToken = errors.New("OAUTHBEARER token")

// Claims are the claims of a token that the client checks.
type Claims struct {
	Subject  string
	Expires  time.Time
	IssuedAt time.Time // zero when the token has no iat
}

// CheckJWT checks tok as Kafka's client does before it sends one (its
// ClientJwtValidator): three base64url parts whose middle one is a JSON
// object with a string sub claim and a numeric exp claim, not expired at
// now. Errors never hold the token.
func CheckJWT(tok string, now time.Time) (Claims, error) {
	var c Claims
	parts := strings.Split(tok, ".")
	if len(parts) != 3 {
		return c, fmt.Errorf("%w: not a JWT (want three base64url parts separated by '.', found %d)", ErrToken, len(parts))
	}
	payload, err := base64.RawURLEncoding.DecodeString(strings.TrimRight(parts[1], "="))
	if err != nil {
		return c, fmt.Errorf("%w: the JWT's payload is not base64url", ErrToken)
	}
	var claims struct {
		Sub *string  `json:"sub"`
		Exp *float64 `json:"exp"`
		Iat *float64 `json:"iat"`
	}
	if err := json.Unmarshal(payload, &claims); err != nil {
		return c, fmt.Errorf("%w: the JWT's payload is not a JSON object of claims", ErrToken)
	}
	if claims.Sub == nil || *claims.Sub == "" {
		return c, fmt.Errorf("%w: the JWT has no sub claim", ErrToken)
	}
	if claims.Exp == nil {
		return c, fmt.Errorf("%w: the JWT has no exp claim", ErrToken)
	}
	c.Subject = *claims.Sub
	c.Expires = time.UnixMilli(int64(*claims.Exp * 1000))
	if claims.Iat != nil {
		c.IssuedAt = time.UnixMilli(int64(*claims.Iat * 1000))
	}
	if !now.Before(c.Expires) {
		return c, fmt.Errorf("%w: the JWT of %s expired at %s", ErrToken, c.Subject, c.Expires.UTC().Format(time.RFC3339))
	}
	return c, nil
}

// TokenFile is OAUTHBEARER with the token in a file, as Kafka's
// sasl.oauthbearer.token.endpoint.url=file:<path>.
type TokenFile struct {
	Path string
	// Extensions are SASL extensions sent with the token (the
	// OAuthBearerLoginModule's extension_<name> options).
	Extensions map[string]string
	// Now is the clock tokens are checked against; time.Now when nil.
	Now func() time.Time
}

// Mechanism returns the mechanism. Each authentication (each new
// connection, and each re-authentication the broker asks for before a
// session expires) reads the file again, so a token that was replaced
// is used from the next authentication on.
func (f TokenFile) Mechanism() sasl.Mechanism {
	return oauth.Oauth(func(context.Context) (oauth.Auth, error) {
		tok, err := f.Read()
		if err != nil {
			return oauth.Auth{}, err
		}
		return oauth.Auth{Token: tok, Extensions: f.Extensions}, nil
	})
}

// Read reads and checks the token (surrounding white space is dropped).
func (f TokenFile) Read() (string, error) {
	b, err := os.ReadFile(f.Path)
	if err != nil {
		return "", fmt.Errorf("%w: read the token file: %w", ErrToken, err)
	}
	tok := strings.TrimSpace(string(b))
	if _, err := CheckJWT(tok, now(f.Now)); err != nil {
		return "", fmt.Errorf("token file %s: %w", f.Path, err)
	}
	return tok, nil
}

func now(clock func() time.Time) time.Time {
	if clock == nil {
		return time.Now()
	}
	return clock()
}

// TokenFilePath turns a file URL of sasl.oauthbearer.token.endpoint.url
// (file:/path, file:///path, as Java writes them) into its absolute
// path; ok is false when u is not a file URL. Another host or a relative
// path is an error.
func TokenFilePath(u string) (path string, ok bool, err error) {
	rest, ok := cutPrefixFold(u, "file:")
	if !ok {
		return "", false, nil
	}
	if strings.HasPrefix(rest, "//") {
		host, p, _ := strings.Cut(rest[2:], "/")
		if host != "" && host != "localhost" {
			return "", true, fmt.Errorf("names the host %q; a token file URL names a local file: file:/path or file:///path", host)
		}
		rest = "/" + p
	}
	if !strings.HasPrefix(rest, "/") {
		return "", true, errors.New("is not an absolute file URL; want file:/path or file:///path")
	}
	p, err := url.PathUnescape(rest)
	if err != nil {
		return "", true, fmt.Errorf("is not a file URL (%w)", err)
	}
	return p, true, nil
}

func cutPrefixFold(s, prefix string) (string, bool) {
	if len(s) >= len(prefix) && strings.EqualFold(s[:len(prefix)], prefix) {
		return s[len(prefix):], true
	}
	return s, false
}
