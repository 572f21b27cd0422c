package partition

import (
	"encoding/json"
	"errors"
	"fmt"
	"strings"
	"time"

	"github.com/kafkas3/kafkas3/format"
)

// Extractor is timestamp.extractor: where a time-based partitioner takes a
// record's time from.
type Extractor int

// The timestamp extractors of Confluent's storage connectors.
const (
	// ExtractWallclock uses the sink's clock when it writes the record.
	// The layout then depends on when the sink runs: a record written
	// again after a crash may land in another folder, so exactly-once
	// object contents are not kept (as with Confluent's connector).
	ExtractWallclock Extractor = iota + 1
	// ExtractRecord uses the Kafka record's timestamp.
	ExtractRecord
	// ExtractRecordField uses a field of the record's value
	// (timestamp.field).
	ExtractRecordField
)

// ParseExtractor maps a timestamp.extractor value (Wallclock, Record,
// RecordField, or a class name ending in one of them, case-insensitive)
// to an Extractor.
func ParseExtractor(name string) (Extractor, error) {
	n := strings.TrimSpace(name)
	if i := strings.LastIndexAny(n, ".$"); i >= 0 {
		n = n[i+1:]
	}
	n = strings.TrimSuffix(strings.TrimSuffix(n, "TimestampExtractor"), "Extractor")
	switch strings.ToLower(n) {
	case "wallclock":
		return ExtractWallclock, nil
	case "record":
		return ExtractRecord, nil
	case "recordfield":
		return ExtractRecordField, nil
	}
	return 0, fmt.Errorf("timestamp.extractor %q: want Wallclock, Record or RecordField", name)
}

// TimeConfig configures a time-based partitioner: Confluent's
// TimeBasedPartitioner keys, and for DailyPartitioner and
// HourlyPartitioner everything but PathFormat and Duration.
type TimeConfig struct {
	PathFormat string         // path.format, a Joda-Time pattern
	Duration   time.Duration  // partition.duration.ms; a whole number of milliseconds > 0
	Locale     string         // locale
	Location   *time.Location // timezone
	Extractor  Extractor      // timestamp.extractor
	Field      string         // timestamp.field, for ExtractRecordField (dotted for nested fields)
	// DirectoryDelim is directory.delim: a path.format ending in it has
	// it stripped, as Confluent does.
	DirectoryDelim string
	// Now is the clock of ExtractWallclock; nil means time.Now.
	Now func() time.Time
}

// TimeBased is Confluent's TimeBasedPartitioner: the encoded partition of
// a record is path.format printed at the start of the record's time
// bucket (TimeBucket), in the configured zone.
type TimeBased struct {
	cfg    TimeConfig
	format *PathFormat
	ms     int64
}

// NewTimeBased checks cfg as Confluent's connector does and returns the
// partitioner.
func NewTimeBased(cfg TimeConfig) (*TimeBased, error) {
	var errs []error
	if strings.TrimSpace(cfg.PathFormat) == "" {
		errs = append(errs, errors.New("path.format: required by the time-based partitioner"))
	}
	if cfg.Duration <= 0 || cfg.Duration%time.Millisecond != 0 {
		errs = append(errs, errors.New("partition.duration.ms: required by the time-based partitioner, and positive"))
	}
	if strings.TrimSpace(cfg.Locale) == "" {
		errs = append(errs, errors.New("locale: required by time-based partitioners (for example en-US)"))
	}
	if cfg.Location == nil {
		errs = append(errs, errors.New("timezone: required by time-based partitioners (for example UTC)"))
	}
	switch cfg.Extractor {
	case ExtractWallclock, ExtractRecord:
	case ExtractRecordField:
		if strings.TrimSpace(cfg.Field) == "" {
			errs = append(errs, errors.New("timestamp.field: required with timestamp.extractor RecordField"))
		}
	default:
		errs = append(errs, errors.New("timestamp.extractor: want Wallclock, Record or RecordField"))
	}
	pattern := cfg.PathFormat
	if cfg.DirectoryDelim != "" {
		pattern = strings.TrimSuffix(pattern, cfg.DirectoryDelim)
	}
	pf, err := ParsePathFormat(pattern, cfg.Locale)
	if err != nil && strings.TrimSpace(cfg.PathFormat) != "" {
		errs = append(errs, fmt.Errorf("path.format: %w", err))
	}
	if len(errs) > 0 {
		return nil, errors.Join(errs...)
	}
	if cfg.Now == nil {
		cfg.Now = time.Now
	}
	return &TimeBased{cfg: cfg, format: pf, ms: cfg.Duration.Milliseconds()}, nil
}

// NewDaily is Confluent's DailyPartitioner: path.format
// 'year'=YYYY/'month'=MM/'day'=dd, one day per bucket. cfg.PathFormat and
// cfg.Duration are ignored.
func NewDaily(cfg TimeConfig) (*TimeBased, error) {
	cfg.PathFormat, cfg.Duration = dailyPathFormat, 24*time.Hour
	return NewTimeBased(cfg)
}

// NewHourly is Confluent's HourlyPartitioner: path.format
// 'year'=YYYY/'month'=MM/'day'=dd/'hour'=HH, one hour per bucket.
// cfg.PathFormat and cfg.Duration are ignored.
func NewHourly(cfg TimeConfig) (*TimeBased, error) {
	cfg.PathFormat, cfg.Duration = hourlyPathFormat, time.Hour
	return NewTimeBased(cfg)
}

// Deterministic reports whether the same records always get the same
// encoded partitions: true unless the extractor is the wall clock.
func (p *TimeBased) Deterministic() bool { return p.cfg.Extractor != ExtractWallclock }

// Timed is implemented by the time-based partitioners (TimeBased, and the
// Daily and Hourly presets): the sink measures rotate.interval.ms with the
// partitioner's timestamp extractor, as Confluent's does, and tells late
// records (an earlier bucket than the open set's latest) from new buckets.
type Timed interface {
	Partitioner
	// EncodeTime returns r's encoded partition, the start of its time
	// bucket and r's time by the extractor (both milliseconds since the
	// epoch), reading the extractor once. Errors the record causes wrap
	// ErrBadRecord.
	EncodeTime(r *format.Record) (encoded string, bucket, at int64, err error)
	// Deterministic reports whether the same records always get the
	// same encoded partitions and times (false with the wall clock).
	Deterministic() bool
}

// Encode returns the path of r's time bucket.
func (p *TimeBased) Encode(r *format.Record) (string, error) {
	enc, _, _, err := p.EncodeTime(r)
	return enc, err
}

// EncodeTime returns the path of r's time bucket, the bucket's start and
// r's time by the extractor (see Timed).
func (p *TimeBased) EncodeTime(r *format.Record) (encoded string, bucket, at int64, err error) {
	if r == nil {
		return "", 0, 0, errors.New("partition: nil record")
	}
	at, err = p.recordTime(r)
	if err != nil {
		return "", 0, 0, err
	}
	bucket = TimeBucket(at, p.ms, p.cfg.Location)
	return p.format.Format(time.UnixMilli(bucket).In(p.cfg.Location)), bucket, at, nil
}

// BucketStart returns the start (milliseconds since the epoch) of r's time
// bucket. Errors the record causes wrap ErrBadRecord.
func (p *TimeBased) BucketStart(r *format.Record) (int64, error) {
	if r == nil {
		return 0, errors.New("partition: nil record")
	}
	ms, err := p.recordTime(r)
	if err != nil {
		return 0, err
	}
	return TimeBucket(ms, p.ms, p.cfg.Location), nil
}

// recordTime is the record's time by the extractor, in milliseconds.
func (p *TimeBased) recordTime(r *format.Record) (int64, error) {
	switch p.cfg.Extractor {
	case ExtractWallclock:
		return p.cfg.Now().UnixMilli(), nil
	case ExtractRecord:
		if r.Timestamp.IsZero() || r.Timestamp.UnixMilli() == -1 { // Kafka's NO_TIMESTAMP
			return 0, badRecord(r, "timestamp.extractor Record", errors.New("the record has no timestamp"))
		}
		return r.Timestamp.UnixMilli(), nil
	}
	v, err := recordValue(r)
	if err != nil {
		return 0, badRecord(r, "timestamp.field "+p.cfg.Field, err)
	}
	f, err := nestedField(v, p.cfg.Field)
	if err != nil {
		return 0, badRecord(r, "timestamp.extractor RecordField", err)
	}
	ms, err := fieldTime(f)
	if err != nil {
		return 0, badRecord(r, "timestamp.field "+p.cfg.Field, err)
	}
	return ms, nil
}

// fieldTime reads a timestamp field: epoch milliseconds (an int or long),
// an ISO-8601 string, or an Avro/Connect timestamp or date logical type.
func fieldTime(v any) (int64, error) {
	switch t := v.(type) {
	case int32:
		return int64(t), nil
	case int64:
		return t, nil
	case int:
		return int64(t), nil
	case json.Number:
		n, err := t.Int64()
		if err != nil {
			return 0, fmt.Errorf("%s is not a whole number of milliseconds", t)
		}
		return n, nil
	case string:
		return parseISOTime(t)
	case time.Time:
		return t.UnixMilli(), nil
	case nil:
		return 0, errors.New("the timestamp field is null")
	}
	return 0, fmt.Errorf("unsupported type %T for a timestamp field (want epoch milliseconds, an ISO-8601 string or a timestamp logical type)", v)
}
