package config

import (
	"fmt"
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
// are the sink's (the embedded groups are shared with SinkOptions), so one
// file serves both commands.
type SourceOptions struct {
	// KafkaSettings is the target cluster's client. BootstrapServers is
	// empty when the key is unset: a dry run needs no Kafka, so the command
	// checks it.
	KafkaSettings

	// ArchiveTopics and ArchiveTopicsRegex are the file's topics and
	// topics.regex: what the sink of this config archives. The source
	// refuses to restore into them (feedback-loop guard) and restores them
	// when no topics are given on the command line. At most one is set.
	ArchiveTopics      []string
	ArchiveTopicsRegex string

	LayoutSettings
	StoreSettings
	FormatSettings
	IndexSettings

	// ValueConverter and KeyConverter are value.converter and key.converter
	// with their settings, read for the target side: Avro and Parquet
	// values are framed in Confluent's wire format for the registry at
	// ValueConverter.RegistryURL (required with those formats), and typed
	// keys of .keys objects for KeyConverter's registry when key.converter
	// is avro.
	ValueConverter ConverterSettings
	KeyConverter   ConverterSettings

	// The Confluent source's own keys.
	PollInterval time.Duration // s3.poll.interval.ms
	OnError      string        // behavior.on.error: OnErrorFail, OnErrorIgnore or OnErrorLog
	// BatchMaxSize is record.batch.max.size: validated and passed on to
	// restore.Config.BatchSize, which does not use it (the producer batches
	// by bytes); see the key's doc.
	BatchMaxSize int
	// TombstonePartition is tombstone.encoded.partition: the folder whose
	// keys-only objects are restored as tombstones ("tombstone" when unset).
	TombstonePartition string
}

// Source types and validates the settings for `kafkas3 source`. It reports
// every problem it finds at once; each wraps ErrConfig and names the key,
// the value and what is allowed. name, group.id and flush.size are the
// sink's (LoadSettings reports them as ignored); bootstrap.servers is
// checked when set, and required by the command unless it only plans
// (--dry-run).
func (s *Settings) Source() (*SourceOptions, error) {
	if s.command != Source {
		return nil, fmt.Errorf("Settings.Source: settings were loaded for %s", s.command)
	}
	p := newParser(s)
	o := &SourceOptions{}

	// The source connector's config, or the sink's whose archive is restored.
	p.connectorClass([]string{"io.confluent.connect.s3.source.S3SourceConnector", "S3SourceConnector",
		"io.confluent.connect.s3.S3SinkConnector", "S3SinkConnector"},
		"is not an S3 connector; want io.confluent.connect.s3.source.S3SourceConnector or io.confluent.connect.s3.S3SinkConnector")

	o.KafkaSettings = p.kafka()
	o.ArchiveTopics, o.ArchiveTopicsRegex = p.topicSelection(false)
	o.LayoutSettings = p.layout()
	p.timezone()
	p.locale()
	o.StoreSettings = p.store()
	o.IndexSettings = p.index(o.LayoutSettings)
	o.FormatSettings = p.format("the source reads the objects in the format the sink wrote")
	o.ValueConverter = p.converter(p.k.Converter(false))
	o.KeyConverter = p.converter(p.k.Converter(true))
	if o.Format == FormatAvro || o.Format == FormatParquet {
		switch vc := o.ValueConverter; {
		case vc.Class != "" && vc.Class != ConverterAvro:
			p.fail(p.k.ValueConverter, p.text(p.k.ValueConverter), fmt.Sprintf(
				"is not supported by kafkas3 source with format.class %s: the source produces the archived values in Confluent's Avro wire format; want avro (io.confluent.connect.avro.AvroConverter) or unset", o.Format))
		case vc.RegistryURL == "" && !p.bool(p.k.StoreEnvelope) && p.ok(p.k.ValueConverterSchemaRegistryURL):
			p.missing(p.k.ValueConverterSchemaRegistryURL, fmt.Sprintf(
				"format.class %s: the source registers each value schema under <target topic>-value in the target's Schema Registry and frames the values for it", o.Format))
		}
	}
	p.choice(p.k.ErrorsTolerance)

	o.PollInterval = p.millis(p.k.S3PollIntervalMs)
	o.OnError = p.choice(p.k.BehaviorOnError)
	o.BatchMaxSize = int(p.int(p.k.RecordBatchMaxSize))
	o.TombstonePartition = p.tombstonePartition(o.DirectoryDelim)

	if err := problems(append(append([]error(nil), s.problems...), p.errs...)); err != nil {
		return nil, err
	}
	return o, nil
}
