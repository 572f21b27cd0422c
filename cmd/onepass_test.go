package cmd

import (
	"strings"
	"testing"
)

// TestConfigProblemsInOnePass: a config with an unknown key, a bad value,
// a missing required key, an unsupported combination, a key that needs
// another key and a bucket name S3 refuses reports all six in one run,
// with exit code 2, for the sink and (with the keys that apply to it) for
// the source.
func TestConfigProblemsInOnePass(t *testing.T) {
	ctx := cliContext(t)
	sink := writeFile(t, "sink.properties", `name=orders
bootstrap.servers=localhost:9092
topics=orders
s3.bucket.name=Bad_Bucket!
format.class=io.confluent.connect.s3.format.json.JsonFormat
# a bucket name S3 refuses
# unknown key
flush.sise=1000
# bad value
s3.part.size=1024
# unsupported combination
store.envelope=true
store.kafka.keys=true
# a key that needs another key (timezone)
rotate.schedule.interval.ms=60000
`) // and flush.size, a required key, is missing
	r := mustRun(t, ctx, ExitConfig, "sink", "-c", sink)
	for _, want := range []string{
		"6 configuration problems:",
		`s3.bucket.name: "Bad_Bucket!" has 'B'; want only lowercase letters, digits, '.' and '-'`,
		`flush.sise: unknown key; did you mean "flush.size"?`,
		"flush.size: required key is not set",
		`s3.part.size: "1024" is out of range`,
		"timezone: required key is not set (rotate.schedule.interval.ms is set)",
		`store.kafka.keys: "true" cannot be combined with store.envelope=true`,
	} {
		if !strings.Contains(r.err, want) {
			t.Errorf("sink: stderr lacks %q:\n%s", want, r.err)
		}
	}

	source := writeFile(t, "source.yaml", `bogus.key: 1
s3.poll.interval.ms: soon
store.local.dir: `+t.TempDir()+`
topics: a
topics.regex: b.*
security.protocol: SASL_SSL
`) // format.class, required, is missing
	r = mustRun(t, ctx, ExitConfig, "source", "-c", source, "--follow", "--dry-run", "--log-level", "loud")
	for _, want := range []string{
		"bogus.key: unknown key",
		`s3.poll.interval.ms: "soon" is not an integer`,
		"format.class: required key is not set",
		`topics.regex: "b.*" is set together with topics`,
		"sasl.mechanism: required key is not set (security.protocol is SASL_SSL)",
		"--follow: is set together with --dry-run",
		`--log-level "loud"`,
	} {
		if !strings.Contains(r.err, want) {
			t.Errorf("source: stderr lacks %q:\n%s", want, r.err)
		}
	}
}
