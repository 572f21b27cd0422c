package restore

import (
	"context"
	"fmt"
	"io"
	"strconv"
	"strings"
	"time"

	"github.com/twmb/franz-go/pkg/kadm"
)

// Records the target would delete at once (Config.SkipExpired)
//
// Envelope records keep their archived timestamp (--timestamps original).
// A target whose cleanup.policy deletes by time (delete, or
// compact,delete) and whose message.timestamp.type is CreateTime deletes
// the records older than its retention.ms soon after they land: their
// segments are past retention from the start. Records of other objects
// carry no timestamp (the producer stamps them) and never expire.
//
// The plan counts them per target (expiredCount) from each object's
// timestamp range (its index entry's min_ts and max_ts, or what the
// proof read): records of objects wholly older than the cutoff surely
// expire, those of objects that straddle it may. The dry run lists the
// counts with the targets (WriteTargets), a run warns before it produces
// anything (warnExpired).
//
// --skip-expired leaves them out, counted (Summary.Expired): like a
// filter, the stream is then the archive's less the expired records, and
// each object is read to know its share (job.filtered). The cutoff
// (now - retention.ms) would move between runs and shift the stream, so
// the first run fixes it per target partition in the resume marker
// (marker.ExpiredBefore) and every re-run uses that one. A re-run that
// does not pass the same flag is refused once records landed
// (checkExpiryMarker). Not with Follow.

// retention is what a target keeps by time: records stamped before
// now - ms are deleted soon after they land. Zero ms: the target deletes
// nothing by time (retention.ms -1, a compact-only policy, or
// LogAppendTime, which stamps every record anew).
type retention struct {
	ms int64
}

// retentionOf reads a target's retention from its described configs.
func retentionOf(rc kadm.ResourceConfig) retention {
	var policy, stampType, ms string
	for _, c := range rc.Configs {
		if c.Value == nil {
			continue
		}
		switch c.Key {
		case "cleanup.policy":
			policy = *c.Value
		case "message.timestamp.type":
			stampType = *c.Value
		case "retention.ms":
			ms = *c.Value
		}
	}
	return retentionFrom(policy, stampType, ms)
}

// retentionFrom is the retention of a topic with these configs ("": the
// Kafka default: delete, CreateTime, and no retention.ms known).
func retentionFrom(policy, stampType, ms string) retention {
	deletes := policy == ""
	for _, p := range strings.Split(policy, ",") {
		deletes = deletes || strings.TrimSpace(p) == "delete"
	}
	v, err := strconv.ParseInt(ms, 10, 64)
	if !deletes || stampType == "LogAppendTime" || err != nil || v <= 0 {
		return retention{}
	}
	return retention{ms: v}
}

// cutoff is the earliest timestamp (Unix ms) the target keeps at now; 0
// when it deletes nothing by time.
func (rt retention) cutoff(now time.Time) int64 {
	if rt.ms <= 0 {
		return 0
	}
	return max(now.UnixMilli()-rt.ms, 0)
}

// ExpiredCount is what the plan knows of a target's records older than
// its retention: Sure of them are in objects wholly older than Cutoff,
// up to Maybe more in objects that straddle it.
type ExpiredCount struct {
	RetentionMS int64
	Cutoff      int64 // Unix ms
	Sure, Maybe int64
}

// expiredCount counts t's planned records older than cutoff (Unix ms;
// zero counts nothing).
func expiredCount(t *TopicPlan, rt retention, cutoff int64) ExpiredCount {
	c := ExpiredCount{RetentionMS: rt.ms, Cutoff: cutoff}
	if cutoff <= 0 {
		return c
	}
	for i := range t.Parts {
		for j := range t.Parts[i].Objects {
			o := &t.Parts[i].Objects[j]
			lo, hi, ok := o.timestamps()
			switch {
			case !ok || o.Damage != nil || o.pastCut || lo >= cutoff:
			case hi < cutoff:
				c.Sure += o.Records
			default:
				c.Maybe += o.Records
			}
		}
	}
	return c
}

// String says what c counts, for the dry run and the log.
func (c ExpiredCount) String() string {
	n := fmt.Sprintf("%d records", c.Sure)
	if c.Maybe > 0 {
		n += fmt.Sprintf(" (and up to %d more)", c.Maybe)
	}
	return fmt.Sprintf("%s stamped before %s, older than retention.ms=%d", n,
		time.UnixMilli(c.Cutoff).UTC().Format(time.RFC3339), c.RetentionMS)
}

// any tells whether c counts a record.
func (c ExpiredCount) any() bool { return c.Sure+c.Maybe > 0 }

// expiryCutoff is the cutoff of target for new markers in this run (0:
// none): an existing marker's (the restore began with it), else
// now - retention.ms, fixed for the run.
func (r *Restorer) expiryCutoff(target string, markers map[int32]marker) int64 {
	if !r.cfg.SkipExpired {
		return 0
	}
	r.mu.Lock()
	defer r.mu.Unlock()
	if c, ok := r.cutoffs[target]; ok {
		return c
	}
	c := r.retention[target].cutoff(r.now())
	for _, m := range markers {
		if m.ExpiredBefore > 0 {
			c = m.ExpiredBefore
			break
		}
	}
	r.cutoffs[target] = c
	return c
}

// checkExpiryMarker gives m, the marker of target partition p whose end
// offset is end, the cutoff of this run: an existing marker keeps its own,
// and one whose restore landed records without --skip-expired (or with
// it) refuses a run with it (or without it): the stream would shift.
func (r *Restorer) checkExpiryMarker(m *marker, existing bool, target string, p int32, end, cutoff int64) error {
	if !existing || end <= m.Start {
		m.ExpiredBefore = cutoff // nothing landed yet: this run decides
		return nil
	}
	switch {
	case r.cfg.SkipExpired && m.ExpiredBefore == 0 && cutoff > 0:
		return fmt.Errorf("%w: the restore into %s/%d began without --skip-expired (marker group %q) and %d records landed: "+
			"re-run without --skip-expired, or restore into another topic",
			ErrInvalidConfig, target, p, MarkerGroup(target), end-m.Start)
	case !r.cfg.SkipExpired && m.ExpiredBefore > 0:
		return fmt.Errorf("%w: the restore into %s/%d began with --skip-expired (records stamped before %s left out; marker group %q) and %d records landed: "+
			"re-run with --skip-expired, or restore into another topic",
			ErrInvalidConfig, target, p, time.UnixMilli(m.ExpiredBefore).UTC().Format(time.RFC3339Nano), MarkerGroup(target), end-m.Start)
	}
	return nil
}

// warnExpired says, before a run produces anything, how many records of
// each target are older than its retention: a warning, or with
// --skip-expired what it leaves out.
func (r *Restorer) warnExpired(topics []*TopicPlan) {
	if r.cfg.Timestamps == TimestampsNow {
		return
	}
	for _, t := range topics {
		r.mu.Lock()
		rt := r.retention[t.Target]
		r.mu.Unlock()
		c := expiredCount(t, rt, rt.cutoff(r.now()))
		switch {
		case !c.any():
		case r.cfg.SkipExpired:
			r.log.Info("--skip-expired leaves out the records the target would delete at once: "+c.String(), "topic", t.Target)
		default:
			r.log.Warn("records older than the target's retention: Kafka deletes them soon after they land; "+
				"--skip-expired leaves them out, counted: "+c.String(), "topic", t.Target)
		}
	}
}

// expired tells whether job j leaves out a record stamped at ts
// (--skip-expired): a record without a timestamp (zero, or before the
// epoch) never expires.
func (j job) expired(ts time.Time) bool {
	if j.expiredBefore <= 0 || ts.IsZero() {
		return false
	}
	ms := ts.UnixMilli()
	return ms >= 0 && ms < j.expiredBefore
}

// writeExpired lists, for the dry run, each target's records older than
// its retention.
func writeExpired(w io.Writer, states []TargetState, skip bool) error {
	for _, s := range states {
		if s.Expired == nil || !s.Expired.any() {
			continue
		}
		what := "Kafka deletes them soon after they land (--skip-expired leaves them out)"
		if skip {
			what = "--skip-expired leaves them out"
		}
		if _, err := fmt.Fprintf(w, "expired: %s: %s: %s\n", s.Target, s.Expired, what); err != nil {
			return err
		}
	}
	return nil
}

// now is the time the cutoffs are taken from.
func (r *Restorer) now() time.Time { return time.Now() }

// targetExpired counts, for the dry run, t's records older than its
// target's retention: an existing target's as described (rc), a missing
// one's as --create-topics would create it, the broker's default
// retention where its configs set none (brokerRetention).
func (r *Restorer) targetExpired(ctx context.Context, adm *kadm.Client, t *TopicPlan, st TargetState, rc kadm.ResourceConfig) (*ExpiredCount, error) {
	if r.cfg.Timestamps == TimestampsNow {
		return nil, nil
	}
	rt := retentionOf(rc)
	if !st.Exists {
		c := st.Create.Configs
		ms := c["retention.ms"]
		if ms == "" {
			var err error
			if ms, err = r.brokerRetention(ctx, adm); err != nil {
				return nil, err
			}
		}
		rt = retentionFrom(c["cleanup.policy"], c["message.timestamp.type"], ms)
	}
	c := expiredCount(t, rt, rt.cutoff(r.now()))
	return &c, nil
}

// brokerRetention is the retention.ms a topic gets from a target broker
// by default: log.retention.ms, else log.retention.minutes or
// log.retention.hours converted ("" when the broker gives none).
func (r *Restorer) brokerRetention(ctx context.Context, adm *kadm.Client) (string, error) {
	var rcs kadm.ResourceConfigs
	err := r.retry(ctx, "describe the target brokers' configs", nil, func(ctx context.Context) error {
		bs, err := adm.ListBrokers(ctx)
		if err != nil || len(bs) == 0 {
			return err
		}
		rcs, err = adm.DescribeBrokerConfigs(ctx, bs[0].NodeID)
		return err
	})
	if err != nil {
		return "", fmt.Errorf("describe the target brokers' configs: %w", err)
	}
	vals := map[string]int64{}
	for _, rc := range rcs {
		for _, c := range rc.Configs {
			if c.Value == nil {
				continue
			}
			if v, err := strconv.ParseInt(*c.Value, 10, 64); err == nil {
				vals[c.Key] = v
			}
		}
	}
	for _, k := range []struct {
		key  string
		unit int64
	}{{"log.retention.ms", 1}, {"log.retention.minutes", 60_000}, {"log.retention.hours", 3_600_000}} {
		if v, ok := vals[k.key]; ok {
			if v < 0 {
				return "-1", nil
			}
			return strconv.FormatInt(v*k.unit, 10), nil
		}
	}
	return "", nil
}
