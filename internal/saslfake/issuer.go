package saslfake

import (
	"crypto"
	"crypto/rand"
	"crypto/rsa"
	"crypto/sha256"
	"encoding/base64"
	"encoding/json"
	"fmt"
	"math/big"
	"net/http"
	"sync"
	"time"
)

// Issuer is an OAuth identity provider for tests: it signs JWTs with an
// RSA key (RS256), serves that key as a JWKS (what a broker validates
// tokens with) and answers client_credentials token requests.
type Issuer struct {
	key *rsa.PrivateKey
	// KID is the key id in the JWKS and in each token's header.
	KID string
	// Audience, when set, is each token's aud claim.
	Audience string
	// Lifetime is how long issued tokens are valid (default 1 hour).
	Lifetime time.Duration
	// ClientID and ClientSecret are the only client the endpoint accepts.
	ClientID, ClientSecret string
	// Scope, when set, must be the request's scope.
	Scope string

	mu       sync.Mutex
	requests int
}

// NewIssuer makes an issuer with a fresh 2048-bit key.
func NewIssuer() (*Issuer, error) {
	key, err := rsa.GenerateKey(rand.Reader, 2048)
	if err != nil {
		return nil, fmt.Errorf("saslfake: %w", err)
	}
	return &Issuer{key: key, KID: "saslfake-1", Lifetime: time.Hour}, nil
}

func b64(b []byte) string { return base64.RawURLEncoding.EncodeToString(b) }

// Token signs a JWT for sub, issued at iat and expiring at exp.
func (i *Issuer) Token(sub string, iat, exp time.Time) (string, error) {
	header, err := json.Marshal(map[string]string{"alg": "RS256", "typ": "JWT", "kid": i.KID})
	if err != nil {
		return "", err
	}
	claims := map[string]any{"sub": sub, "iat": iat.Unix(), "exp": exp.Unix(), "iss": "saslfake", "scope": i.Scope}
	if i.Audience != "" {
		claims["aud"] = i.Audience
	}
	payload, err := json.Marshal(claims)
	if err != nil {
		return "", err
	}
	signing := b64(header) + "." + b64(payload)
	sum := sha256.Sum256([]byte(signing))
	sig, err := rsa.SignPKCS1v15(rand.Reader, i.key, crypto.SHA256, sum[:])
	if err != nil {
		return "", fmt.Errorf("saslfake: sign: %w", err)
	}
	return signing + "." + b64(sig), nil
}

// JWKS is the issuer's public key as a JSON Web Key Set.
func (i *Issuer) JWKS() []byte {
	pub := i.key.PublicKey
	b, _ := json.Marshal(map[string]any{"keys": []map[string]string{{
		"kty": "RSA", "use": "sig", "alg": "RS256", "kid": i.KID,
		"n": b64(pub.N.Bytes()), "e": b64(big.NewInt(int64(pub.E)).Bytes()),
	}}})
	return b
}

// Requests is how many token requests the endpoint answered with a token.
func (i *Issuer) Requests() int {
	i.mu.Lock()
	defer i.mu.Unlock()
	return i.requests
}

// ServeHTTP serves GET /jwks (the key set) and POST /token (the
// client_credentials grant with HTTP Basic client authentication, as
// RFC 6749 section 2.3.1 describes: id and secret form-encoded, then
// joined); anything else is 404.
func (i *Issuer) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	switch {
	case r.URL.Path == "/jwks" && r.Method == http.MethodGet:
		w.Header().Set("Content-Type", "application/json")
		_, _ = w.Write(i.JWKS())
	case r.URL.Path == "/token" && r.Method == http.MethodPost:
		i.token(w, r)
	default:
		http.NotFound(w, r)
	}
}

func (i *Issuer) token(w http.ResponseWriter, r *http.Request) {
	id, secret, ok := r.BasicAuth()
	if err := r.ParseForm(); err != nil || !ok || id != i.ClientID || secret != i.ClientSecret {
		oauthError(w, http.StatusUnauthorized, "invalid_client")
		return
	}
	if r.PostForm.Get("grant_type") != "client_credentials" {
		oauthError(w, http.StatusBadRequest, "unsupported_grant_type")
		return
	}
	if i.Scope != "" && r.PostForm.Get("scope") != i.Scope {
		oauthError(w, http.StatusBadRequest, "invalid_scope")
		return
	}
	now := time.Now()
	tok, err := i.Token(id, now, now.Add(i.Lifetime))
	if err != nil {
		oauthError(w, http.StatusInternalServerError, "server_error")
		return
	}
	i.mu.Lock()
	i.requests++
	i.mu.Unlock()
	w.Header().Set("Content-Type", "application/json")
	_ = json.NewEncoder(w).Encode(map[string]any{"access_token": tok, "token_type": "Bearer", "expires_in": int(i.Lifetime.Seconds())})
}

func oauthError(w http.ResponseWriter, status int, code string) {
	w.Header().Set("Content-Type", "application/json")
	w.WriteHeader(status)
	_ = json.NewEncoder(w).Encode(map[string]string{"error": code})
}
