// Package testbed starts the real services that kafkas3's integration tests and
// benchmarks run against: a single-node Apache Kafka 4.x broker in KRaft mode,
// run from Maven Central jars on Java 17, and versitygw, an S3 server, with its
// posix backend. Both listen on free 127.0.0.1 ports and keep their data in
// temp dirs that are removed when they stop.
//
// Tests use it through TestMain and the lazy accessors:
//
//	func TestMain(m *testing.M) { os.Exit(testbed.Main(m)) }
//
//	func TestSinkIntegration(t *testing.T) {
//		k := testbed.Kafka(t) // started once per test binary, on first use
//		s := testbed.S3(t)
//		k.CreateTopic(t, "orders", 3)
//		bucket := s.CreateBucket(t)
//		...
//	}
//
// Kafka skips the test with one line when Java 17 (or, before the first
// download, Maven) is missing, and S3 skips when the go tool is missing. When
// KAFKAS3_REQUIRE_TESTBED=1 is set (CI sets it), a missing tool fails the test
// instead, so CI can never pass by skipping.
//
// The broker's jars and the versitygw binary are fetched once into a cache dir
// ($KAFKAS3_CACHE, else $XDG_CACHE_HOME/kafkas3, else ~/.cache/kafkas3) and
// reused; a file lock makes concurrent test binaries share one download.
//
// Every child runs in its own process group with a parent-death signal, so it
// dies with the test binary even when that binary is killed. Main stops
// everything after the tests, and on SIGINT or SIGTERM.
//
// Options.SASLSSL gives a broker (started with StartKafka) a second,
// SASL_SSL listener with SCRAM (KafkaBroker.SASLSSLAddr): keytool generates
// its key and self-signed certificate (KafkaBroker.CAPath), and
// KafkaBroker.CreateSCRAMUser adds users through the admin API. With
// Options.OAuthJWKSURL the listener also offers OAUTHBEARER, validating
// tokens against that JWKS (Kafka's OAuthBearerValidatorCallbackHandler,
// the URL allowed through org.apache.kafka.sasl.oauthbearer.allowed.urls)
// with short sessions, so clients re-authenticate. StartKDC (or NewKDC in
// a test) runs an MIT KDC (krb5kdc) of realm KDCRealm on loopback with
// its database in a temp dir; with Options.KDC the listener also offers
// GSSAPI, the broker's principal kafka/127.0.0.1 made in that KDC, and
// KDC.AddPrincipal makes client principals with keytabs.
//
// Options.S3TLS starts versitygw (StartS3) serving HTTPS only, with an
// ECDSA P-256 key and a self-signed certificate for 127.0.0.1 and
// localhost generated in Go (s3tls.go) in its temp dir and passed to
// versitygw's --cert and --key: the endpoint is https://127.0.0.1:<port>,
// S3Server.CAPath is the certificate's PEM file, which S3Server.Client
// trusts and S3Server.Env exports as AWS_CA_BUNDLE (how a kafkas3 user
// trusts a private CA). The accessor S3TLS(t) is the test binary's one
// such server, next to the plain one of S3(t); `make testbed` starts one
// with -s3-tls.
//
// StartKafka, StartS3 and Prepare are the same machinery without testing.TB,
// for `make testbed` (cmd/testbed) and benchmarks.
package testbed
