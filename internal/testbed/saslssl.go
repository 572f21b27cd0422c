package testbed

import (
	"context"
	"fmt"
	"os/exec"
	"path/filepath"
	"strconv"
	"testing"
	"time"

	"github.com/twmb/franz-go/pkg/kadm"
)

// saslSSLStorePass is the password of the broker's generated keystore.
const saslSSLStorePass = "testbed-broker"

// makeSASLSSL prepares the SASL_SSL listener at addr: keytool generates
// the broker's key and self-signed certificate (for 127.0.0.1 and
// localhost) in a PKCS12 keystore, and exports the certificate as the CA
// clients trust (CAPath).
func (k *KafkaBroker) makeSASLSSL(ctx context.Context, addr string) error {
	keytool, err := exec.LookPath("keytool")
	if err != nil {
		return missingTool("testbed: keytool not found on PATH (the JDK's; needed for the SASL_SSL listener)")
	}
	k.Keytool, k.SASLSSLAddr = keytool, addr
	k.keystore = filepath.Join(k.Dir, "broker.p12")
	k.CAPath = filepath.Join(k.Dir, "broker-ca.pem")
	if _, err := runTool(ctx, k.Dir, nil, keytool, "-genkeypair", "-keystore", k.keystore, "-storetype", "PKCS12",
		"-storepass", saslSSLStorePass, "-alias", "broker", "-keyalg", "EC", "-groupname", "secp256r1",
		"-dname", "CN=kafkas3 testbed broker", "-ext", "SAN=ip:127.0.0.1,dns:localhost", "-validity", "2"); err != nil {
		return fmt.Errorf("testbed: keytool -genkeypair: %w", err)
	}
	if _, err := runTool(ctx, k.Dir, nil, keytool, "-exportcert", "-rfc", "-keystore", k.keystore,
		"-storepass", saslSSLStorePass, "-alias", "broker", "-file", k.CAPath); err != nil {
		return fmt.Errorf("testbed: keytool -exportcert: %w", err)
	}
	return nil
}

// listenerProperties are the listener lines of server.properties: PLAINTEXT
// and CONTROLLER, and SASL_SSL when makeSASLSSL prepared it.
func (k *KafkaBroker) listenerProperties() []string {
	if k.SASLSSLAddr == "" {
		return []string{
			"listeners=PLAINTEXT://" + k.Addr + ",CONTROLLER://" + k.ControllerAddr,
			"advertised.listeners=PLAINTEXT://" + k.Addr,
			"listener.security.protocol.map=PLAINTEXT:PLAINTEXT,CONTROLLER:PLAINTEXT",
		}
	}
	const scram = "org.apache.kafka.common.security.scram.ScramLoginModule required;"
	mechs := "SCRAM-SHA-256,SCRAM-SHA-512"
	if k.oauthJWKS != "" {
		mechs += ",OAUTHBEARER"
	}
	lines := []string{
		"listeners=PLAINTEXT://" + k.Addr + ",CONTROLLER://" + k.ControllerAddr + ",SASL_SSL://" + k.SASLSSLAddr,
		"advertised.listeners=PLAINTEXT://" + k.Addr + ",SASL_SSL://" + k.SASLSSLAddr,
		"listener.security.protocol.map=PLAINTEXT:PLAINTEXT,CONTROLLER:PLAINTEXT,SASL_SSL:SASL_SSL",
		"sasl.enabled.mechanisms=" + mechs,
		"listener.name.sasl_ssl.scram-sha-256.sasl.jaas.config=" + scram,
		"listener.name.sasl_ssl.scram-sha-512.sasl.jaas.config=" + scram,
		"listener.name.sasl_ssl.ssl.keystore.location=" + k.keystore,
		"listener.name.sasl_ssl.ssl.keystore.password=" + saslSSLStorePass,
		"listener.name.sasl_ssl.ssl.keystore.type=PKCS12",
	}
	return append(lines, k.oauthProperties()...)
}

// oauthProperties are the OAUTHBEARER lines of the SASL_SSL listener:
// Kafka's validator callback handler with the JWKS of Options.OAuthJWKSURL.
func (k *KafkaBroker) oauthProperties() []string {
	if k.oauthJWKS == "" {
		return nil
	}
	reauth := k.oauthReauth
	if reauth <= 0 {
		reauth = 3 * time.Second
	}
	const l = "listener.name.sasl_ssl.oauthbearer."
	return []string{
		l + "sasl.jaas.config=org.apache.kafka.common.security.oauthbearer.OAuthBearerLoginModule required;",
		l + "sasl.server.callback.handler.class=org.apache.kafka.common.security.oauthbearer.OAuthBearerValidatorCallbackHandler",
		l + "connections.max.reauth.ms=" + strconv.FormatInt(reauth.Milliseconds(), 10),
		"sasl.oauthbearer.jwks.endpoint.url=" + k.oauthJWKS,
		"sasl.oauthbearer.clock.skew.seconds=0",
	}
}

// oauthJVMProps lets the broker fetch the JWKS: Kafka 4 reads only the
// URLs of the org.apache.kafka.sasl.oauthbearer.allowed.urls system
// property (empty by default).
func (k *KafkaBroker) oauthJVMProps() []string {
	if k.oauthJWKS == "" {
		return nil
	}
	return []string{"-Dorg.apache.kafka.sasl.oauthbearer.allowed.urls=" + k.oauthJWKS}
}

// CreateSCRAMUser creates (or updates) a SCRAM-SHA-512 user through the
// admin API on the PLAINTEXT listener, failing the test on error.
func (k *KafkaBroker) CreateSCRAMUser(t testing.TB, user, password string) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	adm := kadm.NewClient(k.Client(t))
	res, err := adm.AlterUserSCRAMs(ctx, nil, []kadm.UpsertSCRAM{{User: user, Mechanism: kadm.ScramSha512, Iterations: 4096, Password: password}})
	if err == nil {
		err = res.Error()
	}
	if err != nil {
		t.Fatalf("testbed: create SCRAM user %q: %v", user, err)
	}
}
