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
	Scope    []string // nil when the token has no scope claim
	Expires  time.Time
	IssuedAt time.Time // zero when the token has no iat
}

// ClaimNames name the subject and scope claims, as Kafka's
// sasl.oauthbearer.sub.claim.name and sasl.oauthbearer.scope.claim.name;
// empty means sub and scope.
type ClaimNames struct {
	Subject, Scope string
}

// CheckJWT is ClaimNames{}.Check: the default claim names.
func CheckJWT(tok string, now time.Time) (Claims, error) { return ClaimNames{}.Check(tok, now) }

// Check checks tok as Kafka's client does before it sends one (its
// ClientJwtValidator): three base64url parts whose middle one is a JSON
// object with a non-empty string subject claim, a numeric exp claim (not
// passed at now), a numeric iat when present, and a scope claim, when
// present, that is a string of space-separated scopes or a list of
// strings. Errors never hold the token.
func (n ClaimNames) Check(tok string, now time.Time) (Claims, error) {
	var c Claims
	sub, scope := n.Subject, n.Scope
	if sub == "" {
		sub = "sub"
	}
	if scope == "" {
		scope = "scope"
	}
	parts := strings.Split(tok, ".")
	if len(parts) != 3 {
		return c, fmt.Errorf("%w: not a JWT (want three base64url parts separated by '.', found %d)", ErrToken, len(parts))
	}
	payload, err := base64.RawURLEncoding.DecodeString(strings.TrimRight(parts[1], "="))
	if err != nil {
		return c, fmt.Errorf("%w: the JWT's payload is not base64url", ErrToken)
	}
	var claims map[string]json.RawMessage
	if err := json.Unmarshal(payload, &claims); err != nil || claims == nil {
		return c, fmt.Errorf("%w: the JWT's payload is not a JSON object of claims", ErrToken)
	}
	if json.Unmarshal(claims[sub], &c.Subject) != nil || c.Subject == "" {
		return c, fmt.Errorf("%w: the JWT has no %s claim (a non-empty string)", ErrToken, sub)
	}
	var exp, iat float64
	if json.Unmarshal(claims["exp"], &exp) != nil {
		return c, fmt.Errorf("%w: the JWT has no exp claim (a number)", ErrToken)
	}
	c.Expires = time.UnixMilli(int64(exp * 1000))
	if raw, ok := claims["iat"]; ok {
		if json.Unmarshal(raw, &iat) != nil {
			return c, fmt.Errorf("%w: the JWT's iat claim is not a number", ErrToken)
		}
		c.IssuedAt = time.UnixMilli(int64(iat * 1000))
	}
	if raw, ok := claims[scope]; ok {
		if c.Scope, err = scopes(raw); err != nil {
			return c, fmt.Errorf("%w: the JWT's %s claim %v", ErrToken, scope, err)
		}
	}
	if !now.Before(c.Expires) {
		return c, fmt.Errorf("%w: the JWT of %s expired at %s", ErrToken, c.Subject, c.Expires.UTC().Format(time.RFC3339))
	}
	return c, nil
}

// scopes reads a scope claim: space-separated scopes, or a list.
func scopes(raw json.RawMessage) ([]string, error) {
	var s string
	if json.Unmarshal(raw, &s) == nil {
		return append([]string{}, strings.Fields(s)...), nil
	}
	var list []string
	if json.Unmarshal(raw, &list) == nil {
		return list, nil
	}
	return nil, errors.New("is neither a string nor a list of strings")
}

// TokenFile is OAUTHBEARER with the token in a file, as Kafka's
// sasl.oauthbearer.token.endpoint.url=file:<path>.
type TokenFile struct {
	Path string
	// Extensions are SASL extensions sent with the token (the
	// OAuthBearerLoginModule's extension_<name> options).
	Extensions map[string]string
	// Claims names the claims the token is checked for.
	Claims ClaimNames
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
	if _, err := f.Claims.Check(tok, now(f.Now)); err != nil {
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
