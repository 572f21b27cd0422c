package cmd

import (
	"context"
	"crypto/tls"
	"crypto/x509"
	"errors"
	"fmt"
	"github.com/kafkas3/kafkas3/config"
	"io"
	"log/slog"
	"os"
	"strings"

	"github.com/kafkas3/kafkas3/archive"
	"github.com/kafkas3/kafkas3/convert"
	"github.com/kafkas3/kafkas3/format"
	"github.com/kafkas3/kafkas3/partition"
	"github.com/kafkas3/kafkas3/s3store"
	"github.com/twmb/franz-go/pkg/kgo"
	"github.com/twmb/franz-go/pkg/sasl/plain"
	"github.com/twmb/franz-go/pkg/sasl/scram"
)

// This file turns validated options into the objects the pipelines take:
// the store, the format, the key layout and Kafka client options. The sink
// and the source share it.

// buildStore opens the configured store. Config errors wrap ErrConfig.
func buildStore(ctx context.Context, o config.StoreSettings, log *slog.Logger) (s3store.Store, string, error) {
	if o.Store == config.StoreLocal {
		st, err := s3store.NewLocal(s3store.LocalConfig{Dir: o.LocalDir}, log)
		if err != nil {
			return nil, "", fmt.Errorf("%w: store.local.dir: %w", ErrConfig, err)
		}
		return st, "file://" + o.LocalDir, nil
	}
	retries := o.PartRetries
	if retries == 0 {
		retries = -1 // s3store: 0 means the default, negative means none
	}
	cfg := s3store.S3Config{
		Bucket: o.Bucket, Region: o.Region, Endpoint: o.Endpoint, PathStyle: o.PathStyle,
		AccessKeyID: o.AccessKeyID, SecretAccessKey: o.SecretAccessKey,
		PartSize: o.PartSize, PartRetries: retries,
		SSEAlgorithm: o.SSEAlgorithm, KMSKeyID: o.SSEKMSKeyID, CustomerKey: o.SSECustomerKey, CannedACL: o.CannedACL,
	}
	if o.RetryBackoff == 0 {
		cfg.RetryBackoff = -1 // s3store: 0 means the default, negative means none
	} else {
		cfg.RetryBackoff = o.RetryBackoff
	}
	st, err := s3store.NewS3(ctx, cfg, log)
	if err != nil {
		return nil, "", fmt.Errorf("%w: %w", ErrConfig, err)
	}
	ident := "s3://" + o.Bucket
	if o.Endpoint != "" {
		ident = o.Endpoint + "/" + o.Bucket
	}
	return st, ident, nil
}

// buildFormat builds the configured format. Errors wrap ErrConfig.
func buildFormat(o config.FormatSettings) (format.Format, error) { return buildFormatNulls(o, false) }

// buildFormatNulls is buildFormat; with nulls, JSON is
// format.NewNullableJSON (the .keys objects, where keys may be null).
func buildFormatNulls(o config.FormatSettings, nulls bool) (format.Format, error) {
	kind, err := format.Lookup(o.Format)
	if err != nil {
		return nil, fmt.Errorf("%w: %w", ErrConfig, err)
	}
	comp, err := format.ParseCompression(o.CompressionType)
	if err != nil {
		return nil, fmt.Errorf("%w: %w", ErrConfig, err)
	}
	bc := format.DefaultBytesConfig()
	bc.Separator = []byte(o.BytesSeparator)
	if o.BytesExtension != "" {
		bc.Extension = o.BytesExtension
	}
	cfg := format.Config{Kind: kind, Bytes: bc, Compression: comp, CompressionLevel: o.CompressionLevel, JSONNulls: nulls, Envelope: o.Envelope}
	if o.AvroCodec != "" {
		if cfg.Avro.Codec, err = format.ParseAvroCodec(o.AvroCodec); err != nil {
			return nil, fmt.Errorf("%w: %w", ErrConfig, err)
		}
		cfg.Avro.Level = -1
	}
	cfg.Parquet.Codec = o.ParquetCodec
	f, err := format.New(cfg)
	if err != nil {
		return nil, fmt.Errorf("%w: %w", ErrConfig, err)
	}
	return f, nil
}

// keyKeysFormat is the key of the .keys objects' format.
const keyKeysFormat = "keys.format.class"

// buildPartFormat builds the format of .keys or .headers objects (key names
// the setting): name is config.FormatJSON, config.FormatBytes, config.FormatAvro or config.FormatParquet,
// with the value format's codec (avro.codec, parquet.codec), bytes and
// compression settings. Errors wrap ErrConfig.
func buildPartFormat(key, name string, value config.FormatSettings) (*archive.PartFormat, error) {
	fs := value
	fs.Format, fs.Envelope = name, false
	f, err := buildFormatNulls(fs, key == keyKeysFormat)
	if err != nil {
		return nil, fmt.Errorf("%s: %w", key, err)
	}
	kind, err := format.Lookup(name)
	if err != nil {
		return nil, fmt.Errorf("%w: %s: %w", ErrConfig, key, err)
	}
	return &archive.PartFormat{Format: f, Kind: kind}, nil
}

// buildConverter builds the converter prefix (value.converter or
// key.converter) names; nil when none is set. Errors wrap ErrConfig.
func buildConverter(prefix string, o config.ConverterSettings, log *slog.Logger) (convert.Converter, string, error) {
	if o.Class == "" {
		return nil, "", nil
	}
	kind, err := convert.Lookup(o.Class)
	if err != nil {
		return nil, "", fmt.Errorf("%w: %s: %w", ErrConfig, prefix, err)
	}
	c, err := convert.New(convert.Config{
		Kind: kind, KeyPrefix: prefix + ".", SchemaRegistryURL: o.RegistryURL,
		BasicAuthCredentialsSource: o.CredentialsSource, BasicAuthUserInfo: o.UserInfo,
		SchemasEnable: o.SchemasEnable, Logger: log,
	})
	if err != nil {
		return nil, "", fmt.Errorf("%w: %w", ErrConfig, err)
	}
	return c, kind.ClassName(), nil
}

// sinkConverter adapts a convert.Converter to archive.Converter: bad data
// (convert.ErrBadData) becomes archive.ErrBadData; refused registry
// credentials are permanent; other registry failures stay transient.
type sinkConverter struct{ c convert.Converter }

func (s sinkConverter) Convert(ctx context.Context, topic string, isKey bool, data []byte) (*format.Typed, error) {
	t, err := s.c.Convert(ctx, topic, isKey, data)
	switch {
	case err == nil:
		return t, nil
	case errors.Is(err, convert.ErrBadData):
		return nil, archive.BadData(err)
	case errors.Is(err, convert.ErrRegistryAuth):
		return nil, archive.Permanent(err)
	}
	return t, err
}

// keyConfig builds the object key layout. Errors wrap ErrConfig.
func keyConfig(o config.LayoutSettings) (partition.KeyConfig, error) {
	kc := partition.KeyConfig{TopicsDir: o.TopicsDir, DirectoryDelim: o.DirectoryDelim, FileDelim: o.FileDelim, OffsetPadWidth: o.OffsetPadWidth}
	if err := kc.Validate(); err != nil {
		return kc, fmt.Errorf("%w: %w", ErrConfig, err)
	}
	return kc, nil
}

// kafkaOpts maps security settings to franz-go options.
func kafkaOpts(o config.KafkaSettings) ([]kgo.Opt, error) {
	var opts []kgo.Opt
	switch o.SecurityProtocol {
	case "", "PLAINTEXT", "SASL_PLAINTEXT":
	case "SSL", "SASL_SSL":
		tc := &tls.Config{MinVersion: tls.VersionTLS12}
		if o.TLSCAFile != "" {
			pem, err := os.ReadFile(o.TLSCAFile)
			if err != nil {
				return nil, fmt.Errorf("%w: ssl.ca.location: %w", ErrConfig, err)
			}
			pool := x509.NewCertPool()
			if !pool.AppendCertsFromPEM(pem) {
				return nil, fmt.Errorf("%w: ssl.ca.location %q: no PEM certificates", ErrConfig, o.TLSCAFile)
			}
			tc.RootCAs = pool
		}
		if o.TLSCertFile != "" || o.TLSKeyFile != "" {
			cert, err := tls.LoadX509KeyPair(o.TLSCertFile, o.TLSKeyFile)
			if err != nil {
				return nil, fmt.Errorf("%w: ssl.certificate.location/ssl.key.location: %w", ErrConfig, err)
			}
			tc.Certificates = []tls.Certificate{cert}
		}
		opts = append(opts, kgo.DialTLSConfig(tc))
	}
	switch o.SASLMechanism {
	case "":
	case "PLAIN":
		opts = append(opts, kgo.SASL(plain.Auth{User: o.SASLUsername, Pass: o.SASLPassword}.AsMechanism()))
	case "SCRAM-SHA-256":
		opts = append(opts, kgo.SASL(scram.Auth{User: o.SASLUsername, Pass: o.SASLPassword}.AsSha256Mechanism()))
	case "SCRAM-SHA-512":
		opts = append(opts, kgo.SASL(scram.Auth{User: o.SASLUsername, Pass: o.SASLPassword}.AsSha512Mechanism()))
	default:
		return nil, fmt.Errorf("%w: sasl.mechanism %q: want PLAIN, SCRAM-SHA-256 or SCRAM-SHA-512", ErrConfig, o.SASLMechanism)
	}
	return opts, nil
}

// newLogger returns the text logger commands write to stderr.
func newLogger(w io.Writer, level string) (*slog.Logger, error) {
	var l slog.Level
	if err := l.UnmarshalText([]byte(level)); err != nil {
		return nil, fmt.Errorf("%w: --log-level %q: want debug, info, warn or error", ErrConfig, level)
	}
	return slog.New(slog.NewTextHandler(w, &slog.HandlerOptions{Level: l})), nil
}

// loadSettings creates a command's logger, loads its settings (file,
// environment, -p and the dedicated flags) and logs the keys that have no
// effect for this command in one info line.
func loadSettings(cmd config.Command, configFile string, params []string, flags map[string]string, streams IO, logLevel string) (*config.Settings, *slog.Logger, error) {
	log, err := newLogger(streams.Err, logLevel)
	if err != nil {
		return nil, nil, err
	}
	settings, err := config.Load(config.Input{
		Command: cmd, ConfigFile: configFile, Params: params, Flags: flags, LookupEnv: os.LookupEnv,
	})
	if err != nil {
		return nil, nil, err
	}
	if ig := settings.Ignored(); len(ig) > 0 {
		log.Info("ignoring keys that only apply inside Kafka Connect or to kafkas3 "+cmd.Other().String(), "keys", strings.Join(ig, ","))
	}
	return settings, log, nil
}
