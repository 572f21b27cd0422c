package archive

import (
	"time"

	"github.com/kafkas3/kafkas3/format"
	"github.com/kafkas3/kafkas3/partition"
	"github.com/twmb/franz-go/pkg/kgo"
)

// NullBehavior is behavior.on.null.values.
type NullBehavior string

// Null value behaviours.
const (
	NullFail   NullBehavior = "fail"
	NullIgnore NullBehavior = "ignore"
)

// Config is the sink's typed configuration, built and validated by cmd.
type Config struct {
	Name        string   // connector name
	Brokers     []string // bootstrap.servers
	GroupID     string   // group.id, default connect-<name>
	Topics      []string // topics (exactly one of Topics, TopicsRegex)
	TopicsRegex string   // topics.regex

	FlushSize              int           // flush.size (>0)
	RotateInterval         time.Duration // rotate.interval.ms on record time; 0 = off
	RotateScheduleInterval time.Duration // rotate.schedule.interval.ms on the wall clock; 0 = off
	Timezone               *time.Location

	Keys        partition.KeyConfig
	Format      format.Format // already wrapped with compression
	Partitioner partition.Partitioner
	NullValues  NullBehavior

	// Once archives up to the end offsets seen at start, completes the
	// final files, commits and returns.
	Once bool

	// KafkaOpts are extra client options (security, client id, ...).
	KafkaOpts []kgo.Opt
}
