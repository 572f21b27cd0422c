package restore

import (
	"context"
	"errors"
	"fmt"
	"io"
	"maps"
	"sort"
	"strconv"
	"strings"
	"text/tabwriter"
	"time"

	"github.com/kafkas3/kafkas3/index"
	"github.com/twmb/franz-go/pkg/kadm"
	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kgo"
	"github.com/twmb/franz-go/pkg/kmsg"
)

// Target topics
//
// Before anything is produced, each pass checks the targets. Missing ones
// are refused unless Config.CreateTopics; then each is created as its
// archived description says (topics.go, Restorer.setup): the archived
// partition count (or the archive's, when higher or when there is no
// description), Config.ReplicationFactor or the archived replication
// factor, capped at the number of brokers with a warning (without either:
// the broker default), and the archived configs with Config.TopicConfigs
// over them. Every creation is first validated by the cluster
// (CreateTopics with validate only), all of them before the first is
// created; a refusal (ErrTopicConfig) names the target and each config
// the cluster refuses alone, with its origin (archived or --topic-config),
// and nothing is created or produced; so does a min.insync.replicas above
// the replication factor the topic gets (Kafka would create it and refuse
// every acks=all produce). Records without a key bound for a
// compacting target (the created topic's cleanup.policy, or an existing
// one's) are refused the same way (ErrCompactedNullKey, checkNullKeys):
// the broker would refuse them. Existing targets are never altered;
// CompareTargets and WriteTargetPlan (the dry run) list how they differ
// from the archived description: the partition count, each archived key
// whose effective value differs, and each key the target sets itself
// that the archive does not.

// ErrTopicConfig: a missing target cannot be created as asked: the
// cluster refuses a config, the partition count or the replication
// factor, or min.insync.replicas exceeds the replicas it would get;
// nothing was created or produced.
var ErrTopicConfig = errors.New("a target topic cannot be created as asked")

// describeArchived loads, for each planned topic, the latest topic
// description the sink recorded (index.LatestTopic), or with Config.Until
// the one in force then (index.TopicAt); topics without one keep
// Described nil.
func (r *Restorer) describeArchived(ctx context.Context, plan *Plan) error {
	if r.cfg.IndexPrefix == "" {
		return nil
	}
	at := int64(-1) // the latest
	if !r.cfg.Until.IsZero() {
		at = r.cfg.Until.UnixMilli()
	}
	for i := range plan.Topics {
		t := &plan.Topics[i]
		d, err := index.TopicAt(ctx, r.store, r.cfg.IndexPrefix, t.Source, at)
		if err != nil {
			return fmt.Errorf("read the archived description of topic %q: %w", t.Source, err)
		}
		if d != nil && at >= 0 && d.TimeMs > at {
			r.log.Warn("the archive describes the topic only after --until; its earliest description is used",
				"topic", t.Source, "described_at", time.UnixMilli(d.TimeMs).UTC().Format(time.RFC3339))
		}
		t.Described = d
	}
	return nil
}

// TopicSetup is how --create-topics creates a missing target.
type TopicSetup struct {
	Partitions int32
	// ReplicationFactor is -1 for the broker's default.
	ReplicationFactor int16
	// CappedFrom is the replication factor asked for when it was capped
	// at the number of brokers (0 when not capped).
	CappedFrom int16
	// Configs are the archived configs with Config.TopicConfigs applied.
	Configs map[string]string
}

// setup returns how t's target is created on a cluster of brokers brokers
// (0 when unknown: no cap). The partition count is the archived
// description's, or the archive's when its objects name a higher
// partition (or there is no description); the replication factor is
// Config.ReplicationFactor, else the description's, else the broker
// default, capped at brokers; the configs are the description's with
// Config.TopicConfigs over them.
func (r *Restorer) setup(t *TopicPlan, brokers int) TopicSetup {
	s := TopicSetup{Partitions: t.Partitions, ReplicationFactor: -1, Configs: map[string]string{}}
	if d := t.Described; d != nil {
		s.Partitions = max(s.Partitions, d.Partitions)
		s.ReplicationFactor = d.ReplicationFactor
		maps.Copy(s.Configs, d.Configs)
	}
	if r.cfg.ReplicationFactor > 0 {
		s.ReplicationFactor = r.cfg.ReplicationFactor
	}
	if brokers > 0 && int(s.ReplicationFactor) > brokers {
		s.CappedFrom, s.ReplicationFactor = s.ReplicationFactor, int16(brokers)
	}
	maps.Copy(s.Configs, r.cfg.TopicConfigs)
	return s
}

func configPtrs(m map[string]string) map[string]*string {
	out := make(map[string]*string, len(m))
	for k, v := range m {
		out[k] = kadm.StringPtr(v)
	}
	return out
}

// validateCreates asks the cluster (CreateTopics with validate only)
// whether each missing target can be created as setups say, before any is
// created. A refusal names the target and, when the cluster refuses a
// config on its own, each refused config key and value (each key is then
// validated alone to find them).
func (r *Restorer) validateCreates(ctx context.Context, adm *kadm.Client, missing []string, setups map[string]TopicSetup) error {
	var problems []string
	refusals := []error{ErrTopicConfig} // and the cluster's refusals
	for _, name := range missing {
		s := setups[name]
		// Kafka creates a topic whose min.insync.replicas exceeds its
		// replicas, and then refuses every acks=all produce to it.
		if v, ok := s.Configs["min.insync.replicas"]; ok && s.ReplicationFactor > 0 {
			if m, err := strconv.Atoi(strings.TrimSpace(v)); err == nil && m > int(s.ReplicationFactor) {
				why := ""
				if s.CappedFrom > 0 {
					why = fmt.Sprintf(", capped from %d at the number of brokers", s.CappedFrom)
				}
				problems = append(problems, fmt.Sprintf("target topic %q: config min.insync.replicas=%q (%s) needs %d in-sync replicas, the topic gets replication factor %d%s, so every acks=all produce would be refused (set --topic-config min.insync.replicas=%d)",
					name, v, configOrigin("min.insync.replicas", r.cfg.TopicConfigs), m, s.ReplicationFactor, why, s.ReplicationFactor))
				continue
			}
		}
		try := func(configs map[string]string) (error, error) {
			var refused error
			err := r.retry(ctx, fmt.Sprintf("validate the creation of target topic %q", name), nil, func(ctx context.Context) error {
				resp, err := adm.ValidateCreateTopics(ctx, s.Partitions, s.ReplicationFactor, configPtrs(configs), name)
				if err != nil {
					return err
				}
				refused = nil
				if tr, ok := resp[name]; ok && tr.Err != nil && !errors.Is(tr.Err, kerr.TopicAlreadyExists) {
					refused = tr.Err
					if tr.ErrMessage != "" {
						refused = fmt.Errorf("%w: %s", tr.Err, tr.ErrMessage)
					}
					if transient(tr.Err) {
						return tr.Err
					}
				}
				return nil
			})
			return refused, err
		}
		refused, err := try(s.Configs)
		if err != nil {
			return fmt.Errorf("validate the creation of target topic %q: %w", name, err)
		}
		if refused == nil {
			continue
		}
		var bad []string
		for _, k := range sortedKeys(s.Configs) {
			one, err := try(map[string]string{k: s.Configs[k]})
			if err != nil {
				return fmt.Errorf("validate the creation of target topic %q: %w", name, err)
			}
			if one != nil {
				refusals = append(refusals, one)
				bad = append(bad, fmt.Sprintf("config %s=%q (%s) refused: %v", k, s.Configs[k], configOrigin(k, r.cfg.TopicConfigs), one))
			}
		}
		if len(bad) == 0 {
			refusals = append(refusals, refused)
			bad = append(bad, fmt.Sprintf("%d partitions, replication factor %s, configs %s refused: %v",
				s.Partitions, rfText(s.ReplicationFactor), configText(s.Configs), refused))
		}
		problems = append(problems, fmt.Sprintf("target topic %q: %s", name, strings.Join(bad, "; ")))
	}
	if len(problems) > 0 {
		return &listError{
			msg: ErrTopicConfig.Error() + ": " + strings.Join(problems, "; ") +
				"; nothing was created or produced (fix or override with --topic-config key=value, --replication-factor N)",
			errs: refusals,
		}
	}
	return nil
}

func configOrigin(key string, overrides map[string]string) string {
	if _, ok := overrides[key]; ok {
		return "--topic-config"
	}
	return "archived"
}

func rfText(rf int16) string {
	if rf < 0 {
		return "broker default"
	}
	return fmt.Sprint(rf)
}

func configText(m map[string]string) string {
	if len(m) == 0 {
		return "none"
	}
	var parts []string
	for _, k := range sortedKeys(m) {
		parts = append(parts, k+"="+m[k])
	}
	return strings.Join(parts, ",")
}

func sortedKeys(m map[string]string) []string {
	ks := make([]string, 0, len(m))
	for k := range m {
		ks = append(ks, k)
	}
	sort.Strings(ks)
	return ks
}

// brokerCount returns the number of brokers in the target cluster.
func (r *Restorer) brokerCount(ctx context.Context, adm *kadm.Client) (int, error) {
	var n int
	err := r.retry(ctx, "list the target brokers", nil, func(ctx context.Context) error {
		bs, err := adm.ListBrokers(ctx)
		n = len(bs)
		return err
	})
	return n, err
}

// ConfigDiff is one config that differs between the archived description
// and an existing target. An empty value means the topic does not set the
// key (the broker default applies).
type ConfigDiff struct {
	Key, Archived, Target string
}

// TargetState compares one planned topic's archived description with its
// target.
type TargetState struct {
	Source, Target string
	// Described is false for an archive without a description (older
	// kafkas3, Confluent's connector).
	Described bool
	// Exists tells whether the target exists; Create is how
	// --create-topics would create it when it does not.
	Exists bool
	Create TopicSetup
	// ArchivedPartitions and TargetPartitions differ when the partition
	// counts do (existing targets only).
	ArchivedPartitions, TargetPartitions int32
	// Configs are the keys whose values differ, sorted: every key the
	// archive records, and every key the target sets on the topic.
	Configs []ConfigDiff
	// Expired counts the records older than the target's retention
	// (expired.go); nil with --timestamps now.
	Expired *ExpiredCount
}

// CompareTargets describes the plan's targets on the cluster and compares
// them with the archived descriptions: for a missing target how
// --create-topics creates it, for an existing one the differences.
func (r *Restorer) CompareTargets(ctx context.Context, adm *kadm.Client, plan *Plan) ([]TargetState, error) {
	names := make([]string, len(plan.Topics))
	for i, t := range plan.Topics {
		names[i] = t.Target
	}
	if len(names) == 0 {
		return nil, nil
	}
	brokers, err := r.brokerCount(ctx, adm)
	if err != nil {
		return nil, fmt.Errorf("list the target brokers: %w", err)
	}
	details, rcs, err := r.describeTargetConfigs(ctx, adm, names)
	if err != nil {
		return nil, err
	}
	var out []TargetState
	for i := range plan.Topics {
		t := &plan.Topics[i]
		st := TargetState{Source: t.Source, Target: t.Target, Described: t.Described != nil}
		d, ok := details[t.Target]
		st.Exists = ok && d.Err == nil
		var rc kadm.ResourceConfig
		if st.Exists {
			if rc, err = rcs.On(t.Target, nil); err != nil || rc.Err != nil {
				return nil, fmt.Errorf("describe configs of target topic %q: %w", t.Target, errors.Join(err, rc.Err))
			}
		} else {
			st.Create = r.setup(t, brokers)
		}
		if st.Expired, err = r.targetExpired(ctx, adm, t, st, rc); err != nil {
			return nil, err
		}
		if st.Exists && t.Described != nil {
			st.ArchivedPartitions, st.TargetPartitions = t.Described.Partitions, int32(len(d.Partitions))
			st.Configs = configDiffs(t.Described.Configs, rc)
		}
		out = append(out, st)
	}
	return out, nil
}

// describeTargetConfigs describes the target topics names and the configs
// of those that exist.
func (r *Restorer) describeTargetConfigs(ctx context.Context, adm *kadm.Client, names []string) (kadm.TopicDetails, kadm.ResourceConfigs, error) {
	var details kadm.TopicDetails
	if err := r.retry(ctx, "describe target topics "+quoteList(names), nil, func(ctx context.Context) error {
		var err error
		details, err = adm.ListTopics(ctx, names...)
		return err
	}); err != nil {
		return nil, nil, fmt.Errorf("describe target topics %s: %w", quoteList(names), err)
	}
	var existing []string
	for _, n := range names {
		if d, ok := details[n]; ok && d.Err == nil {
			existing = append(existing, n)
		}
	}
	var rcs kadm.ResourceConfigs
	if len(existing) > 0 {
		if err := r.retry(ctx, "describe configs of "+quoteList(existing), nil, func(ctx context.Context) error {
			var err error
			rcs, err = adm.DescribeTopicConfigs(ctx, existing...)
			return err
		}); err != nil {
			return nil, nil, fmt.Errorf("describe configs of target topics %s: %w", quoteList(existing), err)
		}
	}
	return details, rcs, nil
}

// configDiffs lists, sorted by key, the keys whose effective value on the
// target (rc) differs from the archived one: every key the archive
// records, and every key the target sets on the topic itself.
func configDiffs(archived map[string]string, rc kadm.ResourceConfig) []ConfigDiff {
	effective, own := map[string]string{}, map[string]string{}
	for _, c := range rc.Configs {
		if c.Value == nil {
			continue
		}
		effective[c.Key] = *c.Value
		if c.Source == kmsg.ConfigSourceDynamicTopicConfig {
			own[c.Key] = *c.Value
		}
	}
	keys := maps.Clone(own)
	maps.Copy(keys, archived)
	var diffs []ConfigDiff
	for _, k := range sortedKeys(keys) {
		a, aok := archived[k]
		tv := effective[k]
		if !aok || a != tv {
			diffs = append(diffs, ConfigDiff{Key: k, Archived: a, Target: tv})
		}
	}
	return diffs
}

// WriteTargets prints the target section of the plan: per target, how it
// is created or how it differs from the archived description.
func WriteTargets(w io.Writer, states []TargetState, createTopics bool) error {
	tw := tabwriter.NewWriter(w, 0, 4, 2, ' ', 0)
	fmt.Fprintln(tw, "TARGET\tSTATE\tTOPIC CONFIGURATION")
	var diffs []string
	for _, s := range states {
		switch {
		case !s.Exists:
			what := "missing: --create-topics would create it"
			if !createTopics {
				what = "missing: the restore stops (pass --create-topics)"
			}
			c := s.Create
			rf := rfText(c.ReplicationFactor)
			if c.CappedFrom > 0 {
				rf += fmt.Sprintf(" (archived %d, capped at the number of brokers)", c.CappedFrom)
			}
			desc := fmt.Sprintf("%d partitions, replication factor %s, configs %s", c.Partitions, rf, configText(c.Configs))
			if !s.Described {
				desc += " (no archived topic description: partition count from the objects, broker defaults)"
			}
			fmt.Fprintf(tw, "%s\t%s\t%s\n", s.Target, what, desc)
		case !s.Described:
			fmt.Fprintf(tw, "%s\texists\tnot compared: the archive has no topic description (older kafkas3, or Confluent's connector)\n", s.Target)
		default:
			n := len(s.Configs)
			if s.ArchivedPartitions != s.TargetPartitions {
				n++
				diffs = append(diffs, fmt.Sprintf("differs: %s partitions: archived %d, target %d", s.Target, s.ArchivedPartitions, s.TargetPartitions))
			}
			for _, d := range s.Configs {
				diffs = append(diffs, fmt.Sprintf("differs: %s %s: archived %s, target %s", s.Target, d.Key, unset(d.Archived), unset(d.Target)))
			}
			what := "same as archived"
			if n > 0 {
				what = fmt.Sprintf("%d differences (listed below); the restore does not change an existing topic", n)
			}
			fmt.Fprintf(tw, "%s\texists\t%s\n", s.Target, what)
		}
	}
	if err := tw.Flush(); err != nil {
		return err
	}
	for _, d := range diffs {
		if _, err := fmt.Fprintln(w, d); err != nil {
			return err
		}
	}
	return nil
}

func unset(v string) string {
	if v == "" {
		return "(not set)"
	}
	return v
}

// pingTimeout bounds how long the dry run tries to reach the target
// cluster before it reports the targets as not compared.
const pingTimeout = 5 * time.Second

// WriteTargetPlan prints the topic configuration part of the dry run: the
// archived description of each planned topic and, when Config.Brokers is
// set, how each target compares (CompareTargets, WriteTargets). Without
// brokers the targets are not compared, and it says so.
func (r *Restorer) WriteTargetPlan(ctx context.Context, w io.Writer, plan *Plan) error {
	for _, t := range plan.Topics {
		if d := t.Described; d != nil {
			fmt.Fprintf(w, "topic configuration: %s archived at %s: %d partitions, replication factor %d, configs %s\n",
				t.Source, time.UnixMilli(d.TimeMs).UTC().Format(time.RFC3339), d.Partitions, d.ReplicationFactor, configText(d.Configs))
		} else {
			fmt.Fprintf(w, "topic configuration: %s: no archived topic description (an archive of an older kafkas3 or of Confluent's connector); "+
				"--create-topics would create a missing target (%q) with the archive's partition count (%d) and the broker's defaults\n", t.Source, t.Target, t.Partitions)
		}
	}
	if len(plan.Topics) == 0 {
		return nil
	}
	if len(r.cfg.Brokers) == 0 {
		_, err := fmt.Fprintln(w, "targets not compared: no bootstrap.servers (pass --bootstrap-servers to compare the targets' partitions and configs)")
		return err
	}
	cl, err := kgo.NewClient(append([]kgo.Opt{kgo.SeedBrokers(r.cfg.Brokers...)}, r.cfg.KafkaOpts...)...)
	if err != nil {
		return fmt.Errorf("kafka client: %w", err)
	}
	defer cl.Close()
	// The dry run needs no Kafka: an unreachable cluster is reported, not
	// an error.
	pctx, cancel := context.WithTimeout(ctx, pingTimeout)
	err = cl.Ping(pctx)
	cancel()
	if err != nil {
		_, err := fmt.Fprintf(w, "targets not compared: cannot reach Kafka at %s: %v\n", strings.Join(r.cfg.Brokers, ","), err)
		return err
	}
	states, err := r.CompareTargets(ctx, kadm.NewClient(cl), plan)
	if err != nil {
		return err
	}
	if err := WriteTargets(w, states, r.cfg.CreateTopics); err != nil {
		return err
	}
	return writeExpired(w, states, r.cfg.SkipExpired)
}

// warnDifferences logs, once per run, how each existing target differs
// from its archived description (the dry run lists the same). It only
// informs: a failure to compare is logged at debug level.
func (r *Restorer) warnDifferences(ctx context.Context, adm *kadm.Client, topics []*TopicPlan) {
	plan := &Plan{}
	for _, t := range topics {
		if t.Described != nil {
			plan.Topics = append(plan.Topics, *t)
		}
	}
	if len(plan.Topics) == 0 {
		return
	}
	states, err := r.CompareTargets(ctx, adm, plan)
	if err != nil {
		r.log.Debug("cannot compare the targets with the archived topic descriptions", "err", err)
		return
	}
	for _, s := range states {
		if !s.Exists {
			continue
		}
		var diffs []string
		if s.ArchivedPartitions != s.TargetPartitions {
			diffs = append(diffs, fmt.Sprintf("partitions: archived %d, target %d", s.ArchivedPartitions, s.TargetPartitions))
		}
		for _, d := range s.Configs {
			diffs = append(diffs, fmt.Sprintf("%s: archived %s, target %s", d.Key, unset(d.Archived), unset(d.Target)))
		}
		if len(diffs) > 0 {
			r.log.Warn("the existing target topic differs from the archived topic description; the restore does not change it",
				"topic", s.Target, "differences", strings.Join(diffs, "; "))
		}
	}
}
