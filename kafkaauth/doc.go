// Package kafkaauth builds the SASL mechanisms of the Kafka client beyond
// PLAIN and SCRAM, as Apache Kafka's Java client configures them:
//
//   - ParseJAAS reads a sasl.jaas.config value (one login module, its flag
//     and its options) without ever putting an option's value into an
//     error, since values are passwords and secrets.
//   - TokenFile is OAUTHBEARER with the token in a file (Kafka's
//     sasl.oauthbearer.token.endpoint.url=file:...): the file is read again
//     at every authentication, a new connection's or a re-authentication's,
//     so a rotated token is picked up without a restart.
//   - ClientCredentials is OAUTHBEARER with OAuth 2 client credentials: a
//     token is requested from the token endpoint and reused until 80% of
//     its lifetime has passed (Kafka's sasl.login.refresh.window.factor).
//   - MSKIAM is AWS_MSK_IAM with credentials from an AWS credentials
//     provider (the default chain, a profile, an assumed role).
//   - Kerberos is GSSAPI with a keytab (gokrb5).
//
// Tokens are checked as Kafka's client checks them (a JWT with exp and
// sub claims, not expired) before they are sent. Nothing here logs.
package kafkaauth
