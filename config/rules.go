package config

import (
	"fmt"
	"slices"
	"strings"

	"github.com/kafkas3/kafkas3/format"
	"github.com/kafkas3/kafkas3/index"
	"github.com/kafkas3/kafkas3/partition"
)

// rule is one rule between keys: what it says, the commands it applies
// to, and its check. A check reads keys through the parser (a key read
// again does not repeat its own problem) and leaves alone keys that
// already failed.
type rule struct {
	says  string
	cmds  Command
	check func(p *valueParser)
}

// checkRules runs every rule of the command the settings were loaded for.
func (p *valueParser) checkRules() {
	for _, r := range rules(p.k) {
		if r.cmds&p.st.command != 0 {
			r.check(p)
		}
	}
}

// rules declares every rule between keys, once, beside the keys (NewKeys).
func rules(k *Keys) []rule {
	return []rule{
		{"kafkas3.topic.recreated=new-generation needs kafkas3.index.enabled (the topic ids and generations are kept in the index)", Sink, func(p *valueParser) {
			if v := p.choice(k.Kafkas3TopicRecreated); v == "new-generation" && !p.bool(k.Kafkas3IndexEnabled) {
				p.fail(k.Kafkas3TopicRecreated, v, "needs kafkas3.index.enabled=true: the topic ids and generations are kept in the archive index")
			}
		}},
		{"a SASL security.protocol needs sasl.mechanism, and sasl.mechanism a SASL protocol", Both, func(p *valueParser) {
			proto, mech := p.choice(k.SecurityProtocol), p.choice(k.SASLMechanism)
			sasl := strings.HasPrefix(proto, "SASL_")
			switch {
			case sasl && mech == "" && p.ok(k.SecurityProtocol) && p.ok(k.SASLMechanism):
				p.missing(k.SASLMechanism, "security.protocol is "+proto)
			case !sasl && mech != "" && p.ok(k.SecurityProtocol):
				p.fail(k.SASLMechanism, mech, "needs security.protocol SASL_PLAINTEXT or SASL_SSL, not "+proto)
			}
		}},
		{"sasl.mechanism PLAIN, SCRAM-SHA-256 and SCRAM-SHA-512 need sasl.username and sasl.password, or sasl.jaas.config's username and password (one form)", Both, func(p *valueParser) {
			p.saslUserPassNeeds()
		}},
		{"sasl.mechanism OAUTHBEARER needs sasl.oauthbearer.token.endpoint.url; an http(s) URL (a token endpoint) also needs sasl.oauthbearer.client.credentials.client.id and .client.secret, or sasl.jaas.config's clientId and clientSecret (one form), and a file: URL (a token file) takes neither", Both, func(p *valueParser) {
			p.oauthNeeds()
		}},
		{"sasl.mechanism GSSAPI needs sasl.kerberos.service.name (or sasl.jaas.config's serviceName) and sasl.jaas.config's Krb5LoginModule with useKeyTab=true, keyTab and principal", Both, func(p *valueParser) {
			p.gssapiNeeds()
		}},
		{"the keys of one SASL mechanism are refused with another: sasl.username and sasl.password belong to PLAIN and SCRAM, sasl.oauthbearer.* to OAUTHBEARER, sasl.kerberos.service.name to GSSAPI", Both, func(p *valueParser) {
			p.saslForeignKeys()
		}},
		{"ssl.certificate.location and ssl.key.location go together", Both, func(p *valueParser) {
			p.pair(k.SSLCertificateLocation, k.SSLKeyLocation)
		}},
		{"ssl.truststore.location replaces ssl.ca.location, and ssl.keystore.location ssl.certificate.location and ssl.key.location: set one form", Both, func(p *valueParser) {
			p.oneOf(k.SSLTruststoreLocation, k.SSLCALocation)
			p.oneOf(k.SSLKeystoreLocation, k.SSLCertificateLocation)
			p.oneOf(k.SSLKeystoreLocation, k.SSLKeyLocation)
		}},
		{"ssl.keystore.location needs ssl.keystore.password, and ssl.truststore.location ssl.truststore.password", Both, func(p *valueParser) {
			if p.str(k.SSLKeystoreLocation) != "" {
				p.needWith(k.SSLKeystorePassword, "ssl.keystore.location is set")
			}
			if p.str(k.SSLTruststoreLocation) != "" {
				p.needWith(k.SSLTruststorePassword, "ssl.truststore.location is set; kafkas3 checks the truststore's integrity with it")
			}
		}},
		{"ssl.*.location needs a TLS security.protocol", Both, func(p *valueParser) {
			proto := p.choice(k.SecurityProtocol)
			anySSL := false
			for _, h := range []StringKey{k.SSLCALocation, k.SSLCertificateLocation, k.SSLTruststoreLocation, k.SSLKeystoreLocation} {
				anySSL = anySSL || p.str(h) != ""
			}
			if anySSL && proto != "SSL" && proto != "SASL_SSL" && p.ok(k.SecurityProtocol) {
				p.fail(k.SecurityProtocol, proto, "does not use TLS, but ssl.*.location is set; want SSL or SASL_SSL")
			}
		}},
		{"the sink needs exactly one of topics and topics.regex", Sink, func(p *valueParser) { p.topicSelection(true) }},
		{"the source takes at most one of topics and topics.regex", Source, func(p *valueParser) { p.topicSelection(false) }},
		{"rotate.schedule.interval.ms needs timezone", Sink, func(p *valueParser) {
			if p.millis(k.RotateScheduleIntervalMs) > 0 && p.str(k.Timezone) == "" {
				p.missing(k.Timezone, "rotate.schedule.interval.ms is set")
			}
		}},
		{"partitioner.class needs its keys: time path.format, partition.duration.ms > 0, locale and timezone; daily and hourly locale and timezone; field partition.field.name; timestamp.extractor RecordField timestamp.field", Both, func(p *valueParser) {
			p.partitionerNeeds()
		}},
		{"storage.class local needs store.local.dir", Both, func(p *valueParser) {
			if p.choice(k.StorageClass) == StoreLocal && p.str(k.StoreLocalDir) == "" {
				p.missing(k.StoreLocalDir, "storage.class is "+p.raw(k.StorageClass))
			}
		}},
		{"the S3 store needs s3.bucket.name", Both, func(p *valueParser) {
			if p.choice(k.StorageClass) == StoreS3 && p.str(k.StoreLocalDir) == "" && p.str(k.S3BucketName) == "" {
				p.missing(k.S3BucketName, "the store is S3; set store.local.dir for a local directory")
			}
		}},
		{"s3.sse.kms.key.id needs s3.ssea.name aws:kms or aws:kms:dsse", Both, func(p *valueParser) {
			if id := p.str(k.S3SSEKMSKeyID); id != "" && !strings.HasPrefix(p.choice(k.S3SSEAName), "aws:kms") && p.ok(k.S3SSEAName) {
				p.fail(k.S3SSEKMSKeyID, id, "needs s3.ssea.name aws:kms or aws:kms:dsse")
			}
		}},
		{"s3.sse.customer.key needs s3.ssea.name AES256 or unset", Both, func(p *valueParser) {
			if alg := p.choice(k.S3SSEAName); p.str(k.S3SSECustomerKey) != "" && alg != "" && alg != "AES256" {
				p.fail(k.S3SSEAName, alg, "cannot be combined with s3.sse.customer.key; want AES256 or unset")
			}
		}},
		{"s3.object.lock.mode and s3.object.lock.retain.days go together", Sink, func(p *valueParser) {
			mode, days := p.choice(k.S3ObjectLockMode), p.int(k.S3ObjectLockRetainDays)
			switch {
			case mode != "" && days == 0 && p.ok(k.S3ObjectLockRetainDays):
				p.missing(k.S3ObjectLockRetainDays, "s3.object.lock.mode is set")
			case mode == "" && days > 0 && p.ok(k.S3ObjectLockMode):
				p.missing(k.S3ObjectLockMode, "s3.object.lock.retain.days is set")
			}
		}},
		{"aws.access.key.id and aws.secret.access.key go together", Both, func(p *valueParser) {
			p.pair(k.AWSAccessKeyID, k.AWSSecretAccessKey)
		}},
		{"s3.credentials.provider.class AwsAssumeRoleCredentialsProvider needs s3.credentials.provider.sts.role.arn, and the sts.* keys need that class", Both, func(p *valueParser) {
			p.assumeRoleKeys()
		}},
		{"s3.proxy.user and s3.proxy.password need s3.proxy.url", Both, func(p *valueParser) {
			for _, h := range []StringKey{k.S3ProxyUser, k.S3ProxyPassword} {
				if p.str(h) != "" && p.str(k.S3ProxyURL) == "" && p.ok(k.S3ProxyURL) {
					p.missing(k.S3ProxyURL, h.Name+" is set")
				}
			}
		}},
		{"s3.object.tagging needs the S3 store, and its key.value.pairs need it on", Sink, func(p *valueParser) {
			on := p.bool(k.S3ObjectTagging)
			if dir := p.str(k.StoreLocalDir); on && dir != "" {
				p.fail(k.S3ObjectTagging, "true", "needs the S3 store, but store.local.dir is set (a directory has no object tags)")
			}
			if v := p.raw(k.S3ObjectTaggingPairs); !on && strings.TrimSpace(v) != "" && p.ok(k.S3ObjectTagging) {
				p.fail(k.S3ObjectTaggingPairs, v, "is set, but s3.object.tagging is false; set s3.object.tagging=true")
			}
		}},
		{"s3.path.style.access and s3.path.style.access.enabled agree when both are set", Source, func(p *valueParser) {
			src, sink := k.S3PathStyleAccess, k.S3PathStyleAccessEnabled
			if p.userSet(src) && p.userSet(sink) && p.bool(src) != p.bool(sink) && p.ok(src) && p.ok(sink) {
				p.fail(src, p.raw(src), fmt.Sprintf("contradicts %s=%s; set one of them", sink.Name, p.text(sink)))
			}
		}},
		{"kafkas3.index.prefix lies outside topics.dir", Both, func(p *valueParser) { p.indexOutsideTopics() }},
		{"behavior.on.null.values=write needs store.kafka.keys=true", Sink, func(p *valueParser) {
			if p.choice(k.BehaviorOnNullValues) == "write" && !p.bool(k.StoreKafkaKeys) && p.ok(k.StoreKafkaKeys) {
				p.fail(k.BehaviorOnNullValues, "write", "needs store.kafka.keys=true (a tombstone is archived as its key)")
			}
		}},
		{"store.envelope needs format.class json, avro or parquet, and no .keys, .headers or null handling", Sink, func(p *valueParser) {
			p.envelope()
		}},
		{"format.class avro and parquet need a schema-aware value.converter", Sink, func(p *valueParser) { p.sinkNeedsSchema() }},
		{"errors.deadletterqueue.topic.name needs errors.tolerance=all and is not an archived topic", Sink, func(p *valueParser) {
			p.deadLetterQueue()
		}},
		{"an avro converter needs its schema.registry.url (and basic.auth.user.info with USER_INFO)", Both, func(p *valueParser) {
			p.registry(k.Converter(false))
			p.registry(k.Converter(true))
		}},
		{"the source restores avro and parquet in Confluent's Avro wire format: value.converter avro or unset, and a registry", Source, func(p *valueParser) {
			p.sourceNeedsRegistry()
		}},
	}
}

// partitionerNeeds reports each key the partitioner of partitioner.class
// needs (partition.Kind.Requires) that is missing, as Confluent's
// partitioners refuse to start without them.
func (p *valueParser) partitionerNeeds() {
	k := p.k
	name := p.choice(k.PartitionerClass)
	if name == "" {
		return
	}
	kind, err := partition.Lookup(name)
	if err != nil {
		return
	}
	why := "partitioner.class is " + name
	for _, key := range kind.Requires() {
		s := k.Lookup(key)
		if !p.ok(s) || !p.partitionerKeyMissing(s) {
			continue
		}
		if s == k.PartitionDurationMs.Spec && p.userSet(s) {
			p.fail(s, p.raw(s), "is not positive; partitioner.class "+name+" needs the width of its time buckets in milliseconds (Confluent: \"Partition duration needs to be a positive.\")")
			continue
		}
		p.missing(s, why)
	}
	if isTimed(kind) && p.choice(k.TimestampExtractor) == "RecordField" && p.str(k.TimestampField) == "" && p.ok(k.TimestampField) {
		p.missing(k.TimestampField, "timestamp.extractor is RecordField")
	}
}

// needWith records h as missing, because of why, when it is empty.
func (p *valueParser) needWith(h StringKey, why string) {
	if p.str(h) == "" {
		p.missing(h, why)
	}
}

// pair checks that a and b are set together.
func (p *valueParser) pair(a, b StringKey) {
	switch va, vb := p.str(a), p.str(b); {
	case va != "" && vb == "":
		p.missing(b, a.Name+" is set")
	case va == "" && vb != "":
		p.missing(a, b.Name+" is set")
	}
}

// oneOf reports b when a and b are both set: a is the Java keystore form
// of what b gives as a PEM file.
func (p *valueParser) oneOf(a, b StringKey) {
	if p.str(a) != "" && p.str(b) != "" && p.ok(a) && p.ok(b) {
		p.fail(b, p.raw(b), "is set together with "+a.Name+"; set one of them")
	}
}

// topicSelection checks topics and topics.regex. As in Kafka Connect, an
// empty value counts as unset. need: exactly one of them, else at most one.
func (p *valueParser) topicSelection(need bool) {
	want := "at most one"
	if need {
		want = "exactly one"
	}
	hasTopics := len(p.topics(p.k.Topics)) > 0 || !p.ok(p.k.Topics)
	hasRegex := p.str(p.k.TopicsRegex) != ""
	switch {
	case hasTopics && hasRegex:
		p.fail(p.k.TopicsRegex, p.raw(p.k.TopicsRegex), "is set together with topics; want "+want+" of topics and topics.regex")
	case need && !hasTopics && !hasRegex:
		p.missing(p.k.Topics, "set exactly one of topics and topics.regex")
	}
}

// indexOutsideTopics checks that the index folder and the topic
// descriptions lie outside topics.dir, and topics.dir not inside them.
func (p *valueParser) indexOutsideTopics() {
	prefix, dir := p.indexPrefix(), p.str(p.k.TopicsDir)
	if !p.ok(p.k.Kafkas3IndexPrefix) || dir == "" {
		return
	}
	dd := p.text(p.k.DirectoryDelim)
	if dd == "" {
		dd = "/"
	}
	topics := dir + dd
	for _, ix := range []string{index.Dir(prefix), index.TopicsDir(prefix)} {
		if strings.HasPrefix(ix, topics) || strings.HasPrefix(topics, ix) {
			p.fail(p.k.Kafkas3IndexPrefix, prefix, fmt.Sprintf(
				"puts the index (%s) inside topics.dir %q (or topics.dir inside it), where query engines and the source would take it for data; want a prefix outside topics.dir (default _kafkas3/)", ix, dir))
			return
		}
	}
}

// envelope refuses what store.envelope cannot be combined with, naming
// it: the bytes format (it holds values only), store.kafka.keys and
// store.kafka.headers (the envelope holds keys and headers: parallel
// objects would only repeat them), and behavior.on.null.values other than
// fail (tombstones are ordinary records of the envelope, with a null value).
func (p *valueParser) envelope() {
	k := p.k
	if !p.bool(k.StoreEnvelope) {
		return
	}
	if spec, ok := formatSpec(p.choice(k.FormatClass)); ok && !spec.HoldsEnvelope() {
		p.fail(k.StoreEnvelope, p.text(k.StoreEnvelope), "needs format.class "+envelopeFormats()+"; the "+p.choice(k.FormatClass)+" format holds values only")
	}
	if p.bool(k.StoreKafkaKeys) {
		p.fail(k.StoreKafkaKeys, p.text(k.StoreKafkaKeys), "cannot be combined with store.envelope=true: the envelope holds each record's key")
	}
	if p.bool(k.StoreKafkaHeaders) {
		p.fail(k.StoreKafkaHeaders, p.text(k.StoreKafkaHeaders), "cannot be combined with store.envelope=true: the envelope holds each record's headers")
	}
	if nv := p.choice(k.BehaviorOnNullValues); nv != "" && nv != "fail" {
		p.fail(k.BehaviorOnNullValues, p.text(k.BehaviorOnNullValues),
			"is not used with store.envelope=true: tombstones are archived as ordinary records with a null value; remove the key (or set fail)")
	}
}

// sinkNeedsSchema: avro and parquet write typed values, so without the
// envelope they need a schema-aware value converter.
func (p *valueParser) sinkNeedsSchema() {
	k := p.k
	name := p.choice(k.FormatClass)
	if !needsSchema(name) || p.bool(k.StoreEnvelope) || !p.ok(k.ValueConverter) {
		return
	}
	class := p.choice(k.ValueConverter)
	if schemaful(class, p.bool(k.ValueConverterSchemasEnable)) {
		return
	}
	const want = "io.confluent.connect.avro.AvroConverter, or org.apache.kafka.connect.json.JsonConverter with value.converter.schemas.enable=true"
	if class == "" {
		p.missing(k.ValueConverter, "format.class "+name+" needs values with a schema: set "+want)
	} else {
		p.fail(k.ValueConverter, p.text(k.ValueConverter), "gives values without a schema, but format.class "+name+" needs one; want "+want)
	}
}

// deadLetterQueue checks errors.deadletterqueue.topic.name.
func (p *valueParser) deadLetterQueue() {
	k := p.k
	dlq := p.str(k.ErrorsDeadletterqueueTopicName)
	switch {
	case dlq == "":
	case partition.ValidateTopic(dlq) != nil:
		p.fail(k.ErrorsDeadletterqueueTopicName, dlq, "is not a Kafka topic name; "+topicNameRule)
	case p.choice(k.ErrorsTolerance) != "all" && p.ok(k.ErrorsTolerance):
		p.fail(k.ErrorsDeadletterqueueTopicName, dlq, "needs errors.tolerance=all (with none the sink stops at the first bad record)")
	case slices.Contains(p.topics(k.Topics), dlq):
		p.fail(k.ErrorsDeadletterqueueTopicName, dlq, "is one of the archived topics (topics)")
	}
}

// registry checks that an avro converter has its registry settings.
func (p *valueParser) registry(c ConverterKeys) {
	if p.choice(c.Class) != ConverterAvro {
		return
	}
	if p.str(c.RegistryURL) == "" {
		p.missing(c.RegistryURL, c.Class.Name+" is avro")
	}
	if p.choice(c.CredentialsSource) == "USER_INFO" && p.str(c.UserInfo) == "" {
		p.missing(c.UserInfo, c.CredentialsSource.Name+" is USER_INFO")
	}
}

// sourceNeedsRegistry: the source produces avro and parquet archives'
// values in Confluent's Avro wire format, registered in the target's
// registry.
func (p *valueParser) sourceNeedsRegistry() {
	k := p.k
	name := p.choice(k.FormatClass)
	if !needsSchema(name) {
		return
	}
	switch class := p.choice(k.ValueConverter); {
	case class != "" && class != ConverterAvro:
		p.fail(k.ValueConverter, p.text(k.ValueConverter), fmt.Sprintf(
			"is not supported by kafkas3 source with format.class %s: the source produces the archived values in Confluent's Avro wire format; want avro (io.confluent.connect.avro.AvroConverter) or unset", name))
	case p.str(k.ValueConverterSchemaRegistryURL) == "" && !p.bool(k.StoreEnvelope) && p.ok(k.ValueConverterSchemaRegistryURL):
		p.missing(k.ValueConverterSchemaRegistryURL, fmt.Sprintf(
			"format.class %s: the source registers each value schema under <target topic>-value in the target's Schema Registry and frames the values for it", name))
	}
}

// envelopeFormats lists the formats store.envelope applies to, from the
// format registry: "json, avro or parquet".
func envelopeFormats() string {
	return format.Formats().Filter(func(e format.Entry) bool { return e.Spec.HoldsEnvelope() }).OneOf()
}
