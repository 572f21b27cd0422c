package cmd

import (
	"encoding/base64"
	"fmt"
	"net/http/httptest"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/kafkas3/kafkas3/internal/saslfake"
	"github.com/kafkas3/kafkas3/kafkaauth"
	"github.com/twmb/franz-go/pkg/kfake"
	"github.com/twmb/franz-go/pkg/kgo"
	"github.com/twmb/franz-go/pkg/sasl/plain"
)

// startSASLKafka starts an in-process broker whose SASL side b plays.
func startSASLKafka(t *testing.T, b *saslfake.Broker, topics ...string) string {
	t.Helper()
	c, err := kfake.NewCluster(kfake.NumBrokers(1), kfake.SeedTopics(2, topics...))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(c.Close)
	b.Hook(c)
	return strings.Join(c.ListenAddrs(), ",")
}

// TestSASLMechanismsSinkAndSource: `sink --once` and `source` authenticate
// with OAUTHBEARER from a token file, OAUTHBEARER with OAuth client
// credentials from a token endpoint, and AWS_MSK_IAM with the default
// chain's credentials, against a broker that checks every
// authentication (the token it was sent; the SigV4 signature, recomputed
// with aws-sdk-go-v2's signer), and archive and restore every record.
func TestSASLMechanismsSinkAndSource(t *testing.T) {
	iss, err := saslfake.NewIssuer()
	if err != nil {
		t.Fatal(err)
	}
	iss.ClientID, iss.ClientSecret, iss.Scope = "kafkas3-sink", "Cl1entSecret", "kafka"
	idp := httptest.NewServer(iss)
	defer idp.Close()
	fileTok, err := iss.Token("file-user", time.Now(), time.Now().Add(time.Hour))
	if err != nil {
		t.Fatal(err)
	}
	tokPath := filepath.Join(t.TempDir(), "token.jwt")
	if err := os.WriteFile(tokPath, []byte(fileTok+"\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	creds := aws.Credentials{AccessKeyID: "AKIDEXAMPLE", SecretAccessKey: "wJalrXUtnFEMIK7MDENGbPxRfiCYEXAMPLEKEY", SessionToken: "session-token"}
	t.Setenv("AWS_ACCESS_KEY_ID", creds.AccessKeyID)
	t.Setenv("AWS_SECRET_ACCESS_KEY", creds.SecretAccessKey)
	t.Setenv("AWS_SESSION_TOKEN", creds.SessionToken)
	t.Setenv("AWS_REGION", "us-east-1")
	t.Setenv("AWS_CONFIG_FILE", filepath.Join(t.TempDir(), "none"))
	t.Setenv("AWS_SHARED_CREDENTIALS_FILE", filepath.Join(t.TempDir(), "none"))

	bearer := func(sub string) func([]byte) error {
		return func(auth []byte) error {
			tok, _, err := saslfake.OAuthToken(auth)
			if err != nil {
				return err
			}
			c, err := kafkaauth.CheckJWT(tok, time.Now())
			if err == nil && c.Subject != sub {
				err = fmt.Errorf("token of %s, want %s", c.Subject, sub)
			}
			return err
		}
	}
	cases := []struct {
		name   string
		broker *saslfake.Broker
		conf   string
		check  func() error
	}{
		{"token file", &saslfake.Broker{Mechanism: "OAUTHBEARER", Check: bearer("file-user")},
			"sasl.mechanism: OAUTHBEARER\nsasl.oauthbearer.token.endpoint.url: file://" + tokPath + "\n", nil},
		{"client credentials", &saslfake.Broker{Mechanism: "OAUTHBEARER", Check: bearer("kafkas3-sink")},
			"sasl.mechanism: OAUTHBEARER\nsasl.login.callback.handler.class: org.apache.kafka.common.security.oauthbearer.OAuthBearerLoginCallbackHandler\n" +
				"sasl.oauthbearer.token.endpoint.url: " + idp.URL + "/token\n" +
				"sasl.jaas.config: org.apache.kafka.common.security.oauthbearer.OAuthBearerLoginModule required clientId=\"kafkas3-sink\" clientSecret=\"Cl1entSecret\" scope=\"kafka\";\n",
			func() error {
				if iss.Requests() == 0 {
					return fmt.Errorf("the token endpoint was never asked")
				}
				return nil
			}},
		{"msk iam", &saslfake.Broker{Mechanism: "AWS_MSK_IAM", Reply: []byte(`{"version":"2020_10_22"}`), Check: func(auth []byte) error {
			_, err := saslfake.VerifyMSKIAM(auth, "127.0.0.1", "us-east-1", creds, time.Now())
			return err
		}}, "sasl.mechanism: AWS_MSK_IAM\nsasl.jaas.config: software.amazon.msk.auth.iam.IAMLoginModule required;\n" +
			"sasl.client.callback.handler.class: software.amazon.msk.auth.iam.IAMClientCallbackHandler\n", nil},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			ctx := cliContext(t)
			brokers := startSASLKafka(t, tc.broker, "orders", "copy_of_orders")
			want := produceJSON(t, ctx, brokers, "orders", 2, 10)
			dir := t.TempDir()
			cfg := writeFile(t, "sink.yaml", sinkYAML(brokers, dir, "orders", 5)+"security.protocol: SASL_PLAINTEXT\n"+tc.conf)
			r := mustRun(t, ctx, ExitOK, "sink", "-c", cfg, "--once", "--log-level", "debug")
			checkNoSecret(t, tc.name, r, "Cl1entSecret", fileTok, creds.SecretAccessKey)
			before := len(tc.broker.Auths())
			if before == 0 {
				t.Fatal("the sink never authenticated")
			}
			mustRun(t, ctx, ExitOK, "source", "-c", cfg, "--topic-rename", "copy_of_$0", "--log-level", "warn")
			if len(tc.broker.Auths()) == before {
				t.Error("the source never authenticated")
			}
			if refused := tc.broker.Refused(); len(refused) > 0 {
				t.Errorf("the broker refused %d authentications: %v", len(refused), refused[0])
			}
			if tc.check != nil {
				if err := tc.check(); err != nil {
					t.Error(err)
				}
			}
			if got := readTopic(t, ctx, brokers, "copy_of_orders"); !reflect.DeepEqual(got, want) {
				t.Errorf("restored %v\nwant %v", got, want)
			}
		})
	}
}

// TestSASLTokenClaimNames: a token whose subject is in another claim is
// sent with sasl.oauthbearer.sub.claim.name naming it, and refused by
// kafkas3 itself, before any broker sees it, without.
func TestSASLTokenClaimNames(t *testing.T) {
	ctx := cliContext(t)
	b := &saslfake.Broker{Mechanism: "OAUTHBEARER"}
	brokers := startSASLKafka(t, b, "orders")
	produceJSON(t, ctx, brokers, "orders", 2, 4)
	payload := fmt.Sprintf(`{"client_id":"svc","exp":%d}`, time.Now().Add(time.Hour).Unix())
	tok := "eyJhbGciOiJub25lIn0." + base64.RawURLEncoding.EncodeToString([]byte(payload)) + ".c2ln"
	path := filepath.Join(t.TempDir(), "token.jwt")
	if err := os.WriteFile(path, []byte(tok), 0o600); err != nil {
		t.Fatal(err)
	}
	base := sinkYAML(brokers, t.TempDir(), "orders", 2) + "security.protocol: SASL_PLAINTEXT\nsasl.mechanism: OAUTHBEARER\n" +
		"sasl.oauthbearer.token.endpoint.url: file:" + path + "\n"
	r := runCLI(ctx, "sink", "-c", writeFile(t, "plain.yaml", base), "--once")
	if r.code == ExitOK || !strings.Contains(r.err, "token file "+path+": OAUTHBEARER token: the JWT has no sub claim") || len(b.Auths()) != 0 {
		t.Fatalf("a token without sub: exit %d, %d authentications:\n%s", r.code, len(b.Auths()), r.err)
	}
	mustRun(t, ctx, ExitOK, "sink", "-c", writeFile(t, "named.yaml", base+"sasl.oauthbearer.sub.claim.name: client_id\n"), "--once")
	if !sawExactToken(b, tok) {
		t.Error("the broker never got the token")
	}
}

func sawExactToken(b *saslfake.Broker, tok string) bool {
	for _, a := range b.Auths() {
		if got, _, err := saslfake.OAuthToken(a); err == nil && got == tok {
			return true
		}
	}
	return false
}

// TestSASLPlainAndSCRAMWithKfake: PLAIN from sasl.username/sasl.password
// and SCRAM-SHA-256 from a Connect-style sasl.jaas.config authenticate to
// kfake's own SASL (which refuses unauthenticated requests), sink --once
// archives every record, and a wrong password archives nothing and fails.
func TestSASLPlainAndSCRAMWithKfake(t *testing.T) {
	for _, tc := range []struct{ name, conf, wrong string }{
		{"plain keys", "sasl.mechanism: PLAIN\nsasl.username: archiver\nsasl.password: pl41n-pass\n",
			"sasl.mechanism: PLAIN\nsasl.username: archiver\nsasl.password: nope\n"},
		{"scram jaas", "sasl.mechanism: SCRAM-SHA-256\nsasl.jaas.config: org.apache.kafka.common.security.scram.ScramLoginModule required username=\"archiver\" password=\"scr4m-pass\";\n",
			"sasl.mechanism: SCRAM-SHA-256\nsasl.jaas.config: org.apache.kafka.common.security.scram.ScramLoginModule required username=\"archiver\" password=\"nope\";\n"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			ctx := cliContext(t)
			c, err := kfake.NewCluster(kfake.NumBrokers(1), kfake.SeedTopics(2, "orders"), kfake.EnableSASL(),
				kfake.Superuser("PLAIN", "archiver", "pl41n-pass"), kfake.Superuser("SCRAM-SHA-256", "archiver", "scr4m-pass"))
			if err != nil {
				t.Fatal(err)
			}
			t.Cleanup(c.Close)
			brokers := strings.Join(c.ListenAddrs(), ",")
			cl, err := kgo.NewClient(kgo.SeedBrokers(c.ListenAddrs()...), kgo.SASL(plain.Auth{User: "archiver", Pass: "pl41n-pass"}.AsMechanism()))
			if err != nil {
				t.Fatal(err)
			}
			for i := range 6 {
				if err := cl.ProduceSync(ctx, &kgo.Record{Topic: "orders", Partition: int32(i % 2), Value: []byte(fmt.Sprintf(`{"i":%d}`, i))}).FirstErr(); err != nil {
					t.Fatal(err)
				}
			}
			cl.Close()
			dir := t.TempDir()
			base := sinkYAML(brokers, dir, "orders", 3) + "security.protocol: SASL_PLAINTEXT\n"
			r := mustRun(t, ctx, ExitOK, "sink", "-c", writeFile(t, "ok.yaml", base+tc.conf), "--once")
			if !strings.Contains(r.out, " records=6 ") {
				t.Errorf("sink summary %q, want 6 records", r.out)
			}
			// kfake closes the connection of a failed authentication, which
			// looks like a broker outage: --once gives up after --once-timeout.
			r = runCLI(ctx, "sink", "-c", writeFile(t, "wrong.yaml", strings.Replace(base, "test-sink", "wrong-sink", 1)+tc.wrong), "--once", "--once-timeout", "2s")
			if r.code == ExitOK || !strings.Contains(r.out, " records=0 ") {
				t.Errorf("wrong password: exit %d:\n%s\n%s", r.code, r.out, r.err)
			}
		})
	}
}
