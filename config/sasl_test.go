package config

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/jcmturner/gokrb5/v8/iana/etypeID"
	"github.com/jcmturner/gokrb5/v8/keytab"
	"github.com/kafkas3/kafkas3/internal/saslfake"
)

// saslProblems loads minimalYAML with params for both commands and
// returns each command's error text ("" without one) and client options.
func saslProblems(t *testing.T, params ...string) map[Command]string {
	t.Helper()
	out := map[Command]string{}
	for _, cmd := range []Command{Sink, Source} {
		st, err := Load(Input{Command: cmd, ConfigFile: writeFile(t, "c.yaml", minimalYAML), Params: params})
		if err == nil {
			if cmd == Sink {
				var c *SinkConfig
				if c, err = st.Sink(nil); err == nil && len(c.Archive.KafkaOpts) == 0 {
					t.Errorf("%v: sink has no SASL client option", params)
				}
			} else {
				var c *SourceConfig
				if c, err = st.Source(nil); err == nil && len(c.Restore.KafkaOpts) == 0 {
					t.Errorf("%v: source has no SASL client option", params)
				}
			}
		}
		if err != nil {
			out[cmd] = err.Error()
		}
	}
	return out
}

// gssapiFiles writes a keytab of kafkas3@TEST.REALM and a krb5.conf.
func gssapiFiles(t *testing.T) (kt, conf string) {
	t.Helper()
	dir := t.TempDir()
	k := keytab.New()
	if err := k.AddEntry("kafkas3", "TEST.REALM", "pw", time.Now(), 1, etypeID.AES256_CTS_HMAC_SHA1_96); err != nil {
		t.Fatal(err)
	}
	b, err := k.Marshal()
	if err != nil {
		t.Fatal(err)
	}
	kt, conf = filepath.Join(dir, "c.keytab"), filepath.Join(dir, "krb5.conf")
	if err := os.WriteFile(kt, b, 0o600); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(conf, []byte("[libdefaults]\n default_realm = TEST.REALM\n[realms]\n TEST.REALM = {\n  kdc = 127.0.0.1:1\n }\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	return kt, conf
}

// TestSASLMechanismsLoad: each mechanism in each of its forms loads for
// sink and source and gives the client a SASL option.
func TestSASLMechanismsLoad(t *testing.T) {
	iss, err := saslfake.NewIssuer()
	if err != nil {
		t.Fatal(err)
	}
	tok, err := iss.Token("svc", time.Now(), time.Now().Add(time.Hour))
	if err != nil {
		t.Fatal(err)
	}
	tokFile := writeFile(t, "token.jwt", tok)
	kt, conf := gssapiFiles(t)
	t.Setenv("AWS_CONFIG_FILE", filepath.Join(t.TempDir(), "none"))
	t.Setenv("AWS_SHARED_CREDENTIALS_FILE", filepath.Join(t.TempDir(), "none"))
	sasl := []string{"security.protocol=SASL_SSL"}
	for name, params := range map[string][]string{
		"plain keys": {"sasl.mechanism=PLAIN", "sasl.username=u", "sasl.password=p"},
		"plain jaas": {"sasl.mechanism=PLAIN", `sasl.jaas.config=org.apache.kafka.common.security.plain.PlainLoginModule required username="u" password="p";`},
		"scram jaas": {"sasl.mechanism=SCRAM-SHA-512", `sasl.jaas.config=org.apache.kafka.common.security.scram.ScramLoginModule required username="u" password="p";`},
		"token file": {"sasl.mechanism=OAUTHBEARER", "sasl.oauthbearer.token.endpoint.url=file://" + tokFile},
		"token file, claim names": {"sasl.mechanism=OAUTHBEARER", "sasl.oauthbearer.token.endpoint.url=file:" + tokFile,
			"sasl.oauthbearer.sub.claim.name=client_id", "sasl.oauthbearer.scope.claim.name=scp"},
		"oidc keys":   {"sasl.mechanism=OAUTHBEARER", "sasl.oauthbearer.token.endpoint.url=https://idp.example.com/token", "sasl.oauthbearer.client.credentials.client.id=id", "sasl.oauthbearer.client.credentials.client.secret=s", "sasl.oauthbearer.scope=kafka", "sasl.login.callback.handler.class=org.apache.kafka.common.security.oauthbearer.OAuthBearerLoginCallbackHandler"},
		"oidc jaas":   {"sasl.mechanism=OAUTHBEARER", "sasl.oauthbearer.token.endpoint.url=https://idp.example.com/token", `sasl.jaas.config=org.apache.kafka.common.security.oauthbearer.OAuthBearerLoginModule required clientId="id" clientSecret="s" scope="kafka" extension_logicalCluster="lkc-1";`},
		"msk":         {"sasl.mechanism=AWS_MSK_IAM", "sasl.jaas.config=software.amazon.msk.auth.iam.IAMLoginModule required;", "sasl.client.callback.handler.class=software.amazon.msk.auth.iam.IAMClientCallbackHandler"},
		"gssapi keys": {"sasl.mechanism=GSSAPI", "sasl.kerberos.service.name=kafka", "kafkas3.krb5.conf=" + conf, `sasl.jaas.config=com.sun.security.auth.module.Krb5LoginModule required useKeyTab=true storeKey=true keyTab="` + kt + `" principal="kafkas3@TEST.REALM";`},
		"gssapi jaas": {"sasl.mechanism=GSSAPI", "kafkas3.krb5.conf=" + conf, `sasl.jaas.config=com.sun.security.auth.module.Krb5LoginModule required useKeyTab=true keyTab="` + kt + `" principal="kafkas3" serviceName="kafka";`},
	} {
		for cmd, err := range saslProblems(t, append(sasl, params...)...) {
			t.Errorf("%s, %s: %s", name, cmd, err)
		}
	}
}

// TestSASLProblems: each misconfiguration is exactly the one problem
// named here (never also a contradictory "required key is not set"),
// for sink and source alike, and no problem shows a secret.
func TestSASLProblems(t *testing.T) {
	const secret = "Hunter2Secret"
	kt, conf := gssapiFiles(t)
	jaasKrb := func(opts string) string {
		return "sasl.jaas.config=com.sun.security.auth.module.Krb5LoginModule required " + opts + ";"
	}
	oidc := []string{"sasl.mechanism=OAUTHBEARER", "sasl.oauthbearer.token.endpoint.url=https://idp.example.com/token"}
	gss := []string{"sasl.mechanism=GSSAPI", "sasl.kerberos.service.name=kafka", "kafkas3.krb5.conf=" + conf}
	cases := []struct {
		name   string
		params []string
		want   string
	}{
		{"unknown mechanism", []string{"sasl.mechanism=NTLM"},
			`sasl.mechanism: "NTLM" is not allowed; want one of PLAIN, SCRAM-SHA-256, SCRAM-SHA-512, OAUTHBEARER, AWS_MSK_IAM, GSSAPI (from -p sasl.mechanism)`},
		{"oauth without url", []string{"sasl.mechanism=OAUTHBEARER"},
			"sasl.oauthbearer.token.endpoint.url: required key is not set (sasl.mechanism is OAUTHBEARER; a file:/path of a token file or the http(s) URL of the OAuth token endpoint)"},
		{"oauth bad url", []string{"sasl.mechanism=OAUTHBEARER", "sasl.oauthbearer.token.endpoint.url=idp.example.com"},
			`sasl.oauthbearer.token.endpoint.url: "idp.example.com" is neither a file: URL nor an http(s) URL; want file:/path/to/token or https://idp.example.com/oauth2/token (from -p sasl.oauthbearer.token.endpoint.url)`},
		{"oauth missing file", []string{"sasl.mechanism=OAUTHBEARER", "sasl.oauthbearer.token.endpoint.url=file:/nonexistent/token"},
			`sasl.oauthbearer.token.endpoint.url: "file:/nonexistent/token" names a token file that cannot be read (stat /nonexistent/token: no such file or directory) (from -p sasl.oauthbearer.token.endpoint.url)`},
		{"oidc without secret", append(oidc, "sasl.oauthbearer.client.credentials.client.id=id"),
			"sasl.oauthbearer.client.credentials.client.secret: required key is not set (sasl.oauthbearer.token.endpoint.url is a token endpoint; or set sasl.jaas.config's clientSecret)"},
		{"oidc both forms", append(oidc, "sasl.oauthbearer.client.credentials.client.id=id", "sasl.oauthbearer.client.credentials.client.secret="+secret,
			`sasl.jaas.config=org.apache.kafka.common.security.oauthbearer.OAuthBearerLoginModule required clientSecret="`+secret+`";`),
			"sasl.oauthbearer.client.credentials.client.secret: the value is set together with sasl.jaas.config's clientSecret; set one of them (from -p sasl.oauthbearer.client.credentials.client.secret)"},
		{"token file with secret", []string{"sasl.mechanism=OAUTHBEARER", "sasl.oauthbearer.token.endpoint.url=file:" + kt, "sasl.oauthbearer.client.credentials.client.secret=" + secret},
			"sasl.oauthbearer.client.credentials.client.secret: the value is not used with a token file (sasl.oauthbearer.token.endpoint.url is a file: URL); remove it (from -p sasl.oauthbearer.client.credentials.client.secret)"},
		{"wrong module", append(oidc, `sasl.jaas.config=org.apache.kafka.common.security.plain.PlainLoginModule required username="u" password="`+secret+`";`),
			"sasl.jaas.config: the value names the login module org.apache.kafka.common.security.plain.PlainLoginModule; sasl.mechanism OAUTHBEARER takes org.apache.kafka.common.security.oauthbearer.OAuthBearerLoginModule (from -p sasl.jaas.config)"},
		{"unknown option", []string{"sasl.mechanism=AWS_MSK_IAM", `sasl.jaas.config=software.amazon.msk.auth.iam.IAMLoginModule required awsRoleAccessKeyId="AK" awsRoleSecretAccessKey="` + secret + `";`},
			"sasl.jaas.config: the value has the option(s) awsRoleAccessKeyId, awsRoleSecretAccessKey, which kafkas3 does not understand for software.amazon.msk.auth.iam.IAMLoginModule; it reads awsProfileName, awsRoleArn, awsRoleSessionName, awsRoleExternalId, awsStsRegion, awsDebugCreds, awsMaxRetries, awsMaxBackOffTimeMs (from -p sasl.jaas.config)"},
		{"plain missing password", []string{"sasl.mechanism=PLAIN", "sasl.jaas.config=org.apache.kafka.common.security.plain.PlainLoginModule required username=u;"},
			"sasl.password: required key is not set (sasl.mechanism is PLAIN; or set sasl.jaas.config's password)"},
		{"foreign key", []string{"sasl.mechanism=AWS_MSK_IAM", "sasl.username=u"},
			`sasl.username: "u" belongs to sasl.mechanism PLAIN or SCRAM-SHA-256 or SCRAM-SHA-512, not AWS_MSK_IAM; remove it (from -p sasl.username)`},
		{"gssapi without jaas", gss,
			`sasl.jaas.config: required key is not set (sasl.mechanism is GSSAPI; kafkas3 logs in with a keytab: com.sun.security.auth.module.Krb5LoginModule required useKeyTab=true keyTab="/path/to/client.keytab" principal="name@REALM";)`},
		{"gssapi ticket cache", append(gss, jaasKrb("useTicketCache=true")),
			`sasl.jaas.config: the value sets useTicketCache=true; kafkas3 logs in with a keytab only: com.sun.security.auth.module.Krb5LoginModule required useKeyTab=true keyTab="/path/to/client.keytab" principal="name@REALM"; (from -p sasl.jaas.config)`},
		{"gssapi no service", []string{"sasl.mechanism=GSSAPI", "kafkas3.krb5.conf=" + conf, jaasKrb(`useKeyTab=true keyTab="` + kt + `" principal="kafkas3"`)},
			"sasl.kerberos.service.name: required key is not set (sasl.mechanism is GSSAPI; the brokers' Kerberos service name, usually kafka; or set sasl.jaas.config's serviceName)"},
		{"gssapi bad keytab", append(gss, jaasKrb(`useKeyTab=true keyTab="`+conf+`" principal="kafkas3"`)),
			"sasl.jaas.config: the value names the keyTab " + conf + ", which is not a readable keytab"},
		{"gssapi unknown principal", append(gss, jaasKrb(`useKeyTab=true keyTab="`+kt+`" principal="bob@TEST.REALM"`)),
			"sasl.jaas.config: the value names the principal bob@TEST.REALM, which has no key in the keytab (looked for bob@TEST.REALM) (keyTab " + kt + ") (from -p sasl.jaas.config)"},
		{"gssapi no krb5.conf", []string{"sasl.mechanism=GSSAPI", "sasl.kerberos.service.name=kafka", "kafkas3.krb5.conf=/nonexistent/krb5.conf", jaasKrb(`useKeyTab=true keyTab="` + kt + `" principal="kafkas3"`)},
			`kafkas3.krb5.conf: "/nonexistent/krb5.conf" is not a readable krb5.conf (open /nonexistent/krb5.conf: no such file or directory); GSSAPI needs one (from -p kafkas3.krb5.conf)`},
	}
	for _, tc := range cases {
		got := saslProblems(t, append([]string{"security.protocol=SASL_SSL"}, tc.params...)...)
		for _, cmd := range []Command{Sink, Source} {
			err := got[cmd]
			if !strings.HasPrefix(err, tc.want) || strings.Contains(err, "configuration problems") {
				t.Errorf("%s, %s: error\n%s\nwant exactly\n%s", tc.name, cmd, err, tc.want)
			}
			if strings.Contains(err, secret) {
				t.Errorf("%s, %s: the error shows the secret: %s", tc.name, cmd, err)
			}
		}
	}
}

// TestOAuthShortNames: the short names of the client credentials keys
// (sasl.oauthbearer.client.id and .client.secret, not Kafka's) set Kafka's
// keys; the secret stays masked; both names with different values in one
// layer is one problem naming both, without the secret.
func TestOAuthShortNames(t *testing.T) {
	st, err := Load(Input{Command: Sink, ConfigFile: writeFile(t, "c.yaml", minimalYAML),
		Params: []string{"sasl.oauthbearer.client.id=id-1", "sasl.oauthbearer.client.secret=Hunter2Secret"}})
	if err != nil {
		t.Fatal(err)
	}
	k := NewKeys()
	if v, _ := st.Get(k.SASLOAuthClientID); v != "id-1" {
		t.Errorf("%s = %q, want id-1", k.SASLOAuthClientID.Name, v)
	}
	if v, _ := st.Get(k.SASLOAuthClientSecret); v != "Hunter2Secret" {
		t.Errorf("%s not set from its short name", k.SASLOAuthClientSecret.Name)
	}
	for _, s := range st.Effective() {
		if strings.Contains(s.Value, "Hunter2Secret") {
			t.Errorf("kafkas3 config shows the secret under %s", s.Key)
		}
	}
	err = sinkErr(t, minimalYAML, "sasl.oauthbearer.client.credentials.client.secret=One1Secret", "sasl.oauthbearer.client.secret=Hunter2Secret")
	want := "sasl.oauthbearer.client.secret: is another name for sasl.oauthbearer.client.credentials.client.secret, which is also set, to another value"
	if err == nil || !strings.Contains(err.Error(), want) {
		t.Errorf("error %v\nlacks %s", err, want)
	}
	if err != nil && (strings.Contains(err.Error(), "Hunter2Secret") || strings.Contains(err.Error(), "One1Secret")) {
		t.Errorf("the error shows a secret: %v", err)
	}
	if err := sinkErr(t, minimalYAML, "sasl.oauthbearer.client.id=a", "sasl.oauthbearer.client.credentials.client.id=a"); err != nil && strings.Contains(err.Error(), "another name") {
		t.Errorf("the same value under both names is a problem: %v", err)
	}
}

// TestSecurityOverridesRefused: Connect's per-connector overrides of the
// security keys are refused naming the key to set (never silently
// ignored), other overrides stay ignored, and `kafkas3 config` masks the
// values of credential-looking keys of ignored families.
func TestSecurityOverridesRefused(t *testing.T) {
	err := sinkErr(t, minimalYAML, "producer.override.security.protocol=SSL", "consumer.override.sasl.password=Hunter2Secret",
		"consumer.override.max.poll.records=10")
	want := "2 configuration problems:\n" +
		"  consumer.override.sasl.password: is a Kafka Connect per-connector override, which kafkas3 does not apply (its Kafka clients would connect without it); set sasl.password instead (from -p consumer.override.sasl.password)\n" +
		"  producer.override.security.protocol: is a Kafka Connect per-connector override, which kafkas3 does not apply (its Kafka clients would connect without it); set security.protocol instead (from -p producer.override.security.protocol)"
	if err == nil || err.Error() != want {
		t.Errorf("error\n%v\nwant\n%s", err, want)
	}
	st, err := Load(Input{Command: Sink, ConfigFile: writeFile(t, "c.yaml", minimalYAML),
		Params: []string{"value.converter.schema.registry.ssl.key.password=Hunter2Secret", "consumer.override.max.poll.records=10"}})
	if err != nil {
		t.Fatal(err)
	}
	for _, s := range st.Effective() {
		switch s.Key {
		case "value.converter.schema.registry.ssl.key.password":
			if s.Value != Masked || !s.Secret {
				t.Errorf("%s shown as %q", s.Key, s.Value)
			}
		case "consumer.override.max.poll.records":
			if s.Value != "10" || s.Secret {
				t.Errorf("%s shown as %q", s.Key, s.Value)
			}
		}
	}
}
