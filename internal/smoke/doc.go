// Package smoke holds end-to-end smoke tests of the integration test bed
// (build tag integration): records written by kcat must come back intact
// through franz-go from the real Kafka broker, and an object uploaded in parts
// with aws-sdk-go-v2 to versitygw must download byte-identical with the aws
// CLI. They check the test bed and the third-party clients, not kafkas3.
package smoke
