package s3store

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"net/url"
	"strings"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/aws/retry"
	awshttp "github.com/aws/aws-sdk-go-v2/aws/transport/http"
	"github.com/aws/aws-sdk-go-v2/credentials/stscreds"
	"github.com/aws/aws-sdk-go-v2/service/sts"
)

// AssumeRoleConfig is s3.credentials.provider.class
// AwsAssumeRoleCredentialsProvider with its keys: the store signs its
// requests with temporary credentials of RoleARN, which it gets from STS
// (AssumeRole) with the static keys when they are set, else with the
// default credential chain, and renews before they expire.
type AssumeRoleConfig struct {
	RoleARN     string // s3.credentials.provider.sts.role.arn; "" means no assumed role
	SessionName string // s3.credentials.provider.sts.role.session.name; "" lets the SDK pick one
	ExternalID  string // s3.credentials.provider.sts.role.external.id; "" sends none
	// Region is s3.credentials.provider.sts.region, the region of the STS
	// endpoint; "" means the store's region. The environment variable
	// AWS_ENDPOINT_URL_STS overrides the endpoint itself.
	Region string
}

// ProxyConfig is s3.proxy.url with s3.proxy.user and s3.proxy.password:
// an HTTP proxy for every request of the store (and for its assumed
// role's STS requests). User and Password win over a user:password@ in
// the URL.
type ProxyConfig struct {
	URL      string // s3.proxy.url: http:// or https:// URL of the proxy; "" means none
	User     string // s3.proxy.user
	Password string // s3.proxy.password
}

// proxyURL parses c into the URL the HTTP transport dials, with the
// credentials in it; nil when no proxy is set.
func (c ProxyConfig) proxyURL() (*url.URL, error) {
	if c.URL == "" {
		if c.User != "" || c.Password != "" {
			return nil, errors.New("s3.proxy.user and s3.proxy.password: need s3.proxy.url")
		}
		return nil, nil
	}
	raw := c.URL
	if !strings.Contains(raw, "://") {
		raw = "https://" + raw // as Confluent's connector reads a URL without a protocol
	}
	u, err := url.Parse(raw)
	if err != nil || u.Host == "" || (u.Scheme != "http" && u.Scheme != "https") || (u.Path != "" && u.Path != "/") {
		return nil, fmt.Errorf("s3.proxy.url %s: want an http:// or https:// URL of a proxy such as http://proxy:3128", redactedURL(c.URL))
	}
	u.Path = ""
	user, pass := c.User, c.Password
	if u.User != nil {
		if user == "" {
			user = u.User.Username()
		}
		if p, ok := u.User.Password(); ok && pass == "" {
			pass = p
		}
	}
	u.User = nil
	if user != "" || pass != "" {
		u.User = url.UserPassword(user, pass)
	}
	return u, nil
}

// redactedURL is raw with the password of its user info masked, for
// messages.
func redactedURL(raw string) string {
	u, err := url.Parse(raw)
	if err != nil || u.User == nil {
		return fmt.Sprintf("%q", raw)
	}
	if _, ok := u.User.Password(); ok {
		u.User = url.UserPassword(u.User.Username(), "xxxxx")
	}
	return fmt.Sprintf("%q", u.String())
}

// httpClient returns the HTTP client of the store's requests: base (the
// client the SDK's configuration built, which trusts AWS_CA_BUNDLE's or
// the profile's ca_bundle CAs when one is set; nil for the SDK's default)
// sending through the proxy when one is set; nil to keep the
// configuration's client (which honours HTTPS_PROXY and NO_PROXY).
func (c ProxyConfig) httpClient(base aws.HTTPClient) (aws.HTTPClient, error) {
	u, err := c.proxyURL()
	if err != nil || u == nil {
		return nil, err
	}
	b, ok := base.(*awshttp.BuildableClient)
	if base != nil && !ok {
		return nil, fmt.Errorf("s3.proxy.url: cannot set a proxy on the AWS configuration's HTTP client %T", base)
	}
	if b == nil {
		b = awshttp.NewBuildableClient()
	}
	return b.WithTransportOptions(func(tr *http.Transport) {
		tr.Proxy = http.ProxyURL(u)
	}), nil
}

// assumeRole returns the credentials of cfg.AssumeRole's role, obtained
// from STS with awsCfg's credentials (the static keys or the default
// chain), cached and renewed before they expire. STS requests go
// through hc when it is set and are retried by the SDK's standard policy.
func assumeRole(awsCfg aws.Config, cfg S3Config, hc aws.HTTPClient) aws.CredentialsProvider {
	ar := cfg.AssumeRole
	client := sts.NewFromConfig(awsCfg, func(o *sts.Options) {
		if ar.Region != "" {
			o.Region = ar.Region
		}
		if hc != nil {
			o.HTTPClient = hc
		}
		o.Retryer = retry.NewStandard()
	})
	provider := stscreds.NewAssumeRoleProvider(client, ar.RoleARN, func(o *stscreds.AssumeRoleOptions) {
		o.RoleSessionName = ar.SessionName
		if ar.ExternalID != "" {
			o.ExternalID = aws.String(ar.ExternalID)
		}
	})
	return aws.NewCredentialsCache(provider)
}

// credentialsSource describes where the credentials come from.
func (s *S3) credentialsSource(ctx context.Context) string {
	static := ""
	if s.cfg.AccessKeyID != "" {
		static = fmt.Sprintf("credentials from aws.access.key.id %q", s.cfg.AccessKeyID)
	}
	if ar := s.cfg.AssumeRole; ar.RoleARN != "" {
		from := static
		if from == "" {
			from = "the default credential chain"
		}
		what := fmt.Sprintf("role %q (s3.credentials.provider.sts.role.arn, session %q) assumed through STS with %s", ar.RoleARN, ar.SessionName, from)
		if _, err := s.creds.Retrieve(ctx); err != nil {
			return fmt.Sprintf("no credentials of %s (%v)", what, err)
		}
		return "credentials of " + what
	}
	if static != "" {
		return static
	}
	c, err := s.creds.Retrieve(ctx)
	if err != nil {
		return fmt.Sprintf("no credentials from the default credential chain (%v)", err)
	}
	return fmt.Sprintf("credentials from the default credential chain (%s, access key %q)", c.Source, c.AccessKeyID)
}

// Validate checks c as NewS3 does; its errors name s3.proxy.url.
func (c ProxyConfig) Validate() error {
	_, err := c.proxyURL()
	return err
}
