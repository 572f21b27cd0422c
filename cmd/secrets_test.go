package cmd

import (
	"encoding/base64"
	"strings"
	"testing"

	"github.com/kafkas3/kafkas3/config"
)

// The secrets of TestSecretsNeverReachOutput: each is the value of a key
// declared secret, or the password of a URL.
const (
	secretPassword = "Hunter2Secret"
	secretAWS      = "wJalrXUtnFEMIK7MDENGbPxRfiCYSECRETKEY"
	secretUserInfo = "RegistryPassw0rd"
	secretURL      = "UrlPassw0rd"
	secretOAuth    = "OAuthClientS3cret"
	secretFamily   = "FamilyKeyst0rePass"
)

// secretKeys sets every secret key (and a registry URL with a password)
// without changing what a local, plaintext sink or source does.
func secretKeys() string {
	customer := base64.StdEncoding.EncodeToString([]byte(strings.Repeat("k", 32)))
	return "sasl.password: " + secretPassword + "\n" +
		"aws.access.key.id: AKIDEXAMPLE\naws.secret.access.key: " + secretAWS + "\n" +
		"s3.sse.customer.key: " + customer + "\n" +
		"value.converter.basic.auth.user.info: user:" + secretUserInfo + "\n" +
		"key.converter.schema.registry.url: http://user:" + secretURL + "@registry:8081\n" +
		"sasl.oauthbearer.client.credentials.client.secret: " + secretOAuth + "\n" +
		"ssl.truststore.password: " + secretPassword + "\nssl.keystore.password: " + secretPassword + "\nssl.key.password: " + secretPassword + "\n" +
		"key.converter.basic.auth.user.info: user:" + secretUserInfo + "\n" +
		"s3.proxy.url: http://proxyuser:" + secretURL + "@proxy.invalid:3128\n" +
		"value.converter.schema.registry.ssl.keystore.password: " + secretFamily + "\n"
}

// TestSecretKeysAllCovered: every key declared secret is set, with a
// secret value, by TestSecretsNeverReachOutput: in secretKeys, or (a key
// that cannot be set without changing the run) in its bad config.
func TestSecretKeysAllCovered(t *testing.T) {
	covered := secretKeys() + badSecretsYAML()
	for _, s := range config.NewKeys().All() {
		if s.Secret && !strings.Contains(covered, s.Name+": ") {
			t.Errorf("secret key %s is not set by TestSecretsNeverReachOutput", s.Name)
		}
	}
}

// badSecretsYAML sets secret keys to bad values (beside other problems).
func badSecretsYAML() string {
	return "security.protocol: SASL_PLAINTEXT\nsasl.mechanism: PLAIN\nsasl.password: " + secretPassword + "\n" +
		"s3.sse.customer.key: " + secretAWS + "\n" +
		"value.converter.basic.auth.user.info: " + secretUserInfo + "\n" +
		"value.converter.schema.registry.url: ftp://user:" + secretURL + "@registry\n" +
		"sasl.jaas.config: password=\"" + secretPassword + "\";\n" +
		"s3.proxy.password: " + secretPassword + "\n" +
		"consumer.override.sasl.jaas.config: org.apache.kafka.common.security.plain.PlainLoginModule required password=\"" + secretFamily + "\";\n"
}

// checkNoSecret fails when r's output holds any secret.
func checkNoSecret(t *testing.T, what string, r cliResult, more ...string) {
	t.Helper()
	customer := base64.StdEncoding.EncodeToString([]byte(strings.Repeat("k", 32)))
	for _, s := range append([]string{secretPassword, secretAWS, secretUserInfo, secretURL, secretOAuth, secretFamily, customer}, more...) {
		if strings.Contains(r.out, s) || strings.Contains(r.err, s) {
			t.Errorf("%s: output shows the secret %q:\nstdout:\n%s\nstderr:\n%s", what, s, r.out, r.err)
		}
	}
}

// TestSecretsNeverReachOutput: values of secret keys appear in no output
// of a sink and a source run at debug level, of kafkas3 config, of
// config-keys, and of errors: bad values, other problems of the same
// config, and malformed -p arguments.
func TestSecretsNeverReachOutput(t *testing.T) {
	ctx := cliContext(t)
	brokers := startKafka(t, 1, "orders")
	produceJSON(t, ctx, brokers, "orders", 1, 4)
	dir := t.TempDir()
	cfg := writeFile(t, "sink.yaml", sinkYAML(brokers, dir, "orders", 2)+secretKeys())

	r := mustRun(t, ctx, ExitOK, "sink", "-c", cfg, "--once", "--log-level", "debug")
	checkNoSecret(t, "sink --log-level debug", r)
	if !strings.Contains(r.err, "level=DEBUG") {
		t.Errorf("the sink logged nothing at debug level:\n%s", r.err)
	}
	r = mustRun(t, ctx, ExitOK, "source", "-c", cfg, "--dry-run", "--topic-rename", "copy_of_$0", "--log-level", "debug")
	checkNoSecret(t, "source --dry-run --log-level debug", r)

	r = mustRun(t, ctx, ExitOK, "verify", "-c", cfg, "--deep", "--log-level", "debug")
	checkNoSecret(t, "verify --deep --log-level debug", r)
	r = mustRun(t, ctx, ExitOK, "config", "-c", cfg, "--log-level", "debug")
	checkNoSecret(t, "config", r)
	for _, want := range []string{"sasl.password", "aws.secret.access.key", "s3.sse.customer.key", "value.converter.basic.auth.user.info", "sasl.oauthbearer.client.credentials.client.secret",
		"value.converter.schema.registry.ssl.keystore.password"} {
		if !strings.Contains(r.out, want+" ") || !strings.Contains(r.out, "********") {
			t.Errorf("config does not list %s as masked:\n%s", want, r.out)
		}
	}
	if !strings.Contains(r.out, "http://user:xxxxx@registry:8081") {
		t.Errorf("config does not show the registry URL with its password replaced:\n%s", r.out)
	}
	r = mustRun(t, ctx, ExitOK, "config", "-c", cfg, "source")
	checkNoSecret(t, "config source", r)
	r = mustRun(t, ctx, ExitOK, "config-keys")
	checkNoSecret(t, "config-keys", r)

	// Bad values of secret keys, beside other problems, at debug level.
	bad := writeFile(t, "bad.yaml", sinkYAML(brokers, dir, "orders", 2)+badSecretsYAML())
	for _, cmd := range []string{"sink", "source", "config"} {
		r = mustRun(t, ctx, ExitConfig, cmd, "-c", bad, "--log-level", "debug")
		checkNoSecret(t, cmd+" with bad secrets", r)
		for _, want := range []string{"sasl.jaas.config: the value is not a JAAS login line", "s3.sse.customer.key: the value is not",
			"consumer.override.sasl.jaas.config: is a Kafka Connect per-connector override, which kafkas3 does not apply"} {
			if !strings.Contains(r.err, want) {
				t.Errorf("%s: stderr lacks %q:\n%s", cmd, want, r.err)
			}
		}
	}

	// Malformed -p arguments holding a secret.
	long := "sasl.password" + strings.Repeat(secretPassword, 3)
	for _, p := range []string{"sasl.password " + secretPassword, "sasl.password:" + secretPassword, long, secretPassword} {
		r = mustRun(t, ctx, ExitConfig, "sink", "-c", cfg, "-p", p)
		checkNoSecret(t, "-p "+p, r)
		if !strings.Contains(r.err, "want key=value") {
			t.Errorf("-p %q: stderr lacks the problem:\n%s", p, r.err)
		}
	}
}
