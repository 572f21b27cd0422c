package prune

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"slices"
	"sort"
	"time"

	"github.com/kafkas3/kafkas3/index"
	"github.com/kafkas3/kafkas3/internal/parallel"
	"github.com/kafkas3/kafkas3/s3store"
)

// carry prunes one partition (nothing with cfg.DryRun but counting the
// index objects that would go), in the order the package doc gives.
func (p *partitionPlan) carry(ctx context.Context, cfg Config, st Store, log *slog.Logger) error {
	logKeys, err := p.logBelow(ctx, cfg.IndexPrefix, st)
	if err != nil {
		return err
	}
	p.r.IndexObjects = len(logKeys)
	if cfg.DryRun {
		return nil
	}
	if p.r.Below > p.r.Was {
		if err := p.writeWatermark(ctx, cfg, st); err != nil {
			return err
		}
	}
	objects, logKeys, err := p.leaveRetained(ctx, cfg, st, logKeys, log)
	if err != nil {
		return err
	}
	refused, err := st.Delete(ctx, objects)
	p.refuse(refused, log)
	if err != nil {
		return fmt.Errorf("delete the pruned objects of %s/%d: %w", p.r.Topic, p.r.Partition, err)
	}
	refused, err = st.Delete(ctx, logKeys)
	p.r.IndexObjects -= len(refused)
	p.refuse(refused, log)
	if err != nil {
		return fmt.Errorf("delete the pruned index objects of %s/%d: %w", p.r.Topic, p.r.Partition, err)
	}
	if len(p.r.Refused) > 0 {
		// Not done: the next prune asks about them again (their
		// retention may have ended).
		return nil
	}
	done := index.PrunedDoneKey(cfg.IndexPrefix, p.r.Topic, p.r.Partition, p.r.Below)
	if err := put(ctx, st, done, index.EncodeWatermark(p.watermark(cfg))); err != nil {
		return fmt.Errorf("write %q: %w", done, err)
	}
	return p.dropOlderWatermarks(ctx, cfg.IndexPrefix, st)
}

// watermark is the partition's new watermark.
func (p *partitionPlan) watermark(cfg Config) index.Watermark {
	return index.Watermark{Topic: p.r.Topic, Partition: p.r.Partition, Below: p.r.Below,
		TimeMS: cfg.Now().UnixMilli(), CutoffMS: p.r.Before.UnixMilli()}
}

// put writes body at key.
func put(ctx context.Context, st Store, key string, body []byte) error {
	w, err := st.Create(ctx, key)
	if err != nil {
		return err
	}
	if _, err := w.Write(body); err != nil {
		w.Abort(ctx)
		return err
	}
	return w.Commit(ctx)
}

// logBelow lists the index objects of the partition's log at or below the
// watermark (their entries hold only offsets below it), but the newest
// of the partition, by which readers find it.
func (p *partitionPlan) logBelow(ctx context.Context, prefix string, st Store) ([]string, error) {
	type logKey struct {
		key    string
		commit int64
	}
	var below []logKey
	newest := logKey{commit: -1}
	err := st.List(ctx, index.PartitionDir(prefix, p.r.Topic, p.r.Partition), func(info s3store.ObjectInfo) error {
		kn, err := index.ParseKey(info.Key)
		if err != nil {
			return err
		}
		lk := logKey{info.Key, kn.Commit}
		if lk.commit > newest.commit || lk.commit == newest.commit && lk.key > newest.key {
			newest = lk
		}
		if kn.Commit <= p.r.Below {
			below = append(below, lk)
		}
		return nil
	})
	if err != nil {
		return nil, fmt.Errorf("list the archive index of %s/%d: %w", p.r.Topic, p.r.Partition, err)
	}
	keys := make([]string, 0, len(below))
	for _, lk := range below {
		if lk.key != newest.key {
			keys = append(keys, lk.key)
		}
	}
	return keys, nil
}

// writeWatermark writes the partition's new watermark.
func (p *partitionPlan) writeWatermark(ctx context.Context, cfg Config, st Store) error {
	key := index.PrunedKey(cfg.IndexPrefix, p.r.Topic, p.r.Partition, p.r.Below)
	if err := put(ctx, st, key, index.EncodeWatermark(p.watermark(cfg))); err != nil {
		return fmt.Errorf("write the prune watermark %q: %w", key, err)
	}
	return nil
}

// dropOlderWatermarks deletes the partition's watermarks (and their done
// keys) below the new one, which says more.
func (p *partitionPlan) dropOlderWatermarks(ctx context.Context, prefix string, st Store) error {
	var old []string
	err := st.List(ctx, index.CheckpointPartitionDir(prefix, p.r.Topic, p.r.Partition)+"pruned-", func(info s3store.ObjectInfo) error {
		if w, _, ok, err := index.ParsePrunedKey(info.Key); ok && err == nil && w < p.r.Below {
			old = append(old, info.Key)
		}
		return nil
	})
	if err == nil && len(old) > 0 {
		_, err = st.Delete(ctx, old)
	}
	if err != nil {
		return fmt.Errorf("delete the older prune watermarks of %s/%d: %w", p.r.Topic, p.r.Partition, err)
	}
	return nil
}

// refuse records the objects the store would not delete.
func (p *partitionPlan) refuse(refused map[string]error, log *slog.Logger) {
	if len(refused) == 0 {
		return
	}
	keys := make([]string, 0, len(refused))
	for k := range refused {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	for _, k := range keys {
		p.r.Refused = append(p.r.Refused, Refusal{Key: k, Why: refused[k].Error()})
		log.Warn("the store keeps an object prune would delete", "key", k, "why", refused[k])
	}
}

// leaveRetained takes out of the partition's objects and index objects to
// delete, on a bucket with Object Lock (s3store.Retainer), those under
// retention or a legal hold, reporting each as refused: a delete would
// only hide them behind a delete marker. It asks the store about each
// (HeadObject), Config.Concurrency at a time; on other stores it asks
// nothing.
func (p *partitionPlan) leaveRetained(ctx context.Context, cfg Config, st Store, logKeys []string, log *slog.Logger) (objects, logs []string, err error) {
	rt, ok := st.(s3store.Retainer)
	if !ok || !rt.WORM() {
		return p.objects, logKeys, nil
	}
	keys := append(slices.Clone(p.objects), logKeys...)
	why := make([]error, len(keys))
	gone := make([]bool, len(keys))
	now := cfg.Now()
	n := cfg.Concurrency
	if n <= 0 {
		n = index.DefaultConcurrency
	}
	err = parallel.Each(ctx, n, len(keys), func(i int) error {
		until, hold, err := rt.Retention(ctx, keys[i])
		switch {
		case errors.Is(err, s3store.ErrNotExist):
			gone[i] = true // gone already: a delete would only add a delete marker
			return nil
		case err != nil:
			return fmt.Errorf("read the Object Lock retention of %q: %w", keys[i], err)
		case hold:
			why[i] = errors.New("under an Object Lock legal hold")
		case until.After(now):
			why[i] = fmt.Errorf("under Object Lock retention until %s", until.UTC().Format(time.RFC3339))
		}
		return nil
	})
	if err != nil {
		return nil, nil, err
	}
	refused := map[string]error{}
	for i, k := range keys {
		switch {
		case gone[i]:
		case why[i] != nil:
			refused[k] = why[i]
		case i < len(p.objects):
			objects = append(objects, k)
		default:
			logs = append(logs, k)
		}
	}
	p.r.IndexObjects -= len(logKeys) - len(logs)
	p.refuse(refused, log)
	return objects, logs, nil
}
