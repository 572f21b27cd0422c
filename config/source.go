package config

import (
	"fmt"
	"log/slog"
	"path/filepath"
	"regexp"

	"github.com/kafkas3/kafkas3/restore"
	"github.com/twmb/franz-go/pkg/sr"
)

// SourceConfig is what `kafkas3 source` (and verify) runs with, from the
// config keys: the restore's config as far as keys set it (the command's
// flags set the rest: what to restore, renames, dry run, ...) and the
// store's.
type SourceConfig struct {
	Restore restore.Config
	Store   StoreConfig
	// FormatName is format.class's short name, for the start log line.
	FormatName string
	// SchemaRegistry is the target registry the archive's schemas go to
	// (value.converter.schema.registry.url, else key.converter's); nil
	// when neither is set.
	SchemaRegistry *sr.Client
}

// Source types and validates the settings for `kafkas3 source` and builds
// the restore's format, encoders and client options. It reports every
// problem at once, the load's included; each wraps ErrConfig and names the
// key, the value (unless it is a secret) and what is allowed. The returned
// config is not nil even with problems, so the command can report the
// problems of its flags with them. name, group.id and flush.size are the
// sink's (Load reports them as ignored); bootstrap.servers is checked when
// set, and required by the command unless it only plans (NeedBrokers).
func (s *Settings) Source(log *slog.Logger) (*SourceConfig, error) {
	if s.command != Source {
		return nil, fmt.Errorf("Settings.Source: settings were loaded for %s", s.command)
	}
	p := newParser(s)
	c := &SourceConfig{}
	r := &c.Restore
	// The source connector's config, or the sink's whose archive is restored.
	p.connectorClass([]string{"io.confluent.connect.s3.source.S3SourceConnector", "S3SourceConnector",
		"io.confluent.connect.s3.S3SinkConnector", "S3SinkConnector"},
		"is not an S3 connector; want io.confluent.connect.s3.source.S3SourceConnector or io.confluent.connect.s3.S3SinkConnector")
	r.Brokers = p.brokers()
	r.KafkaOpts = p.kafkaOpts()
	r.ArchiveTopics = p.topics(p.k.Topics)
	if re := p.regex(p.k.TopicsRegex); re != "" {
		var err error
		if r.ArchiveTopicsRegex, err = regexp.Compile(re); err != nil {
			p.fail(p.k.TopicsRegex, re, fmt.Sprintf("does not compile (%v); want a regular expression in RE2 syntax", err))
		}
	}
	r.Keys = p.keyLayout()
	p.partitioner() // checked; the source reads every layout from the object keys, without it
	p.timezone()
	p.locale()
	c.Store = p.sourceStore()
	r.IndexPrefix = p.indexPrefix()
	c.FormatName = p.choice(p.k.FormatClass)
	p.need(p.k.FormatClass, "the source reads the objects in the format the sink wrote")
	if cfg, ok := p.formatConfig(); ok {
		r.Format = p.newFormat(p.k.FormatClass.Name, cfg)
	}
	p.sourceEncoders(r, c.FormatName, log)
	c.SchemaRegistry = p.schemaRegistry(log)
	p.choice(p.k.ErrorsTolerance)
	r.PollInterval = p.millis(p.k.S3PollIntervalMs)
	r.ReadConcurrency = int(p.int(p.k.ReadConcurrency))
	r.OnError = restore.OnError(p.choice(p.k.BehaviorOnError))
	r.BatchSize = int(p.int(p.k.RecordBatchMaxSize))
	r.TombstonePartition = p.tombstonePartition()
	p.checkRules()
	return c, p.problems()
}

// sourceStore is store with a local directory made absolute, so the
// restore's identity does not depend on the working directory.
func (p *valueParser) sourceStore() StoreConfig {
	o := p.store()
	if o.LocalDir != "" {
		abs, err := filepath.Abs(o.LocalDir)
		if err != nil {
			p.fail(p.k.StoreLocalDir, o.LocalDir, fmt.Sprintf("has no absolute path (%v)", err))
		}
		o.LocalDir = abs
	}
	return o
}

// sourceEncoders builds the target-side Avro encoders: for values when the
// archive format needs a schema (avro, parquet) and value.converter's
// registry is set; for keys read from .keys objects when key.converter is
// avro.
func (p *valueParser) sourceEncoders(r *restore.Config, formatName string, log *slog.Logger) {
	vc, kc := p.k.Converter(false), p.k.Converter(true)
	p.converterConfig(vc, log) // checks the value converter's keys
	if needsSchema(formatName) && p.str(vc.RegistryURL) != "" {
		if enc := p.sourceEncoder(vc, log); enc != nil {
			r.ValueEncoder = enc
		}
	}
	p.converterConfig(kc, log)
	if p.choice(kc.Class) == ConverterAvro {
		if enc := p.sourceEncoder(kc, log); enc != nil {
			r.KeyEncoder = enc
		}
	}
}

// NeedBrokers returns the problem of a restore (not a dry run) without
// bootstrap.servers, or nil.
func (c *SourceConfig) NeedBrokers() error {
	if len(c.Restore.Brokers) > 0 {
		return nil
	}
	return &Error{Key: NewKeys().BootstrapServers.Name, Msg: errMissing + " (needed unless --dry-run; or pass --bootstrap-servers)"}
}
