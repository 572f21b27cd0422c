package cmd

import (
	"context"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"os"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/kafkas3/kafkas3/config"
	"github.com/kafkas3/kafkas3/internal/memlimit"
	"github.com/kafkas3/kafkas3/restore"
	"github.com/kafkas3/kafkas3/s3store"
	"github.com/kafkas3/kafkas3/schemas"
	"github.com/spf13/cobra"
	"github.com/twmb/franz-go/pkg/kadm"
	"github.com/twmb/franz-go/pkg/kgo"
	"golang.org/x/term"
)

// progressInterval is how often plain progress lines are written when
// stderr is not a terminal.
const progressInterval = 10 * time.Second

// sourceLong is the help text of `kafkas3 source`.
const sourceLong = `source restores what kafkas3 sink (or Confluent's S3 sink connector) archived:
it lists <topics.dir>/<topic>/, orders each Kafka partition's objects by start
offset and produces every record to the same partition of the target topic,
in order, with the idempotent producer. Partitions are restored in parallel.

It takes the sink's config file (store, layout, format and compression keys)
plus the Confluent source's keys s3.poll.interval.ms, behavior.on.error,
record.batch.max.size and s3.path.style.access. The topics to restore are
--topics or --topics-regex, else the file's topics / topics.regex. The file's
topics are also what the sink archives, so restoring into them is refused
(a feedback loop) unless --allow-same-topic; rename the targets with
--topic-rename, as Connect's RegexRouter does: --topic-rename 'copy_of_$0'.

Avro and Parquet archives are restored in Confluent's Avro wire format: each
value schema is registered under <target topic>-value in the Schema Registry
at value.converter.schema.registry.url (the target cluster's; required with
those formats) and the values are framed with its id. Keys and headers come
from the parallel .keys and .headers objects (store.kafka.keys and
store.kafka.headers) when the archive has them; typed keys are framed for
key.converter.schema.registry.url when key.converter is avro, string and
bytes keys are restored as their bytes.

Other keys and values framed in Confluent's wire format (bytes, JSON and
envelope archives) name schemas of the source cluster's registry, which
the sink records in the archive. With value.converter.schema.registry.url
(else key.converter's) set to the target's registry, the run registers them
there before producing anything (references first; <topic>-value and
<topic>-key subjects renamed with the topic, others kept) and gives every
such key and value the target's id (--schema-ids rewrite), or registers
each under its source id in IMPORT mode (--schema-ids keep), stopping
before producing when the target cannot. --dry-run lists each schema with
its source and target id. Without a target registry the ids stay as
archived.

With the archive index the sink writes (kafkas3.index.prefix), the run
checks the archive from the index and the listing before producing
anything (every indexed object listed at its size, each partition's
offsets, gaps, overlaps and order, record sizes and keys as the entries
record them) and reads each object once, when it is restored: downloaded,
checked against its entry (CRC32C, SHA-256 when given, record count,
offsets) and decoded in full before its first record is produced. Damage
found then stops the run at that object (nothing of it produced, exit 1
naming it); a re-run resumes exactly. --prove-first, --dry-run,
behavior.on.error ignore/log, --allow-gaps, --until and archives without
index read and check every object before producing anything instead
(decode to its end, sizes, the record counts of .keys and .headers objects,
and the index entry when there is one). Source offsets come from the index,
else from the names and record counts (consecutive offsets assumed; the
plan says so). Each offset is restored once, in offset order, even when
objects overlap. A gap (offsets no readable object holds) or a damaged
object found before producing stops the run before anything is produced,
unless --allow-gaps (or behavior.on.error ignore/log for damaged objects),
which restores the rest and reports every gap. --dry-run prints the checks
per partition.

Every layout is restored: the default (partition=<n>), time-based, daily,
hourly and field folders, at any depth (directory.delim): a partition's
objects are found in every folder and ordered by their offsets, never by
folder name. With the archive index or envelopes, records of objects of
different folders that interleave in offsets are merged in offset order.
Without either (Confluent's connector), the order of objects in several
folders is unknown (their names give only the first offset): the plan marks
such partitions "UNKNOWN" under ORDER and the run stops before producing
anything, unless --allow-unknown-order, which restores each of their
objects whole, in start-offset order, and reports the partitions.

Objects written with store.envelope=true are recognised by their content and
restored whole: key, value, headers and the archived timestamp (--timestamps
original, the default; --timestamps now lets the producer stamp the time).
Old timestamps meet the target's retention.ms: records older than it may be
deleted soon after the restore, so raise retention.ms on the target first
(or use --timestamps now).

--until TIME (RFC 3339, or Unix milliseconds) restores each topic as the
cluster held it at TIME: per partition, the records below a cut offset. The
cut is the end offset of the newest offset snapshot at or before TIME (the
sink writes them under kafkas3.index.prefix; the same snapshot for every
partition of a topic), refined by the records' own timestamps where they are
LogAppendTime (store.envelope), which makes it exact; without a snapshot,
the timestamps alone (exact for LogAppendTime, best effort for CreateTime).
An archive with neither is refused. The dry run shows each cut and how it
was chosen. A restore with --until is a prefix of the full restore: running
it again produces nothing, a full restore afterwards continues it, and a
later --until that lies before what the target already holds is refused.

--restore-groups also restores the consumer groups: once the records are
restored (and on a re-run that produces nothing), each group of the topic's
newest offset snapshot (with --until, the snapshot of that moment) is
committed on the target, each partition's offset translated exactly: a
group at source offset O gets the target offset of the first restored record
whose source offset is >= O, or the end of the restored data; exact across
offset gaps, into a target that already held records, and after a resumed
restore. --group-rename 'REGEX=REPLACEMENT' renames groups whose whole name
matches. A group with members on the target is refused by name before
anything is produced or committed. The dry run prints, per group and
partition, source offset -> target offset.

--repartition murmur2|roundrobin restores into a target with any number of
partitions (--create-topics --partitions N sets the count of a created one):
murmur2 puts a keyed record where Kafka's Java producer puts it on the
target's count, records without a key round robin; roundrobin ignores keys.
Records of one source partition with one key keep their order. Each source
partition is produced by a transactional producer that commits its position
(group kafkas3-restore-<target>:<source partition>) with its records, so a
re-run after a crash adds each record once: read the target with
isolation.level=read_committed. Not with --restore-groups or --follow.

Re-running the same command resumes after a crash or interrupt without
duplicates and without a local state file: the restore keeps a marker in the
consumer group kafkas3-restore-<target topic>. A run after completion
produces nothing. The command exits after the last object, unless --follow.

Exit codes: 0 done, 1 failure, 2 configuration or flag error.`

func newSourceCmd(streams IO) *cobra.Command { return newSourceCmdRun(streams, runSourceCmd) }

// newSourceCmdRun builds `kafkas3 source` with run as its behaviour, so
// tests can check the flags apart from it.
func newSourceCmdRun(streams IO, run func(context.Context, *sourceFlags, IO) error) *cobra.Command {
	f := &sourceFlags{}
	c := &cobra.Command{
		Use:   "source --config FILE",
		Short: "Restore an archive into Kafka, in order, exactly once",
		Long:  sourceLong,
		Example: `  kafkas3 source --config orders.yaml --topic-rename 'copy_of_$0' --create-topics
  kafkas3 source -c orders.yaml --topics orders --dry-run
  kafkas3 source -c orders.properties --topics-regex 'orders-.*' --topic-rename 'restored-$0' --follow`,
		Args: cobra.NoArgs,
		RunE: func(c *cobra.Command, _ []string) error {
			if c.Flags().Changed(oldUnknownOrderFlag) {
				fmt.Fprintf(streams.Err, "kafkas3 source: --%s is deprecated, use --allow-unknown-order (the same switch)\n", oldUnknownOrderFlag)
			}
			return run(c.Context(), f, streams)
		},
	}
	f.register(c)
	return c
}

// oldUnknownOrderFlag is --allow-unknown-order's old name, kept hidden as
// an alias.
const oldUnknownOrderFlag = "allow-unproven-order"

// register defines the flags of `kafkas3 source` on c.
func (f *sourceFlags) register(c *cobra.Command) {
	fl := c.Flags()
	fl.StringVarP(&f.ConfigFile, "config", "c", "", "config file (YAML, JSON, .properties or Connect REST JSON), the sink's file works")
	fl.StringArrayVarP(&f.Params, "param", "p", nil, "set any config key: -p key=value (repeatable)")
	fl.StringVar(&f.Topics, "topics", "", "archived topics to restore, comma separated (default: the file's topics)")
	fl.StringVar(&f.TopicsRegex, "topics-regex", "", "restore every archived topic whose whole name matches (default: the file's topics.regex)")
	fl.StringVar(&f.Rename, "topic-rename", "", "target topic name, Java replacement syntax: 'copy_of_$0' (default: keep names)")
	fl.StringVar(&f.RenameRegex, "topic-rename-regex", defaultRenameRegex, "rename topics whose whole name matches this expression; others keep their name")
	fl.StringVar(&f.SchemaIDs, "schema-ids", string(schemas.IDsRewrite),
		"with a target registry (value.converter.schema.registry.url): rewrite (register the archive's schemas, and give every framed key and value the target's id) or keep (register each schema with its source id in IMPORT mode; stop before producing if the target cannot)")
	fl.BoolVar(&f.DryRun, "dry-run", false, "read and check every object, print the plan (targets, partitions, objects, bytes, offsets, per partition: records, duplicates, gaps, order, completeness, offsets lost before archiving; the archived topic configurations and, when bootstrap.servers is set and reachable, how each target differs or would be created) and produce nothing; needs no Kafka; exits 1 when the restore would stop")
	fl.BoolVar(&f.Follow, "follow", false, "keep polling the archive every s3.poll.interval.ms and restore new objects")
	fl.BoolVar(&f.CreateTopics, "create-topics", false, "create missing target topics as the archive recorded them (partition count, replication factor, topic configs; without a recorded description: the archive's partition count and the broker's defaults), after the cluster validated every creation")
	fl.IntVar(&f.ReplicationFactor, "replication-factor", 0, "with --create-topics: the replication factor of created topics instead of the archived one (capped at the number of brokers)")
	fl.StringArrayVar(&f.TopicConfigs, "topic-config", nil, "with --create-topics: set a config on created topics over the archived one: --topic-config retention.ms=-1 (repeatable)")
	fl.StringVar(&f.Timestamps, "timestamps", string(restore.TimestampsOriginal),
		"timestamps of restored envelope records (store.envelope): original (as archived) or now (the producer's time)")
	fl.StringVar(&f.Until, "until", "",
		"restore each topic as the cluster held it at this time: RFC 3339 (2026-12-01T11:00:00Z) or Unix milliseconds; "+
			"the cut per partition comes from the sink's offset snapshots, refined by LogAppendTime timestamps (the dry run shows it)")
	fl.BoolVar(&f.RestoreGroups, "restore-groups", false,
		"once the records are restored, commit the consumer groups' offsets from the sink's newest offset snapshot (with --until: the one of that moment), "+
			"each translated to the target offset of the first restored record at or after it; groups with members on the target are refused; the dry run prints source offset -> target offset")
	fl.StringVar(&f.GroupRename, "group-rename", "",
		"with --restore-groups: 'REGEX=REPLACEMENT' restores a group whose whole name matches REGEX as REPLACEMENT (Java syntax, $0, $1 expand, as --topic-rename); others keep their name")
	fl.StringVar(&f.Shard, "shard", "",
		"I/N: restore only the partitions of shard I of N (0 <= I < N; shard = (FNV-1a hash of the archived topic + partition) mod N), "+
			"so N processes, e.g. a Kubernetes Indexed Job with --shard $(JOB_COMPLETION_INDEX)/N, restore one archive together; each creates missing targets with the archive's partition count (--partitions with --repartition) and commits only its partitions' markers, positions and group offsets")
	fl.StringVar(&f.Repartition, "repartition", "",
		"restore into a target of any partition count: murmur2 (a keyed record goes where Kafka's Java producer puts it on the target's count, records without a key round robin) or roundrobin (keys ignored); "+
			"each source partition is produced by a transactional producer that commits its position with its records, exactly once across crashes: read the target with isolation.level=read_committed (default: each record to its archived partition)")
	fl.IntVar(&f.Partitions, "partitions", 0, "with --repartition and --create-topics: the partition count of created targets (default: the archive's)")
	fl.IntVar(&f.Generation, "generation", 1, generationFlagDoc)
	fl.StringVar(&f.ExcludeKeysFile, "exclude-keys-file", "",
		"erase these keys (a compliance list, one key per line, as text or base64:<standard base64>): each archived record with one is restored as a tombstone (its key, a null value, no headers) in its place; re-runs must use the same list")
	fl.StringVar(&f.ExcludeAction, "exclude-action", "tombstone",
		"what --exclude-keys-file does to a listed key's records: tombstone (restored as a tombstone in its place), or drop (left out, counted as filtered)")
	fl.StringVar(&f.KeyRegex, "key-regex", "", "restore only records whose whole key matches this regular expression (RE2); records without a key never do")
	fl.StringVar(&f.Header, "header", "", "restore only records with a header NAME, or NAME=VALUE with that value")
	fl.StringVar(&f.From, "from", "", "restore only records whose timestamp is at or after this time: RFC 3339 (2026-12-01T11:00:00Z) or Unix milliseconds")
	fl.BoolVar(&f.SkipExpired, "skip-expired", false,
		"leave out, counted (expired=N), the envelope records a target would delete at once: stamped before now minus its retention.ms (--timestamps original; the first run fixes the cutoff, re-runs reuse it). "+
			"Without it the plan and the run warn about them")
	fl.StringVar(&f.MaxBytesPerSec, "max-bytes-per-sec", "",
		"hand records to the producer at most this fast, in bytes of keys, values and headers a second (10MB, 50MiB), across every partition of this process: for a live target (default: no limit)")
	fl.Float64Var(&f.MaxRecordsPerSec, "max-records-per-sec", 0,
		"hand at most this many records a second to the producer, across every partition of this process (default 0: no limit)")
	fl.BoolVar(&f.AllowSameTopic, "allow-same-topic", false, "allow restoring into a topic this config's topics/topics.regex archives")
	fl.BoolVar(&f.AllowGaps, "allow-gaps", false, "restore what the archive holds even when it has gaps or damaged objects, and report every gap (default: stop before producing anything)")
	fl.BoolVar(&f.ProveFirst, "prove-first", false,
		"with an archive index: read and check every object before producing anything, so nothing is produced unless the whole archive is proven "+
			"(default: check the archive from its index and the listing, and read each object once, when it is restored; damage found then stops the partition before that object)")
	fl.BoolVar(&f.AllowUnknownOrder, "allow-unknown-order", false,
		"restore partitions whose record order is unknown (objects in several folders, e.g. time-based or field layouts, without archive index or envelopes) "+
			"object by object in start-offset order, and report them (default: stop before producing anything)")
	// The flag's old name, hidden, sets the same switch so that scripts
	// written for it keep working; the run notes on stderr that it is
	// deprecated (pflag's MarkDeprecated would print that on stdout, the
	// command's output).
	fl.BoolVar(&f.AllowUnknownOrder, oldUnknownOrderFlag, false, "deprecated: --allow-unknown-order")
	_ = fl.MarkHidden(oldUnknownOrderFlag)
	fl.StringVar(&f.Bootstrap, "bootstrap-servers", "", "target Kafka brokers host:port, comma separated (bootstrap.servers)")
	fl.StringVar(&f.LocalDir, "local-dir", "", "read the archive from this local directory instead of S3 (store.local.dir)")
	fl.StringVar(&f.Bucket, "bucket", "", "S3 bucket (s3.bucket.name)")
	fl.StringVar(&f.LogLevel, "log-level", "info", "log level: debug, info, warn, error")
	f.logFormatFlag(fl)
	f.telemetryFlags(fl)
}

// shardText is --shard for the log: "I/N", or "all" without it.
func shardText(s restore.Shard) string {
	if !s.Sharded() {
		return "all"
	}
	return s.String()
}

// sourceIdentity names the archive in the restore's resume markers: the
// store and topics.dir. runSourceCmd makes a local directory absolute
// first, so the identity does not depend on the working directory.
func sourceIdentity(storeIdent, topicsDir string) string {
	return storeIdent + "/" + topicsDir
}

// sourceHeapHeadroom is how far above its live heap a restore that reads
// each object once (restore.Restorer.ReadsOnce) lets the Go heap grow
// before collecting (memlimit; GOMEMLIMIT overrides it). With the default
// GOGC alone the heap grows to twice the live heap (restore.MaxRecordMemory
// of decoded records, the producer's buffer, the objects being decoded): a
// 1 GiB restore peaked at 427-472 MiB RSS with 96 MiB of records and a
// 128 MiB producer buffer, and at 285-361 MiB with 48 MiB and 32 MiB; with
// this headroom at 212-241 MiB, for 13-37% more CPU (BENCHMARKS.md,
// "Restore memory"). A restore
// that keeps the whole-archive proof (--prove-first, --dry-run,
// --allow-gaps, --until, behavior.on.error ignore or log) runs without it:
// its collections slowed the proof. (The plan of a read-once restore
// still reads the objects the index lacks, under the limit.)
const sourceHeapHeadroom = 64 << 20

func runSourceCmd(ctx context.Context, f *sourceFlags, streams IO) error {
	settings, log, err := loadSettings(config.Source, f.configFlags, f.keyFlags(config.NewKeys()), streams)
	if settings == nil {
		return err
	}
	sc, cfg, err := sourceConfig(settings, f, log, err)
	if err != nil {
		return err
	}
	store, ident, err := sc.Store.Open(ctx, log)
	if err != nil {
		return err
	}
	cfg.Identity = sourceIdentity(ident, cfg.Keys.TopicsDir)
	if f.wrapStore != nil {
		store = f.wrapStore(store)
	}
	store, observeProgress, stopTelemetry, err := observeSource(f.MetricsAddr, &cfg, store, log)
	if err != nil {
		return err
	}
	defer stopTelemetry()
	r, err := restore.New(cfg, store, log)
	if err != nil {
		return fmt.Errorf("%w: %w", ErrConfig, err)
	}
	if err := checkArchiveTopics(ctx, store, cfg, ident, topicsRegexLabel(f)); err != nil {
		return err
	}
	noteGenerations(ctx, store, sc.Restore.IndexPrefix, cfg.Topics, f.Generation, stderrFor(f.configFlags, streams, log), log)
	if f.DryRun {
		return runSourceDryRun(ctx, r, cfg, streams.Out)
	}
	log.Info("source starting", "archive", cfg.Identity, "topics", strings.Join(cfg.Topics, ","),
		"topics.regex", regexString(cfg.TopicsRegex), "rename", cfg.Rename, "format", sc.FormatName,
		"follow", cfg.Follow, "create.topics", cfg.CreateTopics, "replication.factor", cfg.ReplicationFactor, "topic.configs", len(cfg.TopicConfigs),
		"shard", shardText(cfg.Shard), "repartition", string(cfg.Repartition), "partitions", cfg.Partitions)
	if r.ReadsOnce() {
		defer memlimit.Start(ctx, memlimit.Config{Headroom: sourceHeapHeadroom})()
	}
	stderr := stderrFor(f.configFlags, streams, log)
	progress := restore.NewRenderer(stderr, isTerminal(stderr), progressInterval)
	res, err := runRestore(ctx, r, observeProgress(progress))
	if err != nil {
		return err
	}
	return reportRestore(ctx, cfg, res, IO{Out: streams.Out, Err: stderr}, log)
}

// sourceConfig is the restore config of the settings and the flags, with
// every problem of both (and flagErr, a problem found before) reported
// together.
func sourceConfig(settings *config.Settings, f *sourceFlags, log *slog.Logger, flagErr error) (*config.SourceConfig, restore.Config, error) {
	sc, serr := settings.Source(log)
	if sc == nil {
		return nil, restore.Config{}, serr
	}
	cfg := sc.Restore
	ferr := f.apply(&cfg)
	if sc.SchemaRegistry != nil {
		cfg.Schemas = schemas.NewRegistrar(sc.SchemaRegistry, schemas.IDs(f.SchemaIDs))
	}
	var brokers error
	if !f.DryRun {
		brokers = sc.NeedBrokers()
	}
	return sc, cfg, config.Join(flagErr, serr, ferr, brokers)
}

// restoreResult is what a restore run returned.
type restoreResult struct {
	sum restore.Summary
	err error
}

// runRestore runs the restore reporting to progress. On a signal it
// waits shutdownGrace for the run to stop.
func runRestore(ctx context.Context, r *restore.Restorer, progress restore.Progress) (restoreResult, error) {
	done := make(chan restoreResult, 1)
	go func() {
		sum, err := r.Run(ctx, progress)
		done <- restoreResult{sum, err}
	}()
	select {
	case res := <-done:
		return res, nil
	case <-ctx.Done():
		select {
		case res := <-done:
			return res, nil
		case <-time.After(shutdownGrace):
			return restoreResult{}, errors.New("shutdown did not finish within " + strconv.Itoa(int(shutdownGrace.Seconds())) +
				"s; what landed in the targets is a prefix of the archive, re-run the same command to resume")
		}
	}
}

// reportRestore prints the summary (and the restored group offsets), warns
// about what was not restored, and returns the run's outcome.
func reportRestore(ctx context.Context, cfg restore.Config, res restoreResult, streams IO, log *slog.Logger) error {
	fmt.Fprintf(streams.Out, "kafkas3 source: %s\n", summaryFields(res.sum))
	if cfg.RestoreGroups && res.err == nil {
		if err := restore.WriteGroupsText(streams.Out, res.sum.GroupOffsets); err != nil {
			return err
		}
		fmt.Fprintf(streams.Out, "kafkas3 source: restored the offsets of %d consumer groups\n", res.sum.Groups)
	}
	if res.sum.Skipped() {
		warnSkipped(streams.Err, log, res.sum)
	}
	if u := res.sum.UnknownOrder; len(u) > 0 && !res.sum.DryRun && res.err == nil {
		fmt.Fprintf(streams.Err, "kafkas3 source: WARNING: the record order of %d partitions is unknown (objects in several folders without archive index or envelopes), "+
			"restored object by object in start-offset order (--allow-unknown-order): %s\n", len(u), strings.Join(u, ", "))
	}
	if skipped := res.sum.KeysSkipped; len(skipped) > 0 {
		args := make([]any, 0, 2*len(skipped))
		for reason, n := range skipped {
			args = append(args, reason, n)
		}
		log.Info("keys skipped", args...)
	}
	interrupted := ctx.Err() != nil
	switch {
	case res.err != nil && interrupted && errors.Is(res.err, ctx.Err()):
		if cfg.Follow {
			log.Info("stopped by signal; what landed is a prefix of the archive, re-run to resume")
			return nil
		}
		return errors.New("interrupted before the restore finished; what landed in the targets is a prefix of the archive, re-run the same command to resume")
	case res.err != nil:
		return sourceError(res.err)
	case interrupted:
		log.Info("stopped by signal")
	}
	return nil
}

// ErrNothingToRestore means the archive has no folder for a chosen topic,
// or no topic folder matches the chosen regex: most likely a typo, which
// must not end in a run that reports success having restored nothing.
var ErrNothingToRestore = errors.New("nothing to restore")

// errStopListing ends a listing at the first key that answers the question.
var errStopListing = errors.New("stop listing")

// checkArchiveTopics fails with ErrNothingToRestore when an explicit topic
// (--topics, or the file's topics) has no folder in the archive, or when the
// topics regex matches no topic folder. It lists at most until the first
// key that settles each question. regexLabel names where the regex came
// from (--topics-regex or topics.regex); storeIdent names the store.
//
// A folder that exists but holds no object of the configured format still
// passes here; the restore warns about it and reports objects=0.
func checkArchiveTopics(ctx context.Context, st s3store.Store, cfg restore.Config, storeIdent, regexLabel string) error {
	if len(cfg.Topics) > 0 {
		var missing []string
		for _, t := range cfg.Topics {
			prefix := cfg.Keys.TopicPrefix(t)
			found := false
			err := st.List(ctx, prefix, func(s3store.ObjectInfo) error {
				found = true
				return errStopListing
			})
			if err != nil && !errors.Is(err, errStopListing) {
				return fmt.Errorf("list archive topic %q under %q: %w", t, prefix, err)
			}
			if !found {
				missing = append(missing, fmt.Sprintf("topic %q has no folder in the archive (nothing under %q)", t, prefix))
			}
		}
		if len(missing) > 0 {
			return fmt.Errorf("%w: %s in %s; check the topic names (list the archive with --dry-run --topics-regex '.*')",
				ErrNothingToRestore, strings.Join(missing, "; "), storeIdent)
		}
		return nil
	}
	if cfg.TopicsRegex == nil {
		return nil
	}
	re, err := regexp.Compile(`^(?:` + cfg.TopicsRegex.String() + `)$`)
	if err != nil {
		return fmt.Errorf("%w: %s %q: %w", ErrConfig, regexLabel, cfg.TopicsRegex, err) // compiled before, unanchored
	}
	root := restore.TopicsRoot(cfg.Keys)
	matched := false
	err = st.List(ctx, root, func(info s3store.ObjectInfo) error {
		if topic, _ := restore.TopicFolder(cfg.Keys, info.Key); topic != "" && re.MatchString(topic) {
			matched = true
			return errStopListing
		}
		return nil
	})
	if err != nil && !errors.Is(err, errStopListing) {
		return fmt.Errorf("list archive under %q: %w", root, err)
	}
	if !matched {
		return fmt.Errorf("%w: %s %q matched no topic folder under %q in %s", ErrNothingToRestore, regexLabel, cfg.TopicsRegex, root, storeIdent)
	}
	return nil
}

// topicsRegexLabel names where the restore's topics regex comes from.
func topicsRegexLabel(f *sourceFlags) string {
	if strings.TrimSpace(f.TopicsRegex) != "" {
		return "--topics-regex"
	}
	return "topics.regex"
}

// runSourceDryRun prints the plan and checks the feedback-loop guard. It
// produces nothing; it connects only to compare the targets with the
// archived topic descriptions, when bootstrap.servers is set.
func runSourceDryRun(ctx context.Context, r *restore.Restorer, cfg restore.Config, out io.Writer) error {
	plan, err := r.Plan(ctx)
	if err != nil {
		return sourceError(err)
	}
	if err := plan.WriteText(out); err != nil {
		return err
	}
	if err := r.WriteTargetPlan(ctx, out, plan); err != nil {
		return fmt.Errorf("compare the target topics with the archive: %w", err)
	}
	if err := r.WriteSchemaPlan(ctx, out, plan); err != nil {
		return sourceError(err)
	}
	fmt.Fprintln(out, "dry run: nothing produced")
	if err := r.Check(plan); err != nil {
		return fmt.Errorf("the restore would stop before producing anything: %w", err)
	}
	if cfg.RestoreGroups {
		if err := dryRunGroups(ctx, r, cfg, plan, out); err != nil {
			return err
		}
	}
	if cfg.AllowSameTopic {
		return nil
	}
	var archive *regexp.Regexp
	if cfg.ArchiveTopicsRegex != nil {
		archive = regexp.MustCompile(`^(?:` + cfg.ArchiveTopicsRegex.String() + `)$`) // compiled before, unanchored
	}
	var loop []string
	for _, t := range plan.Topics {
		if (archive != nil && archive.MatchString(t.Target)) || slices.Contains(cfg.ArchiveTopics, t.Target) {
			loop = append(loop, strconv.Quote(t.Target))
		}
	}
	if len(loop) > 0 {
		return fmt.Errorf("%w: %w: %s would be archived again by this config's topics/topics.regex, a feedback loop; "+
			"rename the target (--topic-rename) or pass --allow-same-topic", ErrConfig, restore.ErrFeedbackLoop, strings.Join(loop, ", "))
	}
	return nil
}

// dryRunGroups prints the group offsets --restore-groups would commit. With
// bootstrap.servers it reads the targets' markers and end offsets (only
// reads) for absolute target offsets; without, or when the target cannot
// be reached, offsets are shown relative to each partition's restore start.
func dryRunGroups(ctx context.Context, r *restore.Restorer, cfg restore.Config, plan *restore.Plan, out io.Writer) error {
	var adm *kadm.Client
	if len(cfg.Brokers) > 0 {
		cl, err := kgo.NewClient(append([]kgo.Opt{kgo.SeedBrokers(cfg.Brokers...)}, cfg.KafkaOpts...)...)
		if err == nil {
			defer cl.Close()
			pctx, cancel := context.WithTimeout(ctx, 10*time.Second)
			if cl.Ping(pctx) == nil {
				adm = kadm.NewClient(cl)
			}
			cancel()
		}
	}
	gps, err := r.DryRunGroups(ctx, adm, plan)
	if err != nil {
		return sourceError(err)
	}
	if err := restore.WriteGroupsText(out, gps); err != nil {
		return err
	}
	if adm == nil {
		fmt.Fprintln(out, "target offsets as start+N: N records after where the partition's restore starts (the target was not reached)")
	}
	return nil
}

// sourceError marks the restore errors that the user fixes in the config or
// flags as configuration errors (exit code 2).
func sourceError(err error) error {
	if errors.Is(err, restore.ErrInvalidConfig) || errors.Is(err, restore.ErrFeedbackLoop) {
		return fmt.Errorf("%w: %w", ErrConfig, err)
	}
	return err
}

// summaryFields formats the run summary as key=value fields. skipped
// counts the listed keys not restored plus the damaged objects skipped;
// duplicates the archived records whose offsets another object holds
// (restored once); gaps and gap_offsets what the run could not restore;
// lost the offsets the index records as lost before archiving (when
// any); with --until, until and past_cut (untilFields) follow, then, each
// when not zero: unknown_order (partitions restored in an unknown record
// order, --allow-unknown-order), damaged_found (damaged objects found
// while reading them to produce them: the run stopped before anything of
// them was produced), erased (records of --exclude-keys-file's keys
// produced as tombstones), filtered (left out by the filters), expired
// (left out by --skip-expired), and schemas with unknown_schema_ids
// (archived schemas registered in the target registry; framed-looking
// keys and values whose id the archive does not record).
func summaryFields(s restore.Summary) string {
	skipped := s.ObjectsSkipped
	for _, n := range s.KeysSkipped {
		skipped += n
	}
	line := fmt.Sprintf("topics=%d partitions=%d objects=%d records=%d bytes=%d seconds=%.1f skipped=%d already_present=%d duplicates=%d damaged_objects=%d gaps=%d gap_offsets=%d",
		s.Topics, s.Partitions, s.Objects, s.Records, s.Bytes, s.Seconds(), skipped, s.AlreadyPresent,
		s.Duplicates, s.ObjectsSkipped, len(s.Gaps), s.GapOffsets) + countField("lost", s.LostOffsets) + untilFields(s)
	for _, f := range []struct {
		name string
		n    int64
	}{
		{"unknown_order", int64(len(s.UnknownOrder))}, {"damaged_found", int64(len(s.DamagedFound))},
		{"erased", s.Erased}, {"filtered", s.Filtered}, {"expired", s.Expired},
	} {
		line += countField(f.name, f.n)
	}
	if s.Schemas > 0 || s.SchemaIDsUnknown > 0 {
		line += fmt.Sprintf(" schemas=%d unknown_schema_ids=%d", s.Schemas, s.SchemaIDsUnknown)
	}
	return line
}

// countField is " name=n" when n is not zero, else empty.
func countField(name string, n int64) string {
	if n == 0 {
		return ""
	}
	return fmt.Sprintf(" %s=%d", name, n)
}

// untilFields is " until=<RFC 3339> past_cut=N" with --until (N archived
// records lie past the cuts and are not restored), else empty.
func untilFields(s restore.Summary) string {
	if s.Until.IsZero() {
		return ""
	}
	return fmt.Sprintf(" until=%s past_cut=%d", s.Until.UTC().Format(time.RFC3339Nano), s.PastCut)
}

// warnSkipped writes the warning line of a run that left records of the
// archive out, and logs every gap.
func warnSkipped(w io.Writer, log *slog.Logger, s restore.Summary) {
	var list []string
	for _, g := range s.Gaps {
		list = append(list, fmt.Sprintf("%s/%d %s", g.Topic, g.Partition, g.Gap))
	}
	fmt.Fprintf(w, "kafkas3 source: WARNING: records of the archive were not restored: %d damaged objects skipped, %d gaps (%d offsets): %s\n",
		s.ObjectsSkipped, len(s.Gaps), s.GapOffsets, strings.Join(list, "; "))
	log.Warn("restore incomplete", "damaged_objects", s.ObjectsSkipped, "gaps", len(s.Gaps), "gap_offsets", s.GapOffsets)
}

// isTerminal reports whether w is a terminal (then a live progress bar is drawn).
func isTerminal(w io.Writer) bool {
	f, ok := w.(*os.File)
	return ok && term.IsTerminal(int(f.Fd()))
}

func regexString(re *regexp.Regexp) string {
	if re == nil {
		return ""
	}
	return re.String()
}
