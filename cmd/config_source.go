package cmd

import (
	"encoding/base64"
	"fmt"
	"strconv"
	"strings"
	"time"
)

// Canonical values of behavior.on.error, as SourceOptions reports them.
const (
	OnErrorFail   = "fail"
	OnErrorIgnore = "ignore"
	OnErrorLog    = "log"
)

// SourceOptions is the source's configuration, typed and validated. Like
// SinkOptions it holds primitives only. The store, layout and format keys
// are the sink's, so one file serves both commands.
type SourceOptions struct {
	// Kafka client of the target cluster. BootstrapServers is empty when
	// the key is unset: a dry run needs no Kafka, so the command checks it.
	BootstrapServers []string
	SecurityProtocol string
	SASLMechanism    string
	SASLUsername     string
	SASLPassword     string
	TLSCAFile        string
	TLSCertFile      string
	TLSKeyFile       string

	// ArchiveTopics and ArchiveTopicsRegex are the file's topics and
	// topics.regex: what the sink of this config archives. The source
	// refuses to restore into them (feedback-loop guard) and restores them
	// when no topics are given on the command line. At most one is set.
	ArchiveTopics      []string
	ArchiveTopicsRegex string

	// Object layout.
	TopicsDir      string
	DirectoryDelim string
	FileDelim      string
	OffsetPadWidth int

	// Store: StoreS3, or StoreLocal with LocalDir.
	Store    string
	LocalDir string

	// S3.
	Bucket          string
	Region          string
	Endpoint        string
	PathStyle       bool // s3.path.style.access, or s3.path.style.access.enabled
	PartRetries     int
	RetryBackoff    time.Duration
	SSEAlgorithm    string
	SSEKMSKeyID     string
	SSECustomerKey  string // needed to read SSE-C objects
	AccessKeyID     string
	SecretAccessKey string

	// Files.
	CompressionType string
	Format          string
	BytesSeparator  string
	BytesExtension  string
	Partitioner     string

	// The Confluent source's own keys.
	PollInterval time.Duration // s3.poll.interval.ms
	OnError      string        // behavior.on.error: OnErrorFail, OnErrorIgnore or OnErrorLog
	BatchMaxSize int           // record.batch.max.size
}

// storeOptions returns the options that choose and configure the store.
func (o *SourceOptions) storeOptions() storeOptions {
	return storeOptions{
		Store: o.Store, LocalDir: o.LocalDir, Bucket: o.Bucket, Region: o.Region, Endpoint: o.Endpoint,
		PathStyle: o.PathStyle, PartRetries: o.PartRetries, RetryBackoff: o.RetryBackoff.Milliseconds(),
		SSEAlgorithm: o.SSEAlgorithm, SSEKMSKeyID: o.SSEKMSKeyID, SSECustomerKey: o.SSECustomerKey,
		AccessKeyID: o.AccessKeyID, SecretAccessKey: o.SecretAccessKey,
	}
}

// Source types and validates the settings for `kafkas3 source`. It reports
// every problem it finds at once; each wraps ErrConfig and names the key,
// the value and what is allowed. name and flush.size are not needed (they
// are ignored for the source); bootstrap.servers is checked when set, and
// required by the command unless it only plans (--dry-run).
func (s *Settings) Source() (*SourceOptions, error) {
	if s.command != CommandSource {
		return nil, fmt.Errorf("Settings.Source: settings were loaded for %s", s.command)
	}
	p := &valueParser{st: s}
	o := &SourceOptions{}

	if lv, ok := s.ignoredValues["connector.class"]; ok {
		switch strings.TrimSpace(lv.value) {
		case "io.confluent.connect.s3.source.S3SourceConnector", "S3SourceConnector",
			"io.confluent.connect.s3.S3SinkConnector", "S3SinkConnector":
			// The source connector's config, or the sink's whose archive is restored.
		default:
			p.errs = append(p.errs, &ConfigError{Key: lv.key, Origin: lv.origin, Msg: strconv.Quote(lv.value) +
				" is not an S3 connector; want io.confluent.connect.s3.source.S3SourceConnector or io.confluent.connect.s3.S3SinkConnector"})
		}
	}

	if v, set := s.values["bootstrap.servers"]; set && strings.TrimSpace(v) != "" {
		o.BootstrapServers = p.hostPorts("bootstrap.servers")
	}
	o.SecurityProtocol = p.choice("security.protocol")
	o.SASLMechanism = p.choice("sasl.mechanism")
	o.SASLUsername = p.str("sasl.username")
	o.SASLPassword = p.str("sasl.password")
	o.TLSCAFile = p.str("ssl.ca.location")
	o.TLSCertFile = p.str("ssl.certificate.location")
	o.TLSKeyFile = p.str("ssl.key.location")
	sasl := strings.HasPrefix(o.SecurityProtocol, "SASL_")
	switch {
	case sasl && o.SASLMechanism == "" && p.ok("security.protocol"):
		p.missing("sasl.mechanism", "security.protocol is "+o.SecurityProtocol)
	case !sasl && o.SASLMechanism != "" && p.ok("security.protocol"):
		p.fail("sasl.mechanism", o.SASLMechanism, "needs security.protocol SASL_PLAINTEXT or SASL_SSL, not "+o.SecurityProtocol)
	}
	if o.SASLMechanism != "" {
		if o.SASLUsername == "" {
			p.missing("sasl.username", "sasl.mechanism is "+o.SASLMechanism)
		}
		if o.SASLPassword == "" {
			p.missing("sasl.password", "sasl.mechanism is "+o.SASLMechanism)
		}
	}
	switch {
	case o.TLSCertFile != "" && o.TLSKeyFile == "":
		p.missing("ssl.key.location", "ssl.certificate.location is set")
	case o.TLSCertFile == "" && o.TLSKeyFile != "":
		p.missing("ssl.certificate.location", "ssl.key.location is set")
	}
	if (o.TLSCAFile != "" || o.TLSCertFile != "") && o.SecurityProtocol != "SSL" && o.SecurityProtocol != "SASL_SSL" && p.ok("security.protocol") {
		p.fail("security.protocol", o.SecurityProtocol, "does not use TLS, but ssl.*.location is set; want SSL or SASL_SSL")
	}

	// The sink's topic selection; optional here.
	o.ArchiveTopics = p.topics("topics")
	o.ArchiveTopicsRegex = p.regex("topics.regex")
	if len(o.ArchiveTopics) > 0 && o.ArchiveTopicsRegex != "" {
		p.fail("topics.regex", s.values["topics.regex"], "is set together with topics; want at most one of topics and topics.regex")
	}

	o.TopicsDir = p.str("topics.dir")
	o.DirectoryDelim = p.nonEmpty("directory.delim")
	o.FileDelim = p.nonEmpty("file.delim")
	o.OffsetPadWidth = int(p.int("filename.offset.zero.pad.width"))
	if tz := p.str("timezone"); tz != "" {
		if _, err := time.LoadLocation(tz); err != nil || strings.EqualFold(tz, "local") {
			p.fail("timezone", tz, "is not a known IANA zone; want a name like UTC or Europe/Berlin")
		}
	}
	if l := p.str("locale"); l != "" && !validLocale(l) {
		p.fail("locale", l, "is not a locale tag; want a tag like en or en_US")
	}

	o.Store = p.choice("storage.class")
	o.LocalDir = p.str("store.local.dir")
	switch {
	case o.LocalDir != "":
		o.Store = StoreLocal
	case o.Store == StoreLocal:
		p.missing("store.local.dir", "storage.class is "+s.values["storage.class"])
	}
	o.Bucket = p.str("s3.bucket.name")
	if o.Store == StoreS3 {
		switch {
		case o.Bucket == "":
			p.missing("s3.bucket.name", "the store is S3; set store.local.dir for a local directory")
		case strings.ContainsAny(o.Bucket, "/ \t\n"):
			p.fail("s3.bucket.name", o.Bucket, "is not a bucket name; want a name without '/' or spaces")
		}
	}
	o.Region = p.nonEmpty("s3.region")
	o.Endpoint = p.endpoint("store.url")
	o.PathStyle = p.pathStyle()
	o.PartRetries = int(p.int("s3.part.retries"))
	o.RetryBackoff = p.millis("s3.retry.backoff.ms")
	o.SSEAlgorithm = p.choice("s3.ssea.name")
	o.SSEKMSKeyID = p.str("s3.sse.kms.key.id")
	o.SSECustomerKey = p.str("s3.sse.customer.key")
	if o.SSEKMSKeyID != "" && !strings.HasPrefix(o.SSEAlgorithm, "aws:kms") && p.ok("s3.ssea.name") {
		p.fail("s3.sse.kms.key.id", o.SSEKMSKeyID, "needs s3.ssea.name aws:kms or aws:kms:dsse")
	}
	if o.SSECustomerKey != "" {
		if k, err := base64.StdEncoding.DecodeString(o.SSECustomerKey); err != nil || len(k) != 32 {
			p.fail("s3.sse.customer.key", o.SSECustomerKey, "is not a base64-encoded 32-byte key")
		}
		if o.SSEAlgorithm != "" && o.SSEAlgorithm != "AES256" {
			p.fail("s3.ssea.name", o.SSEAlgorithm, "cannot be combined with s3.sse.customer.key; want AES256 or unset")
		}
	}
	o.AccessKeyID = p.str("aws.access.key.id")
	o.SecretAccessKey = p.str("aws.secret.access.key")
	if o.AccessKeyID != "" && o.SecretAccessKey == "" {
		p.missing("aws.secret.access.key", "aws.access.key.id is set")
	}
	if o.AccessKeyID == "" && o.SecretAccessKey != "" {
		p.missing("aws.access.key.id", "aws.secret.access.key is set")
	}
	p.choice("s3.credentials.provider.class")

	o.CompressionType = p.choice("s3.compression.type")
	o.Format = p.choice("format.class")
	if _, ok := s.values["format.class"]; !ok {
		p.missing("format.class", "the source reads the objects in the format the sink wrote")
	}
	o.BytesSeparator = p.raw("format.bytearray.separator")
	o.BytesExtension = p.str("format.bytearray.extension")
	if !strings.HasPrefix(o.BytesExtension, ".") || strings.ContainsAny(o.BytesExtension, "/\\") {
		p.fail("format.bytearray.extension", o.BytesExtension, "is not a file extension; want a string starting with a dot, without slashes")
	}
	o.Partitioner = p.choice("partitioner.class")
	p.choice("errors.tolerance")

	o.PollInterval = p.millis("s3.poll.interval.ms")
	o.OnError = p.choice("behavior.on.error")
	o.BatchMaxSize = int(p.int("record.batch.max.size"))

	if err := problems(p.errs); err != nil {
		return nil, err
	}
	return o, nil
}

// pathStyle reads s3.path.style.access, the source's name, and
// s3.path.style.access.enabled, the sink's. A key set by the user wins over
// a default; two set keys must agree.
func (p *valueParser) pathStyle() bool {
	const src, sink = "s3.path.style.access", "s3.path.style.access.enabled"
	a, b := p.bool(src), p.bool(sink)
	setA := p.st.origins[src].Kind != OriginDefault
	setB := p.st.origins[sink].Kind != OriginDefault
	switch {
	case setA && setB && a != b && p.ok(src) && p.ok(sink):
		p.fail(src, p.st.values[src], fmt.Sprintf("contradicts %s=%s; set one of them", sink, strings.TrimSpace(p.st.values[sink])))
		return a
	case setB && !setA:
		return b
	}
	return a
}
