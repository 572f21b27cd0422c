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
func (k *KafkaBroker) makeSASLSSL(ctx context.Context, addr string, kdc *KDC) error {
	if kdc != nil {
		kt, err := kdc.AddPrincipal(ctx, gssapiBrokerPrincipal)
		if err != nil {
			return err
		}
		k.krb5Conf, k.gssapiKeytab = kdc.Krb5Conf, kt
	}
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
	if k.gssapiKeytab != "" {
		mechs += ",GSSAPI"
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
	lines = append(lines, k.oauthProperties()...)
	if k.gssapiKeytab != "" {
		lines = append(lines, "sasl.kerberos.service.name=kafka",
			"listener.name.sasl_ssl.gssapi.sasl.jaas.config=com.sun.security.auth.module.Krb5LoginModule required useKeyTab=true storeKey=true keyTab=\""+
				k.gssapiKeytab+"\" principal=\""+gssapiBrokerPrincipal+"@"+KDCRealm+"\";")
	}
	return lines
}

// gssapiBrokerPrincipal is the broker's Kerberos principal: clients ask
// for a ticket of <service name>/<the host they dial>.
const gssapiBrokerPrincipal = "kafka/127.0.0.1"

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

// saslJVMProps are the broker JVM's system properties for OAUTHBEARER
// (Kafka 4 fetches only the URLs of
// org.apache.kafka.sasl.oauthbearer.allowed.urls, empty by default) and
// GSSAPI (the KDC's krb5.conf).
func (k *KafkaBroker) saslJVMProps() []string {
	var props []string
	if k.oauthJWKS != "" {
		props = append(props, "-Dorg.apache.kafka.sasl.oauthbearer.allowed.urls="+k.oauthJWKS)
	}
	if k.krb5Conf != "" {
		props = append(props, "-Djava.security.krb5.conf="+k.krb5Conf)
	}
	return props
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
