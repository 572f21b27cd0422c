package config

import (
	"regexp"
	"strings"

	"github.com/kafkas3/kafkas3/archive"
	"github.com/kafkas3/kafkas3/s3store"
)

// The S3 options beyond the bucket: the credentials provider and its
// assumed role, the proxy, and the sink's object tagging.

// Shapes of the assumed role's keys, as IAM and STS accept them.
var (
	roleARNPattern     = regexp.MustCompile(`^arn:aws[a-zA-Z-]*:iam::\d{12}:role/[\w+=,.@/-]{1,512}$`)
	sessionNamePattern = regexp.MustCompile(`^[\w+=,.@-]{2,64}$`)
)

// maxExtraTags is how many s3.object.tagging.key.value.pairs fit beside
// the three offset tags in S3's 10 tags per object.
const maxExtraTags = 7

// s3Credentials reads s3.credentials.provider.class and, for
// AwsAssumeRoleCredentialsProvider, its sts.* keys into o (the rule
// assume-role-keys reports keys set without the class).
func (p *valueParser) s3Credentials(o *s3store.S3Config) {
	k := p.k
	arn, session := p.str(k.S3STSRoleARN), p.str(k.S3STSRoleSessionName)
	if arn != "" && !roleARNPattern.MatchString(arn) {
		p.fail(k.S3STSRoleARN, arn, "is not an IAM role ARN; want arn:aws:iam::<12-digit account>:role/<name>")
	}
	if session != "" && !sessionNamePattern.MatchString(session) {
		p.fail(k.S3STSRoleSessionName, session, "is not a role session name; want 2 to 64 letters, digits and =,.@_-")
	}
	if p.choice(k.S3CredentialsProviderClass) == "assume-role" {
		o.AssumeRole = s3store.AssumeRoleConfig{RoleARN: arn, SessionName: session,
			ExternalID: p.str(k.S3STSRoleExternalID), Region: p.str(k.S3STSRegion)}
	}
}

// s3Proxy reads s3.proxy.url, s3.proxy.user and s3.proxy.password.
func (p *valueParser) s3Proxy() s3store.ProxyConfig {
	k := p.k
	c := s3store.ProxyConfig{URL: p.str(k.S3ProxyURL), User: p.str(k.S3ProxyUser), Password: p.str(k.S3ProxyPassword)}
	if c.URL != "" {
		if err := (s3store.ProxyConfig{URL: c.URL}).Validate(); err != nil {
			p.fail(k.S3ProxyURL, c.URL, "is not a proxy URL; want http://host:port or https://host:port (user:password@ allowed), without a path")
			c.URL = ""
		}
	}
	return c
}

// tagging reads s3.object.tagging, its extra pairs and its error
// behaviour.
func (p *valueParser) tagging() archive.TaggingConfig {
	k := p.k
	t := archive.TaggingConfig{Enabled: p.bool(k.S3ObjectTagging), FailOnError: p.choice(k.S3ObjectTaggingOnError) == "fail"}
	pairs := p.list(k.S3ObjectTaggingPairs)
	if len(pairs) > maxExtraTags {
		p.fail(k.S3ObjectTaggingPairs, p.raw(k.S3ObjectTaggingPairs), "has more than 7 pairs; S3 allows 10 tags per object and the sink writes 3")
		return t
	}
	for _, pair := range pairs {
		key, value, ok := strings.Cut(pair, ":")
		key, value = strings.TrimSpace(key), strings.TrimSpace(value)
		switch {
		case !ok || key == "":
			p.fail(k.S3ObjectTaggingPairs, pair, "is not a key:value pair")
		case key == archive.TagStartOffset || key == archive.TagEndOffset || key == archive.TagRecordCount:
			p.fail(k.S3ObjectTaggingPairs, pair, "would replace the sink's own tag "+key)
		case len(key) > 128 || len(value) > 256:
			p.fail(k.S3ObjectTaggingPairs, pair, "is too long; S3 allows tag keys of 128 and values of 256 characters")
		default:
			if t.Extra == nil {
				t.Extra = map[string]string{}
			}
			t.Extra[key] = value
		}
	}
	return t
}

// assumeRoleKeys checks that the credentials provider class and its
// sts.* keys go together: AwsAssumeRoleCredentialsProvider needs the role
// ARN, and the sts.* keys do nothing without that class (Confluent's
// connector ignores them; kafkas3 says so rather than sign as another
// identity than the one configured).
func (p *valueParser) assumeRoleKeys() {
	k := p.k
	class := k.S3CredentialsProviderClass
	if !p.ok(class) {
		return
	}
	if p.choice(class) == "assume-role" {
		if p.str(k.S3STSRoleARN) == "" {
			p.missing(k.S3STSRoleARN, "s3.credentials.provider.class is "+p.raw(class))
		}
		return
	}
	for _, h := range []StringKey{k.S3STSRoleARN, k.S3STSRoleSessionName, k.S3STSRoleExternalID, k.S3STSRegion} {
		if v := p.str(h); v != "" {
			p.fail(h, v, "is set, but s3.credentials.provider.class is not io.confluent.connect.s3.auth.AwsAssumeRoleCredentialsProvider, so no role would be assumed; set that class")
		}
	}
}
