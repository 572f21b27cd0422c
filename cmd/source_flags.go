package cmd

import (
	"bufio"
	"encoding/base64"
	"fmt"
	"math"
	"os"
	"regexp"
	"strconv"
	"strings"
	"time"

	"github.com/kafkas3/kafkas3/config"
	"github.com/kafkas3/kafkas3/partition"
	"github.com/kafkas3/kafkas3/restore"
	"github.com/kafkas3/kafkas3/s3store"
	"github.com/kafkas3/kafkas3/schemas"
)

// defaultRenameRegex is --topic-rename-regex's default, as in Connect's
// RegexRouter examples: the whole topic name.
const defaultRenameRegex = ".*"

// sourceFlags are the flags of `kafkas3 source`.
type sourceFlags struct {
	configFlags
	Topics      string // archived topics to restore, comma separated
	TopicsRegex string
	Rename      string
	// SchemaIDs is --schema-ids: rewrite or keep.
	SchemaIDs    string
	RenameRegex  string
	DryRun       bool
	Follow       bool
	CreateTopics bool
	// ReplicationFactor is --replication-factor (0: the archived one).
	ReplicationFactor int
	// TopicConfigs are the --topic-config key=value flags.
	TopicConfigs   []string
	AllowSameTopic bool
	AllowGaps      bool
	// ProveFirst is --prove-first.
	ProveFirst bool
	// AllowUnknownOrder is --allow-unknown-order (or its hidden old name,
	// --allow-unproven-order).
	AllowUnknownOrder bool
	// Timestamps is --timestamps: original or now.
	Timestamps string
	// Until is --until: RFC 3339 or Unix milliseconds; empty restores
	// everything.
	Until string
	// RestoreGroups is --restore-groups; GroupRename is --group-rename
	// 'REGEX=REPLACEMENT' (empty keeps group names).
	RestoreGroups bool
	GroupRename   string
	// Shard is --shard I/N; empty restores every partition.
	Shard string
	// Repartition is --repartition (murmur2, roundrobin; empty keeps
	// each record in its partition), Partitions --partitions (0: unset).
	Repartition string
	Partitions  int
	// Generation is --generation: which generation of a recreated topic
	// to restore (1, the first, by default).
	Generation int
	// MaxBytesPerSec is --max-bytes-per-sec ("10MB", "50MiB", "1000000";
	// empty: no limit), MaxRecordsPerSec --max-records-per-sec (0: none).
	MaxBytesPerSec   string
	MaxRecordsPerSec float64
	// ExcludeKeysFile is --exclude-keys-file, ExcludeAction
	// --exclude-action (tombstone).
	ExcludeKeysFile, ExcludeAction string
	// KeyRegex is --key-regex, Header --header NAME[=VALUE], From --from
	// (RFC 3339 or Unix milliseconds): the record filters.
	KeyRegex, Header, From string
	// SkipExpired is --skip-expired.
	SkipExpired bool
	// Dedicated flags for config keys; empty means unset.
	Bootstrap string
	LocalDir  string
	Bucket    string

	// wrapStore, when set, wraps the store (tests interrupt a run with it).
	wrapStore func(s3store.Store) s3store.Store
}

// keyFlags maps the dedicated flags that are set to their keys.
func (f *sourceFlags) keyFlags(k *config.Keys) map[string]string {
	return setFlags(map[string]string{
		k.BootstrapServers.Name: f.Bootstrap, k.StoreLocalDir.Name: f.LocalDir, k.S3BucketName.Name: f.Bucket,
	})
}

// flagProblems collects the problems of the flags, each naming its flag.
type flagProblems []error

func (e *flagProblems) bad(flag, format string, a ...any) {
	*e = append(*e, &config.Error{Key: flag, Msg: fmt.Sprintf(format, a...)})
}

// apply sets what the flags decide in cfg (the restore config the keys
// filled): what to restore and under which names, the run's mode, topic
// creation and group offsets. It reports every problem of the flags.
func (f *sourceFlags) apply(cfg *restore.Config) error {
	var errs flagProblems
	cfg.AllowSameTopic, cfg.AllowGaps, cfg.AllowUnknownOrder = f.AllowSameTopic, f.AllowGaps, f.AllowUnknownOrder
	cfg.CreateTopics, cfg.DryRun, cfg.Follow = f.CreateTopics, f.DryRun, f.Follow
	cfg.ReadOnce = !f.ProveFirst
	cfg.PrefetchBytes = restore.DefaultPrefetchBytes
	f.selection(cfg, &errs)
	f.rename(cfg, &errs)
	switch schemas.IDs(f.SchemaIDs) {
	case "", schemas.IDsRewrite, schemas.IDsKeep:
	default:
		errs.bad("--schema-ids", "%q; want %s or %s", f.SchemaIDs, schemas.IDsRewrite, schemas.IDsKeep)
	}
	f.mode(cfg, &errs)
	f.creation(cfg, &errs)
	f.repartition(cfg, &errs)
	f.groups(cfg, &errs)
	f.rates(cfg, &errs)
	f.erasure(cfg, &errs)
	f.filters(cfg, &errs)
	applyGeneration(f.Generation, &cfg.Keys, &cfg.IndexPrefix, &errs)
	if strings.TrimSpace(f.Shard) != "" {
		var err error
		if cfg.Shard, err = restore.ParseShard(f.Shard); err != nil {
			errs.bad("--shard", "%v", err)
		}
	}
	return config.Join(errs...)
}

// selection decides what to restore: the flags, else the file's sink
// selection (topics, topics.regex).
func (f *sourceFlags) selection(cfg *restore.Config, errs *flagProblems) {
	topics := topicsFlag(f.Topics, errs)
	topicsRegex := strings.TrimSpace(f.TopicsRegex)
	var err error
	switch {
	case len(topics) > 0 && topicsRegex != "":
		errs.bad("--topics-regex", "is set together with --topics; want one of them")
	case len(topics) > 0:
		cfg.Topics = topics
	case topicsRegex != "":
		if cfg.TopicsRegex, err = regexp.Compile(topicsRegex); err != nil {
			errs.bad("--topics-regex", "%q does not compile (%v); want a regular expression in RE2 syntax", topicsRegex, err)
		}
	case len(cfg.ArchiveTopics) > 0:
		cfg.Topics = cfg.ArchiveTopics
	case cfg.ArchiveTopicsRegex != nil:
		cfg.TopicsRegex = cfg.ArchiveTopicsRegex
	default:
		errs.bad("topics", "no topics to restore: pass --topics or --topics-regex, or set topics or topics.regex in the config")
	}
}

// rename reads --topic-rename and --topic-rename-regex.
func (f *sourceFlags) rename(cfg *restore.Config, errs *flagProblems) {
	cfg.Rename = f.Rename
	renameRegex := f.RenameRegex
	if renameRegex == "" {
		renameRegex = defaultRenameRegex
	}
	var err error
	if cfg.RenameRegex, err = regexp.Compile(renameRegex); err != nil {
		errs.bad("--topic-rename-regex", "%q does not compile (%v); want a regular expression in RE2 syntax", renameRegex, err)
	}
	if f.Rename == "" && renameRegex != defaultRenameRegex {
		errs.bad("--topic-rename-regex", "%q is set without --topic-rename; want both, or neither to keep names", renameRegex)
	}
}

// mode reads --timestamps and --until, and the flags that exclude each
// other: --follow with --dry-run, --until or --restore-groups.
func (f *sourceFlags) mode(cfg *restore.Config, errs *flagProblems) {
	switch ts := restore.Timestamps(strings.TrimSpace(f.Timestamps)); ts {
	case restore.TimestampsOriginal, restore.TimestampsNow:
		cfg.Timestamps = ts
	case "":
		cfg.Timestamps = restore.TimestampsOriginal
	default:
		errs.bad("--timestamps", "is %q; want original or now", f.Timestamps)
	}
	if strings.TrimSpace(f.Until) != "" {
		var err error
		if cfg.Until, err = parseUntil(f.Until); err != nil {
			errs.bad("--until", "%v", err)
		} else if f.Follow {
			errs.bad("--until", "is set together with --follow; a point in time is restored once, want at most one of them")
		}
	}
	if f.DryRun && f.Follow {
		errs.bad("--follow", "is set together with --dry-run; want at most one of them")
	}
	if f.RestoreGroups && f.Follow {
		errs.bad("--restore-groups", "is set together with --follow; the group offsets of one moment are committed once the records are restored, want at most one of them")
	}
}

// creation reads --replication-factor and --topic-config, which apply to
// the topics --create-topics creates.
func (f *sourceFlags) creation(cfg *restore.Config, errs *flagProblems) {
	if f.ReplicationFactor != 0 {
		switch {
		case f.ReplicationFactor < 1 || f.ReplicationFactor > math.MaxInt16:
			errs.bad("--replication-factor", "is %d; want a number from 1 to %d", f.ReplicationFactor, math.MaxInt16)
		case !f.CreateTopics:
			errs.bad("--replication-factor", "is set without --create-topics; it applies to the topics the restore creates")
		default:
			cfg.ReplicationFactor = int16(f.ReplicationFactor)
		}
	}
	for _, kv := range f.TopicConfigs {
		k, v, ok := strings.Cut(kv, "=")
		k = strings.TrimSpace(k)
		switch {
		case !ok || k == "":
			errs.bad("--topic-config", "is %q; want key=value (a topic config such as retention.ms=-1)", kv)
		case !f.CreateTopics:
			errs.bad("--topic-config", "is set without --create-topics; it applies to the topics the restore creates")
		default:
			if cfg.TopicConfigs == nil {
				cfg.TopicConfigs = map[string]string{}
			}
			cfg.TopicConfigs[k] = v
		}
	}
}

// repartition reads --repartition and --partitions: a target of another
// partition count, exactly once by transactions, without group offsets
// and without --follow; --partitions only for the targets
// --create-topics creates.
func (f *sourceFlags) repartition(cfg *restore.Config, errs *flagProblems) {
	m, err := restore.ParseRepartition(f.Repartition)
	if err != nil {
		errs.bad("--repartition", "%v", err)
	}
	cfg.Repartition = m
	if f.Partitions != 0 {
		switch {
		case f.Partitions < 1 || f.Partitions > math.MaxInt32:
			errs.bad("--partitions", "is %d; want a positive partition count", f.Partitions)
		case m == restore.RepartitionNone:
			errs.bad("--partitions", "is set without --repartition; without it each record goes to its archived partition, so the target needs the archive's count")
		case !f.CreateTopics:
			errs.bad("--partitions", "is set without --create-topics; it is the partition count of the targets the restore creates (an existing target keeps its own)")
		default:
			cfg.Partitions = int32(f.Partitions)
		}
	}
	if m == restore.RepartitionNone {
		return
	}
	if f.RestoreGroups {
		errs.bad("--restore-groups", "is set together with --repartition: a group's offsets count the records of one source partition, and a repartitioned target partition interleaves the records of several, so no target offset means the same; restore group offsets by hand (e.g. by timestamp)")
	}
	if f.Follow {
		errs.bad("--follow", "is set together with --repartition; not supported yet: run the repartitioning restore again to restore what is new (exactly once)")
	}
}

// rates reads --max-bytes-per-sec and --max-records-per-sec.
func (f *sourceFlags) rates(cfg *restore.Config, errs *flagProblems) {
	if s := strings.TrimSpace(f.MaxBytesPerSec); s != "" {
		n, err := parseByteRate(s)
		if err != nil {
			errs.bad("--max-bytes-per-sec", "%v", err)
		}
		cfg.MaxBytesPerSec = n
	}
	if f.MaxRecordsPerSec < 0 || math.IsNaN(f.MaxRecordsPerSec) || math.IsInf(f.MaxRecordsPerSec, 0) {
		errs.bad("--max-records-per-sec", "is %v; want a positive number of records a second (0: no limit)", f.MaxRecordsPerSec)
	} else {
		cfg.MaxRecordsPerSec = f.MaxRecordsPerSec
	}
}

// erasure reads --exclude-keys-file and --exclude-action.
func (f *sourceFlags) erasure(cfg *restore.Config, errs *flagProblems) {
	switch a := strings.TrimSpace(f.ExcludeAction); a {
	case "", "tombstone":
	case "drop":
		cfg.Filter.DropKeys = true
		if f.ExcludeKeysFile == "" {
			errs.bad("--exclude-action", "drop is set without --exclude-keys-file")
		}
	default:
		errs.bad("--exclude-action", "is %q; want tombstone or drop", f.ExcludeAction)
	}
	if f.ExcludeKeysFile == "" {
		return
	}
	keys, err := readKeyList(f.ExcludeKeysFile)
	if err != nil {
		errs.bad("--exclude-keys-file", "%v", err)
		return
	}
	cfg.ExcludeKeys = keys
}

// filters reads --key-regex, --header and --from, which leave records
// out of the restore; none of them works with --follow or
// --restore-groups yet.
func (f *sourceFlags) filters(cfg *restore.Config, errs *flagProblems) {
	parseFilter(&cfg.Filter, f.KeyRegex, f.Header, f.From, errs)
	f.expiry(cfg, errs)
	if cfg.Filter.Active() {
		if f.Follow {
			errs.bad("--follow", "is set together with a record filter (--key-regex, --header, --from or --exclude-action drop); not supported yet: its positions count the archive's records, not the ones a filter keeps")
		}
		if f.RestoreGroups && f.DryRun {
			errs.bad("--restore-groups", "is set together with --dry-run and a record filter: the group offsets count the records the filter keeps, known only when restoring")
		}
	}
}

// parseFilter reads --key-regex, --header NAME[=VALUE] and --from into
// filter (kafkas3 source and kafkas3 cat).
func parseFilter(filter *restore.Filter, keyRegex, header, from string, errs *flagProblems) {
	if keyRegex != "" {
		re, err := regexp.Compile("^(?:" + keyRegex + ")$")
		if err != nil {
			errs.bad("--key-regex", "%q does not compile: %v", keyRegex, err)
		}
		filter.KeyRegex = re
	}
	if header != "" {
		name, value, hasValue := strings.Cut(header, "=")
		if name == "" {
			errs.bad("--header", "is %q; want NAME or NAME=VALUE", header)
		}
		filter.Header, filter.HeaderHasValue = name, hasValue
		if hasValue {
			filter.HeaderValue = []byte(value)
		}
	}
	if strings.TrimSpace(from) != "" {
		t, err := parseUntil(from)
		if err != nil {
			errs.bad("--from", "%v", err)
		}
		filter.From = t
	}
}

// expiry sets --skip-expired, refused where nothing expires (--timestamps
// now) and where its positions cannot work (--follow, or --dry-run with
// --restore-groups, as the filters).
func (f *sourceFlags) expiry(cfg *restore.Config, errs *flagProblems) {
	if !f.SkipExpired {
		return
	}
	cfg.SkipExpired = true
	switch {
	case cfg.Timestamps == restore.TimestampsNow:
		errs.bad("--skip-expired", "is set together with --timestamps now: records stamped now never expire; want one of them")
	case f.Follow:
		errs.bad("--follow", "is set together with --skip-expired; not supported yet: its positions count the archive's records, not the ones it keeps")
	case f.RestoreGroups && f.DryRun:
		errs.bad("--restore-groups", "is set together with --dry-run and --skip-expired: the group offsets count the records it keeps, known only when restoring")
	}
}

// readKeyList reads a key list: one key per line (a trailing \r
// dropped), as text, or as base64:<standard base64> for keys that are not
// text; empty lines are skipped. An undecodable line is an error naming
// it.
func readKeyList(path string) (map[string]struct{}, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	keys := map[string]struct{}{}
	sc := bufio.NewScanner(f)
	sc.Buffer(make([]byte, 64<<10), 16<<20)
	for n := 1; sc.Scan(); n++ {
		line := strings.TrimSuffix(sc.Text(), "\r")
		if line == "" {
			continue
		}
		if enc, ok := strings.CutPrefix(line, "base64:"); ok {
			b, err := base64.StdEncoding.DecodeString(enc)
			if err != nil {
				return nil, fmt.Errorf("%s line %d: %q is not standard base64 (%v)", path, n, enc, err)
			}
			line = string(b)
		}
		keys[line] = struct{}{}
	}
	if err := sc.Err(); err != nil {
		return nil, fmt.Errorf("%s: %w", path, err)
	}
	if len(keys) == 0 {
		return nil, fmt.Errorf("%s lists no key", path)
	}
	return keys, nil
}

// byteUnits are the suffixes --max-bytes-per-sec takes, longest first.
var byteUnits = []struct {
	suffix string
	mult   float64
}{
	{"KiB", 1 << 10}, {"MiB", 1 << 20}, {"GiB", 1 << 30},
	{"KB", 1e3}, {"MB", 1e6}, {"GB", 1e9}, {"B", 1},
}

// parseByteRate reads a rate in bytes a second: a positive number with
// an optional unit (B, KB, MB, GB, KiB, MiB, GiB; "/s" may follow).
func parseByteRate(s string) (float64, error) {
	num := strings.TrimSuffix(strings.TrimSpace(s), "/s")
	mult := 1.0
	for _, u := range byteUnits {
		if rest, ok := strings.CutSuffix(num, u.suffix); ok {
			num, mult = strings.TrimSpace(rest), u.mult
			break
		}
	}
	n, err := strconv.ParseFloat(num, 64)
	if err != nil || !(n > 0) || math.IsInf(n, 0) { // !(n > 0): NaN too
		return 0, fmt.Errorf("is %q; want a positive number of bytes a second, with an optional unit: 10MB, 50MiB, 2.5GB", s)
	}
	return n * mult, nil
}

// groups reads --restore-groups and --group-rename.
func (f *sourceFlags) groups(cfg *restore.Config, errs *flagProblems) {
	cfg.RestoreGroups = f.RestoreGroups
	gr := f.GroupRename
	if gr == "" {
		return
	}
	re, repl, ok := strings.Cut(gr, "=")
	switch {
	case !f.RestoreGroups:
		errs.bad("--group-rename", "%q is set without --restore-groups; want both, or neither", gr)
	case !ok || re == "":
		errs.bad("--group-rename", "%q is not REGEX=REPLACEMENT; want for example 'app-(.*)=dr-$1'", gr)
	default:
		var err error
		if cfg.GroupRenameRegex, err = regexp.Compile(re); err != nil {
			errs.bad("--group-rename", "regex %q does not compile (%v); want a regular expression in RE2 syntax", re, err)
		}
		cfg.GroupRename = repl
	}
}

// topicsFlag reads a --topics flag: comma-separated Kafka topic names.
func topicsFlag(v string, errs *flagProblems) []string {
	var topics []string
	for _, t := range strings.Split(v, ",") {
		if t = strings.TrimSpace(t); t == "" {
			continue
		}
		if partition.ValidateTopic(t) != nil {
			errs.bad("--topics", "has %q, which is not a Kafka topic name; want letters, digits, '.', '_' and '-' (at most 249)", t)
		}
		topics = append(topics, t)
	}
	return topics
}

// parseUntil reads --until: an RFC 3339 time (fractions of a second
// allowed, a zone required) or a number of Unix milliseconds, the unit of
// Kafka timestamps and of the snapshot keys. Times before 1970 or after
// the year 9999 are refused.
func parseUntil(s string) (time.Time, error) {
	s = strings.TrimSpace(s)
	if ms, err := strconv.ParseInt(s, 10, 64); err == nil {
		if ms <= 0 {
			return time.Time{}, fmt.Errorf("is %d; want Unix milliseconds after 1970 or an RFC 3339 time", ms)
		}
		t := time.UnixMilli(ms).UTC()
		if t.Year() > 9999 {
			return time.Time{}, fmt.Errorf("is %d, after the year 9999; want Unix milliseconds (13 digits today) or an RFC 3339 time", ms)
		}
		return t, nil
	}
	t, err := time.Parse(time.RFC3339Nano, s)
	if err != nil {
		return time.Time{}, fmt.Errorf("is %q; want an RFC 3339 time with a zone (2026-12-01T11:00:00Z, 2026-12-01T12:00:00.250+01:00) or Unix milliseconds", s)
	}
	if t.UnixMilli() <= 0 {
		return time.Time{}, fmt.Errorf("is %q, not after 1970; want a later time", s)
	}
	return t, nil
}
