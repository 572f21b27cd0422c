package config

import (
	"encoding/base64"
	"fmt"
	"strconv"
	"strings"
	"time"

	"github.com/kafkas3/kafkas3/index"
)

// The settings groups below are shared by SinkOptions and SourceOptions
// (embedded in both) and by build.go, which turns each into what the
// pipelines take. Each is parsed by one valueParser method. A key that the
// running command does not use is never set (LoadSettings reports it as
// ignored), so its field stays zero.

// KafkaSettings is the Kafka client's connection and security settings.
type KafkaSettings struct {
	// BootstrapServers is empty when the key is unset and the command does
	// not require it (the source: a dry run needs no Kafka).
	BootstrapServers []string
	SecurityProtocol string // PLAINTEXT, SSL, SASL_PLAINTEXT or SASL_SSL
	SASLMechanism    string // "", PLAIN, SCRAM-SHA-256 or SCRAM-SHA-512
	SASLUsername     string
	SASLPassword     string
	TLSCAFile        string // ssl.ca.location
	TLSCertFile      string // ssl.certificate.location
	TLSKeyFile       string // ssl.key.location
}

// LayoutSettings is how object keys are laid out below the bucket or
// directory.
type LayoutSettings struct {
	TopicsDir      string
	DirectoryDelim string
	FileDelim      string
	OffsetPadWidth int
	Partitioner    string // PartitionerDefault
}

// IndexSettings is the archive index (package index).
type IndexSettings struct {
	// IndexEnabled is kafkas3.index.enabled (the sink's; false for the
	// source, which reads an index when there is one).
	IndexEnabled bool
	// IndexPrefix is kafkas3.index.prefix, outside topics.dir.
	IndexPrefix string
	// TopicCheckInterval is kafkas3.topics.check.interval.ms (the sink's).
	TopicCheckInterval time.Duration
}

// StoreSettings chooses and configures the object store.
type StoreSettings struct {
	// Store is StoreS3, or StoreLocal with LocalDir.
	Store    string
	LocalDir string

	Bucket    string
	Region    string
	Endpoint  string // store.url with a scheme; "" for AWS
	PathStyle bool   // s3.path.style.access.enabled (or the source's s3.path.style.access)
	// PartSize and CannedACL are the sink's (uploads only); zero for the source.
	PartSize        int64
	PartRetries     int
	RetryBackoff    time.Duration
	SSEAlgorithm    string // "", AES256, aws:kms or aws:kms:dsse
	SSEKMSKeyID     string
	SSECustomerKey  string // base64, 32 bytes decoded; also needed to read SSE-C objects
	CannedACL       string
	AccessKeyID     string
	SecretAccessKey string
}

// FormatSettings selects the record format and its compression.
type FormatSettings struct {
	Format          string // FormatJSON, FormatBytes, FormatAvro or FormatParquet
	AvroCodec       string // avro.codec (the sink's)
	ParquetCodec    string // parquet.codec
	BytesSeparator  string
	BytesExtension  string
	CompressionType string // CompressionNone or CompressionGzip
	// CompressionLevel is the sink's gzip level (-1..9); zero for the
	// source, which only reads.
	CompressionLevel int
	// Envelope is the sink's store.envelope; the source detects envelope
	// objects by content and leaves it false.
	Envelope bool
}

// connectorClass checks the ignored connector.class against the classes
// this command replaces or reads.
func (p *valueParser) connectorClass(accepted []string, want string) {
	lv, ok := p.st.ignoredValues[p.k.ConnectorClass.Name]
	if !ok {
		return
	}
	c := strings.TrimSpace(lv.value)
	for _, a := range accepted {
		if c == a {
			return
		}
	}
	p.errs = append(p.errs, &Error{Key: lv.key, Origin: lv.origin, Msg: strconv.Quote(lv.value) + " " + want})
}

// kafka parses the Kafka client keys.
func (p *valueParser) kafka() KafkaSettings {
	var k KafkaSettings
	if p.required(p.k.BootstrapServers) || p.text(p.k.BootstrapServers) != "" {
		k.BootstrapServers = p.hostPorts(p.k.BootstrapServers)
	}
	k.SecurityProtocol = p.choice(p.k.SecurityProtocol)
	k.SASLMechanism = p.choice(p.k.SASLMechanism)
	k.SASLUsername = p.str(p.k.SASLUsername)
	k.SASLPassword = p.str(p.k.SASLPassword)
	k.TLSCAFile = p.str(p.k.SSLCALocation)
	k.TLSCertFile = p.str(p.k.SSLCertificateLocation)
	k.TLSKeyFile = p.str(p.k.SSLKeyLocation)
	sasl := strings.HasPrefix(k.SecurityProtocol, "SASL_")
	switch {
	case sasl && k.SASLMechanism == "" && p.ok(p.k.SecurityProtocol):
		p.missing(p.k.SASLMechanism, "security.protocol is "+k.SecurityProtocol)
	case !sasl && k.SASLMechanism != "" && p.ok(p.k.SecurityProtocol):
		p.fail(p.k.SASLMechanism, k.SASLMechanism, "needs security.protocol SASL_PLAINTEXT or SASL_SSL, not "+k.SecurityProtocol)
	}
	if k.SASLMechanism != "" {
		if k.SASLUsername == "" {
			p.missing(p.k.SASLUsername, "sasl.mechanism is "+k.SASLMechanism)
		}
		if k.SASLPassword == "" {
			p.missing(p.k.SASLPassword, "sasl.mechanism is "+k.SASLMechanism)
		}
	}
	switch {
	case k.TLSCertFile != "" && k.TLSKeyFile == "":
		p.missing(p.k.SSLKeyLocation, "ssl.certificate.location is set")
	case k.TLSCertFile == "" && k.TLSKeyFile != "":
		p.missing(p.k.SSLCertificateLocation, "ssl.key.location is set")
	}
	if (k.TLSCAFile != "" || k.TLSCertFile != "") && k.SecurityProtocol != "SSL" && k.SecurityProtocol != "SASL_SSL" && p.ok(p.k.SecurityProtocol) {
		p.fail(p.k.SecurityProtocol, k.SecurityProtocol, "does not use TLS, but ssl.*.location is set; want SSL or SASL_SSL")
	}
	return k
}

// topicSelection parses topics and topics.regex. As in Kafka Connect, an
// empty value counts as unset. The sink needs exactly one of them; for the
// source (which restores them when no topics flag is given) they are
// optional, so at most one may be set.
func (p *valueParser) topicSelection(need bool) (topics []string, regex string) {
	topics = p.topics(p.k.Topics)
	regex = p.regex(p.k.TopicsRegex)
	want := "at most one"
	if need {
		want = "exactly one"
	}
	hasTopics := len(topics) > 0 || !p.ok(p.k.Topics)
	hasRegex := p.str(p.k.TopicsRegex) != ""
	switch {
	case hasTopics && hasRegex:
		p.fail(p.k.TopicsRegex, p.raw(p.k.TopicsRegex), "is set together with topics; want "+want+" of topics and topics.regex")
	case need && !hasTopics && !hasRegex:
		p.missing(p.k.Topics, "set exactly one of topics and topics.regex")
	}
	return topics, regex
}

// layout parses the object layout keys.
func (p *valueParser) layout() LayoutSettings {
	return LayoutSettings{
		TopicsDir:      p.str(p.k.TopicsDir),
		DirectoryDelim: p.nonEmpty(p.k.DirectoryDelim),
		FileDelim:      p.nonEmpty(p.k.FileDelim),
		OffsetPadWidth: int(p.int(p.k.FilenameOffsetZeroPadWidth)),
		Partitioner:    p.choice(p.k.PartitionerClass),
	}
}

// timezone parses timezone: the zone name and its location (nil when unset
// or invalid).
func (p *valueParser) timezone() (string, *time.Location) {
	tz := p.str(p.k.Timezone)
	if tz == "" {
		return "", nil
	}
	if strings.EqualFold(tz, "local") {
		p.fail(p.k.Timezone, tz, "is not an IANA zone name; want a name like UTC or Europe/Berlin")
		return tz, nil
	}
	loc, err := time.LoadLocation(tz)
	if err != nil {
		p.fail(p.k.Timezone, tz, "is not a known IANA zone; want a name like UTC or Europe/Berlin")
		return tz, nil
	}
	return tz, loc
}

// locale parses locale.
func (p *valueParser) locale() string {
	l := p.str(p.k.Locale)
	if l != "" && !validLocale(l) {
		p.fail(p.k.Locale, l, "is not a locale tag; want a tag like en or en_US")
	}
	return l
}

// store parses the store selection, S3 and credential keys.
func (p *valueParser) store() StoreSettings {
	var o StoreSettings
	o.Store = p.choice(p.k.StorageClass)
	o.LocalDir = p.str(p.k.StoreLocalDir)
	switch {
	case o.LocalDir != "":
		o.Store = StoreLocal
	case o.Store == StoreLocal:
		p.missing(p.k.StoreLocalDir, "storage.class is "+p.raw(p.k.StorageClass))
	}
	o.Bucket = p.str(p.k.S3BucketName)
	if o.Store == StoreS3 {
		switch {
		case o.Bucket == "":
			p.missing(p.k.S3BucketName, "the store is S3; set store.local.dir for a local directory")
		case strings.ContainsAny(o.Bucket, "/ \t\n"):
			p.fail(p.k.S3BucketName, o.Bucket, "is not a bucket name; want a name without '/' or spaces")
		}
	}
	o.Region = p.nonEmpty(p.k.S3Region)
	o.Endpoint = p.endpoint(p.k.StoreURL)
	o.PathStyle = p.pathStyle()
	o.PartSize = p.int(p.k.S3PartSize)
	o.PartRetries = int(p.int(p.k.S3PartRetries))
	o.RetryBackoff = p.millis(p.k.S3RetryBackoffMs)
	o.SSEAlgorithm = p.choice(p.k.S3SSEAName)
	o.SSEKMSKeyID = p.str(p.k.S3SSEKMSKeyID)
	o.SSECustomerKey = p.str(p.k.S3SSECustomerKey)
	if o.SSEKMSKeyID != "" && !strings.HasPrefix(o.SSEAlgorithm, "aws:kms") && p.ok(p.k.S3SSEAName) {
		p.fail(p.k.S3SSEKMSKeyID, o.SSEKMSKeyID, "needs s3.ssea.name aws:kms or aws:kms:dsse")
	}
	if o.SSECustomerKey != "" {
		if k, err := base64.StdEncoding.DecodeString(o.SSECustomerKey); err != nil || len(k) != 32 {
			p.fail(p.k.S3SSECustomerKey, o.SSECustomerKey, "is not a base64-encoded 32-byte key")
		}
		if o.SSEAlgorithm != "" && o.SSEAlgorithm != "AES256" {
			p.fail(p.k.S3SSEAName, o.SSEAlgorithm, "cannot be combined with s3.sse.customer.key; want AES256 or unset")
		}
	}
	o.CannedACL = p.choice(p.k.S3ACLCanned)
	o.AccessKeyID = p.str(p.k.AWSAccessKeyID)
	o.SecretAccessKey = p.str(p.k.AWSSecretAccessKey)
	if o.AccessKeyID != "" && o.SecretAccessKey == "" {
		p.missing(p.k.AWSSecretAccessKey, "aws.access.key.id is set")
	}
	if o.AccessKeyID == "" && o.SecretAccessKey != "" {
		p.missing(p.k.AWSAccessKeyID, "aws.secret.access.key is set")
	}
	p.choice(p.k.S3CredentialsProviderClass)
	return o
}

// pathStyle reads s3.path.style.access.enabled, the sink's name, and, for
// the source, s3.path.style.access, the Confluent source's name. A key set
// by the user wins over a default; two set keys must agree.
func (p *valueParser) pathStyle() bool {
	src, sink := p.k.S3PathStyleAccess, p.k.S3PathStyleAccessEnabled
	b := p.bool(sink)
	if !p.isSet(src) { // the sink: only its own name
		return b
	}
	a := p.bool(src)
	setA, setB := p.userSet(src), p.userSet(sink)
	switch {
	case setA && setB && a != b && p.ok(src) && p.ok(sink):
		p.fail(src, p.raw(src), fmt.Sprintf("contradicts %s=%s; set one of them", sink.Name, p.text(sink)))
		return a
	case setB && !setA:
		return b
	}
	return a
}

// format parses the format and compression keys. why explains a missing
// format.class.
func (p *valueParser) format(why string) FormatSettings {
	var o FormatSettings
	o.CompressionType = p.choice(p.k.S3CompressionType)
	o.CompressionLevel = int(p.int(p.k.S3CompressionLevel))
	o.Format = p.choice(p.k.FormatClass)
	p.need(p.k.FormatClass, why)
	o.AvroCodec = p.choice(p.k.AvroCodec)
	o.ParquetCodec = p.choice(p.k.ParquetCodec)
	o.BytesSeparator = p.raw(p.k.FormatBytearraySeparator)
	o.BytesExtension = p.str(p.k.FormatBytearrayExtension)
	if !strings.HasPrefix(o.BytesExtension, ".") || strings.ContainsAny(o.BytesExtension, "/\\") {
		p.fail(p.k.FormatBytearrayExtension, o.BytesExtension, "is not a file extension; want a string starting with a dot, without slashes")
	}
	return o
}

// Converter names, as ConverterSettings.Class reports them.
const (
	ConverterAvro      = "avro"
	ConverterJSON      = "json"
	ConverterString    = "string"
	ConverterByteArray = "bytearray"
)

// ConverterSettings is one Connect converter: key.converter or
// value.converter and its settings.
type ConverterSettings struct {
	// Class is "" (no converter: the raw bytes), or ConverterAvro,
	// ConverterJSON, ConverterString or ConverterByteArray.
	Class             string
	RegistryURL       string // schema.registry.url
	CredentialsSource string // basic.auth.credentials.source: URL or USER_INFO
	UserInfo          string // basic.auth.user.info
	SchemasEnable     bool   // schemas.enable (JsonConverter)
}

// Schemaful reports whether the converter attaches schemas to the data.
func (c ConverterSettings) Schemaful() bool {
	return c.Class == ConverterAvro || (c.Class == ConverterJSON && c.SchemasEnable)
}

// converter parses one converter's keys (Keys.Converter).
func (p *valueParser) converter(k ConverterKeys) ConverterSettings {
	c := ConverterSettings{
		Class:             p.choice(k.Class),
		RegistryURL:       p.str(k.RegistryURL),
		CredentialsSource: p.choice(k.CredentialsSource),
		UserInfo:          p.str(k.UserInfo),
		SchemasEnable:     p.bool(k.SchemasEnable),
	}
	if c.Class == ConverterAvro && c.RegistryURL == "" {
		p.missing(k.RegistryURL, k.Class.Name+" is avro")
	}
	for _, u := range strings.Split(c.RegistryURL, ",") {
		if u = strings.TrimSpace(u); u != "" && !strings.HasPrefix(u, "http://") && !strings.HasPrefix(u, "https://") {
			p.fail(k.RegistryURL, c.RegistryURL, "is not an http(s) URL; want http(s)://host:port, comma-separated for several")
			break
		}
	}
	if c.CredentialsSource == "USER_INFO" && c.UserInfo == "" && c.Class == ConverterAvro {
		p.missing(k.UserInfo, k.CredentialsSource.Name+" is USER_INFO")
	}
	if c.UserInfo != "" && !strings.Contains(c.UserInfo, ":") {
		p.fail(k.UserInfo, c.UserInfo, "is not user:password")
	}
	return c
}

// tombstonePartition reads tombstone.encoded.partition, the folder of
// tombstone keys objects: a non-empty name without directory.delim
// (dirDelim, "/" when unset); "tombstone" by default.
func (p *valueParser) tombstonePartition(dirDelim string) string {
	v := p.str(p.k.TombstoneEncodedPartition)
	if dirDelim == "" {
		dirDelim = "/"
	}
	if p.isSet(p.k.TombstoneEncodedPartition) && (v == "" || strings.Contains(v, dirDelim)) {
		p.fail(p.k.TombstoneEncodedPartition, v, "is not a folder name; want a non-empty name without directory.delim")
	}
	if v == "" {
		v = "tombstone"
	}
	return v
}

// index parses kafkas3.index.enabled and kafkas3.index.prefix: the prefix
// must be a folder (index.ValidatePrefix) whose index folder lies outside
// topics.dir, and topics.dir must not lie inside it.
func (p *valueParser) index(l LayoutSettings) IndexSettings {
	o := IndexSettings{IndexPrefix: p.str(p.k.Kafkas3IndexPrefix)}
	if p.st.command == Sink {
		o.IndexEnabled = p.bool(p.k.Kafkas3IndexEnabled)
		o.TopicCheckInterval = p.millis(p.k.Kafkas3TopicsCheckIntervalMs)
	}
	if err := index.ValidatePrefix(o.IndexPrefix); err != nil {
		p.fail(p.k.Kafkas3IndexPrefix, o.IndexPrefix, "is not a key prefix; want one or more folder names, each followed by \"/\" (default _kafkas3/)")
		return o
	}
	if l.TopicsDir != "" {
		dd := l.DirectoryDelim
		if dd == "" {
			dd = "/"
		}
		topics := l.TopicsDir + dd
		// The index and the topic descriptions.
		for _, ix := range []string{index.Dir(o.IndexPrefix), index.TopicsDir(o.IndexPrefix)} {
			if strings.HasPrefix(ix, topics) || strings.HasPrefix(topics, ix) {
				p.fail(p.k.Kafkas3IndexPrefix, o.IndexPrefix, fmt.Sprintf(
					"puts the index (%s) inside topics.dir %q (or topics.dir inside it), where query engines and the source would take it for data; want a prefix outside topics.dir (default _kafkas3/)", ix, l.TopicsDir))
				break
			}
		}
	}
	return o
}
