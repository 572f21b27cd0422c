package s3store_test

import (
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"net/http/httputil"
	"net/url"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	v4 "github.com/aws/aws-sdk-go-v2/aws/signer/v4"
	"github.com/kafkas3/kafkas3/internal/s3fake"
	"github.com/kafkas3/kafkas3/s3store"
)

// The temporary credentials the fake STS hands out.
const (
	roleKeyID  = "ASIAROLEFAKEFAKE"
	roleSecret = "role-secret"
	roleToken  = "role-session-token"
)

// fakeSTS is an STS endpoint on loopback that answers AssumeRole and
// AssumeRoleWithWebIdentity with fixed temporary credentials and keeps
// each request's form and Authorization header.
type fakeSTS struct {
	URL   string
	mu    sync.Mutex
	forms []url.Values
	auths []string
}

func newFakeSTS(t *testing.T) *fakeSTS {
	t.Helper()
	f := &fakeSTS{}
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if err := r.ParseForm(); err != nil {
			http.Error(w, err.Error(), http.StatusBadRequest)
			return
		}
		f.mu.Lock()
		f.forms = append(f.forms, r.PostForm)
		f.auths = append(f.auths, r.Header.Get("Authorization"))
		f.mu.Unlock()
		action := r.PostForm.Get("Action")
		if action != "AssumeRole" && action != "AssumeRoleWithWebIdentity" {
			http.Error(w, "unexpected action "+action, http.StatusBadRequest)
			return
		}
		w.Header().Set("Content-Type", "text/xml")
		fmt.Fprintf(w, `<%[1]sResponse xmlns="https://sts.amazonaws.com/doc/2011-06-15/"><%[1]sResult>`+
			`<Credentials><AccessKeyId>%[2]s</AccessKeyId><SecretAccessKey>%[3]s</SecretAccessKey>`+
			`<SessionToken>%[4]s</SessionToken><Expiration>%[5]s</Expiration></Credentials>`+
			`<AssumedRoleUser><Arn>%[6]s/s</Arn><AssumedRoleId>AROA:s</AssumedRoleId></AssumedRoleUser>`+
			`</%[1]sResult><ResponseMetadata><RequestId>r</RequestId></ResponseMetadata></%[1]sResponse>`,
			action, roleKeyID, roleSecret, roleToken, time.Now().Add(time.Hour).UTC().Format(time.RFC3339), r.PostForm.Get("RoleArn"))
	}))
	t.Cleanup(srv.Close)
	f.URL = srv.URL
	return f
}

func (f *fakeSTS) requests() ([]url.Values, []string) {
	f.mu.Lock()
	defer f.mu.Unlock()
	return append([]url.Values(nil), f.forms...), append([]string(nil), f.auths...)
}

// signatureChecker stands in front of fake and passes on only requests
// whose SigV4 signature is that of creds, counting them; others get 403.
type signatureChecker struct {
	URL     string
	mu      sync.Mutex
	checked int
	bad     []string
}

func newSignatureChecker(t *testing.T, fake *s3fake.Server, creds aws.Credentials, region string) *signatureChecker {
	t.Helper()
	target, _ := url.Parse(fake.URL)
	proxy := httputil.NewSingleHostReverseProxy(target)
	c := &signatureChecker{}
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		err := checkSignature(r, creds, region)
		c.mu.Lock()
		c.checked++
		if err != nil {
			c.bad = append(c.bad, fmt.Sprintf("%s %s: %v", r.Method, r.URL, err))
		}
		c.mu.Unlock()
		if err != nil {
			http.Error(w, err.Error(), http.StatusForbidden)
			return
		}
		proxy.ServeHTTP(w, r)
	}))
	t.Cleanup(srv.Close)
	c.URL = srv.URL
	return c
}

// checkSignature signs a copy of r, with only the headers r signed, with
// creds and compares the signatures.
func checkSignature(r *http.Request, creds aws.Credentials, region string) error {
	auth := r.Header.Get("Authorization")
	_, signed, ok := strings.Cut(auth, "SignedHeaders=")
	if !ok {
		return fmt.Errorf("no SigV4 Authorization header: %q", auth)
	}
	signed, _, _ = strings.Cut(signed, ",")
	at, err := time.Parse("20060102T150405Z", r.Header.Get("X-Amz-Date"))
	if err != nil {
		return fmt.Errorf("X-Amz-Date: %w", err)
	}
	cp, _ := http.NewRequest(r.Method, "http://"+r.Host+r.URL.RequestURI(), nil)
	for _, h := range strings.Split(signed, ";") {
		switch h {
		case "host":
		case "content-length": // the server moves it out of the headers
			cp.ContentLength = r.ContentLength
		default:
			cp.Header[http.CanonicalHeaderKey(h)] = r.Header.Values(h)
		}
	}
	cp.Header.Del("X-Amz-Security-Token") // the signer adds the session token itself
	err = v4.NewSigner().SignHTTP(r.Context(), creds, cp, r.Header.Get("X-Amz-Content-Sha256"), "s3", region, at,
		func(o *v4.SignerOptions) { o.DisableURIPathEscaping = true })
	if err != nil {
		return err
	}
	if want := cp.Header.Get("Authorization"); want != auth {
		return fmt.Errorf("signature is not that of access key %s:\n got  %s\n want %s", creds.AccessKeyID, auth, want)
	}
	return nil
}

// isolateAWSEnv keeps the credential chain from finding anything of the
// machine's: no environment keys, no shared files, no instance metadata.
func isolateAWSEnv(t *testing.T) {
	t.Helper()
	for _, k := range []string{"AWS_ACCESS_KEY_ID", "AWS_SECRET_ACCESS_KEY", "AWS_SESSION_TOKEN", "AWS_PROFILE",
		"AWS_ROLE_ARN", "AWS_WEB_IDENTITY_TOKEN_FILE", "AWS_ROLE_SESSION_NAME", "AWS_ENDPOINT_URL", "AWS_ENDPOINT_URL_STS",
		"AWS_CONTAINER_CREDENTIALS_FULL_URI", "AWS_CONTAINER_CREDENTIALS_RELATIVE_URI", "AWS_CA_BUNDLE", "HTTPS_PROXY", "HTTP_PROXY", "https_proxy", "http_proxy"} {
		t.Setenv(k, "")
		os.Unsetenv(k)
	}
	none := filepath.Join(t.TempDir(), "none")
	t.Setenv("AWS_CONFIG_FILE", none)
	t.Setenv("AWS_SHARED_CREDENTIALS_FILE", none)
	t.Setenv("AWS_EC2_METADATA_DISABLED", "true")
}

// useChecked points the store at the signature checker.
func useChecked(c *signatureChecker) func(*s3store.S3Config) {
	return func(cfg *s3store.S3Config) { cfg.Endpoint = c.URL }
}

// TestS3AssumeRole: with s3.credentials.provider.sts.role.arn, the store
// asks STS (on loopback, through AWS_ENDPOINT_URL_STS) for the role's
// credentials, signing that request with the static keys and sending the
// role ARN, session name and external id, and then signs every S3
// request with the role's temporary credentials and session token.
func TestS3AssumeRole(t *testing.T) {
	isolateAWSEnv(t)
	sts := newFakeSTS(t)
	t.Setenv("AWS_ENDPOINT_URL_STS", sts.URL)
	fake := newFake(t)
	checker := newSignatureChecker(t, fake, aws.Credentials{AccessKeyID: roleKeyID, SecretAccessKey: roleSecret, SessionToken: roleToken}, s3store.DefaultRegion)
	const arn = "arn:aws:iam::123456789012:role/archiver"
	st, bucket := fakeStore(t, fake, func(c *s3store.S3Config) {
		useChecked(checker)(c)
		c.AssumeRole = s3store.AssumeRoleConfig{RoleARN: arn, SessionName: "kafkas3-test", ExternalID: "ext-42"}
	})
	if err := st.Check(t.Context()); err != nil {
		t.Fatal(err)
	}
	if err := writeObject(t.Context(), st, "small", []byte("abc")); err != nil {
		t.Fatal(err)
	}
	if err := writeObject(t.Context(), st, "big", pattern(11<<20)); err != nil {
		t.Fatal(err)
	}
	if got, _ := fake.Object(bucket, "big"); len(got) != 11<<20 {
		t.Errorf("big object has %d bytes", len(got))
	}
	forms, auths := sts.requests()
	if len(forms) != 1 {
		t.Fatalf("%d STS requests, want 1 (credentials cached)", len(forms))
	}
	f := forms[0]
	if f.Get("Action") != "AssumeRole" || f.Get("RoleArn") != arn || f.Get("RoleSessionName") != "kafkas3-test" || f.Get("ExternalId") != "ext-42" {
		t.Errorf("AssumeRole request = %v", f)
	}
	if !strings.Contains(auths[0], "Credential="+fakeAccessKey+"/") {
		t.Errorf("AssumeRole not signed with aws.access.key.id %s: %q", fakeAccessKey, auths[0])
	}
	checker.mu.Lock()
	defer checker.mu.Unlock()
	if len(checker.bad) > 0 || checker.checked < 6 {
		t.Errorf("%d S3 requests checked; bad signatures: %v", checker.checked, checker.bad)
	}
	for _, op := range []string{s3fake.OpPutObject, s3fake.OpUploadPart, s3fake.OpCompleteMultipartUpload} {
		if tok := fake.Header(op).Get("X-Amz-Security-Token"); tok != roleToken {
			t.Errorf("%s: session token %q, want the role's", op, tok)
		}
	}
}

// TestS3AssumeRoleFromDefaultChain: without static keys the AssumeRole
// request is signed with the default chain's credentials (here the
// environment's).
func TestS3AssumeRoleFromDefaultChain(t *testing.T) {
	isolateAWSEnv(t)
	sts := newFakeSTS(t)
	t.Setenv("AWS_ENDPOINT_URL_STS", sts.URL)
	t.Setenv("AWS_ACCESS_KEY_ID", "AKIAENVIRONMENT")
	t.Setenv("AWS_SECRET_ACCESS_KEY", "env-secret")
	fake := newFake(t)
	checker := newSignatureChecker(t, fake, aws.Credentials{AccessKeyID: roleKeyID, SecretAccessKey: roleSecret, SessionToken: roleToken}, "eu-central-1")
	st, _ := fakeStore(t, fake, func(c *s3store.S3Config) {
		useChecked(checker)(c)
		c.AccessKeyID, c.SecretAccessKey, c.Region = "", "", "eu-central-1"
		c.AssumeRole = s3store.AssumeRoleConfig{RoleARN: "arn:aws:iam::123456789012:role/r", SessionName: "s"}
	})
	if err := writeObject(t.Context(), st, "o", []byte("x")); err != nil {
		t.Fatal(err)
	}
	forms, auths := sts.requests()
	if len(forms) != 1 || forms[0].Has("ExternalId") {
		t.Fatalf("STS requests %v; want one, without an external id", forms)
	}
	if !strings.Contains(auths[0], "Credential=AKIAENVIRONMENT/") || !strings.Contains(auths[0], "/eu-central-1/sts/") {
		t.Errorf("AssumeRole not signed with the environment's key for eu-central-1: %q", auths[0])
	}
	if len(checker.bad) > 0 {
		t.Errorf("bad signatures: %v", checker.bad)
	}
}

// TestS3WebIdentity: with no keys configured, the default credential
// chain takes a web identity (IRSA: AWS_WEB_IDENTITY_TOKEN_FILE and
// AWS_ROLE_ARN, as EKS sets them), exchanges the token at STS and signs
// the S3 requests with the role's credentials.
func TestS3WebIdentity(t *testing.T) {
	isolateAWSEnv(t)
	sts := newFakeSTS(t)
	token := filepath.Join(t.TempDir(), "token")
	if err := os.WriteFile(token, []byte("eyJ.web-identity.token"), 0o600); err != nil {
		t.Fatal(err)
	}
	t.Setenv("AWS_ENDPOINT_URL_STS", sts.URL)
	t.Setenv("AWS_WEB_IDENTITY_TOKEN_FILE", token)
	t.Setenv("AWS_ROLE_ARN", "arn:aws:iam::123456789012:role/irsa")
	t.Setenv("AWS_ROLE_SESSION_NAME", "pod-session")
	fake := newFake(t)
	checker := newSignatureChecker(t, fake, aws.Credentials{AccessKeyID: roleKeyID, SecretAccessKey: roleSecret, SessionToken: roleToken}, s3store.DefaultRegion)
	st, _ := fakeStore(t, fake, func(c *s3store.S3Config) {
		useChecked(checker)(c)
		c.AccessKeyID, c.SecretAccessKey = "", ""
	})
	if err := writeObject(t.Context(), st, "o", []byte("x")); err != nil {
		t.Fatal(err)
	}
	forms, _ := sts.requests()
	if len(forms) != 1 {
		t.Fatalf("%d STS requests, want 1", len(forms))
	}
	f := forms[0]
	if f.Get("Action") != "AssumeRoleWithWebIdentity" || f.Get("WebIdentityToken") != "eyJ.web-identity.token" ||
		f.Get("RoleArn") != "arn:aws:iam::123456789012:role/irsa" || f.Get("RoleSessionName") != "pod-session" {
		t.Errorf("web identity request = %v", f)
	}
	if checker.checked == 0 || len(checker.bad) > 0 {
		t.Errorf("%d requests checked, bad signatures: %v", checker.checked, checker.bad)
	}
}

// TestS3AssumeRoleFailureNamesRole: when STS refuses, Check names the role
// and where the credentials to assume it came from.
func TestS3AssumeRoleFailureNamesRole(t *testing.T) {
	isolateAWSEnv(t)
	refuse := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		_, _ = io.Copy(io.Discard, r.Body)
		w.Header().Set("Content-Type", "text/xml")
		w.WriteHeader(http.StatusForbidden)
		fmt.Fprint(w, `<ErrorResponse><Error><Type>Sender</Type><Code>AccessDenied</Code><Message>not authorized to perform sts:AssumeRole</Message></Error><RequestId>r</RequestId></ErrorResponse>`)
	}))
	t.Cleanup(refuse.Close)
	t.Setenv("AWS_ENDPOINT_URL_STS", refuse.URL)
	fake := newFake(t)
	st, _ := fakeStore(t, fake, func(c *s3store.S3Config) {
		c.PartRetries = -1
		c.AssumeRole = s3store.AssumeRoleConfig{RoleARN: "arn:aws:iam::123456789012:role/nope", SessionName: "s"}
	})
	err := st.Check(t.Context())
	if err == nil {
		t.Fatal("Check succeeded with a role STS refuses")
	}
	for _, want := range []string{"arn:aws:iam::123456789012:role/nope", "s3.credentials.provider.sts.role.arn", "aws.access.key.id", "sts:AssumeRole"} {
		if !strings.Contains(err.Error(), want) {
			t.Errorf("error lacks %q: %v", want, err)
		}
	}
}
