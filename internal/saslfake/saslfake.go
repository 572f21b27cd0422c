package saslfake

import (
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"net/url"
	"strings"
	"sync"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	v4 "github.com/aws/aws-sdk-go-v2/aws/signer/v4"
	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kfake"
	"github.com/twmb/franz-go/pkg/kmsg"
)

// Broker is the SASL side of a kfake cluster.
type Broker struct {
	// Mechanism is the one mechanism offered.
	Mechanism string
	// Check accepts or refuses one authentication's bytes; nil accepts all.
	Check func(auth []byte) error
	// Lifetime is the session lifetime given to accepted authentications;
	// 0 means none (no re-authentication).
	Lifetime time.Duration
	// Reply is sent back to an accepted authentication (AWS_MSK_IAM's
	// client wants a non-empty one).
	Reply []byte

	mu      sync.Mutex
	auths   [][]byte
	refused []error
}

// Hook installs b on c: from then on c answers every SaslHandshake and
// SaslAuthenticate as b says.
func (b *Broker) Hook(c *kfake.Cluster) {
	c.ControlKey(int16(kmsg.SASLHandshake), func(r kmsg.Request) (kmsg.Response, error, bool) {
		c.KeepControl()
		req := r.(*kmsg.SASLHandshakeRequest)
		resp := req.ResponseKind().(*kmsg.SASLHandshakeResponse)
		resp.SupportedMechanisms = []string{b.Mechanism}
		if req.Mechanism != b.Mechanism {
			resp.ErrorCode = kerr.UnsupportedSaslMechanism.Code
		}
		return resp, nil, true
	})
	c.ControlKey(int16(kmsg.SASLAuthenticate), func(r kmsg.Request) (kmsg.Response, error, bool) {
		c.KeepControl()
		req := r.(*kmsg.SASLAuthenticateRequest)
		resp := req.ResponseKind().(*kmsg.SASLAuthenticateResponse)
		auth := append([]byte(nil), req.SASLAuthBytes...)
		var err error
		if b.Check != nil {
			err = b.Check(auth)
		}
		b.mu.Lock()
		b.auths = append(b.auths, auth)
		if err != nil {
			b.refused = append(b.refused, err)
		}
		b.mu.Unlock()
		if err != nil {
			resp.ErrorCode = kerr.SaslAuthenticationFailed.Code
			msg := "saslfake: " + err.Error()
			resp.ErrorMessage = &msg
			return resp, nil, true
		}
		resp.SASLAuthBytes = b.Reply
		resp.SessionLifetimeMillis = b.Lifetime.Milliseconds()
		return resp, nil, true
	})
}

// Auths returns the bytes of every authentication so far, accepted or not.
func (b *Broker) Auths() [][]byte {
	b.mu.Lock()
	defer b.mu.Unlock()
	return append([][]byte(nil), b.auths...)
}

// Refused returns why authentications were refused.
func (b *Broker) Refused() []error {
	b.mu.Lock()
	defer b.mu.Unlock()
	return append([]error(nil), b.refused...)
}

// OAuthToken returns the bearer token and the extensions of an
// OAUTHBEARER client first message: "n,,\x01auth=Bearer <token>\x01
// key=value\x01...\x01".
func OAuthToken(auth []byte) (token string, ext map[string]string, err error) {
	s := string(auth)
	gs2, rest, ok := strings.Cut(s, "\x01")
	if !ok || !strings.HasPrefix(gs2, "n,") || !strings.HasSuffix(rest, "\x01\x01") {
		return "", nil, fmt.Errorf("not an OAUTHBEARER client message")
	}
	ext = map[string]string{}
	for _, kv := range strings.Split(strings.TrimSuffix(rest, "\x01\x01"), "\x01") {
		k, v, _ := strings.Cut(kv, "=")
		if k == "auth" {
			t, ok := strings.CutPrefix(v, "Bearer ")
			if !ok {
				return "", nil, fmt.Errorf("auth is not a Bearer token")
			}
			token = t
			continue
		}
		ext[k] = v
	}
	if token == "" {
		return "", nil, fmt.Errorf("no auth=Bearer in the message")
	}
	return token, ext, nil
}

// MSKPayload is an AWS_MSK_IAM authentication payload's fields.
type MSKPayload map[string]string

// VerifyMSKIAM checks an AWS_MSK_IAM payload as MSK would: version
// 2020_10_22, action kafka-cluster:Connect for host, the credential of
// creds in region, a date within 15 minutes of now, and a signature
// equal to aws-sdk-go-v2's presigned signature of the same GET request.
func VerifyMSKIAM(auth []byte, host, region string, creds aws.Credentials, now time.Time) (MSKPayload, error) {
	var p MSKPayload
	if err := json.Unmarshal(auth, &p); err != nil {
		return nil, fmt.Errorf("payload is not a JSON object of strings: %w", err)
	}
	want := map[string]string{"version": "2020_10_22", "host": host, "action": "kafka-cluster:Connect",
		"x-amz-algorithm": "AWS4-HMAC-SHA256", "x-amz-signedheaders": "host", "x-amz-expires": "900",
		"x-amz-security-token": creds.SessionToken}
	for k, v := range want {
		if p[k] != v {
			return p, fmt.Errorf("payload %s = %q, want %q", k, p[k], v)
		}
	}
	date, err := time.Parse("20060102T150405Z", p["x-amz-date"])
	if err != nil || date.Sub(now) > 15*time.Minute || now.Sub(date) > 15*time.Minute {
		return p, fmt.Errorf("payload x-amz-date %q is not within 15 minutes of %s", p["x-amz-date"], now.UTC().Format(time.RFC3339))
	}
	scope := date.Format("20060102") + "/" + region + "/kafka-cluster/aws4_request"
	if p["x-amz-credential"] != creds.AccessKeyID+"/"+scope {
		return p, fmt.Errorf("payload x-amz-credential %q, want %q", p["x-amz-credential"], creds.AccessKeyID+"/"+scope)
	}
	q := url.Values{"Action": {"kafka-cluster:Connect"}, "X-Amz-Expires": {"900"}}
	req, err := http.NewRequest(http.MethodGet, "https://"+host+"/?"+strings.ReplaceAll(q.Encode(), "+", "%20"), nil)
	if err != nil {
		return p, err
	}
	const emptySHA256 = "e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855"
	signed, _, err := v4.NewSigner().PresignHTTP(context.Background(), creds, req, emptySHA256, "kafka-cluster", region, date)
	if err != nil {
		return p, fmt.Errorf("presign: %w", err)
	}
	su, err := url.Parse(signed)
	if err != nil {
		return p, err
	}
	if got, want := p["x-amz-signature"], su.Query().Get("X-Amz-Signature"); got != want {
		return p, fmt.Errorf("payload x-amz-signature %s, want %s (aws-sdk-go-v2's)", got, want)
	}
	return p, nil
}
