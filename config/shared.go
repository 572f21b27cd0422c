package config

import (
	"crypto/tls"
	"crypto/x509"
	"encoding/base64"
	"fmt"
	"os"
	"strconv"
	"strings"
	"time"

	"github.com/kafkas3/kafkas3/format"
	"github.com/kafkas3/kafkas3/index"
	"github.com/kafkas3/kafkas3/partition"
	"github.com/twmb/franz-go/pkg/kgo"
)

// The parts below are shared by Sink and Source: each reads one group of
// keys and returns what the pipelines take (client options, the key
// layout, the format, the store). Rules between keys live in rules.go.

// connectorClass checks the ignored connector.class against the classes
// the command replaces or reads.
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
	p.add(&Error{Key: lv.key, Origin: lv.origin, Msg: strconv.Quote(lv.value) + " " + want})
}

// brokers reads bootstrap.servers: required by the sink; for the source
// (a dry run needs no Kafka) checked when set and nil when not.
func (p *valueParser) brokers() []string {
	if p.required(p.k.BootstrapServers) || p.text(p.k.BootstrapServers) != "" {
		return p.hostPorts(p.k.BootstrapServers)
	}
	return nil
}

// kafkaOpts reads the security keys and returns the franz-go options for
// them: TLS (with the CA and client certificate files read here, so a
// missing file is a config problem) and SASL.
func (p *valueParser) kafkaOpts() []kgo.Opt {
	var opts []kgo.Opt
	p.choice(p.k.SSLTruststoreType) // checked whatever the protocol
	p.choice(p.k.SSLKeystoreType)
	switch p.choice(p.k.SecurityProtocol) {
	case "SSL", "SASL_SSL":
		if tc := p.tlsConfig(); tc != nil {
			opts = append(opts, kgo.Dialer(tlsDialer(tc)))
		}
	}
	if m := p.saslMechanism(); m != nil {
		opts = append(opts, kgo.SASL(m))
	}
	if id := p.str(p.k.ClientID); id != "" {
		opts = append(opts, kgo.ClientID(id))
	}
	return opts
}

// tlsConfig reads ssl.ca.location, ssl.certificate.location and
// ssl.key.location (PEM), or the Java keystores of ssl.truststore.* and
// ssl.keystore.*; nil after a problem.
func (p *valueParser) tlsConfig() *tls.Config {
	tc := &tls.Config{MinVersion: tls.VersionTLS12}
	if ca := p.str(p.k.SSLCALocation); ca != "" {
		pem, err := os.ReadFile(ca)
		if err != nil {
			p.fail(p.k.SSLCALocation, ca, fmt.Sprintf("cannot be read (%v); want a PEM file", err))
			return nil
		}
		pool := x509.NewCertPool()
		if !pool.AppendCertsFromPEM(pem) {
			p.fail(p.k.SSLCALocation, ca, "holds no PEM certificates")
			return nil
		}
		tc.RootCAs = pool
	}
	cert, key := p.str(p.k.SSLCertificateLocation), p.str(p.k.SSLKeyLocation)
	if cert != "" && key != "" {
		pair, err := tls.LoadX509KeyPair(cert, key)
		if err != nil {
			p.fail(p.k.SSLCertificateLocation, cert, fmt.Sprintf("and ssl.key.location do not load as a key pair (%v)", err))
			return nil
		}
		tc.Certificates = []tls.Certificate{pair}
	}
	if !p.javaStores(tc) {
		return nil
	}
	return tc
}

// javaStores reads ssl.truststore.* and ssl.keystore.* into tc (the
// rules keep them apart from the PEM keys); false after a problem.
func (p *valueParser) javaStores(tc *tls.Config) bool {
	k := p.k
	if path := p.str(k.SSLTruststoreLocation); path != "" {
		certs, err := loadTrustStore(path, p.choice(k.SSLTruststoreType), p.str(k.SSLTruststorePassword))
		if err != nil {
			p.fail(k.SSLTruststoreLocation, path, err.Error())
			return false
		}
		tc.RootCAs = x509.NewCertPool()
		for _, c := range certs {
			tc.RootCAs.AddCert(c)
		}
	}
	if path := p.str(k.SSLKeystoreLocation); path != "" {
		pair, err := loadKeyStore(path, p.choice(k.SSLKeystoreType), p.str(k.SSLKeystorePassword), p.str(k.SSLKeyPassword))
		if err != nil {
			p.fail(k.SSLKeystoreLocation, path, err.Error())
			return false
		}
		tc.Certificates = []tls.Certificate{pair}
	}
	return true
}

// keyLayout reads the object layout keys.
func (p *valueParser) keyLayout() partition.KeyConfig {
	kc := partition.KeyConfig{
		TopicsDir:      p.str(p.k.TopicsDir),
		DirectoryDelim: p.nonEmpty(p.k.DirectoryDelim),
		FileDelim:      p.nonEmpty(p.k.FileDelim),
		OffsetPadWidth: int(p.int(p.k.FilenameOffsetZeroPadWidth)),
	}
	if kc.DirectoryDelim == "" || kc.FileDelim == "" {
		return kc // reported; Validate would repeat it
	}
	if err := kc.Validate(); err != nil {
		p.add(fmt.Errorf("%w: %w", ErrConfig, err))
	}
	return kc
}

// partitioner reads partitioner.class and the keys of the partitioner it
// names, and builds it; nil after a problem. A required key that is
// missing is left to the rule that reports it (partitionerNeeds), so the
// partitioner is built only when its keys are all there and valid.
func (p *valueParser) partitioner() partition.Partitioner {
	name := p.choice(p.k.PartitionerClass)
	if name == "" {
		return nil
	}
	kind, err := partition.Lookup(name)
	if err != nil {
		p.add(fmt.Errorf("%w: %w", ErrConfig, err))
		return nil
	}
	cfg, ok := p.partitionerConfig(kind)
	if !ok {
		return nil
	}
	pt, err := partition.New(kind, cfg)
	if err != nil {
		p.add(fmt.Errorf("%w: partitioner.class %s: %w", ErrConfig, name, err))
		return nil
	}
	return pt
}

// partitionerConfig types every partitioner key (each problem reported)
// and checks path.format's pattern with the time partitioner. ok is false
// when a key kind needs is missing or a key failed.
func (p *valueParser) partitionerConfig(kind partition.Kind) (partition.Config, bool) {
	k := p.k
	cfg := partition.Config{
		PathFormat:     p.str(k.PathFormat),
		Locale:         p.str(k.Locale),
		Location:       p.timezone(),
		TimestampField: p.str(k.TimestampField),
		Fields:         p.list(k.PartitionFieldName),
		DirectoryDelim: p.text(k.DirectoryDelim),
	}
	if n := p.int(k.PartitionDurationMs); n > 0 {
		cfg.Duration = time.Duration(n) * time.Millisecond
	}
	if ex := p.choice(k.TimestampExtractor); ex != "" {
		cfg.Extractor, _ = partition.ParseExtractor(ex) // the choices are its names
	}
	if kind == partition.KindTimeBased && cfg.PathFormat != "" {
		pattern := cfg.PathFormat
		if cfg.DirectoryDelim != "" {
			pattern = strings.TrimSuffix(pattern, cfg.DirectoryDelim)
		}
		if _, err := partition.ParsePathFormat(pattern, cfg.Locale); err != nil {
			p.fail(k.PathFormat, cfg.PathFormat, fmt.Sprintf("is not a Joda-Time pattern kafkas3 can print (%v); want letters such as YYYY, MM, dd, HH and quoted text", err))
		}
	}
	for _, h := range []Key{k.PathFormat, k.PartitionDurationMs, k.Locale, k.Timezone, k.TimestampExtractor, k.TimestampField, k.PartitionFieldName, k.DirectoryDelim} {
		if !p.ok(h) {
			return cfg, false
		}
	}
	for _, name := range kind.Requires() {
		if p.partitionerKeyMissing(k.Lookup(name)) {
			return cfg, false
		}
	}
	if cfg.Extractor == partition.ExtractRecordField && cfg.TimestampField == "" && isTimed(kind) {
		return cfg, false
	}
	return cfg, true
}

// isTimed reports whether kind is a time-based partitioner.
func isTimed(kind partition.Kind) bool {
	return kind == partition.KindTimeBased || kind == partition.KindDaily || kind == partition.KindHourly
}

// partitionerKeyMissing reports whether a key a partitioner requires has
// no usable value: unset or empty, or partition.duration.ms not positive.
func (p *valueParser) partitionerKeyMissing(s *Spec) bool {
	if s.Name == p.k.PartitionDurationMs.Name {
		n, err := strconv.ParseInt(p.text(s), 10, 64)
		return err != nil || n <= 0
	}
	return p.text(s) == "" || (s.Kind == KindList && len(p.list(ListKey{s})) == 0)
}

// timezone reads timezone: nil when unset or invalid.
func (p *valueParser) timezone() *time.Location {
	tz := p.str(p.k.Timezone)
	if tz == "" {
		return nil
	}
	if strings.EqualFold(tz, "local") {
		p.fail(p.k.Timezone, tz, "is not an IANA zone name; want a name like UTC or Europe/Berlin")
		return nil
	}
	loc, err := time.LoadLocation(tz)
	if err != nil {
		p.fail(p.k.Timezone, tz, "is not a known IANA zone; want a name like UTC or Europe/Berlin")
		return nil
	}
	return loc
}

// locale checks locale (accepted for compatibility, not used).
func (p *valueParser) locale() {
	if l := p.str(p.k.Locale); l != "" && !validLocale(l) {
		p.fail(p.k.Locale, l, "is not a locale tag; want a tag like en or en_US")
	}
}

// validLocale accepts Java-style locale tags: en, en_US, de-CH, sr_Latn_RS:
// a language of 2 to 8 letters, then parts of 1 to 8 letters or digits
// joined by '_' or '-'.
func validLocale(s string) bool {
	parts := strings.FieldsFunc(s, func(r rune) bool { return r == '_' || r == '-' })
	if len(parts) == 0 || strings.Count(s, "_")+strings.Count(s, "-") != len(parts)-1 {
		return false
	}
	for i, part := range parts {
		if len(part) < 1 || len(part) > 8 || (i == 0 && len(part) < 2) {
			return false
		}
		for _, r := range part {
			letter := (r >= 'a' && r <= 'z') || (r >= 'A' && r <= 'Z')
			if !letter && (i == 0 || r < '0' || r > '9') {
				return false
			}
		}
	}
	return true
}

// store reads the store selection, S3 and credential keys.
func (p *valueParser) store() StoreConfig {
	var o StoreConfig
	if dir := p.str(p.k.StoreLocalDir); dir != "" {
		o.LocalDir = dir
	} else if p.choice(p.k.StorageClass) == StoreLocal {
		return o // the rule local-needs-dir reports it
	}
	o.S3.Bucket = p.str(p.k.S3BucketName)
	if o.LocalDir == "" && o.S3.Bucket != "" {
		if why := bucketNameProblem(o.S3.Bucket); why != "" {
			p.fail(p.k.S3BucketName, o.S3.Bucket, why+"; "+bucketNameRules)
		}
	}
	o.S3.Region = p.nonEmpty(p.k.S3Region)
	o.S3.Endpoint = p.endpoint(p.k.StoreURL)
	o.S3.PathStyle = p.pathStyle()
	o.S3.PartSize = p.int(p.k.S3PartSize)
	o.S3.PartRetries = int(p.int(p.k.S3PartRetries))
	if o.S3.PartRetries == 0 {
		o.S3.PartRetries = -1 // s3store: 0 means the default, negative means none
	}
	if o.S3.RetryBackoff = p.millis(p.k.S3RetryBackoffMs); o.S3.RetryBackoff == 0 {
		o.S3.RetryBackoff = -1 // s3store: 0 means the default, negative means none
	}
	o.S3.SSEAlgorithm = p.choice(p.k.S3SSEAName)
	o.S3.KMSKeyID = p.str(p.k.S3SSEKMSKeyID)
	o.S3.CustomerKey = p.str(p.k.S3SSECustomerKey)
	if k := o.S3.CustomerKey; k != "" {
		if b, err := base64.StdEncoding.DecodeString(k); err != nil || len(b) != 32 {
			p.fail(p.k.S3SSECustomerKey, k, "is not a base64-encoded 32-byte key")
		}
	}
	o.S3.CannedACL = p.choice(p.k.S3ACLCanned)
	o.S3.StorageClass = p.choice(p.k.S3StorageClass)
	o.S3.ObjectLockMode = p.choice(p.k.S3ObjectLockMode)
	o.S3.ObjectLockRetain = time.Duration(p.int(p.k.S3ObjectLockRetainDays)) * 24 * time.Hour
	o.S3.RewriteNewVersion = p.choice(p.k.S3ObjectLockRewrite) == "new-version"
	o.S3.AccessKeyID = p.str(p.k.AWSAccessKeyID)
	o.S3.SecretAccessKey = p.str(p.k.AWSSecretAccessKey)
	p.s3Credentials(&o.S3)
	o.S3.Proxy = p.s3Proxy()
	return o
}

// pathStyle reads s3.path.style.access.enabled, the sink's name, and, for
// the source, s3.path.style.access, the Confluent source's name. A key set
// by the user wins over a default (the rule path-style-agree checks two
// set keys).
func (p *valueParser) pathStyle() bool {
	src, sink := p.k.S3PathStyleAccess, p.k.S3PathStyleAccessEnabled
	b := p.bool(sink)
	if !p.isSet(src) { // the sink: only its own name
		return b
	}
	if p.userSet(sink) && !p.userSet(src) {
		return b
	}
	return p.bool(src)
}

// formatConfig reads the format and compression keys as format.New takes
// them.
func (p *valueParser) formatConfig() (format.Config, bool) {
	var cfg format.Config
	name := p.choice(p.k.FormatClass)
	comp, err := format.ParseCompression(p.choice(p.k.S3CompressionType))
	if err != nil {
		return cfg, false // the choice was reported
	}
	cfg.Compression = comp
	cfg.CompressionLevel = -1
	if p.st.command == Sink {
		cfg.CompressionLevel = int(p.int(p.k.S3CompressionLevel))
	}
	cfg.Bytes = format.DefaultBytesConfig()
	cfg.Bytes.Separator = []byte(p.raw(p.k.FormatBytearraySeparator))
	ext := p.str(p.k.FormatBytearrayExtension)
	if !strings.HasPrefix(ext, ".") || strings.ContainsAny(ext, "/\\") {
		p.fail(p.k.FormatBytearrayExtension, ext, "is not a file extension; want a string starting with a dot, without slashes")
	} else {
		cfg.Bytes.Extension = ext
	}
	if codec := p.choice(p.k.AvroCodec); codec != "" {
		if cfg.Avro.Codec, err = format.ParseAvroCodec(codec); err != nil {
			p.add(fmt.Errorf("%w: %w", ErrConfig, err))
		}
		cfg.Avro.Level = -1
	}
	cfg.Parquet.Codec = p.choice(p.k.ParquetCodec)
	if name == "" {
		return cfg, false
	}
	if cfg.Kind, err = format.Lookup(name); err != nil {
		p.add(fmt.Errorf("%w: %w", ErrConfig, err))
		return cfg, false
	}
	return cfg, true
}

// newFormat builds cfg's format; nil after a problem, reported under key.
func (p *valueParser) newFormat(key string, cfg format.Config) format.Format {
	f, err := format.New(cfg)
	if err != nil {
		p.add(fmt.Errorf("%w: %s: %w", ErrConfig, key, err))
		return nil
	}
	return f
}

// formatSpec returns the format registry's declaration of the format
// named name (format.class's short name); false for "" or an unknown name.
func formatSpec(name string) (format.Spec, bool) {
	if name == "" {
		return format.Spec{}, false
	}
	e, err := format.Formats().Lookup(name)
	return e.Spec, err == nil
}

// needsSchema reports whether the format named name writes typed values
// only (avro and parquet), as the format registry declares.
func needsSchema(name string) bool {
	s, ok := formatSpec(name)
	return ok && s.NeedsSchema
}

// tombstonePartition reads tombstone.encoded.partition, the folder of
// tombstone keys objects: a non-empty name without directory.delim;
// "tombstone" by default.
func (p *valueParser) tombstonePartition() string {
	v := p.str(p.k.TombstoneEncodedPartition)
	dirDelim := p.text(p.k.DirectoryDelim)
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

// indexPrefix reads kafkas3.index.prefix: a folder (index.ValidatePrefix);
// the rule index-outside-topics-dir checks where it lies.
func (p *valueParser) indexPrefix() string {
	v := p.str(p.k.Kafkas3IndexPrefix)
	if err := index.ValidatePrefix(v); err != nil {
		p.fail(p.k.Kafkas3IndexPrefix, v, "is not a key prefix; want one or more folder names, each followed by \"/\" (default _kafkas3/)")
	}
	return v
}
