// Package saslfake plays the broker side of a SASL mechanism in front of
// franz-go's in-process kfake cluster, for tests of the client side of
// mechanisms kfake does not speak (OAUTHBEARER, AWS_MSK_IAM): Hook takes
// over the cluster's SaslHandshake and SaslAuthenticate requests, records
// every authentication's bytes, accepts or refuses them with a check the
// test gives, and can give sessions a lifetime so the client
// re-authenticates (KIP-368), as a real broker does.
//
// Checks that play a broker: OAuthToken reads the token out of an
// OAUTHBEARER client message (RFC 7628), and VerifyMSKIAM checks an
// AWS_MSK_IAM payload's SigV4 signature by signing the same request again
// with aws-sdk-go-v2's own signer, so the test proves the payload is what
// AWS computes, not what the client under test computes.
package saslfake
