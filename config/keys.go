package config

import (
	"math"
	"sort"
	"strings"

	"github.com/kafkas3/kafkas3/convert"
	"github.com/kafkas3/kafkas3/format"
	"github.com/kafkas3/kafkas3/internal/registry"
	"github.com/kafkas3/kafkas3/partition"
)

// Command names the kafkas3 command a configuration is loaded for. Keys
// say which commands use them; a key that belongs only to the other
// command is accepted and reported as ignored, so one file can serve both
// `sink` and `source`.
type Command uint8

// The commands that read configuration.
const (
	Sink Command = 1 << iota
	Source
	// Both is Sink and Source.
	Both = Sink | Source
)

// String returns the command's CLI name.
func (c Command) String() string {
	switch c {
	case Sink:
		return "sink"
	case Source:
		return "source"
	case Both:
		return "sink, source"
	default:
		return "unknown command"
	}
}

// Other is the command that is not c.
func (c Command) Other() Command { return Both &^ c }

// Status says what kafkas3 does with a recognised key.
type Status uint8

const (
	// Active keys are parsed, validated and used.
	Active Status = iota
	// Ignored keys only mean something inside Kafka Connect. They are
	// accepted and listed once in an info line.
	Ignored
	// Unsupported keys belong to Confluent features this version does not
	// have yet. They are accepted only at their Confluent default (which
	// changes nothing); any other value is an error, never silently dropped.
	Unsupported
	// Rejected keys would change the data (transforms). Any non-empty value
	// is an error.
	Rejected
)

// Kind is how a key's string value is parsed.
type Kind uint8

// The value kinds.
const (
	KindString Kind = iota
	KindInt
	KindBool
	KindList
	KindChoice
)

// Choice is one allowed value of a choice key: a canonical short name, the
// aliases (Confluent class names) that mean the same, and whether this
// version supports it yet.
type Choice struct {
	Name        string
	Aliases     []string
	Unsupported bool
}

// Spec is the declaration of one key. Parsing, validation, the reference
// (config-keys, docs/config.md), `kafkas3 config` and secret masking all read it.
type Spec struct {
	Name     string
	Prefix   bool // Name ends in "." and matches every key below it
	Default  string
	Kind     Kind
	Min, Max int64 // KindInt bounds, inclusive
	Choices  []Choice
	// Required holds the commands that need the key: "required" in their
	// reference, enforced by their parser (TestRequiredKeys checks that the
	// two agree).
	Required Command
	Allowed  string // overrides the generated "allowed" text
	Secret   bool   // the value is never shown: masked in errors, logs and output
	Raw      bool   // keep leading/trailing whitespace of the value
	Commands Command
	Status   Status
	Doc      string
	// AlsoNamed are other names accepted for this key: shorter names people
	// write that are not Kafka's (nor Confluent's). A value set under one
	// counts as set under Name (its origin keeps the name used); setting
	// both names in one layer with different values is a problem.
	AlsoNamed []string
}

// Typed handles: each names one declared key and is what the parsers take,
// so reading a key that is not declared does not compile.
type (
	// StringKey is a key with a string value.
	StringKey struct{ *Spec }
	// IntKey is a key with an integer value within Min..Max.
	IntKey struct{ *Spec }
	// BoolKey is a key with the value true or false.
	BoolKey struct{ *Spec }
	// ListKey is a key with a comma-separated list value.
	ListKey struct{ *Spec }
	// ChoiceKey is a key whose value is one of Choices.
	ChoiceKey struct{ *Spec }
	// OtherKey is a key kafkas3 does not read: ignored, not supported yet,
	// refused, or a prefix family.
	OtherKey struct{ *Spec }
)

const (
	maxInt64 = math.MaxInt64
	maxInt32 = math.MaxInt32
)

// Keys holds a typed handle for every key, in declaration order in All.
type Keys struct {
	// Identity and Kafka client.
	Name                           StringKey // name
	BootstrapServers               ListKey   // bootstrap.servers
	GroupID                        StringKey // group.id
	GroupInstanceID                StringKey // group.instance.id
	ClientID                       StringKey // client.id
	SessionTimeoutMs               IntKey    // session.timeout.ms
	SecurityProtocol               ChoiceKey // security.protocol
	SASLMechanism                  ChoiceKey // sasl.mechanism
	SASLUsername                   StringKey // sasl.username
	SASLPassword                   StringKey // sasl.password
	SASLJaasConfig                 StringKey // sasl.jaas.config
	SASLOAuthTokenEndpointURL      StringKey // sasl.oauthbearer.token.endpoint.url
	SASLOAuthClientID              StringKey // sasl.oauthbearer.client.credentials.client.id
	SASLOAuthClientSecret          StringKey // sasl.oauthbearer.client.credentials.client.secret
	SASLOAuthScope                 StringKey // sasl.oauthbearer.scope
	SASLOAuthHeaderURLEncode       BoolKey   // sasl.oauthbearer.header.urlencode
	SASLOAuthSubClaimName          StringKey // sasl.oauthbearer.sub.claim.name
	SASLOAuthScopeClaimName        StringKey // sasl.oauthbearer.scope.claim.name
	SASLLoginCallbackHandlerClass  ChoiceKey // sasl.login.callback.handler.class
	SASLClientCallbackHandlerClass ChoiceKey // sasl.client.callback.handler.class
	SASLLoginConnectTimeoutMs      IntKey    // sasl.login.connect.timeout.ms
	SASLLoginReadTimeoutMs         IntKey    // sasl.login.read.timeout.ms
	SASLKerberosServiceName        StringKey // sasl.kerberos.service.name
	Kafkas3Krb5Conf                StringKey // kafkas3.krb5.conf
	SASLLoginRefreshFamily         OtherKey  // sasl.login.refresh.
	SASLLoginRetryFamily           OtherKey  // sasl.login.retry.
	SASLKerberosTicketFamily       OtherKey  // sasl.kerberos.ticket.
	SSLCALocation                  StringKey // ssl.ca.location
	SSLCertificateLocation         StringKey // ssl.certificate.location
	SSLKeyLocation                 StringKey // ssl.key.location
	SSLTruststoreLocation          StringKey // ssl.truststore.location
	SSLTruststorePassword          StringKey // ssl.truststore.password
	SSLTruststoreType              ChoiceKey // ssl.truststore.type
	SSLKeystoreLocation            StringKey // ssl.keystore.location
	SSLKeystorePassword            StringKey // ssl.keystore.password
	SSLKeystoreType                ChoiceKey // ssl.keystore.type
	SSLKeyPassword                 StringKey // ssl.key.password
	IsolationLevel                 ChoiceKey // isolation.level
	ConsumerOverrideIsolationLevel ChoiceKey // consumer.override.isolation.level

	// What to read.
	Topics      ListKey   // topics
	TopicsRegex StringKey // topics.regex

	// Object layout.
	TopicsDir                  StringKey // topics.dir
	DirectoryDelim             StringKey // directory.delim
	FileDelim                  StringKey // file.delim
	FilenameOffsetZeroPadWidth IntKey    // filename.offset.zero.pad.width

	// The archive index (kafkas3's own, not Confluent's).
	Kafkas3IndexEnabled            BoolKey   // kafkas3.index.enabled
	Kafkas3IndexPrefix             StringKey // kafkas3.index.prefix
	Kafkas3IndexCheckpointInterval IntKey    // kafkas3.index.checkpoint.interval
	Kafkas3IndexDigest             ChoiceKey // kafkas3.index.digest
	OffsetsSnapshotIntervalMs      IntKey    // offsets.snapshot.interval.ms
	GroupsRegex                    StringKey // groups.regex
	Kafkas3TopicsCheckIntervalMs   IntKey    // kafkas3.topics.check.interval.ms
	Kafkas3TopicRecreated          ChoiceKey // kafkas3.topic.recreated
	Kafkas3LogIntervalMs           IntKey    // kafkas3.log.interval.ms

	// Rotation.
	FlushSize                IntKey    // flush.size
	RotateIntervalMs         IntKey    // rotate.interval.ms
	RotateScheduleIntervalMs IntKey    // rotate.schedule.interval.ms
	Timezone                 StringKey // timezone
	Locale                   StringKey // locale

	// Store selection.
	StorageClass  ChoiceKey // storage.class
	StoreLocalDir StringKey // store.local.dir

	// S3.
	S3BucketName               StringKey // s3.bucket.name
	S3Region                   StringKey // s3.region
	StoreURL                   StringKey // store.url
	S3PathStyleAccessEnabled   BoolKey   // s3.path.style.access.enabled
	S3PathStyleAccess          BoolKey   // s3.path.style.access
	S3PartSize                 IntKey    // s3.part.size
	S3PartRetries              IntKey    // s3.part.retries
	S3RetryBackoffMs           IntKey    // s3.retry.backoff.ms
	S3CompressionType          ChoiceKey // s3.compression.type
	S3CompressionLevel         IntKey    // s3.compression.level
	S3SSEAName                 ChoiceKey // s3.ssea.name
	S3SSEKMSKeyID              StringKey // s3.sse.kms.key.id
	S3SSECustomerKey           StringKey // s3.sse.customer.key
	S3ACLCanned                ChoiceKey // s3.acl.canned
	S3StorageClass             ChoiceKey // s3.storage.class
	S3ObjectLockMode           ChoiceKey // s3.object.lock.mode
	S3ObjectLockRetainDays     IntKey    // s3.object.lock.retain.days
	S3ObjectLockRewrite        ChoiceKey // s3.object.lock.rewrite
	AWSAccessKeyID             StringKey // aws.access.key.id
	AWSSecretAccessKey         StringKey // aws.secret.access.key
	S3CredentialsProviderClass ChoiceKey // s3.credentials.provider.class
	S3STSRoleARN               StringKey // s3.credentials.provider.sts.role.arn
	S3STSRoleSessionName       StringKey // s3.credentials.provider.sts.role.session.name
	S3STSRoleExternalID        StringKey // s3.credentials.provider.sts.role.external.id
	S3STSRegion                StringKey // s3.credentials.provider.sts.region
	S3ProxyURL                 StringKey // s3.proxy.url
	S3ProxyUser                StringKey // s3.proxy.user
	S3ProxyPassword            StringKey // s3.proxy.password
	S3ObjectTagging            BoolKey   // s3.object.tagging
	S3ObjectTaggingPairs       ListKey   // s3.object.tagging.key.value.pairs
	S3ObjectTaggingOnError     ChoiceKey // s3.object.behavior.on.tagging.error

	// Format.
	FormatClass  ChoiceKey // format.class
	AvroCodec    ChoiceKey // avro.codec
	ParquetCodec ChoiceKey // parquet.codec

	// Converters.
	ValueConverter                              ChoiceKey // value.converter
	ValueConverterSchemaRegistryURL             StringKey // value.converter.schema.registry.url
	ValueConverterBasicAuthCredentialsSource    ChoiceKey // value.converter.basic.auth.credentials.source
	ValueConverterBasicAuthUserInfo             StringKey // value.converter.basic.auth.user.info
	ValueConverterSchemasEnable                 BoolKey   // value.converter.schemas.enable
	KeyConverter                                ChoiceKey // key.converter
	KeyConverterSchemaRegistryURL               StringKey // key.converter.schema.registry.url
	KeyConverterBasicAuthCredentialsSource      ChoiceKey // key.converter.basic.auth.credentials.source
	KeyConverterBasicAuthUserInfo               StringKey // key.converter.basic.auth.user.info
	KeyConverterSchemasEnable                   BoolKey   // key.converter.schemas.enable
	FormatBytearraySeparator                    StringKey // format.bytearray.separator
	FormatBytearrayExtension                    StringKey // format.bytearray.extension
	PartitionerClass                            ChoiceKey // partitioner.class
	PartitionFieldName                          ListKey   // partition.field.name
	PathFormat                                  StringKey // path.format
	PartitionDurationMs                         IntKey    // partition.duration.ms
	TimestampExtractor                          ChoiceKey // timestamp.extractor
	TimestampField                              StringKey // timestamp.field
	Kafkas3MaxOpenPartitions                    IntKey    // kafkas3.max.open.partitions
	BehaviorOnNullValues                        ChoiceKey // behavior.on.null.values
	SchemaCompatibility                         ChoiceKey // schema.compatibility
	ErrorsTolerance                             ChoiceKey // errors.tolerance
	ErrorsDeadletterqueueTopicName              StringKey // errors.deadletterqueue.topic.name
	ErrorsDeadletterqueueTopicReplicationFactor IntKey    // errors.deadletterqueue.topic.replication.factor
	ErrorsDeadletterqueueContextHeadersEnable   BoolKey   // errors.deadletterqueue.context.headers.enable
	ErrorsLogEnable                             BoolKey   // errors.log.enable

	// Source command.
	S3PollIntervalMs   IntKey    // s3.poll.interval.ms
	ReadConcurrency    IntKey    // kafkas3.read.concurrency
	RecordBatchMaxSize IntKey    // record.batch.max.size
	BehaviorOnError    ChoiceKey // behavior.on.error

	// Confluent features not supported yet: accepted at their default only.
	S3WANMode                 OtherKey  // s3.wan.mode
	StoreKafkaKeys            BoolKey   // store.kafka.keys
	StoreKafkaHeaders         BoolKey   // store.kafka.headers
	StoreEnvelope             BoolKey   // store.envelope
	KeysFormatClass           ChoiceKey // keys.format.class
	HeadersFormatClass        ChoiceKey // headers.format.class
	TombstoneEncodedPartition StringKey // tombstone.encoded.partition
	HiveIntegration           OtherKey  // hive.integration

	// Kafka Connect only: accepted, reported once, no effect.
	ConnectorClass              OtherKey // connector.class
	TasksMax                    OtherKey // tasks.max
	KeyConverterFamily          OtherKey // key.converter.
	ValueConverterFamily        OtherKey // value.converter.
	HeaderConverter             OtherKey // header.converter
	HeaderConverterFamily       OtherKey // header.converter.
	SchemaGeneratorClass        OtherKey // schema.generator.class
	ConsumerOverrideFamily      OtherKey // consumer.override.
	ProducerOverrideFamily      OtherKey // producer.override.
	AdminOverrideFamily         OtherKey // admin.override.
	ConfigActionReload          OtherKey // config.action.reload
	ErrorsRetryTimeout          OtherKey // errors.retry.timeout
	ErrorsRetryDelayMaxMs       OtherKey // errors.retry.delay.max.ms
	ErrorsLogIncludeMessages    OtherKey // errors.log.include.messages
	Predicates                  OtherKey // predicates
	PredicatesFamily            OtherKey // predicates.
	RetryBackoffMs              OtherKey // retry.backoff.ms
	S3ElasticBufferEnable       OtherKey // s3.elastic.buffer.enable
	S3ElasticBufferInitCapacity OtherKey // s3.elastic.buffer.init.capacity
	S3HttpSendExpectContinue    OtherKey // s3.http.send.expect.continue

	// Never accepted: they would change the archived records.
	Transforms       OtherKey // transforms
	TransformsFamily OtherKey // transforms.

	all       []*Spec
	exact     map[string]*Spec
	alsoNamed map[string]*Spec
	prefixes  []*Spec
}

// declarer collects the specs in declaration order.
type declarer struct{ all []*Spec }

func (d *declarer) add(s Spec, k Kind) *Spec {
	if s.Kind == KindString {
		s.Kind = k
	}
	p := &s
	d.all = append(d.all, p)
	return p
}

func (d *declarer) str(s Spec) StringKey    { return StringKey{d.add(s, KindString)} }
func (d *declarer) int(s Spec) IntKey       { return IntKey{d.add(s, KindInt)} }
func (d *declarer) bool(s Spec) BoolKey     { return BoolKey{d.add(s, KindBool)} }
func (d *declarer) list(s Spec) ListKey     { return ListKey{d.add(s, KindList)} }
func (d *declarer) choice(s Spec) ChoiceKey { return ChoiceKey{d.add(s, KindChoice)} }
func (d *declarer) other(s Spec) OtherKey   { return OtherKey{d.add(s, KindString)} }

// NewKeys declares every key kafkas3 knows, once: its name, type, default,
// bounds or choices, doc, the commands that use it and whether it is a
// secret. It is built on each call (the package keeps no globals).
//
// Decisions worth knowing:
//   - store.local.dir is the one setting that selects the local-directory
//     store. storage.class is accepted for Connect compatibility; "local" or
//     "file" there also needs store.local.dir.
//   - errors.tolerance, the dead letter queue keys and errors.log.enable act
//     as in Kafka Connect, for the sink. errors.retry.* and
//     errors.log.include.messages are ignored.
//   - key.converter and value.converter (with their schema.registry.url,
//     basic.auth.* and schemas.enable) are active; their other settings
//     (key.converter.* and value.converter.*) are ignored.
//   - transforms change records, and an archive must hold them unchanged, so
//     transforms and transforms.* are rejected rather than ignored.
//   - Keys of the other command are ignored, so sink and source can share a file.
func NewKeys() *Keys {
	d := &declarer{}
	k := declare(d)
	k.all = d.all
	k.exact = map[string]*Spec{}
	for _, s := range k.all {
		if s.Prefix {
			k.prefixes = append(k.prefixes, s)
		} else {
			k.exact[s.Name] = s
		}
	}
	k.alsoNamed = map[string]*Spec{}
	for _, s := range k.all {
		for _, n := range s.AlsoNamed {
			k.alsoNamed[n] = s
		}
	}
	// Longest prefix first.
	sort.Slice(k.prefixes, func(a, b int) bool { return len(k.prefixes[a].Name) > len(k.prefixes[b].Name) })
	return k
}

// declare is the key table: each key's handle, declared through d, which
// keeps the declaration order (the order of the reference).
func declare(d *declarer) *Keys {
	return &Keys{
		// Identity and Kafka client.
		Name: d.str(Spec{Name: "name", Required: Sink, Commands: Sink,
			Doc: "Name of this archiver. It names the default consumer group, as Kafka Connect does."}),
		BootstrapServers: d.list(Spec{Name: "bootstrap.servers", Required: Sink, Allowed: "comma-separated host:port list", Commands: Both,
			Doc: "Kafka brokers to connect to first. The source needs them unless --dry-run (or takes --bootstrap-servers)."}),
		GroupID: d.str(Spec{Name: "group.id", Commands: Sink, Allowed: "any string; default connect-<name>",
			Doc: "Consumer group. The default equals Kafka Connect's group for a sink of the same name, so kafkas3 resumes where the connector stopped."}),
		GroupInstanceID: d.str(Spec{Name: "group.instance.id", Commands: Sink, Allowed: "any string, unique per instance",
			Doc: "Static group membership: a restarted instance with the same id takes its partitions back at once instead of waiting for session.timeout.ms. Use a stable per-host value (for example the host name) under systemd."}),
		ClientID: d.str(Spec{Name: "client.id", Commands: Both, Allowed: "any string",
			Doc: "Kafka client id of the sink's consumer and the source's producer, as Kafka's client.id: broker quotas on a client id apply to it (a restore into a live cluster, with --max-bytes-per-sec). Default: the Kafka client's own (kgo)."}),
		SessionTimeoutMs: d.int(Spec{Name: "session.timeout.ms", Default: "45000", Min: 6000, Max: 1800000, Commands: Sink,
			Doc: "How long the group waits for a silent instance (a crashed one) before giving its partitions to the others; Kafka's default."}),
		SecurityProtocol: d.choice(Spec{Name: "security.protocol", Default: "PLAINTEXT", Commands: Both,
			Choices: []Choice{{Name: "PLAINTEXT"}, {Name: "SSL"}, {Name: "SASL_PLAINTEXT"}, {Name: "SASL_SSL"}},
			Doc:     "How to talk to the brokers: plain TCP or TLS, with or without SASL."}),
		SASLMechanism: d.choice(Spec{Name: "sasl.mechanism", Commands: Both,
			Choices: []Choice{{Name: "PLAIN"}, {Name: "SCRAM-SHA-256"}, {Name: "SCRAM-SHA-512"},
				{Name: "OAUTHBEARER"}, {Name: "AWS_MSK_IAM"}, {Name: "GSSAPI"}},
			Doc: "SASL mechanism; required when security.protocol is SASL_PLAINTEXT or SASL_SSL. " +
				"PLAIN and SCRAM take a user and password; OAUTHBEARER a token file or OAuth client credentials (sasl.oauthbearer.*); " +
				"AWS_MSK_IAM signs with AWS credentials of the default chain (Amazon MSK); GSSAPI is Kerberos with a keytab. See docs/operations.md, \"Kafka authentication\"."}),
		SASLUsername: d.str(Spec{Name: "sasl.username", Commands: Both,
			Doc: "SASL user name of PLAIN and SCRAM (kafkas3's simple form of sasl.jaas.config's username)."}),
		SASLPassword: d.str(Spec{Name: "sasl.password", Secret: true, Commands: Both,
			Doc: "SASL password of PLAIN and SCRAM."}),
		SASLJaasConfig: d.str(Spec{Name: "sasl.jaas.config", Secret: true, Commands: Both, Allowed: "one JAAS login module line: <class> required key=\"value\" ... ;",
			Doc: "The JAAS login line of Java clients, as Kafka Connect worker configs carry it; the login module must be the one of sasl.mechanism. Options kafkas3 understands: " +
				"PlainLoginModule and ScramLoginModule: username, password. OAuthBearerLoginModule: clientId, clientSecret, scope, extension_<name> (SASL extensions). " +
				"IAMLoginModule (AWS_MSK_IAM): awsProfileName, awsRoleArn, awsRoleSessionName, awsRoleExternalId, awsStsRegion (awsDebugCreds, awsMaxRetries, awsMaxBackOffTimeMs are accepted without effect). " +
				"Krb5LoginModule (GSSAPI): useKeyTab=true, keyTab, principal, serviceName (storeKey, doNotPrompt, useTicketCache=false, isInitiator, refreshKrb5Config, debug are accepted without effect). Any other option is an error."}),
		SASLOAuthTokenEndpointURL: d.str(Spec{Name: "sasl.oauthbearer.token.endpoint.url", Commands: Both, Allowed: "file:/path, or an http(s) URL",
			Doc: "OAUTHBEARER: as in Kafka, a file: URL names a file holding the token (a JWT), read again at every authentication, so a token rotated in place (for example a Kubernetes projected token) is used from the next connection or re-authentication on; " +
				"an http(s) URL is the OAuth 2 token endpoint, asked with the client_credentials grant (an https endpoint is verified against the system's CAs). kafkas3 connects only where this key says; Java's org.apache.kafka.sasl.oauthbearer.allowed.urls allow list has no counterpart."}),
		SASLOAuthClientID: d.str(Spec{Name: "sasl.oauthbearer.client.credentials.client.id", Commands: Both, AlsoNamed: []string{"sasl.oauthbearer.client.id"},
			Doc: "OAUTHBEARER client id for the token endpoint (Kafka 4.1's key; sasl.jaas.config's clientId is the older form)."}),
		SASLOAuthClientSecret: d.str(Spec{Name: "sasl.oauthbearer.client.credentials.client.secret", Secret: true, Commands: Both, AlsoNamed: []string{"sasl.oauthbearer.client.secret"},
			Doc: "OAUTHBEARER client secret for the token endpoint (Kafka 4.1's key; sasl.jaas.config's clientSecret is the older form)."}),
		SASLOAuthScope: d.str(Spec{Name: "sasl.oauthbearer.scope", Commands: Both,
			Doc: "OAUTHBEARER scope requested from the token endpoint; none when unset (sasl.jaas.config's scope is the older form)."}),
		SASLOAuthHeaderURLEncode: d.bool(Spec{Name: "sasl.oauthbearer.header.urlencode", Default: "false", Commands: Both,
			Doc: "URL-encode the client id and secret before they are joined in the token request's Basic Authorization header, as Kafka does with this key."}),
		SASLOAuthSubClaimName: d.str(Spec{Name: "sasl.oauthbearer.sub.claim.name", Default: "sub", Commands: Both, Allowed: "a claim name",
			Doc: "OAUTHBEARER: the claim holding the token's subject; as Kafka's client, kafkas3 sends no token without it (nor an expired one)."}),
		SASLOAuthScopeClaimName: d.str(Spec{Name: "sasl.oauthbearer.scope.claim.name", Default: "scope", Commands: Both, Allowed: "a claim name",
			Doc: "OAUTHBEARER: the claim holding the token's scopes; when the token has it, it must be a string of space-separated scopes or a list of strings, as Kafka's client checks."}),
		SASLLoginCallbackHandlerClass: d.choice(Spec{Name: "sasl.login.callback.handler.class", Commands: Both,
			Choices: []Choice{{Name: "OAuthBearerLoginCallbackHandler", Aliases: []string{
				"org.apache.kafka.common.security.oauthbearer.OAuthBearerLoginCallbackHandler",
				"org.apache.kafka.common.security.oauthbearer.secured.OAuthBearerLoginCallbackHandler"}}},
			Doc: "Accepted with Kafka's OAuthBearerLoginCallbackHandler, which Java clients need for sasl.oauthbearer.token.endpoint.url; kafkas3 needs no class."}),
		SASLClientCallbackHandlerClass: d.choice(Spec{Name: "sasl.client.callback.handler.class", Commands: Both,
			Choices: []Choice{{Name: "IAMClientCallbackHandler", Aliases: []string{"software.amazon.msk.auth.iam.IAMClientCallbackHandler"}}},
			Doc:     "Accepted with aws-msk-iam-auth's IAMClientCallbackHandler, which Java clients need for AWS_MSK_IAM; kafkas3 needs no class."}),
		SASLLoginConnectTimeoutMs: d.int(Spec{Name: "sasl.login.connect.timeout.ms", Default: "10000", Min: 1, Max: maxInt32, Commands: Both,
			Doc: "OAUTHBEARER: how long connecting to the token endpoint may take."}),
		SASLLoginReadTimeoutMs: d.int(Spec{Name: "sasl.login.read.timeout.ms", Default: "10000", Min: 1, Max: maxInt32, Commands: Both,
			Doc: "OAUTHBEARER: how long the token endpoint may take to answer."}),
		SASLKerberosServiceName: d.str(Spec{Name: "sasl.kerberos.service.name", Commands: Both,
			Doc: "GSSAPI: the Kerberos service name of the brokers (the primary of their principal, usually kafka); kafkas3 asks for a ticket of <service>/<broker host>. sasl.jaas.config's serviceName is the older form."}),
		Kafkas3Krb5Conf: d.str(Spec{Name: "kafkas3.krb5.conf", Default: "/etc/krb5.conf", Commands: Both, Allowed: "path to a krb5.conf file",
			Doc: "kafkas3 only: the Kerberos configuration (realms, KDCs, default_realm) of GSSAPI; Java clients take it from -Djava.security.krb5.conf."}),
		SASLLoginRefreshFamily: d.other(Spec{Name: "sasl.login.refresh.", Prefix: true, Status: Ignored, Commands: Both,
			Doc: "Java's token refresh timing; kafkas3 reads a token file at every authentication and renews a client-credentials token after 80% of its lifetime."}),
		SASLLoginRetryFamily: d.other(Spec{Name: "sasl.login.retry.", Prefix: true, Status: Ignored, Commands: Both,
			Doc: "Java's token request retries; kafkas3 retries the authentication as it retries a connection."}),
		SASLKerberosTicketFamily: d.other(Spec{Name: "sasl.kerberos.ticket.", Prefix: true, Status: Ignored, Commands: Both,
			Doc: "Java's Kerberos ticket renewal timing; kafkas3's Kerberos client renews its tickets itself."}),
		SSLCALocation: d.str(Spec{Name: "ssl.ca.location", Commands: Both, Allowed: "path to a PEM file",
			Doc: "CA certificates to trust for TLS to the brokers; the system pool when unset."}),
		SSLCertificateLocation: d.str(Spec{Name: "ssl.certificate.location", Commands: Both, Allowed: "path to a PEM file",
			Doc: "Client certificate for TLS client authentication; needs ssl.key.location."}),
		SSLKeyLocation: d.str(Spec{Name: "ssl.key.location", Commands: Both, Allowed: "path to a PEM file",
			Doc: "Private key of ssl.certificate.location."}),
		SSLTruststoreLocation: d.str(Spec{Name: "ssl.truststore.location", Commands: Both, Allowed: "path to a JKS or PKCS12 file",
			Doc: "Java truststore (as in a Kafka Connect worker config) whose certificates are the CAs to trust for TLS to the brokers; instead of ssl.ca.location."}),
		SSLTruststorePassword: d.str(Spec{Name: "ssl.truststore.password", Secret: true, Commands: Both,
			Doc: "Password of ssl.truststore.location; kafkas3 checks the file's integrity with it, so it is needed."}),
		SSLTruststoreType: d.choice(Spec{Name: "ssl.truststore.type", Default: "JKS", Commands: Both,
			Choices: []Choice{{Name: "JKS"}, {Name: "PKCS12"}},
			Doc:     "File format of ssl.truststore.location; Kafka's default JKS."}),
		SSLKeystoreLocation: d.str(Spec{Name: "ssl.keystore.location", Commands: Both, Allowed: "path to a JKS or PKCS12 file",
			Doc: "Java keystore holding the client's private key and certificate chain for TLS client authentication; instead of ssl.certificate.location and ssl.key.location. It must hold exactly one private key entry."}),
		SSLKeystorePassword: d.str(Spec{Name: "ssl.keystore.password", Secret: true, Commands: Both,
			Doc: "Password of ssl.keystore.location; required with it."}),
		SSLKeystoreType: d.choice(Spec{Name: "ssl.keystore.type", Default: "JKS", Commands: Both,
			Choices: []Choice{{Name: "JKS"}, {Name: "PKCS12"}},
			Doc:     "File format of ssl.keystore.location; Kafka's default JKS."}),
		SSLKeyPassword: d.str(Spec{Name: "ssl.key.password", Secret: true, Commands: Both,
			Doc: "Password of the private key in ssl.keystore.location when it differs from ssl.keystore.password (JKS only: a PKCS12 key has the store's password)."}),
		IsolationLevel: d.choice(Spec{Name: "isolation.level", Default: "read_committed", Commands: Sink,
			Choices: []Choice{{Name: "read_committed"}, {Name: "read_uncommitted"}},
			Doc:     "Which records the sink reads. read_committed archives committed records only: records of aborted transactions never reach the archive, and --once stops at the last stable offset. Kafka Connect's consumer defaults to read_uncommitted, which archives aborted records as if they were committed; set read_uncommitted to archive exactly what such a connector did."}),
		ConsumerOverrideIsolationLevel: d.choice(Spec{Name: "consumer.override.isolation.level", Commands: Sink,
			Choices: []Choice{{Name: "read_committed"}, {Name: "read_uncommitted"}},
			Allowed: "read_committed, read_uncommitted; unset means isolation.level",
			Doc:     "Kafka Connect's per-connector form of isolation.level; it wins over isolation.level when set, as in Connect."}),

		// What to read.
		Topics: d.list(Spec{Name: "topics", Commands: Both, Allowed: "comma-separated topic names",
			Doc: "Topics to archive. Set exactly one of topics and topics.regex. The source restores them when --topics is not given, and refuses to write into them (feedback-loop guard)."}),
		TopicsRegex: d.str(Spec{Name: "topics.regex", Commands: Both, Allowed: "a regular expression (RE2 syntax)",
			Doc: "Archive every topic whose whole name matches this expression. Set exactly one of topics and topics.regex. The source restores the matching archived topics when --topics is not given, and refuses to write into matching topics (feedback-loop guard)."}),

		// Object layout.
		TopicsDir: d.str(Spec{Name: "topics.dir", Default: "topics", Commands: Both,
			Doc: "Key prefix above the topic folders; empty means no prefix."}),
		DirectoryDelim: d.str(Spec{Name: "directory.delim", Default: "/", Commands: Both, Allowed: "non-empty string",
			Doc: "Separator between the parts of an object key."}),
		FileDelim: d.str(Spec{Name: "file.delim", Default: "+", Commands: Both, Allowed: "non-empty string",
			Doc: "Separator between topic, partition and start offset in a file name."}),
		FilenameOffsetZeroPadWidth: d.int(Spec{Name: "filename.offset.zero.pad.width", Default: "10", Min: 0, Max: 19, Commands: Both,
			Doc: "Digits the start offset in a file name is zero-padded to."}),

		// The archive index (kafkas3's own, not Confluent's).
		Kafkas3IndexEnabled: d.bool(Spec{Name: "kafkas3.index.enabled", Default: "true", Commands: Sink,
			Doc: "Write the archive index: for each partition rotation, before its offset is committed, one object <kafkas3.index.prefix>index/<topic>/<partition>/<commit offset, 20 digits>-<writer>.jsonl (writer: 12 hex digits of the SHA-256 of group.id) listing every object of the rotation with its offsets, record count, timestamps, size and checksums (kafkas3.index.digest). kafkas3 verify and the source use it to prove an archive complete; false writes no index (one PUT less per rotation)."}),
		Kafkas3IndexPrefix: d.str(Spec{Name: "kafkas3.index.prefix", Default: "_kafkas3/", Commands: Both, Allowed: "folder names each ending in \"/\", outside topics.dir",
			Doc: "Key prefix of the archive index. It must lie outside topics.dir so query engines scanning topics.dir never see it; with an empty topics.dir the source and kafkas3 verify skip it rather than take it for a topic folder (so no topic may be named like its first folder)."}),

		Kafkas3IndexDigest: d.choice(Spec{Name: "kafkas3.index.digest", Default: "crc32c", Commands: Sink,
			Choices: []Choice{{Name: "crc32c"}, {Name: "sha256"}},
			Doc:     "kafkas3 only: the checksums the archive index gives for each object. crc32c: the CRC32C of the whole object, computed while writing at memory speed; the S3 store sends it with the object (a FULL_OBJECT checksum for multipart uploads), verifies the bytes on receipt and keeps it, so kafkas3 verify proves every object without downloading it: by the ETag the index records and the listing gives, or else with one HEAD request. sha256: the SHA-256 as well (about 0.5-0.7 CPU seconds per GB written, against 0.035 for the CRC32C), for those who want a cryptographic digest in the index; verify --deep and the source check both. Needs kafkas3.index.enabled."}),
		Kafkas3IndexCheckpointInterval: d.int(Spec{Name: "kafkas3.index.checkpoint.interval", Default: "100", Min: 0, Max: maxInt32, Commands: Sink,
			Doc: "kafkas3 only: after every this many index objects of a partition (and at the end of --once, and at a partition's first commit of a run when its writer has no checkpoint yet), once their offsets are committed, write one checkpoint <kafkas3.index.prefix>checkpoints/<topic>/<partition>/<commit, 20 digits>-<writer>.jsonl.gz holding every entry of this sink's index objects up to that commit, so that kafkas3 verify and the source read the newest checkpoint and the index objects after it instead of the whole index. A checkpoint is derived data: a failure to write one is a warning and never delays a commit. 0 writes none but the start checkpoint a run writes before its first index object of a partition when its writer has none at or below the offset it starts from (with no entry for a new group), which readers need to list only the index objects after the checkpoints (kafkas3 index rebuild can write the others later); needs kafkas3.index.enabled."}),
		OffsetsSnapshotIntervalMs: d.int(Spec{Name: "offsets.snapshot.interval.ms", Default: "60000", Min: 0, Max: maxInt64, Commands: Sink,
			Doc: "kafkas3 only: every this many milliseconds, and at the end of --once after its final commit, snapshot each archived topic's partition end offsets (last stable offsets) and the committed offsets of every consumer group on it (see groups.regex; never the sink's own group nor kafkas3-restore-* groups), taken together, into <kafkas3.index.prefix>snapshots/<topic>/<wall time ms, 20 digits>-<writer>.json. A snapshot equal to the previous one is not written again. kafkas3 source --restore-groups restores the groups from them. Missing ACLs (DESCRIBE on the groups or the cluster) give one warning; archiving goes on. 0 writes none; needs kafkas3.index.enabled."}),
		GroupsRegex: d.str(Spec{Name: "groups.regex", Commands: Sink, Allowed: "a regular expression (RE2 syntax)",
			Doc: "kafkas3 only: snapshot only the consumer groups whose whole name matches this expression (offsets.snapshot.interval.ms); empty means every group."}),
		Kafkas3TopicsCheckIntervalMs: d.int(Spec{Name: "kafkas3.topics.check.interval.ms", Default: "300000", Min: 1000, Max: maxInt32, Commands: Sink,
			Doc: "How often a sink that runs until stopped describes the archived topics again (it always does at start, --once too): partition count, replication factor and every config set on the topic (not the broker defaults). A description that differs from the latest one stored is written to <kafkas3.index.prefix>topics/<topic>/<wall time ms, 20 digits>-<writer>.json; the source creates missing targets from it (--create-topics). Needs kafkas3.index.enabled; a broker that refuses DescribeConfigs gives one warning and archiving goes on."}),
		Kafkas3TopicRecreated: d.choice(Spec{Name: "kafkas3.topic.recreated", Default: "fail", Commands: Sink,
			Choices: []Choice{{Name: "fail"}, {Name: "new-generation"}},
			Doc:     "kafkas3 only: what the sink does with a topic that was deleted and created again under the same name (a new Kafka topic id, offsets from 0 again, so Confluent's object names would collide with the archived ones). The sink records each topic's id in the archive and checks it at every start, at every partition assignment and every kafkas3.topics.check.interval.ms; offsets that go back are checked too. fail: it stops archiving that topic (the others go on; --once exits 1 at its end) with an error naming the topic, both ids and the archived offsets, and never overwrites the old topic's objects. new-generation: it archives the new topic beside the old one, as generation n under <topics.dir>/generation=n/ (index under <kafkas3.index.prefix>generation=n/), from the new topic's first offset, with Confluent's object names; the old generation stays where it was, restorable (kafkas3 source and verify --generation). Needs kafkas3.index.enabled (the ids are kept in the index)."}),

		Kafkas3LogIntervalMs: d.int(Spec{Name: "kafkas3.log.interval.ms", Default: "30000", Min: 1000, Max: maxInt32, Commands: Sink,
			Doc: "kafkas3 only: how often the sink logs its progress line at info level: records, bytes and records fetched per second, objects completed in the interval, the consumer lag summed over its partitions and the run's totals. An interval in which nothing was fetched or completed while records wait sets /readyz's progress not ready (--metrics-addr)."}),

		// Rotation.
		FlushSize: d.int(Spec{Name: "flush.size", Min: 1, Max: maxInt64, Required: Sink, Commands: Sink,
			Doc: "Records per file; the count covers all open files of one Kafka partition."}),
		RotateIntervalMs: d.int(Spec{Name: "rotate.interval.ms", Default: "-1", Min: -1, Max: maxInt64, Commands: Sink,
			Doc: "Rotate (complete every open file of the Kafka partition and commit) once the records of the open files span this many milliseconds; -1 disables. With a time-based partitioner (time, daily, hourly) the span is measured with its timestamp.extractor, and a record of a later time bucket than any open one rotates too, as in Confluent's connector (so each bucket's records of in-order data end up in one file per flush.size); a late record (an earlier bucket) goes into its bucket's open file without rotating. With the other partitioners kafkas3 measures the Kafka record timestamps (Confluent's connector ignores the key there). Never fires on an idle partition. Deterministic unless the extractor is Wallclock."}),
		RotateScheduleIntervalMs: d.int(Spec{Name: "rotate.schedule.interval.ms", Default: "-1", Min: -1, Max: maxInt64, Commands: Sink,
			Doc: "Close files on a wall-clock schedule, also on idle partitions; -1 disables. Needs timezone. As in Confluent's connector the rotations fall on multiples of the interval counted from midnight in timezone, and on each midnight (so an interval that does not divide a day, or exceeds one, starts again every day). Not deterministic: weakens exactly-once file boundaries."}),
		Timezone: d.str(Spec{Name: "timezone", Commands: Both, Allowed: "IANA zone name, e.g. UTC or Europe/Berlin",
			Doc: "Time zone for scheduled rotation and time-based partitioning."}),
		Locale: d.str(Spec{Name: "locale", Commands: Both, Allowed: "locale tag, e.g. en or en_US",
			Doc: "Locale of the time-based partitioners (time, daily, hourly; required there). Names in path.format (MMM, EEE) are printed in English only, so they need an en locale."}),

		// Store selection.
		StorageClass: d.choice(Spec{Name: "storage.class", Default: "s3", Commands: Both,
			Choices: []Choice{
				{Name: "s3", Aliases: []string{"io.confluent.connect.s3.storage.S3Storage", "S3Storage"}},
				{Name: "local", Aliases: []string{"file"}},
			},
			Doc: "Object store kind. Accepted for Connect compatibility; store.local.dir is what selects the local store."}),
		StoreLocalDir: d.str(Spec{Name: "store.local.dir", Commands: Both, Allowed: "directory path",
			Doc: "kafkas3 only: write objects under this local directory instead of S3. Setting it selects the local store; the S3 keys are then not needed."}),

		// S3.
		S3BucketName: d.str(Spec{Name: "s3.bucket.name", Commands: Both, Allowed: "S3 bucket name; required for S3",
			Doc: "Bucket that holds the archive. Checked at load time against S3's naming rules for general purpose buckets (3 to 63 lowercase letters, digits, '.' and '-', starting and ending with a letter or digit, no '..', not an IP address, none of the prefixes and suffixes AWS reserves), so a name S3 would refuse is reported with the other problems instead of as a 400 from the store; not checked with store.local.dir."}),
		S3Region: d.str(Spec{Name: "s3.region", Default: "us-west-2", Commands: Both, Allowed: "non-empty string",
			Doc: "Region of the bucket."}),
		StoreURL: d.str(Spec{Name: "store.url", Commands: Both, Allowed: "URL; https:// is added when there is no scheme",
			Doc: "Endpoint of a non-AWS S3-compatible store. Over https:// the system's CAs are trusted; for a store whose certificate a private CA signed, set the environment variable AWS_CA_BUNDLE (or ca_bundle in the AWS config profile) to that CA's PEM file."}),
		S3PathStyleAccessEnabled: d.bool(Spec{Name: "s3.path.style.access.enabled", Default: "true", Commands: Both,
			Doc: "Address the bucket in the URL path rather than in the host name."}),
		S3PathStyleAccess: d.bool(Spec{Name: "s3.path.style.access", Default: "true", Commands: Source,
			Doc: "The source's name for s3.path.style.access.enabled; when both are set they must agree."}),
		S3PartSize: d.int(Spec{Name: "s3.part.size", Default: "26214400", Min: 5242880, Max: maxInt32, Commands: Sink,
			Doc: "Bytes per multipart-upload part."}),
		S3PartRetries: d.int(Spec{Name: "s3.part.retries", Default: "3", Min: 0, Max: maxInt32, Commands: Both,
			Doc: "Retries of a failed S3 request."}),
		S3RetryBackoffMs: d.int(Spec{Name: "s3.retry.backoff.ms", Default: "200", Min: 0, Max: maxInt64, Commands: Both,
			Doc: "Base of the exponential, jittered wait between S3 retries, in milliseconds."}),
		S3CompressionType: d.choice(Spec{Name: "s3.compression.type", Default: "none", Commands: Both,
			Choices: []Choice{{Name: "none"}, {Name: "gzip"}, {Name: "zstd"}},
			Doc:     "Compress json and bytes files, and .keys/.headers files in json or bytes (avro and parquet compress inside the file and ignore it, as in Confluent's connector). gzip adds .gz to the name: Confluent's own, read by everything (Athena, Hive, Spark, DuckDB, pyarrow). zstd adds .zst: kafkas3's (Confluent's connector has no zstd), one zstd frame per file, read by zstd, DuckDB and pyarrow; 8-12 times as fast as gzip on text where gzip works hard, but 14-23% larger on the benchmark's vocabulary JSON (equal on random letters), and an encoder of about 2.2 MiB per open file past 128 KiB (gzip: 160 KiB). See docs/sink.md, \"Compression: gzip or zstd\". The source reads the objects with this extension."}),
		S3CompressionLevel: d.int(Spec{Name: "s3.compression.level", Default: "-1", Min: -1, Max: 9, Commands: Sink,
			Doc: "Compression level. gzip: -1, the default, keeps the size of level 6 (the default of zlib and of Java's Deflater, so of Confluent's connector) and takes level 1's speed where the data allow it: samples of each object (one 128 KiB chunk in 32, and the next one whenever level 1's ratio moves) are compressed at both levels, and while level 1 is within 2.5% of level 6 the chunks between samples are compressed at level 1 (random letters, base64: 3-4 times as fast), else at level 6 (text with many repeats, where level 1 is 20-30% larger); objects stay within 3% of one level-6 stream on data that keep their nature between samples (a test mixes letters and text). 0 (stored) to 9 (smallest) are compress/flate's levels for every chunk: each object is one gzip stream within 0.1% of one compress/gzip stream of the same bytes at that level (1.2% at level 1). Level 6 is CPU-heavy on repetitive text: on this project's 2-core test machine about 85 CPU seconds per GB of the benchmark's vocabulary JSON (12 MB/s per core), where level 1 is 7 times as fast and 27% larger. See BENCHMARKS.md. With zstd: -1, the default, is klauspost/compress's default level (about zstd -3); 0..2 its fastest (about zstd -1), 3..5 its default, 6..8 its better (about zstd -7), 9 its best (about zstd -11); an open file past 128 KiB holds an encoder of about 1.3, 2.2, 5.0 and 35 MiB for them."}),
		S3SSEAName: d.choice(Spec{Name: "s3.ssea.name", Commands: Both,
			Choices: []Choice{{Name: "AES256"}, {Name: "aws:kms"}, {Name: "aws:kms:dsse"}},
			Doc:     "Server-side encryption algorithm for new objects; none when unset."}),
		S3SSEKMSKeyID: d.str(Spec{Name: "s3.sse.kms.key.id", Commands: Both,
			Doc: "KMS key for aws:kms or aws:kms:dsse encryption."}),
		S3SSECustomerKey: d.str(Spec{Name: "s3.sse.customer.key", Secret: true, Commands: Both, Allowed: "base64 of 32 bytes",
			Doc: "Customer-provided key (SSE-C); with s3.ssea.name AES256 or unset."}),
		S3ACLCanned: d.choice(Spec{Name: "s3.acl.canned", Commands: Sink,
			Choices: []Choice{{Name: "private"}, {Name: "public-read"}, {Name: "public-read-write"},
				{Name: "authenticated-read"}, {Name: "log-delivery-write"}, {Name: "bucket-owner-read"},
				{Name: "bucket-owner-full-control"}, {Name: "aws-exec-read"}},
			Doc: "Canned ACL for new objects; none when unset."}),
		S3StorageClass: d.choice(Spec{Name: "s3.storage.class", Commands: Sink,
			Choices: []Choice{{Name: "STANDARD"}, {Name: "STANDARD_IA"}, {Name: "ONEZONE_IA"}, {Name: "INTELLIGENT_TIERING"},
				{Name: "GLACIER_IR"}, {Name: "GLACIER"}, {Name: "DEEP_ARCHIVE"}, {Name: "REDUCED_REDUNDANCY"}, {Name: "EXPRESS_ONEZONE"}, {Name: "OUTPOSTS"}},
			Doc: "kafkas3 only (Confluent's connector has none): the S3 storage class of every object, sent with every PutObject and CreateMultipartUpload; unset leaves the bucket's default (STANDARD). An archive tier (GLACIER, DEEP_ARCHIVE) goes on the records only (value objects and their .keys and .headers): the archive index under kafkas3.index.prefix stays in the default class, read at every sink start, restore and verify (STANDARD_IA and GLACIER_IR bill each object as 128 KiB, index objects included). GLACIER (Flexible Retrieval) and DEEP_ARCHIVE objects cannot be read before they are restored: kafkas3 source and verify --deep then stop before reading anything and name them (see the docs/sink.md, \"WORM buckets (S3 Object Lock) and storage classes\")."}),
		S3ObjectLockMode: d.choice(Spec{Name: "s3.object.lock.mode", Commands: Sink,
			Choices: []Choice{{Name: "GOVERNANCE"}, {Name: "COMPLIANCE"}},
			Doc:     "kafkas3 only: the S3 Object Lock retention mode of every object the sink writes (x-amz-object-lock-mode), until s3.object.lock.retain.days after its write; needs a bucket created with Object Lock. Unset: the bucket's default retention, if any, applies. Set or not, on a bucket with Object Lock the sink writes each object once: a replay of the same bytes is not written again and other bytes under an archived key are refused, naming the object (docs/sink.md, \"WORM buckets (S3 Object Lock) and storage classes\")."}),
		S3ObjectLockRetainDays: d.int(Spec{Name: "s3.object.lock.retain.days", Default: "0", Min: 0, Max: 36500, Commands: Sink,
			Doc: "Days each object is retained under s3.object.lock.mode, counted from its write (x-amz-object-lock-retain-until-date); set with s3.object.lock.mode. 0: no per-object retention."}),
		S3ObjectLockRewrite: d.choice(Spec{Name: "s3.object.lock.rewrite", Default: "refuse", Commands: Sink,
			Choices: []Choice{{Name: "refuse"}, {Name: "new-version"}},
			Doc:     "kafkas3 only: on a bucket with Object Lock, what the sink does when a key it writes already holds other bytes (not a replay of the same records: a sink of the same group with another flush.size, partitioner or rotate.schedule.interval.ms, or a --once run killed after uploading its last partial file and before committing it, with records added since). refuse: stop, naming the object (exit 1); the stored version stays. new-version: write a new version with a warning; the stored version stays under its retention, and the archive index describes the new one, which the source restores. The same bytes are never written again either way."}),
		AWSAccessKeyID: d.str(Spec{Name: "aws.access.key.id", Commands: Both,
			Doc: "Static access key; set with aws.secret.access.key, else the default credential chain is used."}),
		AWSSecretAccessKey: d.str(Spec{Name: "aws.secret.access.key", Secret: true, Commands: Both,
			Doc: "Static secret key; set with aws.access.key.id."}),
		S3CredentialsProviderClass: d.choice(Spec{Name: "s3.credentials.provider.class", Commands: Both,
			Choices: []Choice{
				{Name: "default", Aliases: []string{
					"software.amazon.awssdk.auth.credentials.DefaultCredentialsProvider",
					"com.amazonaws.auth.DefaultAWSCredentialsProviderChain"}},
				{Name: "assume-role", Aliases: []string{"io.confluent.connect.s3.auth.AwsAssumeRoleCredentialsProvider", "AwsAssumeRoleCredentialsProvider"}},
			},
			Doc: "Where the S3 credentials come from. default: aws.access.key.id/aws.secret.access.key when set, else the AWS default chain: environment, shared files, web identity (EKS IRSA: AWS_WEB_IDENTITY_TOKEN_FILE and AWS_ROLE_ARN, which the pod's service account sets), container and instance roles. assume-role (Confluent's AwsAssumeRoleCredentialsProvider): sign with temporary credentials of the role s3.credentials.provider.sts.role.arn, obtained from STS AssumeRole with aws.access.key.id/aws.secret.access.key when set, else with the default chain, and renewed before they expire. The environment variable AWS_ENDPOINT_URL_STS overrides the STS endpoint."}),
		S3STSRoleARN: d.str(Spec{Name: "s3.credentials.provider.sts.role.arn", Commands: Both, Allowed: "IAM role ARN, arn:<partition>:iam::<account>:role/<name>",
			Doc: "Role to assume; required by, and only used with, s3.credentials.provider.class AwsAssumeRoleCredentialsProvider."}),
		S3STSRoleSessionName: d.str(Spec{Name: "s3.credentials.provider.sts.role.session.name", Commands: Both, Allowed: "2 to 64 letters, digits and =,.@_-",
			Doc: "Session name of the assumed role (it appears in the role's CloudTrail events); unset lets the AWS SDK pick one."}),
		S3STSRoleExternalID: d.str(Spec{Name: "s3.credentials.provider.sts.role.external.id", Commands: Both,
			Doc: "External id the role's trust policy asks for; none is sent when unset."}),
		S3STSRegion: d.str(Spec{Name: "s3.credentials.provider.sts.region", Commands: Both,
			Doc: "Region of the STS endpoint for the assumed role; s3.region when unset."}),
		S3ProxyURL: d.str(Spec{Name: "s3.proxy.url", Commands: Both, Allowed: "http:// or https:// URL of an HTTP proxy; https:// is added when there is no scheme",
			Doc: "HTTP proxy for every S3 request (and the assumed role's STS requests). user:password@ in the URL is used unless s3.proxy.user/s3.proxy.password are set. Unset: the HTTPS_PROXY, HTTP_PROXY and NO_PROXY environment variables apply."}),
		S3ProxyUser: d.str(Spec{Name: "s3.proxy.user", Commands: Both,
			Doc: "User of s3.proxy.url (basic proxy authentication); wins over the URL's."}),
		S3ProxyPassword: d.str(Spec{Name: "s3.proxy.password", Secret: true, Commands: Both,
			Doc: "Password of s3.proxy.user; wins over the URL's."}),
		S3ObjectTagging: d.bool(Spec{Name: "s3.object.tagging", Default: "false", Commands: Sink,
			Doc: "Tag each object, once it is complete and before its offset is committed, as Confluent's connector does (PutObjectTagging): startOffset and endOffset, the Kafka offsets of its first and last record, and recordCount, its number of records, as decimal numbers. Value objects are tagged (a tombstone file's .keys object too, being its only object); .keys, .headers and index objects are not. Needs the S3 store and the s3:PutObjectTagging permission."}),
		S3ObjectTaggingPairs: d.list(Spec{Name: "s3.object.tagging.key.value.pairs", Commands: Sink, Allowed: "comma-separated key:value pairs, at most 7",
			Doc: "Extra tags for every tagged object, as key:value (the value is everything after the first ':'); with s3.object.tagging. Keys cannot be startOffset, endOffset or recordCount; S3 allows 10 tags per object."}),
		S3ObjectTaggingOnError: d.choice(Spec{Name: "s3.object.behavior.on.tagging.error", Default: "ignore", Commands: Sink,
			Choices: []Choice{{Name: "ignore"}, {Name: "fail"}},
			Doc:     "What a tag request that still fails after s3.part.retries does. ignore (Confluent's default): log a warning naming the object and go on (the object and its records are complete; only its tags are missing). fail: stop before the offset of its records is committed; the next run rewrites and tags the objects."}),

		// Format.
		FormatClass: d.choice(Spec{Name: "format.class", Required: Both, Commands: Both,
			Choices: choicesOf(format.Formats()),
			Doc:     "File format. Confluent class names and short names both work. avro and parquet need a schema-aware value.converter (AvroConverter, or JsonConverter with schemas)."}),
		AvroCodec: d.choice(Spec{Name: "avro.codec", Default: "null", Commands: Sink,
			Choices: []Choice{{Name: "null"}, {Name: "deflate"}, {Name: "snappy"}, {Name: "bzip2"}, {Name: "zstandard", Aliases: []string{"zstd"}}},
			Doc:     "Block compression inside .avro files (Confluent's null, deflate, snappy, bzip2, plus zstandard)."}),
		ParquetCodec: d.choice(Spec{Name: "parquet.codec", Default: "snappy", Commands: Both,
			Choices: []Choice{{Name: "none", Aliases: []string{"uncompressed"}}, {Name: "snappy"}, {Name: "gzip"}, {Name: "zstd"}, {Name: "lz4_raw"}, {Name: "brotli"},
				{Name: "lz4", Unsupported: true}, {Name: "lzo", Unsupported: true}},
			Doc: "Compression inside .parquet files; it also names the extension (.snappy.parquet, .gz.parquet, .zstd.parquet, .lz4raw.parquet, .br.parquet, .parquet). Hadoop-framed lz4 and lzo are not supported."}),

		// Converters.
		ValueConverter: d.choice(Spec{Name: "value.converter", Commands: Both, Choices: choicesOf(convert.Converters()),
			Doc: "How record values are decoded before writing, as Kafka Connect's converter: avro (Confluent wire format with a Schema Registry), json (JsonConverter), string, bytearray. Unset: the raw bytes."}),
		ValueConverterSchemaRegistryURL: d.str(Spec{Name: "value.converter.schema.registry.url", Commands: Both, Allowed: "URL, or comma-separated URLs",
			Doc: "Schema Registry of the value converter; required with avro. user:password@ in the URL is used with basic.auth.credentials.source URL. " +
				"Also, with any converter and format, the registry of the schemas that travel with the archive: the sink's source registry, whose schemas of Confluent-framed keys and values it records under the index prefix, and the source's target registry, where it registers them and whose ids it gives the records (--schema-ids; key.converter.schema.registry.url when this is unset)."}),
		ValueConverterBasicAuthCredentialsSource: d.choice(Spec{Name: "value.converter.basic.auth.credentials.source", Default: "URL", Commands: Both,
			Choices: []Choice{{Name: "URL"}, {Name: "USER_INFO"}},
			Doc:     "Where the registry credentials come from: the URL, or value.converter.basic.auth.user.info."}),
		ValueConverterBasicAuthUserInfo: d.str(Spec{Name: "value.converter.basic.auth.user.info", Secret: true, Commands: Both, Allowed: "user:password",
			Doc: "Registry credentials with basic.auth.credentials.source USER_INFO."}),
		ValueConverterSchemasEnable: d.bool(Spec{Name: "value.converter.schemas.enable", Default: "true", Commands: Both,
			Doc: "JsonConverter: values are {\"schema\", \"payload\"} envelopes (Connect's default); false: plain JSON without a schema."}),
		KeyConverter: d.choice(Spec{Name: "key.converter", Commands: Both, Choices: choicesOf(convert.Converters()),
			Doc: "How record keys are decoded, as value.converter. A key that cannot be decoded makes the record a bad record (see errors.tolerance). Unset: keys are not decoded."}),
		KeyConverterSchemaRegistryURL: d.str(Spec{Name: "key.converter.schema.registry.url", Commands: Both, Allowed: "URL, or comma-separated URLs",
			Doc: "Schema Registry of the key converter; required with avro."}),
		KeyConverterBasicAuthCredentialsSource: d.choice(Spec{Name: "key.converter.basic.auth.credentials.source", Default: "URL", Commands: Both,
			Choices: []Choice{{Name: "URL"}, {Name: "USER_INFO"}},
			Doc:     "Where the key converter's registry credentials come from."}),
		KeyConverterBasicAuthUserInfo: d.str(Spec{Name: "key.converter.basic.auth.user.info", Secret: true, Commands: Both, Allowed: "user:password",
			Doc: "Key converter registry credentials with USER_INFO."}),
		KeyConverterSchemasEnable: d.bool(Spec{Name: "key.converter.schemas.enable", Default: "true", Commands: Both,
			Doc: "JsonConverter keys: schema envelopes (Connect's default) or plain JSON."}),
		FormatBytearraySeparator: d.str(Spec{Name: "format.bytearray.separator", Default: "\n", Raw: true, Commands: Both, Allowed: "any string, whitespace kept",
			Doc: "Bytes written after each record by the bytes format."}),
		FormatBytearrayExtension: d.str(Spec{Name: "format.bytearray.extension", Default: ".bin", Commands: Both, Allowed: "string starting with a dot",
			Doc: "File extension of the bytes format, before .gz or .zst."}),
		PartitionerClass: d.choice(Spec{Name: "partitioner.class", Default: "default", Commands: Both,
			Choices: choicesOf(partition.Partitioners()),
			Doc: "How records map to folders (the encoded partition) below the topic, as Confluent's partitioners: default keeps Kafka's partitions (partition=<n>); field writes <field>=<value> for each of partition.field.name; time (TimeBasedPartitioner) prints path.format at the start of the record's time bucket of partition.duration.ms, in timezone; daily and hourly are time with path.format 'year'=YYYY/'month'=MM/'day'=dd (and /'hour'=HH) and one day (hour) per bucket. " +
				"A record the partitioner cannot place (no such field, a type it cannot print, no timestamp) is a bad record (errors.tolerance). Only the wall clock (timestamp.extractor=Wallclock) makes the layout depend on when the sink runs; see docs/sink.md, \"Partitioners\"."}),
		PartitionFieldName: d.list(Spec{Name: partition.KeyPartitionFieldName, Commands: Both, Allowed: "comma-separated field names, dotted for nested fields",
			Doc: "Fields of the record value that name the folders of partitioner.class=field (required there), in order: <field>=<value> joined by directory.delim. Integers, strings and booleans; a null is written null. Values need a schema (AvroConverter, JsonConverter with schemas) or a schemaless JSON object."}),
		PathFormat: d.str(Spec{Name: partition.KeyPathFormat, Commands: Both, Allowed: "a Joda-Time pattern, text in single quotes",
			Doc: "Folder pattern of partitioner.class=time (required there), printed at the bucket start in timezone with Joda-Time's letters (YYYY and yyyy are the calendar year, xxxx the week-year, ww the week, MM, dd, HH, mm, ss), e.g. 'year'=YYYY/'month'=MM/'day'=dd/'hour'=HH. A trailing directory.delim is stripped."}),
		PartitionDurationMs: d.int(Spec{Name: partition.KeyPartitionDurationMs, Default: "-1", Min: -1, Max: maxInt64, Commands: Both,
			Doc: "Width of a time bucket of partitioner.class=time, in milliseconds (required there, > 0): a record goes to the bucket starting at floor(local time / width) * width in timezone."}),
		TimestampExtractor: d.choice(Spec{Name: partition.KeyTimestampExtractor, Default: "Wallclock", Commands: Both,
			Choices: extractorChoices(),
			Doc: "Which time the time-based partitioners (time, daily, hourly) place a record by, and rotate.interval.ms measures: Wallclock (the sink's clock when it writes the record), Record (the Kafka record's timestamp) or RecordField (timestamp.field of the value). " +
				"Record and RecordField keep exactly-once archives (a replay rewrites the same objects byte for byte); Wallclock does not, as with Confluent's connector."}),
		TimestampField: d.str(Spec{Name: partition.KeyTimestampField, Default: "timestamp", Commands: Both, Allowed: "a field name, dotted for nested fields",
			Doc: "Value field holding the time for timestamp.extractor=RecordField: epoch milliseconds (int or long), an ISO-8601 string (2026-08-01T09:15:00Z; no offset means UTC), or a timestamp or date logical type."}),
		Kafkas3MaxOpenPartitions: d.int(Spec{Name: "kafkas3.max.open.partitions", Default: "32", Min: 1, Max: 100000, Commands: Sink,
			Doc: "kafkas3 only: how many encoded partitions (folders) one Kafka partition may have open files in at once. A record for a folder that is not open when this many are rotates first: every open file is completed and the offset committed, deterministically. Late records of time-based partitioners go to their own bucket's open file instead of cutting small files, so this bounds how far back they reach without a rotation (Confluent's connector has no bound; kafka-connect-storage-cloud #529, #574)."}),
		BehaviorOnNullValues: d.choice(Spec{Name: "behavior.on.null.values", Default: "fail", Commands: Sink,
			Choices: []Choice{{Name: "fail"}, {Name: "ignore"}, {Name: "write"}},
			Doc:     "What to do with a record whose value is null (a tombstone). write needs store.kafka.keys=true: it writes the tombstone's key (and headers, with store.kafka.headers) to .keys (.headers) objects under tombstone.encoded.partition, and a switch between tombstones and other records rotates."}),
		SchemaCompatibility: d.choice(Spec{Name: "schema.compatibility", Default: "NONE", Commands: Sink,
			Choices: []Choice{{Name: "NONE"}, {Name: "BACKWARD"}, {Name: "FORWARD"}, {Name: "FULL"}},
			Doc: "What a value schema different from the open file's does. NONE: it rotates (all open files of the partition are committed). " +
				"BACKWARD and FULL: a newer version rotates, an older one is projected to the file's schema. FORWARD: an older version rotates, a newer one is projected. " +
				"The modes other than NONE need registry versions (AvroConverter)."}),
		ErrorsTolerance: d.choice(Spec{Name: "errors.tolerance", Default: "none", Commands: Both,
			Choices: []Choice{{Name: "none"}, {Name: "all"}},
			Doc:     "none: a record that cannot be converted or written stops the sink, naming topic, partition and offset, and nothing from it on is committed. all: such records are skipped (sent to the dead letter queue when one is set)."}),
		ErrorsDeadletterqueueTopicName: d.str(Spec{Name: "errors.deadletterqueue.topic.name", Commands: Sink, Allowed: "a Kafka topic name; needs errors.tolerance=all",
			Doc: "Topic that receives bad records unchanged (key, value, headers, timestamp), on the same brokers; created when missing. A bad record's offset is committed only after the DLQ has it."}),
		ErrorsDeadletterqueueTopicReplicationFactor: d.int(Spec{Name: "errors.deadletterqueue.topic.replication.factor", Default: "3", Min: 1, Max: 32767, Commands: Sink,
			Doc: "Replication factor of a DLQ topic the sink creates, capped at the number of brokers."}),
		ErrorsDeadletterqueueContextHeadersEnable: d.bool(Spec{Name: "errors.deadletterqueue.context.headers.enable", Default: "false", Commands: Sink,
			Doc: "Add Connect's __connect.errors.* headers (topic, partition, offset, stage, class, exception class and message) to DLQ records."}),
		ErrorsLogEnable: d.bool(Spec{Name: "errors.log.enable", Default: "false", Commands: Sink,
			Doc: "Log each bad record (topic, partition, offset, error) at error level."}),

		// Source command.
		S3PollIntervalMs: d.int(Spec{Name: "s3.poll.interval.ms", Default: "60000", Min: 1, Max: maxInt64, Commands: Source,
			Doc: "How often the source looks for new objects, in milliseconds."}),
		ReadConcurrency: d.int(Spec{Name: "kafkas3.read.concurrency", Default: "64", Min: 1, Max: 1024, Commands: Source,
			Doc: "kafkas3 only: how many store requests kafkas3 source, kafkas3 verify and kafkas3 index rebuild keep in flight while they read the archive index (index objects, checkpoints, listings) and, in verify, the stored checksums of the objects its listing's ETags do not prove (one HEAD each); in the source, also the objects its proof reads before a restore (a dry run, --prove-first; objects of 16 MiB or more, with their .keys and .headers objects, are read 8 at a time, as a restore reads them) and the HEADs of its one-read check. A store that answers in tens of milliseconds is read about this many times faster than one request at a time."}),
		RecordBatchMaxSize: d.int(Spec{Name: "record.batch.max.size", Default: "200", Min: 1, Max: maxInt32, Commands: Source,
			Doc: "Accepted for compatibility with the Confluent source connector and range-checked, but it has no effect: " +
				"kafkas3 produces through franz-go, which batches by bytes (each batch at most the target topic's " +
				"max.message.bytes, read with DescribeConfigs), not by record count."}),
		BehaviorOnError: d.choice(Spec{Name: "behavior.on.error", Default: "fail", Commands: Source,
			Choices: []Choice{{Name: "fail"}, {Name: "ignore"}, {Name: "log"}},
			Doc: "What the source does with an object it cannot read as a whole (missing, truncated, not decoding, " +
				"size or checksum other than the archive index says, record count other than its .keys/.headers objects or its index entry) " +
				"and with a malformed key inside a topic folder. fail: stop before producing anything, naming every such object. " +
				"ignore and log: skip the object whole (none of its records) and report the gap it leaves in the log and the summary " +
				"(log also logs each malformed key). --allow-gaps skips such objects under fail too."}),

		// Confluent features not supported yet: accepted at their default only.
		S3WANMode: d.other(Spec{Kind: KindBool, Name: "s3.wan.mode", Status: Unsupported, Default: "false", Commands: Both,
			Doc: "S3 transfer acceleration."}),
		StoreKafkaKeys: d.bool(Spec{Name: "store.kafka.keys", Default: "false", Commands: Sink,
			Doc: "Also write each record's key to a parallel <base>.keys<ext> object (same start offset, same records in the same order), committed with its value object. A null key is kept (Confluent's connector refuses it): JSON keys objects write the line null, Avro and Parquet ones the null of the optional key schema; keys.format.class=bytes has no null, so there a null key is a bad record (see errors.tolerance)."}),
		StoreKafkaHeaders: d.bool(Spec{Name: "store.kafka.headers", Default: "false", Commands: Sink,
			Doc: "Also write each record's headers to a parallel <base>.headers<ext> object: an array of {key, value} (order and duplicates kept; a null value stays null). A record without headers gets an empty array and is restored with none (Confluent's connector refuses it)."}),
		StoreEnvelope: d.bool(Spec{Name: "store.envelope", Default: "false", Commands: Both,
			Doc: "Write each record whole, in a documented envelope: partition, offset, timestamp (ms), timestamp type, key, value and headers (order and duplicates kept), with null and empty told apart for the key, the value and each header value. " +
				"format.class json (one object per line, bytes as base64), avro or parquet (the record kafkas3.Envelope; a value with a schema, from AvroConverter or JsonConverter with schemas, is a typed nested field, other values are bytes). " +
				"Object names stay Confluent's. Tombstones and null keys are ordinary records, so behavior.on.null.values must stay fail; store.kafka.keys and store.kafka.headers cannot be combined with it (the envelope holds keys and headers). " +
				"kafkas3 source recognises envelope objects by their content (with or without this key) and restores every property, timestamps included (see --timestamps); " +
				"for the source this key only means that avro and parquet archives need no value.converter.schema.registry.url up front (typed envelope values still need one, and the restore stops before producing them without it)."}),
		KeysFormatClass: d.choice(Spec{Name: "keys.format.class", Default: "avro", Commands: Sink,
			Choices: choicesOf(format.KeysFormats()),
			Doc:     "Format of .keys objects. Avro keys keep their schema (AvroConverter, JsonConverter with schemas); other keys are the optional Avro [\"null\",\"bytes\"] ([\"null\",\"string\"] with StringConverter), as Connect types them, so a null key is a null. Parquet writes the same key as the field \"key\" of a record \"RecordKey\" (Confluent's envelope), with parquet.codec. JSON writes keys as the JSON format writes values, a null key as the line null and the text null as the string \"null\". bytes has no null: a null key is a bad record there. s3.compression.type applies to json and bytes."}),
		HeadersFormatClass: d.choice(Spec{Name: "headers.format.class", Default: "avro", Commands: Sink,
			Choices: choicesOf(format.HeadersFormats()),
			Doc:     "Format of .headers objects: avro (an array of {key: string, value: null or string} records), parquet (that array as the field \"headers\" of a record \"RecordHeaders\", Confluent's envelope, with parquet.codec) or json (a JSON array of {\"key\", \"value\"} per line; header values must be UTF-8). bytes cannot hold headers."}),
		TombstoneEncodedPartition: d.str(Spec{Name: "tombstone.encoded.partition", Default: "tombstone", Commands: Both,
			Doc: "Folder (encoded partition) of the .keys (and .headers) objects of tombstones with behavior.on.null.values=write; a name without directory.delim. The source restores the keys-only objects of this folder as tombstones (null values), in their place among the values."}),
		HiveIntegration: d.other(Spec{Kind: KindBool, Name: "hive.integration", Status: Unsupported, Default: "false", Commands: Both,
			Doc: "Hive table maintenance."}),

		// Kafka Connect only: accepted, reported once, no effect.
		ConnectorClass: d.other(Spec{Name: "connector.class", Status: Ignored, Commands: Both,
			Doc: "Connector implementation; checked to be the S3 connector of the running command, then ignored."}),
		TasksMax: d.other(Spec{Name: "tasks.max", Status: Ignored, Commands: Both,
			Doc: "Connect task count; kafkas3 scales by running more instances in the same group."}),
		KeyConverterFamily: d.other(Spec{Name: "key.converter.", Prefix: true, Status: Ignored, Commands: Both,
			Doc: "Other Connect converter settings (auto.register.schemas, ...)."}),
		ValueConverterFamily: d.other(Spec{Name: "value.converter.", Prefix: true, Status: Ignored, Commands: Both,
			Doc: "Other Connect converter settings (auto.register.schemas, ...)."}),
		HeaderConverter: d.other(Spec{Name: "header.converter", Status: Ignored, Commands: Both,
			Doc: "Connect converter; kafkas3 reads the raw bytes."}),
		HeaderConverterFamily: d.other(Spec{Name: "header.converter.", Prefix: true, Status: Ignored, Commands: Both,
			Doc: "Connect converter settings."}),
		SchemaGeneratorClass: d.other(Spec{Name: "schema.generator.class", Status: Ignored, Commands: Both,
			Doc: "Hive schema generator."}),
		ConsumerOverrideFamily: d.other(Spec{Name: "consumer.override.", Prefix: true, Status: Ignored, Commands: Both,
			Doc: "Connect per-connector client overrides; set the Kafka keys directly instead. Overrides of security.protocol, sasl.* and ssl.* are refused (kafkas3's clients would connect without them); values of credential-looking keys are masked."}),
		ProducerOverrideFamily: d.other(Spec{Name: "producer.override.", Prefix: true, Status: Ignored, Commands: Both,
			Doc: "Connect per-connector client overrides; set the Kafka keys directly instead. Overrides of security.protocol, sasl.* and ssl.* are refused (kafkas3's clients would connect without them); values of credential-looking keys are masked."}),
		AdminOverrideFamily: d.other(Spec{Name: "admin.override.", Prefix: true, Status: Ignored, Commands: Both,
			Doc: "Connect per-connector client overrides; set the Kafka keys directly instead. Overrides of security.protocol, sasl.* and ssl.* are refused (kafkas3's clients would connect without them); values of credential-looking keys are masked."}),
		ConfigActionReload: d.other(Spec{Name: "config.action.reload", Status: Ignored, Commands: Both,
			Doc: "Connect restart policy."}),
		ErrorsRetryTimeout: d.other(Spec{Name: "errors.retry.timeout", Status: Ignored, Commands: Both,
			Doc: "Connect conversion retry time."}),
		ErrorsRetryDelayMaxMs: d.other(Spec{Name: "errors.retry.delay.max.ms", Status: Ignored, Commands: Both,
			Doc: "Connect conversion retry delay."}),
		ErrorsLogIncludeMessages: d.other(Spec{Name: "errors.log.include.messages", Status: Ignored, Commands: Both,
			Doc: "Connect error logging."}),
		Predicates: d.other(Spec{Name: "predicates", Status: Ignored, Commands: Both,
			Doc: "Connect predicates; only used by transforms."}),
		PredicatesFamily: d.other(Spec{Name: "predicates.", Prefix: true, Status: Ignored, Commands: Both,
			Doc: "Connect predicate settings."}),
		RetryBackoffMs: d.other(Spec{Name: "retry.backoff.ms", Status: Ignored, Commands: Both,
			Doc: "Connect-level retry wait; kafkas3 uses s3.retry.backoff.ms."}),
		S3ElasticBufferEnable: d.other(Spec{Name: "s3.elastic.buffer.enable", Status: Ignored, Commands: Both,
			Doc: "Connector buffer sizing; kafkas3 bounds memory itself."}),
		S3ElasticBufferInitCapacity: d.other(Spec{Name: "s3.elastic.buffer.init.capacity", Status: Ignored, Commands: Both,
			Doc: "Connector buffer sizing; kafkas3 bounds memory itself."}),
		S3HttpSendExpectContinue: d.other(Spec{Name: "s3.http.send.expect.continue", Status: Ignored, Commands: Both,
			Doc: "HTTP detail of the Java SDK."}),

		// Never accepted: they would change the archived records.
		Transforms: d.other(Spec{Name: "transforms", Status: Rejected, Commands: Both,
			Doc: "Single message transforms change records; an archive keeps them unchanged."}),
		TransformsFamily: d.other(Spec{Name: "transforms.", Prefix: true, Status: Rejected, Commands: Both,
			Doc: "Settings of single message transforms."}),
	}
}

// All returns every declared key, in declaration order.
func (k *Keys) All() []*Spec { return k.all }

// Canonical returns the declared name of the key a user wrote as name:
// name itself, or the key it is another name for (Spec.AlsoNamed).
func (k *Keys) Canonical(name string) string {
	if s, ok := k.alsoNamed[name]; ok {
		return s.Name
	}
	return name
}

// Lookup returns the spec for name: an exact key, else the longest prefix
// family that holds it, else nil.
func (k *Keys) Lookup(name string) *Spec {
	if s, ok := k.exact[name]; ok {
		return s
	}
	for _, s := range k.prefixes {
		if strings.HasPrefix(name, s.Name) && len(name) > len(s.Name) {
			return s
		}
	}
	return nil
}

// ConverterKeys are the keys of one Connect converter: key.converter or
// value.converter and its settings.
type ConverterKeys struct {
	Class             ChoiceKey
	RegistryURL       StringKey
	CredentialsSource ChoiceKey
	UserInfo          StringKey
	SchemasEnable     BoolKey
}

// Converter returns the keys of value.converter, or of key.converter when
// key is true.
func (k *Keys) Converter(key bool) ConverterKeys {
	if key {
		return ConverterKeys{k.KeyConverter, k.KeyConverterSchemaRegistryURL, k.KeyConverterBasicAuthCredentialsSource,
			k.KeyConverterBasicAuthUserInfo, k.KeyConverterSchemasEnable}
	}
	return ConverterKeys{k.ValueConverter, k.ValueConverterSchemaRegistryURL, k.ValueConverterBasicAuthCredentialsSource,
		k.ValueConverterBasicAuthUserInfo, k.ValueConverterSchemasEnable}
}

// extractorChoices are timestamp.extractor's values, with the class names
// of Confluent's extractors as aliases.
func extractorChoices() []Choice {
	const prefix = "io.confluent.connect.storage.partitioner.TimeBasedPartitioner$"
	var out []Choice
	for _, n := range []string{"Wallclock", "Record", "RecordField"} {
		out = append(out, Choice{Name: n, Aliases: []string{prefix + n + "TimestampExtractor", n + "TimestampExtractor"}})
	}
	return out
}

// choicesOf returns the entries of a plug-in registry (formats,
// partitioners, converters) as a key's choices: each name with its aliases,
// in the registry's order.
func choicesOf[K comparable, S any](r registry.Registry[K, S]) []Choice {
	out := make([]Choice, 0, len(r.Entries))
	for _, e := range r.Entries {
		out = append(out, Choice{Name: e.Name, Aliases: e.Aliases(), Unsupported: e.Unsupported})
	}
	return out
}

// EnvName is the environment variable that sets key: KAFKAS3_ plus the key
// upper-cased with "." and "-" turned into "_".
func EnvName(key string) string {
	r := strings.NewReplacer(".", "_", "-", "_")
	return "KAFKAS3_" + strings.ToUpper(r.Replace(key))
}

// Is reports whether value means the choice named name.
func (s *Spec) Is(value, name string) bool {
	c, ok := s.Match(value)
	return ok && c.Name == name
}

// Match returns the choice value names, by its name or an alias, ignoring
// case.
func (s *Spec) Match(value string) (Choice, bool) {
	for _, c := range s.Choices {
		if strings.EqualFold(value, c.Name) {
			return c, true
		}
		for _, a := range c.Aliases {
			if strings.EqualFold(value, a) {
				return c, true
			}
		}
	}
	return Choice{}, false
}
