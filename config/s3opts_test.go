package config

import (
	"maps"
	"strings"
	"testing"
	"time"

	"github.com/kafkas3/kafkas3/s3store"
)

// sinkWith loads minimalYAML with params for the sink.
func sinkWith(t *testing.T, params ...string) *SinkConfig {
	t.Helper()
	st, err := Load(Input{Command: Sink, ConfigFile: writeFile(t, "c.yaml", minimalYAML), LookupEnv: envMap(nil), Params: params})
	if err != nil {
		t.Fatal(err)
	}
	c, err := st.Sink(nil)
	if err != nil {
		t.Fatal(err)
	}
	return c
}

// TestS3AssumeRoleKeys: Confluent's AwsAssumeRoleCredentialsProvider and
// its sts.* keys reach the store's config, for the sink and the source.
func TestS3AssumeRoleKeys(t *testing.T) {
	params := []string{"s3.credentials.provider.class=io.confluent.connect.s3.auth.AwsAssumeRoleCredentialsProvider",
		"s3.credentials.provider.sts.role.arn=arn:aws:iam::123456789012:role/archiver",
		"s3.credentials.provider.sts.role.session.name=kafkas3-prod", "s3.credentials.provider.sts.role.external.id=ext-1",
		"s3.credentials.provider.sts.region=eu-west-1", "aws.access.key.id=AKIA1", "aws.secret.access.key=s3cret"}
	want := s3store.AssumeRoleConfig{RoleARN: "arn:aws:iam::123456789012:role/archiver", SessionName: "kafkas3-prod", ExternalID: "ext-1", Region: "eu-west-1"}
	if got := sinkWith(t, params...).Store.S3.AssumeRole; got != want {
		t.Errorf("sink: %+v, want %+v", got, want)
	}
	st, err := Load(Input{Command: Source, ConfigFile: writeFile(t, "c.yaml", minimalYAML), LookupEnv: envMap(nil), Params: params})
	if err != nil {
		t.Fatal(err)
	}
	src, err := st.Source(nil)
	if err != nil {
		t.Fatal(err)
	}
	if got := src.Store.S3.AssumeRole; got != want {
		t.Errorf("source: %+v, want %+v", got, want)
	}
	if got := sinkWith(t).Store.S3.AssumeRole; got != (s3store.AssumeRoleConfig{}) {
		t.Errorf("default class assumes %+v", got)
	}
}

// TestS3OptionProblems: each wrong combination or value of the new S3
// keys is one problem naming the key.
func TestS3OptionProblems(t *testing.T) {
	cases := []struct {
		params []string
		want   string
	}{
		{[]string{"s3.credentials.provider.sts.role.arn=arn:aws:iam::123456789012:role/r"},
			"s3.credentials.provider.sts.role.arn: \"arn:aws:iam::123456789012:role/r\" is set, but s3.credentials.provider.class is not io.confluent.connect.s3.auth.AwsAssumeRoleCredentialsProvider"},
		{[]string{"s3.credentials.provider.class=AwsAssumeRoleCredentialsProvider", "s3.credentials.provider.sts.role.arn=role/r"},
			"s3.credentials.provider.sts.role.arn: \"role/r\" is not an IAM role ARN"},
		{[]string{"s3.credentials.provider.class=AwsAssumeRoleCredentialsProvider", "s3.credentials.provider.sts.role.arn=arn:aws:iam::123456789012:role/r",
			"s3.credentials.provider.sts.role.session.name=has space"}, "s3.credentials.provider.sts.role.session.name: \"has space\" is not a role session name"},
		{[]string{"s3.proxy.url=ftp://proxy:21"}, "s3.proxy.url: \"ftp://proxy:21\" is not a proxy URL"},
		{[]string{"s3.proxy.user=u"}, "s3.proxy.url: required key is not set (s3.proxy.user is set)"},
		{[]string{"s3.object.tagging=true", "store.local.dir=/tmp/x"}, "s3.object.tagging: \"true\" needs the S3 store"},
		{[]string{"s3.object.tagging.key.value.pairs=a:b"}, "s3.object.tagging.key.value.pairs: \"a:b\" is set, but s3.object.tagging is false"},
		{[]string{"s3.object.tagging=true", "s3.object.tagging.key.value.pairs=recordCount:1"}, "would replace the sink's own tag recordCount"},
		{[]string{"s3.object.tagging=true", "s3.object.tagging.key.value.pairs=novalue"}, "\"novalue\" is not a key:value pair"},
		{[]string{"s3.object.tagging=true", "s3.object.tagging.key.value.pairs=a:1,b:2,c:3,d:4,e:5,f:6,g:7,h:8"}, "has more than 7 pairs"},
		{[]string{"s3.object.behavior.on.tagging.error=retry"}, "s3.object.behavior.on.tagging.error: \"retry\" is not allowed"},
	}
	for _, tc := range cases {
		err := sinkErr(t, minimalYAML, tc.params...)
		if err == nil || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("%v:\n got %v\nwant %s", tc.params, err, tc.want)
			continue
		}
		if strings.Contains(err.Error(), "problems:") {
			t.Errorf("%v: more than one problem: %v", tc.params, err)
		}
	}
}

// TestS3ProxyAndTaggingKeys: the proxy and tagging keys reach the store's
// and the archive's config.
func TestS3ProxyAndTaggingKeys(t *testing.T) {
	c := sinkWith(t, "s3.proxy.url=http://proxy.internal:3128", "s3.proxy.user=u", "s3.proxy.password=pw",
		"s3.object.tagging=true", "s3.object.tagging.key.value.pairs=team:data, url:http://x", "s3.object.behavior.on.tagging.error=fail")
	if p := c.Store.S3.Proxy; p != (s3store.ProxyConfig{URL: "http://proxy.internal:3128", User: "u", Password: "pw"}) {
		t.Errorf("proxy %+v", p)
	}
	tg := c.Archive.Tagging
	if !tg.Enabled || !tg.FailOnError || !maps.Equal(tg.Extra, map[string]string{"team": "data", "url": "http://x"}) {
		t.Errorf("tagging %+v", tg)
	}
	if tg := sinkWith(t).Archive.Tagging; tg.Enabled || tg.FailOnError || tg.Extra != nil {
		t.Errorf("default tagging %+v", tg)
	}
}

// TestS3StorageClassAndObjectLockKeys: s3.storage.class,
// s3.object.lock.mode and s3.object.lock.retain.days reach the store's
// config; unset they leave it empty.
func TestS3StorageClassAndObjectLockKeys(t *testing.T) {
	c := sinkWith(t, "s3.storage.class=GLACIER_IR", "s3.object.lock.mode=COMPLIANCE", "s3.object.lock.retain.days=30", "s3.object.lock.rewrite=new-version")
	s := c.Store.S3
	if s.StorageClass != "GLACIER_IR" || s.ObjectLockMode != "COMPLIANCE" || s.ObjectLockRetain != 30*24*time.Hour || !s.RewriteNewVersion {
		t.Errorf("storage class %q, lock mode %q, retain %v", s.StorageClass, s.ObjectLockMode, s.ObjectLockRetain)
	}
	d := sinkWith(t).Store.S3
	if d.StorageClass != "" || d.ObjectLockMode != "" || d.ObjectLockRetain != 0 || d.RewriteNewVersion {
		t.Errorf("defaults: storage class %q, lock mode %q, retain %v", d.StorageClass, d.ObjectLockMode, d.ObjectLockRetain)
	}
}

// TestS3StorageClassAndObjectLockProblems: a wrong value or a lone key of
// the pair is one problem naming the key.
func TestS3StorageClassAndObjectLockProblems(t *testing.T) {
	cases := []struct {
		params []string
		want   string
	}{
		{[]string{"s3.storage.class=COLD"}, "s3.storage.class: \"COLD\" is not allowed"},
		{[]string{"s3.object.lock.mode=FOREVER", "s3.object.lock.retain.days=1"}, "s3.object.lock.mode: \"FOREVER\" is not allowed"},
		{[]string{"s3.object.lock.mode=GOVERNANCE"}, "s3.object.lock.retain.days: required key is not set (s3.object.lock.mode is set)"},
		{[]string{"s3.object.lock.retain.days=7"}, "s3.object.lock.mode: required key is not set (s3.object.lock.retain.days is set)"},
		{[]string{"s3.object.lock.mode=GOVERNANCE", "s3.object.lock.retain.days=-1"}, "s3.object.lock.retain.days"},
		{[]string{"s3.object.lock.rewrite=overwrite"}, "s3.object.lock.rewrite: \"overwrite\" is not allowed"},
	}
	for _, tc := range cases {
		err := sinkErr(t, minimalYAML, tc.params...)
		if err == nil || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("%v:\n got %v\nwant %s", tc.params, err, tc.want)
			continue
		}
		if strings.Contains(err.Error(), "problems:") {
			t.Errorf("%v: more than one problem: %v", tc.params, err)
		}
	}
}
