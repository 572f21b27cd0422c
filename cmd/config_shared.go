package cmd

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

// required reports whether the key table marks key as required for the
// command the settings were loaded for.
func (p *valueParser) required(key string) bool { return p.spec(key).required&p.st.command != 0 }

// need records key as missing when the command requires it and it is unset.
func (p *valueParser) need(key, why string) {
	if _, set := p.st.values[key]; !set && p.required(key) {
		p.missing(key, why)
	}
}

// connectorClass checks the ignored connector.class against the classes
// this command replaces or reads.
func (p *valueParser) connectorClass(accepted []string, want string) {
	lv, ok := p.st.ignoredValues["connector.class"]
	if !ok {
		return
	}
	c := strings.TrimSpace(lv.value)
	for _, a := range accepted {
		if c == a {
			return
		}
	}
	p.errs = append(p.errs, &ConfigError{Key: lv.key, Origin: lv.origin, Msg: strconv.Quote(lv.value) + " " + want})
}

// kafka parses the Kafka client keys.
func (p *valueParser) kafka() KafkaSettings {
	var k KafkaSettings
	if v, set := p.st.values["bootstrap.servers"]; p.required("bootstrap.servers") || (set && strings.TrimSpace(v) != "") {
		k.BootstrapServers = p.hostPorts("bootstrap.servers")
	}
	k.SecurityProtocol = p.choice("security.protocol")
	k.SASLMechanism = p.choice("sasl.mechanism")
	k.SASLUsername = p.str("sasl.username")
	k.SASLPassword = p.str("sasl.password")
	k.TLSCAFile = p.str("ssl.ca.location")
	k.TLSCertFile = p.str("ssl.certificate.location")
	k.TLSKeyFile = p.str("ssl.key.location")
	sasl := strings.HasPrefix(k.SecurityProtocol, "SASL_")
	switch {
	case sasl && k.SASLMechanism == "" && p.ok("security.protocol"):
		p.missing("sasl.mechanism", "security.protocol is "+k.SecurityProtocol)
	case !sasl && k.SASLMechanism != "" && p.ok("security.protocol"):
		p.fail("sasl.mechanism", k.SASLMechanism, "needs security.protocol SASL_PLAINTEXT or SASL_SSL, not "+k.SecurityProtocol)
	}
	if k.SASLMechanism != "" {
		if k.SASLUsername == "" {
			p.missing("sasl.username", "sasl.mechanism is "+k.SASLMechanism)
		}
		if k.SASLPassword == "" {
			p.missing("sasl.password", "sasl.mechanism is "+k.SASLMechanism)
		}
	}
	switch {
	case k.TLSCertFile != "" && k.TLSKeyFile == "":
		p.missing("ssl.key.location", "ssl.certificate.location is set")
	case k.TLSCertFile == "" && k.TLSKeyFile != "":
		p.missing("ssl.certificate.location", "ssl.key.location is set")
	}
	if (k.TLSCAFile != "" || k.TLSCertFile != "") && k.SecurityProtocol != "SSL" && k.SecurityProtocol != "SASL_SSL" && p.ok("security.protocol") {
		p.fail("security.protocol", k.SecurityProtocol, "does not use TLS, but ssl.*.location is set; want SSL or SASL_SSL")
	}
	return k
}

// topicSelection parses topics and topics.regex. As in Kafka Connect, an
// empty value counts as unset. The sink needs exactly one of them; for the
// source (which restores them when no topics flag is given) they are
// optional, so at most one may be set.
func (p *valueParser) topicSelection(need bool) (topics []string, regex string) {
	topics = p.topics("topics")
	regex = p.regex("topics.regex")
	want := "at most one"
	if need {
		want = "exactly one"
	}
	hasTopics := len(topics) > 0 || !p.ok("topics")
	hasRegex := p.str("topics.regex") != ""
	switch {
	case hasTopics && hasRegex:
		p.fail("topics.regex", p.st.values["topics.regex"], "is set together with topics; want "+want+" of topics and topics.regex")
	case need && !hasTopics && !hasRegex:
		p.missing("topics", "set exactly one of topics and topics.regex")
	}
	return topics, regex
}

// layout parses the object layout keys.
func (p *valueParser) layout() LayoutSettings {
	return LayoutSettings{
		TopicsDir:      p.str("topics.dir"),
		DirectoryDelim: p.nonEmpty("directory.delim"),
		FileDelim:      p.nonEmpty("file.delim"),
		OffsetPadWidth: int(p.int("filename.offset.zero.pad.width")),
		Partitioner:    p.choice("partitioner.class"),
	}
}

// timezone parses timezone: the zone name and its location (nil when unset
// or invalid).
func (p *valueParser) timezone() (string, *time.Location) {
	tz := p.str("timezone")
	if tz == "" {
		return "", nil
	}
	if strings.EqualFold(tz, "local") {
		p.fail("timezone", tz, "is not an IANA zone name; want a name like UTC or Europe/Berlin")
		return tz, nil
	}
	loc, err := time.LoadLocation(tz)
	if err != nil {
		p.fail("timezone", tz, "is not a known IANA zone; want a name like UTC or Europe/Berlin")
		return tz, nil
	}
	return tz, loc
}

// locale parses locale.
func (p *valueParser) locale() string {
	l := p.str("locale")
	if l != "" && !validLocale(l) {
		p.fail("locale", l, "is not a locale tag; want a tag like en or en_US")
	}
	return l
}

// store parses the store selection, S3 and credential keys.
func (p *valueParser) store() StoreSettings {
	var o StoreSettings
	o.Store = p.choice("storage.class")
	o.LocalDir = p.str("store.local.dir")
	switch {
	case o.LocalDir != "":
		o.Store = StoreLocal
	case o.Store == StoreLocal:
		p.missing("store.local.dir", "storage.class is "+p.st.values["storage.class"])
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
	o.PartSize = p.int("s3.part.size")
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
	o.CannedACL = p.choice("s3.acl.canned")
	o.AccessKeyID = p.str("aws.access.key.id")
	o.SecretAccessKey = p.str("aws.secret.access.key")
	if o.AccessKeyID != "" && o.SecretAccessKey == "" {
		p.missing("aws.secret.access.key", "aws.access.key.id is set")
	}
	if o.AccessKeyID == "" && o.SecretAccessKey != "" {
		p.missing("aws.access.key.id", "aws.secret.access.key is set")
	}
	p.choice("s3.credentials.provider.class")
	return o
}

// pathStyle reads s3.path.style.access.enabled, the sink's name, and, for
// the source, s3.path.style.access, the Confluent source's name. A key set
// by the user wins over a default; two set keys must agree.
func (p *valueParser) pathStyle() bool {
	const src, sink = "s3.path.style.access", "s3.path.style.access.enabled"
	b := p.bool(sink)
	if _, used := p.st.values[src]; !used { // the sink: only its own name
		return b
	}
	a := p.bool(src)
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

// format parses the format and compression keys. why explains a missing
// format.class.
func (p *valueParser) format(why string) FormatSettings {
	var o FormatSettings
	o.CompressionType = p.choice("s3.compression.type")
	o.CompressionLevel = int(p.int("s3.compression.level"))
	o.Format = p.choice("format.class")
	p.need("format.class", why)
	o.AvroCodec = p.choice("avro.codec")
	o.ParquetCodec = p.choice("parquet.codec")
	o.BytesSeparator = p.raw("format.bytearray.separator")
	o.BytesExtension = p.str("format.bytearray.extension")
	if !strings.HasPrefix(o.BytesExtension, ".") || strings.ContainsAny(o.BytesExtension, "/\\") {
		p.fail("format.bytearray.extension", o.BytesExtension, "is not a file extension; want a string starting with a dot, without slashes")
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

// converter parses prefix ("value.converter" or "key.converter") and its
// settings.
func (p *valueParser) converter(prefix string) ConverterSettings {
	c := ConverterSettings{
		Class:             p.choice(prefix),
		RegistryURL:       p.str(prefix + ".schema.registry.url"),
		CredentialsSource: p.choice(prefix + ".basic.auth.credentials.source"),
		UserInfo:          p.str(prefix + ".basic.auth.user.info"),
		SchemasEnable:     p.bool(prefix + ".schemas.enable"),
	}
	if c.Class == ConverterAvro && c.RegistryURL == "" {
		p.missing(prefix+".schema.registry.url", prefix+" is avro")
	}
	for _, u := range strings.Split(c.RegistryURL, ",") {
		if u = strings.TrimSpace(u); u != "" && !strings.HasPrefix(u, "http://") && !strings.HasPrefix(u, "https://") {
			p.fail(prefix+".schema.registry.url", c.RegistryURL, "is not an http(s) URL; want http(s)://host:port, comma-separated for several")
			break
		}
	}
	if c.CredentialsSource == "USER_INFO" && c.UserInfo == "" && c.Class == ConverterAvro {
		p.missing(prefix+".basic.auth.user.info", prefix+".basic.auth.credentials.source is USER_INFO")
	}
	if c.UserInfo != "" && !strings.Contains(c.UserInfo, ":") {
		p.fail(prefix+".basic.auth.user.info", c.UserInfo, "is not user:password")
	}
	return c
}

// tombstonePartition reads tombstone.encoded.partition, the folder of
// tombstone keys objects: a non-empty name without directory.delim
// (dirDelim, "/" when unset); "tombstone" by default.
func (p *valueParser) tombstonePartition(dirDelim string) string {
	v := p.str("tombstone.encoded.partition")
	if dirDelim == "" {
		dirDelim = "/"
	}
	if _, set := p.st.values["tombstone.encoded.partition"]; set && (v == "" || strings.Contains(v, dirDelim)) {
		p.fail("tombstone.encoded.partition", v, "is not a folder name; want a non-empty name without directory.delim")
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
	o := IndexSettings{IndexPrefix: p.str("kafkas3.index.prefix")}
	if p.st.command == CommandSink {
		o.IndexEnabled = p.bool("kafkas3.index.enabled")
		o.TopicCheckInterval = p.millis("kafkas3.topics.check.interval.ms")
	}
	if err := index.ValidatePrefix(o.IndexPrefix); err != nil {
		p.fail("kafkas3.index.prefix", o.IndexPrefix, "is not a key prefix; want one or more folder names, each followed by \"/\" (default _kafkas3/)")
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
				p.fail("kafkas3.index.prefix", o.IndexPrefix, fmt.Sprintf(
					"puts the index (%s) inside topics.dir %q (or topics.dir inside it), where query engines and the source would take it for data; want a prefix outside topics.dir (default _kafkas3/)", ix, l.TopicsDir))
				break
			}
		}
	}
	return o
}
